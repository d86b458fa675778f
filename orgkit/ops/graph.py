"""nodes, links, backlinks: the note graph as org-roam sees it."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .spec import Op, Param

ID = Param("id", "string", "A node ID.", required=True, positional=True, metavar="ID")


def _vault(ctx: OpContext):
    from ..vault import Vault

    vault = Vault.load(ctx.root)
    for message in vault.warnings:
        ctx.warn(message)
    return vault


def nodes(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    index = ctx.lookup_index()
    if index is not None:
        return index.nodes()
    return [n.to_json() for n in _vault(ctx).nodes]


def links(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    index = ctx.lookup_index()
    if index is not None:
        return index.links(args["id"])
    vault = _vault(ctx)
    found = vault.links_from(args["id"]) if args["id"] is not None else vault.links
    return [link.to_json() for link in found]


def backlinks(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    index = ctx.lookup_index()
    if index is not None:
        return index.backlinks(args["id"])
    vault = _vault(ctx)
    rows = []
    for link in vault.backlinks(args["id"]):
        source = vault.by_id.get(link.source)
        rows.append({**link.to_json(), "title": source.title if source else None,
                     "file": link.file, "line": link.line})
    return rows


declare(Op("nodes", "List every node (files and headings with an ID).", nodes,
           result="[{id, file, level, pos, line, title, todo, priority, olp, tags, aliases, refs, properties}]",
           role="reader"))
declare(Op("links", "List links: all of them, or those going out of node ID.", links,
           params=(Param("id", "string", "Only the links out of this node.", positional=True, metavar="[ID]"),),
           result="[{source, dest, type, pos}]", role="reader"))
declare(Op("backlinks", "List the id links pointing at node ID, with where they come from.", backlinks,
           params=(ID,), result="[{source, dest, type, pos, title, file, line}]", role="reader"))
