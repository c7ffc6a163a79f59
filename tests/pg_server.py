"""A real PostgreSQL server for the tests, from the system's programs, in a temporary directory.

The store's tests run against PostgreSQL itself, not a stand-in: ``initdb`` makes a cluster in a
directory of its own, ``postgres`` serves it on 127.0.0.1 (a free port) and on a Unix socket in
that directory, and stopping it removes everything. Each pytest-xdist worker starts one server the
first time a test asks for it (``pg_server``, session scope) and gives every test a database of
its own on it (``pg_url``, or ``pg_databases`` for several), dropped when the test ends.

PostgreSQL refuses to run as root, and CI runs as root: there the server runs as the ``postgres``
user (``nobody`` where there is none), and its directory belongs to that user.

No postgres process outlives its server: stopping waits for the postmaster and its backends to
exit, and the postmaster gets SIGQUIT from the kernel if the process that started it dies without
stopping it (a worker killed with SIGKILL). ``processes_in`` finds a server's processes in /proc.

Where the programs are looked for: ``$JARVIS_TEST_PG_BINDIR`` alone when it is set, else
``pg_config --bindir``, ``/usr/lib/postgresql/*/bin`` (newest first) and ``PATH``. When they are
missing the fixtures fail saying what to install; ``JARVIS_TEST_NO_POSTGRES=1`` skips instead.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from core.host.launcher import parent_death_signal
from tests.processes import HANG_GUARD_S, wait_until

if TYPE_CHECKING:
    import psycopg

BINDIR_ENV = "JARVIS_TEST_PG_BINDIR"
SKIP_ENV = "JARVIS_TEST_NO_POSTGRES"
#: The cluster's superuser, the role every URL here connects as (trust authentication).
SUPERUSER = "postgres"
#: Temporary directories are named ``jarvis-pg-<pid of the starting process>-<random>``.
DIR_PREFIX = "jarvis-pg-"
#: Attempts at a free port: another process can take the one picked before postgres binds it.
_PORT_ATTEMPTS = 5
_PROGRAMS = ("initdb", "postgres")
#: Throwaway clusters: durability buys nothing and costs every commit a disk flush.
_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}

MISSING_MESSAGE = (
    "the tests run a real PostgreSQL server, and its programs (initdb, postgres) were not found "
    "in {places}. Install PostgreSQL's server (Debian/Ubuntu: apt-get install postgresql; "
    "Fedora: dnf install postgresql-server; macOS: brew install postgresql), or set "
    f"{BINDIR_ENV} to the directory that holds them, or set {SKIP_ENV}=1 to skip the tests "
    "that need PostgreSQL."
)


class PostgresMissing(Exception):
    """PostgreSQL's server programs are not on this machine; ``str()`` says what to install."""


class PostgresStartError(Exception):
    """The server did not start; ``str()`` says why, with the end of its log."""


# ---------------------------------------------------------------------------------------------
# Finding the programs


def _has_programs(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in _PROGRAMS)


def _version_key(directory: Path) -> tuple[int, ...]:
    """``/usr/lib/postgresql/15/bin`` sorts by 15, so the newest version comes first."""
    return tuple(int(part) for part in re.findall(r"\d+", directory.parent.name))


def _candidate_dirs() -> Iterator[Path]:
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=HANG_GUARD_S
            )
            if out.returncode == 0 and out.stdout.strip():
                yield Path(out.stdout.strip())
    yield from sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key, reverse=True)
    for name in _PROGRAMS:
        found = shutil.which(name)
        if found:
            yield Path(found).resolve().parent


def find_bindir() -> Path:
    """The directory holding ``initdb`` and ``postgres``.

    Raises:
        PostgresMissing: they are not where PostgreSQL installs them, nor on ``PATH``.
    """
    chosen = os.environ.get(BINDIR_ENV)
    if chosen:
        if _has_programs(Path(chosen)):
            return Path(chosen)
        raise PostgresMissing(MISSING_MESSAGE.format(places=f"{BINDIR_ENV}={chosen}"))
    for directory in _candidate_dirs():
        if _has_programs(directory):
            return directory
    raise PostgresMissing(
        MISSING_MESSAGE.format(places="pg_config --bindir, /usr/lib/postgresql/*/bin or PATH")
    )


# ---------------------------------------------------------------------------------------------
# Processes


def processes_in(data_dir: Path) -> list[int]:
    """Live processes of the server whose data directory is ``data_dir``, from /proc.

    The postmaster names the directory on its command line (``-D``), and it and every backend it
    forks run with it as their working directory (shown with `` (deleted)`` once it is removed).
    Zombies are left out: they run nothing.
    """
    target = str(data_dir)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if _is_zombie(entry):
                continue
            cwd = os.readlink(entry / "cwd").removesuffix(" (deleted)")
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to look at
            continue
        if cwd == target or target.encode() in argv:
            found.append(int(entry.name))
    return found


