"""The `memvault` CLI, end to end: the command line against a live server.

Every command runs with `--url` and the key in MEMVAULT_API_KEY, as a shell user or an
agent harness would run it: in process, on the app object (see tests.cli.helpers), or,
where the process matters (bytes through a real pipe, the installed script), as the
real console script (`.venv/bin/memvault`). The server's side is checked through the
REST API directly.

The CLI is a client of the REST API, whose behaviour on each backend is the contract
suite's: these tests run on the embedded (SQLite) backend, and one test per command
group (notes, transfer, keys) also on AWS, so that no surface loses its AWS coverage.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperGroup, TyperOption

from memvault.cli.commands import Command, Group
from memvault.cli.main import app
from memvault.domain.budgets import Bucket
from memvault.domain.models import Limits
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from tests.cli.helpers import (
    Result,
    clean_env,
    invoke_memvault,
    run_memvault,
    run_memvault_on_a_terminal,
)
from tests.support.backends import BACKENDS
from tests.support.clock import FakeClock
from tests.support.jobs import job_server
from tests.support.servers import LiveServer, free_port

ADMIN = "<admin key>"  # sentinel: run with the live server's admin key
NOTE_FIELDS = {"id", "title", "path", "tags", "body", "score"}
KEY_RE = re.compile(r"mvk_[A-Za-z0-9_-]{20,}")
# The AWS smoke of a command group: this test on both backends.
ON_BOTH_BACKENDS = pytest.mark.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    """SQLite unless a test is marked ON_BOTH_BACKENDS."""
    return str(request.param)


class Cli:
    """Runs `memvault ARGS --url <live server>` with MEMVAULT_API_KEY set.

    In process, or with ``pipe=True`` as the real console script, stdin and stdout pipes.
    """

    def __init__(self, server: LiveServer, cwd: Path) -> None:
        self.server = server
        self.cwd = cwd

    def __call__(
        self,
        *args: str,
        key: str | None = ADMIN,
        url: str | None = None,
        stdin: bytes | str | None = None,
        pipe: bool = False,
    ) -> Result:
        env = clean_env()
        if key is not None:
            env["MEMVAULT_API_KEY"] = self.server.admin_key if key == ADMIN else key
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        run = run_memvault if pipe else invoke_memvault
        # --url goes last among the options: before a "--", after which all is text.
        end = args.index("--") if "--" in args else len(args)
        line = [*args[:end], "--url", url or self.server.url, *args[end:]]
        return run(*line, env=env, cwd=self.cwd, stdin=data)

    def ok(self, *args: str, **kwargs: Any) -> Result:
        result = self(*args, **kwargs)
        assert result.code == 0, str(result)
        return result

    def json(self, *args: str, **kwargs: Any) -> Any:
        result = self.ok(*args, "--json", **kwargs)
        return json.loads(result.stdout)

    # The server's view, straight from the REST API.
    def note(self, path: str) -> dict[str, Any]:
        with self.server.client() as http:
            response = http.get(f"/v1/notes/{path}")
            assert response.status_code == 200, response.text
            body: dict[str, Any] = response.json()
            return body

    def put(self, path: str, markdown: str) -> None:
        with self.server.client() as http:
            response = http.put(f"/v1/notes/{path}", json={"markdown": markdown})
            assert response.status_code in (200, 201), response.text


@pytest.fixture
def cli(live_server: LiveServer, tmp_path: Path) -> Cli:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return Cli(live_server, cwd)


def failed(result: Result, code: int = 2) -> str:
    """Assert a clean failure: the exit code, nothing on stdout, no traceback."""
    assert result.code == code, str(result)
    assert result.stdout == "", str(result)
    assert "Traceback" not in result.stderr, str(result)
    lines = result.stderr.splitlines()
    assert any(line.startswith("error ") for line in lines) or "Usage:" in result.stderr, str(
        result
    )
    return result.stderr


def today_choices() -> set[str]:
    return {dt.date.today().isoformat()}


# ---------------------------------------------------------------------- write / read
def test_write_from_stdin_then_read_is_byte_for_byte(cli: Cli) -> None:
    markdown = (
        "---\ntitle: Café plan\ntags: [launch]\n---\r\n# Plan ünïcode\r\n\r\nShip it. #beta\n"
    )
    # Through real pipes: the bytes in and out of the console script are the note's.
    result = cli.ok("write", "projects/plan.md", stdin=markdown.encode("utf-8"), pipe=True)
    assert result.stdout.strip() == "projects/plan.md: created"
    assert cli.note("projects/plan.md")["markdown"] == markdown

    read = cli.ok("read", "projects/plan.md", pipe=True)
    assert read.raw == markdown.encode("utf-8")
    assert cli.ok("read", "projects/plan.md").raw == markdown.encode("utf-8")  # in process

    again = cli.ok("write", "projects/plan.md", stdin=markdown)
    assert "unchanged" in again.stdout

    note = cli.json("read", "projects/plan.md")
    assert set(note) >= NOTE_FIELDS
    assert note["title"] == "Café plan"
    assert note["path"] == "projects/plan.md"
    assert set(note["tags"]) == {"launch", "beta"}
    assert note["body"].startswith("# Plan ünïcode")  # the frontmatter is not in the body
    assert "title:" not in note["body"]
    assert note["score"] is None


def test_write_from_argument_and_from_file_with_if_match(cli: Cli, tmp_path: Path) -> None:
    cli.ok("write", "notes/idea.md", "# Idea\n")
    source = tmp_path / "idea.md"
    source.write_bytes("# Idea\n\nwith détails\r\n".encode())
    saved = cli.ok("write", "notes/idea.md", "--file", str(source), "--if-match", "1")
    assert saved.stdout.strip() == "notes/idea.md: saved as version 2"
    assert cli.note("notes/idea.md")["markdown"] == "# Idea\n\nwith détails\r\n"

    written = cli.json("write", "notes/other.md", "-f", str(source))
    assert written["path"] == "notes/other.md" and written["changed"] is True

    stale = cli("write", "notes/idea.md", "# stale\n", "--if-match", "1")
    assert "version_conflict (409)" in failed(stale)
    assert cli.note("notes/idea.md")["version"] == 2


def test_write_failures_are_clear(cli: Cli, tmp_path: Path) -> None:
    assert "invalid_path (400)" in failed(cli("write", "../escape.md", "x"))
    assert "must end in '.md'" in failed(cli("write", "no-suffix", "x"))
    assert "does not exist" in failed(cli("write", "a.md", "--file", "nope.md"))
    (cli.cwd / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    assert "not UTF-8" in failed(cli("write", "a.md", "--file", "latin1.md"))
    assert "not both" in failed(cli("write", "a.md", "text", "--file", "latin1.md"))
    assert "not UTF-8" in failed(cli("write", "a.md", stdin=b"\xff\xfe"))
    with cli.server.client() as http:
        assert http.get("/v1/notes").json()["notes"] == []


def test_read_a_missing_note_fails_with_the_error_code(cli: Cli) -> None:
    message = failed(cli("read", "nowhere/missing.md"))
    assert "note_not_found (404)" in message and "nowhere/missing.md" in message


def test_read_adds_a_final_newline_on_a_terminal_only(cli: Cli) -> None:
    notes = {
        "nl/none.md": "# No final newline",
        "nl/one.md": "# Has one\n",
        "nl/crlf.md": "a\r\nb\r\n",
        "nl/empty.md": "",
    }
    for path, markdown in notes.items():
        cli.put(path, markdown)
    env = clean_env(MEMVAULT_API_KEY=cli.server.admin_key)
    for path, markdown in notes.items():
        exact = markdown.encode("utf-8")
        # Through a pipe (and in process): the note's bytes, nothing added.
        assert cli.ok("read", path, pipe=True).raw == exact
        assert cli.ok("read", path).raw == exact
        # On a terminal: a newline where the note has none, so the prompt is not glued on.
        shown = run_memvault_on_a_terminal(
            "read", path, "--url", cli.server.url, env=env, cwd=cli.cwd
        )
        assert shown.code == 0, str(shown)
        assert shown.raw == (exact if exact.endswith(b"\n") or not exact else exact + b"\n")


# ---------------------------------------------------------------------- text starting with "-"
FRONTMATTER = "---\ntags: [x]\n---\n# T\n"


def test_markdown_starting_with_a_dash_is_text_not_an_option(cli: Cli) -> None:
    assert cli.ok("write", "dash/a.md", FRONTMATTER).stdout.strip() == "dash/a.md: created"
    assert cli.note("dash/a.md")["markdown"] == FRONTMATTER
    assert cli.note("dash/a.md")["tags"] == ["x"]
    # After "--", as any command line allows; options may also follow the text.
    cli.ok("write", "dash/b.md", "--", FRONTMATTER)
    assert cli.note("dash/b.md")["markdown"] == FRONTMATTER
    shaped = cli.json("write", "dash/c.md", FRONTMATTER)
    assert shaped["tags"] == ["x"] and shaped["body"] == "# T\n"

    cli.ok("append", "dash/a.md", "- a list item")
    cli.ok("append", "dash/a.md", "-- a signature", "--json")
    assert cli.note("dash/a.md")["markdown"] == FRONTMATTER + "- a list item\n-- a signature"
    cli.ok("write", "dash/d.md", "--", "-x")  # one word like an option: after "--"
    assert cli.note("dash/d.md")["markdown"] == "-x"

    remembered = cli.json("remember", "Dashes", "- first\n- second")
    assert cli.note(remembered["path"])["markdown"] == "# Dashes\n\n- first\n- second\n"
    day = cli.json("journal", "-3 °C at the door")
    assert cli.note(day["path"])["markdown"].endswith(" -3 °C at the door\n")

    # What is spelled like an option still is one: a typo is an error, not a note.
    assert "No such option" in failed(cli("write", "dash/typo.md", "--jsn"))
    assert "No such option" in failed(cli("write", "dash/typo.md", "-x"))
    with cli.server.client() as http:
        assert http.get("/v1/notes/dash/typo.md").status_code == 404


# ---------------------------------------------------------------------- append
def test_append_from_argument_and_stdin_and_to_a_missing_note(cli: Cli) -> None:
    cli.ok("write", "log.md", "# Log")
    first = cli.ok("append", "log.md", "first line")
    assert first.stdout.strip() == "log.md: appended; the note is at version 2"
    cli.ok("append", "log.md", stdin="second line\n")
    assert cli.note("log.md")["markdown"] == "# Log\nfirst line\nsecond line\n"

    created = cli.json("append", "new/fresh.md", "hello")
    assert created["version"] == 1 and created["body"] == "hello"
    assert cli.note("new/fresh.md")["markdown"] == "hello"

    assert "nothing to append" in failed(cli("append", "log.md", stdin=""))
    assert "nothing to append" in failed(cli("append", "log.md", "   "))
    assert "invalid_path" in failed(cli("append", "bad\\path.md", "x"))


def test_write_and_append_json_print_the_note_shape(cli: Cli) -> None:
    markdown = "---\ntitle: Shape\ntags: [t]\n---\n# Heading\n\nbody #more\n"
    written = cli.json("write", "shape/a.md", markdown)
    assert set(written) >= NOTE_FIELDS
    note = cli.note("shape/a.md")
    assert written["id"] == note["id"] and written["path"] == "shape/a.md"
    assert written["title"] == "Shape" and set(written["tags"]) == {"t", "more"}
    assert written["body"] == "# Heading\n\nbody #more\n" and written["score"] is None
    assert (written["version"], written["changed"]) == (1, True)
    assert written["updated_at"] == note["updated_at"]

    again = cli.json("write", "shape/a.md", markdown)
    assert (again["version"], again["changed"], again["body"]) == (1, False, written["body"])

    appended = cli.json("append", "shape/a.md", "one more line")
    assert set(appended) >= NOTE_FIELDS and appended["id"] == note["id"]
    assert (appended["version"], appended["changed"]) == (2, True)
    assert appended["body"] == "# Heading\n\nbody #more\none more line"
    assert appended["score"] is None and set(appended["tags"]) == {"t", "more"}
    # The shape of search --json and recent --json, field for field.
    [recent] = cli.json("recent", "--limit", "1")
    assert {k: appended[k] for k in recent} == recent


# ---------------------------------------------------------------------- search / recent
def seed_search(cli: Cli) -> None:
    cli.put("fruit/apples.md", "---\ntags: [fruit]\n---\n# Apples\n\nApples apples apples.\n")
    cli.put("fruit/pears.md", "# Pears\n\nPears, and one apple orchard apples.\n")
    cli.put("other/cars.md", "# Cars\n\nNothing about fruit here.\n")
    cli.put("other/markup.md", "# [/] odd [red] title\n\nweird [/bold] apples </mark> text\n")


def test_search_table_shows_scores_paths_and_titles(cli: Cli) -> None:
    seed_search(cli)
    table = cli.ok("search", "apples").stdout
    for path in ("fruit/apples.md", "fruit/pears.md", "other/markup.md"):
        assert path in table
    assert "other/cars.md" not in table
    best = cli.server.client().get("/v1/search", params={"q": "apples"}).json()["results"][0]
    assert f"{best['score']:.2f}" in table  # the server's 0-1 score, as REST reports it
    assert "[/] odd [red] title" in table  # note text is never read as console markup

    assert cli.ok("search", "zzzunfindable").stdout.strip() == "no matches"


@ON_BOTH_BACKENDS
def test_search_json_is_the_agent_note_shape(cli: Cli) -> None:
    seed_search(cli)
    hits = cli.json("search", "apples")
    assert [h["path"] for h in hits][:1] == ["fruit/apples.md"]
    assert {h["path"] for h in hits} == {"fruit/apples.md", "fruit/pears.md", "other/markup.md"}
    for hit in hits:
        assert set(hit) >= NOTE_FIELDS
        assert isinstance(hit["score"], float) and 0.0 <= hit["score"] <= 1.0
        assert hit["id"] == cli.note(hit["path"])["id"]
        assert "---" not in hit["body"]
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    rest = cli.server.client().get("/v1/search", params={"q": "apples"}).json()["results"]
    assert [(h["path"], h["score"]) for h in hits] == [(h["path"], h["score"]) for h in rest]
    best = hits[0]
    assert best["title"] == "Apples" and best["tags"] == ["fruit"]
    assert best["body"] == "# Apples\n\nApples apples apples.\n"

    assert cli.json("search", "zzzunfindable") == []
    filtered = cli.json("search", "apples", "--folder", "fruit", "--tag", "fruit")
    assert [h["path"] for h in filtered] == ["fruit/apples.md"]
    # The note's own score, not one relative to the page's best.
    assert filtered[0]["score"] == hits[0]["score"]
    assert len(cli.json("search", "apples", "--limit", "1")) == 1


def test_search_failures(cli: Cli) -> None:
    assert "empty" in failed(cli("search", "   "))
    failed(cli("search", "x", "--limit", "0"))  # refused by the option's range
    assert "invalid_path" in failed(cli("search", "x", "--folder", "../up"))


def test_recent_lists_newest_first(cli: Cli) -> None:
    for name in ("one", "two", "three"):
        cli.put(f"r/{name}.md", f"# Note {name}\n\nbody {name}\n")
        cli.server.clock.advance(60)
    notes = cli.json("recent", "--limit", "2")
    assert [n["path"] for n in notes] == ["r/three.md", "r/two.md"]
    for note in notes:
        assert set(note) >= NOTE_FIELDS
        assert note["score"] is None
    assert notes[0]["title"] == "Note three" and notes[0]["body"] == "# Note three\n\nbody three\n"

    lines = cli.ok("recent").stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["r/three.md", "r/two.md", "r/one.md"]
    failed(cli("recent", "--limit", "0"))


def test_recent_on_an_empty_vault(cli: Cli) -> None:
    assert cli.json("recent") == []
    assert cli.ok("recent").stdout.strip() == "the vault is empty"


# ---------------------------------------------------------------------- remember
def test_remember_files_facts_and_decisions(cli: Cli) -> None:
    fact = cli.ok("remember", "Kettle is 1.7 litres", "Measured in May.")
    assert fact.stdout.strip() == "facts/Kettle is 1.7 litres.md: created"
    assert cli.note("facts/Kettle is 1.7 litres.md")["markdown"] == (
        "# Kettle is 1.7 litres\n\nMeasured in May.\n"
    )

    decision = cli.json("remember", "Postgres over MySQL", "--decision", stdin="JSONB wins.\n")
    assert decision["path"] == "decisions/Postgres over MySQL.md"
    assert decision["title"] == "Postgres over MySQL"
    assert set(decision) >= NOTE_FIELDS
    assert cli.note(decision["path"])["markdown"] == "# Postgres over MySQL\n\nJSONB wins.\n"

    bare = cli.ok("remember", "No body")
    assert cli.note("facts/No body.md")["markdown"] == "# No body\n"
    assert "created" in bare.stdout

    odd = cli.json("remember", "What is A/B: a test?")
    assert odd["path"] == "facts/What is A-B- a test.md"
    assert odd["title"] == "What is A/B: a test?"


def test_remember_refuses_to_overwrite(cli: Cli) -> None:
    cli.ok("remember", "Same title", "original")
    message = failed(cli("remember", "Same title", "replacement"))
    assert "facts/Same title.md already exists" in message
    assert "never overwrites" in message
    note = cli.note("facts/Same title.md")
    assert note["version"] == 1 and "original" in note["markdown"]

    # Paths are case-insensitive: a case-only twin is the same note.
    assert "already exists" in failed(cli("remember", "same TITLE", "twin"))
    assert "no characters usable" in failed(cli("remember", "///"))


def test_remember_with_a_template(cli: Cli) -> None:
    cli.put(
        "templates/meeting.md",
        "---\ntitle: {{title}}\ndate: {{date}}\n---\n# {{ title }}\n\nHeld on {{date}}.\n"
        "{{attendees}}\n",
    )
    before = dt.date.today().isoformat()
    result = cli.ok("remember", "Standup", "--template", "meeting")
    after = dt.date.today().isoformat()
    assert result.stdout.strip() == "facts/Standup.md: created"
    markdown = cli.note("facts/Standup.md")["markdown"]
    day = before if before in markdown else after
    assert markdown == (
        f"---\ntitle: Standup\ndate: {day}\n---\n# Standup\n\nHeld on {day}.\n{{{{attendees}}}}\n"
    )

    with_body = cli.json(
        "remember", "Retro", "Went well.", "--template", "templates/meeting.md", "--decision"
    )
    assert with_body["path"] == "decisions/Retro.md"
    assert cli.note("decisions/Retro.md")["markdown"].endswith(".\n{{attendees}}\n\nWent well.\n")

    missing = failed(cli("remember", "Nope", "--template", "absent"))
    assert "no template 'absent'" in missing and "templates/absent.md" in missing
    with cli.server.client() as http:
        assert http.get("/v1/notes/facts/Nope.md").status_code == 404

    assert "already exists" in failed(cli("remember", "Standup", "--template", "meeting"))


def test_a_template_title_never_breaks_the_frontmatter(cli: Cli) -> None:
    cli.put("templates/adr.md", "---\ntitle: {{title}}\ntags: [adr]\n---\n# {{title}}\n")
    result = cli.json("remember", "Decision: use Postgres #1", "--template", "adr", "--decision")
    note = cli.note(result["path"])
    assert result["path"] == "decisions/Decision- use Postgres -1.md"
    assert note["frontmatter_error"] is None
    assert note["frontmatter"]["title"] == "Decision: use Postgres #1"
    assert note["title"] == "Decision: use Postgres #1" and note["tags"] == ["adr"]
    assert note["markdown"].endswith("---\n# Decision: use Postgres #1\n")


# ---------------------------------------------------------------------- journal
def test_journal_creates_todays_note_then_appends(cli: Cli) -> None:
    first = cli.ok("journal", "shipped the importer")
    day = first.stdout.split(":", 1)[0].removeprefix("daily/").removesuffix(".md")
    assert day in today_choices() | {(dt.date.today() - dt.timedelta(days=1)).isoformat()}
    path = f"daily/{day}.md"
    assert first.stdout.strip() == f"{path}: created"

    second = cli.json("journal", "  fixed   the\nexporter ")
    assert second["path"] == path and set(second) >= NOTE_FIELDS

    markdown = cli.note(path)["markdown"]
    lines = markdown.splitlines()
    assert lines[:2] == [f"# {day}", ""]
    assert len(lines) == 4
    assert re.fullmatch(r"- \d\d:\d\d shipped the importer", lines[2])
    assert re.fullmatch(r"- \d\d:\d\d fixed the exporter", lines[3])
    assert markdown.endswith("\n")
    assert cli.note(path)["version"] == 2

    assert "empty" in failed(cli("journal", "   "))


# ---------------------------------------------------------------------- import / export
VAULT = {
    "notes/one.md": b"# One\n\nSee [[two]].\n",
    "two.md": "---\ntags: [x]\n---\n# Two ünïcode\n".encode(),
}


IMAGE = b"\x89PNG not markdown"


def make_vault_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in VAULT.items():
            zf.writestr(name, data)
        zf.writestr("attachments/image.png", IMAGE)
    return path


def zip_contents(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        return {info.filename: zf.read(info) for info in zf.infolist()}


@pytest.fixture
def job_cli(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Cli]:
    """The CLI against a server whose job links answer (a moto server on AWS, S3's
    events delivered to the job function): import and export go through the job API."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for server in job_server(tmp_path, backend, clock, courier=True):
        yield Cli(server, cwd)


