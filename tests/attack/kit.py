"""What every attack script shares: workspaces, the real CLI, figures, and leak detection.

The attacks are run on demand and, at their quick sizes, by `.ci/run` (`docs/reliability.md`):

    .venv/bin/python -m tests.attack.run_all            # every attack, default sizes
    .venv/bin/python -m tests.attack.crash --kills 40   # one attack, bigger

Each attack drives the real programs (`jarvis host`, `jarvis ...`, the console on a
pseudo-terminal) as an operator or an attacker would, counts what it tried and what survived,
and ends with a figures table. Exit status 0 means every invariant held. Whatever way it ends
(held, broke, a wait that gave up, Ctrl-C, SIGTERM), everything it started is ended and its
folders removed (`tests/attack/leftovers.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.attack import leftovers

ROOT = Path(__file__).resolve().parents[2]
LANE = "jarvis-worker-1"
HUNG = -1
"""The exit code `jarvis` reports for a command that had to be killed."""


@dataclass
class Figures:
    """What one attack tried and what held, printed as a table and returned as JSON."""

    name: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def add(self, what: str, value: object) -> None:
        self.rows.append((what, f"{value:,}" if isinstance(value, int) else str(value)))

    def fail(self, why: str) -> None:
        self.failures.append(why)

    def check(self, ok: bool, why: str) -> None:
        if not ok:
            self.fail(why)

    @property
    def ok(self) -> bool:
        return not self.failures

    def print(self) -> None:
        width = max((len(what) for what, _ in self.rows), default=0)
        print(f"\n== {self.name}: {'held' if self.ok else 'BROKE'}")
        for what, value in self.rows:
            print(f"  {what:<{width}}  {value}")
        for why in self.failures[:20]:
            print(f"  ! {why}")
        if len(self.failures) > 20:
            print(f"  ! … and {len(self.failures) - 20} more")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "rows": self.rows, "failures": self.failures}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Figures:
        rows = [(str(what), str(value)) for what, value in doc["rows"]]
        return cls(str(doc["name"]), rows, [str(why) for why in doc["failures"]])


def main(attack: Any, parser: argparse.ArgumentParser) -> None:
    """Run one attack module's ``attack(args) -> Figures`` from the command line.

    The attack runs `leftovers.contained`: nothing it started outlives it. An attack that stops
    with an exception (a wait that gave up, a bug of its own) has broken, and says so as figures.
    """
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--figures-json", type=Path, help=argparse.SUPPRESS)  # for run_all
    args = parser.parse_args()
    with leftovers.contained():
        figures = run(attack, args)
    if args.figures_json:
        args.figures_json.write_text(json.dumps(figures.to_json()))
    if args.json:
        print(json.dumps(figures.to_json()))
    else:
        figures.print()
    sys.exit(0 if figures.ok else 1)


def run(attack: Any, args: argparse.Namespace) -> Figures:
    """``attack(args)``; an exception out of it becomes the figures of an attack that broke."""
    try:
        figures: Figures = attack(args)
    except (Exception, pytest.fail.Exception) as exc:
        figures = Figures(attack.__module__.rsplit(".", 1)[-1])
        figures.fail(f"the attack stopped: {type(exc).__name__}: {str(exc)[:2000]}")
    return figures


@contextmanager
def workspace(prefix: str, *, under: Path | None = None) -> Iterator[Path]:
    """A fresh workspace folder; on the way out every process that names or works in it is
    ended, then the folder removed (kept with JARVIS_ATTACK_KEEP=1)."""
    base = Path(tempfile.mkdtemp(prefix=f"jarvis-attack-{prefix}-", dir=under)).resolve()
    ws = base / "ws"
    ws.mkdir()
    try:
        yield ws
    finally:
        scope = leftovers.current()
        if scope is not None:
            leftovers.stop(scope, within=base)
        if os.environ.get("JARVIS_ATTACK_KEEP"):
            print(f"  (kept {base})")
        else:
            shutil.rmtree(base, ignore_errors=True)


@dataclass
class Ran:
    code: int
    stdout: bytes
    stderr: bytes

    def json(self) -> Any:
        return json.loads(self.stdout.decode())

    @property
    def traceback(self) -> bool:
        return b"Traceback (most recent call last)" in self.stdout + self.stderr


def jarvis(
    *args: str | Path,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Ran:
    """The real command line, in its own process, its bytes kept as written; a command still
    running after ``timeout`` seconds is killed and reported with the code `HUNG`."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jarvis_cli", *map(str, args)],
            input=stdin,
            capture_output=True,
            cwd=ROOT,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as hung:  # a finding: the caller checks the code
        return Ran(HUNG, hung.stdout or b"", hung.stderr or b"")
    return Ran(done.returncode, done.stdout, done.stderr)


