"""OpenClaw runs on a configured repository: the scope and risk gate judges the diff git shows
on the request's branch, and a worker's own patch.diff that tells a different story is a
finding."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.host.host import Host
from core.repos.records import latest_git
from tests.conftest import SAMPLES
from tests.gitrepo import commit, make_repo, run_git
from tests.host.inproc import host_in_process

SAMPLE = SAMPLES / "openclaw" / "results-L0-rounding-fix"
TASK = "inv-142-rounding"
BRANCH = "worker/inv-142-rounding"


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    files = {"src/invoice.py": "TOTAL = 1\n", "tests/test_invoice.py": "def test(): pass\n"}
    return make_repo(tmp_path / "invoice", files)


def repo_config(origin: Path) -> str:
    return f'[repos."acme/invoice"]\npath = "{origin}"\n'


@pytest.fixture
def host(tmp_path: Path, origin: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws", config=repo_config(origin)) as made:
        yield made


def request_for(repo_path: Path) -> dict[str, object]:
    doc = json.loads((SAMPLE / "request.json").read_text())
    doc["repo"]["path"] = str(repo_path)
    return doc


def run_task(host: Host, request: dict[str, object], patch: str | None) -> None:
    """Drop the request, let the host take it, then drop the worker's results and gate them."""
    requests = host.workspace.root / "work" / "requests"
    requests.mkdir(parents=True, exist_ok=True)
    (requests / f"{TASK}.json").write_text(json.dumps(request))
    host.sweep()
    results = host.workspace.root / "work" / "results" / TASK
    shutil.copytree(SAMPLE, results)
    (results / "request.json").unlink()
    if patch is None:
        (results / "patch.diff").unlink()
    else:
        (results / "patch.diff").write_text(patch)
    host.sweep()


def worker_commits(origin: Path, files: dict[str, str | None]) -> str:
    run_git(origin, "switch", "--quiet", "-c", BRANCH)
    sha = commit(origin, files, "worker change")
    run_git(origin, "switch", "--quiet", "main")
    return sha


def gates(host: Host) -> dict[str, dict[str, object]]:
    assert host.store is not None
    found = host.store.rows(
        "SELECT name, passed, status, detail FROM gate_results WHERE run_id = ?", [TASK]
    )
    return {g["name"]: g for g in found}


def git_patch(origin: Path) -> str:
    return run_git(origin, "diff", "main", BRANCH) + "\n"


def test_an_honest_branch_is_judged_on_gits_diff(host: Host, origin: Path) -> None:
    change = {"src/invoice.py": "TOTAL = 2\n", "tests/test_invoice.py": "def test(): assert 1\n"}
    head = worker_commits(origin, change)
    run_task(host, request_for(origin), git_patch(origin))
    assert host.store is not None
    run = host.store.get_run(TASK)
    assert run is not None and run["state"] == "review_requested", gates(host)
    found = gates(host)
    assert found["git_diff"]["status"] == "passed"
    assert "patch_differs" not in found
    assert run["risk_summary"].startswith("L0 · auto-merge · 2 file(s)")
    record = latest_git(host.store, TASK)
    assert (record["head_commit"], record["diff_files"]) == (head, 2)
    assert record["merge_base"] == run_git(origin, "rev-parse", "main")


def test_a_denied_path_the_worker_hid_from_its_patch_is_l3(host: Host, origin: Path) -> None:
    worker_commits(origin, {"src/invoice.py": "TOTAL = 2\n",
                            ".github/workflows/deploy.yml": "on: push\n"})  # fmt: skip
    # The worker's own patch shows only the harmless half.
    honest_half = run_git(origin, "diff", "main", BRANCH, "--", "src/invoice.py") + "\n"
    run_task(host, request_for(origin), honest_half)
    assert host.store is not None
    run = host.store.get_run(TASK)
    assert run is not None and run["state"] == "failed_contract"
    found = gates(host)
    assert str(found["risk_gate"]["detail"]).startswith("L3 · blocked")
    assert not found["path_denied"]["passed"]
    assert ".github/workflows/deploy.yml" in str(found["path_denied"]["detail"])
    assert "L2" in str(found["patch_differs"]["detail"])
    assert ".github/workflows/deploy.yml" in str(found["patch_differs"]["detail"])


def test_without_its_own_patch_the_run_is_judged_on_git_alone(host: Host, origin: Path) -> None:
    worker_commits(origin, {"src/invoice.py": "TOTAL = 2\n",
                            "tests/test_invoice.py": "def test(): assert 1\n"})  # fmt: skip
    run_task(host, request_for(origin), None)
    assert host.store is not None
    assert host.store.get_run(TASK)["state"] == "review_requested"  # type: ignore[index]
    assert "patch_missing" not in gates(host)


def test_a_branch_that_does_not_exist_fails_the_run(host: Host, origin: Path) -> None:
    run_task(host, request_for(origin), (SAMPLE / "patch.diff").read_text())
    assert host.store is not None
    run = host.store.get_run(TASK)
    assert run is not None and run["state"] == "failed_contract"
    assert gates(host)["git_diff"]["status"] == "failed"
    assert f"git shows no change: the repository has no branch '{BRANCH}'" in str(
        gates(host)["git_diff"]["detail"]
    )


def test_an_unconfigured_repository_is_judged_on_the_patch_and_marked_unverified(
    tmp_path: Path, origin: Path
) -> None:
    with host_in_process(tmp_path / "ws") as host:
        run_task(host, request_for(origin), (SAMPLE / "patch.diff").read_text())
        assert host.store is not None
        run = host.store.get_run(TASK)
        assert run is not None and run["state"] == "review_requested"
        assert gates(host)["git_diff"]["status"] == "not_checked"
        assert run["unverified"] == "the request's repository is not configured"
