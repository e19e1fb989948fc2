"""The AWS backend's storage: DynamoDB (metadata) and S3 (markdown), one part a port.

Each part is a small class over the same table, bucket and caches (``base.DynamoParts``);
``DynamoVaultStore`` is all of them on one object, which is what the container builds:

- ``accounts``: accounts and their API keys (AccountStore, KeyStore);
- ``notes``: live notes' reads; ``planning``, ``transaction``, ``commit`` and ``bulk``:
  the write path (NoteStore.commit), its rules decided by ``domain.write_plan``;
- ``versions``, ``links``, ``outbox``, ``sweep``: VersionStore, LinkStore, SearchOutbox,
  RetentionSweep;
- ``orgs``, ``members``, ``invitations``, ``sessions``, ``audit``: OrganisationStore,
  MemberStore, InvitationStore, SessionStore, AuditLog (people and their access).

Item shapes are in ``items``, the key schema in ``keys``.
"""

from __future__ import annotations

from memvault.adapters.aws.accounts import DynamoAccountStore, DynamoKeyStore
from memvault.adapters.aws.audit import DynamoAuditLog
from memvault.adapters.aws.commit import DynamoNoteCommit
from memvault.adapters.aws.invitations import DynamoInvitationStore
from memvault.adapters.aws.links import DynamoLinkStore
from memvault.adapters.aws.members import DynamoMemberStore
from memvault.adapters.aws.notes import DynamoNoteReads
from memvault.adapters.aws.orgs import DynamoOrganisationStore
from memvault.adapters.aws.outbox import DynamoSearchOutbox
from memvault.adapters.aws.sessions import DynamoSessionStore
from memvault.adapters.aws.sweep import DynamoRetentionSweep
from memvault.adapters.aws.versions import DynamoVersionStore


class DynamoNoteStore(DynamoNoteReads, DynamoNoteCommit):
    """NoteStore: reads and the commit, over one table and bucket."""


class DynamoVaultStore(
    DynamoAccountStore,
    DynamoKeyStore,
    DynamoNoteStore,
    DynamoVersionStore,
    DynamoLinkStore,
    DynamoSearchOutbox,
    DynamoRetentionSweep,
    DynamoOrganisationStore,
    DynamoMemberStore,
    DynamoInvitationStore,
    DynamoSessionStore,
    DynamoAuditLog,
):
    """Every storage port on one object (memvault.ports.VaultStore)."""
