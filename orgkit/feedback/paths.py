"""Where the feedback loop keeps its primary data, inside the data dir."""

from __future__ import annotations

import re
from pathlib import Path

from ..config import Config

GUIDANCE_FILE = "guidance.org"


def feedback_dir(config: Config) -> Path:
    return config.data_dir / "feedback"


def generated_path(config: Config) -> Path:
    """One JSON line per note orgkit generated (append-only)."""
    return feedback_dir(config) / "generated.jsonl"


def events_path(config: Config) -> Path:
    """One JSON line per correction event (append-only, unique by event ID)."""
    return feedback_dir(config) / "events.jsonl"


def schema_stem(name: str) -> str:
    """A schema's name as a file name: a schema file may come with the notes, so its name is
    never a path (a separator or `..` in it stays inside the folder it is kept in)."""
    return re.sub(r"[^\w.-]", "_", name)


def verdicts_path(config: Config, schema: str) -> Path:
    """One JSON line per verdict event of one schema (`orgkit extract learn`), written whole."""
    return feedback_dir(config) / "verdicts" / f"{schema_stem(schema)}.jsonl"


def bullet_cache_path(config: Config) -> Path:
    """Model-phrased bullets by cluster membership hash, so a re-run makes no model call."""
    return feedback_dir(config) / "bullets.json"


def guidance_path(config: Config) -> Path:
    """The guidance file people read and edit."""
    return config.data_dir / GUIDANCE_FILE
