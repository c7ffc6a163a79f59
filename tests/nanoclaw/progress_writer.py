"""Progress events and steer acks, written byte for byte as NanoClaw's worker writes them.

The worker (``container/agent-runner/src/index.ts`` at 0779be9, ``writeProgressEvent`` and
``checkForSteering``; /work/notes/nanoclaw-formats.md, section 4):

- a progress event is ``JSON.stringify`` of an object with the keys ``kind, run_id,
  group_folder, timestamp, phase, summary, tool_used, seq`` in that order (compact, no trailing
  newline); ``tool_used`` is absent when no tool was used; ``phase`` is ``using <Tool>`` or
  ``thinking``; ``summary`` is ``Tool: <Tool>``, else the first 100 characters of the text, else
  ``Working...``;
- its file is ``progress/<run_id>/<timestamp with ':' and '.' as '-'>-<seq>.json``;
- ``seq`` starts at 0 for each query (the first prompt, each follow-up, each steer);
- the ack is ``{"steer_id":…,"acked_at":…}`` in ``steer/<run_id>.acked.json``;
- both are written in place with ``writeFileSync`` (open with truncation, write, close): no temp
  file, so a reader can find them empty or half-written. `write_in_place` can cut a write in two
  and do something in between, to be that reader's bad luck on purpose.

Only the standard library is used: the host runs this file as a worker (``worker``), and tests
run it as a separate writing process (``stress``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: ``writeFileSync``'s flags: ``'w'``.
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
#: How long the worker waits for a steer before it gives up (it is a hang guard only).
STEER_WAIT_S = 120.0


def iso(epoch_ms: int) -> str:
    """``new Date(ms).toISOString()``: UTC, always milliseconds, ``Z``."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def compact(doc: Mapping[str, Any]) -> bytes:
    """``JSON.stringify(doc)``: no spaces, keys in insertion order, non-ASCII kept as is."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def progress_event(
    run_id: str,
    group_folder: str,
    timestamp: str,
    seq: int,
    *,
    tool: str | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """The event the worker writes for one assistant message (a tool use, or text)."""
    doc: dict[str, Any] = {
        "kind": "worker_progress",
        "run_id": run_id,
        "group_folder": group_folder,
        "timestamp": timestamp,
        "phase": f"using {tool}" if tool else "thinking",
        "summary": f"Tool: {tool}" if tool else (text[:100] if text else "Working..."),
    }
    if tool:
        doc["tool_used"] = tool
    doc["seq"] = seq
    return doc


def progress_name(timestamp: str, seq: int) -> str:
    """The event's file name: its timestamp with ``:`` and ``.`` as ``-``, then its seq."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}-{seq}.json"


def ack(steer_id: str, acked_at: str) -> dict[str, Any]:
    return {"steer_id": steer_id, "acked_at": acked_at}


def write_in_place(
    path: Path, data: bytes, *, cut: int | None = None, between: Callable[[], None] | None = None
) -> None:
    """Write ``data`` to ``path`` as ``writeFileSync`` does: truncate, write, close.

    With ``cut``, the first ``cut`` bytes are written (and are on disk: the write is
    unbuffered) and ``between`` is called before the rest is written.
    """
    fd = os.open(path, _WRITE_FLAGS, 0o644)
    try:
        parts = [data] if cut is None else [data[:cut], data[cut:]]
        for n, part in enumerate(parts):
            if n and between is not None:
                between()
            view = memoryview(part)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


@dataclass
class Writer:
    """One run's worker: its queries numbered from 0 each, its clock never repeating a ms.

    The real worker writes at most one event per 5 s, so two of its events never share a
    millisecond; writing thousands a second, this one moves its clock on by 1 ms instead.
    """

    progress_dir: Path
    run_id: str
    group_folder: str
    seq: int = 0
    last_ms: int = 0
    written: list[dict[str, Any]] = field(default_factory=list)
    """What was written, in order: name, seq, summary, tool_used."""

    def new_query(self) -> None:
        self.seq = 0

    def now(self) -> str:
        self.last_ms = max(int(time.time() * 1000), self.last_ms + 1)
        return iso(self.last_ms)

    def event(
        self,
        *,
        tool: str | None = None,
        text: str | None = None,
        cut: float | None = None,
        between: Callable[[], None] | None = None,
    ) -> Path:
        """Write the query's next event; ``cut`` (a fraction) writes it in two parts."""
        timestamp = self.now()
        doc = progress_event(
            self.run_id, self.group_folder, timestamp, self.seq, tool=tool, text=text
        )
        path = self.progress_dir / progress_name(timestamp, self.seq)
        self.progress_dir.mkdir(parents=True, exist_ok=True)
        data = compact(doc)
        at = None if cut is None else min(max(1, int(len(data) * cut)), len(data) - 1)
        write_in_place(path, data, cut=at, between=between)
        self.written.append(
            {"name": path.name, "seq": self.seq, "summary": doc["summary"],
             "tool_used": doc.get("tool_used")}
        )  # fmt: skip
        self.seq += 1
        return path


