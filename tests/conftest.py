"""Shared test configuration: hypothesis profiles and paths to the bundled samples."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# An environment that says PYTHONDONTWRITEBYTECODE (some containers do) would have each of the
# thousand Python processes the suite starts (hosts, consoles, CLI calls, workers) compile the
# project's modules from source again: about a fifth of a second of CPU each, minutes in all on
# two cores. The suite keeps the usual caches, in the checkout's __pycache__ folders (ignored).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Fixtures every test directory can use: a real PostgreSQL server per xdist worker (`pg_server`)
# and a fresh database of the test's own on it (`pg_url`, `pg_databases`).
pytest_plugins = ["tests.pg_server", "tests.backends"]

# CI machines are small and shared; a deadline would make property tests flaky without making
# them stronger. `HYPOTHESIS_PROFILE=thorough` runs many more examples on demand.
settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# pytest-xdist's workers run with COLUMNS=80 and LINES=24 in their environment, which a plain run
# does not have. A program a test starts on a terminal (the console under a pseudo-terminal or in
# tmux) takes them over the terminal's real size, so a worker drops them: every test then sees
# the environment a plain run gives it.
if "PYTEST_XDIST_WORKER" in os.environ:
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)

# A suite started in the background by a non-interactive shell (`./.ci/run &`) inherits SIGINT
# and SIGQUIT ignored, and so would every process a test starts: a worker's trap for the
# budget's SIGINT could never be set. `jarvis host` catches both itself, so its workers start
# with the default; the tests give theirs the same.
for _sig, _handler in (
    (signal.SIGINT, signal.default_int_handler),
    (signal.SIGQUIT, signal.SIG_DFL),
):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, _handler)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many workers ``-n auto`` starts (the default, see pyproject.toml): two per core.

    Most tests spend their time waiting on a process they started (a host, a worker, a console
    under a terminal), so a core has room for a second worker; see docs/architecture.md for the
    counts measured. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when it is set.
    """
    del config
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if chosen:
        return int(chosen)
    return 2 * len(os.sched_getaffinity(0))


ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"


@pytest.fixture
def samples() -> Path:
    return SAMPLES
