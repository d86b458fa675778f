"""The team server holds up: read deadlines on every request, tokenless connections capped,
calls side by side, review-page sessions, worker processes with one leader taken over when
it dies, and 503 while PostgreSQL is away, then service again without a restart."""

from __future__ import annotations

import math
import os
import re
import signal
import socket
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest

from memory_notes import make_notes
from team_server import Server, orgkit

@pytest.fixture(scope="module")
def env(tiny_model_dir) -> dict:
    from tiny_model import MODEL_NAME

    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")}
    return env | {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir),
                  "ORGKIT_HTTP_IDLE_TIMEOUT": "1", "ORGKIT_HTTP_MAX_UNAUTHENTICATED": "8"}


@pytest.fixture(scope="module")
def one(tmp_path_factory, env):
    """One single-process server over small notes and one large file (30,000 headlines)."""
    notes = make_notes(tmp_path_factory.mktemp("hold") / "notes")
    (notes / "big.org").write_text("#+title: Big\n" + "".join(
        f"* heading number {i} about things\nbody {i}\n" for i in range(30000)))
    tokens = {role: orgkit(notes, env, "token", "add", f"{role}-1", "--role", role)["token"]
              for role in ("reader", "reviewer")}
    server = Server(notes, env, workers=1)
    assert server.op("read", tokens["reader"], ids=["11111111-1111-4111-8111-111111111111"]).status_code == 200
    yield notes, tokens, server
    server.close()


def _closed(sock: socket.socket, within: float) -> bool:
    """Whether the server closes `sock` within `within` seconds (whatever it answered first)."""
    sock.settimeout(within)
    end = time.monotonic() + within
    try:
        while time.monotonic() < end:
            if sock.recv(65536) == b"":
                return True
    except (socket.timeout, ConnectionResetError):
        return False
    return False


def test_every_request_on_a_connection_has_a_read_deadline(one) -> None:
    notes, tokens, server = one
    sock = socket.create_connection(("127.0.0.1", server.port))
    try:
        body = b'{"ids": ["11111111-1111-4111-8111-111111111111"]}'
        sock.sendall(b"POST /ops/read HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (server.port, tokens["reader"].encode(), len(body), body))
        sock.settimeout(10)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        sock.sendall(b"POST /ops/read HTTP/1.1\r\n")  # a second request on the kept-alive connection, trickled
        for piece in (b"Host: 127.0.0.1\r\n", b"X-A: 1\r\n", b"X-B: 2\r\n", b"X-C: 3\r\n", b"X-D: 4\r\n"):
            time.sleep(0.3)
            try:
                sock.sendall(piece)
            except OSError:
                break
        assert _closed(sock, 2)
        assert time.monotonic() - started < 3  # http.idle_timeout is 1 s here
    finally:
        sock.close()


def test_connections_without_a_token_are_capped_and_callers_with_one_get_through(one) -> None:
    notes, tokens, server = one
    flood = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(40)]
    try:
        started = time.monotonic()
        answer = server.op("read", tokens["reader"], ids=["11111111-1111-4111-8111-111111111111"])
        assert answer.status_code == 200 and time.monotonic() - started < 1
        # At most 8 tokenless connections are kept (http.max_unauthenticated): the oldest were shed
        # at once, well before their 1 s read deadline.
        shed = sum(_closed(s, 0.05) for s in flood[:30])
        assert shed >= 28, shed
        tokenless = socket.create_connection(("127.0.0.1", server.port))
        tokenless.sendall(b"POST /ops/read HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 2\r\n\r\n{}"
                          % server.port)
        tokenless.settimeout(5)
        assert tokenless.recv(65536).startswith(b"HTTP/1.1 401")
        assert _closed(tokenless, 0.5)  # a refusal closes the connection at once
        tokenless.close()
    finally:
        for sock in flood:
            sock.close()


def test_a_slow_call_holds_up_no_other(one) -> None:
    notes, tokens, server = one
    fast_id = "22222222-2222-4222-8222-222222222222"
    alone = math.inf  # the quickest of three: one read slowed by the machine says nothing of the server
    for _ in range(3):
        began = time.monotonic()
        assert server.op("read", tokens["reader"], ids=[fast_id]).status_code == 200
        alone = min(alone, time.monotonic() - began)
    ends: dict[str, float] = {}

    def slow() -> None:
        assert server.op("scan", tokens["reader"], query="heading").status_code == 200
        ends["slow"] = time.monotonic()

    started = time.monotonic()
    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.1)
    fast = server.op("read", tokens["reader"], ids=[fast_id])
    ends["fast"] = time.monotonic()
    thread.join(30)
    assert fast.status_code == 200
    assert ends["slow"] - started > 4 * alone, "the slow call was not slow: nothing was measured"
    assert ends["fast"] < ends["slow"], (ends["fast"] - started, ends["slow"] - started)


def _csrf(page: httpx.Response) -> str:
    return re.search(r'name=csrf value="([^"]+)"', page.text).group(1)


def _sign_in(server: Server, token: str, **headers: str) -> tuple[httpx.Client, httpx.Response]:
    client = httpx.Client(base_url=server.url, headers=headers, timeout=30)
    form = client.get("/")
    _keep(client, form)
    answer = client.post("/login", data={"token": token, "csrf": _csrf(form)})
    assert answer.status_code == 303
    _keep(client, answer)
    return client, answer


