"""Load on the team server (`orgkit serve --http`) over loopback, bounded in calls and time.

    python bench/bench_http.py --tiny-model [--workers 2] [--mix read|deposits] [--clients 8] [--calls 2000]
                               [--idle 100] [--postgres]

Copies braindump to bench/out/http/ (bench/out/http-pg/ with `--postgres`) and
indexes it (kept for the next run: the notes and their index are copied from
there afresh each time), makes an agent token, starts the server, then runs
`--clients` MCP clients (the SDK's streamable HTTP client, one session each)
that share `--calls` tool calls. `--mix read`: a third each of search, context
and recall; `--mix deposits`: that mix for 80% of the calls and deposit for 20%
(`no_process`, so the librarian's work does not blur the latencies). Reports
calls/s, p50/p99 per tool, errors, deposits acknowledged against deposits in
the store (lost ones), the CPU time of the server and of the clients (which
share the machine's cores with it), and the peak RSS (VmHWM) of the server's processes
added up. Then opens `--idle` connections that send nothing and checks that the
server has closed them all after `http.idle_timeout` (set to 2 s here) while it
keeps answering.

The embedding model is the one the environment names (ORGKIT_MODEL,
ORGKIT_MODEL_PATH; MiniLM embeds braindump in about 200 s of CPU), or with
`--tiny-model` a static model (model2vec format, tests/tiny_model.py) over
braindump's 4,000 most frequent words, built in bench/out/: it embeds braindump
in seconds and a query in microseconds, so the figures are the server's own.
Each model keeps its own seed copy.

`--workers N` runs `serve --http --workers N` (without it, the server's default;
a version without the flag runs one process). `--orgkit CMD` runs another
orgkit (a checkout of main, for the before figures). With `--postgres`, the
index and the memory store are in a PostgreSQL database (pgserver, PostgreSQL
16 with pgvector; its data dir and the indexed copy are kept in
bench/out/http-pg/, each run starts from a copy of the indexed database), and
`--servers` server processes, each with its own state dir, share the notes
copy and the database; the clients are spread over them round-robin.
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
import threading
import time
from pathlib import Path

from collections import Counter

import anyio
import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import pg_server
from corpus import BRAINDUMP, replicate

ORGKIT = [str(Path(sys.executable).with_name("orgkit"))]
OUT = Path(__file__).resolve().parent / "out" / "http"
TINY = OUT.with_name("tiny-model")
MIXES = {"read": ["search", "context", "recall"], "deposits": ["search", "context", "recall"] * 4 + ["deposit"] * 3}
OUT_PG = OUT.with_name("http-pg")
QUERIES = ["zettelkasten note taking", "spaced repetition", "functional programming", "bayesian inference",
           "how to write well", "emacs configuration", "reinforcement learning", "habits and productivity"]
DEADLINE = 900.0  # seconds: the whole load stops by itself after this


def cli(notes: Path, env: dict, *args: str) -> dict:
    done = subprocess.run([*ORGKIT, *args, "--notes", str(notes), "--json"], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def process_tree(pid: int) -> list[int]:
    """`pid` and every process under it (the server's workers and their children)."""
    out = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                out += process_tree(int(child))
    except FileNotFoundError:  # it ended meanwhile
        pass
    return out


def peak_rss_mib(pid: int) -> float:
    """The peak RSS (VmHWM) of `pid` and every process under it, added up."""
    total = 0.0
    for each in process_tree(pid):
        status = Path(f"/proc/{each}/status")
        for line in status.read_text().splitlines() if status.exists() else []:
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) / 1024
    return total


def cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and every process under it (user and system, reaped children's included)."""
    stats = [Path(f"/proc/{each}/stat") for each in process_tree(pid)]
    return sum(sum(int(x) for x in stat.read_text().rsplit(")", 1)[1].split()[11:15])
               for stat in stats if stat.exists()) / os.sysconf("SC_CLK_TCK")


def database_cpu_s(server) -> float:
    """CPU time of the PostgreSQL server (its postmaster and every backend, ended ones included); 0 without one."""
    if server is None:
        return 0.0
    return cpu_seconds(int((Path(server.pgdata) / "postmaster.pid").read_text().split()[0]))


def tiny_model() -> Path:
    """A static model over braindump's most frequent words (built once in bench/out/tiny-model)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    if not (TINY / "model.safetensors").is_file():
        from tiny_model import build_tiny_model

        words = Counter(w for f in BRAINDUMP.rglob("*.org")
                        for w in re.findall(r"[a-z]{3,}", f.read_text(encoding="utf-8", errors="replace").lower()))
        build_tiny_model(TINY, [w for w, _ in words.most_common(4000)], dim=64)
    return TINY


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
                    "context": {"query": query, "budget": 2000},
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


def copy_corpus(dest: Path, copies: int) -> None:
    """braindump at `dest`, or (`copies` past 1) that many copies of it under fresh IDs (19: the 10k-file corpus)."""
    if copies > 1:
        replicate(BRAINDUMP, dest, copies)
    else:
        shutil.copytree(BRAINDUMP, dest)


def seed_sqlite(env: dict, name: str, copies: int) -> Path:
    """braindump's copy with its index in the state dir, made once in bench/out/http/."""
    seed = OUT / name
    if not (seed / ".orgkit").is_dir():
        shutil.rmtree(seed, ignore_errors=True)
        copy_corpus(seed, copies)
        t0 = time.perf_counter()
        subprocess.run([*ORGKIT, "index", "--notes", str(seed), "--quiet"], env=env, check=True)
        print(f"indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return seed


def seed_postgres(env: dict, server, name: str, copies: int) -> tuple[Path, str]:
    """braindump's copy and its index in the database named after it on the server in bench/out/http-pg/,
    made once: the copy and the database's name."""
    seed, marker = OUT_PG / name, OUT_PG / f"{name}-indexed.json"
    database = f"seed_{name.replace('-', '_')}"
    if not marker.is_file():
        shutil.rmtree(seed, ignore_errors=True)
        copy_corpus(seed, copies)
        url = pg_server.database(server, database)
        t0 = time.perf_counter()
        subprocess.run([*ORGKIT, "index", "--notes", str(seed), "--quiet"], check=True,
                       env=env | {"ORGKIT_DATABASE_URL": url, "ORGKIT_STATE_DIR": str(OUT_PG / f"{name}-state")})
        seconds = time.perf_counter() - t0
        marker.write_text(json.dumps({"indexed_s": round(seconds, 1)}) + "\n")
        print(f"indexed in {seconds:.1f} s", file=sys.stderr)
    return seed, database


def start_server(notes: Path, env: dict, workers: int | None) -> tuple[subprocess.Popen, str, list[str]]:
    """One `serve --http` on a free loopback port: the process, its URL and its stderr (drained, kept)."""
    more = ["--workers", str(workers)] if workers else []
    server = subprocess.Popen([*ORGKIT, "serve", "--http", "127.0.0.1:0", "--notes", str(notes), *more], env=env,
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = ""
    while "serving" not in line:
        line = server.stderr.readline()
        if not line:
            raise SystemExit("the server ended before listening")
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(server.stderr), daemon=True).start()  # a full pipe would block it
    return server, re.search(r"http://\S+", line).group(0), log


def stop_servers(servers: list[subprocess.Popen]) -> None:
    for server in servers:
        if server.poll() is None:
            server.terminate()
    for server in servers:
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--idle", type=int, default=100)
    ap.add_argument("--servers", type=int, default=1, help="server processes sharing the notes (needs --postgres "
                    "past 1); clients are spread over them round-robin")
    ap.add_argument("--postgres", action="store_true", help="index and memory store in a pgserver database "
                    "(kept in bench/out/http-pg/)")
    ap.add_argument("--workers", type=int, default=None, help="serve --http --workers N")
    ap.add_argument("--mix", choices=sorted(MIXES), default="deposits")
    ap.add_argument("--tiny-model", action="store_true", help="embed with a static model over braindump's words")
    ap.add_argument("--copies", type=int, default=1, help="braindump copied this often under fresh IDs "
                    "(19: the 10k-file corpus of bench_index.py)")
    ap.add_argument("--orgkit", default=None, help="the orgkit command to run (e.g. a checkout of main)")
    args = ap.parse_args()
    if args.servers > 1 and not args.postgres:
        ap.error("several servers share their index and memory store through PostgreSQL: --servers needs --postgres")
    if args.orgkit:
        ORGKIT[:] = args.orgkit.split()
    # The load is one token's: its reads are not to be rate-limited (the limit is per minute).
    env = dict(os.environ) | {"ORGKIT_HTTP_IDLE_TIMEOUT": "2", "ORGKIT_HTTP_READS_PER_MINUTE": "1000000"}
    name = "braindump"
    if args.tiny_model:
        model = tiny_model()
        from tiny_model import MODEL_NAME

        env |= {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(model)}
        name = "braindump-tiny"
    if args.copies > 1:
        name += f"-x{args.copies}"
    pg = pg_server.start(OUT_PG / "pgdata") if args.postgres else None
    servers: list[subprocess.Popen] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            notes = Path(tmp) / "braindump"
            if pg is not None:
                seed, template = seed_postgres(env, pg, name, args.copies)
                shutil.copytree(seed, notes, ignore=shutil.ignore_patterns("orgkit-data", ".orgkit"))
                env["ORGKIT_DATABASE_URL"] = database = pg_server.database(pg, "run", template=template)
                envs = [env | {"ORGKIT_STATE_DIR": str(Path(tmp) / f"state-{k}")} for k in range(args.servers)]
            else:
                seed = seed_sqlite(env, name, args.copies)
                shutil.copytree(seed, notes, ignore=shutil.ignore_patterns("orgkit-data"))
                envs = [env]
            # The token is in the data dir, which the servers share with the notes.
            agent = cli(notes, envs[0], "token", "add", "load-agent", "--role", "agent")["token"]
            urls, logs = [], []
            for server_env in envs:
                server, url, log = start_server(notes, server_env, args.workers)
                servers.append(server)
                urls.append(url)
                logs.append(log)
            mix = MIXES[args.mix]
            calls = [random.choice(mix) for _ in range(args.calls)]
            plans = [calls[k::args.clients] for k in range(args.clients)]
            times: dict[str, list[float]] = {tool: [] for tool in sorted(set(mix))}
            errors: list[str] = []
            deposited: list[str] = []
            stop_at = time.monotonic() + DEADLINE

            async def load() -> None:
                async with anyio.create_task_group() as tg:
                    for k, plan in enumerate(plans):
                        tg.start_soon(client_loop, f"{urls[k % len(urls)]}/mcp", agent, plan, times, errors,
                                      deposited, stop_at)

            cpu_before = sum(cpu_seconds(server.pid) for server in servers)
            db_cpu_before = database_cpu_s(pg)
            load_before = os.getloadavg()[0]
            started, client_cpu = time.perf_counter(), time.process_time()
            anyio.run(load)
            wall, client_cpu = time.perf_counter() - started, time.process_time() - client_cpu
            cpu = sum(cpu_seconds(server.pid) for server in servers) - cpu_before
            db_cpu = database_cpu_s(pg) - db_cpu_before
            load_after = os.getloadavg()[0]
            idle = idle_check(int(urls[0].rsplit(":", 1)[1]), args.idle, urls[0], agent)
            rss = [peak_rss_mib(server.pid) for server in servers]
            stop_servers(servers)
            if pg is not None:
                import psycopg

                with psycopg.connect(database) as conn:
                    stored = {r[0] for r in conn.execute("SELECT id FROM deposits")}
            else:
                conn = sqlite3.connect(notes / "orgkit-data" / "memory.sqlite")
                stored = {r[0] for r in conn.execute("SELECT id FROM deposits")}
                conn.close()
    finally:
        stop_servers(servers)
        if pg is not None:
            pg_server.stop(pg)
    report = {"mix": args.mix, "workers": args.workers, "model": env.get("ORGKIT_MODEL"), "copies": args.copies,
              "clients": args.clients, "calls": args.calls, "wall_s": round(wall, 1),
              "calls_per_s": round(args.calls / wall, 1), "server_cpu_s": round(cpu, 1),
              "calls_per_server_cpu_s": round(args.calls / cpu, 1) if cpu else None,
              "client_cpu_s": round(client_cpu, 1),
              "load_average_before_after": [round(load_before, 1), round(load_after, 1)],
              "errors": len(errors), "first_errors": errors[:5],
              "deposits_acknowledged": len(deposited), "deposits_lost": len(set(deposited) - stored),
              "peak_rss_mib_all_processes": round(rss[0], 1), **idle}
    if pg is not None:
        report |= {"database_cpu_s": round(db_cpu, 1),
                   "calls_per_cpu_s_server_and_database": round(args.calls / (cpu + db_cpu), 1)}
    if pg is not None or args.servers > 1:
        report |= {"backend": "postgres" if pg is not None else "sqlite", "servers": args.servers,
                   "peak_rss_mib_all_processes": [round(r, 1) for r in rss],
                   "deposits_stored": len(stored)}
    for tool, samples in times.items():
        if samples:
            ordered = sorted(samples)
            report[f"{tool}_p50_ms"] = round(statistics.median(ordered) * 1000, 1)
            report[f"{tool}_p99_ms"] = round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
