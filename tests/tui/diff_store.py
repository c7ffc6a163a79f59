"""The console's test store plus real diffs: ``run-review`` and ``run-contract`` name commits in a
repository beside the store; ``run-contract``'s ``files_match_diff`` gate failed naming a file."""

from __future__ import annotations

from pathlib import Path

from core.store.sqlite_store import SqliteStore
from tests.diffrepo import build_diff_repo, record_diff
from tests.tui.conftest import build_store, fixed_clock

#: The file ``run-contract``'s failing gate names.
UNCLAIMED = "scripts/deploy.sh"


def build_diff_store(db_path: Path, *, long_lines: int = 60) -> Path:
    build_store(db_path)
    repo, base, head = build_diff_repo(db_path.parent.resolve() / "repo", long_lines=long_lines)
    store = SqliteStore(db_path, clock=fixed_clock)
    try:
        for run_id in ("run-review", "run-contract"):
            record_diff(store, run_id, repo, base, head)
        with store.transaction() as tx:
            tx.execute(
                "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at, "
                "status) VALUES ('run-contract', 1, 'files_match_diff', 0, ?, "
                "'2026-01-02T09:50:00.000Z', 'failed')",
                [f"changed but unclaimed: {UNCLAIMED}"],
            )
    finally:
        store.close()
    return db_path
