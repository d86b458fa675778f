"""A tiny static embedding model (model2vec format) that fastembed loads for real.

A word-level tokenizer over a small vocabulary and a random vector per word: a
text's embedding is the mean of its words' vectors, so texts sharing words are
close. It loads through fastembed's own static-model code path, as
`TextEmbedding("minishlab/potion-base-8M", specific_model_path=DIR)`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

MODEL_NAME = "minishlab/potion-base-8M"

BASE_WORDS = """
a about after all also an and any are as at be because been but by can cat cats could data
day dog dogs each even first for from garden get had has have he her his how i if in into
is it its just kitten know learning like make many more most much my neural network new no
not note notes now of on one only or other our out over people plant plants python rust
said see she so some such than that the their them then there these they this time to tomato
tomatoes two up use very was water way we well were what when which who will with work would
year you your parent child section paragraph search index model vector memory emacs org
meaning words feline canine pet pets garden soil seed seeds compost programming language
code compiler borrow checker ownership memory-safety safety
""".split()


def build_tiny_model(dest: Path, words: Iterable[str] = (), *, dim: int = 24, seed: int = 0) -> Path:
    """Write `model.safetensors` and `tokenizer.json` into `dest`; returns `dest`."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab: dict[str, int] = {"[UNK]": 0}
    for word in [*BASE_WORDS, *words]:
        for token in re.findall(r"\w+|[^\w\s]", word.lower()):
            vocab.setdefault(token, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    dest.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(dest / "tokenizer.json"))
    matrix = np.random.default_rng(seed).standard_normal((len(vocab), dim)).astype(np.float32)
    save_file({"embeddings": matrix}, str(dest / "model.safetensors"))
    return dest
