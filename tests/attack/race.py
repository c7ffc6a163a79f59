"""Operators racing each other: one effect per decision, a clear refusal for everyone else.

``--workers`` real OS processes (spawned, each with its own store connection) act together on
one run per round: all of them open the store, wait on a barrier, then call the engine at the same
instant, each with the version it read, as the console does. A round's run is ``failed``
(retry and override race), ``review_requested`` (approvals race), ``queued`` or ``running``
(cancels race). Exactly one call per round may succeed; every other must be refused with a
code; the run's audit trail must hold exactly one operator row for the round.

    .venv/bin/python -m tests.attack.race [--rounds 200] [--workers 8]
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
from collections import Counter
from multiprocessing.synchronize import Barrier
from typing import Any

from core import operator_actions
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.attack.kit import Figures, main, workspace
from tests.core.store_helpers import make_run

KINDS = [RunState.FAILED, RunState.REVIEW_REQUESTED, RunState.QUEUED, RunState.RUNNING]


def _act(store: SqliteStore, kind: str, run_id: str, worker: int, version: int) -> Any:
    who = f"operator-{worker}"
    if kind == RunState.FAILED.value:
        if worker % 2:
            return operator_actions.retry(store, run_id, who, expected_version=version)
        return operator_actions.override(store, run_id, who, "raced", expected_version=version)
    if kind == RunState.REVIEW_REQUESTED.value:
        return operator_actions.approve(store, run_id, who, expected_version=version)
    # Half the cancels carry no version, as a script's `jarvis cancel` would.
    expected = version if worker % 2 else None
    return operator_actions.cancel(store, run_id, who, "raced", expected_version=expected)


def operator(db: str, plan: list[tuple[str, str]], worker: int, barrier: Barrier, out: Any) -> None:
    store = SqliteStore(db, migrate=False)
    try:
        for run_id, kind in plan:
            run = store.get_run(run_id)
            assert run is not None
            barrier.wait(60)
            try:
                result = _act(store, kind, run_id, worker, int(run["version"]))
                code = "ok" if result.ok else result.refusal.code
            except Exception as exc:  # an exception is itself a finding, not a crash of the attack
                code = f"exception:{type(exc).__name__}:{exc}"
            out.put((run_id, worker, code))
    finally:
        store.close()


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("race (operators at the same instant)")
    with workspace("race") as ws:
        db = ws / "jarvis.db"
        store = SqliteStore(db)
        plan = []
        for n in range(args.rounds):
            kind = KINDS[n % len(KINDS)]
            run_id = f"race-{n:04d}"
            make_run(store, run_id, kind)
            plan.append((run_id, kind.value))
        store.close()
        ctx = multiprocessing.get_context("spawn")
        barrier = ctx.Barrier(args.workers)
        out: Any = ctx.Queue()
        procs = [
            ctx.Process(target=operator, args=(str(db), plan, w, barrier, out))
            for w in range(args.workers)
        ]
        for proc in procs:
            proc.start()
        results: list[tuple[str, int, str]] = []
        expected = args.rounds * args.workers
        while len(results) < expected:
            try:
                results.append(out.get(timeout=300))
            except queue.Empty:
                figures.fail(f"only {len(results)} of {expected} calls answered")
                break
        for proc in procs:
            proc.join(60)
        by_run: dict[str, list[str]] = {}
        for run_id, _, code in results:
            by_run.setdefault(run_id, []).append(code)
        codes = Counter(code for _, _, code in results)
        store = SqliteStore(db, migrate=False)
        audit = Counter(
            r["run_id"]
            for r in store.rows("SELECT run_id FROM audit WHERE actor LIKE 'operator-%'")
        )
        store.close()
        figures.add("processes", args.workers)
        figures.add("rounds (one run each)", args.rounds)
        figures.add("calls", len(results))
        figures.add("effects", codes["ok"])
        figures.add("refusals", len(results) - codes["ok"])
        figures.add(
            "refusal codes", ", ".join(f"{c} {n}" for c, n in codes.most_common() if c != "ok")
        )
        for run_id, answers in by_run.items():
            if answers.count("ok") != 1:
                figures.fail(f"{run_id}: {answers.count('ok')} effects")
            if audit[run_id] != 1:
                figures.fail(f"{run_id}: {audit[run_id]} operator audit rows")
            broken = [a for a in answers if a.startswith("exception")]
            if broken:
                figures.fail(f"{run_id}: {broken[0]}")
        figures.check(len(by_run) == args.rounds, "some rounds were never answered")
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--workers", type=int, default=8)
    return p


if __name__ == "__main__":
    main(attack, parser())
