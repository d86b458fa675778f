"""Bounds everywhere: request lines, queries, standard input and body files, and a deadline per call.

Each bound is tried as an attack: a 20 MB line to `orgkit mcp` (its peak
memory measured from /proc in a real process), a 100,000-character query with
a second request right behind it, `/dev/zero` as a body, and a ripgrep that
never ends under a server's call deadline.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from conftest import write_notes
from orgkit.deadline import DeadlinePassed, until
from orgkit.mcp import build_server
from orgkit.ops import OpContext
from orgkit.retrieve.scan import scan
from orgkit.serve import handle
from test_index import NOTES

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def _answers(stream) -> "queue.Queue[dict]":
    """The process's answer lines, parsed, as they come."""
    found: queue.Queue[dict] = queue.Queue()

    def read() -> None:
        for line in stream:
            found.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    return found


def _peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
def test_mcp_drops_a_20_mb_line_as_it_reads_and_answers_bad_frames(notes: Path) -> None:
    proc = subprocess.Popen([*ORGKIT, "mcp", "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        answers = _answers(proc.stdout)

        def feed() -> None:
            proc.stdin.write(json.dumps(INIT).encode() + b"\nnot json\n" + b"[" * 100_000 + b"\n")
            proc.stdin.write(b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"pad": "')
            block = b"x" * (1 << 20)
            for _ in range(20):
                proc.stdin.write(block)
            proc.stdin.write(b'"}}\n{"id": 6, "what": "no method"}\n{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
            proc.stdin.flush()

        threading.Thread(target=feed, daemon=True).start()
        got = [answers.get(timeout=60) for _ in range(6)]
        peak = _peak_rss_mib(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert got[0]["id"] == 1 and "result" in got[0]
    assert got[1] == {"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32700, "message": "not JSON: Expecting value: line 1 column 1 (char 0)"}}
    assert got[2]["id"] is None and got[2]["error"]["code"] == -32700
    assert got[3]["id"] is None and got[3]["error"]["code"] == -32600
    assert "longer than 1048576 bytes (serve.max_line_bytes)" in got[3]["error"]["message"]
    assert got[4] == {"jsonrpc": "2.0", "id": 6, "error": {"code": -32600, "message": "not a JSON-RPC 2.0 message"}}
    assert got[5] == {"jsonrpc": "2.0", "id": 2, "result": {}}  # and it still answers
    assert peak < 500, f"peak RSS {peak:.0f} MiB"


def test_a_long_query_is_refused_at_once_and_the_next_request_answered(notes: Path, cli) -> None:
    long = "cat " * 25_000
    result = cli("scan", "a" * 2001, "--notes", str(notes))
    assert result.exit_code == 1
    assert result.stderr == "orgkit: error: 'query' is 2001 characters long, over query.max_chars (2000)\n"
    proc = subprocess.Popen([*ORGKIT, "serve", "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        answers = _answers(proc.stdout)
        started = time.monotonic()
        proc.stdin.write((json.dumps({"op": "recall", "query": long, "request": 1}) + "\n"
                          + json.dumps({"op": "scan", "query": "kittens", "request": 2}) + "\n").encode())
        proc.stdin.flush()
        first, second = answers.get(timeout=60), answers.get(timeout=60)
        elapsed = time.monotonic() - started
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert first == {"error": "'query' is 100000 characters long, over query.max_chars (2000)", "request": 1}
    assert second["request"] == 2 and second["result"][0]["id"] == "kittens"
    assert elapsed < 20  # both at once: nothing waits on the long query

    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            return (await client.call_tool("search", {"query": long, "mode": "lexical"}),
                    await client.call_tool("scan", {"query": "kittens"}))

    refused, answered = anyio.run(main)
    assert refused.is_error and "over query.max_chars (2000)" in refused.content[0].text
    assert not answered.is_error


def test_standard_input_and_body_files_are_read_to_the_limit_and_a_byte(notes: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_DEPOSIT_MAX_BYTES", "100")
    for args in (["deposit", "--title", "t", "--body", "-", "--no-process"], ["new", "Big", "--body", "-"],
                 ["deposit", "--title", "t", "--body", "x" * 101, "--no-process"]):
        result = cli(*args, "--notes", str(notes), input="y" * 5000)
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
        assert "over deposit.max_bytes (100" in result.stderr
    monkeypatch.delenv("ORGKIT_DEPOSIT_MAX_BYTES")
    started = time.monotonic()
    result = cli("deposit", "--title", "t", "--body-file", "/dev/zero", "--no-process", "--notes", str(notes))
    assert result.exit_code == 1 and time.monotonic() - started < 10
    assert result.stderr == "orgkit: error: body_file /dev/zero is over deposit.max_bytes (1048576 bytes)\n"
    assert not (notes / "deposits").exists()
    made = cli("new", "Small", "--body", "-", "--notes", str(notes), "--json", input="A short body.\n")
    assert made.exit_code == 0 and "A short body." in (notes / json.loads(made.stdout)["file"]).read_text()


@pytest.fixture
def endless_rg(tmp_path: Path, monkeypatch):
    """A ripgrep that never ends (it sleeps), so a call can only end at its deadline."""
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ORGKIT_RG", str(fake))
    return fake


def test_ripgrep_is_stopped_at_the_calls_deadline(notes: Path, endless_rg) -> None:
    started = time.monotonic()
    with until(0.3), pytest.raises(DeadlinePassed, match="ripgrep was stopped at the call's deadline"):
        scan(notes, "kittens")
    assert time.monotonic() - started < 5


def test_a_call_past_its_deadline_is_answered_in_time_on_serve_and_mcp(notes: Path, endless_rg,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_CALL_TIMEOUT", "0.5")
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    started = time.monotonic()
    answer = handle(ctx, '{"op": "scan", "query": "kittens"}')
    assert time.monotonic() - started < 3
    assert answer["error"] in ("scan took longer than 0.5 s (serve.call_timeout); its result is dropped",
                               "ripgrep was stopped at the call's deadline (serve.call_timeout)")

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            slow = await client.call_tool("scan", {"query": "kittens"})
            monkeypatch.delenv("ORGKIT_RG")  # the real ripgrep again: the server still answers
            return slow, await client.call_tool("scan", {"query": "kittens"})

    slow, answered = anyio.run(main)
    assert slow.is_error and "serve.call_timeout" in slow.content[0].text
    assert not answered.is_error and json.loads(answered.content[0].text)["result"][0]["id"] == "kittens"
