"""`orgkit doctor`: check the set-up and the notes."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..doctor import Report, Setup, diagnose
from .common import (emit, handle_errors, json_option, notes_option, resolve_notes_dir,
                     state_dir_option)


def _render(report: Report) -> str:
    lines = []
    for name, value in report.facts.items():
        lines.append(f"{name}: {value if value is not None else 'not found'}")
    for f in report.findings:
        where = f"{f.file}:{f.line}: " if f.file and f.line else f"{f.file}: " if f.file else ""
        lines.append(f"{f.level}: {where}{f.message} [{f.check}]")
    errors = sum(f.level == "error" for f in report.findings)
    lines.append("ok" if report.ok else f"{errors} error(s)")
    return "\n".join(lines)


def register(main: click.Group) -> None:
    @main.command("doctor")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def doctor_command(notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Check ripgrep, the model, the index and the notes; exit 1 if broken."""
        report = diagnose(Setup(resolve_notes_dir(notes_dir), state_dir))
        emit(report.to_json() if as_json else report, as_json, _render)
        if not report.ok:
            sys.exit(1)
