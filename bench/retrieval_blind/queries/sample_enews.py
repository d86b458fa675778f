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


def eligible(root: Path) -> list[dict]:
    items = []
    for f in sorted(root.glob("*.org")):
        lines = f.read_text(encoding="utf-8", errors="replace").split("\n")
        heads = [i for i, line in enumerate(lines) if HEADING.match(line)]
        for k, i in enumerate(heads):
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            body = [line for line in lines[i + 1:end] if line.strip() and not line.lstrip().startswith("#+")]
            if sum(len(line.split()) for line in body) >= 25:
                items.append({"file": f.name, "line": i + 1, "heading": HEADING.match(lines[i]).group(2).strip()})
    return items


if __name__ == "__main__":
    items = eligible(Path(sys.argv[1]))
    first = random.Random(2027).sample(items, 45)
    taken = {(s["file"], s["line"]) for s in first}
    second = random.Random(2028).sample([s for s in items if (s["file"], s["line"]) not in taken], 25)
    print(json.dumps({"enews": first, "enews_fit2": second}, indent=1))
