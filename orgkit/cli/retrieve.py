"""`orgkit scan` and `orgkit read`: the sparse scan and the deep read."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..retrieve.read import ReadResult, read
from ..retrieve.scan import ScanHit, scan
from .common import (emit, handle_errors, json_option, notes_option, resolve_notes_dir,
                     state_dir_option, warn)


def _render_scan(hits: list[ScanHit]) -> str:
    """A sparse tree: each file once, its matching headlines indented by level."""
    out: list[str] = []
    current = None
    for hit in hits:
        if hit.file != current:
            current = hit.file
            out.append(f"{hit.file}")
        node = f"[{hit.id}]" if hit.id else "[no ID]"
        if hit.level == 0:
            out.append(f"  #+title: {hit.title}  {node}  :{hit.line}")
            continue
        trail = f"{' > '.join(hit.olp)} > " if hit.olp else ""
        out.append(f"  {'*' * hit.level} {trail}{hit.title}  {node}  :{hit.line}")
    return "\n".join(out)


def _render_read(result: ReadResult) -> str:
    parts = []
    for doc in result.docs:
        via = f", depth {doc.depth} via {doc.via}" if doc.via else ""
        header = f"# {doc.title}  [{doc.id}]  ({doc.file}:{doc.line}, ~{doc.tokens} tokens{via})"
        parts.append(f"{header}\n{doc.content.rstrip()}\n")
    return "\n".join(parts)


def register(main: click.Group) -> None:
    @main.command("scan")
    @click.argument("query", nargs=-1, required=True)
    @click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N hits.")
    @click.option("--regex", is_flag=True, help="QUERY is one regular expression.")
    @notes_option
    @json_option
    @handle_errors
    def scan_command(query: tuple[str, ...], limit: int | None, regex: bool,
                     notes_dir: Path | None, as_json: bool) -> None:
        """Find headlines and file titles matching every word of QUERY."""
        result = scan(resolve_notes_dir(notes_dir), " ".join(query), limit=limit, regex=regex)
        for message in result.warnings:
            warn(message)
        if as_json:
            emit([h.to_json() for h in result.hits], True, str)
        else:
            emit(result.hits, False, _render_scan)

    @main.command("read")
    @click.argument("ids", nargs=-1, required=True, metavar="ID...")
    @click.option("--depth", type=click.IntRange(min=0), default=0,
                  help="Follow id links this many hops (breadth-first).")
    @click.option("--budget", type=click.IntRange(min=1), default=None,
                  help="Stop adding linked notes past this many tokens (~4 characters each).")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def read_command(ids: tuple[str, ...], depth: int, budget: int | None,
                     notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Print the org text of nodes by ID, and of the notes they link to."""
        from ..index import refreshed_if_built
        from ..retrieve.locate import index_locator

        root = resolve_notes_dir(notes_dir)
        index, warnings = refreshed_if_built(root, state_dir)
        for message in warnings:
            warn(message)
        locator = index_locator(index) if index is not None else None
        result = read(root, ids, depth=depth, budget=budget, locator=locator)
        for message in result.warnings:
            warn(message)
        for node_id in result.missing:
            click.echo(f"orgkit: error: unknown ID: {node_id}", err=True)
        if result.omitted:
            left = ", ".join(
                f"{o['id']} ({o.get('title') or o['reason']}, ~{o['tokens']} tokens)"
                if "tokens" in o else f"{o['id']} ({o['reason']})"
                for o in result.omitted
            )
            warn(f"left out {len(result.omitted)} linked note(s): {left}")
        if as_json:
            emit([d.to_json() for d in result.docs], True, str)
        else:
            emit(result, False, _render_read)
        if result.missing:
            sys.exit(1)
