"""doctor: check ripgrep, the model, the index and the notes."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .shown import for_caller
from .spec import Op, Param


def doctor(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..doctor import Setup, diagnose

    report = diagnose(Setup(ctx.root, ctx.config.state_dir, ctx.embedder, ctx.config["database.url"]))
    ctx.failed = not report.ok
    return for_caller(ctx, report.to_json())


declare(Op("doctor", "Check ripgrep, the model, the index and the notes; fails when something is broken. "
           "Prints a summary line first, then the facts and the first findings of each level. On the team server "
           "it needs an admin; a caller other than the user or an admin sees no absolute paths or database hosts.",
           doctor,
           params=(Param("verbose", "boolean", "List every finding (the JSON result always has them all)."),),
           result="{ok, facts, findings: [{level, check, message, file, line}]}", role="admin"))
