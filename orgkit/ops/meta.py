"""ops, config: what orgkit offers and how it is configured."""

from __future__ import annotations

from typing import Any

from . import declare, offered
from .context import OpContext
from .spec import Op


def ops(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    """The registry needs no notes directory: without one, capabilities follow the environment."""
    return [op.describe() for op in offered(ctx.optional_config()).values()]


def config(ctx: OpContext, args: dict[str, Any]) -> dict:
    return ctx.config.to_json()


declare(Op("ops", "The operation registry: every operation with its parameters' JSON Schema.", ops,
           result="[{name, description, command, writes, result, aliases, positional, parameters}]",
           notes=False, mcp=False))
declare(Op("config", "Every resolved setting with where it came from (flag, env, file, default).", config,
           result="{KEY: {value, origin}}", role="admin"))
