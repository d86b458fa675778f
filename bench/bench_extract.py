"""The offline extractor against a hand annotation of eight ADRs: precision, recall, time.

    python bench/bench_extract.py [--embed] [--schema NAME|FILE]

Gold fragments are in bench/extract_gold.json. A predicted quote matches a gold
fragment of the same dimension when their spans overlap by at least half of the
shorter one. Precision: matched predictions / predictions (annotated sources
only); recall: matched fragments / fragments. Also times the whole run over all
fifteen ADRs (`--embed` ranks with the local MiniLM model instead of BM25).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = REPO.parent / "shared" / "corpora" / "adr"
MODEL = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-int8"


def score(predictions: dict[str, list[tuple[str, int, int]]], gold: dict) -> dict:
    """Micro precision/recall per dimension and overall."""
    from orgkit.extract.anchor import find_quote

    rows: dict[str, list[int]] = {}  # dim -> [matched predictions, predictions, matched gold, gold]
    for name, dims in gold.items():
        if name.startswith("_"):
            continue
        text = (CORPUS / name).read_text(encoding="utf-8")
        for dim, fragments in dims.items():
            spans = []
            for fragment in fragments:
                span = find_quote(text, fragment)
                assert span, f"{name}: gold fragment not found: {fragment!r}"
                spans.append(span)
            preds = [(s, e) for d, s, e in predictions.get(name, []) if d == dim]
            hit = lambda a, b: min(a[1], b[1]) - max(a[0], b[0]) >= 0.5 * min(a[1] - a[0], b[1] - b[0])
            row = rows.setdefault(dim, [0, 0, 0, 0])
            row[0] += sum(any(hit(p, g) for g in spans) for p in preds)
            row[1] += len(preds)
            row[2] += sum(any(hit(p, g) for p in preds) for g in spans)
            row[3] += len(spans)
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    out = {}
    for dim, (mp, p, mg, g) in list(rows.items()) + [("all", total)]:
        prec, rec = (mp / p if p else 1.0), (mg / g if g else 1.0)
        out[dim] = {"precision": round(prec, 3), "recall": round(rec, 3),
                    "f1": round(2 * prec * rec / (prec + rec), 3) if prec + rec else 0.0,
                    "predicted": p, "gold": g}
    return out


def main() -> None:
    from orgkit.extract.offline import extract_offline
    from orgkit.extract.schema import resolve_schema
    from orgkit.extract.units import segment

    embed = None
    if "--embed" in sys.argv:
        from orgkit.embed import Embedder

        embed = Embedder("sentence-transformers/all-MiniLM-L6-v2", MODEL).embed
    schema = resolve_schema(REPO, sys.argv[sys.argv.index("--schema") + 1] if "--schema" in sys.argv else "adr")
    gold = json.loads((REPO / "bench" / "extract_gold.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    predictions = {}
    for path in sorted(CORPUS.glob("[0-9]*.md")):
        text = path.read_text(encoding="utf-8")
        picks = extract_offline(segment(text), schema, embed)
        assert all(text[p.start:p.end] == p.quote for p in picks)
        predictions[path.name] = [(p.dimension, p.start, p.end) for p in picks]
    elapsed = time.perf_counter() - started
    report = score(predictions, gold)
    print(f"{'dimension':<14}{'precision':>10}{'recall':>8}{'f1':>7}{'pred':>6}{'gold':>6}")
    for dim, r in report.items():
        print(f"{dim:<14}{r['precision']:>10.3f}{r['recall']:>8.3f}{r['f1']:>7.3f}{r['predicted']:>6}{r['gold']:>6}")
    print(f"15 ADRs extracted in {elapsed:.2f} s ({'embeddings' if embed else 'BM25'})")


if __name__ == "__main__":
    main()
