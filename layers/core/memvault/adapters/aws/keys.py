"""The DynamoDB single-table key schema: every item's partition and sort key, in one place.

All of an account's items share the partition key ``A#<account>``, so every query is
bounded to one account by construction (tenant isolation is the key, not a filter
added later). The sort key says what the item is:

    ACCOUNT                         the account: name, limits (and the counters of
                                    accounts stored before quota shards)
    ACCOUNT#Q<nn>                   a quota shard: headroom, usage, revision, lock
    K#<key id>                      an API key (listing)
    N#<path key>                    a live note (metadata; markdown lives in S3)
    D#<path key>␟<note id>          a deleted note (tombstone), history readable
    DM#<path key>                   "a tombstone may exist under this path key" (see below)
    M#<name key>␟<path key>         file-name index of live notes (bare-link resolution)
    V#<note id>␟<version:08d>       a kept version (metadata; markdown in S3)
    L#<name>␟<target key>␟<note id> a wikilink from a live note (derived, for backlinks);
                                    <name> is the target key's last segment
    B#<bucket>                      a budget token bucket
    Q#<path>                        a note waiting to be (re)indexed in search

plus, outside account partitions, ``H#<key hash>`` / ``H`` (the key record by hash, so
authentication is one GetItem) and ``REINDEX`` / ``<account>`` (accounts whose search
outbox holds notes, for the scheduled drain). ␟ is U+001F, a control character vault paths
can never contain, so one key's prefix can never match another's.

People and their access (an account is an organisation):

    A#<account> / MB#<member id>    a member: role, address, password hash, ``rev``
    A#<account> / MEMBERS           ``owners``: how many active owners (the last-owner
                                    rule is a condition on it, in the write's transaction)
    A#<account> / IV#<invitation>   an invitation (its ``token_hash``); TTL
    A#<account> / SE#<session id>   a session's pointer: its member and ``secret_hash``; TTL
    A#<account> / AU#<time>␟<id>    an audit event; TTL (the usage records' retention)
    E#<email key> / E               the member an address (folded) belongs to, in any
                                    organisation: written with attribute_not_exists, so
                                    two members can never share an address
    IH#<token hash> / IH            the invitation by its token (accepting is one
                                    transaction deleting both invitation items); TTL
    SH#<secret hash> / SH           the session by its cookie's secret (what a signed-in
                                    request reads; idle activity is noted here); TTL
    ORGS / <account>                the organisation directory (``memvault orgs list``)
    A#!signin / B#<bucket>          sign-in attempt budgets, per address and per email
                                    digest (no account id can start with "!")

Import and export jobs (adapters/aws/jobs.py, ADR 0041):

    A#<account> / JOB#<job id>      a job: its stored form, revision; TTL
    A#<account> / JOBLEASE          the organisation's import lease (job id, until)
    JOBS / <account>␟<job id>       a queued or running job (the ops schedule's sweep)
    JOBKEY / JOBKEY                 the key job tokens are signed with

A key's records also carry ``member_id`` (its owner; absent on keys stored before
members, until the upgrade), ``vault`` (False: bound to no vault) and
``owner_disabled`` (set on every key of a member who is disabled, so authentication
stays one GetItem).

``DM#`` markers spare a note's creation the tombstone query: a delete writes one in its
transaction (when there is none yet) and a create reads it in the BatchGetItem it makes anyway;
only when it is there does the create query ``D#<path key>`` for a note to revive, and
when it is absent the create's transaction checks it is still absent, so a racing
delete cannot slip a tombstone past it. Markers are never removed (a revive or a purge
leaves them): one left after its tombstones are gone costs one query on a later create
at that path, never a wrong answer. ``memvault reindex`` (``rebuild_links``) writes the
markers of tombstones older than markers.

Link items group by the target's last segment (its file name, folded) so the two keys
that can point at a note (``[[folder/Note]]`` and ``[[Note]]``) are one Query. Link
items of the earlier layout (``L#<target key>␟<note id>``) are replaced by ``memvault
reindex``, which rewrites every ``L#`` item from the note items.

The note item also carries ``tokens``, the S3 tokens of its kept versions' bodies
(oldest first), so trimming version n-50 deletes that body by its exact key.

The sparse GSI ``recent`` (gsi1pk = ``recent_pk``: ``A#<account>`` or
``A#<account>␟<bucket>``, one of ``RECENT_BUCKETS`` by path key, on live notes only;
gsi1sk = zero-padded updated time) serves "recently changed" without a scan: one Query
a bucket, merged. The buckets keep one organisation's writes off a single time-ordered
GSI partition; bucket 0 is the key every note had before buckets, so notes written
earlier are still listed. The index projects only what listings read (``summary`` and
the sweep), not whole items (ADR 0033). Tombstones sit in the same index under
``DELETED#<shard>`` (8 shards, any account, gsi1sk = deletion time), so the retention
sweep finds notes deleted before its cut-off with bounded Queries.

Quota shards (ADR 0033): ``A#<account> / ACCOUNT#Q<nn>``, ``QUOTA_SHARDS`` of them, hold
the account's headroom (``notes_free``, ``bytes_free``), the usage written through them
(``note_count``, ``total_bytes``), a ``revision`` and the import lock, so writers of
different notes update different items (``adapters/aws/quota.py``). The account's usage
and revision are the sums over the ``ACCOUNT`` item and its shards.

The gateway's ledger (balances, holds, key spend, usage records) keeps its own items,
documented in ``memvault.adapters.aws.ledger``.
"""

