"""The notes REST API through a real server: writes, reads, versions, links, listings."""

from __future__ import annotations

import io
import unicodedata
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memvault.domain.models import MAX_NOTE_BYTES
from tests.api.helpers import error_of, url

# ---------------------------------------------------------------------------- helpers


def put(c: httpx.Client, path: str, markdown: str, **headers: str) -> httpx.Response:
    return c.put(url(path), json={"markdown": markdown}, headers=headers)


def versions_of(c: httpx.Client, path: str) -> list[int]:
    r = c.get(url(path, "/versions"))
    assert r.status_code == 200, r.text
    return [v["version"] for v in r.json()]


@pytest.fixture
def c(live_server: Any) -> Iterator[httpx.Client]:
    with live_server.client() as client:
        yield client


# ---------------------------------------------------------------------------- put and get


def test_put_json_creates_with_201_etag_and_get_returns_it(c: httpx.Client) -> None:
    markdown = "---\ntitle: The Plan\ntags: [work]\n---\n# Heading\n\nSee [[Other]] #idea\n"
    r = put(c, "projects/plan.md", markdown)
    assert r.status_code == 201
    assert r.headers["ETag"] == '"1"'
    body = r.json()
    assert body["changed"] is True
    assert body["message"] == "created"
    note = body["note"]
    assert note["path"] == "projects/plan.md"
    assert note["version"] == 1
    assert note["title"] == "The Plan"
    assert set(note["tags"]) == {"work", "idea"}
    assert note["size"] == len(markdown.encode())
    assert set(note) == {
        "id",
        "path",
        "title",
        "tags",
        "version",
        "size",
        "created_at",
        "updated_at",
    }

    got = c.get(url("projects/plan.md"))
    assert got.status_code == 200
    assert got.headers["ETag"] == '"1"'
    full = got.json()
    assert full["markdown"] == markdown
    assert full["frontmatter"] == {"title": "The Plan", "tags": ["work"]}
    assert full["frontmatter_error"] is None
    assert [link["target"] for link in full["links"]] == ["Other"]
    assert full["id"] == note["id"]


def test_frontmatter_of_any_yaml_shape_reads_back_as_json(c: httpx.Client) -> None:
    odd = (
        "---\n1: one\nwhen: 2024-01-02\nblob: !!binary aGVsbG8=\nbig: 100000000000000000000\n---\nx"
    )
    assert put(c, "odd.md", odd).status_code == 201
    got = c.get(url("odd.md")).json()
    assert got["frontmatter"] == {
        "1": "one",
        "when": "2024-01-02",
        "blob": "aGVsbG8=",
        "big": 100000000000000000000,
    }
    assert got["frontmatter_error"] is None

    assert put(c, "broken.md", "---\n: : :\n---\nbody").status_code == 201
    broken = c.get(url("broken.md")).json()
    assert broken["frontmatter"] == {}
    assert broken["frontmatter_error"].startswith("invalid YAML frontmatter")
    assert broken["markdown"] == "---\n: : :\n---\nbody"


def test_put_raw_markdown_bodies(c: httpx.Client) -> None:
    text = "# Raw\n\nstarts like a note, ends with café ☕\n"
    r = c.put(url("raw.md"), content=text.encode(), headers={"Content-Type": "text/markdown"})
    assert r.status_code == 201, r.text
    assert c.get(url("raw.md")).json()["markdown"] == text

    plain = c.put(
        url("plain.md"),
        content=b"plain text",
        headers={"Content-Type": "text/plain; charset=utf-8"},
    )
    assert plain.status_code == 201
    assert c.get(url("plain.md")).json()["markdown"] == "plain text"

    # No Content-Type at all: raw markdown unless it looks like a JSON object.
    bare = c.put(url("bare.md"), content=b"- a list item\n")
    assert bare.status_code == 201
    assert c.get(url("bare.md")).json()["markdown"] == "- a list item\n"

    # A raw body that is itself JSON-looking text is stored verbatim with text/markdown.
    jsonish = '{"markdown": "not parsed"}'
    r = c.put(url("jsonish.md"), content=jsonish, headers={"Content-Type": "text/markdown"})
    assert r.status_code == 201
    assert c.get(url("jsonish.md")).json()["markdown"] == jsonish


