"""A hostile worker's text on the operator's screen: inert everywhere, secrets masked.

A worker program of the attacker's writes progress whose summaries carry escape sequences of
every family (window title, clear screen, clipboard, hyperlinks, C1 controls, bidi overrides,
backspaces), forged field lines, Rich and Textual markup, and provider keys, whole and split by
an escape sequence; it writes the same to stderr and ends with a completion block made of them.
Then every place an operator reads a run is checked byte for byte: `jarvis show`, `runs` and
`journal`, readable and ``--json``, and the console's own terminal output. No control byte of
the worker's may arrive, no forged line may appear, markup must show as text, and no key may
appear unmasked, nor any piece of a split key past the four characters a mask keeps.

    .venv/bin/python -m tests.attack.injection
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tests.attack.kit import (
    Figures,
    dispatch_doc,
    forged_lines,
    injected,
    jarvis,
    leaks,
    main,
    use_worker,
    workspace,
)
from tests.host.hostkit import HostProcess, connect, rows, wait_until, write_config
from tests.processes import PtyProcess

MARKER = "ZQX"
SECRETS = [
    "sk-ant-api03-"
    + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6nOp9qRs2tUv5wXy8zAb1dEf4hIj7k-AAAA",
    "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c2V3b4N5m6Q7w8E9r0T1y2",
    "AKIAIOSFODNN7EXAMPLQ",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Im9wcyJ9."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
]
#: Keys split by what a terminal (or a reader of its visible escapes) skips: a colour code, a
#: title sequence, a bell, a zero-width space. Each piece after the first four characters is
#: what no output may show: a reader would put the key back together from them.
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SPLIT_KEYS = {
    "AKIAIOSF\x1b[0mODNN7EXAMPLE": ("IOSF", "ODNN7EXAMPLE"),
    f"{GITHUB[:10]}\x1b[31m{GITHUB[10:]}\x1b[0m": (GITHUB[4:10], GITHUB[10:]),
    f"{GITHUB[:10]}\x1b]0;x\x07{GITHUB[10:]}": (GITHUB[4:10], GITHUB[10:]),
    "AKIAIOSF\x07ODNN7EXAMPLE": ("IOSF", "ODNN7EXAMPLE"),
    "AKIAIOSF\u200bODNN7EXAMPLE": ("IOSF", "ODNN7EXAMPLE"),
}

WORKER = r"""
import json, os, sys, time
texts = json.loads(os.environ["ATTACK_TEXTS"])
progress = os.environ["JARVIS_PROGRESS_DIR"]
for seq, text in enumerate(texts, 1):
    doc = {"kind": "worker_progress", "run_id": os.environ["JARVIS_RUN_ID"],
           "group_folder": os.environ["JARVIS_LANE"],
           "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
           "phase": "testing", "summary": text, "seq": seq}
    tmp = os.path.join(progress, f".{seq}.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, os.path.join(progress, f"{int(time.time()*1000)}-{seq}.json"))
    time.sleep(0.02)
for text in texts:
    sys.stderr.write(text + "\n")
dispatch = json.loads(os.environ["JARVIS_DISPATCH"])
if "crash" in dispatch["input"]:
    sys.exit(3)
hostile = " | ".join(texts)
print("<completion>")
print(json.dumps({"run_id": dispatch["run_id"], "branch": dispatch["branch"],
                  "commit_sha": "abc1234", "files_changed": texts[:3],
                  "test_result": hostile, "risk": hostile, "pr_skipped_reason": hostile}))
print("</completion>")
"""


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("injection (a worker's text on the operator's screen)")
    texts = injected(MARKER) + [f"{MARKER} key {secret}" for secret in [*SECRETS, *SPLIT_KEYS]]
    with workspace("injection") as ws:
        write_config(ws, concurrency=2, no_output_s=30)
        use_worker(ws, WORKER)
        runs = ["inject-done", "inject-crash"]
        for run_id, scenario in zip(runs, ["ok", "crash"], strict=True):
            doc = dispatch_doc(run_id, scenario)
            ran = jarvis("dispatch", "-", "--workspace", ws, stdin=json.dumps(doc).encode())
            figures.check(ran.code == 0, f"dispatch {run_id}: {ran.stderr[-300:]!r}")
        # The host passes its environment on to its workers: how the texts reach the worker.
        os.environ["ATTACK_TEXTS"] = json.dumps(texts)
        host = HostProcess(ws)
        host.wait_started()
        conn = connect(ws)
        wait_until(
            lambda: all(
                r["state"] not in ("queued", "running") for r in rows(conn, "SELECT * FROM runs")
            ),
            120,
            "both hostile runs to end",
        )
        host.stop()
        conn.close()
        outputs: dict[str, bytes] = {}
        for run_id in runs:
            for form in ((), ("--json",)):
                ran = jarvis("show", run_id, "--workspace", ws, *form)
                outputs[f"show {run_id} {' '.join(form)}".strip()] = ran.stdout + ran.stderr
        for command in ("runs", "journal"):
            for form in ((), ("--json",)):
                ran = jarvis(command, "--workspace", ws, *form)
                outputs[f"{command} {' '.join(form)}".strip()] = ran.stdout + ran.stderr
        checked = 0
        for name, output in outputs.items():
            checked += 1
            figures.check(MARKER.encode() in output, f"{name}: the worker's text is not shown")
            for problem in leaks(output):
                figures.fail(f"{name}: {problem} from the worker reached the output")
            for line in forged_lines(output, MARKER):
                figures.fail(f"{name}: forged line {line!r}")
            for secret in SECRETS:
                if secret.encode() in output or secret[:24].encode() in output:
                    figures.fail(f"{name}: key {secret[:12]}… shown unmasked")
            for piece in split_pieces_in(output):
                figures.fail(f"{name}: {piece!r} of a split key shown")
        readable = outputs[f"show {runs[0]}"]
        figures.check(b"[bold red]markup[/]" in readable, "show: markup was interpreted")
        console = _console(ws, figures)
        figures.add("hostile texts", len(texts))
        figures.add("outputs read (CLI, readable and JSON)", checked)
        figures.add("console bytes read", len(console))
        figures.add("escape sequences, forged lines, unmasked keys found", len(figures.failures))
    return figures


# Sequences only a worker's text could have put in the console's output.
HOSTILE_SEQUENCES = [b"\x1b]0;owned", b"\x1b]52;", b"\x1b]8;;https://evil", b"\x9b31m", b"\xc2\x9b"]


def _console(ws: Path, figures: Figures) -> bytes:
    env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor")
    argv = [sys.executable, "-m", "jarvis_cli", "tui", "--no-host", "--workspace", str(ws)]
    with PtyProcess(argv, cols=160, rows=48, env=env) as console:
        console.wait_for(MARKER.encode(), "the worker's text in the console")
        console.write(b"j")  # the other run, with its own panels
        console.write(b"k")
        console.write(b"q")
        console.wait()
        output = console.output
    for sequence in HOSTILE_SEQUENCES:
        figures.check(sequence not in output, f"console: {sequence!r} reached the terminal")
    for secret in SECRETS:
        figures.check(secret[:24].encode() not in output, f"console: key {secret[:12]}… shown")
    for piece in split_pieces_in(output):
        figures.fail(f"console: {piece!r} of a split key shown")
    return output


def split_pieces_in(output: bytes) -> list[str]:
    """The pieces of a split key ``output`` shows, past the four characters a mask keeps."""
    pieces = {piece for split in SPLIT_KEYS.values() for piece in split}
    return sorted(piece for piece in pieces if piece.encode() in output)


def parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=__doc__.splitlines()[0])


if __name__ == "__main__":
    main(attack, parser())
