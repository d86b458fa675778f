"""MCP sessions opened and abandoned on the team server: its memory before, with them open,
and after they expired, twice over.

    python bench/bench_sessions.py [--sessions 1500] [--idle 240] [--waves 2]

Starts `orgkit serve --http` on loopback over a copy of the manual (notes/), with
`http.session_idle_timeout` = IDLE seconds (longer than opening them all takes)
and room for every session under one token; each wave opens SESSIONS sessions
(initialize and the initialized notification, as a client does) and leaves them.
Prints the server's resident memory (VmRSS) before, with a wave's sessions open
and after they expired, and how many of a sample of their IDs still answer. A
second wave that ends where the first did shows what expired sessions left is
reused, not lost.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
ORGKIT = str(Path(sys.executable).with_name("orgkit"))
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}


def rss_mib(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1500)
    parser.add_argument("--idle", type=float, default=240.0)
    parser.add_argument("--waves", type=int, default=2)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="orgkit-sessions-"))
    notes = scratch / "notes"
    shutil.copytree(REPO / "notes", notes)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")}
    env |= {"ORGKIT_HTTP_SESSION_IDLE_TIMEOUT": str(args.idle),
            "ORGKIT_HTTP_SESSIONS_PER_TOKEN": str(args.sessions + 1), "ORGKIT_STATE_DIR": str(scratch / "state")}
    added = subprocess.run([ORGKIT, "token", "add", "bench", "--role", "reader", "--notes", str(notes), "--json"],
                           env=env, capture_output=True, text=True, check=True)
    token = json.loads(added.stdout)["token"]
    server = subprocess.Popen([ORGKIT, "serve", "--http", "127.0.0.1:0", "--notes", str(notes)], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "serving" not in line:
            line = server.stderr.readline()
        url = re.search(r"http://\S+", line).group(0) + "/mcp"
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        with httpx.Client(headers=headers, timeout=30) as http:
            http.post(url, json=INITIALIZE)  # one session first, so start-up's own allocations are counted
            time.sleep(args.idle + 2)
            print(f"RSS before: {rss_mib(server.pid):.0f} MiB", flush=True)
            for wave in range(1, args.waves + 1):
                started = time.perf_counter()
                ids = []
                for _ in range(args.sessions):
                    sid = http.post(url, json=INITIALIZE).headers["mcp-session-id"]
                    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers={"Mcp-Session-Id": sid})
                    ids.append(sid)
                opening = time.perf_counter() - started
                held = rss_mib(server.pid)
                time.sleep(args.idle + 3)
                after = rss_mib(server.pid)
                sample = ids[:: max(1, len(ids) // 100)]
                ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                alive = sum(http.post(url, json=ping, headers={"Mcp-Session-Id": sid}).status_code == 200
                            for sid in sample)
                print(f"wave {wave}: {args.sessions} sessions opened in {opening:.0f} s; RSS {held:.0f} MiB with "
                      f"them open, {after:.0f} MiB {args.idle + 3:g} s after the last ({alive} of a sample of "
                      f"{len(sample)} still answer)", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