@ON_BOTH_BACKENDS
def test_import_then_export_round_trips(job_cli: Cli, tmp_path: Path) -> None:
    cli = job_cli
    archive = make_vault_zip(tmp_path / "vault.zip")
    imported = cli.ok("import", str(archive))
    assert imported.stdout.splitlines() == [
        "created 2, updated 0, unchanged 0, skipped 0",
        "files (attachments and .obsidian/): created 1, updated 0, unchanged 0",
    ]
    # A bar per step, on stderr (stdout is the report alone): each one finished.
    for step in ("uploaded", "parsed", "committed", "indexed"):
        assert step in imported.stderr, imported.stderr
    assert "2/2 notes" in imported.stderr
    assert "━" not in imported.stdout
    assert cli.note("two.md")["markdown"] == VAULT["two.md"].decode()

    target = tmp_path / "backup.zip"
    exported = cli.ok("export", str(target))
    assert exported.stdout.strip() == f"exported 2 notes to {target}"
    assert "downloading" in exported.stderr and "downloading" not in exported.stdout
    assert zip_contents(target.read_bytes()) == VAULT | {"attachments/image.png": IMAGE}
    assert not target.with_name("backup.zip.part").exists()

    again = cli.json("import", str(target))
    assert again == {
        "created": 0,
        "updated": 0,
        "unchanged": 2,
        "skipped": 0,
        "skipped_files": [],
        "files_created": 0,
        "files_updated": 0,
        "files_unchanged": 1,
        "config_files": 0,
    }


