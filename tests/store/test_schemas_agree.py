"""The two schemas agree: every table, column, type, default, key, constraint, index and
trigger of an SQLite store and of a PostgreSQL store, each after all its migrations, compared.

The PostgreSQL schema is written apart (core/store/postgres_schema.py: its first step is
SQLite's first twelve flattened); nothing but this test says the two still describe one store.
Column order is not compared: every statement names its columns, and rows are read by name.
What differs by design is named below, each with its reason; anything else is a failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from sqlite_utils import Database

from core.store.postgres_store import PostgresStore
from core.store.sqlite_store import SqliteStore

#: Columns PostgreSQL declares as a 32-bit ``integer`` where SQLite (whose integers are all
#: 64-bit) says INTEGER: a process id and two 0/1 flags, which the shared DDL writes once for
#: both (core/store/shared_ddl.py). Every other integer is ``bigint``, as wide as SQLite's.
NARROW_INTEGERS = {("hosts", "pid"), ("run_usage", "cost_computed"), ("runs", "retry_fresh")}

#: PostgreSQL has no rowid, by which SQLite orders steers: an identity column stands in.
POSTGRES_ONLY = {("steering_events", "id")}

Table = dict[str, Any]


def _default(text: str | None) -> str | None:
    if text is None:
        return None
    text = re.sub(r"::[a-z ]+$", "", text.strip())  # PostgreSQL's cast: ''::text
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text


def _predicate(text: str | None) -> str | None:
    if not text:
        return None
    text = " ".join(text.split()).lower()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text


def sqlite_schema(path: Path) -> dict[str, Table]:
    db = Database(path)
    tables: dict[str, Table] = {}
    names = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' AND name != '_sqlite_migrations'"
        ).fetchall()
    ]
    for table in names:
        info = db.execute(f"PRAGMA table_info({table})").fetchall()
        key = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        columns = {}
        for _, name, kind, notnull, default, _pk in info:
            # An INTEGER PRIMARY KEY is the rowid: numbered by SQLite, as an identity column is.
            identity = key == (name,) and kind.upper() == "INTEGER"
            family = {"INTEGER": "integer", "REAL": "real", "TEXT": "text"}[kind.upper()]
            # A key's columns are never NULL (SQLite would let a TEXT key be: a quirk it keeps
            # for old files; no statement relies on it).
            columns[name] = (
                family,
                bool(notnull) or name in key,
                "identity" if identity else _default(default),
            )
        unique: set[tuple[str, ...]] = set()
        indexes: dict[str, tuple[tuple[str, ...], bool, str | None]] = {}
        for _, index, is_unique, origin, _partial in db.execute(
            f"PRAGMA index_list({table})"
        ).fetchall():
            cols = tuple(r[2] for r in db.execute(f"PRAGMA index_info({index})").fetchall())
            if origin == "u":
                unique.add(cols)
            elif origin == "c":
                (sql,) = db.execute(
                    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [index]
                ).fetchone()
                where = re.split(r"\bWHERE\b", sql, maxsplit=1, flags=re.IGNORECASE)
                indexes[index] = (
                    cols,
                    bool(is_unique),
                    _predicate(where[1] if len(where) > 1 else None),
                )
        foreign = {
            ((r[3],), r[2], (r[4],))
            for r in db.execute(f"PRAGMA foreign_key_list({table})").fetchall()
        }
        tables[table] = {
            "columns": columns,
            "primary_key": key,
            "unique": unique,
            "foreign_keys": foreign,
            "indexes": indexes,
        }
    triggers = set()
    for name, table, sql in db.execute(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
    ).fetchall():
        found = re.search(r"\b(BEFORE|AFTER|INSTEAD OF)\s+(INSERT|UPDATE|DELETE)\b", sql, re.I)
        assert found, name
        triggers.add((table, found[1].upper(), found[2].upper()))
    db.close()
    return {"tables": tables, "triggers": triggers}  # type: ignore[dict-item]


def postgres_schema(url: str) -> dict[str, Table]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows: Callable[..., list[tuple[Any, ...]]] = lambda sql, *args: conn.execute(  # noqa: E731
            sql, args
        ).fetchall()
        names = [
            r[0]
            for r in rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' AND table_name != "
                "'jarvis_migrations'"
            )
        ]
        tables: dict[str, Table] = {}
        for table in names:
            columns = {}
            for name, kind, nullable, default, identity in rows(
                "SELECT column_name, data_type, is_nullable, column_default, is_identity "
                "FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = %s",
                table,
            ):
                family = {
                    "bigint": "integer",
                    "integer": "integer" if (table, name) in NARROW_INTEGERS else "int4",
                    "double precision": "real",
                    "text": "text",
                }.get(kind, kind)
                columns[name] = (
                    family,
                    nullable == "NO",
                    "identity" if identity == "YES" else _default(default),
                )
            constraints: dict[str, set[tuple[str, ...]]] = {"p": set(), "u": set()}
            foreign = set()
            for kind, cols, target, target_cols in rows(
                "SELECT c.contype, "
                "ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i) "
                "      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n "
                "      ORDER BY k.i), "
                "c.confrelid::regclass::text, "
                "ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i) "
                "      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n "
                "      ORDER BY k.i) "
                "FROM pg_constraint c WHERE c.conrelid = %s::regclass",
                table,
            ):
                if kind == "f":
                    foreign.add((tuple(cols), target, tuple(target_cols)))
                elif kind in constraints:
                    constraints[kind].add(tuple(cols))
            indexes = {}
            for index, cols, is_unique, predicate in rows(
                "SELECT i.relname, "
                # An expression's place in the index has no column (NULL, as SQLite says).
                "ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(n, o) "
                "      LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n "
                "      ORDER BY k.o), "
                "x.indisunique, pg_get_expr(x.indpred, x.indrelid) "
                "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "WHERE x.indrelid = %s::regclass "
                "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)",
                table,
            ):
                indexes[index] = (tuple(cols), bool(is_unique), _predicate(predicate))
            (key,) = constraints["p"] or {()}
            tables[table] = {
                "columns": columns,
                "primary_key": key,
                "unique": constraints["u"],
                "foreign_keys": foreign,
                "indexes": indexes,
            }
        triggers = {
            (table, timing, event)
            for table, timing, event in rows(
                "SELECT event_object_table, action_timing, event_manipulation "
                "FROM information_schema.triggers WHERE trigger_schema = current_schema()"
            )
        }
    return {"tables": tables, "triggers": triggers}  # type: ignore[dict-item]


def without_postgres_only(schema: dict[str, Any]) -> dict[str, Any]:
    for table, column in POSTGRES_ONLY:
        found = schema["tables"][table]
        assert column in found["columns"], f"{table}.{column} is gone: drop it from POSTGRES_ONLY"
        del found["columns"][column]
        found["unique"].discard((column,))
    return schema


def test_the_sqlite_and_postgresql_schemas_agree_after_every_migration(
    tmp_path: Path, pg_url: str
) -> None:
    SqliteStore(tmp_path / "jarvis.db").close()
    PostgresStore(pg_url).close()
    lite = sqlite_schema(tmp_path / "jarvis.db")
    pg = without_postgres_only(postgres_schema(pg_url))
    assert sorted(lite["tables"]) == sorted(pg["tables"])
    for table in sorted(lite["tables"]):
        for part in ("columns", "primary_key", "unique", "foreign_keys", "indexes"):
            assert lite["tables"][table][part] == pg["tables"][table][part], (table, part)
    assert lite["triggers"] == pg["triggers"]


def test_the_comparison_sees_each_kind_of_difference(tmp_path: Path, pg_url: str) -> None:
    PostgresStore(pg_url).close()
    before = without_postgres_only(postgres_schema(pg_url))["tables"]
    assert before["runs"]["columns"]["lane"] == ("text", True, None)
    assert before["runs"]["indexes"]["runs_verification"] == (
        ("verification_state",),
        False,
        "verification_state is not null",
    )
    assert before["progress_events"]["unique"] == {("run_id", "attempt", "name")}
    assert (("run_id",), "runs", ("run_id",)) in before["run_git"]["foreign_keys"]
    assert before["journal"]["columns"]["seq"] == ("integer", True, "identity")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for change in (
            "ALTER TABLE runs ALTER COLUMN lane DROP NOT NULL",
            "ALTER TABLE runs ALTER COLUMN retry_count SET DEFAULT 2",
            "ALTER TABLE run_usage ALTER COLUMN tokens_in TYPE integer",
            "DROP INDEX runs_lane",
            "ALTER TABLE worker_stderr DROP CONSTRAINT worker_stderr_run_id_attempt_key",
            "ALTER TABLE run_git DROP CONSTRAINT run_git_run_id_fkey",
            "DROP TRIGGER journal_no_update ON journal",
        ):
            conn.execute(change)
    after = postgres_schema(pg_url)
    tables = without_postgres_only(after)["tables"]
    assert tables["runs"]["columns"]["lane"][1] is False
    assert tables["runs"]["columns"]["retry_count"][2] == "2"
    assert tables["run_usage"]["columns"]["tokens_in"][0] == "int4"
    assert "runs_lane" not in tables["runs"]["indexes"]
    assert tables["worker_stderr"]["unique"] == set()
    assert tables["run_git"]["foreign_keys"] == set()
    assert not {t for t in after["triggers"] if t[0] == "journal"}  # type: ignore[index]