# -- as a worker the host starts ------------------------------------------------------------------


def _pause(seconds: float) -> Callable[[], None]:
    return lambda: time.sleep(seconds)


def _wait_for(path: Path, timeout: float) -> bytes | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            time.sleep(0.05)
            continue
        if data:
            return data
        time.sleep(0.05)
    return None


def worker_steps(first_query: int = 3, second_query: int = 2) -> Iterator[tuple[int, int]]:
    """(query, step) of the events the worker writes: the first query, then the steer's."""
    for step in range(first_query):
        yield 1, step
    for step in range(second_query):
        yield 2, step


def worker(env: Mapping[str, str]) -> int:
    """A run as the real worker plays it, with worker steering on.

    Query 1 writes three events (seq 0, 1, 2), the second cut in two with a pause, so the host
    may read it half-written; the worker then waits for its steer, acknowledges it in place (cut
    in two as well), removes the steer file and starts query 2 with the steer as its prompt:
    two events, seq 0 and 1 again. It prints no completion.
    """
    writer = Writer(Path(env["JARVIS_PROGRESS_DIR"]), env["JARVIS_RUN_ID"], env["JARVIS_LANE"])
    steer_file, ack_file = Path(env["JARVIS_STEER_FILE"]), Path(env["JARVIS_ACK_FILE"])
    for query, step in worker_steps():
        if query == 2 and step == 0:
            raw = _wait_for(steer_file, STEER_WAIT_S)
            if raw is None:
                print("no steer came", file=sys.stderr)
                return 3
            steer = json.loads(raw)
            data = compact(ack(steer["steer_id"], writer.now()))
            write_in_place(ack_file, data, cut=len(data) // 2, between=_pause(0.2))
            steer_file.unlink()
            writer.new_query()
        tool = "Bash" if step % 2 else None
        text = f"query {query}, step {step}: reading src/server.ts"
        cut = 0.3 if (query, step) == (1, 1) else None
        writer.event(tool=tool, text=text, cut=cut, between=_pause(0.2))
    return 0


# -- as a separate process writing many events ----------------------------------------------------


def stress(args: argparse.Namespace) -> int:
    """``--events`` events over the ``--run`` runs (``lane:run_id``), written as fast as the
    disk takes them, each run in queries of 1 to ``--max-query`` events (seq from 0 in each).

    Every event is written in two parts at a random cut; every ``--pause-every``-th waits
    ``--pause-ms`` between its parts, long enough for a watching reader to find it
    half-written. What was written, in order per run, goes to ``--manifest`` at the end.
    """
    rng = random.Random(args.seed)
    ipc = Path(args.ipc)
    writers: list[Writer] = []
    left: list[int] = []
    for spec in args.run:
        lane, run_id = spec.split(":", 1)
        writers.append(Writer(ipc / lane / "progress" / run_id, run_id, lane))
        left.append(0)
    for n in range(args.events):
        left[n % len(writers)] += 1
    query_left = [0] * len(writers)
    pause = _pause(args.pause_ms / 1000)
    for n in range(args.events):
        choices = [i for i, count in enumerate(left) if count]
        i = rng.choice(choices)
        left[i] -= 1
        writer = writers[i]
        if query_left[i] == 0:
            writer.new_query()
            query_left[i] = rng.randint(1, args.max_query)
        query_left[i] -= 1
        tool = rng.choice([None, "Bash", "Read", "Edit"])
        text = f"event {n} of run {writer.run_id}: " + "x" * rng.randint(0, 120)
        slow = args.pause_every and n % args.pause_every == 0
        writer.event(tool=tool, text=text, cut=rng.random(), between=pause if slow else None)
    manifest = {w.run_id: {"lane": w.group_folder, "events": w.written} for w in writers}
    temp = Path(args.manifest).with_name(f".{Path(args.manifest).name}.tmp")
    temp.write_text(json.dumps(manifest), "utf-8")
    os.replace(temp, args.manifest)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("worker", help="play one run as the host's worker (JARVIS_* variables)")
    many = commands.add_parser("stress", help="write many events for several runs")
    many.add_argument("--ipc", required=True, help="the IPC root, data/ipc")
    many.add_argument("--run", action="append", required=True, metavar="LANE:RUN_ID")
    many.add_argument("--events", type=int, required=True)
    many.add_argument("--max-query", type=int, default=40)
    many.add_argument("--pause-every", type=int, default=50)
    many.add_argument("--pause-ms", type=float, default=20)
    many.add_argument("--seed", type=int, default=15)
    many.add_argument("--manifest", required=True)
    args = parser.parse_args(argv)
    if args.command == "worker":
        return worker(os.environ)
    return stress(args)


if __name__ == "__main__":
    sys.exit(main())