def test_export_defaults_to_a_dated_file_in_a_folder(cli: Cli) -> None:
    cli.put("a.md", "# A\n")
    result = cli.ok("export")
    written = sorted(cli.cwd.glob("memvault-*.zip"))
    assert len(written) == 1 and written[0].name[len("memvault-") : -4] in today_choices() | {
        (dt.date.today() - dt.timedelta(days=1)).isoformat()
    }
    assert zip_contents(written[0].read_bytes()) == {"a.md": b"# A\n"}
    assert result.stdout.startswith("exported 1 note to ")

    folder = cli.cwd / "out"
    folder.mkdir()
    cli.ok("export", str(folder))
    assert [p.name for p in folder.iterdir()] == [written[0].name]


def test_import_and_export_failures(cli: Cli, tmp_path: Path) -> None:
    not_zip = tmp_path / "notes.zip"
    not_zip.write_bytes(b"this is not a zip archive")
    assert "not_a_zip (422)" in failed(cli("import", str(not_zip)))
    assert "does not exist" in failed(cli("import", "missing.zip"))
    with cli.server.client() as http:
        assert http.get("/v1/notes").json()["notes"] == []

    bad_target = tmp_path / "no" / "such" / "dir" / "x.zip"
    assert "cannot write" in failed(cli("export", str(bad_target)))

    down = f"http://127.0.0.1:{free_port()}"
    target = tmp_path / "down.zip"
    assert "cannot reach memvault" in failed(cli("export", str(target), url=down), code=1)
    assert not target.exists() and not target.with_name("down.zip.part").exists()


