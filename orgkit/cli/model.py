"""`orgkit model show|pull`: which embedding model search uses, and downloading it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ..config import Config
from ..embed import Embedder, describe, pull
from ..errors import OrgkitError
from .common import emit, handle_errors, json_option, load_config, notes_option


def _config(notes_dir: Path | None) -> Config:
    """The notes directory's settings; outside any notes directory, the environment's and defaults."""
    try:
        return load_config(notes_dir)
    except OrgkitError:
        if notes_dir is not None:
            raise
        with tempfile.TemporaryDirectory() as empty:
            return load_config(Path(empty))


def _render_show(info: dict) -> str:
    where = info["path"] or "fastembed's model cache"
    state = f"loads, {info['dimensions']} dimensions" if info["loaded"] else info["error"]
    return f"{info['name']} from {where}\nfingerprint: {info['fingerprint']}\n{state}"


def register(main: click.Group) -> None:
    @main.group("model")
    def model_group() -> None:
        """The embedding model: show it, or download it for offline use.

        \b
        Examples:
          orgkit model show
          orgkit model pull
          ORGKIT_MODEL=BAAI/bge-small-en-v1.5 orgkit model pull
        """

    @model_group.command("show")
    @notes_option
    @json_option
    @handle_errors
    def show_command(notes_dir: Path | None, as_json: bool) -> None:
        """The configured model, where it comes from, and whether it loads (no network)."""
        emit(describe(Embedder.from_config(_config(notes_dir))), as_json, _render_show)

    @model_group.command("pull")
    @notes_option
    @json_option
    @handle_errors
    def pull_command(notes_dir: Path | None, as_json: bool) -> None:
        """Download the configured model into the model cache, with progress on stderr."""
        embedder = Embedder.from_config(_config(notes_dir))
        click.echo(f"orgkit: downloading {embedder.name}", err=True)
        where = pull(embedder)
        emit({"name": embedder.name, "path": str(where)}, as_json,
             lambda d: f"{d['name']} is in {d['path']}; search and index use it from there")
