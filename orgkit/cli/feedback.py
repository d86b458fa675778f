"""`orgkit evolve` and `orgkit guidance`: corrections distilled into guidance, and its slices."""

from __future__ import annotations

from pathlib import Path

import click

from .common import emit, handle_errors, json_option, notes_option, warn


def _render_evolve(data: dict) -> str:
    lines = []
    for c in data["clusters"]:
        what = f"{c['extractor']} / {c['node_type']} / {c['field']} ({c['source']}, {c['events']} events)"
        tail = f": {c['bullet']}" if c["bullet"] and c["status"] != "dropped" else ""
        if c["status"] == "dropped":
            tail = f": dropped by the guardrail ({c['pattern']}): {c['bullet']}"
        lines.append(f"{c['status']:<9} {what}{tail}")
    lines.append(f"{data['events']} events -> {data['guidance']}" + ("" if data["written"] else " (unchanged)"))
    return "\n".join(lines)


def _render_guidance(data: dict) -> str:
    lines = [data["file"]]
    for part in data["slices"]:
        lines.append(f"{part['extractor']} / {part['node_type']}:")
        lines += [f"  - {b}" for b in part["bullets"]]
    return "\n".join(lines)


def register(main: click.Group) -> None:
    @main.command("evolve")
    @notes_option
    @json_option
    @handle_errors
    def evolve_command(notes_dir: Path | None, as_json: bool) -> None:
        """Distil recorded corrections into the guidance file (a bullet per large enough cluster)."""
        from .. import config
        from ..feedback.evolve import evolve

        result = evolve(config.load(notes_dir))
        if result.model_note:
            warn(result.model_note)
        for message in result.warnings:
            warn(message)
        emit(result.to_json(), as_json, _render_evolve)

    @main.command("guidance")
    @click.option("--extractor", default=None, help="Only this extractor (model role).")
    @click.option("--node-type", default=None, help="Only this node type.")
    @notes_option
    @json_option
    @handle_errors
    def guidance_command(extractor: str | None, node_type: str | None, notes_dir: Path | None,
                         as_json: bool) -> None:
        """The guidance file's path and its bullets, by extractor and node type."""
        from .. import config
        from ..feedback.guidance import guidance_slices

        emit(guidance_slices(config.load(notes_dir), extractor, node_type), as_json, _render_guidance)