def test_import_refused_mid_stream_exits_2_with_the_error_code(cli: Cli, tmp_path: Path) -> None:
    cli.put("one.md", "# One\n")
    archive = make_vault_zip(tmp_path / "vault.zip")
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("zz/latin1.md", "caf\xe9".encode("latin-1"))  # read last: not UTF-8
    message = failed(cli("import", str(archive)))
    assert "invalid_utf8 (422)" in message and "nothing was changed" in message
    assert "parsed" in message or "parsing" in message  # the server's bars were shown
    assert "committed" not in message
    with cli.server.client() as http:
        assert [n["path"] for n in http.get("/v1/notes").json()["notes"]] == ["one.md"]
    assert "invalid_utf8 (422)" in failed(cli("import", str(archive), "--json"))


def test_import_that_cannot_fit_is_refused_before_it_is_parsed(cli: Cli, tmp_path: Path) -> None:
    cli.put("one.md", "# One\n")
    cli.server.services.accounts.set_limits(LOCAL_ACCOUNT_ID, Limits(max_notes=1))
    message = failed(cli("import", str(make_vault_zip(tmp_path / "vault.zip"))))
    assert "vault_note_limit (413)" in message and "nothing was changed" in message
    assert "parsed" not in message and "parsing" not in message


def test_import_over_budget_exits_1(cli: Cli, tmp_path: Path) -> None:
    budgets = cli.server.services.vault.budgets
    budgets.charge(LOCAL_ACCOUNT_ID, Bucket.WRITES, cost=cli.server.services.settings.budget_burst)
    message = failed(cli("import", str(make_vault_zip(tmp_path / "v.zip"))), code=1)
    assert "writes_budget_exhausted" in message and "retry" in message


