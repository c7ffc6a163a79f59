"""``jarvis logs RUN_ID``: the end of a worker's log, or the log as the worker writes it.

The lines come from `core.worker_logs`, which reads from the end of the log (never the whole of
it), follows it across the host's renames, masks the secrets in each line and cuts a long one.
They are worker text: each is written inert (`shown_line`: controls escaped, tabs expanded), so
nothing a worker wrote acts on the terminal, and markup is shown as typed (nothing here reads
markup). With ``--json`` the lines are JSON strings, escaped as every JSON string this command
line writes is (`output.dumps`).

What is ours and not the log's (which run, attempt and stream; that earlier lines are not shown;
a note while following) goes to stderr, so stdout holds the log's lines and nothing else.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable

from core.service.fleet import Fleet
from core.service.logs import (
    LogFiles,
    LogLine,
    LogRefusal,
    Stream,
    follow_log,
    shown_line,
    tail_log,
)
from jarvis_cli.inputs import UsageError
from jarvis_cli.opening import open_store
from jarvis_cli.output import console, dumps, emit_json, verdict_line, write_error


def run(args: argparse.Namespace) -> int:
    if args.lines < 0:
        raise UsageError("usage", "--lines must be 0 or more.")
    if args.attempt is not None and args.attempt < 1:
        raise UsageError("usage", "--attempt must be 1 or more (1 is the first attempt).")
    stream: Stream = "stderr" if args.stderr else "stdout"
    with open_store(args, access="read") as store:
        found = store.find_log(args.run_id, attempt=args.attempt, stream=stream)
        if isinstance(found, LogRefusal):
            if args.json:
                emit_json({"run_id": args.run_id, "refusal": found.to_json()})
            else:
                console().print(verdict_line(False, found.code, found.message))
            return 1
        if args.follow:
            return _follow(args, store, found)
    tail = tail_log(found, args.lines)
    if args.json:
        emit_json({**_head(found), "lines": tail.lines, "truncated": tail.truncated})
        return 0
    _say_which(found, args.lines, tail.truncated)
    sys.stdout.write("".join(shown_line(line) + "\n" for line in tail.lines))
    sys.stdout.flush()
    return 0


def _head(log: LogFiles) -> dict[str, object]:
    return {"run_id": log.run_id, "attempt": log.attempt, "stream": log.stream}


def _say_which(log: LogFiles, lines: int, truncated: bool) -> None:
    attempts = f"attempt {log.attempt}"
    if len(log.attempts) > 1:
        attempts += f" of {', '.join(str(a) for a in log.attempts)}"
    note = f" (its last {lines:,} line{'s' if lines != 1 else ''})" if truncated else ""
    write_error(f"jarvis: run {log.run_id}, {attempts}, {log.stream}{note}")


def _running(args: argparse.Namespace, store: Fleet, log: LogFiles) -> Callable[[], bool]:
    """Whether the attempt still runs, asked of a store that sees other processes' commits."""

    def running() -> bool:
        if not store.immutable:
            return store.attempt_running(log)
        # Opened as the file was (no writer then): only a new open sees a host's commits since.
        with open_store(args, access="read") as fresh:
            return fresh.attempt_running(log)

    return running


def _follow(args: argparse.Namespace, store: Fleet, log: LogFiles) -> int:
    """The last lines, then each line as written, until the attempt has stopped and its log
    stopped growing, or ctrl-c (which ends it quietly, exit 0)."""
    if threading.current_thread() is threading.main_thread():
        # A parent that ignored SIGINT (a script's background job) must not make ctrl-c
        # unable to end a follow.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    running = _running(args, store, log)
    head = _head(log)
    out = sys.stdout
    if not args.json:
        write_error(f"jarvis: run {log.run_id}, attempt {log.attempt}, {log.stream}, following")
    lines = follow_log(log, lines=args.lines, done=lambda: not running(), poll=args.poll)
    try:
        for line in lines:
            _write_line(head, line, as_json=args.json)
            out.flush()
    except KeyboardInterrupt:
        return 0
    finally:
        lines.close()
    return 0


def _write_line(head: dict[str, object], line: LogLine, *, as_json: bool) -> None:
    if as_json:
        key = "note" if line.note else "line"
        sys.stdout.write(dumps({**head, key: line.text}) + "\n")
    elif line.note:
        write_error(f"jarvis: {line.text}")
    else:
        sys.stdout.write(shown_line(line.text) + "\n")
