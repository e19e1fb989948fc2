"""`memvault import` and `memvault export`: an Obsidian vault zip in and out, with progress,
through the import/export job API (cli/transfer_jobs.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.filesize import decimal
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.client import Client
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt
from memvault.cli.output import die, err, out, plural
from memvault.cli.transfer_jobs import export_via_job, import_via_job


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )


# The import's steps as the progress bars name them: while running, and once done.
_STEPS = {
    "upload": ("uploading", "uploaded"),
    "parsing": ("parsing", "parsed"),
    "committing": ("committing", "committed"),
    "indexing": ("indexing", "indexed"),
}


class _ImportBars:
    """One bar per step of an import: the upload (bytes), then the server's phases
    (notes), each shown when the server first reports it."""

    def __init__(self, bar: Progress, size: int) -> None:
        self.bar = bar
        self.size = size
        self.sent = 0
        self.tasks: dict[str, TaskID] = {}
        self._show("upload", 0, size, f"0/{decimal(size)}")

    def _show(self, step: str, done: int, total: int, figures: str) -> None:
        running, finished = _STEPS[step]
        name = finished if done >= total else running
        # Nothing to do is done: a full bar rather than an empty one.
        bar_total, bar_done = (1, 1) if total == 0 else (total, done)
        if step not in self.tasks:
            self.tasks[step] = self.bar.add_task(name, total=bar_total, figures=figures)
        self.bar.update(
            self.tasks[step], description=name, total=bar_total, completed=bar_done, figures=figures
        )

    def sent_bytes(self, n: int) -> None:
        self.sent += n
        figures = f"{decimal(self.sent)}/{decimal(self.size)}"
        self._show("upload", self.sent, self.size, figures)

    def event(self, item: dict[str, Any]) -> None:
        phase = item.get("phase")
        done, total = item.get("done"), item.get("total")
        if phase not in _STEPS or not isinstance(done, int) or not isinstance(total, int):
            return  # an event this CLI does not know: not worth failing the import for
        if self.sent < self.size:
            self.sent_bytes(self.size - self.sent)  # the server has it all
        self._show(phase, done, total, f"{done}/{plural(total, 'note')}")


def import_(
    archive: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
    skip_obsidian_config: Annotated[
        bool,
        typer.Option(
            "--skip-obsidian-config",
            help="Leave the archive's .obsidian/ folder out (kept as the vault's configuration"
            " by default).",
        ),
    ] = False,
) -> None:
    """Import an Obsidian vault zip (adds and updates; never deletes; all or nothing).

    Any size: the zip goes up as an import job (to S3 on AWS), which the server runs.
    Progress bars on stderr follow each step: the upload, then parsing, committing and
    indexing on the server."""

    def call(client: Client) -> Any:
        try:
            size = archive.stat().st_size
            fh = archive.open("rb")
        except OSError as exc:
            die(f"cannot read {archive}: {exc.strerror or exc}")
        bar = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            TextColumn("{task.fields[figures]}"),
            TimeElapsedColumn(),
            console=err,
            transient=False,
        )
        with fh, bar:
            bars = _ImportBars(bar, size)
            config = "skip" if skip_obsidian_config else "keep"
            return import_via_job(
                client,
                fh,
                size,
                bars.sent_bytes,
                bars.event,
                filename=archive.name,
                obsidian_config=config,
            )

    def show(report: Any) -> None:
        out.print(
            f"created {report['created']}, updated {report['updated']},"
            f" unchanged {report['unchanged']}, skipped {report['skipped']}"
        )
        files = [report.get(k, 0) for k in ("files_created", "files_updated", "files_unchanged")]
        if any(files):
            out.print(
                f"files (attachments and .obsidian/): created {files[0]}, updated {files[1]},"
                f" unchanged {files[2]}"
            )
        for name in report["skipped_files"][:20]:
            out.print(Text(f"  skipped {name}", style="dim"))
        if report["skipped"] > 20:
            out.print(Text(f"  … and {report['skipped'] - 20} more", style="dim"))

    run_call(url, key, call, as_json=as_json, render_human=show)


def export(
    destination: Annotated[
        Path | None,
        typer.Argument(help="Zip file (or folder) to write; default memvault-DATE.zip."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Export every note as an Obsidian-compatible zip (an export job, then its download)."""

    def call(client: Client) -> tuple[int, Path]:
        default_name = f"memvault-{dt.date.today().isoformat()}.zip"
        target = destination or Path(default_name)
        if target.is_dir():
            target = target / default_name
        partial = target.with_name(target.name + ".part")
        try:
            fh = partial.open("wb")
        except OSError as exc:
            die(f"cannot write {target}: {exc.strerror or exc}")
        try:
            with fh, _progress() as bar:
                task = bar.add_task("downloading", total=None)
                count = export_via_job(
                    client,
                    fh,
                    lambda total: bar.update(task, total=total),
                    lambda n: bar.advance(task, n),
                )
            partial.replace(target)
        except OSError as exc:
            die(f"cannot write {target}: {exc.strerror or exc}", 1)
        finally:
            partial.unlink(missing_ok=True)
        return count, target

    def show(done: tuple[int, Path]) -> None:
        count, target = done
        out.print(Text(f"exported {plural(count, 'note')} to {target}"))

    run_call(url, key, call, render_human=show)
