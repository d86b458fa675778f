"""What kind of note a file is: the person's own, or material orgkit generated.

Decided here, once, when a file is indexed, from what its writer put in its
top node (extract/notes.py, memory/deposit.py): claim, quote, hub and run notes
carry their extraction run (`:RUN:`) and their filetag, source notes the
source's hash, deposits how they came (`:DEPOSITED_VIA:`; a note taken in
from a watched folder is the person's own). Every node of a file has the
file's kind, except a claim's quote: the claim note's heading that carries the
quote's offsets (`:START:`, `:RUN:`) is a `quote`. Searches scope on it
(retrieve/scope.py).
"""

from __future__ import annotations

from ..org import OrgFile

NOTE = "note"
DEPOSIT = "deposit"
EXTRACTION_KINDS = ("claim", "quote", "hub", "run", "source")


def node_kinds(parsed: OrgFile) -> list[str]:
    """The kind of each node of `parsed`, in order."""
    kind = file_kind(parsed)
    return ["quote" if kind == "claim" and n.level > 0 and "START" in n.properties and "RUN" in n.properties
            else kind for n in parsed.nodes]


def file_kind(parsed: OrgFile) -> str:
    """The kind of every node in `parsed`: `note` unless its top node says it was generated."""
    top = next((n for n in parsed.nodes if n.level == 0), None)
    if top is None:
        return NOTE
    props, tags = top.properties, set(top.tags)
    if props.get("DEPOSITED_VIA") and props["DEPOSITED_VIA"] != "watch":
        return DEPOSIT
    if "SOURCE_SHA256" in props and "source" in tags and "RUN" not in props:
        return "source"
    if "RUN" not in props:
        return NOTE
    if "claim" in tags and "QUOTE" in props:
        return "claim"
    if "quote" in tags and "START" in props:
        return "quote"
    if "extraction" in tags:
        return "hub" if "SOURCE" in props else "run"
    return NOTE
