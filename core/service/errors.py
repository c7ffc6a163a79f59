"""The errors the front door raises: the store's own, never a database driver's.

A front end catches `StoreError` (a code and a sentence) and `ServiceError`; the drivers'
exceptions (sqlite3's, psycopg's) are turned into `StoreError` at the door (`store_faults`), so
no front end names a driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.store.errors import LASTING, StoreError
from core.store.faults import database_errors, fault

__all__ = ["LASTING", "ServiceError", "StoreError", "store_faults", "as_store_error"]


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


def as_store_error(exc: BaseException, where: Path | str) -> StoreError | None:
    """``exc`` as the store's error when it is one (or a driver's fault of the store at
    ``where``); None for anything else."""
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, database_errors()):
        return fault(exc, where)
    return None


@contextmanager
def store_faults(where: Path | str) -> Iterator[None]:
    """Turn a driver's exception raised in the block into the store's `StoreError` (the
    store at ``where`` is named in its sentence)."""
    try:
        yield
    except database_errors() as exc:
        raise fault(exc, where) from None
