"""Ingesting sources: a copy keyed by content hash, so audits work after the original moves.

Copies live in `DATA/extract/sources/SHA256.EXT` (primary data, never rebuilt).
A source is read as UTF-8 text (a byte-order mark dropped); its format
(org, markdown, text) comes from the file extension.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..errors import OrgkitError
from ..files import replace_file

FORMATS = {".org": "org", ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
           ".rst": "text"}


@dataclass(frozen=True)
class Source:
    given: str  # the path as the user gave it
    path: Path  # absolute path of the original
    sha256: str
    fmt: str
    copy: Path
    text: str

    @property
    def name(self) -> str:
        return self.path.name


def decode_source(data: bytes, where: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OrgkitError(f"{where}: not UTF-8 text (byte {exc.start}); only org, markdown and text sources") from None
    return text[1:] if text.startswith("\ufeff") else text


def sources_dir(data_dir: Path) -> Path:
    return data_dir / "extract" / "sources"


def ingest(given: str, data_dir: Path) -> Source:
    """Read `given`, copy it into the data dir under its hash (once), and describe it."""
    path = Path(given).expanduser()
    if not path.is_file():
        raise OrgkitError(f"source not found: {given}")
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise OrgkitError(f"{given}: unsupported source type {path.suffix or '(none)'!r} "
                          f"(org, markdown or text: {', '.join(sorted(FORMATS))})")
    data = path.read_bytes()
    text = decode_source(data, given)
    sha = hashlib.sha256(data).hexdigest()
    copy = sources_dir(data_dir) / f"{sha}{path.suffix.lower()}"
    if not copy.exists():
        replace_file(copy, data)
    return Source(given=given, path=path.resolve(), sha256=sha, fmt=fmt, copy=copy, text=text)


def read_copy(copy: Path) -> str:
    return decode_source(copy.read_bytes(), str(copy))


def rel(config: Config, path: Path) -> str:
    """A path as the notes name it (relative, forward slashes); a path outside them as it is."""
    try:
        return path.resolve().relative_to(config.notes.resolve()).as_posix()
    except ValueError:
        return str(path)
