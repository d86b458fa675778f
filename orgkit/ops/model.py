"""model show, pull, distill: the embedding model in use, getting it for offline use, and its fast tier."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .spec import Op, Param


def _setting(ctx: OpContext, key: str) -> Any:
    """A setting of the notes directory, else (with no notes directory) of the environment or default."""
    from ..config import without_notes

    config = ctx.optional_config()
    return config[key] if config is not None else without_notes(key)


def _embedder(ctx: OpContext):
    """The configured model (kept work files only where a state dir is known)."""
    from ..config import DEFAULT_MODEL, model_cache
    from ..embed import Embedder

    config = ctx.optional_config()
    if config is not None:
        return Embedder.from_config(config)
    return Embedder(_setting(ctx, "model") or DEFAULT_MODEL, _setting(ctx, "model_path"), _setting(ctx, "state_dir"),
                    model_cache())


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
    return distill(_setting(ctx, "model_path"), ctx.path(args["out"]), args["dims"], progress).to_json()


declare(Op("model_show", "The embedding model in use, where it comes from, and whether it loads (never asks "
           "the network).", model_show, cli=("model", "show"), notes=False,
           result="{name, path, fingerprint, loaded, error, dimensions}", role="reader"))
declare(Op("model_pull", "Download the embedding model into fastembed's cache, with progress on stderr; search "
           "and index then load it offline.", model_pull, cli=("model", "pull"), notes=False, mcp=False,
           result="{name, path}", role="admin"))
declare(Op("model_distill", "Distil a static (model2vec-format) model from the configured dense ONNX model "
           "(model_path): every vocabulary token through the model, PCA, Zipf weighting. It embeds tens of times "
           "faster; load it with ORGKIT_MODEL=minishlab/potion-base-8M and ORGKIT_MODEL_PATH=OUT.",
           model_distill, cli=("model", "distill"), notes=False, mcp=False, writes=True,
           params=(Param("out", "path", "The new model's directory (new or empty).", required=True,
                         metavar="DIR"),
                   Param("dims", "integer", "Dimensions kept by PCA (at most the model's own).", default=256,
                         minimum=2, maximum=4096),
                   Param("quiet", "boolean", "No progress on stderr.")),
           result="{out, source, tokens, dims, seconds, model}", role="admin"))
