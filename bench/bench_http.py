"""Load on the team server (`orgkit serve --http`) over loopback, bounded in calls and time.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_http.py [--clients 8] [--calls 2000] [--idle 100]

Copies braindump to bench/out/http/ and indexes it (kept for the next run: the
notes and their index are copied from there afresh each time), makes an agent
token, starts the server, then runs `--clients` MCP clients (the SDK's streamable HTTP client, one
session each) that share `--calls` tool calls: 45% search, 35% recall, 20%
deposit (`no_process`, so the librarian's work does not blur the latencies).
Reports p50/p99 per tool, errors, deposits acknowledged against deposits in the
store (lost ones), and the server's peak RSS (VmHWM). Then opens `--idle`
connections that send nothing and checks that the server has closed them all
after `http.idle_timeout` (set to 2 s here) while it keeps answering.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from corpus import BRAINDUMP

ORGKIT = str(Path(sys.executable).with_name("orgkit"))
OUT = Path(__file__).resolve().parent / "out" / "http"
QUERIES = ["zettelkasten note taking", "spaced repetition", "functional programming", "bayesian inference",
           "how to write well", "emacs configuration", "reinforcement learning", "habits and productivity"]
DEADLINE = 900.0  # seconds: the whole load stops by itself after this


def cli(notes: Path, env: dict, *args: str) -> dict:
    done = subprocess.run([ORGKIT, *args, "--notes", str(notes), "--json"], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def client_loop(url: str, token: str, plan: list[str], times: dict[str, list[float]], errors: list[str],
                      deposited: list[str], stop_at: float) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http)) as client:
        for i, tool in enumerate(plan):
            if time.monotonic() > stop_at:
                errors.append("deadline reached")
                return
            query = random.choice(QUERIES)
            args = {"search": {"query": query, "limit": 10}, "recall": {"query": query, "budget": 2000},
                    "deposit": {"title": f"Finding {id(plan)}-{i}", "body": f"A finding about {query}.",
                                "no_process": True}}[tool]
            started = time.perf_counter()
            try:
                result = await client.call_tool(tool, args)
            except Exception as exc:  # the load records every failure, whatever it is
                errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                continue
            times[tool].append(time.perf_counter() - started)
            if result.is_error:
                errors.append(f"{tool}: {result.content[0].text[:200]}")
            elif tool == "deposit":
                deposited.append(json.loads(result.content[0].text)["result"]["id"])


def idle_check(port: int, count: int, url: str, token: str) -> dict:
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    time.sleep(3.0)
    closed = 0
    for sock in socks:
        sock.settimeout(2)
        try:
            closed += sock.recv(1) == b""
        except OSError:
            pass
        sock.close()
    answer = httpx.post(f"{url}/ops/search", json={"query": "zettelkasten"},
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return {"idle_opened": count, "idle_closed": closed, "answering_after": answer.status_code == 200}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--idle", type=int, default=100)
    args = ap.parse_args()
    env = dict(os.environ) | {"ORGKIT_HTTP_IDLE_TIMEOUT": "2"}
    seed = OUT / "braindump"
    if not (seed / ".orgkit").is_dir():
        shutil.rmtree(seed, ignore_errors=True)
        shutil.copytree(BRAINDUMP, seed)
        t0 = time.perf_counter()
        subprocess.run([ORGKIT, "index", "--notes", str(seed), "--quiet"], env=env, check=True)
        print(f"indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "braindump"
        shutil.copytree(seed, notes, ignore=shutil.ignore_patterns("orgkit-data"))
        agent = cli(notes, env, "token", "add", "load-agent", "--role", "agent")["token"]
        server = subprocess.Popen([ORGKIT, "serve", "--http", "127.0.0.1:0", "--notes", str(notes)], env=env,
                                  stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        line = ""
        while "serving" not in line:
            line = server.stderr.readline()
            if not line:
                raise SystemExit("the server ended before listening")
        url = re.search(r"http://\S+", line).group(0)
        port = int(url.rsplit(":", 1)[1])
        mix = ["search"] * 45 + ["recall"] * 35 + ["deposit"] * 20
        calls = [random.choice(mix) for _ in range(args.calls)]
        plans = [calls[k::args.clients] for k in range(args.clients)]
        times: dict[str, list[float]] = {"search": [], "recall": [], "deposit": []}
        errors: list[str] = []
        deposited: list[str] = []
        stop_at = time.monotonic() + DEADLINE

        async def load() -> None:
            async with anyio.create_task_group() as tg:
                for plan in plans:
                    tg.start_soon(client_loop, f"{url}/mcp", agent, plan, times, errors, deposited, stop_at)

        started = time.perf_counter()
        anyio.run(load)
        wall = time.perf_counter() - started
        idle = idle_check(port, args.idle, url, agent)
        rss = peak_rss_mib(server.pid)
        server.terminate()
        server.wait(timeout=60)
        conn = sqlite3.connect(notes / "orgkit-data" / "memory.sqlite")
        stored = {r[0] for r in conn.execute("SELECT id FROM deposits")}
        conn.close()
    report = {"clients": args.clients, "calls": args.calls, "wall_s": round(wall, 1),
              "calls_per_s": round(args.calls / wall, 1), "errors": len(errors), "first_errors": errors[:5],
              "deposits_acknowledged": len(deposited), "deposits_lost": len(set(deposited) - stored),
              "server_peak_rss_mib": round(rss, 1), **idle}
    for tool, samples in times.items():
        if samples:
            ordered = sorted(samples)
            report[f"{tool}_p50_ms"] = round(statistics.median(ordered) * 1000, 1)
            report[f"{tool}_p99_ms"] = round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
