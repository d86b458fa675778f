"""One warm client, one call at a time: search, context and recall on each surface.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    ORGKIT_STATE_DIR=bench/out/bd-state \
    python bench/bench_surfaces.py [--calls 15] [--only SURFACE,...] [--ops OP,...] [--profile DIR]

Over braindump, indexed beforehand (`orgkit index` with the same settings), each
surface is started as its clients start it and warmed (until a search no longer
says the model is still loading); then every query of QUERIES is asked of
search, context and recall in turn, CALLS rounds, and the median round trip of
each is printed with the server's CPU time per call (all its threads, from
/proc: what the call costs the machine, which a loaded machine's waiting does not
inflate): `serve` (JSON lines over a pipe), `POST /ops/NAME` (httpx, one
kept-alive connection), MCP over HTTP and MCP over stdio (the SDK's client);
the HTTP server runs as one process (`--workers 1`), as one client needs.
The MCP rows less the serve row are the surface's own cost. With
`--profile DIR`, each server runs under cProfile and its statistics are written
to DIR/SURFACE.prof (the event loop's thread: the protocol's and the
adapter's own work; the operation itself runs in a worker thread).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[1]
BRAINDUMP = REPO.parent / "shared" / "corpora" / "braindump"  # ../shared, beside the repository
ORGKIT = str(Path(sys.executable).with_name("orgkit"))
QUERIES = ("zettelkasten note taking", "spaced repetition", "emacs configuration", "bayesian inference")
OPS = ("search", "context", "recall")

Call = Callable[[str, dict], Awaitable[dict]]
Figures = dict[str, str]


def command(profile: Path | None, surface: str, *args: str) -> list[str]:
    if profile is None:
        return [ORGKIT, *args]
    return [sys.executable, "-m", "cProfile", "-o", str(profile / f"{surface}.prof"), ORGKIT, *args]


def cpu_ms(pid: int) -> float:
    """CPU time (user and system, every thread) the process `pid` has used, in milliseconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def newest_child() -> int:
    """The process this one started last (the SDK's stdio client starts the server itself)."""
    children = [int(c) for t in Path("/proc/self/task").iterdir() for c in (t / "children").read_text().split()]
    return max(children, key=lambda c: float(Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[19]))


async def measure(call: Call, calls: int, pid: int, ops: tuple[str, ...]) -> Figures:
    """Warm the surface, then each operation's median milliseconds and the server's CPU ms per call."""
    for _ in range(600):
        found = await call("search", {"query": QUERIES[0]})
        if not any("still loading" in w for w in found.get("warnings", [])):
            break
        await anyio.sleep(0.1)
    for name in OPS:  # first calls of each (caches, lazy imports) are not counted
        await call(name, {"query": QUERIES[0]})
    out = {}
    for name in ops:
        times = []
        cpu = cpu_ms(pid)
        for _ in range(calls):
            for query in QUERIES:
                started = time.perf_counter()
                await call(name, {"query": query})
                times.append((time.perf_counter() - started) * 1000)
        out[name] = f"{statistics.median(times):.1f} / {(cpu_ms(pid) - cpu) / len(times):.1f}"
    return out


async def serve_lines(notes: Path, env: dict, calls: int, profile: Path | None, ops: tuple[str, ...]) -> Figures:
    proc = await anyio.open_process(command(profile, "serve", "serve", "--notes", str(notes)), env=env)
    buffer = b""

    async def call(name: str, params: dict) -> dict:
        nonlocal buffer
        await proc.stdin.send(json.dumps({"op": name, **params}).encode() + b"\n")
        while b"\n" not in buffer:
            buffer += await proc.stdout.receive()
        line, _, buffer = buffer.partition(b"\n")
        return json.loads(line)

    try:
        return await measure(call, calls, proc.pid, ops)
    finally:
        await proc.stdin.aclose()
        await proc.wait()


class HttpServer:
    def __init__(self, notes: Path, env: dict, profile: Path | None, surface: str) -> None:
        self.proc = subprocess.Popen(command(profile, surface, "serve", "--http", "127.0.0.1:0", "--workers", "1",
                                             "--notes", str(notes)), env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = ""
        while "serving" not in line:
            line = self.proc.stderr.readline()
            assert line, "the server ended before listening"
        self.url = re.search(r"http://\S+", line).group(0)

    def close(self) -> None:
        self.proc.send_signal(2)  # SIGINT: a clean end, so cProfile writes its statistics
        self.proc.wait(timeout=60)


async def http_ops(notes: Path, env: dict, token: str, calls: int, profile: Path | None,
                   ops: tuple[str, ...]) -> Figures:
    server = HttpServer(notes, env, profile, "ops")
    try:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async def call(name: str, params: dict) -> dict:
                return (await http.post(f"{server.url}/ops/{name}", json=params)).json()

            return await measure(call, calls, server.proc.pid, ops)
    finally:
        server.close()


def _mcp_call(client: Client) -> Call:
    async def call(name: str, params: dict) -> dict:
        result = await client.call_tool(name, params)
        return result.structured_content or json.loads(result.content[0].text)

    return call


async def mcp_http(notes: Path, env: dict, token: str, calls: int, profile: Path | None,
                   ops: tuple[str, ...]) -> Figures:
    server = HttpServer(notes, env, profile, "mcp-http")
    try:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
            return await measure(_mcp_call(client), calls, server.proc.pid, ops)
    finally:
        server.close()


async def mcp_stdio(notes: Path, env: dict, calls: int, profile: Path | None, ops: tuple[str, ...]) -> Figures:
    cmd = command(profile, "mcp-stdio", "mcp", "--notes", str(notes))
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        return await measure(_mcp_call(client), calls, newest_child(), ops)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--only", help="comma-separated surfaces: serve,ops,mcp-http,mcp-stdio")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated operations (search,context,recall)")
    args = parser.parse_args()
    ops = tuple(args.ops.split(","))
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    scratch = Path(tempfile.mkdtemp(prefix="orgkit-surfaces-"))
    env["ORGKIT_DATA_DIR"] = str(scratch / "data")  # the recall audit away from the corpus
    env["XDG_DATA_HOME"] = str(scratch / "user")  # and the token, away from the user's own tokens
    token = json.loads(subprocess.run([ORGKIT, "token", "add", "bench", "--role", "agent", "--notes",
                                       str(BRAINDUMP), "--json"], env=env, capture_output=True, text=True,
                                      check=True).stdout)["token"]
    surfaces: dict[str, Callable[[], Awaitable[Figures]]] = {
        "serve": lambda: serve_lines(BRAINDUMP, env, args.calls, args.profile, ops),
        "ops": lambda: http_ops(BRAINDUMP, env, token, args.calls, args.profile, ops),
        "mcp-http": lambda: mcp_http(BRAINDUMP, env, token, args.calls, args.profile, ops),
        "mcp-stdio": lambda: mcp_stdio(BRAINDUMP, env, args.calls, args.profile, ops),
    }
    wanted = args.only.split(",") if args.only else list(surfaces)
    try:
        print(f"| surface: p50 ms / server CPU ms a call ({args.calls * len(QUERIES)} calls each) | "
              + " | ".join(ops) + " |")
        print("| --- | " + " | ".join("---:" for _ in ops) + " |")
        for name in wanted:
            figures = anyio.run(surfaces[name])
            print(f"| {name} | " + " | ".join(figures[op] for op in ops) + " |", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
