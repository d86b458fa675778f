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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="orgkit")
def main() -> None:
    """Deep, fast memory over plain org files."""
