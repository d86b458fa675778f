"""evolve and guidance: corrections distilled into the guidance file, and its slices."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .spec import Op, Param


def evolve(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..extract.corrections import claim_dimensions
    from ..feedback.evolve import evolve as run

    from ..extract.learn import refit_all

    result = run(ctx.config, claim_dimensions(ctx.config), ctx.progress)
    if result.model_note:
        ctx.warn(result.model_note)
    for message in result.warnings:
        ctx.warn(message)
    return result.to_json() | {"fits": refit_all(ctx.config)}


def guidance(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..feedback.guidance import guidance_slices
    from ..feedback.verdicts import verdict_counts

    return guidance_slices(ctx.config, args["extractor"], args["node_type"]) | {"verdicts": verdict_counts(ctx.config)}


declare(Op("evolve", "Distil the recorded corrections of generated notes into the guidance file "
                     "(one bullet per cluster of at least feedback.min_events corrections), and refit the offline "
                     "extractor's scorer of every schema with verdicts.", evolve,
           result="{guidance, events, written, clusters: [{extractor, node_type, field, source, events, hash, "
                  "status, bullet, by, pattern}], dropped, model_calls, model_note, warnings, fits: [{schema, digest, "
                  "verdicts, documents, threshold, caps}]}",
           writes=True, progress=True, role="admin"))
declare(Op("guidance", "The guidance file and its bullets, by model role and node type.", guidance,
           params=(Param("extractor", "string", "Only this extractor (model role)."),
                   Param("node_type", "string", "Only this node type.")),
           result="{file, path, exists, slices: [{extractor, node_type, bullets}], verdicts: [{schema, verdicts, "
                  "accept, reject, sources}]}", role="reader"))
