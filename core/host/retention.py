"""The host's retention: the store's old history removed as ``[store]`` allows, off the loop.

At most every `EVERY_S` (and once `FIRST_AFTER_S` after the host starts) a thread with its own
store connection removes what the policy lets go (`core.store.retention`), a batch of at most
`BATCH_ROWS` rows per short transaction, so the write lock is never held for long and the loop,
ingesting on its own connection, waits at most one batch. It stops between batches as soon as
the host stops. No policy (the default): the thread never starts.

A receipt goes only when it is older than the policy AND its file is no longer on disk: a file
left by a crash between its commit and its unlink is harmless when seen again only while its
receipt exists. The host checks its own IPC tree (and ``work/requests/``, where OpenClaw's
requests are); another host's tree it cannot see, so while another host that served the store
is lost or recovered (it may have left files it has not yet swept, and will at its start), no
receipt is removed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from core.host.faults import io_fault
from core.lifecycle import TERMINAL, RunState
from core.store.api import RunStore
from core.store.hosts import lease_state
from core.store.location import open_store
from core.store.retention import BATCH_ROWS, RetentionPolicy, cutoff

log = logging.getLogger("jarvis.host")

EVERY_S = 300.0
"""How often retention looks for history to remove."""
FIRST_AFTER_S = 2.0
"""How soon after the host's start it looks first."""

(FINISHED,) = (state.value for state in TERMINAL if isinstance(state, RunState))


def receipt_file(key: str) -> str:
    """The file a receipt is of: its key is the file's relative path, ``:``, its sha256."""
    return key.rsplit(":", 1)[0]


class Retention:
    """The retention thread. `start_due` and `join` are called from the host's loop only."""

    def __init__(
        self,
        store_at: str | Path,
        policy: RetentionPolicy,
        *,
        roots: tuple[Path, ...],
        host: str,
        stopping: threading.Event,
    ) -> None:
        """
        Args:
            roots: where receipts' files are, relative paths being taken from each (the IPC
                tree, the workspace).
        """
        self.store_at = store_at
        self.policy = policy
        self.roots = roots
        self.host = host
        self.stopping = stopping
        self.thread: threading.Thread | None = None
        self._next = time.monotonic() + FIRST_AFTER_S
        self.passes = 0
        """Passes finished (each removed what was due, or stopped at the host's stop)."""
        self.removed = {"progress": 0, "journal": 0, "receipts": 0}
        """Rows removed by this host, per table."""

    def start_due(self) -> None:
        if not self.policy.removes_anything or self.stopping.is_set():
            return
        if self.thread is not None and self.thread.is_alive():
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + EVERY_S
        self.thread = threading.Thread(target=self._pass, name="retention", daemon=True)
        self.thread.start()

    def join(self, timeout: float) -> None:
        """Wait for a pass under way (it stops at its next batch), once the host is stopping."""
        if self.thread is not None:
            self.thread.join(timeout)

    def _pass(self) -> None:
        try:
            store = open_store(self.store_at, migrate=False)
        except Exception as exc:
            log.warning("retention: the store cannot be opened (%s); next in %gs", exc, EVERY_S)
            return
        try:
            self.run(store)
            self.passes += 1
        except Exception as exc:  # retention's trouble must not end the host
            problem = io_fault(exc)
            if problem is None:
                log.exception("retention failed; it tries again in %gs", EVERY_S)
            else:
                log.warning("retention stopped: %s; it tries again in %gs", problem, EVERY_S)
        finally:
            store.close()

    def run(self, store: RunStore) -> None:
        """One pass: every table's due history, batch by batch, until none is left or the host
        stops."""
        for table in ("progress", "journal"):
            days = self.policy.days(table)
            while days is not None and not self.stopping.is_set():
                with store.transaction() as tx:
                    batch = tx.remove_history(table, FINISHED, days)
                self.removed[table] += batch.removed
                if not batch.more:
                    break
        days = self.policy.days("receipts")
        if days is not None and not self.stopping.is_set() and self._receipts_safe(store):
            self._receipts(store, days)
        if any(self.removed.values()):
            log.info("retention: removed so far %s", self.removed)

    def _receipts_safe(self, store: RunStore) -> bool:
        now = store.now()
        away = [
            str(h["name"])
            for h in store.hosts()
            if h["name"] != self.host and lease_state(h, now) in ("lost", "recovered")
        ]
        if away:
            log.info("retention keeps every receipt while host(s) %s may have files left", away)
        return not away

    def _receipts(self, store: RunStore, days: int) -> None:
        # Kept receipts stay at the front of the walk: it goes on past them. Receipts written
        # at one time may come in another order on the next read, so a pass may leave one
        # for the next; never one whose file is on disk, which is checked for each.
        before = cutoff(store.now(), days)
        kept = 0
        while not self.stopping.is_set():
            found = store.old_receipts(before, kept, BATCH_ROWS)
            gone = [key for key in found if not self._on_disk(receipt_file(key))]
            kept += len(found) - len(gone)
            if gone:
                with store.transaction() as tx:
                    self.removed["receipts"] += tx.remove_receipts(gone)
            if len(found) < BATCH_ROWS:
                return

    def _on_disk(self, relative: str) -> bool:
        # lexists: a link, even a broken one, is a file still there.
        return any(os.path.lexists(root / relative) for root in self.roots)
