"""A worker that prints no completion is refused for that, and the reason says the other gates
were not evaluated: it named all thirteen gates as failed, twelve of which were never looked at."""

from __future__ import annotations

from pathlib import Path

from core.lifecycle import RunState
from core.repos.claims import check_claims
from core.store.api import RunStore
from core.verdicts import record_completion
from tests.core.store_helpers import make_run
from tests.gitrepo import make_repo


def test_no_completion_names_what_failed_and_says_the_rest_were_not_evaluated(
    store: RunStore, tmp_path: Path
) -> None:
    make_run(store, "r1", RunState.RUNNING)
    checkout = make_repo(tmp_path / "checkout")
    claims = check_claims(checkout, None, branch="jarvis-x", view_path=tmp_path / "view")
    run = record_completion(store, "r1", b"all done, it works\n", claims=claims)
    assert run is not None and run["state"] == "failed_contract"
    reason = str(run["state_reason"])
    assert reason.startswith("completion gates failed: parseable (")
    assert reason.endswith("; the 12 other gates were not evaluated"), reason
    assert "branch_format" not in reason and "refs_unmoved" not in reason


def test_gates_that_were_evaluated_and_failed_are_all_named(store: RunStore) -> None:
    make_run(store, "r2", RunState.RUNNING)
    run = record_completion(store, "r2", b'<completion>{"run_id": "r2"}</completion>')
    assert run is not None and run["state"] == "failed_contract"
    reason = str(run["state_reason"])
    assert reason.startswith("completion gates failed: ") and "parseable" not in reason
    assert "not evaluated" not in reason
