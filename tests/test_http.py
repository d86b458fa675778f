"""The team server (`orgkit serve --http`): tokens, roles, MCP over streamable HTTP, the JSON
operations, the guard (Host, Origin, body size, idle connections) and the review page in a real
Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import cli_as_process
from memory_notes import FINDING, TANGLE, make_notes, rows
from team_server import ORGKIT


def orgkit(notes: Path, env: dict, *args: str) -> dict | list:
    """`orgkit ARGS --notes NOTES --json` in this process (setup and checks; the server and the
    browser these tests are about run as processes of their own)."""
    done = cli_as_process(env, *args, "--notes", str(notes), "--json")
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


class HttpServer:
    """`orgkit serve --http 127.0.0.1:0 --workers N` in a process of its own; `url` once it listens
    (one worker unless asked: MCP sessions live in the process that opened them)."""

    def __init__(self, notes: Path, env: dict, workers: int = 1) -> None:
        self.proc = subprocess.Popen([ORGKIT, "serve", "--http", "127.0.0.1:0", "--workers", str(workers),
                                      "--notes", str(notes)], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        line = ""
        while "serving" not in line:
            line = self.proc.stderr.readline()
            assert line, "the server ended before listening"
        self.url = re.search(r"http://\S+", line).group(0)
        self.port = int(self.url.rsplit(":", 1)[1])

    def op(self, name: str, token: str | None, **params) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.post(f"{self.url}/ops/{name}", json=params, headers=headers, timeout=60)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def env(tmp_path_factory, tiny_model_dir) -> dict:
    from tiny_model import MODEL_NAME

    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")}
    return env | {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir),
                  "ORGKIT_HTTP_IDLE_TIMEOUT": "1", "XDG_DATA_HOME": str(tmp_path_factory.mktemp("data-home"))}


@pytest.fixture(scope="module")
def team(tmp_path_factory, env):
    """One server over a small notes dir, with a token of each role (the tests share it, in order)."""
    notes = make_notes(tmp_path_factory.mktemp("team") / "notes")
    tokens = {role: orgkit(notes, env, "token", "add", f"{role}-1", "--role", role)["token"]
              for role in ("reader", "agent", "reviewer", "admin")}
    server = HttpServer(notes, env)
    yield notes, tokens, server
    server.close()


def mcp_client(server: HttpServer, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(f"{server.url}/mcp", http_client=create_mcp_http_client(headers=headers)))


def payload(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_tokens_are_shown_once_and_stored_only_as_hashes(tmp_path: Path, env: dict, monkeypatch) -> None:
    from orgkit.tokens import TokenStore, tokens_dir

    monkeypatch.setenv("XDG_DATA_HOME", env["XDG_DATA_HOME"])
    notes = make_notes(tmp_path / "notes")
    made = orgkit(notes, env, "token", "add", "alice", "--role", "agent")
    assert made["token"].startswith("ok_") and made["role"] == "agent"
    where = tokens_dir(notes)  # the user's data dir, keyed by the notes dir: never in the notes
    assert where.is_relative_to(env["XDG_DATA_HOME"]) and not (notes / "orgkit-data" / "tokens.json").exists()
    stored = (where / "tokens.json").read_text()
    assert made["token"] not in stored and "alice" in stored
    assert oct((where / "tokens.json").stat().st_mode & 0o777) == "0o600"
    assert [t["name"] for t in orgkit(notes, env, "token", "list")] == ["alice"]
    again = subprocess.run([ORGKIT, "token", "add", "alice", "--notes", str(notes)], env=env, capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 1 and "exists" in again.stderr and "Traceback" not in again.stderr
    assert TokenStore(where).verify(made["token"]).name == "alice"
    assert orgkit(notes, env, "token", "revoke", "alice")["revoked"]
    assert TokenStore(where).verify(made["token"]) is None


def test_a_tokens_file_that_came_with_the_notes_is_not_trusted(tmp_path: Path, env: dict, monkeypatch) -> None:
    """A cloned or copied notes folder may carry a tokens file whose tokens its author knows: it is
    ignored even when its owner and mode look right (as `cp -r` or `tar --no-same-owner` leave them)."""
    import shutil

    from orgkit import config
    from orgkit.tokens import store_for, tokens_dir

    monkeypatch.setenv("XDG_DATA_HOME", env["XDG_DATA_HOME"])
    notes = make_notes(tmp_path / "notes")
    made = orgkit(notes, env, "token", "add", "alice", "--role", "admin")
    shipped = notes / "orgkit-data" / "tokens.json"
    shipped.parent.mkdir(exist_ok=True)
    shutil.move(tokens_dir(notes) / "tokens.json", shipped)  # the sender's tokens, arrived with the notes
    assert shipped.stat().st_mode & 0o777 == 0o600 and shipped.stat().st_uid == os.getuid()
    warned: list[str] = []
    assert store_for(config.load(notes), warned.append).verify(made["token"]) is None
    assert len(warned) == 1 and str(shipped) in warned[0] and "ignored" in warned[0]
    listed = subprocess.run([ORGKIT, "token", "list", "--notes", str(notes), "--json"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert json.loads(listed.stdout) == [] and "ignored" in listed.stderr and listed.stderr.count("\n") == 1


def test_no_token_is_refused_without_detail(team) -> None:
    notes, tokens, server = team
    for headers in ({}, {"Authorization": "Bearer ok_not-a-token"}, {"Authorization": "Basic eDp5"}):
        answer = httpx.post(f"{server.url}/ops/search", json={"query": "tangling"}, headers=headers)
        assert answer.status_code == 401 and answer.json() == {"error": "unauthorized"}
    assert httpx.post(f"{server.url}/mcp", json={}).status_code == 401

    async def connect() -> None:
        async with mcp_client(server, None) as client:
            await client.list_tools()

    with pytest.raises(Exception):
        anyio.run(connect)


def test_roles_over_mcp_and_the_json_operations(team) -> None:
    notes, tokens, server = team

    async def as_reader() -> None:
        async with mcp_client(server, tokens["reader"]) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"search", "recall", "read"} <= names and "deposit" not in names and "index" not in names
            hits = payload(await client.call_tool("search", {"query": "tangling"}))["result"]
            assert hits[0]["id"] == TANGLE
            assert payload(await client.call_tool("recall", {"query": "tangling"}))["result"]["included"]
            refused = await client.call_tool("deposit", {"title": "x", "body": "y"})
            assert refused.is_error and "needs the agent role" in refused.content[0].text

    anyio.run(as_reader)
    refused = server.op("deposit", tokens["reader"], title="x", body="y")
    assert refused.status_code == 403 and "needs the agent role" in refused.json()["error"]
    assert server.op("index", tokens["reviewer"]).status_code == 403
    assert server.op("no_such_op", tokens["admin"]).status_code == 404
    assert server.op("search", tokens["reader"], query="tangling", limit="many").status_code == 400
    listed = httpx.get(f"{server.url}/ops", headers={"Authorization": f"Bearer {tokens['reader']}"}).json()
    assert {"search", "recall"} <= {op["name"] for op in listed["result"]}
    assert "deposit" not in {op["name"] for op in listed["result"]}

    async def deposit() -> dict:
        async with mcp_client(server, tokens["agent"]) as client:
            made = payload(await client.call_tool("deposit", {"title": "Tangling and var", "body": FINDING}))
            human = await client.call_tool("deposit", {"title": "As a person", "body": FINDING, "lane": "human"})
            assert human.is_error and "lane 'human' is for people" in human.content[0].text
            return made["result"]

    dep = anyio.run(deposit)
    assert dep["actor"] == "agent-1" and dep["via"] == "http"
    audit = rows(notes, "SELECT actor, action FROM audit WHERE subject = ?", (dep["id"],))
    assert {"actor": "agent-1", "action": "deposit"} in [dict(r) for r in audit]

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = server.op("deposits", tokens["agent"], id=dep["id"]).json()["result"][0]["status"]
        if status in ("no-model", "proposed"):
            break
        time.sleep(0.2)
    listed = server.op("review_list", tokens["reviewer"]).json()["result"]
    admit = next(p for p in listed if p["kind"] == "admit" and p["deposit"] == dep["id"])

    async def review_and_recall() -> dict:
        async with mcp_client(server, tokens["reviewer"]) as client:
            payload(await client.call_tool("review_accept", {"ids": [admit["id"]], "why": "right"}))
        async with mcp_client(server, tokens["reader"]) as client:
            return payload(await client.call_tool("recall", {"query": "tangling var",
                                                             "caller": "someone-else"}))["result"]

    recalled = anyio.run(review_and_recall)
    entry = next(n for n in recalled["included"] if n["id"] == dep["id"])
    assert entry["provenance"]["approved_by"] == "reviewer-1"
    last = rows(notes, "SELECT actor, action FROM audit ORDER BY seq DESC LIMIT 1")[0]
    assert dict(last) == {"actor": "reader-1", "action": "recall"}


def test_the_guard_checks_host_origin_and_body_size(team) -> None:
    notes, tokens, server = team
    auth = {"Authorization": f"Bearer {tokens['reader']}"}
    foreign_host = httpx.post(f"{server.url}/ops/search", json={"query": "x"}, headers=auth | {"Host": "evil.test"})
    assert foreign_host.status_code == 421
    foreign_origin = httpx.post(f"{server.url}/ops/search", json={"query": "x"},
                                headers=auth | {"Origin": "http://evil.test"})
    assert foreign_origin.status_code == 403
    own_origin = httpx.post(f"{server.url}/ops/search", json={"query": "tangling"},
                            headers=auth | {"Origin": server.url})
    assert own_origin.status_code == 200
    big = httpx.post(f"{server.url}/ops/search", content=b"{" + b" " * (5 << 20) + b"}", headers=auth)
    assert big.status_code == 413

    def chunks():
        for _ in range(80):
            yield b" " * (64 << 10)

    chunked = httpx.post(f"{server.url}/ops/search", content=chunks(), headers=auth)
    assert chunked.status_code == 413


def test_idle_connections_are_closed_and_the_server_keeps_answering(team) -> None:
    notes, tokens, server = team
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
    half = socket.create_connection(("127.0.0.1", server.port))
    half.sendall(b"POST /ops/search HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
    try:
        # http.idle_timeout is 1 s here: each socket is closed by the server, waited for as it comes
        for sock in idle + [half]:
            sock.settimeout(5)
            assert sock.recv(1024) == b""  # closed by the server
        answer = httpx.post(f"{server.url}/ops/search", json={"query": "tangling"},
                            headers={"Authorization": f"Bearer {tokens['reader']}"})
        assert answer.status_code == 200
    finally:
        for sock in idle + [half]:
            sock.close()


def _chromium_driver(scratch: Path):
    """Chromium through chromium-driver, its profile in `scratch` (without one, a profile dir is left in /tmp)."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("needs Debian's chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={scratch / 'profile'}"):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=driver)
    return webdriver.Chrome(options=options, service=service)


