"""File names for notes: org-roam's slug of a title, cut to what the file system takes.

The note writers (edit.py's new notes, the memory flow's deposits and
proposals) name files alike: `YYYYMMDDHHMMSS-slug.org`, the slug cut at a
character boundary when the name would pass the file system's limit.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path


def slugify(title: str) -> str:
    """org-roam's `org-roam-node-slug`: accents dropped, non-alphanumerics to _."""
    decomposed = unicodedata.normalize("NFD", title)
    stripped = unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))
    slug = re.sub(r"[\W_]", "_", stripped)
    slug = re.sub(r"__+", "_", slug).strip("_")
    return slug.lower()


def fit_name(directory: Path, stem: str, ending: str) -> str:
    """`stem` + `ending` as a file name the file system takes in `directory`: the stem cut
    (at a character boundary) to keep the name within its limit."""
    return _fit(stem, name_max(directory) - len(ending.encode())) + ending


def _fit(stem: str, limit: int) -> str:
    """`stem` cut to at most `limit` bytes of UTF-8, at a character boundary."""
    encoded = stem.encode("utf-8")
    if len(encoded) <= limit:
        return stem
    return encoded[:limit].decode("utf-8", errors="ignore").rstrip("_")


def name_max(root: Path) -> int:
    """The longest file name (in bytes) the file system of `root` takes."""
    try:
        return os.pathconf(root, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255
