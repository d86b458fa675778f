"""The enews sections the blind queries were written on: `python sample_enews.py DIR`, DIR the corpus as
`python bench/blind_corpora.py enews DIR` builds it. Prints the sampled sections (file, heading line, heading)
of enews.json (seed 2027, 45 sections) and of enews_fit2.json's in-corpus questions (seed 2028, 25 others):
every heading whose own section (to the next heading) holds 25 words or more, `#+` lines not counted."""
import json
import random
import re
import sys
from pathlib import Path

HEADING = re.compile(r"^(\*+)\s+(.*)$")


def plain_words(lines: list[str]) -> int:
    """The words of a section's lines, `#+` lines not counted."""
    return sum(len(line.split()) for line in lines if line.strip() and not line.lstrip().startswith("#+"))


def sections(root: Path, files: list[Path], words=plain_words, least: int = 25, bare: bool = False) -> list[dict]:
    """Every heading of `files` whose own section (to the next heading) holds `least` words or more (with
    `bare`: none, and no heading under it)."""
    items = []
    for f in files:
        lines = f.read_text(encoding="utf-8", errors="replace").split("\n")
        heads = [i for i, line in enumerate(lines) if HEADING.match(line)]
        for k, i in enumerate(heads):
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            count = words(lines[i + 1:end])
            deeper = end < len(lines) and len(HEADING.match(lines[end]).group(1)) > len(HEADING.match(lines[i]).group(1))
            if (count == 0 and not deeper) if bare else count >= least:
                items.append({"file": f.relative_to(root).as_posix(), "line": i + 1,
                              "heading": HEADING.match(lines[i]).group(2).strip()})
    return items


def two_samples(items: list[dict], first: tuple[int, int], second: tuple[int, int]) -> tuple[list, list]:
    """(seed, size) samples of `items`: the first, then the second among the items the first did not take."""
    one = random.Random(first[0]).sample(items, first[1])
    taken = {(s["file"], s["line"]) for s in one}
    return one, random.Random(second[0]).sample([s for s in items if (s["file"], s["line"]) not in taken], second[1])


if __name__ == "__main__":
    root = Path(sys.argv[1])
    first, second = two_samples(sections(root, sorted(root.glob("*.org"))), (2027, 45), (2028, 25))
    print(json.dumps({"enews": first, "enews_fit2": second}, indent=1))