def dispatch_doc(run_id: str, scenario: str = "ok", **changes: Any) -> dict[str, Any]:
    """The bundled backend-fix dispatch as ``run_id``, its simulated worker playing ``scenario``."""
    doc: dict[str, Any] = json.loads(
        (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
    )
    doc.pop("request_id", None)
    doc["run_id"] = run_id
    doc["input"] = f"Fix the retry counter so a retried run keeps its run_id. sim:{scenario}"
    doc["universal_criteria"] = False
    doc.update(changes)
    return doc


def use_worker(ws: Path, script: str) -> None:
    """Make ``script`` (Python source) the worker program the host of ``ws`` starts for a run."""
    path = ws.parent / "attack_worker.py"
    path.write_text(script)
    config = ws / "jarvis.toml"
    command = json.dumps([sys.executable, str(path)])
    config.write_text(
        config.read_text().replace("[workers]\n", f"[workers]\ncommand = {command}\n")
    )


# Bytes a worker's text must never get onto an operator's terminal: escape sequences of every
# family, C0/C1 controls, and line breaks that would forge a line.
ESC = re.compile(rb"\x1b")
C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


def injected(marker: str) -> list[str]:
    """Hostile texts, each carrying ``marker`` so its arrival anywhere can be found."""
    return [
        f"{marker} \x1b]0;owned-title\x07 title",
        f"{marker} \x1b[2J\x1b[H cleared",
        f"{marker} \x1b]52;c;ZWNobyBvd25lZA==\x07 clipboard",
        f"{marker} \x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\",
        f"{marker}\n  state                 done\n  overridden_by         alice",
        f"{marker}\r  state   done",
        f"{marker} \x9b31m c1-csi \x85 nel",
        f"{marker} \u202eevil\u202c bidi \u2028 sep",
        f"{marker} [bold red]markup[/] [link=https://evil.example]x[/link] [@click=app.quit]q[/]",
        f"{marker} \x08\x08\x08\x07\x00 backspaces",
    ]


def forged_lines(output: bytes, marker: str) -> list[str]:
    """Lines of ``output`` that start with a field name right after a line holding ``marker``:
    the sign that a worker's newline became the operator's newline."""
    lines = output.decode("utf-8", "replace").splitlines()
    found = []
    for before, line in zip(lines, lines[1:], strict=False):
        if marker in before and re.match(r"\s+(state|overridden_by)\s", line):
            found.append(line.strip())
    return found


def leaks(output: bytes, allowed_escapes: Sequence[bytes] = ()) -> list[str]:
    """Control bytes in CLI output that is not a terminal: there should be none at all."""
    problems = []
    stripped = output
    for ok in allowed_escapes:
        stripped = stripped.replace(ok, b"")
    if ESC.search(stripped):
        problems.append("ESC")
    if C1_UTF8.search(stripped):
        problems.append("C1 control")
    for byte in (b"\x07", b"\x08", b"\x00", b"\r", b"\x9b"):
        if byte in stripped:
            problems.append(repr(byte))
    for char in ("\u202e", "\u2028"):
        if char.encode() in stripped:
            problems.append(repr(char))
    return problems
