"""Which store a workspace uses (`--db`, `JARVIS_DB`, `[store] url`, else jarvis.db), and the
refusals of a store named wrongly or out of reach — each a sentence and a code, a password never
shown."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from core.store.errors import StoreError
from core.store.location import ENV_VAR, masked, open_store, store_location
from core.store.postgres_store import PostgresStore
from tests.cli.conftest import jarvis


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_the_flag_wins_then_the_environment_then_the_config_then_jarvis_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert store_location(tmp_path) == tmp_path / "jarvis.db"
    (tmp_path / "jarvis.toml").write_text('[store]\nurl = "postgresql://cfg@db/j"\n')
    assert store_location(tmp_path) == "postgresql://cfg@db/j"
    monkeypatch.setenv(ENV_VAR, "postgres://env@db/j")
    assert store_location(tmp_path) == "postgres://env@db/j"
    assert store_location(tmp_path, "postgresql://flag@db/j") == "postgresql://flag@db/j"


def test_an_sqlite_file_is_named_by_path_or_sqlite_url_relative_to_the_workspace(
    tmp_path: Path,
) -> None:
    assert store_location(tmp_path, "other.db") == tmp_path / "other.db"
    assert store_location(tmp_path, "/srv/j/jarvis.db") == Path("/srv/j/jarvis.db")
    assert store_location(tmp_path, "sqlite:////srv/j/x.db") == Path("/srv/j/x.db")
    assert store_location(tmp_path, "sqlite:///x.db") == tmp_path / "x.db"


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ("[store]\nurl = 3\n", "must be a non-empty string"),
        ("[store\nurl = 'x'\n", "is not valid TOML"),
    ],
)
def test_a_store_named_wrongly_in_the_config_is_refused_with_a_sentence(
    tmp_path: Path, config: str, words: str
) -> None:
    (tmp_path / "jarvis.toml").write_text(config)
    with pytest.raises(StoreError) as caught:
        store_location(tmp_path)
    assert caught.value.code == "store_config" and words in caught.value.message


def test_an_unknown_scheme_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        store_location(tmp_path, "mysql://db/j")
    assert caught.value.code == "store_config" and "mysql://" in caught.value.message


def test_a_password_is_masked_wherever_a_url_is_shown() -> None:
    assert masked("postgresql://ops:s3cret@db:5432/j") == "postgresql://ops:***@db:5432/j"
    assert masked("postgresql://db/j?sslmode=require&password=s3cret") == (
        "postgresql://db/j?sslmode=require&password=***"
    )
    assert masked("postgresql://ops@db/j") == "postgresql://ops@db/j"


def test_a_server_out_of_reach_is_store_unreachable_and_its_password_never_shown(
    tmp_path: Path,
) -> None:
    url = "postgresql://ops:s3cret@127.0.0.1:1/jarvis"  # nothing listens on port 1
    with pytest.raises(StoreError) as caught:
        open_store(url, busy_timeout_s=2)
    assert caught.value.code == "store_unreachable"
    assert "s3cret" not in caught.value.message and "ops:***@127.0.0.1:1" in caught.value.message
    (tmp_path / "ws").mkdir()
    done = jarvis("runs", "--workspace", tmp_path / "ws", "--db", url, "--json")
    assert done.code == 2 and "store_unreachable" in done.stdout and "s3cret" not in done.stdout


def test_an_empty_database_is_made_a_store_only_by_a_command_that_may_create_one(
    pg_url: str, tmp_path: Path
) -> None:
    with pytest.raises(StoreError) as caught:
        open_store(pg_url, create=False)
    assert caught.value.code == "no_workspace"
    ws = tmp_path / "ws"
    ws.mkdir()
    listed = jarvis("runs", "--workspace", ws, "--db", pg_url, "--json")
    assert listed.code == 2 and "no_workspace" in listed.stdout
    store = open_store(pg_url)
    assert isinstance(store, PostgresStore) and store.created
    store.close()
    again = open_store(pg_url, read_only=True)
    assert not again.created and again.newest_run_ids(5) == []
    again.close()


def test_a_database_of_someone_elses_or_from_a_newer_jarvis_is_refused(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id INT)")
    with pytest.raises(StoreError) as caught:
        open_store(pg_url)
    assert caught.value.code == "store_foreign"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE invoices")
    open_store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO jarvis_migrations VALUES ('9999_from_the_future', 'x')")
    with pytest.raises(StoreError) as caught:
        open_store(pg_url)
    assert caught.value.code == "store_too_new" and "9999_from_the_future" in caught.value.message


def test_a_read_only_open_writes_nothing(pg_url: str) -> None:
    open_store(pg_url).close()
    reader = open_store(pg_url, read_only=True)
    with pytest.raises(StoreError) as caught, reader.transaction() as tx:
        tx.journal("r1", "note", {}, "test")
    assert isinstance(caught.value.__cause__, psycopg.errors.ReadOnlySqlTransaction)
    assert caught.value.code == "store_read_only"
    reader.close()


def test_a_connection_the_server_dropped_is_opened_again_at_the_next_call(pg_url: str) -> None:
    store = open_store(pg_url)
    assert isinstance(store, PostgresStore)
    pid = store.conn.info.backend_pid
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    with pytest.raises(StoreError) as caught:
        store.last_seq()
    assert isinstance(caught.value.__cause__, psycopg.OperationalError)
    assert caught.value.code == "store_unreachable"
    from core.store.faults import store_fault

    fault = store_fault(caught.value)
    assert fault is not None and fault.kind == "unreachable"  # waited out, never a verdict
    assert store.last_seq() == 0  # the next call reconnects
    assert store.conn.info.backend_pid != pid
    store.close()
