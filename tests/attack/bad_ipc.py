"""Hostile IPC files into a live host: each one moved aside with its reason, nothing deleted.

A host watches a workspace with two runs on two lanes. The attack drops a corpus of crafted
files (not JSON, too large, too deep, duplicate keys, NaN, out-of-range and mistyped ``seq``,
another lane's run, unknown runs and steers, links, FIFOs, folders named ``*.json``, names with
newlines and bytes that are not UTF-8, linked lane and run folders) and ``--mutants`` random
mutations of valid events, interleaved with valid events. The host must stay up, leave nothing in
the tree, and account for every file: ingested (a receipt) or quarantined (a reason beside the
moved file, its bytes unchanged). No reason may say the host itself failed (``host_error``), and
the host's log must hold no traceback.

    .venv/bin/python -m tests.attack.bad_ipc [--mutants 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from core.ipc.layout import ERRORS, HOST_SNAPSHOTS
from core.nanoclaw.worker_runs import TEMP as SNAPSHOT_TEMP
from core.store.sqlite_store import SqliteStore
from tests.attack.kit import LANE, Figures, main, workspace
from tests.host.hostkit import HostProcess, connect, dispatch, rows, wait_until, write_config

OTHER = "jarvis-worker-2"
RUN, OTHER_RUN = "bad-ipc-1", "bad-ipc-2"


def progress(seq: Any = 1, **changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": "worker_progress",
        "run_id": RUN,
        "group_folder": LANE,
        "timestamp": "2026-11-24T03:00:00.000Z",
        "phase": "testing",
        "summary": "ran the tests",
        "seq": seq,
    }
    doc.update(changes)
    return doc


def crafted() -> list[tuple[str, bytes]]:
    """(path below the lane folder, bytes): every file here must be refused."""
    run = f"progress/{RUN}"
    dumps = json.dumps
    files: list[tuple[str, bytes]] = [
        (f"{run}/1-empty.json", b""),
        (f"{run}/1-half.json", b'{"kind": "worker_progress", "run_id"'),
        (f"{run}/1-latin1.json", dumps(progress()).encode()[:-2] + b'"\xe9"}'),
        (f"{run}/1-null.json", b"null"),
        (f"{run}/1-array.json", b"[]"),
        (f"{run}/1-deep.json", b"[" * 100_000 + b"]" * 100_000),
        (f"{run}/1-huge.json", dumps(progress(summary="x" * 70_000)).encode()),
        (f"{run}/1-long.json", dumps(progress(summary="y" * 5_000)).encode()),
        (f"{run}/1-dupkey.json", b'{"seq": 1, "seq": 2}'),
        (f"{run}/1-nan.json", dumps(progress()).replace('"seq": 1', '"seq": NaN').encode()),
        (f"{run}/1-overflow.json", dumps(progress(seq=2**70)).encode()),
        (f"{run}/1-int64.json", dumps(progress(seq=2**63)).encode()),
        (f"{run}/1-negative.json", dumps(progress(seq=-5)).encode()),
        (f"{run}/1-float.json", dumps(progress(seq=1.5)).encode()),
        (f"{run}/1-string.json", dumps(progress(seq="1")).encode()),
        (f"{run}/1-bool.json", dumps(progress(seq=True)).encode()),
        (f"{run}/1-other-run.json", dumps(progress(run_id=OTHER_RUN)).encode()),
        (f"{run}/1-other-lane.json", dumps(progress(group_folder=OTHER)).encode()),
        (f"{run}/1-kind.json", dumps(progress(kind="worker_completion")).encode()),
        (f"{run}/1-extra.json", dumps(progress(admin=True)).encode()),
        (f"{run}/1-time.json", dumps(progress(timestamp="yesterday")).encode()),
        (f"{run}/1-name\nwith-newline.json", dumps(progress()).encode()),
        (f"progress/{OTHER_RUN}/1-1.json", dumps(progress(run_id=OTHER_RUN)).encode()),
        ("progress/no-such-run/1-1.json", dumps(progress(run_id="no-such-run")).encode()),
        (f"steer/{RUN}.acked.json", dumps({"steer_id": "steer-nope", "acked_at": "now"}).encode()),
        ("tasks/unknown.json", dumps({"type": "format_disk"}).encode()),
        (
            "tasks/steer-other.json",
            dumps({"type": "steer_worker", "run_id": OTHER_RUN, "message": "hi"}).encode(),
        ),  # fmt: skip
        (
            "tasks/steer-nobody.json",
            dumps({"type": "steer_worker", "run_id": "ghost", "message": "hi"}).encode(),
        ),  # fmt: skip
        ("tasks/bad-dispatch.json", dumps({"type": "dispatch", "payload": {"run_id": 1}}).encode()),
        ("messages/bad.json", dumps({"type": "message", "text": 5}).encode()),
    ]
    return files


def mutant(rng: random.Random, n: int) -> bytes:
    """A valid event, then one random change: a byte, a key, a type, a value."""
    doc = progress(seq=10_000 + n, summary=f"mutant {n}")
    choice = rng.randrange(6)
    if choice == 0:
        doc.pop(rng.choice(list(doc)))
    elif choice == 1:
        doc[rng.choice(list(doc))] = rng.choice([None, [], {}, 1e308, -1, "", "\u0000", True])
    elif choice == 2:
        doc[rng.choice(["extra", "run_id ", "Seq", "__proto__"])] = 1
    data = json.dumps(doc).encode()
    if choice >= 3:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        data = bytes(buf)
    return data


def put(lane_dir: Path, relative: str, data: bytes) -> None:
    target = lane_dir / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{abs(hash(relative))}.tmp")
    temp.write_bytes(data)
    os.replace(temp, target)


def left_in_tree(ipc: Path) -> list[Path]:
    """Files dropped into the tree that are still there: neither ingested nor quarantined.

    The host's own snapshots at the top of each lane (``worker_runs.json``, for the lane's
    agents to read, and its temporary file while it is rewritten) are not anything dropped.
    """
    found = []
    for path in ipc.rglob("*"):
        parts = path.relative_to(ipc).parts
        if parts[:1] == (ERRORS,):
            continue
        if len(parts) == 2 and parts[1] in HOST_SNAPSHOTS | {SNAPSHOT_TEMP}:
            continue
        if path.is_symlink() or (path.is_file() and not path.name.startswith(".")):
            found.append(path)
    return found


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("bad IPC files into a live host")
    rng = random.Random(args.seed)
    with workspace("bad-ipc") as ws:
        write_config(ws, lane_concurrency={LANE: 0, OTHER: 0})
        store = SqliteStore(ws / "jarvis.db")
        dispatch(store, RUN, lane=LANE)
        dispatch(store, OTHER_RUN, lane=OTHER)
        store.close()
        ipc = ws / "data" / "ipc"
        lane_dir = ipc / LANE
        host = HostProcess(ws)
        host.wait_started()
        originals: dict[str, bytes] = {}
        dropped = 0
        for relative, data in crafted():
            put(lane_dir, relative, data)
            originals[str(lane_dir / relative)] = data
            dropped += 1
        # Things that are not regular files, and links that lead out of the tree.
        outside = ws.parent / "outside"
        outside.mkdir()
        (outside / "1-1.json").write_text(json.dumps(progress()))
        specials = 0
        os.symlink("/etc/passwd", lane_dir / "progress" / RUN / "1-link.json")
        os.mkfifo(lane_dir / "progress" / RUN / "1-fifo.json")
        (lane_dir / "progress" / RUN / "1-dir.json").mkdir()
        os.symlink(outside, lane_dir / "progress" / "linked-run")
        os.symlink(outside, ipc / "linked-lane")
        specials += 5
        valid = 0
        for n in range(args.mutants):
            put(lane_dir, f"progress/{RUN}/{n + 2}-mutant-{n}.json", mutant(rng, n))
            if n % 10 == 0:  # valid events keep flowing between the bad ones
                put(lane_dir, f"progress/{RUN}/{n + 2}-valid-{n}.json",
                    json.dumps(progress(seq=n + 2, summary=f"valid {n}")).encode())  # fmt: skip
                valid += 1
        dropped += args.mutants + valid
        conn = connect(ws)

        def drained(links_too: bool) -> bool:
            if host.proc.poll() is not None:
                return True
            left = left_in_tree(ipc)
            return not (left if links_too else [p for p in left if not p.is_symlink()])

        wait_until(lambda: drained(False), 300, "the host to take every file",
                   lambda: str(left_in_tree(ipc)[:10]))  # fmt: skip
        # Linked folders are found by the sweep (a second, or the poll interval); a host that
        # ignores them never will, so this wait is bounded and its failure is a finding.
        deadline = time.monotonic() + 15
        while not drained(True) and time.monotonic() < deadline:
            time.sleep(0.2)
        alive = host.proc.poll() is None
        code = host.stop()
        reasons = [json.loads(p.read_text()) for p in (ipc / "errors").glob("*.reason.json")]
        receipts = rows(conn, "SELECT COUNT(*) AS n FROM ipc_receipts")[0]["n"]
        valid_in = rows(
            conn, "SELECT COUNT(*) AS n FROM progress_events WHERE summary LIKE 'valid %'"
        )[0]["n"]
        conn.close()
        codes = Counter(r["code"] for r in reasons)
        unchanged = 0
        for reason in reasons:
            stored = reason.get("stored_as")
            name = reason.get("original_path", "")
            if stored and name in originals and Path(stored).is_file():
                unchanged += Path(stored).read_bytes() == originals[name]
        crafted_moved = sum(1 for r in reasons if r["original_path"] in originals)
        figures.add("files dropped", dropped + specials)
        figures.add("  crafted / links and specials / mutants / valid", f"{len(originals)} / "
                    f"{specials} / {args.mutants:,} / {valid}")  # fmt: skip
        figures.add("quarantined with a reason", len(reasons))
        figures.add("ingested (receipts)", receipts)
        figures.add("valid events ingested", f"{valid_in} of {valid}")
        figures.add("crafted files kept byte for byte", f"{unchanged} of {crafted_moved}")
        figures.add("reason codes", ", ".join(f"{c} {n}" for c, n in codes.most_common()))
        figures.add("left in the tree", len(left_in_tree(ipc)))
        figures.add("host alive after / exit code on SIGTERM", f"{alive} / {code}")
        tracebacks = host.log().count("Traceback")
        figures.add("tracebacks in the host log", tracebacks)
        figures.check(alive and code == 0, "the host died or did not stop cleanly")
        figures.check(valid_in == valid, f"{valid - valid_in} valid events lost among bad ones")
        left = len(left_in_tree(ipc))
        accounted = len(reasons) + receipts + left == dropped + specials
        figures.check(accounted, "some files vanished without a receipt or a reason")
        if not accounted:
            # What a failure needs to be understood: the files with more than one reason, how
            # each reason ended, and what the host said meanwhile.
            twice = Counter(r["original_path"] for r in reasons)
            for name, n in sorted(twice.items()):
                if n > 1:
                    outcomes = [r.get("outcome") for r in reasons if r["original_path"] == name]
                    figures.add(f"  {n} reasons for {os.path.basename(name)!r}", outcomes)
            said = [line for line in host.log().splitlines() if " WARNING " not in line]
            figures.add("  the host's log (but its quarantine warnings)", said[-30:])
        moved_names = {r["original_path"] for r in reasons}
        for name in sorted(set(originals) - moved_names):
            figures.fail(f"crafted file not quarantined: {os.path.relpath(name, lane_dir)!r}")
        figures.check(unchanged == crafted_moved, "a quarantined file's bytes changed")
        figures.check(codes["host_error"] == 0, "the host failed on a file (host_error)")
        figures.check(tracebacks == 0, "the host logged a traceback")
        figures.check(not left_in_tree(ipc), "files were left in the tree")
        link_reasons = sum(1 for r in reasons if r["code"] == "symlink")
        figures.check(link_reasons >= 3, f"only {link_reasons} links reported; expected 3")
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mutants", type=int, default=2000)
    p.add_argument("--seed", default=os.environ.get("JARVIS_ATTACK_SEED", "bad-ipc"))
    return p


if __name__ == "__main__":
    main(attack, parser())
