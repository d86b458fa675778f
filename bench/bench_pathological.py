"""Pathological inputs, each timed at its stated size and at twice and four times it.

    python bench/bench_pathological.py [--scales 1,2,4] [--only NAME] [--corpus-mb 50]

Each case is one file (or one notes directory) built in a temporary directory,
and one stage of orgkit run over it in this process: parsing (`parse_org`),
passage building (`chunk_file`), a lexical index (`orgkit index --no-embed`
through the library) or the sparse scan. Linear code about doubles its time
from one scale to the next; the figures and the baseline are in bench/README.md.
`--corpus-mb` also builds a deep-outline corpus of that many MB, indexes it
without vectors and prints the index's size against the corpus's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

from orgkit.index.chunks import chunk_file
from orgkit.index.store import Index
from orgkit.index.update import update
from orgkit.org import parse_org
from orgkit.retrieve.scan import scan


def _uuid(k: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, str(k)))


def unclosed_src(n: int) -> str:
    return "* H\n" + "#+begin_src python\nx = 1 [[id:a][b]]\n" * (n // 2)


def unclosed_latex(n: int) -> str:
    return "* H\n" + "a \\( b [[id:x][y]]\n" * n


def unclosed_links(n: int) -> str:
    return "* H\n" + "see [[a][b and more\n" * n


def headings_with_ids(n: int) -> str:
    """Headings with IDs, each followed by one without (its text outside every node)."""
    return "".join(f"* Heading {k}\n:PROPERTIES:\n:ID: {_uuid(k)}\n:END:\ntext {k}\n* Loose {k}\nmore\n"
                   for k in range(n))


def half_with_ids(n: int) -> str:
    out = []
    for k in range(n):
        stars = "*" * (1 + k % 3)
        drawer = f":PROPERTIES:\n:ID: {_uuid(k)}\n:END:\n" if k % 2 else ""
        out.append(f"{stars} Heading {k}\n{drawer}body {k}\n")
    return "".join(out)


def deep_outline(n: int) -> str:
    """Each heading one level below the last; every 100th says "marker"."""
    return "".join(f"{'*' * (k + 1)} Level {k}{' marker' if k % 100 == 0 else ''}\n" for k in range(n))


def _parse(text: str, work: Path) -> Callable[[], object]:
    return lambda: parse_org(text, "x.org")


def _chunks(text: str, work: Path) -> Callable[[], object]:
    parsed = parse_org(text, "x.org")
    return lambda: chunk_file(parsed, text)


def _index(text: str, work: Path) -> Callable[[], object]:
    (work / "x.org").write_text(text, encoding="utf-8")
    return lambda: update(Index.at(work, work / ".orgkit"))


def _scan(text: str, work: Path) -> Callable[[], object]:
    (work / "x.org").write_text(text, encoding="utf-8")
    return lambda: scan(work, "marker", limit=None)


# name: (text at size n, base size, stage)
CASES: dict[str, tuple[Callable[[int], str], int, Callable]] = {
    "parse: unclosed #+begin_src lines": (unclosed_src, 20_000, _parse),
    "parse: unclosed \\( lines": (unclosed_latex, 20_000, _parse),
    "parse: unclosed [[a][b lines": (unclosed_links, 20_000, _parse),
    "passages: headings with IDs": (headings_with_ids, 12_500, _chunks),
    "index: headings, half with IDs": (half_with_ids, 100_000, _index),
    "scan: deep outline": (deep_outline, 10_000, _scan),
}


def time_case(name: str, scale: int) -> float:
    make, base, stage = CASES[name]
    # A deep outline's size grows with the square of its depth: scale its bytes, not its depth.
    size = round(base * scale ** 0.5) if make is deep_outline else base * scale
    with tempfile.TemporaryDirectory() as tmp:
        run = stage(make(size), Path(tmp))
        started = time.perf_counter()
        run()
        return time.perf_counter() - started


def deep_corpus(dest: Path, megabytes: int) -> int:
    """Files of nested outlines (depth 40, every heading a node, a paragraph under each)."""
    dest.mkdir(parents=True)
    size, k, f = 0, 0, 0
    paragraph = "Some words about this part of the outline, as a note would have them. " * 3
    while size < megabytes * 1_000_000:
        parts = [f":PROPERTIES:\n:ID: {_uuid(-f - 1)}\n:END:\n#+title: File {f}\n"]
        for depth in range(40):
            k += 1
            parts.append(f"{'*' * (depth + 1)} Section {k} at depth {depth}\n"
                         f":PROPERTIES:\n:ID: {_uuid(k)}\n:END:\n{paragraph}\n")
        text = "".join(parts)
        (dest / f"f{f:05d}.org").write_text(text, encoding="utf-8")
        size += len(text.encode())
        f += 1
    return size


def bench_corpus(megabytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "notes"
        size = deep_corpus(notes, megabytes)
        started = time.perf_counter()
        update(Index.at(notes, notes / ".orgkit"))
        seconds = time.perf_counter() - started
        state = sum(p.stat().st_size for p in (notes / ".orgkit").rglob("*") if p.is_file())
        print(f"deep-outline corpus: {size / 1e6:.1f} MB, index {state / 1e6:.1f} MB "
              f"({state / size:.2f}x), {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", default="1,2,4")
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    parser.add_argument("--corpus-mb", type=int, default=0)
    args = parser.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    print(f"{'case':38} {'size':>8} " + " ".join(f"{'x' + str(s):>8}" for s in scales))
    for name, (_, base, _) in CASES.items():
        if args.only and args.only not in name:
            continue
        times = [time_case(name, s) for s in scales]
        print(f"{name:38} {base:>8} " + " ".join(f"{t:>7.2f}s" for t in times), flush=True)
    if args.corpus_mb:
        bench_corpus(args.corpus_mb)


if __name__ == "__main__":
    sys.exit(main())
