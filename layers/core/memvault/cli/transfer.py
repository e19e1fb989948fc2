"""`memvault import` and `memvault export`: an Obsidian vault zip in and out, with progress."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.client import Client
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt
from memvault.cli.output import die, err, out


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


def import_(
    archive: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import an Obsidian vault zip (adds and updates; never deletes; all or nothing)."""

    def call(client: Client) -> Any:
        try:
            size = archive.stat().st_size
            fh = archive.open("rb")
        except OSError as exc:
            die(f"cannot read {archive}: {exc.strerror or exc}")
        with fh, _progress() as bar:
            task = bar.add_task("uploading", total=size)
            sent = 0

            def advance(n: int) -> None:
                nonlocal sent
                sent += n
                bar.update(task, advance=n, description="importing" if sent >= size else None)

            report = client.upload(fh, size, advance)
            bar.update(task, description="imported")
        return report

    def show(report: Any) -> None:
        out.print(
            f"created {report['created']}, updated {report['updated']},"
            f" unchanged {report['unchanged']}, skipped {report['skipped']}"
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
    """Export every note as an Obsidian-compatible zip."""

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
                count = client.download(
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
        out.print(Text(f"exported {count} notes to {target}"))

    run_call(url, key, call, render_human=show)
