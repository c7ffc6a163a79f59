"""Who `jarvis serve` lets in, and which addresses it takes.

The access check runs in a real aiohttp server on 127.0.0.1 (`Access` in front of a page and a
websocket, as `jarvis serve` puts it in front of textual-serve's). The command itself is
tests/serve/test_serve_command.py; a browser's side, tests/serve/test_serve_browser.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from core import identity
from jarvis_cli import serve
from jarvis_cli.inputs import UsageError
from jarvis_cli.serve_access import Access, Token, parse_bind

TOKEN = "a-token-of-twenty-four-c"


def test_the_operator_variable_is_the_engines() -> None:
    assert serve.OPERATOR_ENV_VAR == identity.ENV_VAR


@pytest.mark.parametrize(
    ("text", "host", "port", "loopback"),
    [
        ("127.0.0.1:8700", "127.0.0.1", 8700, True),
        ("127.9.9.9:1", "127.9.9.9", 1, True),
        ("[::1]:8700", "::1", 8700, True),
        ("localhost:0", "localhost", 0, True),
        ("0.0.0.0:8700", "0.0.0.0", 8700, False),
        ("[::]:8700", "::", 8700, False),
    ],
)
def test_a_bind_is_host_and_port(text: str, host: str, port: int, loopback: bool) -> None:
    bind = parse_bind(text)
    assert (bind.host, bind.port, bind.loopback) == (host, port, loopback)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("8700", "HOST:PORT"),
        (":8700", "HOST:PORT"),
        ("127.0.0.1", "HOST:PORT"),
        ("127.0.0.1:http", "from 0 to 65535"),
        ("127.0.0.1:65536", "from 0 to 65535"),
        ("127.0.0.1:-1", "from 0 to 65535"),
        ("::1:8700", "in brackets"),
        ("[nonsense]:8700", "not an IPv6 address"),
        ("no-such-host.invalid:8700", "neither an IP address nor a name"),
    ],
)
def test_a_bad_bind_is_a_sentence(text: str, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_bind(text)
    assert raised.value.code == "bad_bind"
    assert said in raised.value.message


async def _echo(request: web.Request) -> web.StreamResponse:
    if request.path == "/ws":
        socket_ = web.WebSocketResponse()
        await socket_.prepare(request)
        await socket_.send_str("hello")
        await socket_.close()
        return socket_
    return web.Response(text="the page")


async def _client(token: Token | None) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    app = web.Application(middlewares=[Access(token, 8700).middleware])
    app.router.add_get("/", _echo)
    app.router.add_get("/ws", _echo)
    app.router.add_get("/static/x.js", _echo)
    client = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def with_token() -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async for client in _client(Token(TOKEN, generated=True)):
        yield client


@pytest.fixture
async def loopback() -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async for client in _client(None):
        yield client


async def test_without_the_token_a_request_is_refused_with_a_sentence(
    with_token: TestClient[web.Request, web.Application],
) -> None:
    missing = await with_token.get("/static/x.js")
    assert missing.status == 401
    assert "needs its token" in await missing.text()
    wrong = await with_token.get("/?token=" + "x" * len(TOKEN))
    assert wrong.status == 403
    assert "not this console's" in await wrong.text()
    stale = await with_token.get("/", cookies={"jarvis_serve_8700": "y" * len(TOKEN)})
    assert stale.status == 403
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await with_token.ws_connect("/ws")
    assert refused.value.status == 401


async def test_the_token_becomes_a_cookie_and_leaves_the_address(
    with_token: TestClient[web.Request, web.Application],
) -> None:
    first = await with_token.get(f"/?token={TOKEN}&fontsize=14", allow_redirects=False)
    assert first.status == 303
    assert first.headers["Location"] == "/?fontsize=14"
    cookie = first.cookies["jarvis_serve_8700"]
    assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Lax"
    # The client keeps the cookie, as a browser does: the page and its websocket open.
    page = await with_token.get("/?fontsize=14")
    assert (page.status, await page.text()) == (200, "the page")
    socket_ = await with_token.ws_connect("/ws")
    assert await socket_.receive_str() == "hello"
    await socket_.close()
    bearer = await with_token.get(
        "/static/x.js", cookies={}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert bearer.status == 200


async def test_a_websocket_from_another_origin_is_refused(
    with_token: TestClient[web.Request, web.Application],
    loopback: TestClient[web.Request, web.Application],
) -> None:
    for client, auth in ((with_token, {"Authorization": f"Bearer {TOKEN}"}), (loopback, {})):
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect("/ws", headers={**auth, "Origin": "http://evil.example"})
        assert refused.value.status == 403
        own = f"http://{client.host}:{client.port}"
        socket_ = await client.ws_connect("/ws", headers={**auth, "Origin": own})
        assert await socket_.receive_str() == "hello"
        await socket_.close()


async def test_without_a_token_only_loopback_names_are_answered(
    loopback: TestClient[web.Request, web.Application],
) -> None:
    # A page whose domain was pointed at 127.0.0.1 (DNS rebinding) sends its own Host.
    rebound = await loopback.get("/", headers={"Host": f"evil.example:{loopback.port}"})
    assert rebound.status == 403
    assert "loopback names only" in await rebound.text()
    for host in ("127.0.0.1", "localhost", "[::1]"):
        page = await loopback.get("/", headers={"Host": f"{host}:{loopback.port}"})
        assert page.status == 200, host
