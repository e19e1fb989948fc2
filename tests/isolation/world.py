"""Two organisations for the tenant-isolation suite, and the probe that counts attempts
and leaks.

Organisation A holds the secrets: notes whose title, body and tag carry ``HIDDEN`` (a
word B's people never type), their versions, links, a deleted note, a usage record, a
balance, members of every role with keys and sessions, a pending invitation, audit
events. B is the attacker: a member of every role, their keys and sessions, and notes
of its own at A's very paths. ``SEARCH`` is the word an attacker searches for (it is in
A's notes too, so a search that crossed tenants would find them).

A leak is any answer to B that holds a marker of A: ``HIDDEN``, A's organisation id (as
a value) or any id of A's (member, key, key prefix, session, invitation, note, audit event), unless
the attacker itself sent that string (an error echoing the id it was given is no leak).
After the attempts, A's state must be exactly as before.
"""

from __future__ import annotations

import io
import uuid
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memvault.container import Services
from memvault.domain import jobs as J
from memvault.domain.identity import AuditKind, Role
from memvault.domain.models import UsageRecord
from memvault.domain.profiles import ItemType
from memvault.errors import MemvaultError
from memvault.services.context import Caller
from tests.support.people import Org, make_org

HIDDEN = "quokka7731"
SEARCH = "zanzibar"
A_PATHS = ("secret/plan.md", "Other.md", "gone.md")
A_FILES = ("secret/diagram.png", ".obsidian/app.json")  # A's attachment and configuration


@dataclass
class Probe:
    """Counts attempts, and the leaks among their answers."""

    markers: set[str]
    attempts: int = 0
    refused: int = 0
    leaks: list[str] = field(default_factory=list)

    def seen(self, name: str, answer: str, sent: str = "") -> None:
        """Check one answer (its text) for A's markers the attacker did not send."""
        self.attempts += 1
        hits = sorted(m for m in self.markers if m in answer and m not in sent)
        if hits:
            self.leaks.append(f"{name}: {hits} in {answer[:300]!r}")

    def attempt(self, name: str, call: Callable[[], Any], sent: Iterable[str] = ()) -> Any:
        """Run one service call as the attacker; a refusal is fine, an answer is checked."""
        try:
            result = call()
        except MemvaultError:
            self.attempts += 1
            self.refused += 1
            return None
        self.seen(name, render(result), " ".join(sent))
        return result

    def assert_no_leaks(self, at_least: int) -> None:
        print(
            f"isolation: {self.attempts} attempts, {self.refused} refused, {len(self.leaks)} leaks"
        )
        assert not self.leaks, (
            f"{len(self.leaks)} leaks in {self.attempts} attempts:\n" + "\n".join(self.leaks)
        )
        assert self.attempts >= at_least, f"only {self.attempts} attempts (expected {at_least}+)"


def render(value: Any) -> str:
    """Everything an answer holds, as text (a zip: its names and contents)."""
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        if data[:2] == b"PK":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                return " ".join(
                    n + " " + archive.read(n).decode("utf-8", "replace") for n in archive.namelist()
                )
        return data.decode("utf-8", "replace")
    return repr(value)


