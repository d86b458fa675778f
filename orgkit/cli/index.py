"""`orgkit index`, `search`, `context` and `serve`: the second retrieval stage."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import click

from ..config import Config
from ..embed import Embedder
from ..index import Index, UpdateStats, refresh, update
from ..index.embedding import embed_small_backlog
from .common import emit, handle_errors, json_option, load_config, notes_option, state_dir_option, warn
from .progress import ProgressReport


def open_index(config: Config) -> Index:
    return Index.at(config.notes, config.state_dir)


class Warnings:
    """Warnings for one command, each distinct line printed once, in order."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, messages: list[str]) -> None:
        for message in messages:
            if message not in self.seen:
                self.seen.add(message)
                warn(message)


def prepare_query(index: Index, embedder: Embedder | None, config: Config, no_update: bool,
                  say: Warnings) -> None:
    """Before a query: the words brought up to date, and a small embedding backlog embedded inline.

    A larger backlog is left for `orgkit index` (one line says so); the query
    answers from what is embedded, so no command embeds a corpus unannounced.
    """
    if not (no_update and index.exists()):
        say(refresh(index).warnings)
    if embedder is None:
        return
    backlog = embed_small_backlog(index, embedder, config["search.inline_embed_limit"])
    line = backlog.warning() if backlog.embedded else None  # with no vectors at all, search says it
    say([line] if line else [])


def report(stats: UpdateStats) -> None:
    """An update's warnings on stderr, the model failure once, in one line."""
    for message in stats.warnings:
        warn(message)
    if stats.model_error:
        warn(f"{stats.model_error}; indexing words only")


def no_update_option(func: Callable) -> Callable:
    return click.option("--no-update", is_flag=True,
                        help="Use the index as it is, without checking the files first.")(func)


def _render_stats(stats: dict) -> str:
    embedded = (f", {stats['embedded']} passage texts embedded ({stats['tokens']:,} tokens)"
                if stats["embedded"] else "")
    pending = f", {stats['pending']} passages without vectors" if stats["pending"] else ""
    return (f"{stats['files']} files: {stats['parsed']} read, {stats['removed']} removed; "
            f"{stats['chunks']} new passages{embedded}{pending} ({stats['seconds']:.2f} s)")


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
    @click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def index_command(rebuild: bool, no_embed: bool, quiet: bool, notes_dir: Path | None,
                      state_dir: Path | None, as_json: bool) -> None:
        """Build or update the index (only changed files are read, new passages embedded).

        Embedding shows a bar with its rate and time left on a terminal, and a
        plain progress line every few seconds when stderr goes to a file.
        """
        config = load_config(notes_dir, state_dir)
        index = open_index(config)
        progress = ProgressReport(quiet=quiet)
        try:
            stats = update(index, embedder=None if no_embed else Embedder.from_config(config), rebuild=rebuild,
                           progress=progress,
                           on_wait=lambda: warn("another orgkit index is running; waiting for it"))
        finally:
            progress.close()
        report(stats)
        emit(stats.to_json(), as_json, _render_stats)

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

        config = load_config(notes_dir, state_dir)
        index = open_index(config)
        embedder = None if mode == "lexical" else Embedder.from_config(config)
        say = Warnings()
        prepare_query(index, embedder, config, no_update, say)
        result = search(index, " ".join(query), mode=mode, limit=limit, embedder=embedder)
        say(result.warnings)
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

        config = load_config(notes_dir, state_dir)
        index = open_index(config)
        embedder = Embedder.from_config(config)
        say = Warnings()
        prepare_query(index, embedder, config, no_update, say)
        result = context(index, " ".join(query), budget=budget, embedder=embedder)
        say(result.warnings)
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

        config = load_config(notes_dir, state_dir)
        session = Session(open_index(config), Embedder.from_config(config), recheck_after=recheck_after,
                          inline_limit=config["search.inline_embed_limit"])
        serve(session, sys.stdin, sys.stdout)
