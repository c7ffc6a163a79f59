"""OpenClaw requests become runs; their result folders go through the scope and risk gate."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.host.host import Host
from tests.conftest import SAMPLES
from tests.host.inproc import host_in_process

OPENCLAW = SAMPLES / "openclaw"
FOLDERS = {
    "inv-142-rounding": "results-L0-rounding-fix",
    "inv-151-csv-export": "results-L2-out-of-scope-script",
    "inv-163-s3-archive": "results-L3-hardcoded-aws-key",
}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws") as made:
        yield made


def drop_request(host: Host, task_id: str) -> Path:
    target = host.workspace.root / "work" / "requests" / f"{task_id}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(OPENCLAW / FOLDERS[task_id] / "request.json", target)
    return target


def drop_results(host: Host, task_id: str) -> None:
    shutil.copytree(OPENCLAW / FOLDERS[task_id], host.workspace.root / "work" / "results" / task_id)


def test_requests_become_running_runs_once(host: Host) -> None:
    assert host.store is not None
    for task_id in FOLDERS:
        request = drop_request(host, task_id)
    host.sweep()
    host.sweep()  # seen again: recognised by its receipt, not a second run
    runs = {r["run_id"]: r for r in host.store.list_runs()}
    assert set(runs) == set(FOLDERS)
    assert all(r["state"] == "running" and r["lane"] == "openclaw" for r in runs.values())
    assert request.exists()  # the worker reads it: the host leaves it in place
    kinds = [j["kind"] for j in host.store.journal_since(0, run_id="inv-142-rounding")]
    assert kinds == ["created", "transition"]


def test_results_are_gated_by_level(host: Host) -> None:
    assert host.store is not None
    for task_id in FOLDERS:
        drop_request(host, task_id)
    host.sweep()
    for task_id in FOLDERS:
        drop_results(host, task_id)
    host.sweep()
    states = {r["run_id"]: r["state"] for r in host.store.list_runs()}
    assert states == {
        "inv-142-rounding": "review_requested",
        "inv-151-csv-export": "review_requested",
        "inv-163-s3-archive": "failed_contract",
    }
    gates = host.store.rows(
        "SELECT name, passed, detail FROM gate_results WHERE run_id = 'inv-163-s3-archive'"
    )
    verdict = gates[0]
    assert verdict["name"] == "risk_gate" and not verdict["passed"]
    assert verdict["detail"].startswith("L3 · blocked")
    assert any(g["name"] == "secret_aws_key" for g in gates)
    assert all("AKIAIOSFODNN7EXAMPLE" not in g["detail"] for g in gates)  # masked, never stored
    l2 = host.store.get_run("inv-151-csv-export")
    assert l2 is not None and l2["risk_summary"].startswith("L2 · recommend-only")


def test_an_invalid_request_is_quarantined_once(host: Host) -> None:
    folder = host.workspace.root / "work" / "requests"
    folder.mkdir(parents=True)
    bad = folder / "broken.json"
    bad.write_text(json.dumps({"task_id": "broken", "role": "boss"}))
    host.sweep()
    host.sweep()
    assert not bad.exists()
    reasons = list(host.layout.errors_dir.glob("*.reason.json"))
    assert len(reasons) == 1
    assert json.loads(reasons[0].read_text())["code"] == "invalid_request"
    assert host.store is not None and host.store.list_runs() == []


def test_a_restart_does_not_fail_openclaw_runs(host: Host) -> None:
    assert host.store is not None
    drop_request(host, "inv-142-rounding")
    host.sweep()
    host.recover()
    assert host.store.get_run("inv-142-rounding")["state"] == "running"  # type: ignore[index]
