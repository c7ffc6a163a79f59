"""Denial of service through acceptance criteria: hostile patterns and huge task texts.

1. **A pattern that backtracks for ever.** A run's criterion says ``evil.txt`` must match
   ``^(a+)+$``; its worker writes ``'a' * 40 + 'b'`` there. While that run is verified, another
   run's progress keeps arriving: the host must keep taking it in, the run must end with the
   criterion failed, a SIGTERM mid-verification must stop the host, and after a ``kill -9``
   mid-verification the next host must not freeze on the same run.
2. **Starving other runs.** One run's criteria are six such patterns; once it is being verified,
   another run with a ``file_exists`` check and one with a command that leaves a ``setsid``
   child are dispatched: both must be decided while the first is still being verified, nothing
   the command started may be left, and a dispatch of 51 criteria must be refused.
3. **Huge task texts.** Dispatches of growing size (up to ``--max-kb``) through `jarvis dispatch`
   while another operator cancels a run, and through a lane's ``tasks/`` folder while progress
   flows: extraction must stay linear, no operator may meet "database is locked", and ingestion
   must not stall behind it.

    .venv/bin/python -m tests.attack.criteria_dos [--max-kb 150] [--pattern-timeout S]
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from core.host.verification import WORKSPACE_MARK
from core.ipc.files import atomic_write_json
from core.store.sqlite_store import SqliteStore
from tests.attack.kit import LANE, Figures, dispatch_doc, jarvis, main, use_worker, workspace
from tests.host.hostkit import HostProcess, connect, dispatch, rows, wait_until, write_config

QUIET = "jarvis-worker-9"
"""A lane the host starts no worker for: its run only receives the writer's progress."""

EVIL_WORKER = r"""
import json, os
dispatch = json.loads(os.environ["JARVIS_DISPATCH"])
with open("evil.txt", "w") as f:
    f.write("a" * 40 + "b")
print("<completion>")
print(json.dumps({"run_id": dispatch["run_id"], "branch": dispatch["branch"],
                  "commit_sha": "abc1234", "files_changed": ["evil.txt"],
                  "test_result": "passed", "risk": "low", "pr_skipped_reason": "attack"}))
print("</completion>")
"""


def evil_dispatch(run_id: str) -> dict[str, Any]:
    return dispatch_doc(run_id, acceptance_criteria=[
        {"type": "content_match", "path": "evil.txt", "pattern": "^(a+)+$",
         "description": "evil.txt is all a's"},
    ])  # fmt: skip


class Trickle(threading.Thread):
    """Progress for the quiet run, one event every 50 ms; notes the longest ingestion lag."""

    def __init__(self, ws: Path, run_id: str) -> None:
        super().__init__(daemon=True)
        self.folder = ws / "data" / "ipc" / QUIET / "progress" / run_id
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id = run_id
        self.ws = ws
        self.stop = threading.Event()
        self.worst = 0.0
        self.seq = 0

    def run(self) -> None:
        self.conn = connect(self.ws)  # its own connection, on its own thread (sqlite3's rule)
        while not self.stop.is_set():
            self.seq += 1
            atomic_write_json(self.folder / f"{1_000_000 + self.seq}-{self.seq}.json", {
                "kind": "worker_progress", "run_id": self.run_id, "group_folder": QUIET,
                "timestamp": "2026-11-24T03:00:00.000Z", "phase": "testing",
                "summary": f"tick {self.seq}", "seq": self.seq,
            })  # fmt: skip
            written = time.monotonic()
            while not self.stop.is_set():
                found = self.conn.execute(
                    "SELECT 1 FROM progress_events WHERE run_id = ? AND seq = ?",
                    [self.run_id, self.seq],
                ).fetchone()
                if found:
                    break
                self.worst = max(self.worst, time.monotonic() - written)
                time.sleep(0.01)
            self.worst = max(self.worst, time.monotonic() - written)
            time.sleep(0.05)


def _state(ws: Path, run_id: str) -> dict[str, Any]:
    conn = connect(ws)
    try:
        return rows(conn, "SELECT * FROM runs WHERE run_id = ?", [run_id])[0]
    finally:
        conn.close()


def _verifying(ws: Path, run_id: str) -> bool:
    return _state(ws, run_id).get("verification_state") == "verifying"