# ---------------------------------------------------------------------- keys
@ON_BOTH_BACKENDS
def test_keys_create_list_toggle_revoke(cli: Cli) -> None:
    created = cli.json("keys", "create", "ci-bot", "--recall", "--tools")
    assert KEY_RE.fullmatch(created["secret"])
    assert (created["name"], created["recall"], created["tools"], created["mcp"]) == (
        "ci-bot",
        True,
        True,
        False,
    )
    assert created["admin"] is False and created["revoked_at"] is None
    bot_id, bot_key = created["id"], created["secret"]

    # The new key works for notes but cannot manage keys.
    cli.ok("write", "bot.md", "# from the bot", key=bot_key)
    assert "admin_required (403)" in failed(cli("keys", "list", key=bot_key))

    table = cli.ok("keys", "create", "[b]human")
    secrets = KEY_RE.findall(table.stdout)
    assert len(secrets) == 1 and "[b]human" in table.stdout and "shown this once" in table.stdout
    human_id = table.stdout.split()[1]

    listed = cli.json("keys", "list")
    by_id = {k["id"]: k for k in listed}
    assert set(by_id) >= {bot_id, human_id}
    assert all("secret" not in k for k in listed)
    assert sum(k["admin"] for k in listed) == 1
    listing = cli.ok("keys", "list").stdout
    for key_id in (bot_id, human_id):
        assert key_id in listing
    assert "ci-bot" in listing and "[b]human" in listing

    toggled = cli.json("keys", "toggle", bot_id, "--mcp", "on", "--recall", "off")
    assert (toggled["recall"], toggled["tools"], toggled["mcp"]) == (False, True, True)
    line = cli.ok("keys", "toggle", bot_id, "--tools", "off").stdout.strip()
    assert line == f"{bot_id} (ci-bot): recall off, tools off, mcp on"

    revoked = cli.ok("keys", "revoke", bot_id)
    assert revoked.stdout.strip() == f"revoked {bot_id} (ci-bot)"
    assert "revoked_api_key (401)" in failed(cli("read", "bot.md", key=bot_key))
    assert cli.json("keys", "revoke", human_id)["revoked_at"] is not None
    states = {k["id"]: k["revoked_at"] for k in cli.json("keys", "list")}
    assert states[bot_id] is not None and states[human_id] is not None


