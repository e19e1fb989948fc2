"""The organisation as its people see it: its name, limits, balance and usage, each behind
``domain.policy`` (billing and limits are the owners'; usage of every key is for owners
and admins, a member reads their own keys', a vault key its own)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from memvault.domain.identity import AuditKind
from memvault.domain.models import Account, Balance, Limits, UsageDay, UsageReport
from memvault.domain.policy import Action, Target, require, unrestricted
from memvault.errors import InvalidInput
from memvault.ports import OrganisationStore
from memvault.services.accounts import AccountService
from memvault.services.audit import AuditService
from memvault.services.billing import BillingService
from memvault.services.context import Caller
from memvault.services.search_defaults import SearchDefaultsReader, checked_defaults

MAX_ORG_NAME = 100


def _sum(rows: list[UsageDay]) -> UsageDay:
    """The totals of some report rows (each row already sums one day of one key)."""
    totals = UsageDay(day="", key_id="")
    for row in rows:
        calls = dict(totals.memory_calls)
        for tool, count in row.memory_calls.items():
            calls[tool] = calls.get(tool, 0) + count
        totals = replace(
            totals,
            requests=totals.requests + row.requests,
            input_tokens=totals.input_tokens + row.input_tokens,
            output_tokens=totals.output_tokens + row.output_tokens,
            rounds=totals.rounds + row.rounds,
            memory_calls=dict(sorted(calls.items())),
            recalled_notes=totals.recalled_notes + row.recalled_notes,
            injected_tokens=totals.injected_tokens + row.injected_tokens,
            cost_micros=totals.cost_micros + row.cost_micros,
            injected_recall_tokens=totals.injected_recall_tokens + row.injected_recall_tokens,
            injected_profile_tokens=totals.injected_profile_tokens + row.injected_profile_tokens,
            search_embed_calls=totals.search_embed_calls + row.search_embed_calls,
            search_embed_micros=totals.search_embed_micros + row.search_embed_micros,
            cache_hits=totals.cache_hits + row.cache_hits,
            cache_saved_tokens=totals.cache_saved_tokens + row.cache_saved_tokens,
            embedding_calls=totals.embedding_calls + row.embedding_calls,
            embedding_micros=totals.embedding_micros + row.embedding_micros,
        )
    return totals


class OrgService:
    def __init__(
        self,
        store: OrganisationStore,
        accounts: AccountService,
        billing: BillingService,
        audit: AuditService,
        search_defaults: SearchDefaultsReader | None = None,
    ) -> None:
        self.store = store
        self.accounts = accounts
        self.billing = billing
        self.audit = audit
        # The vault's reader, told of a change so this process applies it at once.
        self.search_defaults = search_defaults

    def organisation(self, actor: Caller) -> Account:
        require(actor, Action.READ_ORG)
        return self.accounts.get_account(actor.account_id)

    def rename(self, actor: Caller, name: str) -> Account:
        require(actor, Action.RENAME_ORG)
        name = name.strip()
        if not name or len(name) > MAX_ORG_NAME or not name.isprintable():
            raise InvalidInput(
                f"an organisation name must be 1 to {MAX_ORG_NAME} characters", code="invalid_name"
            )
        account = self.store.rename_organisation(actor.account_id, name)
        self.audit.record(
            actor.account_id, AuditKind.ORG_RENAMED, actor=actor, target_id=account.id
        )
        return account

    def update(
        self,
        actor: Caller,
        *,
        name: str | None = None,
        search: tuple[str | None, float | None] | None = None,
    ) -> Account:
        """Rename and/or set the search defaults (``search``: mode, min_score), each
        checked before either is changed; with neither, the organisation as it is."""
        if name is not None:
            require(actor, Action.RENAME_ORG)
        if search is not None:
            require(actor, Action.CHANGE_SEARCH)
            checked_defaults(*search)
        account = None
        if name is not None:
            account = self.rename(actor, name)
        if search is not None:
            account = self.set_search_defaults(actor, mode=search[0], min_score=search[1])
        return account if account is not None else self.organisation(actor)

    def set_search_defaults(
        self, actor: Caller, *, mode: str | None, min_score: float | None
    ) -> Account:
        """Owners and admins: the organisation's default search mode and min_score, for
        search and recall where neither the request nor the key names one (None: the
        deployment's). InvalidInput names the field refused."""
        require(actor, Action.CHANGE_SEARCH)
        defaults = checked_defaults(mode, min_score)
        account = self.store.set_search_defaults(actor.account_id, defaults)
        if self.search_defaults is not None:
            self.search_defaults.remember(account)
        self.audit.record(
            actor.account_id,
            AuditKind.SEARCH_DEFAULTS_CHANGED,
            actor=actor,
            target_id=account.id,
            detail={
                "mode": defaults.mode or "default",
                "min_score": "default" if defaults.min_score is None else f"{defaults.min_score:g}",
            },
        )
        return account

    def set_limits(self, actor: Caller, limits: Limits) -> Account:
        require(actor, Action.CHANGE_LIMITS)
        return self.accounts.set_limits(actor.account_id, limits)

    def balance(self, actor: Caller) -> Balance:
        require(actor, Action.READ_BALANCE)
        return self.billing.balance(actor.account_id)

    def set_balance(self, actor: Caller, balance_micros: int | None) -> Balance:
        require(actor, Action.CHANGE_BILLING)
        return self.billing.set_balance(actor.account_id, balance_micros)

    def add_balance(self, actor: Caller, delta_micros: int) -> Balance:
        require(actor, Action.CHANGE_BILLING)
        return self.billing.add_balance(actor.account_id, delta_micros)

    def usage(
        self, actor: Caller, *, from_day: date, to_day: date, key_id: str | None = None
    ) -> UsageReport:
        """Usage per day and key: one key's when ``key_id`` names one (if the actor may
        read it), else every key the actor may read."""
        if key_id is not None:
            key = self.accounts.get_key(actor.account_id, key_id)  # 404 for no key here
            require(actor, Action.READ_USAGE, Target(member_id=key.member_id, key_id=key.id))
            return self.billing.usage_report(
                actor.account_id, from_day=from_day, to_day=to_day, key_id=key_id
            )
        if unrestricted(actor, Action.READ_USAGE):
            return self.billing.usage_report(
                actor.account_id, from_day=from_day, to_day=to_day, key_id=None
            )
        require(actor, Action.READ_USAGE, Target(member_id=actor.member_id, key_id=actor.key_id))
        if not actor.manage and actor.key_id is not None:  # a vault key: its own usage
            return self.billing.usage_report(
                actor.account_id, from_day=from_day, to_day=to_day, key_id=actor.key_id
            )
        mine = {
            k.id
            for k in self.accounts.list_keys(actor.account_id)
            if k.member_id == actor.member_id
        }
        report = self.billing.usage_report(
            actor.account_id, from_day=from_day, to_day=to_day, key_id=None
        )
        rows = [row for row in report.days if row.key_id in mine]
        return replace(report, days=rows, totals=_sum(rows))