def patterns(args: argparse.Namespace, figures: Figures) -> None:
    with workspace("redos") as ws:
        write_config(ws, lane_concurrency={QUIET: 0}, no_output_s=60)
        if args.pattern_timeout is not None:
            with (ws / "jarvis.toml").open("a") as config:
                config.write(f"[criteria]\npattern_timeout_s = {args.pattern_timeout}\n")
        use_worker(ws, EVIL_WORKER)
        store = SqliteStore(ws / "jarvis.db")
        dispatch(store, "quiet-1", lane=QUIET)
        store.close()
        trickle = Trickle(ws, "quiet-1")
        trickle.start()

        def submit(run_id: str) -> None:
            doc = json.dumps(evil_dispatch(run_id)).encode()
            ran = jarvis("dispatch", "-", "--workspace", ws, stdin=doc)
            figures.check(ran.code == 0, f"dispatch {run_id}: {ran.stdout[-300:]!r}")

        # 1. Verified to the end while progress flows.
        host = HostProcess(ws)
        host.wait_started()
        submit("evil-1")
        began = time.monotonic()
        wait_until(lambda: _state(ws, "evil-1")["state"] != "running" or None, 600,
                   "evil-1 to end", lambda: host.log()[-2000:])  # fmt: skip
        ended = _state(ws, "evil-1")
        figures.add("pattern: evil-1 ended as", f"{ended['state']} after "
                    f"{time.monotonic() - began:.1f} s")  # fmt: skip
        figures.add("pattern: its reason", (ended["state_reason"] or "")[:100])
        figures.check(ended["state"] == "failed", "the backtracking criterion did not fail")
        # 2. SIGTERM while verifying.
        submit("evil-2")
        wait_until(lambda: _verifying(ws, "evil-2") or _state(ws, "evil-2")["state"] != "running"
                   or None, 300, "evil-2 to be verified")  # fmt: skip
        signalled = time.monotonic()
        host.proc.send_signal(signal.SIGTERM)
        try:
            code = host.proc.wait(120)
        except Exception:
            code = None
            host.kill()
        figures.add("pattern: SIGTERM mid-verification → exit",
                    f"{code} after {time.monotonic() - signalled:.1f} s")  # fmt: skip
        figures.check(code == 0, "the host did not stop on SIGTERM while verifying")
        # 3. kill -9 while verifying, then a new host.
        host = HostProcess(ws)
        host.wait_started()
        submit("evil-3")
        wait_until(lambda: _verifying(ws, "evil-3") or _state(ws, "evil-3")["state"] != "running"
                   or None, 300, "evil-3 to be verified")  # fmt: skip
        host.kill()
        trickle.worst = 0.0
        host = HostProcess(ws)
        host.wait_started()
        wait_until(lambda: _state(ws, "evil-3")["state"] != "running" or None, 600,
                   "evil-3 to end after the restart", lambda: host.log()[-2000:])  # fmt: skip
        figures.add("pattern: after kill -9, evil-3 ended as", _state(ws, "evil-3")["state"])
        trickle.stop.set()
        trickle.join()
        figures.add("pattern: worst ingestion lag while verifying", f"{trickle.worst:.2f} s")
        figures.check(trickle.worst < 10, "ingestion stalled behind a verification")
        figures.check(host.stop() == 0, "the last host did not stop cleanly")


#: Leaves a child in a session of its own, which a process group does not hold, and passes.
ESCAPER = "import subprocess; subprocess.Popen(['sleep', '300'], start_new_session=True)"


def _marked(ws: Path) -> list[str]:
    """Processes carrying this workspace's criterion-command marker: left over if any."""
    mark = f"{WORKSPACE_MARK}={ws.resolve()}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark in environ.read_bytes().split(b"\0"):
                found.append(environ.parent.name)
        except OSError:
            continue
    return found


def _criteria(run_id: str, *criteria: dict[str, Any]) -> bytes:
    return json.dumps(dispatch_doc(run_id, acceptance_criteria=list(criteria))).encode()


def starvation(args: argparse.Namespace, figures: Figures) -> None:
    with workspace("starve") as ws:
        write_config(ws, concurrency=3, no_output_s=60)
        interpreter = Path(sys.executable).name
        with (ws / "jarvis.toml").open("a") as config:
            config.write(f'[criteria]\nallow = ["{interpreter}"]\n')
        use_worker(ws, EVIL_WORKER)
        evil = {"type": "content_match", "path": "evil.txt", "pattern": "^(a+)+$"}
        hostile = _criteria(
            "evil-6", *({**evil, "description": f"all a's ({n})"} for n in range(6))
        )
        quick = _criteria("quick", {"type": "file_exists", "path": "evil.txt", "description": "x"})
        escaping = _criteria("escaping", {"type": "command_success", "description": "setsid",
                                          "command": [interpreter, "-c", ESCAPER]})  # fmt: skip
        many = [{"type": "file_exists", "path": f"f{n}.txt", "description": "x"} for n in range(51)]
        refused = jarvis("dispatch", "-", "--workspace", ws, "--json",
                         stdin=_criteria("too-many", *many))  # fmt: skip
        codes = [e["code"] for e in json.loads(refused.stdout or b"{}").get("errors", [])]
        figures.add("starve: a dispatch of 51 criteria", f"exit {refused.code}, {codes}")
        figures.check(refused.code == 1 and codes == ["too_many_criteria"],
                      "51 criteria were not refused with too_many_criteria")  # fmt: skip
        host = HostProcess(ws)
        host.wait_started()
        jarvis("dispatch", "-", "--workspace", ws, stdin=hostile)
        wait_until(lambda: _verifying(ws, "evil-6") or None, 300, "evil-6 to be verified")
        began = time.monotonic()
        for doc in (quick, escaping):
            jarvis("dispatch", "-", "--workspace", ws, stdin=doc)

        def decided() -> bool:
            return all(_state(ws, run)["state"] != "running" for run in ("quick", "escaping"))

        wait_until(decided, 600, "the other runs to be decided", lambda: host.log()[-2000:])
        still = _verifying(ws, "evil-6")
        took = time.monotonic() - began
        figures.add("starve: the others decided after", f"{took:.1f} s; evil-6 verifying: {still}")
        figures.check(still, "the other runs waited for the hostile run's verification")
        for run in ("quick", "escaping"):
            figures.check(_state(ws, run)["state"] == "review_requested", f"{run} did not pass")
        left = _marked(ws)
        figures.add("starve: processes the passed command left", len(left))
        figures.check(not left, f"a criterion command's child outlived it: {left}")
        figures.check(host.stop() == 0, "the host did not stop cleanly")
        figures.check(not _marked(ws), "a criterion command outlived its host")


