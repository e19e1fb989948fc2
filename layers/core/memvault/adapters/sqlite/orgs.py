"""Organisations as a directory on SQLite (OrganisationStore): the accounts table is it."""

from __future__ import annotations

from memvault.adapters.sqlite.accounts import account_from
from memvault.adapters.sqlite.base import SqliteParts
from memvault.domain.models import Account, SearchDefaults
from memvault.errors import NotFound


class SqliteOrganisationStore(SqliteParts):
    def list_organisations(self) -> list[Account]:
        rows = (
            self.db.connection()
            .execute("SELECT * FROM accounts ORDER BY created_at, id")
            .fetchall()
        )
        return [account_from(r) for r in rows]

    def rename_organisation(self, account_id: str, name: str) -> Account:
        with self.db.transaction() as conn:
            cur = conn.execute("UPDATE accounts SET name = ? WHERE id = ?", (name, account_id))
            if cur.rowcount == 0:
                raise NotFound(f"no organisation {account_id!r}", code="account_not_found")
            row = conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        return account_from(row)

    def list_organisation(self, account_id: str) -> None:
        """Every account row is listed already."""

    def set_search_defaults(self, account_id: str, defaults: SearchDefaults) -> Account:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE accounts SET search_mode = ?, min_score = ? WHERE id = ?",
                (defaults.mode, defaults.min_score, account_id),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no organisation {account_id!r}", code="account_not_found")
            row = conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        return account_from(row)
