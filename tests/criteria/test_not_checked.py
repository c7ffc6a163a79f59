"""Command criteria in a checkout with no repository are not run: "not checked", never passed,
and by the workspace's policy either let the run through or fail it."""

from __future__ import annotations

from pathlib import Path

from core.criteria import run_criteria
from core.criteria.allowlist import DEFAULT_POLICY, VerifyPolicy
from core.criteria.verify import NO_REPOSITORY, verify_all
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run

TESTS = {"type": "test_pass", "description": "tests pass", "command": ["pytest", "-q"]}
EXISTS = {"type": "file_exists", "description": "notes", "path": "NOTES.md"}


def test_commands_are_not_run_but_file_checks_are(tmp_path: Path) -> None:
    (tmp_path / "NOTES.md").write_text("x\n")
    # A command that would leave a mark if it were started.
    touching = {**TESTS, "command": ["touch", str(tmp_path / "it-ran")]}
    done = verify_all([touching, EXISTS], tmp_path, has_repository=False)
    tests, exists = done.outcomes
    assert (tests.status, tests.passed, tests.output) == ("not_checked", False, NO_REPOSITORY)
    assert not (tmp_path / "it-ran").exists()  # nothing ran
    assert exists.status == "passed"
    assert done.passed and done.unchecked == [tests]
    (shown, _) = done.results()["criteria_results"]
    assert shown["criterion"] == touching
    assert (shown["passed"], shown["output"], shown["not_checked"]) == (False, NO_REPOSITORY, True)


def test_by_policy_a_criterion_not_checked_fails_the_verification(tmp_path: Path) -> None:
    strict = VerifyPolicy(unchecked_may_pass=False)
    done = verify_all([TESTS], tmp_path, strict, has_repository=False)
    assert not done.passed


def test_with_a_repository_the_command_runs(tmp_path: Path) -> None:
    done = verify_all([{**TESTS, "command": ["true"]}], tmp_path, has_repository=True)
    assert done.outcomes[0].status != "not_checked"


def test_a_run_whose_checkout_is_empty_is_marked_unverified(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        make_run(store, "r1", RunState.RUNNING, acceptance_criteria=[TESTS])
        with store.transaction() as tx:
            tx.execute("UPDATE runs SET verification_state = 'verifying' WHERE run_id = 'r1'", [])
        run = store.get_run("r1")
        assert run is not None
        done = run_criteria.verify_run(store, tmp_path, run, DEFAULT_POLICY)
        assert [o.status for o in done.outcomes] == ["not_checked"]
        ended = run_criteria.finish(store, "r1", done)
        assert ended is not None and ended["state"] == "review_requested"
        assert ended["unverified"] == "the run's checkout is empty"
        # A file the worker left is something to run the command on: it runs.
        (tmp_path / "checkouts" / "r1" / "app.py").write_text("x = 1\n")
        again = run_criteria.verify_run(store, tmp_path, run, DEFAULT_POLICY)
        assert again.outcomes[0].status != "not_checked"
    finally:
        store.close()
