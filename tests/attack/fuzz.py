"""Mutated inputs into every parser and validator: a verdict for each, never an exception.

The seeds are every bundled sample (`sample_runs/`: dispatches, completions, OpenClaw requests
and patches, versioned records, planner output). Each input is a seed mutated a few times: bytes
flipped, inserted, deleted or repeated; two seeds spliced; a JSON node replaced by a hostile value
(huge numbers, deep nesting, control characters, lone surrogates, long strings). Every input goes
through every entry point that takes text from outside. An exception of any kind is a finding;
so is a single call that takes more than ``--slow`` seconds (a sign of superlinear work).

    .venv/bin/python -m tests.attack.fuzz [--inputs 93000] [--seed fuzz]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.contracts.completion import evaluate_completion, extract_completion
from core.contracts.diffparse import parse_diff
from core.contracts.dispatch_kinds import validate_any_dispatch
from core.contracts.fingerprint import normalize_url
from core.contracts.openclaw_request import validate_request
from core.contracts.planner import parse_planner_output
from core.contracts.records import validate_record
from core.contracts.secrets_scan import mask_secrets, scan_text
from core.criteria.extract import extract_criteria
from core.ipc.payloads import parse_ack, parse_message, parse_progress, parse_task
from tests.attack.kit import ROOT, Figures, main

DISPATCH: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)

HOSTILE: list[Any] = [
    2**70, -(2**63) - 1, 1e308, -0.0, "", " ", "\x00", "\x1b]0;x\x07", "\ud800", "\u202e",
    "a" * 70_000, "../../etc/passwd", "sim:hang", [[[[[[[[]]]]]]]], {"": {"": {}}}, None, True,
    "^(a+)+$", "`rm -rf /`", "<completion>{}</completion>", "sk-ant-api03-" + "x" * 90,
]  # fmt: skip


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


TARGETS: dict[str, Callable[[bytes], object]] = {
    "dispatch": validate_any_dispatch,
    "completion": lambda d: evaluate_completion(DISPATCH, d),
    "completion block": extract_completion,
    "OpenClaw request": validate_request,
    "record": validate_record,
    "planner": parse_planner_output,
    "diff": parse_diff,
    "secret scan": lambda d: (scan_text(_text(d), "f.py"), mask_secrets(_text(d))),
    "criteria extraction": lambda d: extract_criteria(_text(d)),
    "IPC progress": lambda d: parse_progress(d, lane="jarvis-worker-1", run_id="task-1"),
    "IPC ack": parse_ack,
    "IPC task": parse_task,
    "IPC message": parse_message,
    "URL normaliser": lambda d: normalize_url(_text(d)),
}


def seeds() -> list[bytes]:
    found = [p.read_bytes() for p in sorted((ROOT / "sample_runs").rglob("*")) if p.is_file()]
    return [s for s in found if s]


def _mutate_json(rng: random.Random, data: bytes) -> bytes:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, or nested too deep for the mutator itself
        return data
    holder: Any = doc
    for _ in range(rng.randint(1, 4)):
        if isinstance(holder, dict) and holder:
            key = rng.choice(list(holder))
            if rng.random() < 0.4 or not isinstance(holder[key], dict | list):
                holder[key] = rng.choice(HOSTILE)
                break
            holder = holder[key]
        elif isinstance(holder, list) and holder:
            index = rng.randrange(len(holder))
            if rng.random() < 0.4 or not isinstance(holder[index], dict | list):
                holder[index] = rng.choice(HOSTILE)
                break
            holder = holder[index]
        else:
            break
    return json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def mutate(rng: random.Random, corpus: list[bytes]) -> bytes:
    data = bytearray(rng.choice(corpus))
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(7)
        at = rng.randrange(len(data) + 1)
        if kind == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif kind == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == 2:
            end = min(len(data), at + rng.randint(1, 64))
            del data[at:end]
        elif kind == 3:
            end = min(len(data), at + rng.randint(1, 16))
            data[at:at] = data[at:end] * rng.randint(2, 2000)
        elif kind == 4:
            other = rng.choice(corpus)
            cut = rng.randrange(len(other) + 1)
            data = data[:at] + bytearray(other[cut:])
        elif kind == 5:
            data = bytearray(_mutate_json(rng, bytes(data)))
        else:
            data[at:at] = rng.choice(["\x1b[2J", "\u202e", "\ud800", "\r\n", "```", "`"]).encode(
                "utf-8", "surrogatepass"
            )
    return bytes(data[:200_000])


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("fuzz (mutated samples into every parser)")
    rng = random.Random(args.seed)
    corpus = seeds()
    names = list(TARGETS)
    raised: Counter[str] = Counter()
    slowest: tuple[float, str, int] = (0.0, "", 0)
    started = time.monotonic()
    for n in range(args.inputs):
        data = mutate(rng, corpus)
        name = names[n % len(names)]
        began = time.perf_counter()
        try:
            TARGETS[name](data)
        except Exception as exc:  # the finding this attack exists for
            raised[name] += 1
            if raised[name] <= 3:
                sample = Path(f"/tmp/jarvis-fuzz-{name.replace(' ', '-')}-{n}.bin")
                sample.write_bytes(data)
                where = traceback.extract_tb(exc.__traceback__)[-1]
                figures.fail(f"{name}: {type(exc).__name__} at {where.filename}:{where.lineno} "
                             f"(input kept in {sample})")  # fmt: skip
        took = time.perf_counter() - began
        if took > slowest[0]:
            slowest = (took, name, len(data))
        if took > args.slow:
            figures.fail(f"{name}: one input of {len(data):,} bytes took {took:.1f} s")
    elapsed = time.monotonic() - started
    figures.add("inputs", args.inputs)
    figures.add("entry points", len(TARGETS))
    figures.add("seeds", len(corpus))
    figures.add("exceptions", sum(raised.values()))
    figures.add("slowest call", f"{slowest[0] * 1000:.0f} ms ({slowest[1]}, {slowest[2]:,} bytes)")
    figures.add("inputs per second", f"{args.inputs / elapsed:,.0f}")
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inputs", type=int, default=93_000)
    p.add_argument("--slow", type=float, default=5.0, help="seconds one call may take")
    p.add_argument("--seed", default=os.environ.get("JARVIS_ATTACK_SEED", "fuzz"))
    return p


if __name__ == "__main__":
    main(attack, parser())
