"""How big the store is, per table: its rows, and its bytes where the database can say.

SQLite tells a table's bytes (its indexes' pages counted with it) through the ``dbstat``
virtual table, when the library was built with it; without it, only the file's pages are
known (`pages`). PostgreSQL tells each table's total size, indexes and TOAST included
(``pg_total_relation_size``). Reads for `jarvis store stats` (`core.service.store_stats`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from core.store.errors import QueryError
from core.store.statements import Statements


class SizeReads(Statements):
    """The store's tables, their rows and bytes; the database's pages."""

    dialect: ClassVar[Literal["sqlite", "postgres"]] = "sqlite"

    def table_names(self) -> list[str]:
        """Every table of Jarvis's schema (its migrations' own records left out)."""
        if self.dialect == "postgres":
            sql = (
                "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() "
                "AND tablename != 'jarvis_migrations' ORDER BY tablename"
            )
        else:
            sql = (
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name != '_sqlite_migrations' ORDER BY name"
            )
        return [str(r["name"]) for r in self.rows(sql)]

    def row_count(self, table: str) -> int:
        """Rows in ``table`` (one of `table_names`)."""
        return int(self.rows(f'SELECT COUNT(*) AS n FROM "{table}"')[0]["n"])

    def table_bytes(self) -> dict[str, int] | None:
        """Bytes per table, its indexes included; None when the database cannot say."""
        if self.dialect == "postgres":
            return {
                str(r["name"]): int(r["bytes"])
                for r in self.rows(
                    "SELECT tablename AS name, pg_total_relation_size(quote_ident(tablename)) "
                    "AS bytes FROM pg_tables WHERE schemaname = current_schema()"
                )
            }
        try:
            found = self.rows(
                "SELECT m.tbl_name AS name, SUM(d.pgsize) AS bytes FROM dbstat d "
                "JOIN sqlite_master m ON m.name = d.name GROUP BY m.tbl_name"
            )
        except QueryError:  # no dbstat in this build of SQLite
            return None
        return {str(r["name"]): int(r["bytes"] or 0) for r in found}

    def pages(self) -> dict[str, int]:
        """SQLite: ``page_size``, ``page_count``, ``freelist_count``; PostgreSQL: the
        database's ``database_bytes``."""
        if self.dialect == "postgres":
            (found,) = self.rows("SELECT pg_database_size(current_database()) AS n")
            return {"database_bytes": int(found["n"])}
        return {
            name: int(next(iter(self.rows(f"PRAGMA {name}")[0].values())))
            for name in ("page_size", "page_count", "freelist_count")
        }
