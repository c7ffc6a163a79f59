"""A notice posted to a webhook: JSON that Slack and Discord both take, retried, then dropped.

The body is ``{"text": ..., "content": ...}``: Slack's incoming webhooks read ``text`` and
Discord's read ``content``, and each ignores the other's key. A post that fails (no answer
within ``timeout_s``, the connection refused or closed, an HTTP error) is tried again after
``retry_after_s``, doubled each time, up to ``retries`` more times; then it is dropped with a
log line. The standard library's urllib: one POST needs no client library.

`WebhookSender` posts from a thread of its own, a few notices queued at most, so neither the
host's loop nor the room reading the journal ever waits on a slow receiver; the waits between
tries end as soon as the host stops.
"""

from __future__ import annotations

import http.client
import json
import logging
import queue
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from core.notify.policy import Notice
from core.notify.text import safe_line

log = logging.getLogger("jarvis.host")

#: Characters of a notice's text posted: under Discord's 2,000 for ``content``.
POSTED_CHARS = 1900
#: Notices waiting for the sender at most; past it the newest is dropped (said in the log).
QUEUED = 8


@dataclass(frozen=True)
class WebhookSettings:
    """Where and how to post (``[notify]`` of ``jarvis.toml``)."""

    url: str
    timeout_s: float = 5.0
    retries: int = 3
    retry_after_s: float = 2.0


def shown_url(url: str) -> str:
    """The webhook as a log may show it: its scheme and host (its path is its secret)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or '?'}{f':{parts.port}' if parts.port else ''}/…"


def payload(notice: Notice) -> bytes:
    """The JSON posted for ``notice``."""
    text = safe_line(f"{notice.title}: {notice.body}", POSTED_CHARS)
    return json.dumps({"text": text, "content": text}).encode()


def post_once(settings: WebhookSettings, body: bytes) -> str | None:
    """Post ``body`` once; None when the receiver took it (a 2xx), else what went wrong."""
    request = urllib.request.Request(
        settings.url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "jarvis-notify"},
    )
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout_s) as answer:  # noqa: S310
            answer.read(4096)
            return None
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        return safe_line(str(reason) or type(reason).__name__, 200)


class WebhookSender:
    """The sender's thread and its queue. `send` never blocks; `join` waits for the thread once
    ``stopping`` is set."""

    def __init__(self, settings: WebhookSettings, stopping: threading.Event) -> None:
        self.settings = settings
        self.stopping = stopping
        self._queue: queue.Queue[Notice] = queue.Queue(QUEUED)
        self._thread: threading.Thread | None = None
        self.delivered = 0
        """Notices the receiver took."""
        self.dropped = 0
        """Notices given up on (every try failed, or the queue was full)."""
        self.tries = 0
        """Posts made, each try counted."""

    def send(self, notice: Notice) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="notify-webhook", daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait(notice)
        except queue.Full:
            self.dropped += 1
            log.warning(
                "notify: the webhook is behind; a notice was dropped: %s",
                safe_line(notice.body, 200),
            )

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                notice = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self._deliver(notice)
            except Exception:  # a bug here must not end the host; the next notice is tried
                log.exception("notify: posting to the webhook failed")

    def _deliver(self, notice: Notice) -> None:
        body = payload(notice)
        wait = self.settings.retry_after_s
        problem = None
        made = 0
        for attempt in range(self.settings.retries + 1):
            if attempt:
                if self.stopping.wait(wait):
                    break
                wait *= 2
            made += 1
            self.tries += 1
            problem = post_once(self.settings, body)
            if problem is None:
                self.delivered += 1
                return
            log.info("notify: the webhook %s refused a notice (%s)", shown_url(self.settings.url),
                     problem)  # fmt: skip
        self.dropped += 1
        log.warning(
            "notify: dropped a notice after %d tries to the webhook %s (%s): %s",
            made, shown_url(self.settings.url), problem,
            safe_line(notice.body, 200),
        )  # fmt: skip
