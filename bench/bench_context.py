"""What `context` hands an agent on braindump: is the target note among `included`, and how fast.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_context.py --notes DIR [--budget 2000] [--scope notes]

DIR is an indexed, embedded copy of braindump (`orgkit index --notes DIR`).
Every query of bench/retrieval_dev.json goes through the `context` operation
on one warm context (as `serve` runs it: index, model and vectors loaded
once); a query counts as answered when a note it names is included whole or
as an excerpt. The median and 90th percentile of the warm call times are
taken over a second pass (the first warms the caches), with the median CPU
time of this process per call (ripgrep's own time not counted), which a
loaded machine disturbs less than the wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from orgkit.ops import OpContext, call
from orgkit.roles import OWNER

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True, help="an indexed copy of braindump")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--scope", help="the scope to ask for (default: the operation's)")
    args = parser.parse_args()
    queries = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
    ctx = OpContext(args.notes, warm=True)
    given = {"budget": args.budget} | ({"scope": args.scope} if args.scope else {})
    call(ctx, "context", {"query": "warm up"} | given, identity=OWNER)
    found: dict[str, list[int]] = {}
    excerpted = 0
    times: list[float] = []
    cpu: list[float] = []
    for rnd in range(2):
        for item in queries:
            start, start_cpu = time.perf_counter(), time.process_time()
            out = call(ctx, "context", {"query": item["query"]} | given, identity=OWNER).result
            if rnd:
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
                continue
            included = {e["id"]: e for e in out["included"]}
            hit = next((included[i] for i in item["relevant"] if i in included), None)
            found.setdefault(item["kind"], []).append(hit is not None)
            excerpted += hit is not None and bool(hit.get("excerpt"))
    total = sum(sum(v) for v in found.values())
    print(f"budget {args.budget}: target included for {total}/{len(queries)} queries "
          f"({excerpted} of them as an excerpt)")
    for kind, hits in sorted(found.items()):
        print(f"  {kind:<10} {sum(hits)}/{len(hits)}")
    times.sort()
    print(f"warm context: median {statistics.median(times) * 1000:.1f} ms, "
          f"p90 {times[int(len(times) * 0.9)] * 1000:.1f} ms over {len(times)} calls; "
          f"median CPU time of the process {statistics.median(cpu) * 1000:.1f} ms")
    ctx.close()


if __name__ == "__main__":
    main()
