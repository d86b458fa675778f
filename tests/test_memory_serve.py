"""The memory flow through `orgkit serve`: deposits answered at once, processed in the background."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_notes import FINDING, TANGLE, make_notes, rows

ORGKIT = str(Path(sys.executable).with_name("orgkit"))


@pytest.fixture
def env(offline_env: dict) -> dict:
    return offline_env


class Server:
    def __init__(self, notes: Path, env: dict) -> None:
        self.proc = subprocess.Popen([ORGKIT, "serve", "--notes", str(notes)], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ask(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def wait_for(predicate, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_a_server_deposit_answers_at_once_and_is_processed_in_the_background(tmp_path: Path, env: dict) -> None:
    notes = make_notes(tmp_path / "notes")
    server = Server(notes, env)
    try:
        started = time.monotonic()
        answer = server.ask(op="deposit", title="Tangling and var", body=FINDING, meta=["source=serve-test"])
        assert "error" not in answer, answer
        dep = answer["result"]
        assert dep["status"] in ("pending", "processing") and dep["via"] == "serve" and dep["path"]
        assert time.monotonic() - started < 30
        done = wait_for(lambda: next((d for d in server.ask(op="deposits")["result"]
                                      if d["status"] == "no-model"), None))
        assert done["id"] == dep["id"]
        listed = server.ask(op="review_list", diff=True)["result"]
        link = next(p for p in listed if p["kind"] == "link" and p["payload"]["dest"] == TANGLE)
        assert f"+- [[id:{TANGLE}]" in link["diff"]
        admit = next(p for p in listed if p["kind"] == "admit")
        accepted = server.ask(op="review_accept", ids=[admit["id"], link["id"]], why="from the editor")
        assert accepted["result"]["accepted"] == [admit["id"], link["id"]]
        recalled = server.ask(op="recall", query="tangling var", caller="serve-test")["result"]
        entry = next(n for n in recalled["included"] if n["id"] == dep["id"])
        assert entry["provenance"]["approved_by"].endswith("via serve")
    finally:
        server.close()


def test_a_server_start_picks_up_unprocessed_deposits(tmp_path: Path, env: dict) -> None:
    notes = make_notes(tmp_path / "notes")
    made = subprocess.run([ORGKIT, "deposit", "--notes", str(notes), "--title", "Left over", "--body", FINDING,
                           "--no-process", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(made.stdout)["status"] == "pending"
    server = Server(notes, env)
    try:
        wait_for(lambda: rows(notes, "SELECT status FROM deposits")[0]["status"] == "no-model")
    finally:
        server.close()


def test_a_server_reads_no_file_a_client_names(tmp_path: Path, env: dict) -> None:
    notes = make_notes(tmp_path / "notes")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the notes")
    server = Server(notes, env)
    try:
        answer = server.ask(op="deposit", title="Exfiltration", body_file=str(secret))
    finally:
        server.close()
    assert answer["error"].startswith("unknown field 'body_file' for deposit")  # offered on the command line alone
    assert not (notes / "deposits").exists()
