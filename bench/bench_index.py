"""Index and search benchmarks on braindump and on a 10,000-file corpus made from it.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_index.py [--copies 19] [--embed-files 60] [--work DIR]

Every timing runs the real `orgkit` command in a fresh process (so it includes
start-up) unless it says "library". The scaled corpus repeats braindump's text
under fresh IDs, so its passages embed once per distinct text: its embedded
index is seeded from braindump's vectors (the same model fingerprint), which
is exactly what an incremental index would do with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import BRAINDUMP, replicate

REPO = Path(__file__).resolve().parents[1]
ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]


def run(*args: str) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB and stdout of one orgkit command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([*ORGKIT, *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise SystemExit(f"orgkit {' '.join(args)} failed: {err.read().decode()}")
        return seconds, usage.ru_maxrss / 1024, out.read().decode()


def full_lexical(notes: Path, runs: int) -> tuple[float, float]:
    """Median seconds and peak MiB of a from-scratch `index --no-embed`."""
    timings = [run("index", "--notes", str(notes), "--no-embed", "--rebuild") for _ in range(runs)]
    return statistics.median(t[0] for t in timings), max(t[1] for t in timings)


def bench_braindump(work: Path, results: dict) -> Path:
    notes = work / "braindump"
    shutil.copytree(BRAINDUMP, notes)
    results["braindump_no_embed_s"], results["braindump_no_embed_peak_mib"] = full_lexical(notes, 3)
    started = time.perf_counter()
    _, peak, out = run("index", "--notes", str(notes), "--json")
    results["braindump_embed_s"] = time.perf_counter() - started
    results["braindump_embed_peak_mib"] = peak
    results["braindump_passages"] = json.loads(out)["embedded"]
    return notes


def bench_throughput(work: Path, files: int, results: dict) -> None:
    """Embedding throughput of `orgkit index` against raw fastembed on the same passages."""
    from fastembed import TextEmbedding

    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.index.embedding import missing_vectors

    notes = work / "subset"
    for source in sorted(BRAINDUMP.rglob("*.org"))[:files]:
        target = notes / source.relative_to(BRAINDUMP)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    index = Index.at(notes)
    update(index)
    embedder = Embedder.from_config(load(notes))
    texts = [text for _, text in missing_vectors(index, embedder.fingerprint)]
    raw = TextEmbedding(embedder.name, specific_model_path=str(embedder.path))
    list(raw.embed(texts[:8]))  # warm up both models the same way
    embedder.load()
    embedder.embed(texts[:8])
    chars = sum(map(len, texts))
    best_raw = None
    for batch in (32, 64):
        started = time.perf_counter()
        list(raw.embed(texts, batch_size=batch))
        rate = len(texts) / (time.perf_counter() - started)
        results[f"raw_fastembed_batch{batch}_per_s"] = rate
        best_raw = max(best_raw or 0, rate)
    started = time.perf_counter()
    stats = update(index, embedder=embedder)
    ours = stats.embedded / (time.perf_counter() - started)
    results.update(throughput_passages=len(texts), throughput_chars=chars, orgkit_per_s=ours,
                   throughput_ratio=ours / best_raw)


def seed_vectors(source_db: Path, target_db: Path) -> None:
    with sqlite3.connect(target_db) as conn:
        conn.execute("ATTACH DATABASE ? AS other", (str(source_db),))
        conn.execute("INSERT OR IGNORE INTO vectors SELECT * FROM other.vectors")


def bench_scaled(work: Path, copies: int, braindump_notes: Path, results: dict) -> None:
    from orgkit.index import Index, update

    notes = work / "scaled"
    results["scaled_files"] = replicate(BRAINDUMP, notes, copies)
    results["scaled_no_embed_s"], results["scaled_no_embed_peak_mib"] = full_lexical(notes, 2)
    index = Index.at(notes)
    seed_vectors(braindump_notes / ".orgkit" / "index.sqlite", index.path)
    seconds, peak, out = run("index", "--notes", str(notes), "--json")
    results["scaled_embed_after_seed_s"] = seconds
    results["scaled_embed_peak_mib"] = peak
    results["scaled_chunks"] = index.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    time.sleep(2.1)  # past the window in which a just-written file is re-checked by content
    results["scaled_no_change_cli_s"] = statistics.median([run("index", "--notes", str(notes))[0] for _ in range(3)])
    lib = []
    for _ in range(5):
        started = time.perf_counter()
        update(index)
        lib.append(time.perf_counter() - started)
    results["scaled_no_change_library_s"] = statistics.median(lib)

    changed = notes / "copy03" / "main" / "id3_algorithm.org"
    one_change = []
    for round_ in range(3):
        changed.write_text(changed.read_text() + f"\nA new thought about decision trees, number {round_}.\n")
        seconds, _, out = run("index", "--notes", str(notes), "--json")
        stats = json.loads(out)
        assert stats["parsed"] == 1, stats
        one_change.append(seconds)
    results["scaled_one_change_cli_s"] = statistics.median(one_change)
    results["scaled_one_change_embedded"] = stats["embedded"]
    lexical_change = []
    for round_ in range(3):
        changed.write_text(changed.read_text() + f"\nAnd another, number {round_}.\n")
        lexical_change.append(run("index", "--notes", str(notes), "--no-embed")[0])
    results["scaled_one_change_no_embed_cli_s"] = statistics.median(lexical_change)
    started = time.perf_counter()
    changed.write_text(changed.read_text() + "\nOne more.\n")
    update(index)
    results["scaled_one_change_no_embed_library_s"] = time.perf_counter() - started
    time.sleep(2.1)
    run("index", "--notes", str(notes))

    cold = [run("search", "--notes", str(notes), "--json", "--no-update", "decision tree pruning")[0]
            for _ in range(3)]
    results["cold_search_no_update_s"] = statistics.median(cold)
    results["cold_search_s"] = statistics.median(
        [run("search", "--notes", str(notes), "--json", "decision tree pruning")[0] for _ in range(3)])
    load = subprocess.run([sys.executable, "-c", (
        "import time; t = time.perf_counter(); from orgkit.embed import Embedder; "
        "from orgkit.config import load; from pathlib import Path; "
        f"e = Embedder.from_config(load(Path({str(notes)!r}))); e.load(); e.embed_query('x'); print(time.perf_counter() - t)")],
        capture_output=True, text=True, check=True)
    results["model_load_s"] = float(load.stdout)
    results.update(serve_latency(notes))


QUERIES = ["decision tree pruning", "how do neural networks learn", "reinforcement learning exploration",
           "emacs configuration", "bayesian inference", "writing good notes", "gradient descent",
           "attention in transformers", "category theory", "zettelkasten"]


def serve_latency(notes: Path) -> dict:
    proc = subprocess.Popen([*ORGKIT, "serve", "--notes", str(notes)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(request: dict) -> float:
        started = time.perf_counter()
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert "error" not in answer, answer
        return time.perf_counter() - started

    first = ask({"op": "search", "query": "warm up"})
    hybrid = [ask({"op": "search", "query": q}) for q in QUERIES * 3]
    lexical = [ask({"op": "search", "query": q, "mode": "lexical"}) for q in QUERIES * 3]
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return {"serve_peak_mib": usage.ru_maxrss / 1024,
            "serve_first_search_s": first, "serve_hybrid_median_ms": statistics.median(hybrid) * 1000,
            "serve_lexical_median_ms": statistics.median(lexical) * 1000,
            "serve_hybrid_p90_ms": sorted(hybrid)[int(len(hybrid) * 0.9)] * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=19, help="copies of braindump (19: 10,051 files)")
    parser.add_argument("--embed-files", type=int, default=60, help="files for the throughput run")
    parser.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temp dir)")
    parser.add_argument("--braindump-index", type=Path, default=None,
                        help="an embedded braindump copy from an earlier run (skips embedding it again)")
    args = parser.parse_args()
    if not os.environ.get("ORGKIT_MODEL_PATH"):
        raise SystemExit("set ORGKIT_MODEL and ORGKIT_MODEL_PATH (see the docstring)")
    work = args.work or Path(tempfile.mkdtemp(prefix="orgkit-bench-"))
    results: dict = {}
    braindump = args.braindump_index or bench_braindump(work, results)
    print(json.dumps(results, indent=1), flush=True)
    bench_scaled(work, args.copies, braindump, results)
    print(json.dumps(results, indent=1), flush=True)
    bench_throughput(work, args.embed_files, results)
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
