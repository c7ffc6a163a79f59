"""The PostgreSQL server the store's tests run against (tests/pg_server.py) is real and throwaway.

A database of the test's own takes writes, reads and LISTEN/NOTIFY; two databases do not see each
other; and however a session ends (a failing test, the process that started the server killed
with SIGKILL) no postgres process is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from core.host.launcher import child_env
from tests import pg_server as pg
from tests.pg_server import (
    BINDIR_ENV,
    SKIP_ENV,
    PgServer,
    PostgresStartError,
    processes_in,
    remove_leftovers,
    running_server,
    start_server,
)
from tests.processes import HANG_GUARD_S, PipedProcess, wait_until

pytest_plugins = ["pytester"]


def run_inner(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str
) -> pytest.RunResult:
    """Run pytest in this process on ``pytester``'s files, with the server's fixtures only.

    Plugins installed in the environment stay out: some keep state in their module, which the
    inner session would otherwise finish for this one.
    """
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_inprocess("-p", "tests.pg_server", "-p", "no:cacheprovider", *args)


def test_a_table_is_written_and_read_back(pg_url: str, pg_server: PgServer) -> None:
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE runs (id text PRIMARY KEY, seq bigint NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO runs (id, seq) VALUES (%s, %s)", [(f"run-{n}", n) for n in range(50)]
            )
    dbname = pg_url.rsplit("/", 1)[1]
    # A new connection, over the Unix socket this time: the rows were committed.
    with psycopg.connect(pg_server.socket_url(dbname)) as conn:
        rows = conn.execute("SELECT id, seq FROM runs ORDER BY seq").fetchall()
        assert rows == [(f"run-{n}", n) for n in range(50)]
        assert conn.execute("SELECT current_database()").fetchone() == (dbname,)
        assert conn.execute("SHOW server_encoding").fetchone() == ("UTF8",)


def test_listen_notify_goes_from_one_connection_to_another(pg_url: str) -> None:
    with (
        psycopg.connect(pg_url, autocommit=True) as listener,
        psycopg.connect(pg_url, autocommit=True) as notifier,
    ):
        listener.execute("LISTEN journal")
        notifier.execute("SELECT pg_notify('journal', '42')")
        # The timeout only bounds a hang; the notification is the condition waited on.
        received = list(listener.notifies(timeout=HANG_GUARD_S, stop_after=1))
    assert [(n.channel, n.payload) for n in received] == [("journal", "42")]


def test_two_databases_do_not_see_each_other(pg_databases: Callable[[], str]) -> None:
    first, second = pg_databases(), pg_databases()
    assert first != second
    with psycopg.connect(first) as conn:
        conn.execute("CREATE TABLE runs (id text)")
        conn.execute("INSERT INTO runs VALUES ('only-in-first')")
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regclass('runs')").fetchone() == (None,)
        conn.execute("CREATE TABLE runs (id text)")
        conn.execute("INSERT INTO runs VALUES ('only-in-second')")
    for url, expected in ((first, "only-in-first"), (second, "only-in-second")):
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT id FROM runs").fetchall() == [(expected,)]


def test_dropping_a_database_ends_the_connections_left_open(pg_server: PgServer) -> None:
    name = pg_server.create_database()
    left_open = psycopg.connect(pg_server.url(name))
    try:
        pg_server.drop_database(name)
        with pytest.raises(psycopg.OperationalError):
            left_open.execute("SELECT 1")
        listed = pg_server.admin().execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", (name,)
        )
        assert listed.fetchone() == (0,)
    finally:
        left_open.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="the server runs as the tests' own user")
def test_under_root_the_server_runs_as_an_unprivileged_user(pg_server: PgServer) -> None:
    status = Path(f"/proc/{pg_server.pid}/status").read_text()
    (uids,) = [line for line in status.splitlines() if line.startswith("Uid:")]
    assert "0" not in uids.split()[1:]  # real, effective, saved and filesystem
    assert pg_server.data_dir.stat().st_uid != 0


# ---------------------------------------------------------------------------------------------
# Nothing outlives the server


_FAILING_TEST = """
    import json
    from pathlib import Path

    from tests.pg_server import processes_in


    def test_fails_with_a_server(pg_server, pg_url):
        Path("server.json").write_text(json.dumps({
            "data_dir": str(pg_server.data_dir),
            "pid": pg_server.pid,
            "alive": processes_in(pg_server.data_dir),
        }))
        assert False, "this test fails on purpose"