def test_keys_failures(cli: Cli) -> None:
    assert "nothing to change" in failed(cli("keys", "toggle", "abc"))
    assert "say on or off" in failed(cli("keys", "toggle", "abc", "--mcp", "maybe"))
    assert "key_not_found (404)" in failed(cli("keys", "toggle", "abc", "--mcp", "on"))
    assert "key_not_found (404)" in failed(cli("keys", "revoke", "abc"))
    assert "the key name is empty" in failed(cli("keys", "create", "   "))

    # Revoking the very key in use needs --yes; the account's last admin key cannot be
    # revoked at all, so admin keys rotate: create a second one, then revoke the first.
    admin_id = next(k["id"] for k in cli.json("keys", "list") if k["admin"])
    assert "--yes" in failed(cli("keys", "revoke", admin_id))
    assert "last_admin_key (409)" in failed(cli("keys", "revoke", admin_id, "--yes"))
    second = cli.json("keys", "create", "second admin", "--admin")
    assert second["admin"] is True
    cli.ok("keys", "revoke", admin_id, "--yes")
    assert "revoked_api_key (401)" in failed(cli("keys", "list"))


# ---------------------------------------------------------------------- errors
def test_no_key_is_a_usage_error(cli: Cli) -> None:
    for args in (("read", "a.md"), ("search", "x"), ("keys", "list"), ("journal", "x")):
        message = failed(cli(*args, key=None))
        assert "no API key" in message and "MEMVAULT_API_KEY" in message


