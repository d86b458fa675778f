"""Check the third set's blind annotations against their sources.

Every fragment must occur, after folding runs of whitespace, inside one block of
its source: a paragraph, a heading, or a list item (its marker dropped).  Run
from anywhere: ``python bench/extract_blind/check_adr3.py``; exit status 1 and
one line per problem when a fragment is not found.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "adr3"
ANNOTATIONS = ("adr3_decision_review.json", "adr3_requirements_risks.json")

ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
HEADING = re.compile(r"^\s*#{1,6}\s+")


def fold(text: str) -> str:
    return " ".join(text.split())


def blocks(text: str) -> list[str]:
    """Paragraphs, headings and list items of a markdown text, whitespace folded."""
    out: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            out.append(fold(" ".join(current)))
            current.clear()

    for line in text.splitlines():
        if not line.strip():
            flush()
        elif HEADING.match(line):
            flush()
            out.append(fold(HEADING.sub("", line)))
        elif ITEM.match(line):
            flush()
            current.append(ITEM.sub("", line))
        else:
            current.append(line)
    flush()
    return out


def check(name: str) -> list[str]:
    data = json.loads((HERE / name).read_text(encoding="utf-8"))
    dims = set(data["schema"])
    problems: list[str] = []
    for key, value in data.items():
        if key.startswith("_") or key == "schema":
            continue
        path = SOURCES / key
        if not path.is_file():
            problems.append(f"{name}: no source {key}")
            continue
        parts = blocks(path.read_text(encoding="utf-8"))
        if set(value) != dims:
            problems.append(f"{name}: {key}: dimensions {sorted(value)}")
        for dim, fragments in value.items():
            seen: set[str] = set()
            for fragment in fragments:
                folded = fold(fragment)
                if folded != fragment:
                    problems.append(f"{name}: {key}: {dim}: not folded: {fragment!r}")
                if folded in seen:
                    problems.append(f"{name}: {key}: {dim}: repeated: {fragment!r}")
                seen.add(folded)
                if not any(folded in part for part in parts):
                    problems.append(f"{name}: {key}: {dim}: not in one block: {fragment!r}")
    return problems


def counts(name: str) -> dict[str, int]:
    data = json.loads((HERE / name).read_text(encoding="utf-8"))
    total = {dim: 0 for dim in data["schema"]}
    for key, value in data.items():
        if key.startswith("_") or key == "schema":
            continue
        for dim, fragments in value.items():
            total[dim] += len(fragments)
    return total


def main() -> int:
    problems: list[str] = []
    for name in ANNOTATIONS:
        problems += check(name)
        total = counts(name)
        print(name, total, "points", sum(total.values()))
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