def _is_zombie(proc_dir: Path) -> bool:
    stat_line = (proc_dir / "stat").read_text()
    # The command name is in parentheses and may itself hold spaces or parentheses.
    return stat_line[stat_line.rindex(")") + 2 :].startswith("Z")


@dataclass(frozen=True, slots=True)
class _RunAs:
    """The unprivileged user that initdb and postgres run as when the tests run as root."""

    name: str
    uid: int
    gid: int


def _run_as() -> _RunAs | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return _RunAs(name, entry.pw_uid, entry.pw_gid)
    raise PostgresStartError(
        "the tests run as root, which PostgreSQL refuses, and there is neither a 'postgres' "
        "nor a 'nobody' user to run it as"
    )


def _child_env() -> dict[str, str]:
    """This environment less libpq's ``PG*`` variables, which would steer initdb and postgres."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    return env


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# ---------------------------------------------------------------------------------------------
# The server


def url_for(port: int, dbname: str, host: str = "127.0.0.1") -> str:
    return f"postgresql://{SUPERUSER}@{host}:{port}/{dbname}"


@dataclass(slots=True)
class PgServer:
    """A running PostgreSQL server in its own temporary directory ``root``."""

    root: Path
    bindir: Path
    port: int
    process: subprocess.Popen[bytes]
    _admin: psycopg.Connection[tuple[object, ...]] | None = None
    _names: Iterator[int] = field(default_factory=itertools.count)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root

    @property
    def log_path(self) -> Path:
        return self.root / "postgres.log"

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return self.process.pid

    def url(self, dbname: str = "postgres") -> str:
        """A URL for ``dbname`` over TCP on 127.0.0.1, as the superuser."""
        return url_for(self.port, dbname)

    def socket_url(self, dbname: str = "postgres") -> str:
        """A URL for ``dbname`` over the server's Unix socket, as the superuser."""
        return f"postgresql://{SUPERUSER}@/{dbname}?host={self.socket_dir}&port={self.port}"

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        """One autocommit connection to the ``postgres`` database, for creating databases.

        It goes through the Unix socket in the server's own directory, where nothing else can
        listen: a process that took the TCP port first would accept and never answer.
        """
        import psycopg

        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(self.socket_url(), autocommit=True, connect_timeout=30)
        return self._admin

    def create_database(self) -> str:
        """A new, empty database; returns its name."""
        name = f"test_{next(self._names)}"
        self.admin().execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name``, ending the connections a test left open to it."""
        self.admin().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server and wait until none of its processes is left.

        A fast shutdown (SIGINT) ends the sessions and stops; should it hang, an immediate one
        (SIGQUIT), then SIGKILL for the postmaster and whatever it left.
        """
        if self._admin is not None:
            with contextlib.suppress(Exception):
                self._admin.close()
            self._admin = None
        for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
            if self.process.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=HANG_GUARD_S)
        # After a clean stop none is left; after SIGKILL its backends are orphans, ended here.
        for pid in processes_in(self.data_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(
            lambda: not processes_in(self.data_dir),
            f"the processes of the PostgreSQL server in {self.data_dir} to exit",
            describe=lambda: f"still alive: {processes_in(self.data_dir)}",
        )


def _base_dir(run_as: _RunAs | None) -> Path:
    """The system's temporary directory, which ``run_as`` must be able to pass through."""
    base = Path(tempfile.gettempdir()).resolve()
    if run_as is not None:
        for directory in (base, *base.parents):
            if not directory.stat().st_mode & stat.S_IXOTH:
                raise PostgresStartError(
                    f"{directory} is closed to other users, so the user {run_as.name!r} that "
                    f"PostgreSQL runs as cannot reach {base}; set TMPDIR to a directory it can"
                )
    return base


def remove_leftovers(base: Path | None = None) -> None:
    """Remove the directories of servers whose starting process is gone (it was killed).

    Their postmaster got SIGQUIT when that process died; anything of theirs still alive is
    killed before the directory goes.
    """
    base = base if base is not None else Path(tempfile.gettempdir())
    for directory in base.glob(f"{DIR_PREFIX}*"):
        owner = directory.name.removeprefix(DIR_PREFIX).split("-", 1)[0]
        if not owner.isdigit() or Path(f"/proc/{owner}").exists():
            continue
        for pid in processes_in(directory / "data"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def _initdb(bindir: Path, root: Path, run_as: _RunAs | None) -> None:
    done = subprocess.run(
        [
            str(bindir / "initdb"),
            f"--pgdata={root / 'data'}",
            f"--username={SUPERUSER}",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        ],
        cwd=root,
        env=_child_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        user=run_as.uid if run_as else None,
        group=run_as.gid if run_as else None,
        extra_groups=[] if run_as else None,
    )
    if done.returncode != 0:
        raise PostgresStartError(
            f"initdb exited with {done.returncode}:\n{done.stdout}\n{done.stderr}".rstrip()
        )


def _spawn(
    bindir: Path,
    root: Path,
    port: int,
    run_as: _RunAs | None,
    overrides: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    settings = {
        **_SETTINGS,
        **(overrides or {}),
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": str(root),
    }
    argv = [str(bindir / "postgres"), "-D", str(root / "data")]
    for name, value in settings.items():
        argv += ["-c", f"{name}={value}"]
    with open(root / "postgres.log", "ab") as log:
        return subprocess.Popen(
            argv,
            cwd=root,
            env=_child_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own session, so a Ctrl-C at the terminal reaches the tests, which stop it.
            start_new_session=True,
            preexec_fn=parent_death_signal(signal.SIGQUIT),
            user=run_as.uid if run_as else None,
            group=run_as.gid if run_as else None,
            extra_groups=[] if run_as else None,
        )


def _wait_ready(server: PgServer) -> bool:
    """Wait until the server takes connections (True) or its postmaster exits (False)."""
    import psycopg

    def ready() -> bool | None:
        if server.process.poll() is not None:
            return True
        try:
            server.admin()
        except psycopg.OperationalError:
            return None
        return True

    wait_until(
        ready,
        f"PostgreSQL to accept connections on port {server.port}",
        describe=server.log_tail,
    )
    return server.process.poll() is None


def start_server(
    bindir: Path,
    *,
    run_as: _RunAs | None = None,
    base: Path | None = None,
    settings: Mapping[str, str] | None = None,
) -> PgServer:
    """Start a server from the programs in ``bindir``.

    The caller stops it and removes its ``root`` (`running_server` does both).

    It runs as ``run_as`` (as this process's user when None), in a new directory in ``base``
    (the system's temporary directory when None). ``settings`` replace or add to the server's
    (durability is off by default, which a benchmark comparing commits may want on).

    Raises:
        PostgresStartError: initdb failed, or postgres exited before taking connections.
    """
    base = base if base is not None else _base_dir(run_as)
    remove_leftovers(base)
    root = Path(tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-", dir=base))
    server: PgServer | None = None
    try:
        if run_as is not None:
            os.chown(root, run_as.uid, run_as.gid)
        _initdb(bindir, root, run_as)
        for _attempt in range(_PORT_ATTEMPTS):
            port = _free_port()
            server = PgServer(root, bindir, port, _spawn(bindir, root, port, run_as, settings))
            if _wait_ready(server):
                return server
            server.stop()
            # Another process took the port between the pick and the bind: pick again.
            if "could not bind" not in server.log_tail(lines=50):
                break
        assert server is not None
        raise PostgresStartError(f"postgres exited before taking connections:\n{server.log_tail()}")
    except BaseException:
        try:
            if server is not None:  # it may still run: the wait for it gave up, or was stopped
                server.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)
        raise


@contextlib.contextmanager
def running_server(
    bindir: Path | None = None, *, settings: Mapping[str, str] | None = None
) -> Iterator[PgServer]:
    """A server for the duration of the block, stopped and removed however the block ends."""
    server = start_server(bindir or find_bindir(), run_as=_run_as(), settings=settings)
    try:
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(server.root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Fixtures (registered for every test by tests/conftest.py)


@pytest.fixture(scope="session")
def pg_bindir() -> Path:
    """Where PostgreSQL's server programs are; fails saying what to install when they are not.

    Skips instead when ``JARVIS_TEST_NO_POSTGRES`` is set (to anything but 0).
    """
    if os.environ.get(SKIP_ENV, "") not in ("", "0"):
        pytest.skip(f"{SKIP_ENV} is set: the tests that need PostgreSQL are skipped")
    try:
        return find_bindir()
    except PostgresMissing as missing:
        pytest.fail(str(missing), pytrace=False)


@pytest.fixture(scope="session")
def pg_server(pg_bindir: Path) -> Iterator[PgServer]:
    """This worker's PostgreSQL server, started on first use and stopped when the session ends."""
    with running_server(pg_bindir) as server:
        yield server


@pytest.fixture
def pg_databases(pg_server: PgServer) -> Iterator[Callable[[], str]]:
    """Make fresh databases on this worker's server: each call returns a new one's URL.

    All are dropped when the test ends, with any connection the test left open to them.
    """
    made: list[str] = []

    def make() -> str:
        name = pg_server.create_database()
        made.append(name)
        return pg_server.url(name)

    yield make
    for name in made:
        pg_server.drop_database(name)


@pytest.fixture
def pg_url(pg_databases: Callable[[], str]) -> str:
    """The URL of a fresh, empty database of the test's own."""
    return pg_databases()
