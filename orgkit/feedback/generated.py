"""The generation record: what orgkit wrote, field by field, when it wrote it.

Every note orgkit generates (claim, quote, hub and run notes from extraction;
notes the librarian's accepted proposals write) is recorded at the moment it is
written: node ID and type, the generator (role, schema, schema version), the
source document, the note's file and the generated value of each field. Later
comparisons against the notes as they are find the user's corrections. The
record is append-only; the latest record of a node wins (a note generated
again replaces what it is compared against).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..errors import OrgkitError
from .fields import NoteFields, fields_of_text
from .jsonl import append_records, read_records
from .paths import generated_path


@dataclass(frozen=True)
class Generator:
    """Who wrote a note: the model role and the schema it wrote under."""

    role: str
    schema: str = ""
    schema_version: str = ""


@dataclass(frozen=True)
class GenerationRecord:
    """One generated node, as written."""

    node_id: str
    node_type: str
    generator: Generator
    source_path: str
    file: str
    fields: NoteFields
    time: str

    def to_json(self) -> dict:
        return {"node_id": self.node_id, "node_type": self.node_type, "role": self.generator.role,
                "schema": self.generator.schema, "schema_version": self.generator.schema_version,
                "source_path": self.source_path, "file": self.file, "fields": self.fields.to_json(),
                "time": self.time}

    @classmethod
    def from_json(cls, data: dict) -> "GenerationRecord":
        return cls(node_id=data["node_id"], node_type=data["node_type"],
                   generator=Generator(data.get("role", ""), data.get("schema", ""),
                                       str(data.get("schema_version", ""))),
                   source_path=data.get("source_path", ""), file=data.get("file", ""),
                   fields=NoteFields.from_json(data.get("fields", {})), time=data.get("time", ""))


def content_version(text: str) -> str:
    """A schema's version as recorded: the first 12 hex digits of the sha256 of its text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def now() -> str:
    """The time stamp every feedback record carries: UTC, seconds, ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def record_generated(config: Config, *, file: str | Path, node_id: str, node_type: str,
                     generator: Generator, source_path: str, text: str | None = None,
                     if_absent: bool = False) -> GenerationRecord | None:
    """Record the node `node_id` of the note `file` as generated, with its fields as written.

    Call it right after the note is written, with the text written (`text`), or
    let it read the file. `file` may be absolute or relative to the notes dir;
    `source_path` is the source document's path as the extraction names it.
    `if_absent` records only a node not recorded yet (a resumed run finding a
    note it wrote before a crash); returns None when it records nothing.
    """
    if if_absent and node_id in latest_records(config):
        return None
    rel = _relative(config, file)
    if text is None:
        text = (config.notes / rel).read_text(encoding="utf-8")
    fields = fields_of_text(text, rel, node_id)
    if fields is None:
        raise OrgkitError(f"{rel}: no node {node_id} to record as generated")
    record = GenerationRecord(node_id, node_type, generator, source_path, rel, fields, now())
    append_records(generated_path(config), [record.to_json()])
    return record


def latest_records(config: Config) -> dict[str, GenerationRecord]:
    """The latest generation record of every generated node, by node ID."""
    out: dict[str, GenerationRecord] = {}
    for data in read_records(generated_path(config)):
        try:
            record = GenerationRecord.from_json(data)
        except (KeyError, TypeError, AttributeError):
            continue
        out[record.node_id] = record
    return out


def _relative(config: Config, file: str | Path) -> str:
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(config.notes.resolve())
        except ValueError:
            raise OrgkitError(f"{file}: not inside the notes directory {config.notes}") from None
    return path.as_posix()
