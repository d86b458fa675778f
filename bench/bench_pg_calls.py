"""Where a warm call's time goes on PostgreSQL: the read tools in one process, each statement timed.

    python bench/bench_pg_calls.py [--name braindump-tiny-x19] [--rounds 2] [--statements 25]
                                   [--profile TOOL] [--functions 30]

Runs on the database and notes copy `bench_http.py --tiny-model --postgres --copies 19`
indexed in bench/out/http-pg/ (a fresh copy of that database each run), with its tiny
model: search, context and recall for the eight queries of bench_http.py, `--rounds`
times after one warm-up call each. Reports per tool the wall time, this process's CPU
and the database server's CPU a call (its postmaster and every backend), then the
statements that took longest over all calls, as the client waited for them (a
statement's text cut at 160 characters), with how often each ran; and the statements
(COMMITs among them) a call of each tool sends. With --profile, the calls of that tool
are run again under cProfile on a CPU clock and its most expensive functions printed
(own CPU and with callees).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pg_server
import psycopg
from bench_http import OUT_PG, QUERIES, TINY, cpu_seconds

ARGS = {"search": lambda q: {"query": q, "limit": 10}, "context": lambda q: {"query": q, "budget": 2000},
        "recall": lambda q: {"query": q, "budget": 2000}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", default="braindump-tiny-x19")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--statements", type=int, default=25)
    ap.add_argument("--profile", choices=sorted(ARGS), default=None)
    ap.add_argument("--functions", type=int, default=30)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a server setting for the database's sessions (ALTER DATABASE ... SET), to try one")
    args = ap.parse_args()
    server = pg_server.start(OUT_PG / "pgdata")
    try:
        url = pg_server.database(server, "calls", template=f"seed_{args.name.replace('-', '_')}")
        for setting in args.set:
            name, value = setting.split("=", 1)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"ALTER DATABASE calls SET {name} = '{value}'")
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from tiny_model import MODEL_NAME

        tmp = Path(tempfile.mkdtemp())
        notes = tmp / "notes"
        shutil.copytree(OUT_PG / args.name, notes, ignore=shutil.ignore_patterns("orgkit-data", ".orgkit"))
        os.environ.update(ORGKIT_DATABASE_URL=url, ORGKIT_MODEL=MODEL_NAME, ORGKIT_MODEL_PATH=str(TINY),
                          ORGKIT_STATE_DIR=str(tmp / "state"))
        from orgkit.ops import OpContext, call
        from orgkit.roles import OWNER
        from orgkit.storage.postgres import PgConnection

        spent: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        run, execute = PgConnection.run, PgConnection.execute

        def timed(send, conn, sql, params=()):
            started = time.perf_counter()
            try:
                return send(conn, sql, params)
            finally:
                entry = spent[" ".join(sql.split())[:160]]
                entry[0] += 1
                entry[1] += time.perf_counter() - started

        PgConnection.run = lambda conn, sql, params=(): timed(run, conn, sql, params)  # type: ignore[method-assign]
        # A statement with parameters is timed once, in `run` (which `execute` calls).
        PgConnection.execute = lambda conn, sql, params=(): (  # type: ignore[method-assign]
            execute(conn, sql, params) if params else timed(execute, conn, sql, params))
        ctx = OpContext(notes, warm=True)
        for tool, make in ARGS.items():
            call(ctx, tool, make("warm up"), identity=OWNER)
        spent.clear()
        database = int((Path(server.pgdata) / "postmaster.pid").read_text().split()[0])
        for tool, make in ARGS.items():
            sent = sum(n for n, _ in spent.values())
            commits = spent["COMMIT"][0]
            db, cpu, wall = cpu_seconds(database), time.process_time(), time.perf_counter()
            for _ in range(args.rounds):
                for query in QUERIES:
                    call(ctx, tool, make(query), identity=OWNER)
            n = args.rounds * len(QUERIES)
            print(f"{tool}: wall {1000 * (time.perf_counter() - wall) / n:.1f} ms, "
                  f"cpu {1000 * (time.process_time() - cpu) / n:.1f} ms, "
                  f"database cpu {1000 * (cpu_seconds(database) - db) / n:.1f} ms, "
                  f"{(sum(n for n, _ in spent.values()) - sent) / n:.1f} statements "
                  f"({(spent['COMMIT'][0] - commits) / n:.1f} COMMITs) a call")
        print(f"{sum(n for n, _ in spent.values())} statements, {sum(t for _, t in spent.values()):.2f} s")
        for sql, (n, seconds) in sorted(spent.items(), key=lambda kv: -kv[1][1])[:args.statements]:
            print(f"{seconds * 1000:8.0f} ms {n:5d}  {sql}")
        if args.profile:
            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
            for _ in range(args.rounds):
                for query in QUERIES:
                    call(ctx, args.profile, ARGS[args.profile](query), identity=OWNER)
            profiler.disable()
            for key in ("tottime", "cumulative"):
                pstats.Stats(profiler).sort_stats(key).print_stats(args.functions)
        ctx.close()
    finally:
        pg_server.stop(server)


if __name__ == "__main__":
    main()
