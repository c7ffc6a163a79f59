"""Who may reach the console `jarvis serve` serves: the address it binds and the token.

Bound to a loopback address, only this machine reaches it, and no token is asked unless one is
configured (``JARVIS_SERVE_TOKEN``). Bound to any other address, every request needs the token,
the websocket that carries the keys included: a valid ``?token=`` on the first page load is
swapped for a cookie (then a redirect takes it out of the address bar), and a script may send
``Authorization: Bearer TOKEN``. Tokens are compared in constant time.

Without a token, a loopback server still refuses a request whose ``Host`` is not a loopback name:
a web page the operator visits could otherwise point its own domain at 127.0.0.1 (DNS
rebinding) and drive the console. A websocket opened from another origin than the page's is
refused in both modes, so a page on another site never types into the console.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

from jarvis_cli.inputs import UsageError

#: Where a chosen token is read from; taken out of the environment once read, so neither the
#: consoles nor the host (nor the workers it starts) inherit it.
TOKEN_ENV_VAR = "JARVIS_SERVE_TOKEN"
#: A configured token this short is refused: it could be guessed.
MIN_TOKEN_CHARS = 16
#: Characters that go in a URL's query and a cookie as they are.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]+")
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Bind:
    """Where to listen: ``host`` as given (no brackets) and ``port`` (0: a free one)."""

    host: str
    port: int
    loopback: bool
    """Only this machine can reach it."""

    @property
    def unspecified(self) -> bool:
        """Every address of the machine (``0.0.0.0`` or ``::``)."""
        try:
            return ipaddress.ip_address(self.host).is_unspecified
        except ValueError:
            return False


def parse_bind(text: str) -> Bind:
    """``HOST:PORT`` (``[IPV6]:PORT`` for an IPv6 address) as a `Bind`.

    Raises:
        UsageError: ``bad_bind``, saying what is wrong with it.
    """
    example = "--bind takes HOST:PORT, e.g. 127.0.0.1:8700, 0.0.0.0:8700 or [::1]:8700"
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise UsageError("bad_bind", f"{example}; got {text!r}.")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise UsageError("bad_bind", f"{host!r} is not an IPv6 address ({example}).") from None
    elif ":" in host:
        raise UsageError("bad_bind", f"an IPv6 address goes in brackets ({example}); got {text!r}.")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise UsageError("bad_bind", f"the port must be a number from 0 to 65535; got {text!r}.")
    return Bind(host, int(port_text), _is_loopback(host))


def _is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address.

    Raises:
        UsageError: ``bad_bind`` when the name resolves to nothing.
    """
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise UsageError(
            "bad_bind", f"--bind {host!r} is neither an IP address nor a name this machine knows."
        ) from None
    addresses = {str(entry[4][0]).split("%", 1)[0] for entry in found}
    return all(ipaddress.ip_address(address).is_loopback for address in addresses)


@dataclass(frozen=True)
class Token:
    value: str
    generated: bool
    """Made for this run (and printed), rather than taken from ``JARVIS_SERVE_TOKEN``."""


def choose_token(bind: Bind) -> Token | None:
    """The token requests must carry: ``JARVIS_SERVE_TOKEN`` if set (on any address), else one
    generated when the address is not loopback, else none. The variable is taken out of this
    process's environment, so nothing it starts inherits it.

    Raises:
        UsageError: ``bad_token`` for a configured token too short or with characters a URL
            cannot carry as they are.
    """
    chosen = os.environ.pop(TOKEN_ENV_VAR, "")
    if chosen:
        if len(chosen) < MIN_TOKEN_CHARS or not _TOKEN_CHARS.fullmatch(chosen):
            raise UsageError(
                "bad_token",
                f"${TOKEN_ENV_VAR} must be at least {MIN_TOKEN_CHARS} characters of letters, "
                "digits and . _ ~ - (e.g. python3 -c 'import secrets; "
                "print(secrets.token_urlsafe(24))').",
            )
        return Token(chosen, generated=False)
    if bind.loopback:
        return None
    return Token(secrets.token_urlsafe(24), generated=True)


def _host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port or IPv6 brackets."""
    name = urlsplit(f"//{host_header}").hostname
    return name or ""


def is_loopback_host(host_header: str) -> bool:
    name = _host_name(host_header)
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _refuse(status: int, sentence: str) -> web.Response:
    return web.Response(status=status, text=f"jarvis serve: {sentence}\n")


class Access:
    """The middleware that lets a request through, or refuses it with a sentence."""

    def __init__(self, token: Token | None, port: int) -> None:
        self.token = token
        # Cookies are per host name, not per port: two servers on one machine each keep theirs.
        self.cookie = f"jarvis_serve_{port}"

    def set_port(self, port: int) -> None:
        """The port actually bound (``--bind HOST:0`` picks one)."""
        self.cookie = f"jarvis_serve_{port}"

    def _matches(self, offered: str | None) -> bool:
        assert self.token is not None
        if not offered:
            return False
        return hmac.compare_digest(offered.encode(), self.token.value.encode())

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == "/ws":
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc != request.host:
                return _refuse(403, f"the console's page opens its websocket, not {origin!r}.")
        if self.token is None:
            if not is_loopback_host(request.host):
                return _refuse(
                    403,
                    f"this console answers to this machine's loopback names only, not to "
                    f"{request.host!r} (set {TOKEN_ENV_VAR} to serve it under another name).",
                )
            return await handler(request)
        offered = request.query.get("token")
        if offered is not None:
            if not self._matches(offered):
                return _refuse(403, "that token is not this console's.")
            if request.method == "GET" and request.path == "/":
                # The token becomes a cookie, and leaves the address bar and the history.
                query = {k: v for k, v in request.query.items() if k != "token"}
                target = request.rel_url.with_query(query)
                response = web.Response(status=303, headers={"Location": str(target)})
                response.set_cookie(
                    self.cookie,
                    self.token.value,
                    httponly=True,
                    samesite="Lax",
                    secure=request.secure,
                    path="/",
                )
                return response
            return await handler(request)
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer ") and self._matches(bearer[len("Bearer ") :]):
            return await handler(request)
        cookie = request.cookies.get(self.cookie)
        if cookie is not None:
            if self._matches(cookie):
                return await handler(request)
            return _refuse(
                403,
                "this browser holds another token than this console's (was it restarted?): "
                "open the address jarvis serve printed, with its ?token=.",
            )
        return _refuse(
            401,
            "this console needs its token: open the address jarvis serve printed, with its "
            "?token=.",
        )
