"""`orgkit nodes`, `links` and `backlinks`: the note graph as org-roam sees it."""

from __future__ import annotations

from pathlib import Path

import click

from ..vault import Vault
from .common import (emit, handle_errors, json_option, notes_option, resolve_notes_dir,
                     state_dir_option, warn)


def load_vault(notes_dir: Path | None) -> Vault:
    """The vault, with its warnings (skipped files, duplicate IDs) on stderr."""
    vault = Vault.load(resolve_notes_dir(notes_dir))
    for message in vault.warnings:
        warn(message)
    return vault


def _render_nodes(rows: list[dict]) -> str:
    out = []
    for n in rows:
        path = " > ".join(n["olp"] + [n["title"]]) if n["level"] else n["title"]
        tags = f"  :{':'.join(n['tags'])}:" if n["tags"] else ""
        out.append(f"{n['file']}:{n['line']}: {path}{tags}  [{n['id']}]")
    return "\n".join(out)


def _render_links(rows: list[dict]) -> str:
    return "\n".join(f"{r['source']} -> {r['dest']} ({r['type']}, pos {r['pos']})" for r in rows)


def _render_backlinks(rows: list[dict]) -> str:
    return "\n".join(f"{r['file']}:{r['line']}: {r['title']}  [{r['source']}]" for r in rows)


def register(main: click.Group) -> None:
    @main.command()
    @notes_option
    @json_option
    @handle_errors
    def nodes(notes_dir: Path | None, as_json: bool) -> None:
        """List every node (files and headings with an ID)."""
        vault = load_vault(notes_dir)
        emit([n.to_json() for n in vault.nodes], as_json, _render_nodes)

    @main.command()
    @click.argument("node_id", metavar="[ID]", required=False)
    @notes_option
    @json_option
    @handle_errors
    def links(node_id: str | None, notes_dir: Path | None, as_json: bool) -> None:
        """List links: all of them, or those going out of node ID."""
        vault = load_vault(notes_dir)
        found = vault.links_from(node_id) if node_id else vault.links
        emit([link.to_json() for link in found], as_json, _render_links)

    @main.command()
    @click.argument("node_id", metavar="ID")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def backlinks(node_id: str, notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """List the id links pointing at node ID, with where they come from."""
        from ..index import refreshed_if_built

        index, warnings = refreshed_if_built(resolve_notes_dir(notes_dir), state_dir)
        if index is not None:
            for message in warnings:
                warn(message)
            emit(index.backlinks(node_id), as_json, _render_backlinks)
            return
        vault = load_vault(notes_dir)
        rows = []
        for link in vault.backlinks(node_id):
            source = vault.by_id.get(link.source)
            rows.append({**link.to_json(), "title": source.title if source else None,
                         "file": link.file, "line": link.line})
        emit(rows, as_json, _render_backlinks)