@dataclass
class World:
    services: Services
    a: Org
    b: Org
    markers: set[str]
    a_invitation_id: str
    a_memories: list[str] = field(default_factory=list)  # memory profile ids
    a_items: list[str] = field(default_factory=list)  # their items' ids
    # Import and export jobs (add_jobs): A's job ids, and the tokens of the signed upload
    # and download links (by purpose) of A's jobs and of B's own.
    a_jobs: list[str] = field(default_factory=list)
    a_tokens: dict[str, str] = field(default_factory=dict)
    b_jobs: dict[str, str] = field(default_factory=dict)  # purpose -> B's job id
    b_tokens: dict[str, str] = field(default_factory=dict)
    # A large file's upload (services.uploads), its bytes sent: A's ids (tokens above,
    # by the uploads' purposes).
    a_uploads: list[str] = field(default_factory=list)

    def probe(self) -> Probe:
        return Probe(set(self.markers))

    def b_actors(self) -> dict[str, Caller]:
        """B's people as each way in: sessions, admin keys, vault keys."""
        actors: dict[str, Caller] = {}
        for role, person in self.b.people.items():
            actors[f"{role} session"] = person.caller
            actors[f"{role} key"] = person.key_caller
            actors[f"{role} vault key"] = person.vault_caller
        return actors

    def a_ids(self) -> dict[str, list[str]]:
        people = self.a.people.values()
        return {
            "member": [p.member.id for p in people],
            "key": [k.key.id for p in people for k in (p.key, p.vault_key)],
            "session": [p.session.session.id for p in people],
            "invitation": [self.a_invitation_id],
            "memory": [*self.a_memories, "user-1"],  # ids, and the slug B also uses
            "item": self.a_items,
            "job": self.a_jobs,
            "upload": self.a_uploads,
        }

    def snapshot(self) -> Any:
        """A's state, to compare before and after the attacks."""
        store, account = self.services.store, self.a.id
        acct = store.get_account(account)
        assert acct is not None
        notes = sorted((n.path, n.version, n.sha256) for n in store.iter_notes(account))
        versions = {p: [v.version for v in store.list_versions(account, p)] for p in A_PATHS}
        members = [
            (m.id, m.role, m.disabled_at, m.email, m.name) for m in store.list_members(account)
        ]
        keys = [
            (k.id, k.revoked_at, k.toggles, k.settings, k.member_id)
            for k in store.list_keys(account)
        ]
        invitations = [i.id for i in store.list_invitations(account)]
        sessions = {m[0]: sorted(s.id for s in store.list_sessions(account, m[0])) for m in members}
        events = [
            e.id
            for e in store.events(account, limit=10_000)
            if e.kind is not AuditKind.SIGN_IN_FAILED
        ]
        balance = self.services.ledger.get_balance(account)
        profiles = self.services.profiles.store
        memories = [
            (p.id, p.revision, p.name, p.active, p.retention_days, p.item_count)
            for p in profiles.list_profiles(account)
        ]
        items = {
            m[0]: [(i.id, i.text) for i in profiles.list_items(account, m[0])] for m in memories
        }
        return (
            memories,
            items,
            acct.name,
            acct.limits,
            acct.note_count,
            notes,
            versions,
            members,
            keys,
            invitations,
            sessions,
            events,
            balance,
            store.tag_counts(account),
            sorted(self.services.attachments.store.file_keys(account).values(), key=str),
            acct.total_bytes,
            [
                (j.id, j.status, j.updated_at, j.blob_bytes)
                for j in self.services.jobs.jobs.recent(account, 100)
            ],
        )


def build_world(services: Services) -> World:
    a = make_org(services, "org-a")
    b = make_org(services, "org-b")
    writer = a.owner.key_caller
    vault = services.vault
    vault.write(
        writer, "secret/plan.md", f"# Plan {HIDDEN}\n\n{SEARCH} launch #{HIDDEN}. [[Other]]\n"
    )
    vault.append(writer, "secret/plan.md", f"second version, {SEARCH} {HIDDEN}")
    vault.write(writer, "Other.md", f"# Other\n\n{SEARCH} {HIDDEN} links back [[secret/plan]]\n")
    vault.write(writer, "gone.md", f"# Gone {HIDDEN}\n\n{SEARCH}\n")
    vault.delete(writer, "gone.md")
    for name in A_FILES:
        services.attachments.put(writer, name, f"{name} {HIDDEN}".encode())
    services.org.set_balance(a.owner.caller, 7_777_000)
    services.billing.record_usage(
        UsageRecord(
            id=uuid.uuid4().hex,
            account_id=a.id,
            key_id=a.owner.key.key.id,
            model=f"model-{HIDDEN}",
            api_format="openai",
            input_tokens=11,
            output_tokens=22,
            rounds=1,
            memory_calls={},
            recalled_notes=0,
            injected_tokens=0,
            cost_micros=333,
            status=200,
            outcome="ok",
            started_at=services.billing.clock(),
            duration_ms=1,
            overhead_ms=1,
        )
    )
    invitation = services.members.invite(a.owner.caller, "pending@org-a.test", Role.ADMIN)
    # B's own notes at A's paths: reads by path find these, never A's.
    for path in A_PATHS[:2]:
        vault.write(b.owner.key_caller, path, f"# B's {path}\n\n{SEARCH} ours\n")

    store = services.store
    # A's id as it stands in an answer (quoted); A's addresses are no secret of A's (an
    # attacker may well know them) and are not markers themselves.
    markers = {HIDDEN, f"'{a.id}'", f'"{a.id}"'}
    for person in a.people.values():
        markers |= {person.member.id, person.session.session.id}
        for key in (person.key, person.vault_key):
            markers |= {key.key.id, key.key.prefix, key.secret}
    markers.add(invitation.invitation.id)
    markers |= {n.id for n in store.iter_notes(a.id)}
    markers |= {e.id for e in store.events(a.id, limit=10_000)}
    # Memory profiles: A's owner and member each hold one, under a slug B uses too.
    a_memories, a_items = [], []
    for person in (a.owner, a.member):
        made = services.profiles.create(person.caller, slug="user-1", name=f"A {HIDDEN}")
        a_memories.append(made.id)
        for item_type in ("guardrail", "fact"):
            _, item = services.profiles.add_item(
                person.caller, made.id, item_type=ItemType(item_type), text=f"A's {HIDDEN}"
            )
            a_items.append(item.id)
    services.profiles.create(b.member.caller, slug="user-1", name="B's own")
    markers |= set(a_memories) | set(a_items)
    return World(
        services, a, b, markers, invitation.invitation.id, a_memories=a_memories, a_items=a_items
    )


