"""`orgkit index`, `search`, `context` and `serve`: the second retrieval stage."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import click

from ..embed import Embedder
from ..index import Index, UpdateStats, refresh, update
from .common import (emit, handle_errors, json_option, notes_option, resolve_notes_dir,
                     state_dir_option, warn)


def open_index(notes_dir: Path | None, state_dir: Path | None) -> Index:
    return Index.at(resolve_notes_dir(notes_dir), state_dir or None)


def progress_bar() -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """An embedding progress bar on stderr when it is a terminal (else silence), and its closer."""
    if not sys.stderr.isatty():
        return None, lambda: None
    bars: list = []

    def advance(done: int, total: int) -> None:
        if not bars:
            bars.append(click.progressbar(length=total, label="embedding", file=sys.stderr))
            bars[0].__enter__()
        bars[0].update(done - bars[0].pos)

    return advance, lambda: bars and bars[0].__exit__(None, None, None)


def report(stats: UpdateStats) -> None:
    """An update's warnings on stderr, the model failure once."""
    for message in stats.warnings:
        warn(message)
    if stats.model_error:
        warn(f"{stats.model_error}; indexing words only")


def freshen(index: Index, embedder: Embedder | None, no_update: bool) -> None:
    """Bring the index up to date before a query, unless asked not to."""
    if no_update and index.exists():
        return
    advance, close = progress_bar()
    try:
        report(refresh(index, embedder=embedder, progress=advance))
    finally:
        close()


def _observe_corrections(index: Index) -> int:
    """Record corrections to generated notes (cheap when orgkit generated none); new events."""
    from .. import config
    from ..feedback.observe import IndexLookup, observe

    result = observe(config.load(index.root, {"state_dir": index.state_dir}), IndexLookup(index))
    for message in result.warnings:
        warn(message)
    return len(result.events)


def no_update_option(func: Callable) -> Callable:
    return click.option("--no-update", is_flag=True,
                        help="Use the index as it is, without checking the files first.")(func)


def _render_stats(stats: dict) -> str:
    embedded = f", {stats['embedded']} passages embedded" if stats["embedded"] else ""
    pending = f", {stats['pending']} passages without vectors" if stats["pending"] else ""
    return (f"{stats['files']} files: {stats['parsed']} read, {stats['removed']} removed; "
            f"{stats['chunks']} new passages{embedded}{pending} ({stats['seconds']:.2f} s)"
            + (f"; {stats['feedback_events']} new correction events" if stats.get("feedback_events") else ""))


def _render_hits(rows: list[dict]) -> str:
    return "\n".join(f"{r['file']}:{r['line']}: {r['title']}  [{r['id']}]  {r['score']:.4f}\n    {r['snippet']}"
                     for r in rows)


def _render_context(doc: dict) -> str:
    parts = [f"# {d['title']}  [{d['id']}]  ({d['file']}:{d['line']}, ~{d['tokens']} tokens)\n"
             f"{d['content'].rstrip()}\n" for d in doc["included"]]
    return "\n".join(parts)


def register(main: click.Group) -> None:
    @main.command("index")
    @click.option("--rebuild", is_flag=True, help="Throw the index away and build it afresh.")
    @click.option("--no-embed", is_flag=True, help="Build the word index only (no model needed).")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def index_command(rebuild: bool, no_embed: bool, notes_dir: Path | None, state_dir: Path | None,
                      as_json: bool) -> None:
        """Build or update the index (only changed files are read, new passages embedded)."""
        index = open_index(notes_dir, state_dir)
        advance, close = progress_bar()
        try:
            stats = update(index, embedder=None if no_embed else Embedder.from_env(), rebuild=rebuild,
                           progress=advance,
                           on_wait=lambda: warn("another orgkit index is running; waiting for it"))
        finally:
            close()
        report(stats)
        data = stats.to_json()
        data["feedback_events"] = _observe_corrections(index)
        emit(data, as_json, _render_stats)

    @main.command("search")
    @click.argument("query", nargs=-1, required=True)
    @click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True)
    @click.option("--mode", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid",
                  show_default=True, help="Rank by meaning and words, meaning only, or words only.")
    @no_update_option
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def search_command(query: tuple[str, ...], limit: int, mode: str, no_update: bool,
                       notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Find notes by meaning and words, best first."""
        from ..retrieve.search import search

        index = open_index(notes_dir, state_dir)
        embedder = None if mode == "lexical" else Embedder.from_env()
        freshen(index, embedder, no_update)
        result = search(index, " ".join(query), mode=mode, limit=limit, embedder=embedder)
        for message in result.warnings:
            warn(message)
        emit([h.to_json() for h in result.hits], as_json, _render_hits)

    @main.command("context")
    @click.argument("query", nargs=-1, required=True)
    @click.option("--budget", type=click.IntRange(min=1), default=4000, show_default=True,
                  help="Tokens of note text to gather (~4 characters each).")
    @no_update_option
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def context_command(query: tuple[str, ...], budget: int, no_update: bool, notes_dir: Path | None,
                        state_dir: Path | None, as_json: bool) -> None:
        """Gather the notes that best answer QUERY, and what they link to, within a budget."""
        from ..retrieve.context import context

        index = open_index(notes_dir, state_dir)
        embedder = Embedder.from_env()
        freshen(index, embedder, no_update)
        result = context(index, " ".join(query), budget=budget, embedder=embedder)
        for message in result.warnings:
            warn(message)
        if result.omitted and not as_json:
            warn(f"left out {len(result.omitted)} note(s); --json lists them")
        emit(result.to_json(), as_json, _render_context)

    @main.command("serve")
    @click.option("--recheck-after", type=click.FloatRange(min=0), default=1.0, show_default=True,
                  help="Seconds between checks of the files for changes (0: before every request).")
    @notes_option
    @state_dir_option
    @handle_errors
    def serve_command(recheck_after: float, notes_dir: Path | None, state_dir: Path | None) -> None:
        """Answer JSON requests on stdin, one a line (ops: scan, search, read, context, ...)."""
        from ..serve import Session, serve

        index = open_index(notes_dir, state_dir)
        session = Session(index, Embedder.from_env(), recheck_after=recheck_after)
        serve(session, sys.stdin, sys.stdout)
