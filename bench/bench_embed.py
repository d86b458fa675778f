"""Embedding a corpus from scratch: orgkit against raw fastembed on the same texts.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_embed.py [--notes DIR] [--raw-batch 32] [--skip-raw]

Copies the corpus (default braindump) to a scratch directory, then:
1. counts what there is to embed: passages, distinct passage texts, their tokens;
2. raw fastembed (`TextEmbedding.embed(texts, batch_size=B)` over the distinct
   texts in index order, as a caller of fastembed would write it) in a process
   of its own, timed and measured (peak RSS);
3. `orgkit index --rebuild --quiet --json` from scratch under `/usr/bin/time -v`:
   wall time (parsing included), peak RSS, and tokens/s over the embedding.
Rates are given per wall second and per CPU second (user + system): on a
shared machine the second is the fairer comparison.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import BRAINDUMP

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]

RAW = """
import json, resource, sys, time
from fastembed import TextEmbedding
texts = json.load(open(sys.argv[1]))
model = TextEmbedding(sys.argv[2], specific_model_path=sys.argv[3])
list(model.embed(texts[:8]))
started, cpu = time.perf_counter(), time.process_time()
for _ in model.embed(texts, batch_size=int(sys.argv[4])):
    pass
print(json.dumps({"seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def cpu_seconds(report: str) -> float:
    """User plus system time from /usr/bin/time -v's report."""
    return sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", report).group(1)) for kind in ("User", "System"))


def timed(command: list[str]) -> tuple[float, float, str, str]:
    """Wall seconds, peak RSS (MiB, from /usr/bin/time -v), stdout and stderr."""
    started = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {proc.stderr[-2000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1)) / 1024
    return seconds, peak, proc.stdout, proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, default=BRAINDUMP)
    parser.add_argument("--raw-batch", type=int, default=32)
    parser.add_argument("--skip-raw", action="store_true")
    parser.add_argument("--keep", type=Path, default=None, help="keep the indexed copy here (for bench_retrieval)")
    args = parser.parse_args()
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.index.embedding import missing_vectors

    results: dict = {}
    with tempfile.TemporaryDirectory() as work:
        notes = Path(work) / "notes"
        shutil.copytree(args.notes, notes, ignore=shutil.ignore_patterns(".orgkit"))
        index = Index.at(notes)
        update(index)
        embedder = Embedder.from_config(load(notes))
        texts = [text for _, text in missing_vectors(index, embedder.fingerprint)]
        results["passages"] = index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        results["distinct_texts"] = len(texts)
        results["tokens"] = sum(embedder.token_lengths(texts))
        index.close()
        if not args.skip_raw:
            listing = Path(work) / "texts.json"
            listing.write_text(json.dumps(texts))
            raw = subprocess.run([sys.executable, "-c", RAW, str(listing), embedder.name, str(embedder.path),
                                  str(args.raw_batch)], capture_output=True, text=True, check=True)
            measured = json.loads(raw.stdout.splitlines()[-1])
            results["raw_seconds"] = measured["seconds"]
            results["raw_peak_mib"] = measured["peak_mib"]
            results["raw_tokens_per_s"] = results["tokens"] / measured["seconds"]
            results["raw_cpu_seconds"] = measured["cpu_seconds"]
            results["raw_tokens_per_cpu_s"] = results["tokens"] / measured["cpu_seconds"]
        del texts
        seconds, peak, out, report = timed([*ORGKIT, "index", "--rebuild", "--quiet", "--json", "--notes", str(notes)])
        stats = json.loads(out)
        results.update(orgkit_seconds=seconds, orgkit_peak_mib=peak, orgkit_embedded=stats["embedded"],
                       orgkit_tokens=stats["tokens"])
        results["orgkit_tokens_per_s"] = stats["tokens"] / seconds
        results["orgkit_cpu_seconds"] = cpu_seconds(report)
        results["orgkit_tokens_per_cpu_s"] = stats["tokens"] / results["orgkit_cpu_seconds"]
        if args.keep is not None:
            shutil.copytree(notes, args.keep, symlinks=True)
        if "raw_tokens_per_s" in results:
            results["ratio"] = results["orgkit_tokens_per_s"] / results["raw_tokens_per_s"]
            results["ratio_cpu"] = results["orgkit_tokens_per_cpu_s"] / results["raw_tokens_per_cpu_s"]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
