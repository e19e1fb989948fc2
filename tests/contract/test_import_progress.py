"""An import's progress callback, through the service layer, on every backend.

The phases come in order (parsing, committing, indexing), counted in notes; the commit
between them is storage's, all or nothing, and a callback that fails changes that in no
way: before the commit it refuses the import whole, after it the import stands whole.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from memvault.container import Services
from memvault.errors import MemvaultError
from memvault.services.context import Caller
from memvault.services.transfer import PARSING_REPORTS, ImportPhase
from tests.contract.test_import_export import MARKER, make_zip, note_paths

Step = tuple[ImportPhase, int, int]


class Recorder:
    def __init__(self, fail_at: Step | None = None) -> None:
        self.steps: list[Step] = []
        self.fail_at = fail_at

    def __call__(self, phase: ImportPhase, done: int, total: int) -> None:
        self.steps.append((phase, done, total))
        if (phase, done, total) == self.fail_at:
            raise RuntimeError(f"the callback failed at {phase} {done}/{total}")


def run(services: Services, user: Caller, data: bytes, progress: Recorder) -> Any:
    return services.transfer.import_zip(user, io.BytesIO(data), progress=progress)


def test_the_phases_come_in_order_counted_in_notes(services: Services, user: Caller) -> None:
    services.vault.write(user, "same.md", "unchanged\n")
    services.vault.write(user, "edit.md", "before\n")
    notes = [(f"n/{i}.md", f"{MARKER} {i}\n") for i in range(7)]
    data = make_zip(*notes, ("same.md", "unchanged\n"), ("edit.md", "after\n"))
    recorder = Recorder()
    report = run(services, user, data, recorder)
    assert (report.created, report.updated, report.unchanged) == (7, 1, 1)
    assert recorder.steps == [
        *[("parsing", done, 9) for done in range(9)],
        ("parsing", 9, 9),
        ("committing", 0, 8),
        ("committing", 8, 8),
        ("indexing", 0, 8),
        ("indexing", 8, 8),
    ]
    # When "indexing" reports n of n, search has the notes.
    assert len(services.vault.search(user, MARKER, limit=20)) == 7


def test_parsing_reports_are_bounded_for_a_big_archive(services: Services, user: Caller) -> None:
    count = 3 * PARSING_REPORTS + 7
    recorder = Recorder()
    run(services, user, make_zip(*[(f"b/{i}.md", f"{i}") for i in range(count)]), recorder)
    parsing = [done for phase, done, _ in recorder.steps if phase == "parsing"]
    assert parsing[0] == 0 and parsing[-1] == count
    assert parsing == sorted(set(parsing)) and len(parsing) <= PARSING_REPORTS + 2
    assert note_paths(services, user) == sorted(f"b/{i}.md" for i in range(count))


def test_an_import_that_changes_nothing_still_ends_each_phase(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "a.md", "a")
    recorder = Recorder()
    run(services, user, make_zip(("a.md", "a"), (".trash/pic.png", b"\x89PNG")), recorder)
    assert recorder.steps == [
        ("parsing", 0, 1),
        ("parsing", 1, 1),
        ("committing", 0, 0),
        ("indexing", 0, 0),
    ]


def test_an_import_of_files_only_ends_each_phase_once(services: Services, user: Caller) -> None:
    services.vault.write(user, "a.md", "a")
    recorder = Recorder()
    run(services, user, make_zip(("a.md", "a"), ("pic.png", b"\x89PNG")), recorder)
    assert recorder.steps == [
        ("parsing", 0, 1),
        ("parsing", 1, 1),
        ("committing", 0, 0),
        ("indexing", 0, 0),
    ]
    assert services.attachments.download(user, "pic.png")[1] == b"\x89PNG"


def test_a_refused_import_reports_no_commit(services: Services, user: Caller) -> None:
    recorder = Recorder()
    with pytest.raises(MemvaultError):
        run(services, user, make_zip(("ok.md", "fine"), ("bad.md", b"\xff\xfe")), recorder)
    assert {phase for phase, _, _ in recorder.steps} <= {"parsing"}
    assert note_paths(services, user) == []


@pytest.mark.parametrize("fail_at", [("parsing", 0, 3), ("parsing", 3, 3), ("committing", 0, 3)])
def test_a_callback_failing_before_the_commit_refuses_the_import_whole(
    services: Services, user: Caller, fail_at: Step
) -> None:
    services.vault.write(user, "kept.md", "kept\n")
    data = make_zip(("a.md", MARKER), ("b.md", MARKER), ("kept.md", "changed\n"))
    with pytest.raises(RuntimeError, match="the callback failed"):
        run(services, user, data, Recorder(fail_at))
    assert note_paths(services, user) == ["kept.md"]
    assert services.vault.read(user, "kept.md").markdown == "kept\n"
    assert services.vault.search(user, MARKER) == []


@pytest.mark.parametrize("fail_at", [("committing", 3, 3), ("indexing", 0, 3), ("indexing", 3, 3)])
def test_a_callback_failing_after_the_commit_leaves_the_import_whole_and_indexed(
    services: Services, user: Caller, fail_at: Step
) -> None:
    data = make_zip(("a.md", MARKER), ("b.md", MARKER), ("c.md", f"see [[a]] {MARKER}"))
    recorder = Recorder(fail_at)
    report = run(services, user, data, recorder)
    assert report.created == 3
    assert recorder.steps[-1] == ("indexing", 3, 3)  # every report still made
    assert note_paths(services, user) == ["a.md", "b.md", "c.md"]
    assert sorted(h.path for h in services.vault.search(user, MARKER)) == ["a.md", "b.md", "c.md"]
    assert [n.path for n in services.vault.backlinks(user, "a.md")] == ["c.md"]
