"""The embedded backend's storage on SQLite, one part a port.

Each part is a small class over the same database (``base.SqliteParts``);
``SqliteVaultStore`` is all of them on one object, which is what the container builds:

- ``accounts``: accounts and their API keys (AccountStore, KeyStore);
- ``notes``: live notes' reads; ``commit``, ``bulk`` and ``writes``: the write path
  (NoteStore.commit), its rules decided by ``domain.write_plan``;
- ``versions``, ``links``, ``outbox``, ``sweep``: VersionStore, LinkStore, SearchOutbox,
  RetentionSweep;
- ``orgs``, ``members``, ``invitations``, ``sessions``, ``audit``: OrganisationStore,
  MemberStore, InvitationStore, SessionStore, AuditLog (people and their access).
"""

from __future__ import annotations

from memvault.adapters.sqlite.accounts import SqliteAccountStore, SqliteKeyStore
from memvault.adapters.sqlite.audit import SqliteAuditLog
from memvault.adapters.sqlite.commit import SqliteNoteCommit
from memvault.adapters.sqlite.invitations import SqliteInvitationStore
from memvault.adapters.sqlite.links import SqliteLinkStore
from memvault.adapters.sqlite.members import SqliteMemberStore
from memvault.adapters.sqlite.notes import SqliteNoteReads
from memvault.adapters.sqlite.orgs import SqliteOrganisationStore
from memvault.adapters.sqlite.outbox import SqliteSearchOutbox
from memvault.adapters.sqlite.sessions import SqliteSessionStore
from memvault.adapters.sqlite.sweep import SqliteRetentionSweep
from memvault.adapters.sqlite.versions import SqliteVersionStore


class SqliteNoteStore(SqliteNoteReads, SqliteNoteCommit):
    """NoteStore: reads and the commit, over one database."""


class SqliteVaultStore(
    SqliteAccountStore,
    SqliteKeyStore,
    SqliteNoteStore,
    SqliteVersionStore,
    SqliteLinkStore,
    SqliteSearchOutbox,
    SqliteRetentionSweep,
    SqliteOrganisationStore,
    SqliteMemberStore,
    SqliteInvitationStore,
    SqliteSessionStore,
    SqliteAuditLog,
):
    """Every storage port on one object (memvault.ports.VaultStore)."""
