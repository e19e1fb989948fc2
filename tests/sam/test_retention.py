"""The retention sweep on both backends: purges what is due, keeps the rest."""

from __future__ import annotations

from memvault.container import Services
from memvault.services.context import Caller
from memvault.services.retention import DAY_SECONDS, RetentionService
from tests.support.clock import FakeClock


def _sweeper(services: Services, keep_days: int = 30) -> RetentionService:
    return RetentionService(services.billing, services.store, deleted_note_keep_days=keep_days)


def test_purges_notes_deleted_before_the_keep_period(
    services: Services, user: Caller, clock: FakeClock
) -> None:
    vault, account = services.vault, user.account_id
    vault.write(user, "old.md", "# Old\n\nfirst")
    vault.write(user, "old.md", "# Old\n\nsecond")
    vault.delete(user, "old.md")
    vault.write(user, "revived.md", "# Revived\n\none")
    vault.delete(user, "revived.md")
    clock.advance(2 * DAY_SECONDS)
    vault.write(user, "revived.md", "# Revived\n\nback")  # re-created: its history continues
    clock.advance(29 * DAY_SECONDS)
    vault.write(user, "recent.md", "# Recent")
    vault.delete(user, "recent.md")  # deleted a moment ago: kept
    vault.write(user, "live.md", "# Live")

    report = _sweeper(services).run(clock())

    assert report.ok, report.errors
    assert report.counts["deleted_notes_purged"] == 1
    assert services.store.list_versions(account, "old.md") == []
    assert services.store.get_note(account, "old.md", include_deleted=True) is None
    assert [v.version for v in services.store.list_versions(account, "recent.md")] == [1]
    assert [v.version for v in services.store.list_versions(account, "revived.md")] == [2, 1]
    assert services.store.get_note(account, "live.md") is not None
    assert [n.path for n in services.store.recent_notes(account, limit=10)] == [
        "live.md",
        "revived.md",
    ]
    # Nothing more is due: a second run purges nothing.
    assert _sweeper(services).run(clock()).counts["deleted_notes_purged"] == 0


def test_purges_across_accounts_in_batches(
    services: Services, user: Caller, clock: FakeClock
) -> None:
    other = services.accounts.create_account("other", account_id="other")
    them = Caller(account_id=other.id, surface=user.surface)
    for i in range(7):
        services.vault.write(user, f"mine/{i}.md", f"# {i}")
        services.vault.delete(user, f"mine/{i}.md")
        services.vault.write(them, f"theirs/{i}.md", f"# {i}")
        services.vault.delete(them, f"theirs/{i}.md")
    clock.advance(31 * DAY_SECONDS)

    assert services.store.purge_deleted_before(clock() - 30 * DAY_SECONDS, limit=5) == 5
    report = _sweeper(services).run(clock())

    assert report.counts["deleted_notes_purged"] == 9
    for caller in (user, them):
        for i in range(7):
            for prefix in ("mine", "theirs"):
                path = f"{prefix}/{i}.md"
                assert services.store.list_versions(caller.account_id, path) == []


def test_reports_every_sweep_and_survives_a_failing_one(
    services: Services, clock: FakeClock
) -> None:
    sweeper = _sweeper(services)

    def broken(_now: float) -> int:
        raise RuntimeError("boom")

    sweeper.sweeps = {"broken": broken, **sweeper.sweeps}
    report = sweeper.run(clock())

    assert not report.ok
    assert report.errors == {"broken": "RuntimeError: boom"}
    assert set(report.counts) == {"holds_released", "usage_expired", "deleted_notes_purged"}


def test_the_sweep_forgets_expired_sessions_invitations_and_audit_events(
    services: Services, clock: FakeClock
) -> None:
    from memvault.domain.identity import Role
    from tests.support.people import make_org

    org = make_org(services, "org-a")
    services.members.invite(org.owner.caller, "later@org-a.test", Role.MEMBER)
    sweeper = RetentionService(
        services.billing,
        services.store,
        deleted_note_keep_days=30,
        sessions=services.sessions,
        members=services.members,
        audit=services.audit,
    )
    assert sweeper.run(clock()).counts["sessions_expired"] == 0  # nothing due yet
    clock.advance(services.settings.usage_retention_days * DAY_SECONDS + 1)
    report = sweeper.run(clock())
    assert report.ok, report.errors
    counts = {k: report.counts[k] for k in report.counts if k.endswith("expired")}
    if services.settings.backend == "sqlite":
        assert counts["sessions_expired"] == 3 and counts["invitations_expired"] == 1
        assert counts["audit_events_expired"] > 0
    else:  # DynamoDB's TTL removes them
        assert counts["sessions_expired"] == counts["invitations_expired"] == 0
