"""Options and output shared by every command, defined once.

Every command prints human-readable text by default and one JSON document with
`--json`; warnings and progress go to stderr so stdout stays machine-readable.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..errors import OrgkitError
from ..ops.answers import answer, message


def json_option() -> click.Option:
    """`--json`: one JSON document on stdout."""
    return click.Option(["--json", "as_json"], is_flag=True, help="Print one JSON document.")


def common_options() -> list[click.Option]:
    """`--notes DIR`, `--state-dir DIR` and `--json`; both directories resolve through the config."""
    return [
        click.Option(["--notes", "notes_dir"], type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Notes directory (default: $ORGKIT_NOTES, else ./notes)."),
        click.Option(["--state-dir", "state_dir"], type=click.Path(file_okay=False, path_type=Path),
                     default=None, help="Where the index lives (default: $ORGKIT_STATE_DIR, else NOTES/.orgkit)."),
        json_option(),
    ]


def warn(message: str) -> None:
    """One line on stderr, prefixed so it stands out from data."""
    click.echo(f"orgkit: warning: {message}", err=True)


def emit(data: Any, as_json: bool, render: Callable[[Any], str]) -> None:
    """Print `data` as JSON or through the human renderer."""
    if as_json:
        # One write of the C encoder's output: `json.dump` encodes in Python, piece by piece.
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        text = render(data)
        if text:
            click.echo(text)


def handle_errors(func: Callable) -> Callable:
    """Turn OrgkitError into a one-line message and the exit status of the one table (ops/answers.py)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(0)
        except (OrgkitError, OSError) as exc:
            click.echo(f"orgkit: error: {message(exc)}", err=True)
            sys.exit(answer(exc).exit)

    return wrapper
