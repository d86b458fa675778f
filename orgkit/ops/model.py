"""model show, model pull: the embedding model in use, and getting it for offline use."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from . import declare
from .context import OpContext
from .spec import Op


def _embedder(ctx: OpContext):
    """The configured model: the notes directory's settings, else the environment's and the defaults."""
    from ..config import load
    from ..embed import Embedder

    config = ctx.optional_config()
    if config is None:
        with tempfile.TemporaryDirectory() as empty:
            config = load(Path(empty))
    return Embedder.from_config(config)


def model_show(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..embed import describe

    return describe(_embedder(ctx))


def model_pull(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..embed import pull

    embedder = _embedder(ctx)
    ctx.warn(f"downloading {embedder.name} into the model cache")
    return {"name": embedder.name, "path": str(pull(embedder))}


declare(Op("model_show", "The embedding model in use, where it comes from, and whether it loads (never asks "
           "the network).", model_show, cli=("model", "show"), notes=False,
           result="{name, path, fingerprint, loaded, error, dimensions}"))
declare(Op("model_pull", "Download the embedding model into fastembed's cache, with progress on stderr; search "
           "and index then load it offline.", model_pull, cli=("model", "pull"), notes=False, mcp=False,
           result="{name, path}"))
