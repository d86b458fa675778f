"""The librarian's link proposals against the links the notes' author made.

braindump is copied to a temporary directory and the chosen notes
(`bench/librarian_set.json`: a development and a held-out part) are removed
from the copy. Each removed note is then deposited again as a finding (its
title, and its text with links reduced to their descriptions), the librarian
runs on it, and its link proposals are compared, by target file, with the
files the note's own `id:` links pointed to (targets that were removed too do
not count). Off-topic findings (things braindump does not cover) must get no
link proposal at all. Each deposit's note is removed before the next one, so
the findings do not see each other.

    python bench/bench_librarian.py [--part development|held_out|all] [--model] [--corpus DIR]

Without `--model` the librarian has no embedding model (words only, the
offline path); with it, ORGKIT_MODEL / ORGKIT_MODEL_PATH must name one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from orgkit import config  # noqa: E402
from orgkit.memory import librarian  # noqa: E402
from orgkit.memory.deposit import deposit  # noqa: E402
from orgkit.memory.store import Store  # noqa: E402

BRAINDUMP = HERE.parent.parent / "shared" / "corpora" / "braindump"
ID_LINE = re.compile(r"^\s*:ID:\s+(\S+)", re.M)
ID_LINK = re.compile(r"\[\[id:([^\]]+)\](?:\[([^\]]*)\])?\]")
ANY_LINK = re.compile(r"\[\[[^\]]+\](?:\[([^\]]*)\])?\]")


def finding(text: str) -> tuple[str, str]:
    """A note's title, and its text as a finding: no drawers or keywords, links as their descriptions."""
    title = re.search(r"^#\+title:\s*(.+)$", text, re.M | re.I).group(1).strip()
    lines, inside = [], False
    for line in text.split("\n"):
        s = line.strip()
        if s == ":PROPERTIES:":
            inside = True
        elif inside and s == ":END:":
            inside = False
        elif not inside and not s.startswith("#+"):
            lines.append(line)
    body = ANY_LINK.sub(lambda m: m.group(1) or "", "\n".join(lines))
    return title, body.strip()


def id_files(root: Path) -> dict[str, str]:
    out = {}
    for f in sorted(root.rglob("*.org")):
        for m in ID_LINE.finditer(f.read_text(encoding="utf-8")):
            out[m.group(1)] = f.relative_to(root).as_posix()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("development", "held_out", "all"), default="development")
    ap.add_argument("--model", action="store_true", help="use the configured embedding model")
    ap.add_argument("--corpus", type=Path, default=BRAINDUMP, help="braindump (default ../shared/corpora/braindump)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    chosen = json.loads((HERE / "librarian_set.json").read_text(encoding="utf-8"))
    parts = ["development", "held_out"] if args.part == "all" else [args.part]
    removed = chosen["development"] + chosen["held_out"]
    corpus = args.corpus
    where = id_files(corpus)
    if not args.model:
        for key in ("ORGKIT_MODEL", "ORGKIT_MODEL_PATH"):
            os.environ.pop(key, None)
    for key in [k for k in os.environ if k.startswith("ORGKIT_LLM")]:
        del os.environ[key]
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "notes"
        shutil.copytree(corpus, notes)
        for rel in removed:
            (notes / rel).unlink()
        cfg = config.load(notes)
        embedder = None
        if args.model:
            from orgkit.embed import Embedder

            embedder = Embedder.from_config(cfg)
        tp = fp = fn = 0
        off_links = 0
        started = time.process_time()
        with Store(cfg) as store:
            def links_for(title: str, body: str) -> list[str]:
                dep = deposit(store, title=title, body=body, actor="bench")
                librarian.run(store, dep.id, embedder=embedder)
                dests = [json.loads(r["payload"])["dest"] for r in store.all(
                    "SELECT payload FROM proposals WHERE deposit = ? AND kind = 'link' AND status = 'pending'",
                    (dep.id,))]
                (notes / dep.path).unlink()
                return dests

            for part in parts:
                for rel in chosen[part]:
                    text = (corpus / rel).read_text(encoding="utf-8")
                    gold = {where[d] for d, _ in ID_LINK.findall(text) if d in where} - set(removed) - {rel}
                    if not gold:
                        continue
                    got = {where.get(d, d) for d in links_for(*finding(text))}
                    tp += len(got & gold)
                    fp += len(got - gold)
                    fn += len(gold - got)
                    if args.verbose:
                        print(f"{rel}: +{sorted(got & gold)} -{sorted(got - gold)} missed {sorted(gold - got)}")
            for item in chosen["off_topic"]:
                got = links_for(item["title"], item["body"])
                off_links += len(got)
                if args.verbose and got:
                    print(f"off-topic {item['title']!r}: {[where.get(d, d) for d in got]}")
        cpu = time.process_time() - started
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    print(json.dumps({"part": args.part, "model": bool(args.model), "precision": round(precision, 3),
                      "recall": round(recall, 3), "proposed": tp + fp, "author_links": tp + fn,
                      "off_topic_links": off_links, "off_topic_findings": len(chosen["off_topic"]),
                      "cpu_s": round(cpu, 1)}))


if __name__ == "__main__":
    main()
