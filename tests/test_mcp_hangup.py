"""`orgkit mcp` ends within a second of its client closing stdin (the disk's time for one fsync
more when a deposit is writing), and a deposit in flight is then whole or absent, never half-written."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_notes import FINDING, make_notes, rows
from test_memory_processes import deposit_invariants

# A deposit in flight may be inside an fsync when the process leaves: the kernel ends a process only
# once that call returns, so on a busy disk its end comes that much later than orgkit's own grace.
FSYNC_ALLOWANCE = 1.0

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _started(notes: Path, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([*ORGKIT, "mcp", "--notes", str(notes)], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _send(proc, INIT)
    assert b'"id":1' in proc.stdout.readline()
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def _send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _hang_up(proc: subprocess.Popen) -> float:
    """Close the client's side of stdin; seconds until the server process has ended."""
    began = time.monotonic()
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    finally:
        proc.kill()
    return time.monotonic() - began


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return make_notes(tmp_path / "notes")


def test_mcp_ends_within_a_second_of_stdin_closing(notes: Path, offline_env: dict) -> None:
    proc = _started(notes, offline_env)
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "search", "arguments": {"query": "tangling"}}})
    assert b'"id":2' in proc.stdout.readline()  # warm: the model and the index loading in the background
    took = _hang_up(proc)
    assert took < 1, f"orgkit mcp lingered {took:.2f} s after stdin closed"
    assert proc.returncode == 0, proc.stderr.read().decode()


def test_a_deposit_in_flight_at_hang_up_is_whole_or_absent(notes: Path, offline_env: dict) -> None:
    for i in range(3):
        proc = _started(notes, offline_env)
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "deposit", "arguments": {"title": f"Finding {i}", "body": FINDING}}})
        time.sleep(0.05 * i)  # the hang-up falls at different points of the call
        took = _hang_up(proc)
        assert took < 1 + FSYNC_ALLOWANCE, f"orgkit mcp lingered {took:.2f} s after stdin closed"
    listed = subprocess.run([*ORGKIT, "deposits", "--notes", str(notes), "--json"], env=offline_env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    deposit_invariants(notes)  # each deposit's note, row and audit record together, or none of them
    assert {d["title"] for d in json.loads(listed.stdout)} <= {"Finding 0", "Finding 1", "Finding 2"}
    assert rows(notes, "SELECT count(*) AS n FROM deposits") == [{"n": len(json.loads(listed.stdout))}]
