"""What every part of the SQLite store shares: the one database file."""

from __future__ import annotations

from memvault.adapters.sqlite.db import Database


class SqliteParts:
    def __init__(self, db: Database) -> None:
        self.db = db
