"""model show, pull, distill: the embedding model in use, getting it for offline use, and its fast tier."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import declare
from .context import OpContext
from .spec import Op, Param

if TYPE_CHECKING:
    from ..config import Config


def _config(ctx: OpContext) -> "Config":
    """The notes directory's settings, else the environment's and the defaults."""
    from ..config import load

    config = ctx.optional_config()
    if config is None:
        with tempfile.TemporaryDirectory() as empty:
            config = load(Path(empty))
    return config


def _embedder(ctx: OpContext):
    """The configured model."""
    from ..embed import Embedder

    return Embedder.from_config(_config(ctx))


def model_show(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..embed import describe

    return describe(_embedder(ctx))


def model_pull(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..embed import pull

    embedder = _embedder(ctx)
    ctx.warn(f"downloading {embedder.name} into the model cache")
    return {"name": embedder.name, "path": str(pull(embedder))}


def model_distill(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..distill import distill

    progress = None if args["quiet"] else ctx.progress
    return distill(_config(ctx)["model_path"], ctx.path(args["out"]), args["dims"], progress).to_json()


declare(Op("model_show", "The embedding model in use, where it comes from, and whether it loads (never asks "
           "the network).", model_show, cli=("model", "show"), notes=False,
           result="{name, path, fingerprint, loaded, error, dimensions}"))
declare(Op("model_pull", "Download the embedding model into fastembed's cache, with progress on stderr; search "
           "and index then load it offline.", model_pull, cli=("model", "pull"), notes=False, mcp=False,
           result="{name, path}"))
declare(Op("model_distill", "Distil a static (model2vec-format) model from the configured dense ONNX model "
           "(model_path): every vocabulary token through the model, PCA, Zipf weighting. It embeds tens of times "
           "faster; load it with ORGKIT_MODEL=minishlab/potion-base-8M and ORGKIT_MODEL_PATH=OUT.",
           model_distill, cli=("model", "distill"), notes=False, mcp=False, writes=True,
           params=(Param("out", "string", "The new model's directory (new or empty).", required=True,
                         metavar="DIR"),
                   Param("dims", "integer", "Dimensions kept by PCA (at most the model's own).", default=256,
                         minimum=2, maximum=4096),
                   Param("quiet", "boolean", "No progress on stderr.")),
           result="{out, source, tokens, dims, seconds, model}"))
