"""The errors the front door raises: the store's own, never a database driver's.

A front end catches `StoreError` (a code and a sentence) and `ServiceError`; the drivers'
exceptions (sqlite3's, psycopg's) are turned into `StoreError` by the store's backends
themselves, so no front end names a driver.
"""

from __future__ import annotations

from core.store.errors import LASTING, StoreError

__all__ = ["LASTING", "ServiceError", "StoreError", "as_store_error"]


class ServiceError(Exception):
    """A request the engine cannot carry out, for a reason outside the run (an unusable
    ``jarvis.toml``, say): a stable ``code`` and a sentence. Front ends report it as a usage or
    I/O error, never as a verdict on the run."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


def as_store_error(exc: BaseException) -> StoreError | None:
    """``exc`` when it is the store's error, else None. Every backend turns its driver's
    exceptions into a `StoreError` itself (`core.store.faults`), so nothing else is one."""
    return exc if isinstance(exc, StoreError) else None
