"""The local embedding model extraction ranks with, shared by runs and the scorer's fit."""

from __future__ import annotations

import threading
from typing import Callable

from ..config import Config


def local_embedder(config: Config, notices: list[str]) -> Callable | None:
    """The local embedding model for ranking, when one is configured by path; else BM25."""
    if not config["model_path"]:
        return None
    from ..embed import Embedder, ModelUnavailable as EmbedUnavailable

    embedder = Embedder.from_config(config)
    try:
        embedder.load()
    except EmbedUnavailable as exc:
        notices.append(f"{exc}; ranking with BM25")
        return None
    lock = threading.Lock()

    def embed(texts: list[str]):
        with lock:
            return embedder.embed(texts)
    return embed
