"""An organisation's default search mode and min_score, on both backends (ADR 0050).

Owners and admins set them; search and recall use them where the request (or, for recall,
the key) names none, with the request above the key above the organisation above the
deployment. A member or a vault key is refused and nothing changes; a mode or cut-off
out of range is refused naming its field; the settings are stored on the account record
(read back from storage, not the process's memory).
"""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.domain.identity import AuditKind
from memvault.domain.models import SearchDefaults
from memvault.errors import InvalidInput, PermissionDenied
from memvault.services.recall import RecallService
from tests.contract.test_search_modes import NOTES, PARAPHRASE, paths, require_vectors
from tests.support.people import Org, make_org


@pytest.fixture
def org(services: Services) -> Org:
    return make_org(services, "acme")


@pytest.fixture
def notes(services: Services, org: Org) -> Org:
    """The organisation with search_modes' notes (vectors needed)."""
    require_vectors(services)
    for path, markdown in NOTES.items():
        services.vault.write(org.owner.vault_caller, path, markdown)
    return org


def stored(services: Services, org: Org) -> SearchDefaults:
    account = services.store.get_account(org.id)
    assert account is not None
    return account.search


def test_the_organisations_mode_sits_under_the_request_and_above_the_deployment(
    services: Services, notes: Org
) -> None:
    org = notes
    vault, member = services.vault, org.member.vault_caller
    assert vault.search_outcome(member, PARAPHRASE).mode == "hybrid"  # the deployment's

    account = services.org.set_search_defaults(org.admin.caller, mode="keyword", min_score=None)
    assert account.search == SearchDefaults(mode="keyword") == stored(services, org)
    # Every caller of the organisation gets it, a vault key of a member too.
    plain = vault.search_outcome(member, PARAPHRASE)
    assert plain.mode == "keyword" and plain.hits == []
    # The request's mode is above it.
    asked = vault.search_outcome(member, PARAPHRASE, mode="hybrid")
    assert asked.mode == "hybrid" and paths(asked.hits) == ["decisions/storage.md"]

    # Recall: the organisation's keyword finds nothing for the paraphrase; the key's
    # recall_mode is above the organisation's.
    recall = RecallService(vault)
    revision = services.store.get_account(org.id).revision  # type: ignore[union-attr]
    args = {"max_notes": 5, "token_budget": 2000, "vault_revision": revision}
    assert recall.recall(member, PARAPHRASE, **args) is None  # type: ignore[arg-type]
    block = recall.recall(member, PARAPHRASE, mode="hybrid", **args)  # type: ignore[arg-type]
    assert block is not None and block.paths == ("decisions/storage.md",)

    # Back to the deployment's; the recall remembered for the same revision is not reused.
    services.org.set_search_defaults(org.owner.caller, mode=None, min_score=None)
    assert stored(services, org) == SearchDefaults()
    assert vault.search_outcome(member, PARAPHRASE).mode == "hybrid"
    again = recall.recall(member, PARAPHRASE, **args)  # type: ignore[arg-type]
    assert again is not None and again.paths == ("decisions/storage.md",)
    kinds = [e.kind for e in services.audit.events(org.owner.caller, limit=50).events]
    assert kinds.count(AuditKind.SEARCH_DEFAULTS_CHANGED) == 2


def test_the_organisations_min_score_cuts_every_mode_unless_the_request_gives_one(
    services: Services, notes: Org
) -> None:
    org = notes
    vault, caller = services.vault, org.member.vault_caller
    keyword = vault.search(caller, "car service tyres", mode="keyword")
    assert paths(keyword) == ["notes/car.md"]
    services.org.set_search_defaults(org.owner.caller, mode=None, min_score=0.99)
    assert stored(services, org) == SearchDefaults(min_score=0.99)
    assert vault.search(caller, PARAPHRASE) == []
    assert vault.search(caller, "car service tyres", mode="keyword") == []
    assert paths(vault.search(caller, PARAPHRASE, min_score=0.4)) == ["decisions/storage.md"]
    recall = RecallService(vault)
    assert recall.recall(caller, PARAPHRASE, max_notes=5, token_budget=2000) is None
    # A recall service's own cut-off (the bench's) is above the organisation's.
    loose = RecallService(vault, min_score=0.4).recall(
        caller, PARAPHRASE, max_notes=5, token_budget=2000
    )
    assert loose is not None and loose.paths == ("decisions/storage.md",)


def test_members_and_vault_keys_are_refused_and_nothing_changes(
    services: Services, org: Org
) -> None:
    services.org.set_search_defaults(org.admin.key_caller, mode="semantic", min_score=0.3)
    for caller in (org.member.caller, org.member.key_caller, org.owner.vault_caller):
        with pytest.raises(PermissionDenied) as refused:
            services.org.set_search_defaults(caller, mode="keyword", min_score=None)
        assert refused.value.code == "admin_required"
    assert stored(services, org) == SearchDefaults(mode="semantic", min_score=0.3)
    # Anyone may read them.
    assert services.org.organisation(org.member.caller).search.mode == "semantic"


BAD = [
    ("fuzzy", None, "search_mode"),
    ("", None, "search_mode"),
    (None, 1.5, "min_score"),
    (None, -0.1, "min_score"),
    (None, float("nan"), "min_score"),
]


def test_a_bad_mode_or_cut_off_is_refused_naming_the_field(services: Services, org: Org) -> None:
    for mode, min_score, field in BAD:
        with pytest.raises(InvalidInput) as refused:
            services.org.set_search_defaults(org.owner.caller, mode=mode, min_score=min_score)
        assert refused.value.details["field"] == field and field in refused.value.message
    assert stored(services, org) == SearchDefaults()
