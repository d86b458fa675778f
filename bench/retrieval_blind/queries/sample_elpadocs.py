"""The elpadocs sections the blind queries are written on: `python sample_elpadocs.py DIR`, DIR the corpus as
`python bench/blind_corpora.py elpadocs DIR DEBS` builds it. Every heading whose own section (to the next heading)
holds 25 words or more of prose (`#+` lines and src/example blocks not counted); elpadocs.json: seed 2032,
45 sections; elpadocs_fit2.json's questions: seed 2033, 25 others."""
import json
import random
import re
import sys
from pathlib import Path

HEADING = re.compile(r"^(\*+)\s+(.*)$")
BLOCK = re.compile(r"^\s*#\+begin_", re.I)
END = re.compile(r"^\s*#\+end_", re.I)


def prose_words(lines):
    words, inside = 0, False
    for line in lines:
        if BLOCK.match(line):
            inside = True
        elif END.match(line):
            inside = False
        elif not inside and line.strip() and not line.lstrip().startswith("#+"):
            words += len(line.split())
    return words


def eligible(root: Path) -> list[dict]:
    items = []
    for f in sorted(root.rglob("*.org")):
        lines = f.read_text(encoding="utf-8", errors="replace").split("\n")
        heads = [i for i, line in enumerate(lines) if HEADING.match(line)]
        for k, i in enumerate(heads):
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            if prose_words(lines[i + 1:end]) >= 25:
                items.append({"file": str(f.relative_to(root)), "line": i + 1,
                              "heading": HEADING.match(lines[i]).group(2).strip()})
    return items


if __name__ == "__main__":
    items = eligible(Path(sys.argv[1]))
    first = random.Random(2032).sample(items, 45)
    taken = {(s["file"], s["line"]) for s in first}
    second = random.Random(2033).sample([s for s in items if (s["file"], s["line"]) not in taken], 25)
    print(len(items), file=sys.stderr)
    print(json.dumps({"elpadocs": first, "elpadocs_fit2": second}, indent=1))
