"""The litnotes sections the blind queries are written on: `python sample_litnotes.py DIR`, DIR the corpus as
`python bench/blind_corpora.py litnotes DIR` builds it. Every heading whose own section (to the next heading)
holds 25 words or more of prose (`#+` lines and src/example blocks not counted, as for elpadocs); litnotes.json:
seed 2034, 45 sections; litnotes_fit2.json's questions: seed 2035, 25 others."""
import sys
from pathlib import Path

from sample_elpadocs import print_samples

if __name__ == "__main__":
    print_samples(Path(sys.argv[1]), ("litnotes", 2034, 45), ("litnotes_fit2", 2035, 25))