def test_raw_and_json_bodies_store_identical_markdown(c: httpx.Client) -> None:
    text = "line one\r\nline two\n\n\ttabbed  \n"
    put(c, "json.md", text)
    c.put(url("raw.md"), content=text.encode(), headers={"Content-Type": "text/markdown"})
    a = c.get(url("json.md")).json()
    b = c.get(url("raw.md")).json()
    assert a["markdown"] == b["markdown"] == text


def test_unchanged_write_reports_changed_false_and_makes_no_version(c: httpx.Client) -> None:
    assert put(c, "same.md", "same text").status_code == 201
    again = put(c, "same.md", "same text")
    assert again.status_code == 200
    body = again.json()
    assert body["changed"] is False
    assert "unchanged" in body["message"] and "version 1" in body["message"]
    assert body["note"]["version"] == 1
    assert again.headers["ETag"] == '"1"'
    assert versions_of(c, "same.md") == [1]

    raw = c.put(url("same.md"), content=b"same text", headers={"Content-Type": "text/markdown"})
    assert raw.status_code == 200 and raw.json()["changed"] is False


def test_update_is_200_with_the_new_version(c: httpx.Client) -> None:
    put(c, "n.md", "one")
    r = put(c, "n.md", "two")
    assert r.status_code == 200
    assert r.json()["changed"] is True
    assert r.json()["message"] == "saved as version 2"
    assert r.json()["note"]["version"] == 2
    assert r.headers["ETag"] == '"2"'
    assert versions_of(c, "n.md") == [2, 1]


def test_if_match_pins_the_version(c: httpx.Client) -> None:
    put(c, "n.md", "one")
    ok = put(c, "n.md", "two", **{"If-Match": '"1"'})
    assert ok.status_code == 200 and ok.json()["note"]["version"] == 2

    stale = put(c, "n.md", "three", **{"If-Match": '"1"'})
    error = error_of(stale, 409, "version_conflict")
    assert error["type"] == "conflict"
    assert "version 2" in error["message"]
    note = c.get(url("n.md")).json()
    assert note["markdown"] == "two" and note["version"] == 2
    assert versions_of(c, "n.md") == [2, 1]

    # Weak and unquoted forms of the same ETag are accepted.
    assert put(c, "n.md", "three", **{"If-Match": 'W/"2"'}).status_code == 200
    assert put(c, "n.md", "four", **{"If-Match": "3"}).status_code == 200
    assert c.get(url("n.md")).json()["version"] == 4


def test_if_match_from_a_read_round_trips(c: httpx.Client) -> None:
    put(c, "n.md", "one")
    etag = c.get(url("n.md")).headers["ETag"]
    assert put(c, "n.md", "two", **{"If-Match": etag}).status_code == 200
    assert error_of(put(c, "n.md", "x", **{"If-Match": etag}), 409)


def test_if_match_on_a_missing_note_is_a_conflict_and_creates_nothing(c: httpx.Client) -> None:
    error_of(put(c, "ghost.md", "x", **{"If-Match": '"1"'}), 409, "version_conflict")
    error_of(c.get(url("ghost.md")), 404, "note_not_found")


def test_if_none_match_star_is_create_only(c: httpx.Client) -> None:
    first = put(c, "once.md", "first", **{"If-None-Match": "*"})
    assert first.status_code == 201
    second = put(c, "once.md", "second", **{"If-None-Match": "*"})
    error_of(second, 409, "version_conflict")
    assert c.get(url("once.md")).json()["markdown"] == "first"
    assert versions_of(c, "once.md") == [1]


def test_conditional_get_with_if_none_match(c: httpx.Client) -> None:
    put(c, "n.md", "one")
    fresh = c.get(url("n.md"), headers={"If-None-Match": '"1"'})
    assert fresh.status_code == 304
    assert fresh.content == b""
    assert fresh.headers["ETag"] == '"1"'
    put(c, "n.md", "two")
    stale = c.get(url("n.md"), headers={"If-None-Match": '"1"'})
    assert stale.status_code == 200 and stale.json()["markdown"] == "two"


# ---------------------------------------------------------------------------- paths in URLs


