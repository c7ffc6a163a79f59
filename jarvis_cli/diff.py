"""``jarvis diff RUN_ID``: what a run changed, the files and then the patch, streamed.

The patch is read from git a line at a time and written as it is read (`core.repos.diff`), so
a patch of any size costs a line's memory, and ``| head`` ends git early. It is worker text:
each line is written inert (`shown_line`: controls escaped, tabs expanded) with its secrets
masked, and coloured, when stdout is a terminal, by codes of ours around it, never by anything
in it. With ``--json`` the patch is one JSON string written in pieces, escaped as every JSON
string this command line writes is (`output.dumps`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from rich.color import ColorSystem
from rich.style import Style
from rich.table import Table
from rich.text import Text

from core.service.diffs import (
    DiffRefusal,
    DiffSource,
    FileChange,
    GitError,
    LineKind,
    diff_files,
    iter_patch_lines,
    line_kind,
    shown_line,
)
from core.service.text import mask_secrets
from jarvis_cli.inputs import UsageError
from jarvis_cli.opening import open_store
from jarvis_cli.output import console, data, dumps, emit_json, verdict_line

#: The colour of each kind of patch line on a terminal.
LINE_STYLES: dict[LineKind, str] = {
    "file": "bold",
    "meta": "bold",
    "hunk": "cyan",
    "added": "green",
    "removed": "red",
    "note": "dim",
}

_COLOR_SYSTEMS = {
    "standard": ColorSystem.STANDARD,
    "256": ColorSystem.EIGHT_BIT,
    "truecolor": ColorSystem.TRUECOLOR,
    "windows": ColorSystem.WINDOWS,
}


def run(args: argparse.Namespace) -> int:
    with open_store(args, access="read") as store:
        source = store.diff_source(args.run_id)
    if isinstance(source, DiffRefusal):
        if args.json:
            emit_json({"run_id": args.run_id, "refusal": source.to_json()})
        else:
            console().print(verdict_line(False, source.code, source.message))
        return 1
    try:
        files = diff_files(source.repo, source.base, source.head)
        if args.json:
            _write_json(source, files, patch=not args.stat)
        else:
            _write_text(source, files, patch=not args.stat)
    except GitError as exc:
        # The record names commits git no longer reads the same, or git itself failed: a
        # problem of this machine's repository, not a verdict on the run.
        raise UsageError("git_failed", f"Reading run {args.run_id}'s diff failed: {exc}") from None
    return 0


def _file_json(change: FileChange) -> dict[str, object]:
    shown = change.to_json()
    shown["path"] = mask_secrets(change.path)
    return shown


def _write_json(source: DiffSource, files: list[FileChange], *, patch: bool) -> None:
    head = {
        "run_id": source.run_id,
        "attempt": source.attempt,
        "base": source.base,
        "head": source.head,
        "files": [_file_json(f) for f in files],
        "refusal": None,
    }
    if not patch:
        emit_json(head)
        return
    # One object, its patch string written a line at a time: `dumps` of a line without its
    # quotes is exactly that line's part of the string.
    out = sys.stdout
    out.write(dumps(head)[:-1] + ', "patch": "')
    with iter_patch_lines(source.repo, source.base, source.head) as lines:
        for line in lines:
            out.write(dumps(line + "\n")[1:-1])
    out.write('"}\n')
    out.flush()


def _count(value: int | None, sign: str) -> str:
    return "bin" if value is None else f"{sign}{value:,}"


def _file_table(files: Iterable[FileChange]) -> Table:
    grid = Table.grid(padding=(0, 1, 0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(justify="right", no_wrap=True, style="green")
    grid.add_column(justify="right", no_wrap=True, style="red")
    grid.add_column(overflow="fold")
    for change in files:
        grid.add_row(
            data(change.status),
            _count(change.additions, "+"),
            _count(change.deletions, "-"),
            data(mask_secrets(change.path)),
        )
    return grid


def _codes(color_system: str | None) -> dict[LineKind, tuple[str, str]]:
    """The terminal codes around each kind of line (none when stdout is not a terminal)."""
    system = _COLOR_SYSTEMS.get(color_system or "")
    if system is None:
        return {}
    codes: dict[LineKind, tuple[str, str]] = {}
    for kind, style in LINE_STYLES.items():
        before, _, after = Style.parse(style).render("\0", color_system=system).partition("\0")
        codes[kind] = (before, after)
    return codes


def _write_text(source: DiffSource, files: list[FileChange], *, patch: bool) -> None:
    out = console()
    added = sum(f.additions or 0 for f in files)
    deleted = sum(f.deletions or 0 for f in files)
    out.print(
        Text.assemble(
            ("run ", "dim"), data(source.run_id, "bold"), (f"  attempt {source.attempt}  ", "dim"),
            f"{source.base[:12]}..{source.head[:12]}",
        )
    )  # fmt: skip
    out.print(
        Text.assemble(
            f"{len(files)} file{'s' if len(files) != 1 else ''} changed, ",
            (f"+{added:,}", "green"),
            " ",
            (f"-{deleted:,}", "red"),
        )
    )
    if files:
        out.print(_file_table(files))
    if not patch:
        return
    codes = _codes(out.color_system if out.is_terminal else None)
    stdout = sys.stdout
    stdout.write("\n")
    with iter_patch_lines(source.repo, source.base, source.head) as lines:
        for line in lines:
            before, after = codes.get(line_kind(line), ("", ""))
            stdout.write(f"{before}{shown_line(line)}{after}\n")
    stdout.flush()
