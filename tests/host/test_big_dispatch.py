"""A dispatch far past what one environment variable may hold (Linux: 128 KiB a string) starts
and reaches review: the host gives the worker its dispatch by file, and an agent its whole task
through that file, where every start once failed with "Argument list too long"."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.ipc.worker_env import INLINE_MAX, ConfigError, load_worker_config
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo
from tests.host.hostkit import running_host, wait_for_states, write_config
from tests.processes import HANG_GUARD_S

#: About 200 KB of task: past the 128 KiB a single environment string may hold.
BIG = " ".join(f"step-{n}" for n in range(25_000))


def enqueue(store: SqliteStore, run_id: str, text: str, **changes: object) -> None:
    doc = dispatch_doc(run_id, input=text, **changes)
    assert len(json.dumps(doc)) > 200_000
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def test_a_200_kb_dispatch_starts_and_reaches_review(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, no_output_s=60)
    enqueue(store, "big", f"Fix the retry counter. sim:ok {BIG}")
    with running_host(ws) as host:
        wait_for_states(conn, {"big": "review_requested"}, HANG_GUARD_S, host=host)
    given = json.loads((ws / "logs" / "big" / "attempt-1" / "dispatch.json").read_text())
    assert given["input"].endswith("step-24999")


@pytest.mark.slow
def test_an_agent_given_a_200_kb_task_is_pointed_at_the_whole_of_it(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    from tests.host.test_agent_runs import FAKE, REPO

    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    (ws / "records").mkdir(parents=True, exist_ok=True)  # what the sandbox lets it write
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "claude"\n'
        f'[workers.claude]\nagent = "claude-code"\ncommand = ["{sys.executable}", "{FAKE}"]\n'
        f'writable = ["records"]\nenv = {{ FAKE_ARGV_FILE = "{ws / "records" / "argv.json"}" }}\n'
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        "[timeouts]\nno_output_s = 60\n"
    )
    enqueue(store, "big", f"Retry twice in src/retry.py. {BIG}", branch="jarvis-big")
    with running_host(ws) as host:
        wait_for_states(conn, {"big": "review_requested"}, HANG_GUARD_S, host=host)
    prompt = json.loads((ws / "records" / "argv.json").read_text())[-1]
    whole = ws / "logs" / "big" / "attempt-1" / "dispatch.json"
    assert len(prompt.encode()) < 128 * 1024
    assert f"as the `input` field of the JSON file {whole}" in prompt
    assert json.loads(whole.read_text())["input"].endswith("step-24999")


def env_of(tmp_path: Path, **changes: str) -> dict[str, str]:
    env = {
        "JARVIS_RUN_ID": "r1", "JARVIS_LANE": "jarvis-worker-1",
        "JARVIS_PROGRESS_DIR": str(tmp_path), "JARVIS_STEER_FILE": str(tmp_path / "s.json"),
        "JARVIS_ACK_FILE": str(tmp_path / "a.json"),
    }  # fmt: skip
    env.update(changes)
    return env


def test_a_worker_reads_its_dispatch_from_the_file_when_no_variable_holds_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "d.json").write_text(json.dumps({"run_id": "r1", "input": "x" * INLINE_MAX}))
    (tmp_path / "c.json").write_text(json.dumps([{"type": "file_exists", "path": "a"}]))
    config = load_worker_config(env_of(
        tmp_path, JARVIS_DISPATCH_FILE=str(tmp_path / "d.json"),
        JARVIS_CRITERIA_FILE=str(tmp_path / "c.json"),
    ))  # fmt: skip
    assert config.dispatch["input"] == "x" * INLINE_MAX
    assert config.criteria == ({"type": "file_exists", "path": "a"},)
    assert config.dispatch_file == tmp_path / "d.json"
    with pytest.raises(ConfigError, match="JARVIS_DISPATCH \\(or JARVIS_DISPATCH_FILE\\)"):
        load_worker_config(env_of(tmp_path))
    with pytest.raises(ConfigError, match="JARVIS_DISPATCH_FILE .* cannot be read"):
        load_worker_config(env_of(tmp_path, JARVIS_DISPATCH_FILE=str(tmp_path / "gone.json")))