def _keep(client: httpx.Client, answer: httpx.Response) -> None:
    """Keep the cookies `answer` sets, Secure ones too (as a browser behind the TLS proxy would)."""
    kept = {c.name: c.value for c in client.cookies.jar} | dict(answer.cookies.items())
    client.cookies.clear()
    for name, value in kept.items():
        client.cookies.set(name, value)


def test_review_page_sessions_are_the_servers_own(one) -> None:
    notes, tokens, server = one
    plain, answer = _sign_in(server, tokens["reviewer"])
    cookie = answer.headers["set-cookie"]
    assert "orgkit_session=" in cookie and "HttpOnly" in cookie and "Secure" not in cookie
    assert tokens["reviewer"] not in cookie
    # Through a TLS proxy on loopback (a trusted proxy by default), the cookies are Secure.
    behind, answer = _sign_in(server, tokens["reviewer"], **{"X-Forwarded-Proto": "https"})
    assert "Secure" in answer.headers["set-cookie"]
    other_csrf = _csrf(behind.get("/"))
    assert "signed in as reviewer-1" in plain.get("/").text
    # A CSRF field from another session is refused.
    assert plain.post("/logout", data={"csrf": other_csrf}).status_code == 403
    stolen = dict(plain.cookies)
    assert plain.post("/logout", data={"csrf": _csrf(plain.get("/"))}).status_code == 303
    # Signed out: the old cookie no longer works, and the other session still does.
    again = httpx.get(f"{server.url}/", cookies=stolen)
    assert "signed in as" not in again.text and 'id=login' in again.text
    assert "signed in as reviewer-1" in behind.get("/").text
    plain.close()
    behind.close()


def test_workers_share_the_work_and_a_killed_leader_is_taken_over(tmp_path: Path, env: dict) -> None:
    notes = make_notes(tmp_path / "notes")
    agent = orgkit(notes, env, "token", "add", "ada", "--role", "agent")["token"]
    server = Server(notes, env, workers=2)
    try:
        line = server.wait_for(r"worker \d+ runs the background work")
        leader = int(re.search(r"worker (\d+)", line).group(1))
        titles = ["Finding number 0", "Finding number 1"]
        for title in titles[:1]:
            made = server.op("deposit", agent, title=title, body=f"{title}: tomatoes want a deep stake.")
            assert made.status_code == 200, made.text
            assert made.headers["connection"] == "close"  # a connection per call: whichever worker is free takes it
        seen = len(server.lines)
        os.kill(leader, signal.SIGKILL)
        line = server.wait_for(r"worker \d+ runs the background work", after=seen)
        assert int(re.search(r"worker (\d+)", line).group(1)) != leader
        for title in titles[1:]:
            made = server.op("deposit", agent, title=title, body=f"{title}: tomatoes want a deep stake.")
            assert made.status_code == 200, made.text
        end = time.monotonic() + 20
        while True:  # until the new leader has processed every deposit and embedded every passage
            with sqlite3.connect(notes / "orgkit-data" / "memory.sqlite") as conn:
                rows = conn.execute("SELECT title, status, path FROM deposits").fetchall()
            with sqlite3.connect(notes / ".orgkit" / "index.sqlite") as conn:
                hashes = {h for (h,) in conn.execute("SELECT DISTINCT hash FROM chunks")}
                vectors = conn.execute("SELECT hash, count(*) FROM vectors GROUP BY model, hash").fetchall()
            done = all(status not in ("pending", "processing") for _, status, _ in rows)
            if done and {h for h, _ in vectors} >= hashes or time.monotonic() > end:
                break
            time.sleep(0.1)
        assert sorted(t for t, _, _ in rows) == titles  # none lost, none twice
        assert all(status not in ("pending", "processing", "failed") for _, status, _ in rows), rows
        assert all(title in (notes / path).read_text() for title, _, path in rows)
        assert {h for h, _ in vectors} >= hashes and all(n == 1 for _, n in vectors)
    finally:
        server.close()


def test_postgres_going_away_gives_503_and_coming_back_needs_no_restart(tmp_path: Path, env: dict,
                                                                         postgres_server) -> None:
    from conftest import new_database
    from pgserver._commands import pg_ctl

    env = env | {"ORGKIT_DATABASE_URL": new_database(postgres_server)}
    notes = make_notes(tmp_path / "notes")
    reader = orgkit(notes, env, "token", "add", "rob", "--role", "reader")["token"]
    server = Server(notes, env, workers=1)
    ctl = {"pgdata": postgres_server.pgdata, "user": postgres_server.system_user, "timeout": 30}
    try:
        assert server.op("search", reader, query="tomatoes").status_code == 200
        pg_ctl(["-w", "-m", "fast", "stop"], **ctl)
        try:
            for _ in range(2):
                down = server.op("search", reader, query="tomatoes")
                assert down.status_code == 503, down.text
                assert "database is unavailable" in down.json()["error"] and "\n" not in down.json()["error"]
        finally:
            pg_ctl(["-w", "restart"], **ctl)  # the options of its last start (postmaster.opts)
        back = server.op("search", reader, query="tomatoes")
        assert back.status_code == 200, back.text
        assert back.json()["result"][0]["title"] == "Growing tomatoes"
    finally:
        server.close()
