"""A full disk under a live host: faults waited out, no valid file blamed, no event lost.

The workspace is a small tmpfs of its own (``mount -t tmpfs``; root only — elsewhere the attack
says it was skipped). A host ingests progress while, ``--cycles`` times over, a ballast file fills
the disk, a writer squeezes events into the last few kilobytes (the store then has no room to
record them), an operator tries `jarvis dispatch` and `jarvis runs`, and the ballast goes. A full
disk is a fault to wait out: the host must stay up, quarantine nothing, and once space returns
hold every event that was written exactly once. The commands must answer with a sentence
(exit 0 or 2), never a traceback.

    .venv/bin/python -m tests.attack.disk_full [--cycles 5] [--size 6m]
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import subprocess
import time
from pathlib import Path

from core.store.sqlite_store import SqliteStore
from tests.attack.kit import LANE, Figures, dispatch_doc, jarvis, main, workspace
from tests.host.hostkit import HostProcess, connect, dispatch, rows, wait_until, write_config

RUNS = 10


def fill(path: Path) -> int:
    """Write ``path`` until the disk is full; the bytes written."""
    written = 0
    chunk = b"\0" * 65536
    # Unbuffered: a buffered file would keep the bytes the disk refused and fail again at close.
    with path.open("ab", buffering=0) as ballast:
        while True:
            try:
                written += ballast.write(chunk) or 0
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:  # the last partial chunk, byte-page by page
            while os.write(fd, b"\0" * 4096):
                written += 4096
        finally:
            os.close(fd)
    except OSError:
        pass
    return written


def write_event(folder: Path, run_id: str, seq: int) -> bool:
    doc = {
        "kind": "worker_progress", "run_id": run_id, "group_folder": LANE,
        "timestamp": "2026-11-24T03:00:00.000Z", "phase": "testing",
        "summary": f"{run_id} step {seq} " + "x" * 3000, "seq": seq,
    }  # fmt: skip
    temp = folder / f".{seq}.tmp"
    try:
        temp.write_text(json.dumps(doc))
        os.replace(temp, folder / f"{1_000_000 + seq}-{seq}.json")
        return True
    except OSError:
        temp.unlink(missing_ok=True)
        return False


def _errors(ws: Path) -> int:
    return len(list((ws / "data" / "ipc" / "errors").glob("*.reason.json")))


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("disk full under a live host")
    with workspace("disk-full") as ws:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={args.size}", "tmpfs", str(ws)],
            capture_output=True,
        )
        if mounted.returncode != 0:
            figures.add("skipped", f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
            return figures
        try:
            _attack(ws, args, figures)
        finally:
            subprocess.run(["umount", "-l", str(ws)], capture_output=True)
    return figures


def _attack(ws: Path, args: argparse.Namespace, figures: Figures) -> None:
    write_config(ws, lane_concurrency={LANE: 0})
    store = SqliteStore(ws / "jarvis.db")
    run_ids = [f"full-{n}" for n in range(RUNS)]
    for run_id in run_ids:
        dispatch(store, run_id, lane=LANE)
    store.close()
    progress = ws / "data" / "ipc" / LANE / "progress"
    for run_id in run_ids:
        (progress / run_id).mkdir(parents=True, exist_ok=True)
    host = HostProcess(ws)
    host.wait_started()
    conn = connect(ws)
    written = refused_writes = seq = 0
    answers: dict[str, int] = {}
    tracebacks = 0
    for cycle in range(args.cycles):
        ballast = ws / "ballast.bin"
        fill(ballast)
        # Room for a few events, none for the store to record them.
        os.truncate(ballast, max(0, ballast.stat().st_size - 96 * 1024))
        for _ in range(args.events):
            seq += 1
            run_id = run_ids[seq % RUNS]
            if write_event(progress / run_id, run_id, seq):
                written += 1
            else:
                refused_writes += 1
        doc = json.dumps(dispatch_doc(f"full-new-{cycle}")).encode()
        for name, command in (("dispatch", ("dispatch", "-")), ("runs", ("runs",))):
            ran = jarvis(*command, "--workspace", ws, stdin=doc if name == "dispatch" else None)
            answers[f"{name} {ran.code}"] = answers.get(f"{name} {ran.code}", 0) + 1
            tracebacks += ran.traceback
            figures.check(ran.code in (0, 2), f"cycle {cycle}: jarvis {name} exited {ran.code}")
        time.sleep(args.hold)  # the host meets the full disk for a while
        if host.proc.poll() is not None:
            # Why, in the host's own words: the workspace (and its log) goes with the tmpfs.
            tail = " | ".join(host.log().strip().splitlines()[-6:])
            figures.check(False, f"cycle {cycle}: the host exited on a full disk: {tail}")
        figures.check(_errors(ws) == 0, f"cycle {cycle}: valid files were quarantined")
        ballast.unlink()
        if host.proc.poll() is not None:
            break
        wait_until(
            lambda target=written: rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"]
            >= target,
            300, f"cycle {cycle}: every written event in the store once space returned",
            lambda: host.log()[-3000:],
        )  # fmt: skip
    code = host.stop()
    events = rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"]
    journal = rows(conn, "SELECT COUNT(*) AS n FROM journal WHERE kind = 'progress'")[0]["n"]
    conn.close()
    figures.add("disk size", args.size)
    figures.add("fill and free cycles", args.cycles)
    figures.add("events written / refused by the full disk", f"{written} / {refused_writes}")
    figures.add("events in the store / journal rows", f"{events} / {journal}")
    figures.add("quarantined", _errors(ws))
    figures.add("commands on the full disk (name exit: count)",
                ", ".join(f"{k}: {v}" for k, v in sorted(answers.items())))  # fmt: skip
    figures.add("tracebacks printed by commands", tracebacks)
    figures.add("host exit code on SIGTERM", code)
    figures.check(events == written, f"{written - events} written event(s) never ingested")
    figures.check(journal == events, "journal rows and events differ")
    figures.check(tracebacks == 0, "a command printed a traceback on a full disk")
    figures.check(code == 0, "the host did not stop cleanly")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cycles", type=int, default=5)
    p.add_argument("--events", type=int, default=20, help="events written per cycle")
    p.add_argument("--size", default="6m")
    p.add_argument("--hold", type=float, default=3.0, help="seconds the disk stays full")
    return p


if __name__ == "__main__":
    main(attack, parser())
