"""The header when several hosts serve the store: a third line of every live or lost host, its
lanes, and its heartbeat's age (how long a lost one has been quiet)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.host.fleet import Lease
from core.store.api import iso
from core.store.sqlite_store import SqliteStore
from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, no_cursor_blink, on_run
from tests.tui.conftest import build_store, fixed_clock

__all__ = ["no_cursor_blink"]  # a fixture, used by name


def with_hosts(db: Path) -> None:
    store = SqliteStore(db)
    for name, lanes in (("build-01", ["jarvis-worker-1", "jarvis-worker-2"]),
                        ("build-02", ["jarvis-worker-3"]), ("gpu-01", None)):  # fmt: skip
        Lease(store, name, Path("/srv/jarvis") / name, lanes, 5.0, 3600.0).register()
    # gpu-01 went quiet 41 s before the console's clock, its lease long out; the others beat
    # 2 s before it.
    quiet = iso(fixed_clock() - timedelta(seconds=41))
    beat = iso(fixed_clock() - timedelta(seconds=2))
    with store.transaction() as tx:
        tx.execute("UPDATE hosts SET heartbeat_at = ? WHERE name != 'gpu-01'", [beat])
        tx.execute(
            "UPDATE hosts SET heartbeat_at = ?, lease_until = ? WHERE name = 'gpu-01'",
            [quiet, quiet],
        )
    store.close()


@pytest.fixture
def hosts_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    db = build_store(Path("workspace") / "jarvis.db")
    with_hosts(db)
    return JarvisApp(db, live=False, clock=fixed_clock, operator="snapshot")


@pytest.mark.parametrize("size", SIZES)
def test_the_header_lists_the_stores_hosts(
    snap_compare: SnapCompare, hosts_console: JarvisApp, size: tuple[int, int]
) -> None:
    assert snap_compare(hosts_console, terminal_size=size, run_before=on_run("run-running"))
