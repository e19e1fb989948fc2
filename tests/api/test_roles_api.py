"""Every management route, tried by each role over HTTP: an owner, an admin and a member
(each signed in, with the session cookie and CSRF token) and a vault key (an owner's key
without the admin toggle). What each may do is the README's role table; a refusal is
403 and changes nothing, an allowance answers 2xx.

Each attempt gets fresh targets (a colleague made for it, a key of theirs, an
invitation), so one attempt's success cannot spoil the next one's.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from memvault.api.app import create_app
from memvault.container import Services
from memvault.domain.identity import Role
from memvault.domain.models import Toggles
from memvault.domain.profiles import ItemType
from memvault.http_edge import SESSION_COOKIE
from tests.api.helpers import url
from tests.support.people import PASSWORD, Org, make_org
from tests.support.routes import api_routes
from tests.support.servers import LiveServer

ACTORS = ("owner", "admin", "member", "vault key")
EVERYONE = frozenset(ACTORS)
PEOPLE = frozenset({"owner", "admin", "member"})
ADMINS = frozenset({"owner", "admin"})
OWNER = frozenset({"owner"})


@dataclass
class Targets:
    """What an attempt acts on, made fresh for it."""

    colleague: str = ""  # a member's id
    colleague_key: str = ""
    own_key: str = ""
    owner_colleague: str = ""  # a second owner's id
    member_invitation: str = ""
    owner_invitation: str = ""
    own_session: str = ""  # another session of the actor's own
    note: str = ""  # a live note's URL path (two versions)
    gone: str = ""  # a deleted note's
    moved: str = ""  # where a move may go
    own_memory: str = ""  # a memory profile's id, the actor's own (an item in it)
    own_item: str = ""
    colleague_memory: str = ""  # a colleague's memory profile (an item in it)
    colleague_item: str = ""
    file: str = ""  # an attachment's path (ADR 0043)
    own_export: str = ""  # job ids (ADR 0041): an export the actor started
    colleague_export: str = ""  # an export a member colleague started
    colleague_import: str = ""  # an import the second owner started (members may not)
    colleague_upload: str = ""  # a large file's upload a member colleague began, sent


def fresh_targets(
    services: Services,
    org: Org,
    actor: str,
    n: int,
    *,
    jobs: bool = False,
    uploads: bool = False,
) -> Targets:
    owner = org.owner.key_caller
    made = []
    for role in (Role.MEMBER, Role.OWNER):
        issued = services.members.invite(
            owner, f"{role}-{actor}-{n}@org-a.test".replace(" ", ""), role
        )
        made.append(
            services.members.accept_invitation(issued.token, name="Colleague", password=PASSWORD)
        )
    colleague = made[0]
    colleague_caller = services.callers.for_session(
        colleague.secret, csrf_token=colleague.csrf_token, unsafe=True
    )
    colleague_key = services.keys.create_key(colleague_caller, name="theirs", toggles=Toggles())
    me = org.people[actor] if actor != "vault key" else org.owner
    own = services.keys.create_key(me.key_caller, name="mine", toggles=Toggles())
    vault, writer = services.vault, org.owner.key_caller
    note, gone = (
        f"roles/{actor}-{n}.md".replace(" ", "-"),
        f"roles/gone-{actor}-{n}.md".replace(" ", "-"),
    )
    vault.write(writer, note, "# note\n\nfirst [[gone]]")
    vault.write(writer, note, "# note\n\nsecond")
    vault.write(writer, gone, "# gone")
    vault.delete(writer, gone)
    file = f"roles/{actor}-{n}.png".replace(" ", "-")
    services.attachments.put(writer, file, b"\x89PNG")
    other_session = ""
    if actor != "vault key":
        other_session = services.sessions.sign_in_password(me.email, PASSWORD).session.id
    member_invite = services.members.invite(
        owner, f"m-{actor}-{n}@x.test".replace(" ", ""), Role.MEMBER
    )
    owner_invite = services.members.invite(
        owner, f"o-{actor}-{n}@x.test".replace(" ", ""), Role.OWNER
    )
    own_memory, own_item = _memory_with_item(services, me.key_caller, f"own-{n}")
    colleague_memory, colleague_item = _memory_with_item(services, colleague_caller, f"theirs-{n}")
    job_ids: dict[str, str] = {}
    if jobs:  # only for the job rows: an export runs (on the embedded worker)
        second_owner = services.callers.for_session(
            made[1].secret, csrf_token=made[1].csrf_token, unsafe=True
        )
        mine = me.vault_caller if actor == "vault key" else me.caller  # as the actor calls
        job_ids = {
            "own_export": services.jobs.create_export(mine).id,
            "colleague_export": services.jobs.create_export(colleague_caller).id,
            "colleague_import": services.jobs.create_import(second_owner, 64).job.id,
        }
    if uploads:  # a member colleague's upload of a large file, its bytes sent
        began = services.uploads.begin(colleague_caller, f"roles/up-{actor}-{n}.bin", 4)
        assert began.token is not None
        services.uploads.receive(began.upload.id, began.token, iter([b"abcd"]))
        job_ids["colleague_upload"] = began.upload.id
    return Targets(
        **job_ids,
        own_memory=own_memory,
        own_item=own_item,
        colleague_memory=colleague_memory,
        colleague_item=colleague_item,
        colleague=colleague.member.id,
        colleague_key=colleague_key.key.id,
        own_key=own.key.id if actor != "vault key" else org.owner.vault_key.key.id,
        owner_colleague=made[1].member.id,
        member_invitation=member_invite.invitation.id,
        owner_invitation=owner_invite.invitation.id,
        own_session=other_session or "none",
        note=url(note)[len("/v1/notes/") :],
        gone=url(gone)[len("/v1/notes/") :],
        moved=f"roles/moved-{actor}-{n}.md".replace(" ", "-"),
        file=file,
    )


def _memory_with_item(services: Services, caller: Any, slug: str) -> tuple[str, str]:
    made = services.profiles.create(caller, slug=slug, name=slug)
    _, item = services.profiles.add_item(
        caller, made.id, item_type=ItemType.GUARDRAIL, text="Use metric units."
    )
    return made.id, item.id


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # formatted with the Targets' fields
    allowed: frozenset[str]
    body: Callable[[Targets], Any] | None = None
    template: str = ""  # the app's route it exercises, when the path is not it
    refused: int = 403  # 404 where a refusal must not tell that the target exists

    @property
    def jobs(self) -> bool:
        return self.path.startswith(("/v1/imports/", "/v1/exports/"))

    @property
    def uploads(self) -> bool:
        return self.path.startswith("/v1/files/uploads/")

    @property
    def route(self) -> tuple[str, str]:
        """(method, the app's path template) this row exercises."""
        path = self.template or self.path.split("?")[0]
        for fields, param in TEMPLATE_PARAMS.items():
            for name in fields:
                path = path.replace("{" + name + "}", "{" + param + "}")
        return (self.method, path)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


# Which Targets field stands for which of the app's path parameters.
TEMPLATE_PARAMS = {
    ("colleague", "owner_colleague"): "member_id",
    ("colleague_key", "own_key"): "key_id",
    ("member_invitation", "owner_invitation"): "invitation_id",
    ("own_memory", "colleague_memory"): "memory",
    ("own_item", "colleague_item"): "item_id",
    ("own_export", "colleague_export", "colleague_import"): "job_id",
    ("colleague_upload",): "upload_id",
}


NOTE = "/v1/notes/{path:path}"
# Routes nobody signs in for (each role may call them alike): covered by test_people_api.
OPEN_ROUTES = {
    ("POST", "/v1/sessions"),
    ("POST", "/v1/invitations/accept"),
    ("DELETE", "/v1/sessions/current"),  # signs the actor out: tests/api/test_people_api.py
    ("POST", "/v1/import"),  # a body of its own: below
    # A job's signed upload and download links take no Authorization, only their token:
    # tests/contract/test_jobs.py, and the isolation suite's tokens of another job.
    ("PUT", "/v1/imports/{job_id}/upload"),
    ("GET", "/v1/exports/{job_id}/download"),
    # So do a large file's upload and download links: tests/contract/test_file_uploads.py.
    ("PUT", "/v1/file-uploads/{upload_id}"),
    ("GET", "/v1/file-downloads/{path:path}"),
}


def _json(value: Any) -> Callable[[Targets], Any]:
    return lambda _t: value


ROUTES = [
    # the organisation, its limits and money
    Route("GET", "/v1/org", EVERYONE),
    Route("PATCH", "/v1/org", OWNER, _json({"name": "Renamed"})),
    Route("PATCH", "/v1/org", ADMINS, _json({"search_mode": "keyword", "min_score": 0.2})),
    Route("GET", "/v1/account", EVERYONE),
    Route("PATCH", "/v1/account/limits", OWNER, _json({"max_notes": 100})),
    Route("GET", "/v1/balance", EVERYONE),
    Route("POST", "/v1/balance", OWNER, _json({"set_micros": 1_000})),
    Route("GET", "/v1/usage", EVERYONE),
    Route("GET", "/v1/usage?key_id={colleague_key}", ADMINS),
    Route("GET", "/v1/usage?key_id={own_key}", EVERYONE),
    # members
    Route("GET", "/v1/members", PEOPLE),
    Route("PATCH", "/v1/members/{colleague}", OWNER, _json({"role": "admin"})),
    Route("PATCH", "/v1/members/{colleague}", OWNER, _json({"disabled": True})),
    Route("DELETE", "/v1/members/{colleague}", ADMINS),
    Route("DELETE", "/v1/members/{owner_colleague}", OWNER),
    # invitations
    Route("POST", "/v1/invitations", OWNER, _json({"email": "new-o@x.test", "role": "owner"})),
    Route("POST", "/v1/invitations", ADMINS, _json({"email": "new-a@x.test", "role": "admin"})),
    Route("POST", "/v1/invitations", ADMINS, _json({"email": "new-m@x.test", "role": "member"})),
    Route("GET", "/v1/invitations", ADMINS),
    Route("DELETE", "/v1/invitations/{member_invitation}", ADMINS),
    Route("DELETE", "/v1/invitations/{owner_invitation}", OWNER),
    # keys
    Route("GET", "/v1/keys", PEOPLE),
    Route("POST", "/v1/keys", PEOPLE, _json({"name": "k", "recall": True})),
    Route("POST", "/v1/keys", OWNER, _json({"name": "k", "spend_cap_micros": 5})),
    Route("PATCH", "/v1/keys/{own_key}", PEOPLE, _json({"mcp": True})),
    Route("PATCH", "/v1/keys/{colleague_key}", OWNER, _json({"mcp": True})),
    Route("PATCH", "/v1/keys/{own_key}", OWNER, _json({"spend_cap_micros": 5})),
    Route("DELETE", "/v1/keys/{colleague_key}", ADMINS),
    Route("DELETE", "/v1/keys/{own_key}", PEOPLE),
    # memory profiles: owners and admins read everyone's, owners edit any, admins delete
    # a colleague's but do not edit it, members manage their own
    Route("GET", "/v1/memories", PEOPLE),
    Route("POST", "/v1/memories", PEOPLE, _json({"slug": "new", "name": "New"})),
    Route("GET", "/v1/memories/{own_memory}", PEOPLE),
    Route("GET", "/v1/memories/{colleague_memory}", ADMINS),
    Route("PATCH", "/v1/memories/{own_memory}", PEOPLE, _json({"name": "Renamed"})),
    Route("PATCH", "/v1/memories/{colleague_memory}", OWNER, _json({"active": False})),
    Route("DELETE", "/v1/memories/{own_memory}", PEOPLE),
    Route("DELETE", "/v1/memories/{colleague_memory}", ADMINS),
    Route(
        "POST",
        "/v1/memories/{own_memory}/items",
        PEOPLE,
        _json({"item_type": "preference", "key": "tone", "text": "Brief."}),
    ),
    Route(
        "POST",
        "/v1/memories/{colleague_memory}/items",
        OWNER,
        _json({"item_type": "guardrail", "text": "Be kind."}),
    ),
    Route("PATCH", "/v1/memories/{own_memory}/items/{own_item}", PEOPLE, _json({"text": "Kg."})),
    Route(
        "PATCH",
        "/v1/memories/{colleague_memory}/items/{colleague_item}",
        OWNER,
        _json({"text": "Kg."}),
    ),
    Route("DELETE", "/v1/memories/{own_memory}/items/{own_item}", PEOPLE),
    Route("DELETE", "/v1/memories/{colleague_memory}/items/{colleague_item}", OWNER),
    # the audit log, oneself
    Route("GET", "/v1/audit", ADMINS),
    Route("GET", "/v1/me", EVERYONE),
    Route("PATCH", "/v1/me", PEOPLE, _json({"name": "Me"})),
    Route("GET", "/v1/sessions", PEOPLE),
    Route(
        "POST",
        "/v1/me/password",
        PEOPLE,
        _json({"current_password": PASSWORD, "new_password": "another long passphrase"}),
    ),
    Route("DELETE", "/v1/sessions/{own_session}", PEOPLE, template="/v1/sessions/{session_id}"),
    # the vault: every key (bound to it) and every person
    Route("GET", "/v1/notes", EVERYONE),
    Route("GET", "/v1/notes/{note}", EVERYONE, template=NOTE),
    Route("PUT", "/v1/notes/{note}", EVERYONE, _json({"markdown": "x"}), template=NOTE),
    Route(
        "POST", "/v1/notes/{note}/append", EVERYONE, _json({"text": "x"}), template=NOTE + "/append"
    ),
    Route(
        "POST",
        "/v1/notes/{note}/move",
        EVERYONE,
        lambda t: {"to": t.moved},
        template=NOTE + "/move",
    ),
    Route("GET", "/v1/notes/{note}/versions", EVERYONE, template=NOTE + "/versions"),
    Route(
        "GET", "/v1/notes/{note}/versions/1", EVERYONE, template=NOTE + "/versions/{version:int}"
    ),
    Route(
        "POST",
        "/v1/notes/{note}/versions/1/restore",
        EVERYONE,
        template=NOTE + "/versions/{version:int}/restore",
    ),
    Route("GET", "/v1/notes/{note}/backlinks", EVERYONE, template=NOTE + "/backlinks"),
    Route("GET", "/v1/notes/{note}/links", EVERYONE, template=NOTE + "/links"),
    Route("DELETE", "/v1/notes/{note}", EVERYONE, template=NOTE),
    Route("DELETE", "/v1/notes/{gone}/history", EVERYONE, template=NOTE + "/history"),
    Route("GET", "/v1/search?q=note", EVERYONE),
    Route("GET", "/v1/recent", EVERYONE),
    Route("GET", "/v1/tags", EVERYONE),
    Route("GET", "/v1/export", EVERYONE),
    Route("GET", "/v1/export/windows-unsafe", EVERYONE),
    # the vault's files (attachments, .obsidian/): everyone's, as the notes are
    Route("GET", "/v1/files", EVERYONE),
    Route("GET", "/v1/files/{file}", EVERYONE, template="/v1/files/{path:path}"),
    Route("PUT", "/v1/files/{file}", EVERYONE, _json({"any": "bytes"}), "/v1/files/{path:path}"),
    Route("DELETE", "/v1/files/{file}", EVERYONE, template="/v1/files/{path:path}"),
    # a large file's upload: begun by anyone; completed by whoever began it, or an owner
    # or admin (a colleague's is not found for a member or a vault key)
    Route("POST", "/v1/files/uploads", EVERYONE, _json({"path": "roles/big.bin", "bytes": 64})),
    Route("POST", "/v1/files/uploads/{colleague_upload}/complete", ADMINS, refused=404),
    # import and export jobs (ADR 0041): an import replaces the shared vault (owners,
    # admins, vault keys); anyone exports; a job is seen by owners and admins, and by
    # whoever started it (another's is not found: its existence is not told)
    Route("POST", "/v1/imports", ADMINS | {"vault key"}, _json({"bytes": 64})),
    Route("GET", "/v1/imports/{colleague_import}", ADMINS, refused=404),
    Route("POST", "/v1/exports", EVERYONE),
    Route("GET", "/v1/exports/{own_export}", EVERYONE),
    Route("GET", "/v1/exports/{colleague_export}", ADMINS, refused=404),
    Route("GET", "/v1/jobs", EVERYONE),
]


def client_for(server: LiveServer, org: Org, actor: str) -> httpx.Client:
    if actor == "vault key":
        return server.client(org.owner.vault_key.secret)
    # A fresh session each time: a password change ends the others.
    started = server.services.sessions.sign_in_password(org.people[actor].email, PASSWORD)
    return httpx.Client(
        base_url=server.url,
        cookies={SESSION_COOKIE: started.secret},
        headers={"x-csrf-token": started.csrf_token},
        timeout=30.0,
    )


@pytest.mark.parametrize("route", ROUTES, ids=str)
def test_each_role_on_each_route(live_server: LiveServer, route: Route) -> None:
    services = live_server.services
    org = make_org(services, "org-a")
    wrong: list[str] = []
    for n, actor in enumerate(ACTORS):
        targets = fresh_targets(services, org, actor, n, jobs=route.jobs, uploads=route.uploads)
        path = route.path.format(**vars(targets))
        body = route.body(targets) if route.body else None
        with client_for(live_server, org, actor) as client:
            r = client.request(route.method, path, json=body)
        allowed = actor in route.allowed
        if allowed and not 200 <= r.status_code < 300:
            wrong.append(f"{actor}: expected 2xx, got {r.status_code} {r.text[:200]}")
        if not allowed and r.status_code != route.refused:
            wrong.append(f"{actor}: expected {route.refused}, got {r.status_code} {r.text[:200]}")
        if not allowed and r.status_code == 403:
            assert r.json()["error"]["code"] in ("owner_required", "admin_required"), r.text
        if not allowed and r.status_code == 404:
            assert r.json()["error"]["code"] in ("job_not_found", "upload_not_found"), r.text
        # The password is set back, so later attempts sign in with it.
        if route.path == "/v1/me/password" and allowed:
            member = org.people[actor].member
            services.store.set_password_hash(
                member.account_id, member.id, services.members.hasher.hash(PASSWORD)
            )
    assert not wrong, f"{route}:\n" + "\n".join(wrong)


def test_a_member_lists_only_themself_and_their_own_keys(
    live_server: LiveServer,
) -> None:
    org = make_org(live_server.services, "org-a")
    with client_for(live_server, org, "member") as c:
        assert [m["id"] for m in c.get("/v1/members").json()] == [org.member.member.id]
        keys = c.get("/v1/keys").json()
        assert {k["member_id"] for k in keys} == {org.member.member.id}
    with client_for(live_server, org, "admin") as c:
        assert len(c.get("/v1/members").json()) == 3
        assert {k["member_id"] for k in c.get("/v1/keys").json()} == {
            p.member.id for p in org.people.values()
        }


def test_every_role_imports_into_the_vault(live_server: LiveServer) -> None:
    org = make_org(live_server.services, "org-a")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("imported.md", "# imported")
    for actor in ACTORS:
        with client_for(live_server, org, actor) as client:
            r = client.post(
                "/v1/import",
                content=archive.getvalue(),
                headers={"Content-Type": "application/zip"},
            )
            assert r.status_code == 200, (actor, r.text)


def test_the_table_covers_every_management_route(live_server: LiveServer) -> None:
    app = create_app(live_server.services, surfaces=("management",))
    tabled = {r.route for r in ROUTES} | OPEN_ROUTES
    missing = sorted(set(api_routes(app)) - tabled)
    assert not missing, f"management routes with no row in the role table: {missing}"
