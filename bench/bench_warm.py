"""Warm `context` and `recall`: how long a call takes in one warm process, and what it answers.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_warm.py --notes DIR [--corpus braindump] [--ops context,recall] [--rounds 2]
        [--limit N] [--dump FILE] [--profile FILE] [--serve]

DIR is CORPUS as indexed notes. The queries are the corpus's blind set (and its
typo variants; for braindump also bench/retrieval_dev.json). Every query goes
through each operation on one warm context, as `serve` runs it; the first round
warms the caches and, with `--dump`, writes every answer (result, warnings,
errors) as JSON lines, so two versions of orgkit can be compared answer by
answer (`cmp` the files). Every round is timed: the median wall milliseconds
a call of the first (each note read for the first time), and of the later ones
(the same queries again) the median and 90th percentile wall milliseconds and
the mean CPU milliseconds of this process a call (every thread; ripgrep's own
time not counted). With `--profile`, the later rounds run under cProfile and
its statistics go to FILE. With `--serve`, the calls go to an `orgkit serve`
process over its pipe instead (JSON lines, one request at a time) and the CPU
is that process's (every thread, from /proc). The recall audit log goes to a
scratch data directory, not into the notes.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from orgkit.ops import OpContext, call
from orgkit.roles import OWNER

HERE = Path(__file__).resolve().parent
ORGKIT = str(Path(sys.executable).with_name("orgkit"))


class InProcess:
    """The operations called on one warm context in this process; CPU is this process's."""

    def __init__(self, notes: Path) -> None:
        self.ctx = OpContext(notes, warm=True)

    def __call__(self, name: str, params: dict) -> dict:
        out = call(self.ctx, name, params, identity=OWNER)
        return {"result": out.result, "warnings": out.warnings, "errors": out.errors}

    def cpu(self) -> float:
        return time.process_time()

    def close(self) -> None:
        self.ctx.close()


class Served:
    """The operations asked of an `orgkit serve` process, one JSON line each; CPU is the server's."""

    def __init__(self, notes: Path) -> None:
        self.proc = subprocess.Popen([ORGKIT, "serve", "--notes", str(notes)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def __call__(self, name: str, params: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": name, **params}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def queries(corpus: str) -> list[str]:
    names = [HERE / "retrieval_blind" / f"{corpus}.json", HERE / "retrieval_blind" / f"{corpus}_typos.json"]
    if corpus == "braindump":
        names.append(HERE / "retrieval_dev.json")
    return [q["query"] for name in names for q in json.loads(name.read_text())["queries"]]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--corpus", default="braindump")
    parser.add_argument("--ops", default="context,recall", help="comma-separated: search, context, recall")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2, help="rounds, the first untimed")
    parser.add_argument("--limit", type=int, help="the first N queries only")
    parser.add_argument("--dump", type=Path, help="write every answer of the first round here")
    parser.add_argument("--profile", type=Path, help="cProfile statistics of the timed rounds")
    parser.add_argument("--serve", action="store_true", help="ask an `orgkit serve` process")
    args = parser.parse_args()
    os.environ["ORGKIT_DATA_DIR"] = tempfile.mkdtemp(prefix="orgkit-warm-data-")
    asked = queries(args.corpus)[: args.limit]
    ops = args.ops.split(",")
    ask: InProcess | Served = Served(args.notes) if args.serve else InProcess(args.notes)
    def params(name: str, query: str) -> dict:
        return {"query": query} | ({} if name == "search" else {"budget": args.budget})

    for name in ops:
        ask(name, params(name, "warm up"))
    dump = args.dump.open("w") if args.dump else None
    first: dict[str, list[float]] = {name: [] for name in ops}
    wall: dict[str, list[float]] = {name: [] for name in ops}
    cpu: dict[str, list[float]] = {name: [] for name in ops}
    profiler = cProfile.Profile() if args.profile else None
    for rnd in range(args.rounds):
        if rnd == 1 and profiler is not None:
            profiler.enable()
        for name in ops:  # one operation after another: a query's vector is not left over for the next
            for query in asked:
                started, started_cpu = time.perf_counter(), ask.cpu()
                out = ask(name, params(name, query))
                if rnd:
                    wall[name].append((time.perf_counter() - started) * 1000)
                    cpu[name].append((ask.cpu() - started_cpu) * 1000)
                    continue
                first[name].append((time.perf_counter() - started) * 1000)
                if dump is not None:
                    dump.write(json.dumps({"op": name, "query": query} | out, sort_keys=True) + "\n")
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    if dump is not None:
        dump.close()
    ask.close()
    where = "serve, " if args.serve else ""
    print(f"{where}{args.corpus}: {len(asked)} queries, {args.rounds - 1} timed round(s), budget {args.budget}, "
          f"load {os.getloadavg()[0]:.1f}")
    for name in ops:
        line = f"  {name:<8} first round p50 {statistics.median(first[name]):6.1f} ms"
        if wall[name]:
            line += (f"; then p50 {statistics.median(wall[name]):6.1f} ms  p90 {percentile(wall[name], 0.9):6.1f} ms"
                     f"  CPU {statistics.mean(cpu[name]):6.1f} ms a call")
        print(line)


if __name__ == "__main__":
    main()
