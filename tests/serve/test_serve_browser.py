"""`jarvis serve` in a real headless browser: the page shows the store's runs, its keys act on
the store, and off loopback only the token opens it.

Each test starts the real command on a workspace filled by the console tests' store
(tests/tui/conftest.py) and opens its address in Debian's chromium (tests/serve/browser.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from playwright.sync_api import Browser

from tests.processes import HANG_GUARD_S
from tests.serve.browser import CHROMIUM, GUARD_MS, PageTerminal, chromium, served
from tests.tui.conftest import RUNS, build_store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (.ci/run installs it)"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        yield opened


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    build_store(root / "jarvis.db")
    return root


def show(run_id: str, *where: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "jarvis_cli", "show", run_id, *where, "--json"],
        capture_output=True, text=True, timeout=HANG_GUARD_S, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_the_page_shows_the_runs_and_its_keys_act_on_the_store(
    browser: Browser, tmp_path: Path
) -> None:
    # The store named by --db and the operator named by --operator reach the page's console.
    store = build_store(tmp_path / "fleet.db")
    workspace = tmp_path / "ws"
    options = ("--db", str(store), "--operator", "browser-operator", "--bind", "127.0.0.1:0")
    with served(workspace, *options) as (server, url):
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        terminal = PageTerminal.open(page, url)
        screen = terminal.wait_for(
            lambda s: all(run_id in s for run_id in RUNS), "every run of the store"
        )
        assert str(workspace) in screen

        # Find the failed run as an operator would: filter by its id, then retry and confirm.
        terminal.press("/")
        terminal.wait_for(lambda s: "filter: run id" in s, "the filter box")
        page.keyboard.type("run-failed")
        terminal.press("Enter")
        terminal.wait_for(
            lambda s: "· 1 of " in s and "run-failed▏" not in s, "the filtered run, filter closed"
        )
        terminal.press("r")
        terminal.wait_for(lambda s: "this will be retry 1" in s, "the retry dialog")
        terminal.press("y")
        terminal.wait_for(lambda s: "Retried run run-failed" in s, "the confirmation")

        shown = show("run-failed", "--workspace", str(workspace), "--db", str(store))
        run = shown.get("run", shown)
        assert (run["state"], run["retry_count"]) == ("queued", 1)
        audit = run.get("audit") or shown.get("audit") or []
        assert any(
            row["action"] == "retry" and row["actor"] == "browser-operator" for row in audit
        ), audit

        # Ctrl-C at its terminal reaches the whole process group, the page's console included:
        # the server closes the console, the page says so, and nothing prints a traceback.
        os.killpg(server.pid, signal.SIGINT)
        page.wait_for_selector("body.-closed", state="attached", timeout=GUARD_MS)
        assert server.wait() == 0
        assert "a console closed (0 open)" in server.stderr
        assert "Traceback" not in server.stdout + server.stderr, server.stdout + server.stderr


def test_off_loopback_only_the_token_opens_the_console(browser: Browser, workspace: Path) -> None:
    with served(workspace, "--bind", "0.0.0.0:0") as (server, printed):
        assert "a request needs the token made for this run" in server.stdout
        # Bound to every address; reached here through 127.0.0.1.
        parts = urlsplit(printed)
        url = urlunsplit(parts._replace(netloc=f"127.0.0.1:{parts.port}"))
        token = parts.query.removeprefix("token=")
        bare = url.split("?", 1)[0]
        context = browser.new_context()
        page = context.new_page()

        refused = page.goto(bare, timeout=GUARD_MS)
        assert refused is not None and refused.status == 401
        assert "this console needs its token" in page.content()
        wrong = page.goto(f"{bare}?token={'x' * len(token)}", timeout=GUARD_MS)
        assert wrong is not None and wrong.status == 403
        assert "that token is not this console's" in page.content()
        # The websocket that carries the keys is refused as well, from the console's own origin.
        websocket = page.evaluate(
            """url => new Promise(done => {
                const socket = new WebSocket(url);
                socket.onopen = () => done("open");
                socket.onerror = () => done("refused");
            })""",
            bare.replace("http://", "ws://") + "ws?width=80&height=24",
        )
        assert websocket == "refused"
        assert "a console opened" not in server.stderr

        terminal = PageTerminal.open(page, url)
        assert page.url == bare  # the token left the address for a cookie
        terminal.wait_for(lambda s: "run-review" in s, "the runs")
        assert any(c["name"].startswith("jarvis_serve_") for c in context.cookies())
        context.close()
