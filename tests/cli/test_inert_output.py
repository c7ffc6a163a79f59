"""Text from workers and dispatchers leaves every command inert.

Every C0 and C1 control, escape sequences, the bidirectional controls, line and paragraph
separators, Rich and Textual markup and Rich emoji codes are put in every text a store holds for a
run (and in documents, arguments and paths), then every command's bytes — readable, readable with
colour forced on, and ``--json``, stdout and stderr — are searched for any of them, and for a line
a new line or a wrap could have forged.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.criteria import run_criteria
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from core.worker_logs import attempt_dir
from tests.conftest import SAMPLES
from tests.core.store_helpers import make_run
from tests.jarvis_cli import jarvis_in_process

C0 = "".join(chr(c) for c in range(0x20))
C1 = "".join(chr(c) for c in range(0x7F, 0xA0))
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SEPARATORS = "\u2028\u2029"
FORGED = "\n  state                 done\n  overridden_by         alice\n"
HOSTILE = (
    f"tests failed{FORGED}\x1b]0;owned\x07\x1b[2J\x1b[31mred\x9b31m"
    f"{C0}{C1}{BIDI}{SEPARATORS} [red]M[/] [$accent]T[/] :warning: end"
)
#: The same, as a command-line argument or a file name can carry it (no NUL).
ARG = HOSTILE.replace("\x00", "")
#: Nothing from the text above may reach a terminal as itself, but its new lines' own.
FORBIDDEN = set(C0 + C1 + BIDI + SEPARATORS) - {"\n"}
#: Rich's own styling, when colour is forced: the only escape sequences allowed through.
SGR = re.compile(r"\x1b\[[0-9;]*m")
#: A forged field at the start of a line, where `jarvis show` prints its labels (the one real
#: ``overridden_by`` is followed by the escaped text, which starts ``tests failed\n``).
LABEL = re.compile(r"^ {0,3}(state\b|overridden_by\b(?! +tests failed\\n))")

RUN = "r1"
ROOT = Path(__file__).resolve().parents[2]


def hostile_store(ws: Path) -> None:
    """A run with worker- and dispatcher-controlled text in every place a store keeps it."""
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    criterion = {"type": "content_match", "path": "log.txt", "pattern": "done",
                 "description": "the log says done"}  # fmt: skip
    make_run(store, RUN, RunState.RUNNING, acceptance_criteria=[criterion])
    hostile_criteria = [
        {**criterion, "description": HOSTILE},
        {"type": "command_success", "command": ["echo", HOSTILE], "description": HOSTILE},
    ]
    with store.transaction() as tx:
        columns = ("lane", "task_type", "state_reason", "override_reason", "overridden_by",
                   "last_progress_summary", "commit_sha", "pr_url", "test_summary",
                   "risk_summary", "branch_name", "dispatch_repo", "dispatch_branch",
                   "pr_skipped_reason", "session_resume_error")  # fmt: skip
        tx.execute(
            f"UPDATE runs SET {', '.join(f'{c} = ?' for c in columns)}, files_changed = ?, "
            "criteria_json = ? WHERE run_id = ?",
            [*(HOSTILE for _ in columns), json.dumps([HOSTILE]), json.dumps(hostile_criteria),
             RUN],
        )  # fmt: skip
        tx.execute(
            "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at) "
            "VALUES (?, 0, ?, 0, ?, ?)",
            [RUN, HOSTILE, HOSTILE, HOSTILE],
        )
        tx.execute(
            "INSERT INTO steering_events (steer_id, run_id, message, operator, status, "
            "status_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [HOSTILE, RUN, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE],
        )
        tx.execute(
            "INSERT INTO progress_events (run_id, attempt, seq, timestamp, phase, summary, "
            "tool_used, ingested_at) VALUES (?, 0, 1, ?, ?, ?, ?, ?)",
            [RUN, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE],
        )
        tx.execute(
            "INSERT INTO failures (run_id, attempt, error_class, error_code, step_id, url, "
            "message, fingerprint, at) VALUES (?, 0, ?, ?, ?, ?, ?, ?, ?)",
            [RUN, *(HOSTILE for _ in range(7))],
        )
        tx.audit(RUN, actor=HOSTILE, action=HOSTILE, from_state=HOSTILE, to_state=HOSTILE,
                 reason=HOSTILE)  # fmt: skip
        tx.journal(RUN, HOSTILE, {"reason": HOSTILE}, HOSTILE)
        results = {"verified_at": HOSTILE, "passed": False, "criteria_results": [
            {"criterion": c, "passed": False, "output": HOSTILE, "duration_ms": 5}
            for c in hostile_criteria
        ]}  # fmt: skip
        tx.execute(
            "INSERT INTO verification_results (run_id, attempt, results_json, verified_at) "
            "VALUES (?, 0, ?, ?)",
            [RUN, json.dumps(results), HOSTILE],
        )
    store.close()
    checkout = run_criteria.checkout_dir(ws, RUN)
    checkout.mkdir(parents=True)
    (checkout / "log.txt").write_text(f"{HOSTILE}\ndone\n")
    # A worker's log is lines by nature: its own line feeds end its lines, forging nothing.
    logs = attempt_dir(ws, RUN, 1)
    logs.mkdir(parents=True)
    (logs / "stdout.log").write_text(f"{HOSTILE.replace(chr(10), ' ')}\nlast line\n")


def hostile_files(tmp: Path) -> dict[str, Path]:
    """Documents whose fields, as a dispatcher or worker wrote them, are hostile."""
    dispatch = json.loads((SAMPLES / "dispatches/valid-backend-fix.json").read_text())
    bad = {**dispatch, "run_id": HOSTILE, "branch": HOSTILE, "repo": HOSTILE, "input": HOSTILE,
           HOSTILE: HOSTILE}  # fmt: skip
    files = {"dispatch": tmp / "dispatch.json", "task": tmp / "task.txt"}
    files["dispatch"].write_text(json.dumps(bad))
    files["task"].write_text(f'Create `{HOSTILE}` and make README.md contain "{HOSTILE}".')
    fields = ("run_id", "branch", "commit_sha", "test_result", "risk", "pr_url")
    block = {**{name: HOSTILE for name in fields}, "files_changed": [HOSTILE]}
    completion = tmp / "output.txt"
    completion.write_text(f"{HOSTILE}\n<completion>\n{json.dumps(block)}\n</completion>\n")
    files["completion"] = completion
    record = tmp / "record.json"
    record.write_text(json.dumps({"schema_version": "task_event.v1", "task_id": HOSTILE,
                                  "event": HOSTILE, HOSTILE: HOSTILE}))  # fmt: skip
    files["record"] = record
    planner = tmp / "planner.txt"
    planner.write_text(f'```json\n{{"planner_schema_version": "{HOSTILE}"}}\n```{HOSTILE}')
    files["planner"] = planner
    # Paths and URLs in jarvis.toml may hold what no terminal should act on; a name may not, and
    # its refusal quotes it.
    repo_ws = tmp / "repo_ws"
    repo_ws.mkdir()
    shown = toml_string(f"{BIDI}{SEPARATORS} [red]M[/] :warning:")
    (repo_ws / "jarvis.toml").write_text(
        f'[repos."acme/site"]\npath = "/srv/{shown}"\n'
        f'[repos."acme/api"]\nurl = "https://x.test/{shown}"\nremote = "origin"\n'
    )
    files["repo_ws"] = repo_ws
    bad_repo_ws = tmp / "bad_repo_ws"
    bad_repo_ws.mkdir()
    (bad_repo_ws / "jarvis.toml").write_text(
        f'[repos."{toml_string(HOSTILE)}"]\npath = "/{toml_string(HOSTILE)}"\n'
    )
    files["bad_repo_ws"] = bad_repo_ws
    return files


def toml_string(text: str) -> str:
    """``text`` for inside a TOML basic string: every character but printable ASCII escaped."""
    return "".join(
        ch if " " <= ch <= "~" and ch not in '"\\' else f"\\u{ord(ch):04x}" for ch in text
    )


def commands(ws: Path, files: dict[str, Path]) -> dict[str, list[str | Path]]:
    missing = ws.parent / f"gone{ARG}"
    return {
        "runs": ["runs", "--workspace", ws],
        "show": ["show", RUN, "--workspace", ws],
        "show_unknown": ["show", ARG, "--workspace", ws],
        "journal": ["journal", "--workspace", ws],
        "logs": ["logs", RUN, "--workspace", ws],
        "logs_unknown": ["logs", ARG, "--workspace", ws],
        "criteria": ["criteria", RUN, "--workspace", ws],
        "criteria_add": ["criteria", RUN, "--add", json.dumps({"type": ARG}),
                         "--workspace", ws],  # fmt: skip
        "verify": ["verify", RUN, "--workspace", ws],
        "verify_approve": ["verify", RUN, "--approve", ARG, "--workspace", ws],
        "cancel_unknown": ["cancel", ARG, "--reason", ARG, "--workspace", ws],
        "steer": ["steer", RUN, ARG, "--workspace", ws],
        "dispatch": ["dispatch", files["dispatch"], "--workspace", ws],
        "missing_workspace": ["runs", "--workspace", missing],
        "bad_state": ["runs", "--state", ARG, "--workspace", ws],
        "validate_dispatch": ["validate", "dispatch", files["dispatch"]],
        "validate_completion": ["validate", "completion", "--dispatch",
                                SAMPLES / "outputs/backend-fix/dispatch.json",
                                files["completion"]],  # fmt: skip
        "validate_record": ["validate", "record", files["record"]],
        "validate_planner": ["validate", "planner", files["planner"]],
        "validate_missing": ["validate", "dispatch", missing],
        "extract": ["criteria", "extract", files["task"]],
        "fingerprint": ["fingerprint", "--class", "timeout", "--code", ARG, "--step",
                        ARG, "--selector", ARG, "--url", f"https://x.test/{ARG}"],
        "samples": ["samples"],
        "repo_list": ["repo", "list", "--workspace", files["repo_ws"]],
        "repo_list_bad": ["repo", "list", "--workspace", files["bad_repo_ws"]],
        "repo_add_bad_path": ["repo", "add", "acme/x", ARG, "--workspace", files["repo_ws"]],
        "repo_remove_bad_name": ["repo", "remove", ARG, "--workspace", files["repo_ws"]],
        "unknown_command": [ARG],
        "bad_option": ["runs", ARG],
        "bulk_unknown": ["override", ARG, f"x{ARG}", "--reason", ARG, "--workspace", ws],
        "bulk_dry_run": ["retry", RUN, ARG, "--dry-run", "--workspace", ws],
        "bulk_lane": ["approve", "--lane", ARG, "--workspace", ws],
        "quarantine": ["quarantine", "--workspace", ws],
        "quarantine_replay": ["quarantine", "--replay", ARG, "--workspace", ws],
    }  # fmt: skip


@dataclass
class Raw:
    """How one command ended, and what it wrote, as bytes."""

    returncode: int
    stdout: bytes
    stderr: bytes


def _env(colour: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "FORCE_COLOR"}}
    env.update(COLUMNS="100", JARVIS_OPERATOR="op")
    if colour:
        env.update(FORCE_COLOR="1", TERM="xterm-256color")
    return env


def run_raw(args: list[str | Path], *, colour: bool) -> Raw:
    """The command in this process (`tests.jarvis_cli`): 93 interpreters started for this
    module cost over a minute of CPU. `test_the_process_writes_what_the_call_writes` checks
    the real entry point writes the same bytes."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(_env(colour))
    try:
        result = jarvis_in_process(*args, cwd=ROOT)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return Raw(result.code, result.stdout.encode(), result.stderr.encode())