def test_a_bad_key_names_the_error_code(cli: Cli) -> None:
    message = failed(cli("recent", key="mvk_not-a-real-key"))
    assert "invalid_api_key (401)" in message and "MEMVAULT_API_KEY" in message
    # --key overrides the environment.
    cli.ok("recent", "--key", cli.server.admin_key, key="mvk_not-a-real-key")


def test_an_unreachable_server_exits_1(cli: Cli) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    for args in (("read", "a.md"), ("search", "x", "--json"), ("write", "a.md", "x")):
        message = failed(cli(*args, url=down), code=1)
        assert "cannot reach memvault" in message and down in message


def test_a_bad_url_is_a_usage_error(cli: Cli) -> None:
    host = cli.server.url.removeprefix("http://")
    assert "must start with http://" in failed(cli("recent", url=host))
    assert "route_not_found (404)" in failed(cli("recent", url=cli.server.url + "/nope"))


def test_a_spent_budget_exits_1_with_a_retry_hint(cli: Cli) -> None:
    budgets = cli.server.services.vault.budgets
    budgets.charge(LOCAL_ACCOUNT_ID, Bucket.WRITES, cost=cli.server.services.settings.budget_burst)
    message = failed(cli("write", "a.md", "x"), code=1)
    assert "writes_budget_exhausted" in message and "retry in 1 s" in message


def test_version_and_help(tmp_path: Path) -> None:
    # The installed console script itself runs (every other test here runs in process).
    result = run_memvault("--version", env=clean_env(), cwd=tmp_path)
    assert result.code == 0 and re.fullmatch(r"memvault \d+\.\d+\.\d+\n", result.stdout)
    in_process = invoke_memvault("--version", env=clean_env(), cwd=tmp_path)
    assert (in_process.code, in_process.raw) == (0, result.raw)
    help_text = invoke_memvault("--help", env=clean_env(), cwd=tmp_path).stdout
    for command in ("serve", "search", "remember", "journal", "import", "export", "keys"):
        assert command in help_text


def command_paths() -> list[tuple[str, ...]]:
    """Every command line the app has: the app itself, each group and each command."""
    found: list[tuple[str, ...]] = [()]

    def walk(group: TyperGroup, prefix: tuple[str, ...]) -> None:
        for name, command in group.commands.items():
            found.append((*prefix, name))
            if isinstance(command, TyperGroup):
                walk(command, (*prefix, name))

    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    walk(root, ())
    return found


