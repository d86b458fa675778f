"""index: build or update the index of the notes."""

from __future__ import annotations

from typing import Any

from ..errors import OrgkitError
from . import declare
from .context import OpContext
from .spec import Op, Param


def index(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..config import ensure_state_dir
    from ..embed import drop_old_copies
    from ..index import update

    ensure_state_dir(ctx.config)
    drop_old_copies(ctx.config.state_dir)  # the optimised model lives in the user's cache now
    if args["workers"] > 1 and not ctx.index.backend.shares_embedding:
        raise OrgkitError("--workers needs a shared database (database.url): SQLite embeds in one process")
    stats = update(ctx.index, embedder=None if args["no_embed"] else ctx.embedder, rebuild=args["rebuild"],
                   progress=None if args["quiet"] else ctx.progress, on_wait=ctx.on_wait, workers=args["workers"])
    for message in stats.warnings:
        ctx.warn(message)
    if stats.model_error:
        ctx.warn(f"{stats.model_error}; indexing words only")
    if stats.attachments:
        ctx.warn(_attachments(stats.attachments))
    _drop_deleted_claims(ctx)
    return {**stats.to_json(), "indexed": ctx.index.counts(), "feedback_events": _record_corrections(ctx)}


SHOWN_ATTACHMENTS = 3  # a warning is a line: the first few files, the rest counted


def _attachments(files: list[str]) -> str:
    """Why org files under a data/ folder are not found: one line, naming the first few."""
    more = f" and {len(files) - SHOWN_ATTACHMENTS} more" if len(files) > SHOWN_ATTACHMENTS else ""
    return (f"left out {len(files)} org file(s) whose path holds data/, where Org keeps attachments and "
            f"org-roam reads no notes: {', '.join(files[:SHOWN_ATTACHMENTS])}{more}")


def _drop_deleted_claims(ctx: OpContext) -> None:
    """Hubs of extraction runs stop linking the claim notes a person deleted (the index, just
    brought up to date, says where a moved claim went)."""
    from ..extract.run import drop_deleted_claims
    from ..feedback.observe import IndexLookup

    dropped = drop_deleted_claims(ctx.config, IndexLookup(ctx.index).files)
    if dropped:
        ctx.warn(f"{dropped} deleted claim note(s) taken off their extraction hubs")


def _record_corrections(ctx: OpContext) -> int:
    """Corrections to generated notes, recorded as events (nothing to do, and no cost, when
    orgkit generated no note here); the number of new events."""
    from ..feedback.observe import IndexLookup, observe

    found = observe(ctx.config, IndexLookup(ctx.index))
    for message in found.warnings:
        ctx.warn(message)
    return len(found.events)


declare(Op("index", "Build or update the index (only changed files are read, new passage texts embedded). "
           "Embedding reports progress on stderr: a bar with its rate and time left on a terminal, a plain "
           "line every 10 s otherwise.", index,
           params=(Param("rebuild", "boolean", "Throw the index away and build it afresh."),
                   Param("no_embed", "boolean", "Build the word index only (no model needed)."),
                   Param("quiet", "boolean", "No progress on stderr."),
                   Param("workers", "integer", "Embedding workers sharing the database's work queue (with "
                         "database.url; `orgkit index` on other machines adds theirs).", default=1, minimum=1,
                         maximum=64)),
           result="{files, parsed, removed, chunks, embedded, tokens, pending, seconds, warnings, model_error, "
                  "indexed: {files, files_with_id, files_without_id, headings_with_id, headings_without_id}, "
                  "feedback_events}",
           writes=True, idempotent=True, progress=True, role="admin"))