def job_token(services: Services, purpose: str, job: J.Job) -> str:
    """The token of a job's signed link: what the embedded server puts in it (on AWS the
    links are presigned S3 ones, and this is the same signature its token routes check)."""
    return J.sign_token(
        services.jobs.jobs.signing_key(), purpose, job.account_id, job.id, job.expires_at
    )


def add_jobs(world: World) -> None:
    """An import awaiting its upload and an export that succeeded, in A and in B: A's are
    what B attacks; B's tokens are the valid ones B holds, tried on A's jobs."""
    from tests.support.jobs import deliver

    services = world.services
    for org, ids, tokens in (
        (world.a, None, world.a_tokens),
        (world.b, world.b_jobs, world.b_tokens),
    ):
        made = services.jobs.create_import(org.owner.caller, 64, "vault.zip").job
        export = services.jobs.create_export(org.owner.caller)
        if services.settings.backend == "aws":
            deliver(services, org.id, export.id)
        elif services.jobs.worker is not None:
            assert services.jobs.worker.idle()
        done = services.jobs.get(org.owner.caller, export.id)
        assert done.status is J.JobStatus.SUCCEEDED, done
        tokens[J.UPLOAD] = job_token(services, J.UPLOAD, made)
        tokens[J.DOWNLOAD] = job_token(services, J.DOWNLOAD, done)
        if ids is None:
            world.a_jobs = [made.id, export.id]
            world.markers |= set(world.a_jobs)
        else:
            ids.update({J.UPLOAD: made.id, J.DOWNLOAD: export.id})
    add_uploads(world)


def add_uploads(world: World) -> None:
    """A large file's upload in A and in B, its bytes sent, with the token of its
    embedded upload URL and of a download link to the attachment: B's are valid, tried
    on A's upload and files."""
    from memvault.services import uploads as U

    services = world.services
    key = services.jobs.jobs.signing_key()
    for org, tokens in ((world.a, world.a_tokens), (world.b, world.b_tokens)):
        began = services.uploads.begin(org.owner.caller, "secret/big.bin", 4)
        upload = began.upload
        tokens[U.UPLOAD] = began.token or J.sign_token(
            key, U.UPLOAD, org.id, upload.id, upload.expires_at
        )
        services.uploads.uploads.write(org.id, upload.id, iter([b"abcd"]), max_bytes=4)
        tokens[U.DOWNLOAD] = J.sign_token(key, U.DOWNLOAD, org.id, A_FILES[0], upload.expires_at)
        if org is world.a:
            world.a_uploads = [upload.id]
            world.markers.add(upload.id)
