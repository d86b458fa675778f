"""`orgkit mcp` start-up on braindump, never indexed, through the MCP SDK's stdio client.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_mcp.py [--runs 5]

Each run copies braindump afresh (no index), starts the server as a client
would, and times: the `initialize` answer (from spawn), `tools/list` and the
first search (by words while the model loads); with `--indexed DIR` also the
first search ranked by meaning on an indexed copy. The baseline is importing
the MCP SDK alone in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from corpus import BRAINDUMP

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]
QUERY = "zettelkasten note taking"


async def one_run(notes: Path, until_meaning: bool) -> dict[str, float]:
    # The SDK passes only a few variables on unless told: give the model settings, as a client's "env" does.
    params = StdioServerParameters(command=ORGKIT[0], args=[*ORGKIT[1:], "mcp", "--notes", str(notes)],
                                   env=dict(os.environ))
    started = time.perf_counter()
    out: dict[str, float] = {}
    async with Client(params) as client:
        out["initialize"] = time.perf_counter() - started
        await client.list_tools()
        out["tools/list"] = time.perf_counter() - started
        first = await client.call_tool("search", {"query": QUERY})
        out["first search"] = time.perf_counter() - started
        loading = any("still loading" in w for w in json.loads(first.content[0].text)["warnings"])
        out["first search ranked by words only (1 = yes)"] = float(loading)
        while until_meaning and loading:
            await anyio.sleep(0.1)
            found = await client.call_tool("search", {"query": QUERY})
            loading = any("still loading" in w for w in json.loads(found.content[0].text)["warnings"])
        if until_meaning:
            out["first search ranked by meaning"] = time.perf_counter() - started
    return out


def sdk_import() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], check=True)
    return time.perf_counter() - started


def table(title: str, results: list[dict[str, float]]) -> None:
    print(f"| {title} (seconds from spawn, median of {len(results)}) | |")
    print("| --- | ---: |")
    for key in results[0]:
        print(f"| {key} | {statistics.median(r[key] for r in results):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--indexed", type=Path, help="an indexed copy of braindump: also time the first "
                        "search by meaning (a never-indexed one embeds 3,111 passages first: minutes)")
    args = parser.parse_args()
    baseline = statistics.median(sdk_import() for _ in range(args.runs))
    print(f"baseline: importing the MCP SDK in a fresh interpreter: {baseline:.2f} s\n")
    results = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            notes = Path(tmp) / "braindump"
            shutil.copytree(BRAINDUMP, notes)
            results.append(anyio.run(one_run, notes, False))
    table("braindump, never indexed", results)
    if args.indexed:
        table(f"{args.indexed.name}, indexed", [anyio.run(one_run, args.indexed, True) for _ in range(args.runs)])


if __name__ == "__main__":
    main()
