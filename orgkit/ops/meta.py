"""ops, config: what orgkit offers and how it is configured."""

from __future__ import annotations

from typing import Any

from . import declare, offered
from .context import OpContext
from .shown import for_caller
from .spec import Op


def ops(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    """The registry needs no notes directory: without one, capabilities follow the environment."""
    return [op.describe(ctx.surface) for op in offered(ctx.optional_config()).values()]


def config(ctx: OpContext, args: dict[str, Any]) -> dict:
    """Shown even when a file is wrong (the error sends the user here): each problem is a warning."""
    loaded = ctx.loaded_config()
    for problem in loaded.problems:
        ctx.warn(problem)
    return for_caller(ctx, loaded.to_json())


declare(Op("ops", "The operation registry: every operation with its parameters' JSON Schema.", ops,
           result="[{name, description, command, writes, result, aliases, positional, parameters, returns}]",
           notes=False, mcp=False, role="reader"))
declare(Op("config", "Every resolved setting with its kind (notes: a notes folder may set it; trust: only flags, "
           "the environment and the user config file; inside: the notes may set it inside the notes dir) and where "
           "it came from (flag, env, user file, notes file, default).", config,
           result="{KEY: {value, origin, kind, refused?}}", config_problems_ok=True,
           role="admin"))
