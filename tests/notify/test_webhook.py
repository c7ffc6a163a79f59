"""The webhook's sender against a real HTTP server on 127.0.0.1: a notice is posted as JSON
Slack and Discord both take; a receiver that answers 500, closes the connection, refuses it or
hangs is tried again after a backoff, then the notice is dropped with a log line; the caller
never waits on it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from core.lifecycle import RunState
from core.notify.policy import Entered, notice_of
from core.notify.webhook import QUEUED, WebhookSender, WebhookSettings
from tests.host.hostkit import wait_until
from tests.notify.hook_server import hook_server, refused_url
from tests.processes import HANG_GUARD_S

NOTICE = notice_of([Entered("r-1", RunState.FAILED, "exit 1\n\x1b[31mred\x1b[0m")])


@pytest.fixture
def stopping() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _sender(url: str, stopping: threading.Event, **kw: float) -> WebhookSender:
    settings = WebhookSettings(url, timeout_s=kw.get("timeout_s", HANG_GUARD_S),
                               retries=int(kw.get("retries", 2)), retry_after_s=0.01)  # fmt: skip
    return WebhookSender(settings, stopping)


def test_a_notice_is_posted_as_text_and_content_inert(stopping: threading.Event) -> None:
    with hook_server() as server:
        sender = _sender(server.url, stopping)
        sender.send(NOTICE)
        wait_until(lambda: sender.delivered == 1, HANG_GUARD_S, "the notice delivered")
        (body,) = server.bodies
    assert body["text"] == body["content"]
    assert body["text"] == "Jarvis: a run needs you: Run r-1: failed: exit 1 \\x1b[31mred\\x1b[0m"
    assert sender.tries == 1 and sender.dropped == 0


@pytest.mark.parametrize("answer", [500, "close"])
def test_a_failing_receiver_is_tried_again_then_the_notice_is_dropped_with_a_log_line(
    stopping: threading.Event, caplog: pytest.LogCaptureFixture, answer: int | str
) -> None:
    caplog.set_level(logging.INFO, "jarvis.host")
    with hook_server(then=answer) as server:
        sender = _sender(server.url, stopping, retries=2)
        sender.send(NOTICE)
        wait_until(lambda: sender.dropped == 1, HANG_GUARD_S, "the notice dropped")
        assert server.posts == 3  # the first try and two retries
    assert sender.delivered == 0
    dropped = [r.getMessage() for r in caplog.records if "dropped a notice" in r.getMessage()]
    assert len(dropped) == 1 and "after 3 tries" in dropped[0]
    assert "s3cr3t" not in caplog.text  # the URL's path is its secret


def test_a_receiver_that_recovers_gets_the_notice_once(stopping: threading.Event) -> None:
    with hook_server([500, "close"]) as server:
        sender = _sender(server.url, stopping, retries=3)
        sender.send(NOTICE)
        wait_until(lambda: sender.delivered == 1, HANG_GUARD_S, "the notice delivered")
        assert server.posts == 3 and sender.dropped == 0


def test_a_refused_connection_is_tried_again_then_dropped(
    stopping: threading.Event, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "jarvis.host")
    sender = _sender(refused_url(), stopping, retries=1)
    sender.send(NOTICE)
    wait_until(lambda: sender.dropped == 1, HANG_GUARD_S, "the notice dropped")
    assert sender.tries == 2
    assert "Connection refused" in caplog.text


def test_a_receiver_slower_than_the_timeout_counts_as_failed(stopping: threading.Event) -> None:
    with hook_server(then="hold") as server:
        sender = _sender(server.url, stopping, timeout_s=0.2, retries=1)
        sender.send(NOTICE)
        wait_until(lambda: sender.dropped == 1, HANG_GUARD_S, "the notice dropped")
        assert server.posts == 2 and server.answered == 0


def test_the_caller_never_waits_on_a_hung_receiver(stopping: threading.Event) -> None:
    with hook_server(then="hold") as server:
        sender = _sender(server.url, stopping, retries=0)
        sender.send(NOTICE)
        wait_until(lambda: server.posts == 1, HANG_GUARD_S, "the first post held")
        # The receiver holds the first post; every later notice is queued or dropped at once.
        for _ in range(QUEUED + 5):
            sender.send(NOTICE)
        assert sender.dropped == 5 and server.answered == 0
        server.release()
        wait_until(lambda: sender.delivered == 1 + QUEUED, HANG_GUARD_S, "the queue delivered")


def test_a_stopping_host_ends_the_wait_between_tries(stopping: threading.Event) -> None:
    with hook_server(then=500) as server:
        settings = WebhookSettings(server.url, timeout_s=HANG_GUARD_S, retries=5,
                                   retry_after_s=HANG_GUARD_S)  # fmt: skip
        sender = WebhookSender(settings, stopping)
        sender.send(NOTICE)
        wait_until(lambda: server.posts == 1, HANG_GUARD_S, "the first try")
        stopping.set()
        sender.join(HANG_GUARD_S)
        assert sender._thread is not None and not sender._thread.is_alive()
        assert server.posts == 1
