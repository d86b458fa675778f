"""The litnotes sections the blind queries are written on: `python sample_litnotes.py DIR`, DIR the corpus as
`python bench/blind_corpora.py litnotes DIR` builds it. Every heading whose own section (to the next heading)
holds 25 words or more of prose (`#+` lines and src/example blocks not counted, as for elpadocs); litnotes.json:
seed 2034, 45 sections; litnotes_fit2.json's questions: seed 2035, 25 others."""
import json
import sys
from pathlib import Path

from sample_elpadocs import prose_words
from sample_enews import sections, two_samples

if __name__ == "__main__":
    root = Path(sys.argv[1])
    items = sections(root, sorted(root.rglob("*.org")), prose_words)
    first, second = two_samples(items, (2034, 45), (2035, 25))
    print(len(items), file=sys.stderr)
    print(json.dumps({"litnotes": first, "litnotes_fit2": second}, indent=1))
