"""The host's notifications: runs that started needing a human, posted to the webhook.

A room of the host: a thread with its own store connection reads the journal's transitions and
decides with `core.notify.policy` what to post; the post itself goes out from the sender's
thread (`core.notify.webhook`), so the loop never waits on the journal's read nor on a slow or
failing receiver. A bug here is logged and the room tries again later; it never ends the host.

**One notice per fleet.** On a store shared by many hosts, every host's notifier follows the
same journal. Before telling of a stretch of it, a host claims the stretch by moving the
store's mark (``notify_marks``, `core.store.notify_marks`) from where it read it to the
stretch's end, in one statement: one claim wins, so each transition is told by one host,
whichever moved the run (an operator's CLI, a console, any host). The mark starts at the
journal's end when the first host with a webhook starts: what happened before is not news. A
host that dies between its claim and its post loses that notice: at most once, never twice.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.host.faults import io_fault
from core.notify.policy import NotifyPolicy, entered
from core.notify.webhook import WebhookSender, WebhookSettings, shown_url
from core.run_views import needs_attention
from core.store.api import RunStore
from core.store.errors import StoreError
from core.store.location import open_store

log = logging.getLogger("jarvis.host")

#: The mark's name in ``notify_marks``.
MARK = "webhook"
#: How often the room looks at the journal's end.
LOOK_EVERY_S = 0.25
#: Journal entries claimed at a time at most.
SPAN = 5000
#: After a fault of the store, the room waits this long before opening it again.
RETRY_S = 5.0


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    payload = row.get("payload")
    if isinstance(payload, str):
        try:
            row = {**row, "payload": json.loads(payload)}
        except ValueError:
            row = {**row, "payload": None}
    return row


class Notifier:
    """The room's thread. `start` and `join` are called from the host's loop only.

    Args:
        store_at: the workspace's store (a connection of the room's own is opened on it).
        settings: the webhook (None: no webhook, the thread never starts).
        policy: when notices go out (`NotifyPolicy`).
        stopping: set when the host stops.
        clock: seconds, for the policy (tests pass their own).
    """

    def __init__(
        self,
        store_at: str | Path,
        settings: WebhookSettings | None,
        policy: NotifyPolicy,
        stopping: threading.Event,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store_at = store_at
        self.settings = settings
        self.policy = policy
        self.stopping = stopping
        self.clock = clock
        self.sender = WebhookSender(settings, stopping) if settings is not None else None
        self._thread: threading.Thread | None = None
        self.claimed = 0
        """Stretches of the journal this host claimed."""
        self.looks = 0
        """Looks at the journal finished (tests wait on them)."""

    def start(self) -> None:
        if self.sender is None or self._thread is not None:
            return
        assert self.settings is not None
        log.info("notify: notices go to the webhook %s", shown_url(self.settings.url))
        self._thread = threading.Thread(target=self._run, name="notify", daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
        if self.sender is not None:
            self.sender.join(timeout)

    def _run(self) -> None:
        store: RunStore | None = None
        while not self.stopping.is_set():
            try:
                if store is None:
                    store = open_store(self.store_at, migrate=False)
                more = self.look(store)
                self.looks += 1
            except Exception as exc:  # the room's trouble must not end the host
                problem = io_fault(exc) or (str(exc) if isinstance(exc, StoreError) else None)
                if problem is None:
                    log.exception("notify failed; it tries again in %gs", RETRY_S)
                else:
                    log.warning("notify: %s; it tries again in %gs", problem, RETRY_S)
                if store is not None:
                    store.close()
                    store = None
                self.stopping.wait(RETRY_S)
                continue
            if not more:
                self.stopping.wait(LOOK_EVERY_S)
        if store is not None:
            store.close()

    def look(self, store: RunStore) -> bool:
        """Claim the journal's next stretch, note its runs that started needing a human, and
        hand over the notice that is due. True when more of the journal waits."""
        mark = store.notify_mark(MARK)
        newest = store.last_seq()
        if mark is None:
            with store.transaction() as tx:
                tx.start_notify_mark(MARK, newest)
            return True
        more = False
        if newest > mark:
            upto = min(newest, mark + SPAN)
            more = upto < newest
            with store.transaction() as tx:
                won = tx.claim_notified(MARK, mark, upto)
            if won:
                self.claimed += 1
                found = entered(_decoded(row) for row in store.transitions_between(mark, upto))
                self.policy.note(found, self.clock())
        notice = self.policy.due(self.clock(), lambda run_id: _waits(store, run_id))
        if notice is not None and self.sender is not None:
            self.sender.send(notice)
        return more


def _waits(store: RunStore, run_id: str) -> bool:
    """Whether ``run_id`` still needs a human (dealt with meanwhile: not told)."""
    row = store.get_run(run_id)
    return row is not None and needs_attention(row)
