"""The team server's MCP sessions over real HTTP: each belongs to the token that opened it, a
token holds a bounded number, and idle ones end (their IDs answer 404: gone from the table)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest

from memory_notes import make_notes
from test_http import HttpServer, orgkit

PER_TOKEN = 3
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}
ACCEPT = "application/json, text/event-stream"


def start(tmp_path_factory, tiny_model_dir: Path, idle: float):
    """A server whose sessions end after `idle` seconds, with two agent tokens "a" and "b"."""
    from tiny_model import MODEL_NAME

    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")}
    env |= {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir),
            "ORGKIT_HTTP_SESSION_IDLE_TIMEOUT": str(idle), "ORGKIT_HTTP_SESSIONS_PER_TOKEN": str(PER_TOKEN)}
    notes = make_notes(tmp_path_factory.mktemp("sessions") / "notes")
    tokens = {name: orgkit(notes, env, "token", "add", name, "--role", "agent")["token"] for name in ("a", "b")}
    return HttpServer(notes, env), tokens


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_model_dir):
    running, tokens = start(tmp_path_factory, tiny_model_dir, 300.0)
    yield running, tokens
    running.close()


def _headers(token: str, session: str | None = None) -> dict:
    out = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
    return out | ({"Mcp-Session-Id": session} if session else {})


def open_session(url: str, token: str) -> str:
    answer = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=_headers(token), timeout=30)
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    done = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers=_headers(token, session), timeout=30)
    assert done.status_code == 202, done.text
    return session


def ping(url: str, token: str, session: str) -> int:
    return httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                      headers=_headers(token, session), timeout=30).status_code


def test_sessions_belong_to_their_token_and_are_capped(server) -> None:
    running, tokens = server
    url = running.url
    mine = open_session(url, tokens["a"])
    # Another token can neither use nor end the session: to it, the session does not exist.
    assert ping(url, tokens["b"], mine) == 404
    assert httpx.delete(f"{url}/mcp", headers=_headers(tokens["b"], mine), timeout=30).status_code == 404
    assert ping(url, tokens["a"], mine) == 200

    # Past the cap, a token's longest idle session ends; the other token's are untouched.
    theirs = open_session(url, tokens["b"])
    newer = [open_session(url, tokens["a"]) for _ in range(PER_TOKEN)]
    assert [ping(url, tokens["a"], s) for s in newer] == [200] * PER_TOKEN
    assert ping(url, tokens["a"], mine) == 404
    assert ping(url, tokens["b"], theirs) == 200



def test_the_owner_ends_its_own_session(server) -> None:
    running, tokens = server
    session = open_session(running.url, tokens["b"])
    assert httpx.delete(f"{running.url}/mcp", headers=_headers(tokens["b"], session), timeout=30).status_code == 200
    assert ping(running.url, tokens["b"], session) == 404


def test_idle_sessions_end_and_leave_the_table(tmp_path_factory, tiny_model_dir) -> None:
    running, tokens = start(tmp_path_factory, tiny_model_dir, 2.0)
    try:
        opened = [open_session(running.url, tokens[name]) for name in ("a", "b", "a")]
        time.sleep(2.5)
        assert [ping(running.url, tokens[n], s) for n, s in zip("aba", opened, strict=True)] == [404] * 3
        assert ping(running.url, tokens["a"], open_session(running.url, tokens["a"])) == 200
    finally:
        running.close()