@pytest.mark.parametrize(
    "path",
    [
        "My Notes/Café plan.md",
        "100% sure.md",
        "What? Why#not.md",
        "a+b & c=d.md",
        "日本語/メモ.md",
        "emoji 🚀/launch.md",
        "semi;colon,comma's.md",
    ],
)
def test_paths_with_spaces_unicode_and_reserved_characters(c: httpx.Client, path: str) -> None:
    r = put(c, path, f"body of {path}")
    assert r.status_code == 201, r.text
    assert r.json()["note"]["path"] == path
    got = c.get(url(path))
    assert got.status_code == 200
    assert got.json()["path"] == path
    assert got.json()["markdown"] == f"body of {path}"
    assert [n["path"] for n in c.get("/v1/notes").json()["notes"]] == [path]
    assert versions_of(c, path) == [1]
    assert c.post(url(path, "/append"), json={"text": "more"}).status_code == 200
    assert c.get(url(path, "/versions/1")).json()["markdown"] == f"body of {path}"
    assert c.get(url(path, "/backlinks")).json() == []
    assert c.delete(url(path)).status_code == 204
    error_of(c.get(url(path)), 404, "note_not_found")


def test_decomposed_unicode_in_the_url_names_the_same_note(c: httpx.Client) -> None:
    composed = "Café.md"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    put(c, decomposed, "x")
    got = c.get(url(composed))
    assert got.status_code == 200 and got.json()["path"] == composed


def test_percent_encoded_slash_is_a_folder_separator(c: httpx.Client) -> None:
    r = c.put("/v1/notes/folder%2Fnote.md", json={"markdown": "x"})
    assert r.status_code == 201
    assert r.json()["note"]["path"] == "folder/note.md"


def test_paths_differing_only_in_case_are_one_note(c: httpx.Client) -> None:
    put(c, "Plan.md", "x")
    error_of(put(c, "plan.md", "y"), 409, "path_case_conflict")


def test_every_note_route_finds_the_note_under_another_case(c: httpx.Client) -> None:
    """The README's promise: paths differing only in case name the same note. Answers
    carry the note's own spelling."""
    assert put(c, "CHECK.md", "v1").status_code == 201
    assert put(c, "CHECK.md", "v2").status_code == 200
    put(c, "index.md", "see [[check]]")

    read = c.get(url("check.md"))
    assert read.status_code == 200, read.text
    assert (read.json()["path"], read.json()["markdown"], read.headers["ETag"]) == (
        "CHECK.md",
        "v2",
        '"2"',
    )
    assert c.get(url("Check.md"), headers={"If-None-Match": '"2"'}).status_code == 304
    assert versions_of(c, "check.md") == [2, 1]
    assert c.get(url("check.md", "/versions/1")).json()["markdown"] == "v1"
    assert [n["path"] for n in c.get(url("check.md", "/backlinks")).json()] == ["index.md"]

    appended = c.post(url("check.md", "/append"), json={"text": "v3"})
    assert appended.status_code == 200 and appended.json()["note"]["path"] == "CHECK.md"
    restored = c.post(url("cHeCk.md", "/versions/1/restore"), headers={"If-Match": '"3"'})
    assert restored.status_code == 200 and restored.json()["note"]["path"] == "CHECK.md"
    assert c.get(url("CHECK.md")).json()["markdown"] == "v1"

    error_of(c.delete(url("check.md", "/history")), 409, "note_is_live")
    error_of(c.delete(url("check.md"), headers={"If-Match": '"1"'}), 409, "version_conflict")
    assert c.delete(url("check.md"), headers={"If-Match": '"4"'}).status_code == 204
    error_of(c.get(url("CHECK.md")), 404, "note_not_found")
    assert versions_of(c, "Check.md") == [4, 3, 2, 1]
    assert c.delete(url("check.md", "/history")).status_code == 204
    error_of(c.get(url("CHECK.md", "/versions")), 404, "note_not_found")

    put(c, "Move Me.md", "x")
    moved = c.post(url("move me.md", "/move"), json={"to": "done/Moved.md"})
    assert moved.status_code == 200 and moved.json()["path"] == "done/Moved.md"
    paths = [n["path"] for n in c.get("/v1/notes").json()["notes"]]
    assert paths == ["done/Moved.md", "index.md"]


