"""`orgkit skills list|show|run|prompt`: the skills registry from the shell."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import config
from ..skills import Request, load_registry
from ..skills.reply import parse_reply
from ..skills.run import run_skill
from .common import emit, handle_errors, json_option, notes_option, resolve_notes_dir, warn


def _registry(notes: Path):
    registry = load_registry(notes, allow_local=config.load(notes)["skills.allow_local"])
    for message in registry.warnings:
        warn(message)
    return registry


def register(main: click.Group) -> None:
    @main.group("skills")
    def skills_group() -> None:
        """List, inspect and run skills."""

    @skills_group.command("list")
    @notes_option
    @json_option
    @handle_errors
    def list_command(notes_dir: Path | None, as_json: bool) -> None:
        """Every available skill, highest priority first."""
        rows = [s.describe() for s in _registry(resolve_notes_dir(notes_dir)).ordered()]
        emit(rows, as_json, lambda rs: "\n".join(
            f"{r['name']:<20} {r['priority']:>4}  {r['description']}  ({r['source']})" for r in rs))

    @skills_group.command("show")
    @click.argument("name")
    @notes_option
    @json_option
    @handle_errors
    def show_command(name: str, notes_dir: Path | None, as_json: bool) -> None:
        """What skill NAME does and which stages it has."""
        info = _registry(resolve_notes_dir(notes_dir)).get(name).describe()
        emit(info, as_json, lambda r: "\n".join(f"{k}: {v}" for k, v in r.items()))

    @skills_group.command("run")
    @click.argument("name")
    @click.option("--query", required=True, help="The request for the skill.")
    @click.option("--stage", default="symbolic", help="symbolic (default), neuro, or a later stage.")
    @click.option("--reply", default=None, help="The model's reply (JSON) for a later stage.")
    @notes_option
    @json_option
    @handle_errors
    def run_command(name: str, query: str, stage: str, reply: str | None,
                    notes_dir: Path | None, as_json: bool) -> None:
        """Run one stage of skill NAME on --query."""
        notes = resolve_notes_dir(notes_dir)
        skill = _registry(notes).get(name)
        result = run_skill(skill, Request(query=query, notes=notes), stage,
                           parse_reply(reply) if reply is not None else None)
        emit(result, as_json, lambda r: json.dumps(r, indent=2, ensure_ascii=False))

    @skills_group.command("prompt")
    @click.argument("name")
    @click.option("--query", required=True, help="The request for the skill.")
    @notes_option
    @json_option
    @handle_errors
    def prompt_command(name: str, query: str, notes_dir: Path | None, as_json: bool) -> None:
        """The prompt skill NAME would give a model for --query."""
        notes = resolve_notes_dir(notes_dir)
        skill = _registry(notes).get(name)
        prompt = run_skill(skill, Request(query=query, notes=notes), "neuro", None)
        emit(prompt, as_json, lambda p: p["text"])
