"""A damaged `jarvis.db` in front of every command: a sentence and exit 2, never a traceback.

A workspace with a few runs is damaged in one of several ways — garbage bytes, cut in half, its
header zeroed, a page in the middle overwritten, emptied to zero bytes, replaced by a folder,
stamped with a schema newer than this code — and every command that opens the store is run on
it: the host, the reading commands, the writing commands and the console. Each must exit 2 with
a sentence (and JSON with a code under ``--json``) and must never change the damaged file: a
store that cannot be read is evidence, and writing over it would lose the history for good.

    .venv/bin/python -m tests.attack.corrupt_store [--commands 9]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from tests.attack.kit import HUNG, Figures, dispatch_doc, jarvis, main, workspace
from tests.processes import PtyProcess

PAGE = 4096


def _garbage(db: Path, rng: random.Random) -> None:
    db.write_bytes(bytes(rng.randrange(256) for _ in range(db.stat().st_size)))


def _truncated(db: Path, rng: random.Random) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2 + 123])


def _zeroed_header(db: Path, rng: random.Random) -> None:
    data = bytearray(db.read_bytes())
    data[:100] = bytes(100)
    db.write_bytes(bytes(data))


def _bad_page(db: Path, rng: random.Random) -> None:
    data = bytearray(db.read_bytes())
    page = max(2, len(data) // PAGE // 2)
    data[page * PAGE : (page + 1) * PAGE] = bytes(rng.randrange(256) for _ in range(PAGE))
    db.write_bytes(bytes(data))


def _zero_bytes(db: Path, rng: random.Random) -> None:
    db.write_bytes(b"")


def _folder(db: Path, rng: random.Random) -> None:
    db.unlink()
    db.mkdir()


def _newer_schema(db: Path, rng: random.Random) -> None:
    conn = sqlite3.connect(db)
    with conn:  # a step of sqlite-utils' migration set this code has never heard of
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
            "VALUES ('jarvis', '9999_from_the_future', '2031-01-01')"
        )
    conn.close()


def _foreign(db: Path, rng: random.Random) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()


MODES: dict[str, Callable[[Path, random.Random], None]] = {
    "garbage bytes": _garbage,
    "cut in half": _truncated,
    "header zeroed": _zeroed_header,
    "a page overwritten": _bad_page,
    "zero bytes": _zero_bytes,
    "a folder": _folder,
    "a newer schema": _newer_schema,
    "another program's database": _foreign,
}

#: Damage that opening cannot see: only a command that reads the damaged page meets it (the host
#: reads every page before it starts, so it always does).
PARTIAL = ("a page overwritten",)

COMMANDS: list[tuple[str, ...]] = [
    # The first five (`--commands 5`, the quick run) are the host, a reader and a writer each
    # readable and as JSON.
    ("host",),
    ("runs", "--json"),
    ("show", "attack-1"),
    ("dispatch", "DISPATCH", "--json"),
    ("cancel", "attack-1", "--reason", "test", "--json"),
    ("runs",),
    ("show", "attack-1", "--json"),
    ("journal", "--json"),
    ("criteria", "attack-1", "--json"),
]


def _fingerprint(db: Path) -> str:
    if db.is_dir():
        return "folder:" + ",".join(sorted(os.listdir(db)))
    return hashlib.sha256(db.read_bytes()).hexdigest()


def _console(ws: Path, partial: bool) -> tuple[int, bytes]:
    argv = [sys.executable, "-m", "jarvis_cli", "tui", "--no-host", "--workspace", str(ws)]
    env = dict(os.environ, TERM="xterm-256color")
    with PtyProcess(argv, cols=100, rows=30, env=env) as console:
        if partial:
            # Like a command that never reads the damaged page, a console that does not may run
            # as usual: once it shows the runs, it is asked to quit.
            if console.reader.wait(lambda shown: b"attack-1" in shown, 60):
                console.write(b"q")
        try:
            code = console.wait(60)
        except AssertionError:  # still running: a finding, not the end of the attack
            code = HUNG
        return code, console.output


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("a damaged store in front of every command")
    rng = random.Random(args.seed)
    tried = 0
    codes: Counter[int] = Counter()
    met: dict[str, int] = {}
    console_met: dict[str, bool] = {}
    with workspace("corrupt") as base:
        pristine = base / "pristine"
        pristine.mkdir()
        for n in range(1, 4):
            doc = json.dumps(dispatch_doc(f"attack-{n}")).encode()
            ran = jarvis("dispatch", "-", "--workspace", pristine, stdin=doc)
            assert ran.code == 0, ran.stderr
        # A store as a running host leaves it: fully checkpointed, so the damage is all there is.
        conn = sqlite3.connect(pristine / "jarvis.db")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        extra = base / "extra.json"
        extra.write_text(json.dumps(dispatch_doc("attack-new")))
        for mode, damage in MODES.items():
            ws = base / mode.replace(" ", "-")
            shutil.copytree(pristine, ws)
            for leftover in ("jarvis.db-wal", "jarvis.db-shm"):
                (ws / leftover).unlink(missing_ok=True)
            damage(ws / "jarvis.db", rng)
            # Damage deep in the file is met only by what reads that page: a command that never
            # does may succeed. Anything else must be refused with exit 2.
            partial = mode in PARTIAL
            for command in COMMANDS[: args.commands]:
                argv = [str(extra) if part == "DISPATCH" else part for part in command]
                before = _fingerprint(ws / "jarvis.db")
                ran = jarvis(*argv, "--workspace", ws)
                tried += 1
                codes[ran.code] += 1
                label = f"{mode}: jarvis {' '.join(command)}"
                met[mode] = met.get(mode, 0) + (ran.code == 2)
                allowed = (0, 2) if partial and command[0] != "host" else (2,)
                figures.check(ran.code in allowed, f"{label} exited {ran.code}")
                figures.check(not ran.traceback, f"{label} printed a traceback")
                if ran.code == 2 and "--json" in command:
                    try:
                        body = json.loads(ran.stdout.splitlines()[0])
                        figures.check(bool(body.get("error", {}).get("code")),
                                      f"{label}: its JSON names no code")  # fmt: skip
                    except (ValueError, IndexError, AttributeError):
                        figures.fail(f"{label}: --json printed no JSON")
                if ran.code == 2:
                    figures.check(_fingerprint(ws / "jarvis.db") == before,
                                  f"{label} refused, yet changed the damaged store")  # fmt: skip
            before = _fingerprint(ws / "jarvis.db")
            code, output = _console(ws, partial)
            tried += 1
            codes[code] += 1
            if partial:
                console_met[mode] = code == 2
            allowed = (0, 2) if partial else (2,)
            figures.check(code in allowed, f"{mode}: the console exited {code}")
            figures.check(b"Traceback" not in output, f"{mode}: the console printed a traceback")
            figures.check(_fingerprint(ws / "jarvis.db") == before,
                          f"{mode}: the console changed the damaged store")  # fmt: skip
    figures.add("kinds of damage", len(MODES))
    for mode in PARTIAL:
        figures.add(f"  {mode}: commands that met it (exit 2)", f"{met.get(mode, 0)} of "
                    f"{len(COMMANDS[: args.commands])}")  # fmt: skip
        figures.add(f"  {mode}: the console met it (exit 2)",
                    "yes" if console_met.get(mode) else "no")  # fmt: skip
    figures.add("commands run on them (CLI, host, console)", tried)
    figures.add("exit codes", ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())))
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", default=os.environ.get("JARVIS_ATTACK_SEED", "corrupt"))
    p.add_argument(
        "--commands", type=int, default=len(COMMANDS),
        help=f"run the first N of the {len(COMMANDS)} commands on each kind of damage",
    )  # fmt: skip
    return p


if __name__ == "__main__":
    main(attack, parser())