def big_texts(args: argparse.Namespace, figures: Figures) -> None:
    with workspace("big-text") as ws:
        write_config(ws, lane_concurrency={QUIET: 0, LANE: 0})
        store = SqliteStore(ws / "jarvis.db")
        dispatch(store, "quiet-1", lane=QUIET)
        for n in range(8):
            dispatch(store, f"victim-{n}", lane=LANE)
        store.close()
        sizes = [kb for kb in (10, 20, 40, 80, 150, 300) if kb <= args.max_kb]
        stem = ("Update src/app.py and make sure `pytest -q` passes; the file docs/x.md must "
                "contain 'hello'. e.g. see notes/example.md. ")  # fmt: skip
        locked = 0
        for n, kb in enumerate(sizes):
            text = (stem * (kb * 1024 // len(stem) + 1))[: kb * 1024]
            doc = json.dumps(dispatch_doc(f"big-{kb}", input=text + " sim:ok")).encode()
            result: dict[str, Any] = {}

            def submit(doc: bytes = doc, result: dict[str, Any] = result) -> None:
                began = time.monotonic()
                result["ran"] = jarvis("dispatch", "-", "--workspace", ws, stdin=doc, timeout=900)
                result["took"] = time.monotonic() - began

            thread = threading.Thread(target=submit)
            thread.start()
            time.sleep(0.3)  # the dispatch is under way: now another operator acts
            cancel = jarvis("cancel", f"victim-{n}", "--reason", "attack", "--json",
                            "--workspace", ws)  # fmt: skip
            thread.join()
            locked += b"locked" in cancel.stdout + cancel.stderr
            figures.check(cancel.code == 0, f"{kb} KB: a concurrent cancel failed: "
                          f"{cancel.stdout[-200:]!r}")  # fmt: skip
            ran = result["ran"]
            figures.add(f"text: jarvis dispatch of {kb} KB", f"exit {ran.code}, "
                        f"{result['took']:.1f} s")  # fmt: skip
        figures.add("text: concurrent cancels that met 'database is locked'", locked)
        figures.check(locked == 0, "an operator met 'database is locked'")
        # Through a lane's tasks/ folder while progress flows.
        host = HostProcess(ws)
        host.wait_started()
        trickle = Trickle(ws, "quiet-1")
        trickle.start()
        time.sleep(1)
        tasks = ws / "data" / "ipc" / "main" / "tasks"
        tasks.mkdir(parents=True, exist_ok=True)
        text = (stem * 600)[: 60 * 1024]
        atomic_write_json(tasks / "big.json", {"type": "dispatch", "target": LANE,
                          "payload": dispatch_doc("big-task", input=text)})  # fmt: skip
        conn = connect(ws)
        wait_until(lambda: rows(conn, "SELECT 1 FROM runs WHERE run_id = 'big-task'") or
                   (ws / "data" / "ipc" / "errors").exists() and
                   any((ws / "data" / "ipc" / "errors").iterdir()), 900,
                   "the big task to be taken in or refused")  # fmt: skip
        conn.close()
        time.sleep(1)
        trickle.stop.set()
        trickle.join()
        figures.add("text: worst ingestion lag around a 60 KB task file", f"{trickle.worst:.2f} s")
        figures.check(trickle.worst < 10, "ingestion stalled behind a big dispatch")
        host.stop()


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("denial of service through acceptance criteria")
    patterns(args, figures)
    starvation(args, figures)
    big_texts(args, figures)
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-kb", type=int, default=150)
    p.add_argument(
        "--pattern-timeout", type=float, default=None,
        help="[criteria] pattern_timeout_s for the backtracking pattern (default: the product's)",
    )  # fmt: skip
    return p


if __name__ == "__main__":
    main(attack, parser())