def run_process(args: list[str | Path], *, colour: bool) -> Raw:
    done = subprocess.run(
        [sys.executable, "-m", "jarvis_cli", *map(str, args)],
        capture_output=True,
        env=_env(colour),
        cwd=ROOT,
        timeout=120,
    )
    return Raw(done.returncode, done.stdout, done.stderr)


def problems(raw: bytes, *, colour: bool) -> list[str]:
    text = raw.decode("utf-8")
    if colour:
        text = SGR.sub("", text)
    found = [f"U+{ord(ch):04X}" for ch in sorted(set(text) & FORBIDDEN)]
    found += [f"forged line {line!r}" for line in text.splitlines() if LABEL.match(line)]
    return found


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str | Path]]:
    base = tmp_path_factory.mktemp("hostile")
    ws = base / "ws"
    hostile_store(ws)
    return commands(ws, hostile_files(base))


@pytest.mark.parametrize("mode", ["readable", "colour", "json"])
def test_no_command_writes_a_control_character_from_its_input(
    setting: dict[str, list[str | Path]], mode: str
) -> None:
    failures: dict[str, Any] = {}
    for name, args in setting.items():
        result = run_raw([*args, "--json"] if mode == "json" else args, colour=mode == "colour")
        found = {
            stream: problems(raw, colour=mode == "colour")
            for stream, raw in (("stdout", result.stdout), ("stderr", result.stderr))
        }
        found = {stream: items for stream, items in found.items() if items}
        if b"Traceback" in result.stderr:
            found["traceback"] = [result.stderr.decode()[-300:]]
        if found:
            failures[name] = found
    assert failures == {}