"""


@pytest.mark.slow
def test_after_a_failing_session_no_postgres_process_is_left(
    pg_bindir: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BINDIR_ENV, str(pg_bindir))
    pytester.makepyfile(test_inner=textwrap.dedent(_FAILING_TEST))
    result = run_inner(pytester, monkeypatch)
    result.assert_outcomes(failed=1)
    seen = json.loads((pytester.path / "server.json").read_text())
    data_dir = Path(seen["data_dir"])
    # While the test ran, /proc showed the postmaster and its helpers: the check below can see.
    assert seen["pid"] in seen["alive"] and len(seen["alive"]) > 1
    assert processes_in(data_dir) == []
    assert not data_dir.parent.exists()


_STARTS_AND_WAITS = """
import signal
from tests.pg_server import running_server

with running_server() as server:
    print(server.data_dir, flush=True)
    signal.pause()
"""


@pytest.mark.slow
def test_a_server_whose_starter_is_killed_stops_and_is_cleaned_up_later(pg_bindir: Path) -> None:
    env = {**child_env(), BINDIR_ENV: str(pg_bindir)}
    with PipedProcess([sys.executable, "-c", _STARTS_AND_WAITS], env=env) as starter:
        data_dir = Path(starter.next_line("the server's data directory"))
        postmaster_alive = processes_in(data_dir)
        starter.send_signal(signal.SIGKILL)
        starter.wait()
    assert postmaster_alive, "the server was not running while its starter was"
    # The kernel's parent-death signal stops the postmaster, which ends its backends.
    wait_until(
        lambda: not processes_in(data_dir),
        "the killed starter's postgres processes to exit",
        describe=lambda: f"still alive: {processes_in(data_dir)}",
    )
    assert data_dir.parent.exists()
    remove_leftovers(data_dir.parent.parent)
    assert not data_dir.parent.exists()


@pytest.mark.slow
def test_a_port_taken_before_postgres_binds_it_is_given_up_for_another(
    pg_bindir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        picks = iter([taken.getsockname()[1]])
        free_port = pg._free_port
        monkeypatch.setattr(pg, "_free_port", lambda: next(picks, None) or free_port())
        with running_server(pg_bindir) as server:
            assert server.port != taken.getsockname()[1]
            assert "could not bind" in server.log_path.read_text()
            with psycopg.connect(server.url()) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)


def test_settings_given_replace_the_throwaway_ones(pg_bindir: Path) -> None:
    # A benchmark turns durability back on: commits then cost what they cost in production.
    with running_server(pg_bindir, settings={"fsync": "on", "work_mem": "8MB"}) as server:
        with psycopg.connect(server.url()) as conn:
            assert conn.execute("SHOW fsync").fetchone() == ("on",)
            assert conn.execute("SHOW work_mem").fetchone() == ("8MB",)
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)


def test_a_failing_initdb_is_reported_and_leaves_nothing(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, script in (
        ("initdb", "echo 'initdb: cannot work here' >&2; exit 3"),
        ("postgres", ""),
    ):
        (bindir / name).write_text(f"#!/bin/sh\n{script}\n")
        (bindir / name).chmod(0o755)
    base = tmp_path / "tmp"
    base.mkdir()
    with pytest.raises(PostgresStartError, match="(?s)exited with 3.*cannot work here"):
        start_server(bindir, run_as=None, base=base)
    assert list(base.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Without PostgreSQL


_NEEDS_POSTGRES = """
    def test_needs_postgres(pg_url):
        pass
"""


def test_missing_programs_fail_the_test_saying_what_to_install(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(SKIP_ENV, raising=False)
    monkeypatch.setenv(BINDIR_ENV, str(tmp_path))  # nothing in it
    pytester.makepyfile(test_inner=textwrap.dedent(_NEEDS_POSTGRES))
    result = run_inner(pytester, monkeypatch)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*initdb, postgres*were not found*apt-get install postgresql*"])


def test_the_tests_that_need_postgres_can_be_skipped_on_request(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(SKIP_ENV, "1")
    monkeypatch.setenv(BINDIR_ENV, str(tmp_path))
    pytester.makepyfile(test_inner=textwrap.dedent(_NEEDS_POSTGRES))
    result = run_inner(pytester, monkeypatch, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([f"*{SKIP_ENV} is set*"])
