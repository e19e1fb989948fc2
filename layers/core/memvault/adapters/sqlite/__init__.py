"""The embedded backend: notes, search (FTS5), budgets and the ledger in one SQLite file."""