def test_sub_resources_of_a_note_inside_a_folder_named_versions(c: httpx.Client) -> None:
    """A note path may itself contain "versions", "backlinks", "append"... as folders."""
    tricky = "archive/versions/2.md"
    linker = "versions/backlinks/append.md"
    assert put(c, tricky, "v1 of the tricky note").status_code == 201
    assert put(c, tricky, "v2 of the tricky note").status_code == 200
    assert put(c, linker, "points at [[archive/versions/2]]").status_code == 201

    read = c.get(url(tricky))
    assert read.status_code == 200, read.text
    assert read.json()["path"] == tricky
    assert read.json()["markdown"] == "v2 of the tricky note"
    assert c.get(url(linker)).json()["path"] == linker

    assert versions_of(c, tricky) == [2, 1]
    one = c.get(url(tricky, "/versions/1"))
    assert one.status_code == 200 and one.json()["markdown"] == "v1 of the tricky note"
    assert [n["path"] for n in c.get(url(tricky, "/backlinks")).json()] == [linker]

    restored = c.post(url(tricky, "/versions/1/restore"))
    assert restored.status_code == 200 and restored.json()["note"]["version"] == 3
    appended = c.post(url(tricky, "/append"), json={"text": "tail"})
    assert appended.status_code == 200 and appended.json()["note"]["version"] == 4

    moved = c.post(url(tricky, "/move"), json={"to": "archive/versions/3.md"})
    assert moved.status_code == 200 and moved.json()["path"] == "archive/versions/3.md"
    # The link is rewritten to the shortest text that resolves to the new path.
    assert c.get(url(linker)).json()["markdown"] == "points at [[3]]"
    assert [n["path"] for n in c.get(url("archive/versions/3.md", "/backlinks")).json()] == [linker]
    assert c.delete(url("archive/versions/3.md")).status_code == 204
    assert c.delete(url("archive/versions/3.md", "/history")).status_code == 204
    assert [n["path"] for n in c.get("/v1/notes").json()["notes"]] == [linker]


def test_a_note_named_like_a_route_word(c: httpx.Client) -> None:
    for path in ("versions.md", "history.md", "backlinks.md", "a/versions/versions.md"):
        assert put(c, path, path).status_code == 201, path
        assert c.get(url(path)).json()["markdown"] == path
        assert versions_of(c, path) == [1]


# ---------------------------------------------------------------------------- list


