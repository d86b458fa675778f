"""The org layer: org text in, org-roam nodes and links out."""

from .model import Link, Node, OrgFile, ParseWarning
from .parse import parse_org, parse_outlined
from .text import decode_org

__all__ = ["Link", "Node", "OrgFile", "ParseWarning", "decode_org", "parse_org", "parse_outlined"]
