"""Ledger on SQLite: balances, holds, key spend and usage records in the shared file.

Every money movement is one BEGIN IMMEDIATE transaction, so a reservation's check
(balance, cap) and its deduction cannot interleave with another's: two requests racing
for the last of a balance are serialised by the write lock and the second sees the
first's deduction.

A balance row is absent for an unmetered account (the default). ``balance_micros`` is
what is left to spend *after* the holds in flight were deducted; ``held_micros`` is the
sum of those holds. A key's row keeps its settled spend and its holds apart, and the
cap is checked against both.
"""

from __future__ import annotations

import json
import sqlite3
import uuid

from memvault.adapters.sqlite.db import Database
from memvault.domain.models import ATTRIBUTION_FIELDS, Balance, Reservation, UsageRecord
from memvault.domain.pricing import (
    balance_would_go_negative,
    capped,
    check_amount,
    insufficient_balance,
    spend_cap_exceeded,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS balances (
    account_id TEXT PRIMARY KEY,
    balance_micros INTEGER,            -- NULL: unmetered
    held_micros INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS key_spend (
    account_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    spent_micros INTEGER NOT NULL DEFAULT 0,
    held_micros INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, key_id)
);

-- ``metered``: whether the hold was deducted from the balance (the account may become
-- metered or unmetered while the request runs; settlement refunds only what was taken).
CREATE TABLE IF NOT EXISTS reservations (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    amount_micros INTEGER NOT NULL,
    metered INTEGER NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS reservations_by_expiry ON reservations(expires_at);

CREATE TABLE IF NOT EXISTS usage_records (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    day TEXT NOT NULL,                 -- UTC YYYY-MM-DD of started_at
    model TEXT NOT NULL,
    api_format TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    rounds INTEGER NOT NULL,
    memory_calls TEXT NOT NULL,        -- JSON object: tool name -> count
    recalled_notes INTEGER NOT NULL,
    injected_tokens INTEGER NOT NULL,
    cost_micros INTEGER NOT NULL,
    status INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    started_at REAL NOT NULL,
    duration_ms INTEGER NOT NULL,
    overhead_ms INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    estimated INTEGER NOT NULL DEFAULT 0,  -- 1: memvault's count (a stream cut short)
    attribution TEXT NOT NULL DEFAULT '{}'  -- JSON: UsageRecord.attribution
);
CREATE INDEX IF NOT EXISTS usage_by_day ON usage_records(account_id, day, started_at);
CREATE INDEX IF NOT EXISTS usage_by_expiry ON usage_records(expires_at);
"""


def _balance(account_id: str, row: sqlite3.Row | None) -> Balance:
    if row is None:
        return Balance(account_id=account_id, balance_micros=None, held_micros=0)
    return Balance(account_id, row["balance_micros"], row["held_micros"])


def _usage(row: sqlite3.Row) -> UsageRecord:
    return UsageRecord(
        id=row["id"],
        account_id=row["account_id"],
        key_id=row["key_id"],
        model=row["model"],
        api_format=row["api_format"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        rounds=row["rounds"],
        memory_calls={str(k): int(v) for k, v in json.loads(row["memory_calls"]).items()},
        recalled_notes=row["recalled_notes"],
        injected_tokens=row["injected_tokens"],
        cost_micros=row["cost_micros"],
        status=row["status"],
        outcome=row["outcome"],
        started_at=row["started_at"],
        duration_ms=row["duration_ms"],
        overhead_ms=row["overhead_ms"],
        estimated=bool(row["estimated"]),
        **_attribution(row["attribution"]),
    )


def _attribution(raw: str | None) -> dict[str, int]:
    stored = json.loads(raw or "{}")
    return {name: int(stored.get(name, 0)) for name in ATTRIBUTION_FIELDS}


class SqliteLedger:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.add_schema(SCHEMA)

    # ------------------------------------------------------------------ balances
    def _read_balance(self, conn: sqlite3.Connection, account_id: str) -> Balance:
        row = conn.execute(
            "SELECT balance_micros, held_micros FROM balances WHERE account_id = ?", (account_id,)
        ).fetchone()
        return _balance(account_id, row)

    def get_balance(self, account_id: str) -> Balance:
        return self._read_balance(self.db.connection(), account_id)

    def set_balance(self, account_id: str, balance_micros: int | None) -> Balance:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO balances (account_id, balance_micros) VALUES (?, ?)"
                " ON CONFLICT (account_id) DO UPDATE SET balance_micros = excluded.balance_micros",
                (account_id, balance_micros),
            )
            return self._read_balance(conn, account_id)

    def add_balance(self, account_id: str, delta_micros: int) -> Balance:
        with self.db.transaction() as conn:
            if delta_micros < 0:
                # read and write in one transaction: a correction never crosses zero, and a
                # credit racing it is either before (counted) or after
                current = self._read_balance(conn, account_id).balance_micros
                if (current or 0) + delta_micros < 0:
                    raise balance_would_go_negative(current, delta_micros)
            conn.execute(
                "INSERT INTO balances (account_id, balance_micros) VALUES (?, ?)"
                " ON CONFLICT (account_id) DO UPDATE SET"
                " balance_micros = COALESCE(balance_micros, 0) + excluded.balance_micros",
                (account_id, delta_micros),
            )
            return self._read_balance(conn, account_id)

    # ------------------------------------------------------------------ holds
    def _key_row(self, conn: sqlite3.Connection, account_id: str, key_id: str) -> tuple[int, int]:
        row = conn.execute(
            "SELECT spent_micros, held_micros FROM key_spend WHERE account_id = ? AND key_id = ?",
            (account_id, key_id),
        ).fetchone()
        return (row["spent_micros"], row["held_micros"]) if row else (0, 0)

    def reserve(
        self,
        account_id: str,
        key_id: str,
        amount_micros: int,
        *,
        spend_cap_micros: int | None,
        now: float,
        expires_at: float,
    ) -> Reservation:
        check_amount(amount_micros)  # an integer SQLite cannot hold is a 400, not a crash
        reservation = Reservation(
            id=uuid.uuid4().hex,
            account_id=account_id,
            key_id=key_id,
            amount_micros=amount_micros,
            created_at=now,
            expires_at=expires_at,
        )
        with self.db.transaction() as conn:
            balance = self._read_balance(conn, account_id)
            metered = balance.balance_micros is not None
            if balance.balance_micros is not None and balance.balance_micros < amount_micros:
                raise insufficient_balance(balance.balance_micros, amount_micros)
            spent, held = self._key_row(conn, account_id, key_id)
            if spend_cap_micros is not None and spent + held + amount_micros > spend_cap_micros:
                raise spend_cap_exceeded(spend_cap_micros, spent, held, amount_micros)
            conn.execute(
                "INSERT INTO balances (account_id, balance_micros, held_micros) VALUES (?, NULL, ?)"
                " ON CONFLICT (account_id) DO UPDATE SET held_micros = held_micros + ?,"
                " balance_micros = balance_micros - ?",
                (account_id, amount_micros, amount_micros, amount_micros if metered else 0),
            )
            conn.execute(
                "INSERT INTO key_spend (account_id, key_id, held_micros) VALUES (?, ?, ?)"
                " ON CONFLICT (account_id, key_id) DO UPDATE SET held_micros = held_micros + ?",
                (account_id, key_id, amount_micros, amount_micros),
            )
            conn.execute(
                "INSERT INTO reservations (id, account_id, key_id, amount_micros, metered,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    reservation.id,
                    account_id,
                    key_id,
                    amount_micros,
                    int(metered),
                    now,
                    expires_at,
                ),
            )
        return reservation

    def settle(self, reservation: Reservation, cost_micros: int) -> bool:
        with self.db.transaction() as conn:
            return self._settle(conn, reservation.id, capped(cost_micros))

    def _settle(self, conn: sqlite3.Connection, reservation_id: str, cost: int | None) -> bool:
        """Replace a hold by ``cost`` (None: the held amount). False if already settled."""
        row = conn.execute("SELECT * FROM reservations WHERE id = ?", (reservation_id,)).fetchone()
        if row is None:
            return False  # settled before (or swept): settling is idempotent
        account_id, key_id, amount = row["account_id"], row["key_id"], row["amount_micros"]
        actual = amount if cost is None else cost
        taken = amount if row["metered"] else 0
        conn.execute("DELETE FROM reservations WHERE id = ?", (reservation_id,))
        # A balance that is metered now gets back what was taken at reserve time and pays
        # the actual cost (it may go slightly negative when the cost passed the hold).
        conn.execute(
            "UPDATE balances SET held_micros = held_micros - ?,"
            " balance_micros = balance_micros + ? WHERE account_id = ?",
            (amount, taken - actual, account_id),
        )
        conn.execute(
            "UPDATE key_spend SET held_micros = held_micros - ?, spent_micros = spent_micros + ?"
            " WHERE account_id = ? AND key_id = ?",
            (amount, actual, account_id, key_id),
        )
        return True

    def release_expired(self, now: float, limit: int = 1000) -> int:
        ids = [
            r["id"]
            for r in self.db.connection()
            .execute(
                "SELECT id FROM reservations WHERE expires_at <= ? ORDER BY expires_at LIMIT ?",
                (now, limit),
            )
            .fetchall()
        ]
        settled = 0
        for reservation_id in ids:
            with self.db.transaction() as conn:
                settled += self._settle(conn, reservation_id, None)
        return settled

    def key_spent(self, account_id: str, key_id: str) -> int:
        return self._key_row(self.db.connection(), account_id, key_id)[0]

    def key_held(self, account_id: str, key_id: str) -> int:
        return self._key_row(self.db.connection(), account_id, key_id)[1]

    # ------------------------------------------------------------------ usage
    def record_usage(self, record: UsageRecord, *, expires_at: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO usage_records (id, account_id, key_id, day, model,"
                " api_format, input_tokens, output_tokens, rounds, memory_calls, recalled_notes,"
                " injected_tokens, cost_micros, status, outcome, started_at, duration_ms,"
                " overhead_ms, expires_at, estimated, attribution)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.account_id,
                    record.key_id,
                    record.day,
                    record.model,
                    record.api_format,
                    capped(record.input_tokens),
                    capped(record.output_tokens),
                    capped(record.rounds),
                    json.dumps(record.memory_calls, sort_keys=True),
                    capped(record.recalled_notes),
                    capped(record.injected_tokens),
                    capped(record.cost_micros),
                    record.status,
                    record.outcome,
                    record.started_at,
                    capped(record.duration_ms),
                    capped(record.overhead_ms),
                    expires_at,
                    int(record.estimated),
                    json.dumps(
                        {k: capped(v) for k, v in record.attribution.items()}, sort_keys=True
                    ),
                ),
            )

    def usage_between(
        self, account_id: str, from_day: str, to_day: str, key_id: str | None = None
    ) -> list[UsageRecord]:
        sql = "SELECT * FROM usage_records WHERE account_id = ? AND day >= ? AND day <= ?"
        params: list[object] = [account_id, from_day, to_day]
        if key_id is not None:
            sql += " AND key_id = ?"
            params.append(key_id)
        rows = self.db.connection().execute(sql + " ORDER BY started_at, id", params).fetchall()
        return [_usage(r) for r in rows]

    def expire_usage(self, now: float, limit: int = 10_000) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM usage_records WHERE id IN"
                " (SELECT id FROM usage_records WHERE expires_at <= ? LIMIT ?)",
                (now, limit),
            )
            return cur.rowcount
