"""The offline extractor against hand annotations of ADRs: precision, recall, coverage, time.

    python bench/bench_extract.py [--embed] [--schema NAME|FILE]

Two annotations: bench/extract_gold.json (eight ADRs, the development set the
extractor was tuned on) and bench/extract_heldout.json (three more, held out).
The corpus is ../shared/corpora/adr, or the directory $ORGKIT_ADR_CORPUS names.

Two ways of matching a predicted quote with a gold fragment of the same dimension:
- lenient: their spans overlap by at least half of the shorter one (a whole
  sentence around a short fragment matches it; two quotes may match one fragment);
- strict: as lenient, and the overlap is also at least a third of the quote (a
  long quote that only touches the point does not count), and quotes and
  fragments pair one to one (a second quote of the same point is a miss).
Precision: matched predictions / predictions (annotated sources only); recall:
matched fragments / fragments; coverage: the (source, dimension) pairs with
gold fragments that got at least one quote.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = Path(os.environ.get("ORGKIT_ADR_CORPUS", REPO.parent / "shared" / "corpora" / "adr"))
MODEL = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-int8"
SETS = {"development": "extract_gold.json", "held-out": "extract_heldout.json"}

Span = tuple[int, int]


def _overlap(a: Span, b: Span) -> int:
    return min(a[1], b[1]) - max(a[0], b[0])


def lenient(pred: Span, gold: Span) -> bool:
    return _overlap(pred, gold) >= 0.5 * min(pred[1] - pred[0], gold[1] - gold[0])


def strict(pred: Span, gold: Span) -> bool:
    return lenient(pred, gold) and _overlap(pred, gold) * 3 >= pred[1] - pred[0]


def _pairs(preds: list[Span], spans: list[Span], strict_mode: bool) -> tuple[int, int]:
    """(matched predictions, matched fragments)."""
    if not strict_mode:
        return (sum(any(lenient(p, g) for g in spans) for p in preds),
                sum(any(lenient(p, g) for p in preds) for g in spans))
    used: set[int] = set()
    for p in preds:
        j = next((j for j, g in enumerate(spans) if j not in used and strict(p, g)), None)
        if j is not None:
            used.add(j)
    return len(used), len(used)


def score(predictions: dict[str, list[tuple[str, int, int]]], gold: dict, strict_mode: bool = False) -> dict:
    """Micro precision/recall per dimension and overall, and coverage overall."""
    from orgkit.extract.anchor import find_quote

    rows: dict[str, list[int]] = {}  # dim -> [matched predictions, predictions, matched gold, gold]
    covered = wanted = 0
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
            mp, mg = _pairs(preds, spans, strict_mode)
            row = rows.setdefault(dim, [0, 0, 0, 0])
            row[0] += mp
            row[1] += len(preds)
            row[2] += mg
            row[3] += len(spans)
            if spans:
                wanted += 1
                covered += bool(preds)
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    out = {}
    for dim, (mp, p, mg, g) in list(rows.items()) + [("all", total)]:
        prec, rec = (mp / p if p else 1.0), (mg / g if g else 1.0)
        out[dim] = {"precision": round(prec, 3), "recall": round(rec, 3),
                    "f1": round(2 * prec * rec / (prec + rec), 3) if prec + rec else 0.0,
                    "predicted": p, "gold": g}
    out["all"]["coverage"] = round(covered / wanted, 3) if wanted else 1.0
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
    started = time.perf_counter()
    predictions = {}
    for path in sorted(CORPUS.glob("[0-9]*.md")):
        text = path.read_text(encoding="utf-8")
        picks = extract_offline(segment(text), schema, embed)
        assert all(text[p.start:p.end] == p.quote for p in picks)
        predictions[path.name] = [(p.dimension, p.start, p.end) for p in picks]
    elapsed = time.perf_counter() - started
    for label, file in SETS.items():
        gold = json.loads((REPO / "bench" / file).read_text(encoding="utf-8"))
        for mode in ("lenient", "strict"):
            report = score(predictions, gold, strict_mode=mode == "strict")
            print(f"\n{label}, {mode} (coverage {report['all']['coverage']:.3f})")
            print(f"{'dimension':<14}{'precision':>10}{'recall':>8}{'f1':>7}{'pred':>6}{'gold':>6}")
            for dim, r in report.items():
                print(f"{dim:<14}{r['precision']:>10.3f}{r['recall']:>8.3f}{r['f1']:>7.3f}"
                      f"{r['predicted']:>6}{r['gold']:>6}")
    print(f"\n15 ADRs extracted in {elapsed:.2f} s ({'embeddings' if embed else 'BM25'}), "
          f"{sum(len(p) for p in predictions.values())} quotes")


if __name__ == "__main__":
    main()
