"""A file parsed and its outline, from one reading of the text.

The index needs both for every file it reads (nodes from the parse, passages
cut along the outline); building the outline from the headings the parser
found costs nothing more. Here rather than in `parse.py`, so that the parser
does not depend on the outline (whose TODO keywords come from the parser).
"""

from __future__ import annotations

from .model import OrgFile
from .outline import Outline
from .parse import parse_with_headings


def parse_outlined(text: str, path: str) -> tuple[OrgFile, Outline]:
    """`parse_org`, and the file's `Outline` from the headings the parse found."""
    out, headings = parse_with_headings(text, path)
    return out, Outline.of_headings(text, *headings)