def test_help_shows_flags_without_a_value(tmp_path: Path) -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, Group)
    paths = command_paths()
    assert ("keys", "create") in paths and ("import",) in paths and len(paths) > 20
    env = clean_env(COLUMNS="200")
    for path in paths:
        result = invoke_memvault(*path, "--help", env=env, cwd=tmp_path)
        assert result.code == 0, str(result)
        assert "<bool>" not in result.stdout, f"memvault {' '.join(path)} --help:\n{result.stdout}"
        assert "--help" in result.stdout
    # Every command is built on the CLI's own classes (so the next one is too).
    for path in paths[1:]:
        command = root
        for name in path:
            assert isinstance(command, TyperGroup)
            command = command.commands[name]
        assert isinstance(command, Group | Command), (path, type(command))
    flags = [
        p.opts[0]
        for p in root.commands["keys"].commands["create"].params
        if isinstance(p, TyperOption) and p.is_flag
    ]
    assert flags == ["--recall", "--tools", "--mcp", "--admin", "--no-vault", "--json"]
    create = invoke_memvault("keys", "create", "--help", env=env, cwd=tmp_path).stdout
    for flag in flags:
        line = next(ln for ln in create.splitlines() if f" {flag} " in ln)
        assert "<" not in line, line  # no value of any kind


def test_counts_are_singular_for_one(cli: Cli) -> None:
    cli.put("only.md", "# Only\n")
    exported = cli.ok("export", str(cli.cwd / "one.zip"))
    assert exported.stdout.strip() == f"exported 1 note to {cli.cwd / 'one.zip'}"
    key_id = cli.json("keys", "create", "solo")["id"]
    line = cli.ok("keys", "toggle", key_id, "--recall-notes", "1").stdout.strip()
    assert "; recall 1 note within 2000 tokens," in line
    reindexed = invoke_memvault(
        "reindex",
        env=clean_env(MEMVAULT_DATA_DIR=str(cli.server.services.settings.data_dir)),
        cwd=cli.cwd,
    )
    assert reindexed.stdout.strip() == "reindexed 1 note of account local"


# ---------------------------------------------------------------------- reindex
def test_reindex_rebuilds_the_local_index(cli: Cli, tmp_path: Path) -> None:
    if cli.server.services.settings.backend != "sqlite":
        pytest.skip("reindex rebuilds the embedded (SQLite) backend's index")
    seed_search(cli)
    data_dir = cli.server.services.settings.data_dir
    env = clean_env(MEMVAULT_DATA_DIR=str(data_dir))
    cli.server.services.index.clear(LOCAL_ACCOUNT_ID)
    # The text index is empty (vectors would still find the notes by meaning).
    assert cli.json("search", "apples", "--mode", "keyword") == []
    result = invoke_memvault("reindex", env=env, cwd=cli.cwd)
    assert result.code == 0, str(result)
    assert result.stdout.strip() == "reindexed 4 notes of account local"
    assert len(cli.json("search", "apples")) == 3

    empty = invoke_memvault(
        "reindex", env=clean_env(MEMVAULT_DATA_DIR=str(tmp_path / "none")), cwd=cli.cwd
    )
    assert "no vault in" in failed(empty, code=1)


def test_reindex_vectors_re_embeds_with_the_configured_model(cli: Cli) -> None:
    if cli.server.services.settings.backend != "sqlite":
        pytest.skip("reindex rebuilds the embedded (SQLite) backend's index")
    seed_search(cli)
    vectors = cli.server.services.vectors
    assert vectors is not None
    vectors.clear(LOCAL_ACCOUNT_ID)
    data_dir = cli.server.services.settings.data_dir
    # Another model than the server's: 128 leading dimensions of the local table.
    env = clean_env(MEMVAULT_DATA_DIR=str(data_dir), MEMVAULT_EMBEDDINGS_DIMENSION="128")
    result = invoke_memvault("reindex", "--vectors", env=env, cwd=cli.cwd)
    assert result.code == 0, str(result)
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "reindexed 4 notes of account local"
    assert re.fullmatch(r"re-embedded with wordllama-l2-supercat-128: \d+ chunks", lines[1])
    assert vectors.indexed_models(LOCAL_ACCOUNT_ID).keys() == {"wordllama-l2-supercat-128"}
    off = invoke_memvault(
        "reindex", "--vectors", env={**env, "MEMVAULT_EMBEDDINGS": "off"}, cwd=cli.cwd
    )
    assert off.stdout.strip().splitlines()[1].startswith("vectors: off")
