"""Options and output shared by every command, defined once.

Every command prints human-readable text by default and one JSON document with
`--json`; warnings and progress go to stderr so stdout stays machine-readable.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..errors import OrgkitError


def json_option(func: Callable) -> Callable:
    """`--json`: one JSON document on stdout."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(func)


def notes_option(func: Callable) -> Callable:
    """`--notes DIR`, falling back to $ORGKIT_NOTES, then ./notes."""
    return click.option(
        "--notes",
        "notes_dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Notes directory (default: $ORGKIT_NOTES, else ./notes).",
    )(func)


def resolve_notes_dir(notes_dir: Path | None) -> Path:
    """The notes directory to use, or a clear error when there is none."""
    chosen = notes_dir or Path(os.environ.get("ORGKIT_NOTES") or "notes")
    if not chosen.is_dir():
        raise OrgkitError(
            f"notes directory not found: {chosen} (use --notes DIR or set ORGKIT_NOTES)"
        )
    return chosen


def warn(message: str) -> None:
    """One line on stderr, prefixed so it stands out from data."""
    click.echo(f"orgkit: warning: {message}", err=True)


def emit(data: Any, as_json: bool, render: Callable[[Any], str]) -> None:
    """Print `data` as JSON or through the human renderer."""
    if as_json:
        json.dump(data, sys.stdout, ensure_ascii=False, indent=None)
        sys.stdout.write("\n")
    else:
        text = render(data)
        if text:
            click.echo(text)


def handle_errors(func: Callable) -> Callable:
    """Turn OrgkitError into a one-line message and exit status 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OrgkitError as exc:
            click.echo(f"orgkit: error: {exc}", err=True)
            sys.exit(1)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(0)

    return wrapper


def state_dir_option(func: Callable) -> Callable:
    """`--state-dir DIR` (or $ORGKIT_STATE_DIR): where the index lives, default NOTES/.orgkit."""
    return click.option(
        "--state-dir",
        "state_dir",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="ORGKIT_STATE_DIR",
        default=None,
        help="Where the index lives (default: $ORGKIT_STATE_DIR, else NOTES/.orgkit).",
    )(func)


def load_config(notes_dir: Path | None, state_dir: Path | None = None):
    """The resolved settings for the notes directory (flags > environment > orgkit.toml > defaults)."""
    from .. import config

    return config.load(notes_dir, {"state_dir": state_dir})
