"""Parsing an import's notes in worker processes gives what parsing them in turn gives."""

from __future__ import annotations

import logging
import time

import pytest

from memvault.services import parsing
from memvault.services.parsing import BulkParser, build_puts
from memvault.services.vault import build_put

NOTES = [
    (f"folder {i % 3}/Note {i}.md", markdown, i % 4)
    for i, markdown in enumerate(
        [
            "---\ntitle: Framed\ntags: [alpha, Beta/gamma]\n---\nbody [[Other]] #inline\n",
            "# Heading title\n\nlinks [[folder 1/Note 4|alias]] and ![[embed]]\n",
            "plain text, no title, `#not-a-tag` and ```\n[[not a link]]\n```\n",
            "---\nbroken: [yaml\n---\n#tag after broken frontmatter\n",
            "unicode ümlaut #café [[Ωmega]]\r\nwindows line ends\r\n",
            "",
        ]
        * 4
    )
]


def parsed_one_by_one() -> list[object]:
    return [build_put(path, markdown, expected) for path, markdown, expected in NOTES]


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers for any batch, handed a few notes at a time, so a small test crosses chunks.
    monkeypatch.setattr(parsing, "PARALLEL_MIN_NOTES", 1)
    monkeypatch.setattr(parsing, "CHUNK", 5)


@pytest.mark.usefixtures("small_batches")
def test_worker_processes_parse_like_build_put_in_order() -> None:
    assert build_puts(NOTES) == parsed_one_by_one()


@pytest.mark.usefixtures("small_batches")
def test_notes_added_while_workers_run_come_back_in_order() -> None:
    with BulkParser(len(NOTES)) as parser:
        for path, markdown, expected in NOTES:
            parser.add(path, markdown, expected)
            time.sleep(0.001)  # the archive is still being read
        assert parser.results() == parsed_one_by_one()


def test_a_small_batch_is_parsed_in_process() -> None:
    assert build_puts(NOTES) == parsed_one_by_one()


@pytest.mark.usefixtures("small_batches")
def test_without_processes_it_parses_on_one_core(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_semaphores(*_args: object, **_kwargs: object) -> None:
        raise OSError(38, "Function not implemented")  # what AWS Lambda says

    monkeypatch.setattr(parsing, "ProcessPoolExecutor", no_semaphores)
    with caplog.at_level(logging.WARNING, logger="memvault.parsing"):
        assert build_puts(NOTES) == parsed_one_by_one()
    assert "parsing on one core" in caplog.text


@pytest.mark.usefixtures("small_batches")
def test_giving_up_midway_stops_the_workers_and_keeps_the_error() -> None:
    with pytest.raises(RuntimeError, match="refused"), BulkParser(10_000) as parser:
        for path, markdown, expected in NOTES * 50:
            parser.add(path, markdown, expected)
        raise RuntimeError("import refused")
