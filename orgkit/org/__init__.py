"""The org layer: org text in, org-roam nodes and links out.

Names are loaded on first use, so a module that needs only the light parts
(the outline a scan reads, the decoder) does not pay for the parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Link, Node, OrgFile, ParseWarning
    from .outlined import parse_outlined
    from .parse import parse_org
    from .text import decode_org

_HOMES = {"Link": "model", "Node": "model", "OrgFile": "model", "ParseWarning": "model",
          "decode_org": "text", "parse_org": "parse", "parse_outlined": "outlined"}

__all__ = ["Link", "Node", "OrgFile", "ParseWarning", "decode_org", "parse_org", "parse_outlined"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
