"""What the model path sends per ADR: requests and prompt size, counted by a loopback server.

    PYTHONPATH=. python bench/bench_model_prompts.py [ADR.md ...]

Runs `orgkit extract --schema adr` over each ADR of ../shared/corpora/adr (or
$ORGKIT_ADR_CORPUS) against tests/llm_server.py, which records every request.
The extractor's reply quotes the source's first three sentences, so the auditor
has claims to judge. Prints, per ADR: requests per role, the characters of every
message received and tokens estimated as characters / 4 (orgkit's estimate; a
real tokenizer counts fewer for English prose).
No model runs, so this measures what a model would have to read, not its time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
CORPUS = Path(os.environ.get("ORGKIT_ADR_CORPUS", REPO.parent / "shared" / "corpora" / "adr"))


def respond(body: dict) -> dict:
    last = body["messages"][-1]["content"]
    if "verdicts" in last:
        return {"verdicts": [{"item": n, "supported": True} for n in range(1, last.count("\n   quote:") + 1)]}
    text = last.split("<<<\n", 1)[1]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if len(s.split()) > 4][:3]
    return {"claims": [{"dimension": "problem", "claim": s, "quote": s} for s in sentences]}


def main() -> None:
    from llm_server import LLMServer

    names = sys.argv[1:] or sorted(p.name for p in CORPUS.glob("[0-9]*.md"))
    print(f"{'ADR':<46}{'requests':>9}{'extractor chars':>16}{'~tokens':>8}{'auditor chars':>14}{'~tokens':>8}")
    totals = [0, 0, 0]
    for name in names:
        server = LLMServer().start()
        server.respond = respond
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "ORGKIT_EXTRACTION": "1", "ORGKIT_LLM_ENDPOINT": server.url}
            done = subprocess.run([sys.executable, "-c", "from orgkit.cli import main; main()", "extract", str(CORPUS / name), "--schema",
                                   "adr", "--notes", tmp, "--json"], env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        auditor = lambda body: "verdicts" in body["messages"][-1]["content"]
        ex, au = server.prompt_chars(lambda b: not auditor(b)), server.prompt_chars(auditor)
        print(f"{name:<46}{len(server.requests):>9}{ex:>16}{ex // 4:>8}{au:>14}{au // 4:>8}")
        totals = [totals[0] + len(server.requests), totals[1] + ex, totals[2] + au]
        server.stop()
    n = len(names)
    print(f"{'mean per ADR':<46}{totals[0] / n:>9.1f}{totals[1] / n:>16.0f}{totals[1] / n / 4:>8.0f}"
          f"{totals[2] / n:>14.0f}{totals[2] / n / 4:>8.0f}")


if __name__ == "__main__":
    main()
