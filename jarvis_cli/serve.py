"""``jarvis serve``: the operator console in a browser, through textual-serve.

Each page opened gets its own console: textual-serve starts ``jarvis tui --no-host`` on the same
workspace, store and operator for each websocket, and carries its screen and keys; closing the
page ends that console. The workspace's host is started here once (`jarvis_cli.tui.start_host`,
as ``jarvis tui`` does), before the first page, never by a page: one host per workspace, which
keeps running when serving stops. Who may connect is `jarvis_cli.serve_access`'s business.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import ipaddress
import os
import shlex
import signal
import socket
import sys
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server

from core.service.workspace import STORE_ENV_VAR, Workspace
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import escape, write_error
from jarvis_cli.serve_access import TOKEN_ENV_VAR, Access, Bind, Token, choose_token, parse_bind
from jarvis_cli.tui import check_theme, open_workspace, say_host_keeps_running, start_host

#: Who the consoles act as (`core.identity`, which a front end does not import).
OPERATOR_ENV_VAR = "JARVIS_OPERATOR"
#: How much longer than `jarvis tui` it waits for the host it starts to take the workspace. No
#: one watches a blank screen meanwhile (the address is printed once the host is up), and a
#: server started with a busy machine, at boot say, should not give up where a console would:
#: it waits longer than `jarvis tui`'s 30 s. A host that fails exits, and is
#: reported, at once; this only bounds the wait for one that neither fails nor takes it.
HOST_PATIENCE_S = 55.0
#: How long the consoles still open get to quit when serving stops, before it stops anyway
#: (each then ends when it finds its input closed).
CLOSE_GRACE_S = 10.0


def console_command(workspace: Workspace, theme: str | None) -> str:
    """The shell command textual-serve runs for each page: this Python's ``jarvis tui``, with the
    theme given to ``jarvis serve`` (none given: the console's own choice, as `jarvis tui`)."""
    argv = [sys.executable, "-m", "jarvis_cli", "tui", "--no-host"]
    argv += ["--workspace", str(workspace.root)]
    if theme is not None:
        argv += ["--theme", theme]
    return "exec " + shlex.join(argv)


class ConsoleServer(Server):
    """textual-serve's server with the access check in front, page addresses taken from the
    request, and the consoles still open ended on the way out."""

    def __init__(self, command: str, access: Access, title: str) -> None:
        super().__init__(command, title=title)
        self.access = access
        self.sessions: set[asyncio.Task[Any]] = set()

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.access.middleware)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints a banner here; `run` says what is served instead."""

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        # textual-serve writes its own address into the page: bound to 0.0.0.0, that would
        # send the browser to 0.0.0.0. The address the browser used is the one that works.
        origin = f"{request.scheme}://{request.host}"
        websocket = ("wss" if request.scheme == "https" else "ws") + f"://{request.host}/ws"
        size = request.query.get("fontsize", "16")
        return {
            "font_size": int(size) if size.isdigit() and 6 <= int(size) <= 64 else 16,
            "app_websocket_url": websocket,
            "config": {"static": {"url": f"{origin}/static/"}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        task = asyncio.current_task()
        assert task is not None
        self.sessions.add(task)
        write_error(f"jarvis: a console opened for {request.remote} ({len(self.sessions)} open).")
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions.discard(task)
            write_error(f"jarvis: a console closed ({len(self.sessions)} open).")

    async def close_sessions(self) -> None:
        """End every console still open: each is told to quit, then its page is closed."""
        for task in self.sessions:
            task.cancel()
        if self.sessions:
            await asyncio.wait(set(self.sessions), timeout=CLOSE_GRACE_S)


def _listen_error(bind: Bind, exc: OSError) -> UsageError:
    where = f"{_bracketed(bind.host)}:{bind.port}"
    if exc.errno == errno.EADDRINUSE:
        return UsageError(
            "address_in_use",
            f"{where} is already in use (another jarvis serve?); choose another port with "
            f"--bind {_bracketed(bind.host)}:PORT.",
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return UsageError("address_unavailable", f"{bind.host} is not an address of this machine.")
    if exc.errno == errno.EACCES:
        return UsageError(
            "permission_denied", f"listening on {where} is not permitted; use a port above 1023."
        )
    return UsageError("cannot_listen", f"cannot listen on {where}: {exc.strerror or exc}.")


def _bracketed(host: str) -> str:
    """``host`` as it goes before ``:PORT``: an IPv6 address in brackets."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


def _url_host(bind: Bind) -> str:
    """The host part of the address to open: this machine's name when bound to every address."""
    return socket.gethostname() if bind.unspecified else _bracketed(bind.host)


def _say_serving(
    workspace: Workspace, bind: Bind, port: int, token: Token | None, *, host_started: bool
) -> None:
    base = f"http://{_url_host(bind)}:{port}/"
    where = "every address of this machine" if bind.unspecified else f"{_url_host(bind)}:{port}"
    serving = f"Serving the console of {workspace.root} on {where}"
    if token is None:
        lines = [f"{serving}, to this machine only (loopback: no token).", f"Open: {base}"]
    elif token.generated:
        lines = [
            f"{serving}: a request needs the token made for this run (set {TOKEN_ENV_VAR} to "
            "choose one).",
            f"Open: {base}?token=",
        ]
    else:
        lines = [
            f"{serving}: a request needs the token of ${TOKEN_ENV_VAR}.",
            f"Open: {base}?token=${TOKEN_ENV_VAR}",
        ]
    kept = "; the host it started keeps running" if host_started else ""
    lines.append(f"Ctrl-C stops serving{kept}.")
    # A workspace's path is shown as text, whatever characters it holds. The token made for
    # this run is the one secret to print (its characters are URL-safe): the masking of
    # secrets in output would hide it.
    text = [escape(line) for line in lines]
    if token is not None and token.generated:
        text[1] += token.value
    sys.stdout.write("".join(line + "\n" for line in text))
    sys.stdout.flush()


async def _serve(args: argparse.Namespace, bind: Bind, token: Token | None) -> int:
    workspace, location = open_workspace(args.workspace, args.db)
    access = Access(token, bind.port)
    server = ConsoleServer(
        console_command(workspace, args.theme), access, f"jarvis · {workspace.root.name}"
    )
    runner = web.AppRunner(await server._make_app(), handle_signals=False, access_log=None)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    launched = None
    try:
        site = web.TCPSite(runner, bind.host, bind.port, shutdown_timeout=CLOSE_GRACE_S)
        try:
            await site.start()
        except OSError as exc:
            raise _listen_error(bind, exc) from None
        port = runner.addresses[0][1]
        access.set_port(port)
        # Started once the address is ours: a port in use leaves no host behind.
        launched = await asyncio.to_thread(
            start_host, workspace, location, args.db, no_host=args.no_host,
            patience_s=HOST_PATIENCE_S,
        )  # fmt: skip
        _say_serving(workspace, bind, port, token, host_started=launched is not None)
        await stop.wait()
        write_error("jarvis: stopping: closing the consoles still open.")
        await server.close_sessions()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await runner.cleanup()
        if launched is not None:
            say_host_keeps_running(launched, workspace, "server")
    return 0


def run(args: argparse.Namespace) -> int:
    check_theme(args.theme)
    bind = parse_bind(args.bind)
    token = choose_token(bind)
    # Each console textual-serve starts inherits this environment: the same store and operator.
    if args.db:
        os.environ[STORE_ENV_VAR] = args.db
    if args.operator:
        os.environ[OPERATOR_ENV_VAR] = args.operator
    return asyncio.run(_serve(args, bind, token))
