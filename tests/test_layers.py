"""What holds the layers together where code cannot import it: values written twice on purpose."""

import re

from orgkit.storage.schema import MIGRATIONS
from orgkit.storage.terms import TOKENIZE


def test_the_index_tokenizes_passages_as_storage_ranks_words():
    """storage/terms.py tokenizes for PostgreSQL's BM25 and extraction's ranking; the index's
    latest migration declares the FTS5 tokenizer, and the two must be one."""
    declared = re.findall(r"tokenize = '([^']+)'", "".join(m.sqlite or "" for m in MIGRATIONS))
    assert declared and declared[-1] == TOKENIZE