def test_list_notes_with_folder_prefix_tag_and_pagination(c: httpx.Client) -> None:
    paths = [f"p/n{i:02}.md" for i in range(7)] + ["q/other.md", "pear.md"]
    for i, path in enumerate(paths):
        tag = "#Project/Alpha" if i % 2 == 0 else "#misc"
        put(c, path, f"note {i} {tag}")

    everything = c.get("/v1/notes").json()
    assert [n["path"] for n in everything["notes"]] == sorted(paths)
    assert everything["next_cursor"] is None

    folder = c.get("/v1/notes", params={"folder": "p"}).json()["notes"]
    assert [n["path"] for n in folder] == paths[:7]  # "pear.md" is not in folder "p"
    assert c.get("/v1/notes", params={"folder": "p/"}).json()["notes"] == folder
    assert c.get("/v1/notes", params={"prefix": "p"}).json()["notes"] == folder
    assert c.get("/v1/notes", params={"prefix": "p/", "folder": "p"}).json()["notes"] == folder
    error_of(c.get("/v1/notes", params={"prefix": "p", "folder": "q"}), 400)

    tagged = c.get("/v1/notes", params={"tag": "project"}).json()["notes"]
    assert {n["path"] for n in tagged} == {paths[i] for i in range(0, 9, 2)}
    assert c.get("/v1/notes", params={"tag": "#PROJECT/alpha"}).json()["notes"] == tagged
    assert c.get("/v1/notes", params={"tag": "proj"}).json()["notes"] == []

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"folder": "p", "limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = c.get("/v1/notes", params=params).json()
        assert len(page["notes"]) <= 3
        seen += [n["path"] for n in page["notes"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == paths[:7]
    assert pages == 3


def test_list_excludes_deleted_notes(c: httpx.Client) -> None:
    put(c, "a.md", "a")
    put(c, "b.md", "b")
    c.delete(url("a.md"))
    assert [n["path"] for n in c.get("/v1/notes").json()["notes"]] == ["b.md"]


# ---------------------------------------------------------------------------- append


def test_append_creates_then_extends(c: httpx.Client) -> None:
    created = c.post(url("log.md", "/append"), json={"text": "first"})
    assert created.status_code == 201
    assert created.headers["ETag"] == '"1"'
    assert created.json()["changed"] is True
    assert "version 1" in created.json()["message"]

    more = c.post(url("log.md", "/append"), json={"text": "second"})
    assert more.status_code == 200
    assert more.json()["note"]["version"] == 2
    assert more.headers["ETag"] == '"2"'
    assert c.get(url("log.md")).json()["markdown"] == "first\nsecond"


def test_append_if_match(c: httpx.Client) -> None:
    put(c, "log.md", "a\n")
    stale = c.post(url("log.md", "/append"), json={"text": "b"}, headers={"If-Match": '"7"'})
    error_of(stale, 409, "version_conflict")
    assert c.get(url("log.md")).json()["markdown"] == "a\n"
    ok = c.post(url("log.md", "/append"), json={"text": "b"}, headers={"If-Match": '"1"'})
    assert ok.status_code == 200
    assert c.get(url("log.md")).json()["markdown"] == "a\nb"


# ---------------------------------------------------------------------------- move


def test_move_rewrites_links_and_keeps_history(c: httpx.Client) -> None:
    put(c, "old name.md", "target v1")
    put(c, "old name.md", "target v2")
    put(c, "src.md", "see [[old name]] and [[old name|alias]]")
    r = c.post(url("old name.md", "/move"), json={"to": "new/New Name.md"})
    assert r.status_code == 200, r.text
    assert r.json()["path"] == "new/New Name.md"
    assert r.headers["ETag"] == f'"{r.json()["version"]}"'
    error_of(c.get(url("old name.md")), 404, "note_not_found")
    assert c.get(url("new/New Name.md")).json()["markdown"] == "target v2"
    assert c.get(url("src.md")).json()["markdown"] == ("see [[New Name]] and [[New Name|alias]]")
    assert [n["path"] for n in c.get(url("new/New Name.md", "/backlinks")).json()] == ["src.md"]
    assert versions_of(c, "new/New Name.md")[-2:] == [2, 1]


def test_move_failures_change_nothing(c: httpx.Client) -> None:
    put(c, "a.md", "a")
    put(c, "b.md", "b")
    error_of(c.post(url("a.md", "/move"), json={"to": "b.md"}), 409, "path_occupied")
    error_of(c.post(url("a.md", "/move"), json={"to": "B.md"}), 409, "path_occupied")
    error_of(c.post(url("nope.md", "/move"), json={"to": "x.md"}), 404, "note_not_found")
    error_of(c.post(url("a.md", "/move"), json={"to": "../x.md"}), 400, "invalid_path")
    error_of(c.post(url("a.md", "/move"), json={"to": "x.txt"}), 400, "invalid_path")
    stale = c.post(url("a.md", "/move"), json={"to": "c.md"}, headers={"If-Match": '"9"'})
    error_of(stale, 409, "version_conflict")
    error_of(c.post(url("a.md", "/move"), json={"to": ""}), 400, "invalid_input")
    error_of(c.post(url("a.md", "/move"), json={}), 400, "invalid_input")
    assert sorted(n["path"] for n in c.get("/v1/notes").json()["notes"]) == ["a.md", "b.md"]
    ok = c.post(url("a.md", "/move"), json={"to": "c.md"}, headers={"If-Match": '"1"'})
    assert ok.status_code == 200


def test_case_only_rename(c: httpx.Client) -> None:
    put(c, "readme.md", "x")
    r = c.post(url("readme.md", "/move"), json={"to": "README.md"})
    assert r.status_code == 200 and r.json()["path"] == "README.md"
    assert [n["path"] for n in c.get("/v1/notes").json()["notes"]] == ["README.md"]


# ---------------------------------------------------------------------------- delete, history


def test_delete_then_history_stays_until_purged(c: httpx.Client) -> None:
    put(c, "gone.md", "v1")
    put(c, "gone.md", "v2")
    error_of(c.delete(url("gone.md"), headers={"If-Match": '"1"'}), 409, "version_conflict")
    assert c.get(url("gone.md")).status_code == 200

    d = c.delete(url("gone.md"), headers={"If-Match": '"2"'})
    assert d.status_code == 204 and d.content == b""
    error_of(c.get(url("gone.md")), 404, "note_not_found")
    error_of(c.delete(url("gone.md")), 404, "note_not_found")
    assert versions_of(c, "gone.md") == [2, 1]
    assert c.get(url("gone.md", "/versions/1")).json()["markdown"] == "v1"

    purge = c.delete(url("gone.md", "/history"))
    assert purge.status_code == 204
    error_of(c.get(url("gone.md", "/versions")), 404, "note_not_found")
    error_of(c.delete(url("gone.md", "/history")), 404, "note_not_found")


def test_purging_a_live_note_is_refused(c: httpx.Client) -> None:
    put(c, "live.md", "x")
    error_of(c.delete(url("live.md", "/history")), 409, "note_is_live")
    assert c.get(url("live.md")).status_code == 200


def test_writing_a_deleted_note_revives_it_with_its_history(c: httpx.Client) -> None:
    put(c, "phoenix.md", "v1")
    c.delete(url("phoenix.md"))
    r = put(c, "phoenix.md", "v2")
    assert r.status_code in (200, 201)
    assert r.json()["changed"] is True
    assert r.json()["note"]["version"] == 2
    assert versions_of(c, "phoenix.md") == [2, 1]


def test_writing_a_deleted_note_is_a_201_create(c: httpx.Client) -> None:
    put(c, "phoenix.md", "v1")
    c.delete(url("phoenix.md"))
    assert put(c, "phoenix.md", "v2").status_code == 201


# ---------------------------------------------------------------------------- versions


def test_versions_list_read_and_restore(c: httpx.Client, live_server: Any) -> None:
    for i in range(3):
        put(c, "v.md", f"text {i + 1}")
        live_server.clock.advance(10)
    listed = c.get(url("v.md", "/versions")).json()
    assert [v["version"] for v in listed] == [3, 2, 1]
    assert set(listed[0]) == {"version", "path", "size", "sha256", "created_at"}
    assert listed[0]["path"] == "v.md"
    assert listed[0]["size"] == len("text 3")
    assert listed[0]["created_at"] > listed[2]["created_at"]

    one = c.get(url("v.md", "/versions/1"))
    assert one.status_code == 200
    assert one.json()["markdown"] == "text 1"
    assert one.json()["version"] == 1

    restored = c.post(url("v.md", "/versions/1/restore"))
    assert restored.status_code == 200
    assert restored.headers["ETag"] == '"4"'
    assert restored.json()["changed"] is True
    assert restored.json()["message"] == "restored version 1 as version 4"
    assert c.get(url("v.md")).json()["markdown"] == "text 1"

    same = c.post(url("v.md", "/versions/4/restore"))
    assert same.status_code == 200
    assert same.json()["changed"] is False
    assert "nothing changed" in same.json()["message"]
    assert versions_of(c, "v.md") == [4, 3, 2, 1]


def test_restore_with_if_match(c: httpx.Client) -> None:
    put(c, "v.md", "a")
    put(c, "v.md", "b")
    stale = c.post(url("v.md", "/versions/1/restore"), headers={"If-Match": '"1"'})
    error_of(stale, 409, "version_conflict")
    assert c.get(url("v.md")).json()["markdown"] == "b"
    ok = c.post(url("v.md", "/versions/1/restore"), headers={"If-Match": '"2"'})
    assert ok.status_code == 200 and ok.json()["note"]["version"] == 3


def test_missing_versions_and_notes_are_404(c: httpx.Client) -> None:
    put(c, "v.md", "a")
    error_of(c.get(url("v.md", "/versions/2")), 404, "version_not_found")
    error_of(c.post(url("v.md", "/versions/2/restore")), 404, "version_not_found")
    error_of(c.get(url("none.md", "/versions")), 404, "note_not_found")
    error_of(c.get(url("none.md", "/versions/1")), 404, "version_not_found")
    error_of(c.get(url("none.md", "/backlinks")), 404, "note_not_found")
    error_of(c.get(url("none.md")), 404, "note_not_found")
    error_of(c.delete(url("none.md")), 404, "note_not_found")
    assert c.get(url("v.md")).json()["version"] == 1


def test_version_numbers_out_of_range(c: httpx.Client) -> None:
    put(c, "v.md", "a")
    error_of(c.get(url("v.md", "/versions/0")), 400, "invalid_input")
    error_of(c.get(url("v.md", "/versions/99999999999999999999999")), 400, "invalid_input")
    error_of(c.post(url("v.md", "/versions/0/restore")), 400, "invalid_input")


# ---------------------------------------------------------------------------- links, search


def test_backlinks(c: httpx.Client) -> None:
    put(c, "target.md", "I am linked")
    put(c, "a.md", "[[target]]")
    put(c, "sub/b.md", "[[Target|alias]] and ![[target]]")
    put(c, "c.md", "no links")
    r = c.get(url("target.md", "/backlinks"))
    assert r.status_code == 200
    assert [n["path"] for n in r.json()] == ["a.md", "sub/b.md"]
    assert set(r.json()[0]) == {
        "id",
        "path",
        "title",
        "tags",
        "version",
        "size",
        "created_at",
        "updated_at",
    }
    c.delete(url("a.md"))
    assert [n["path"] for n in c.get(url("target.md", "/backlinks")).json()] == ["sub/b.md"]


def test_outgoing_links_name_the_notes_they_reach(c: httpx.Client) -> None:
    put(c, "deep/Far away.md", "# Far")
    put(c, "hub.md", "[[Far away#Top|there]] and ![[Nowhere]]")
    r = c.get(url("hub.md", "/links"))
    assert r.status_code == 200
    assert r.json() == [
        {
            "target": "Far away",
            "heading": "Top",
            "alias": "there",
            "embed": False,
            "kind": "wikilink",
            "path": "deep/Far away.md",
        },
        {
            "target": "Nowhere",
            "heading": None,
            "alias": None,
            "embed": True,
            "kind": "wikilink",
            "path": None,
        },
    ]
    error_of(c.get(url("gone.md", "/links")), 404, "note_not_found")


def test_search_results_shape_and_filters(c: httpx.Client) -> None:
    put(c, "work/rocket.md", "# Rocket\n\nThe rocket engine design #space\n")
    put(c, "home/garden.md", "# Garden\n\nTomatoes and rocket salad #food\n")
    put(c, "home/other.md", "nothing relevant here")
    r = c.get("/v1/search", params={"q": "rocket"})
    assert r.status_code == 200
    body = r.json()
    assert body["query"] == "rocket"
    results = body["results"]
    assert {h["path"] for h in results} == {"work/rocket.md", "home/garden.md"}
    for hit in results:
        assert set(hit) == {
            "id",
            "path",
            "title",
            "tags",
            "score",
            "snippet",
            "updated_at",
            "chunk",  # the matched passage (heading, offset, length) for semantic/hybrid hits
        }
        assert isinstance(hit["score"], float) and hit["score"] > 0
        assert "<mark>" in hit["snippet"].lower()
        assert isinstance(hit["tags"], list)
    assert results[0]["path"] == "work/rocket.md"  # title match ranks first
    assert results[0]["title"] == "Rocket"
    assert results[0]["tags"] == ["space"]
    assert [h["score"] for h in results] == sorted((h["score"] for h in results), reverse=True)

    folder = c.get("/v1/search", params={"q": "rocket", "folder": "home"}).json()["results"]
    assert [h["path"] for h in folder] == ["home/garden.md"]
    tagged = c.get("/v1/search", params={"q": "rocket", "tag": "space"}).json()["results"]
    assert [h["path"] for h in tagged] == ["work/rocket.md"]
    limited = c.get("/v1/search", params={"q": "rocket", "limit": 1}).json()["results"]
    assert len(limited) == 1
    assert c.get("/v1/search", params={"q": "zzzz"}).json()["results"] == []


def test_search_text_with_query_syntax_is_just_words(c: httpx.Client) -> None:
    put(c, "a.md", "alpha beta")
    for q in ['"alpha', "alpha AND (", "NEAR(alpha", "alpha*", "-beta", "path:alpha", "'; DROP"]:
        r = c.get("/v1/search", params={"q": q})
        assert r.status_code == 200, (q, r.text)
    assert c.get("/v1/search", params={"q": "!!!"}).json()["results"] == []


def test_search_does_not_find_deleted_or_moved_away_text(c: httpx.Client) -> None:
    put(c, "a.md", "unicorn")
    c.post(url("a.md", "/move"), json={"to": "b.md"})
    assert [h["path"] for h in c.get("/v1/search", params={"q": "unicorn"}).json()["results"]] == [
        "b.md"
    ]
    c.delete(url("b.md"))
    assert c.get("/v1/search", params={"q": "unicorn"}).json()["results"] == []


# ---------------------------------------------------------------------------- recent, tags


def test_recent_is_newest_first(c: httpx.Client, live_server: Any) -> None:
    for name in ("one", "two", "three"):
        put(c, f"{name}.md", name)
        live_server.clock.advance(60)
    put(c, "one.md", "one, edited")
    r = c.get("/v1/recent")
    assert r.status_code == 200
    assert [n["path"] for n in r.json()] == ["one.md", "three.md", "two.md"]
    assert [n["path"] for n in c.get("/v1/recent", params={"limit": 2}).json()] == [
        "one.md",
        "three.md",
    ]


def test_tags_are_counted_over_live_notes(c: httpx.Client) -> None:
    put(c, "a.md", "#alpha #beta/gamma")
    put(c, "b.md", "---\ntags: [alpha]\n---\n#Delta")
    put(c, "c.md", "#beta/gamma")
    put(c, "d.md", "#zeta")
    c.delete(url("d.md"))
    r = c.get("/v1/tags")
    assert r.status_code == 200
    assert r.json() == {"alpha": 2, "beta/gamma": 2, "Delta": 1}


# ---------------------------------------------------------------------------- sizes


def test_a_note_over_one_megabyte_is_413_with_the_limit(c: httpx.Client) -> None:
    big = "x" * (MAX_NOTE_BYTES + 1)
    for response in (
        put(c, "big.md", big),
        c.put(url("big.md"), content=big.encode(), headers={"Content-Type": "text/markdown"}),
        c.post(url("big.md", "/append"), json={"text": big}),
    ):
        error = error_of(response, 413, "note_too_large")
        assert error["type"] == "payload_too_large"
        assert str(MAX_NOTE_BYTES) in error["message"]
        assert "1 MB" in error["message"]
    error_of(c.get(url("big.md")), 404)

    # Exactly the limit fits; one more byte through append does not.
    fits = "é" * (MAX_NOTE_BYTES // 2)
    assert put(c, "fits.md", fits).status_code == 201
    error_of(c.post(url("fits.md", "/append"), json={"text": "x"}), 413, "note_too_large")
    assert c.get(url("fits.md")).json()["version"] == 1


def test_a_huge_request_body_is_refused_early(c: httpx.Client) -> None:
    huge = b"x" * (9 * MAX_NOTE_BYTES)
    r = c.put(url("huge.md"), content=huge, headers={"Content-Type": "text/markdown"})
    error = error_of(r, 413, "request_too_large")
    assert str(MAX_NOTE_BYTES) in error["message"]
    error_of(c.get(url("huge.md")), 404)


# ---------------------------------------------------------------------------- import, export


def _zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return buf.getvalue()


def test_import_zip_body_then_export(c: httpx.Client) -> None:
    put(c, "kept.md", "already here")
    archive = _zip(
        {"Vault/a.md": "alpha [[b]]", "Vault/sub/b.md": "beta #t", "Vault/kept.md": "new"}
    )
    r = c.post("/v1/import", content=archive, headers={"Content-Type": "application/zip"})
    assert r.status_code == 200, r.text
    report = r.json()
    assert set(report) == {
        "created",
        "updated",
        "unchanged",
        "skipped",
        "skipped_files",
        "files_created",  # attachments and .obsidian/ (ADR 0043)
        "files_updated",
        "files_unchanged",
        "config_files",
    }
    assert report["created"] + report["updated"] >= 2

    paths = {n["path"] for n in c.get("/v1/notes").json()["notes"]}
    assert "kept.md" in paths
    exported = c.get("/v1/export")
    assert exported.status_code == 200
    assert exported.headers["content-type"] == "application/zip"
    assert "attachment" in exported.headers["content-disposition"]
    assert int(exported.headers["X-Memvault-Notes"]) == len(paths)
    with zipfile.ZipFile(io.BytesIO(exported.content)) as zf:
        names = set(zf.namelist())
        assert {p for p in names if p.endswith(".md")} >= paths


def test_import_of_a_non_zip_is_refused_and_changes_nothing(c: httpx.Client) -> None:
    put(c, "a.md", "a")
    r = c.post("/v1/import", content=b"not a zip", headers={"Content-Type": "application/zip"})
    assert 400 <= r.status_code < 500
    error_of(r, r.status_code)
    assert [n["path"] for n in c.get("/v1/notes").json()["notes"]] == ["a.md"]


def test_restoring_a_version_of_a_deleted_note_brings_it_back(c: httpx.Client) -> None:
    put(c, "lazarus.md", "first words")
    put(c, "lazarus.md", "last words")
    assert c.delete(url("lazarus.md")).status_code == 204
    r = c.post(url("lazarus.md", "/versions/1/restore"))
    assert r.status_code == 200, r.text
    assert r.json()["changed"] is True
    assert r.json()["note"]["version"] == 3
    assert c.get(url("lazarus.md")).json()["markdown"] == "first words"
    assert [n["path"] for n in c.get("/v1/notes").json()["notes"]] == ["lazarus.md"]
    hits = c.get("/v1/search", params={"q": "first"}).json()["results"]
    assert [h["path"] for h in hits] == ["lazarus.md"]