@pytest.mark.parametrize("name", ["show", "criteria", "unknown_command"])
@pytest.mark.parametrize("colour", [False, True], ids=["readable", "colour"])
def test_the_process_writes_what_the_call_writes(
    setting: dict[str, list[str | Path]], name: str, colour: bool
) -> None:
    # Text and bytes alike: the in-process call's capture is UTF-8, as a pipe is.
    assert run_process(setting[name], colour=colour) == run_raw(setting[name], colour=colour)


def test_the_readable_show_keeps_the_text_visible_as_text(
    setting: dict[str, list[str | Path]],
) -> None:
    out = run_raw(setting["show"], colour=False).stdout.decode()
    flat = "".join(line.strip(" │") for line in out.splitlines())
    assert "tests failed\\n  state" in flat and "\\x1b]0;owned\\x07" in flat
    assert "\\u202e" in flat and "[red]M[/]" in flat and ":warning:" in flat


def test_json_keeps_the_text_whole(setting: dict[str, list[str | Path]]) -> None:
    raw = run_raw([*setting["show"], "--json"], colour=False).stdout
    run = json.loads(raw)["run"]
    # Whole, but for a NUL, which the store keeps as U+FFFD on every backend (PostgreSQL's text
    # cannot hold one).
    stored = HOSTILE.replace("\x00", "\ufffd")
    assert run["last_progress_summary"] == stored and run["audit"][-1]["reason"] == stored


def test_the_hosts_log_keeps_a_record_to_one_inert_line() -> None:
    from jarvis_cli.output import InertLogFormatter

    formatter = InertLogFormatter("%(levelname)s %(message)s")
    record = logging.LogRecord("jarvis.host", logging.WARNING, __file__, 1, "quarantined %s (%s)",
                               (ARG, "not JSON"), None)  # fmt: skip
    line = formatter.format(record)
    assert "\n" not in line and not set(line) & FORBIDDEN
    assert line.startswith("WARNING quarantined tests failed\\n  state")
    try:
        raise ValueError(ARG)
    except ValueError:
        record = logging.LogRecord("jarvis.host", logging.ERROR, __file__, 1, "failed", (),
                                   sys.exc_info())  # fmt: skip
    text = formatter.format(record)
    assert text.splitlines()[0] == "ERROR failed" and "Traceback" in text
    assert not set(text) & FORBIDDEN and not any(LABEL.match(x) for x in text.splitlines())
