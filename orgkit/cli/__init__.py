"""The `orgkit` command line: a thin layer of click commands over the library.

Each module named in `COMMAND_MODULES` defines `register(main)`, which adds its
commands. Modules are imported only when one of their commands runs (or help
lists them), so `orgkit scan` never pays for numpy, fastembed or the tangler.
"""

from __future__ import annotations

import importlib

import click

from .. import __version__

# module -> the commands it registers
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "graph": ("nodes", "links", "backlinks"),
    "retrieve": ("scan", "read"),
    "index": ("index", "search", "context", "serve"),
    "edit": ("new", "id"),
    "doctor": ("doctor",),
    "model": ("model",),
    "tangle": ("tangle", "detangle"),
    "skills": ("skills",),
}


class LazyGroup(click.Group):
    """A group whose commands are registered by their module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for names in COMMAND_MODULES.values() for name in names)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands:
            module = next((m for m, names in COMMAND_MODULES.items() if name in names), None)
            if module is None:
                return None
            importlib.import_module(f"{__name__}.{module}").register(self)
        return self.commands.get(name)


EXAMPLES = """\b
Examples:
  orgkit scan compost --notes ~/notes      headlines with every word, and their IDs
  orgkit read id:c8d5cab4-... --depth 1    a note and the notes it links to
  orgkit index                             build the index, embedding with progress
  orgkit search how do plants grow --json  by meaning and words, as JSON
  orgkit context "soil health" --budget 3000
  orgkit model pull                        download the embedding model once
"""


def _epilog() -> str:
    """Examples, then every environment variable with what it sets (from the settings table)."""
    from ..config import SETTINGS

    rows = [("ORGKIT_NOTES", "notes directory (default ./notes)")]
    rows += [(s.env, s.help) for s in SETTINGS.values() if s.env and not s.key.startswith("llm.")]
    rows.append(("ORGKIT_LLM_*", "language-model settings (see `orgkit config`)"))
    width = max(len(name) for name, _ in rows)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in rows]
    completion = ("\b\nShell completion (bash; zsh and fish alike):\n"
                  "  eval \"$(_ORGKIT_COMPLETE=bash_source orgkit)\"")
    return EXAMPLES + "\n\b\nEnvironment:\n" + "\n".join(lines) + "\n\n" + completion


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_epilog())
@click.version_option(__version__, prog_name="orgkit")
def main() -> None:
    """Deep, fast memory over plain org files."""
