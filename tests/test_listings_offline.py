"""Listings only read: with a model endpoint that never answers, `deposits` and `review list` are quick
and open no connection to it; the librarian runs on request (`orgkit librarian`) or in the worker."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memory_notes import FINDING, make_notes, rows

ORGKIT = [str(Path(sys.executable).with_name("orgkit"))]


class SilentEndpoint:
    """A real loopback TCP server that accepts connections, counts them and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def endpoint():
    server = SilentEndpoint()
    yield server
    server.close()


@pytest.fixture
def env(offline_env: dict, endpoint: SilentEndpoint) -> dict:
    return offline_env | {"ORGKIT_LLM_ENDPOINT": endpoint.url, "ORGKIT_LLM_TIMEOUT": "30"}


def orgkit(notes: Path, env: dict, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*ORGKIT, *args, "--notes", str(notes)], env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_listings_never_call_the_model_and_say_what_waits(tmp_path: Path, env: dict, endpoint, cli,
                                                         monkeypatch) -> None:
    notes = make_notes(tmp_path / "notes")
    made = json.loads(orgkit(notes, env, "deposit", "--title", "Tangling and var", "--body", FINDING,
                             "--no-process", "--json").stdout)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for args in (["deposits"], ["review", "list"], ["deposits", made["id"]]):
        began = time.monotonic()
        result = cli(*args, "--notes", str(notes), "--json")
        took = time.monotonic() - began
        assert result.exit_code == 0, result.stderr
        assert took < 1, f"{args} took {took:.2f} s"
        assert "1 deposit waits for the librarian (`orgkit librarian` runs it now)" in result.stderr
    listed = json.loads(cli("deposits", "--notes", str(notes), "--json").stdout)
    assert [(d["id"], d["stage"]) for d in listed] == [(made["id"], "pending")]
    assert endpoint.connections == 0
    assert rows(notes, "SELECT status FROM deposits") == [{"status": "pending"}]


def test_the_librarian_runs_on_request(tmp_path: Path, offline_env: dict, llm_server) -> None:
    notes = make_notes(tmp_path / "notes")
    env = offline_env | {"ORGKIT_LLM_ENDPOINT": llm_server.url}
    llm_server.reply({"proposals": []})
    orgkit(notes, env, "deposit", "--title", "Tangling and var", "--body", FINDING, "--no-process")
    assert not llm_server.requests
    done = orgkit(notes, env, "librarian", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"started": False, "waiting": 0}
    assert llm_server.requests
    listed = orgkit(notes, env, "deposits")
    assert "wait" not in listed.stderr and "pending" not in listed.stdout
