"""The elpadocs sections the blind queries are written on: `python sample_elpadocs.py DIR`, DIR the corpus as
`python bench/blind_corpora.py elpadocs DIR DEBS` builds it. Every heading whose own section (to the next heading)
holds 25 words or more of prose (`#+` lines and src/example blocks not counted); elpadocs.json: seed 2032,
45 sections; elpadocs_fit2.json's questions: seed 2033, 25 others."""
import json
import re
import sys
from pathlib import Path

from sample_enews import sections, two_samples

BLOCK = re.compile(r"^\s*#\+begin_", re.I)
END = re.compile(r"^\s*#\+end_", re.I)


def prose_words(lines: list[str]) -> int:
    """The words of a section's lines outside blocks, `#+` lines not counted."""
    words, inside = 0, False
    for line in lines:
        if BLOCK.match(line):
            inside = True
        elif END.match(line):
            inside = False
        elif not inside and line.strip() and not line.lstrip().startswith("#+"):
            words += len(line.split())
    return words


if __name__ == "__main__":
    root = Path(sys.argv[1])
    items = sections(root, sorted(root.rglob("*.org")), prose_words)
    first, second = two_samples(items, (2032, 45), (2033, 25))
    print(len(items), file=sys.stderr)
    print(json.dumps({"elpadocs": first, "elpadocs_fit2": second}, indent=1))