def _submitted(browser, button, expect: str) -> None:
    """Click a form's button and wait for the page it leads to (one holding `expect`)."""
    from selenium.webdriver.support.ui import WebDriverWait

    old = browser.find_element("tag name", "html")
    button.click()
    WebDriverWait(browser, 20).until(lambda b: old.id != b.find_element("tag name", "html").id
                                     and expect in b.page_source)


def test_the_review_page_in_a_real_browser(tmp_path: Path, env: dict) -> None:
    from selenium.webdriver.common.by import By

    notes = make_notes(tmp_path / "notes")
    reviewer = orgkit(notes, env, "token", "add", "rita", "--role", "reviewer")["token"]
    reader = orgkit(notes, env, "token", "add", "rob", "--role", "reader")["token"]
    dep = orgkit(notes, env, "deposit", "--title", "Tangling and var", "--body", FINDING)
    proposals = [p for p in orgkit(notes, env, "review", "list") if p["deposit"] == dep["id"]]
    admit = next(p for p in proposals if p["kind"] == "admit")
    link = next(p for p in proposals if p["kind"] == "link" and p["payload"]["dest"] == TANGLE)
    with ExitStack() as cleanup:  # the browser first: without Chromium the test skips before a server starts
        browser = _chromium_driver(tmp_path / "chromium")
        cleanup.callback(browser.quit)
        server = HttpServer(notes, env)
        cleanup.callback(server.close)
        browser.get(server.url + "/")
        assert browser.find_elements(By.ID, "login") and "Pending" not in browser.page_source
        browser.find_element(By.NAME, "token").send_keys(reader)
        _submitted(browser, browser.find_element(By.CSS_SELECTOR, "#login button"), "needs a reviewer")
        assert "Pending" not in browser.page_source
        browser.find_element(By.NAME, "token").send_keys(reviewer)
        _submitted(browser, browser.find_element(By.CSS_SELECTOR, "#login button"), "signed in as rita")
        box = browser.find_element(By.ID, f"p-{link['id']}")
        diff = box.find_element(By.CSS_SELECTOR, "pre.diff")
        assert f"[[id:{TANGLE}]" in diff.text and diff.value_of_css_property("white-space") == "pre-wrap"
        # Evidence: each note by its title, linked, with the passage that matched.
        evidence = box.find_element(By.CSS_SELECTOR, f"a[href='/?note={TANGLE}']")
        assert evidence.text == "Tangling code blocks"
        assert evidence.find_element(By.XPATH, "following-sibling::q").text
        box = browser.find_element(By.ID, f"p-{admit['id']}")
        _submitted(browser, box.find_element(By.NAME, "accept"), "accepted (batch")
        box = browser.find_element(By.ID, f"p-{link['id']}")
        box.find_element(By.CSS_SELECTOR, "form input[name=why][required]").send_keys("not this note")
        _submitted(browser, box.find_element(By.NAME, "reject"), "rejected (batch")
        assert not browser.find_elements(By.ID, f"p-{link['id']}")
        assert "deposit" in browser.find_element(By.XPATH, "//h2[text()='Audit trail']/following::table").text
        batches = browser.find_element(By.XPATH, "//h2[text()='Recent batches']/following::table").text
        assert "accepted 1 proposal: keep the deposited note" in batches and "rejected 1 proposal: link " in batches
        browser.get(f"{server.url}/?note={TANGLE}")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Tangling code blocks"
        assert TANGLE in browser.find_element(By.TAG_NAME, "pre").text
        cookies = {c["name"]: c for c in browser.get_cookies()}
        assert cookies["orgkit_session"]["httpOnly"] and cookies["orgkit_session"]["sameSite"] == "Strict"
        session = cookies["orgkit_session"]["value"]
        assert reviewer not in session
        decided = {r["proposal"]: dict(r) for r in rows(notes, "SELECT proposal, action, actor, why FROM decisions")}
        assert decided[admit["id"]]["action"] == "accept" and decided[admit["id"]]["actor"] == "rita"
        assert decided[link["id"]] == {"proposal": link["id"], "action": "reject", "actor": "rita",
                                       "why": "not this note"}
        assert f"[[id:{TANGLE}]" not in (notes / dep["path"]).read_text()
        # Each deposit's stage is where it really is: in review, accepted, or rejected (its note removed).
        left = [p["id"] for p in orgkit(notes, env, "review", "list") if p["deposit"] == dep["id"]]
        assert {d["id"]: d["stage"] for d in orgkit(notes, env, "deposits")} == {dep["id"]: "in-review"}
        orgkit(notes, env, "review", "reject", *left, "--why", "enough")
        other = orgkit(notes, env, "deposit", "--title", "Noweb again", "--body", FINDING + " Again.")
        admit_other = next(p for p in orgkit(notes, env, "review", "list")
                           if p["deposit"] == other["id"] and p["kind"] == "admit")
        orgkit(notes, env, "review", "reject", admit_other["id"], "--why", "said before")
        stages = {d["id"]: d["stage"] for d in orgkit(notes, env, "deposits")}
        assert stages == {dep["id"]: "accepted", other["id"]: "rejected"}
        actions = {(r["actor"], r["action"]) for r in rows(notes, "SELECT actor, action FROM audit")}
        assert {("rita", "accept"), ("rita", "reject")} <= actions, actions
        # A forged post: the reviewer's cookie, but no CSRF field (as another site's form would send).
        forged = httpx.post(f"{server.url}/decide", data={"proposal": link["id"], "action": "reject"},
                            cookies={"orgkit_session": session}, headers={"Origin": server.url})
        assert forged.status_code == 403
        # The cookie never authorizes the API.
        assert httpx.post(f"{server.url}/ops/search", json={"query": "x"},
                          cookies={"orgkit_session": session}).status_code == 401


def test_a_client_that_hangs_up_mid_call_leaves_nothing_half_done(team) -> None:
    notes, tokens, server = team
    body = json.dumps({"title": "Hung up", "body": "A finding sent by a client that did not wait.",
                       "no_process": True}).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"POST /ops/deposit HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (server.port, tokens["agent"].encode(), len(body), body))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [d for d in server.op("deposits", tokens["agent"]).json()["result"] if d["title"] == "Hung up"]
        if found:
            break
        time.sleep(0.1)
    assert len(found) == 1 and (notes / found[0]["path"]).is_file()
    assert rows(notes, "SELECT action FROM audit WHERE subject = ?", (found[0]["id"],))[0]["action"] == "deposit"


def test_the_listening_socket_gives_connections_without_nagle_delay() -> None:
    """The server's connections send each part of a response at once: with Nagle's algorithm on, a
    response written as headers then body waited for the client's delayed ACK (40 ms a call on a
    kept-alive connection). asyncio turns it off only on sockets made as TCP by name."""
    import asyncio

    from orgkit.http import listen

    async def accept_one() -> int:
        sock = listen("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname())
            nodelay = await asyncio.wait_for(seen, 10)
            writer.close()
        return nodelay

    assert asyncio.run(accept_one()) != 0