from __future__ import annotations

import zlib

SEP = "\x1f"
TABLE_PK = "pk"
TABLE_SK = "sk"
RECENT_INDEX = "recent"
RECENT_PK = "gsi1pk"
RECENT_SK = "gsi1sk"
TTL_ATTRIBUTE = "expires_at"

ACCOUNT_SK = "ACCOUNT"
QUOTA_SHARDS = 16


def quota_sk(shard: int) -> str:
    return f"{ACCOUNT_SK}#Q{shard:02d}"


def account_pk(account_id: str) -> str:
    return f"A#{account_id}"


def key_sk(key_id: str) -> str:
    return f"K#{key_id}"


def key_hash_pk(key_hash: str) -> str:
    return f"H#{key_hash}"


KEY_HASH_SK = "H"


def note_sk(path_key: str) -> str:
    return f"N#{path_key}"


NOTE_PREFIX = "N#"


def tomb_prefix(path_key: str) -> str:
    return f"D#{path_key}{SEP}"


def tomb_sk(path_key: str, note_id: str) -> str:
    return tomb_prefix(path_key) + note_id


def tomb_marker_sk(path_key: str) -> str:
    return f"DM#{path_key}"


def name_prefix(name_key: str) -> str:
    return f"M#{name_key}{SEP}"


def name_sk(name_key: str, path_key: str) -> str:
    return name_prefix(name_key) + path_key


def version_prefix(note_id: str) -> str:
    return f"V#{note_id}{SEP}"


def version_sk(note_id: str, version: int) -> str:
    return f"{version_prefix(note_id)}{version:08d}"


LINK_PREFIX = "L#"


def link_group(target_key: str) -> str:
    """The last segment of a link target: every key that can name one note shares it."""
    return target_key.rsplit("/", 1)[-1]


def link_group_prefix(group: str) -> str:
    return f"L#{group}{SEP}"


def link_prefix(target_key: str) -> str:
    return f"{link_group_prefix(link_group(target_key))}{target_key}{SEP}"


def link_sk(target_key: str, note_id: str) -> str:
    return link_prefix(target_key) + note_id


def budget_sk(bucket: str) -> str:
    return f"B#{bucket}"


QUEUE_PREFIX = "Q#"
# Outside account partitions: one item per account whose search outbox is not empty.
REINDEX_ACCOUNTS_PK = "REINDEX"


def queue_sk(path: str) -> str:
    return f"Q#{path}"


RECENT_BUCKETS = 4


def recent_pk(account_id: str, path_key: str) -> str:
    """The "recent" GSI partition of a live note: one of RECENT_BUCKETS by path key."""
    bucket = zlib.crc32(path_key.encode()) % RECENT_BUCKETS
    return recent_bucket_pk(account_id, bucket)


def recent_bucket_pk(account_id: str, bucket: int) -> str:
    return account_pk(account_id) if bucket == 0 else f"{account_pk(account_id)}{SEP}{bucket}"


def recent_sk(updated_at: float, path_key: str) -> str:
    return f"{updated_at:017.6f}{SEP}{path_key}"


def body_prefix(account_id: str, note_id: str, version: int) -> str:
    return f"{account_id}/notes/{note_id}/{version:08d}-"


def body_key(account_id: str, note_id: str, version: int, token: str) -> str:
    """S3 object holding one version's markdown (immutable once written).

    ``token`` is unique per write attempt: two writers racing for the same version
    upload different objects, so the loser's cleanup can never delete the winner's.
    Items record the key they point at (attribute ``body``).
    """
    return f"{body_prefix(account_id, note_id, version)}{token}.md"


def journal_key(account_id: str, import_id: str) -> str:
    return f"{account_id}/journal/{import_id}.json"


# ---------------------------------------------------------------------- people and access
MEMBER_PREFIX = "MB#"
MEMBERS_SK = "MEMBERS"  # the active-owner counter of an organisation
INVITATION_PREFIX = "IV#"
SESSION_PREFIX = "SE#"
AUDIT_PREFIX = "AU#"
EMAIL_SK = "E"
INVITATION_HASH_SK = "IH"
SESSION_HASH_SK = "SH"
ORGS_PK = "ORGS"
SIGN_IN_ACCOUNT = "!signin"  # the rate limiter's account for sign-in attempts


def member_sk(member_id: str) -> str:
    return f"{MEMBER_PREFIX}{member_id}"


def email_pk(email_key: str) -> str:
    return f"E#{email_key}"


def invitation_sk(invitation_id: str) -> str:
    return f"{INVITATION_PREFIX}{invitation_id}"


def invitation_hash_pk(token_hash: str) -> str:
    return f"IH#{token_hash}"


def session_sk(session_id: str) -> str:
    return f"{SESSION_PREFIX}{session_id}"


def session_hash_pk(secret_hash: str) -> str:
    return f"SH#{secret_hash}"


def audit_sk(at: float, event_id: str) -> str:
    return f"{AUDIT_PREFIX}{at:017.6f}{SEP}{event_id}"
