"""The `orgkit` command line: click commands generated from the operation registry.

Every operation in `orgkit.ops` becomes a command (`Op.cli` gives its path,
e.g. `skills list`), with its options, defaults and help taken from the
declaration; `render.py` says how results read in a terminal. The servers
(`serve`, `mcp`) are the only hand-written commands. Heavy libraries are
imported only by the operations that need them, so `orgkit scan` never pays
for numpy, fastembed or the tangler.
"""

from __future__ import annotations

import importlib
from typing import Mapping

import click

from .. import __version__

# Commands that are not operations: module -> the commands it registers.
SERVER_MODULES: dict[str, tuple[str, ...]] = {"servers": ("serve", "mcp")}

GROUP_HELP = {"skills": "List, inspect and run skills.", "id": "Manage node IDs.",
              "model": "The embedding model: show it, or download it for offline use.",
              "db": "The storage the index lives in: its status, and its migrations.",
              "review": "Review the librarian's proposals: list, show a diff, accept, edit, reject, undo.",
              "token": "Bearer tokens of the team server (`serve --http`): add, list, revoke."}


def _listing_config():
    """The config a command listing uses (--notes is not known yet): $ORGKIT_NOTES or ./notes, if any."""
    from .. import config
    from ..errors import OrgkitError

    try:
        return config.load()
    except OrgkitError:
        return None


def _op_commands(listing: bool = False, only: str | None = None) -> dict[str, click.Command]:
    """A command (or a group of them) for every operation, by its first word (or for the word `only`).

    A listing leaves out the operations of disabled capabilities; calling one
    by name still works, and says how to turn its capability on.
    """
    from ..ops import offered, registry
    from .adapter import command
    from .render import RENDERERS

    top: dict[str, click.Command] = {}
    groups: dict[str, click.Group] = {}
    for op in (offered(_listing_config()) if listing else registry()).values():
        if op.command is None:
            continue
        head, *rest = op.command
        if only is not None and head != only:
            continue
        if not rest:
            top[head] = command(op, RENDERERS.get(op.name), head)
            continue
        group = groups.setdefault(head, click.Group(head, help=GROUP_HELP.get(head, f"{head} commands.")))
        group.add_command(command(op, RENDERERS.get(op.name), rest[0]))
    for head, group in groups.items():
        top[head] = Branching(top[head], group.commands) if head in top else group
    return top


class Branching(click.Command):
    """A command with subcommands of its own (`extract SOURCE...`, `extract learn FILE`): a first
    argument naming a subcommand runs that, anything else the command itself."""

    def __init__(self, leaf: click.Command, subcommands: Mapping[str, click.Command]) -> None:
        names = ", ".join(f"`{leaf.name} {n}`" for n in sorted(subcommands))
        super().__init__(leaf.name, callback=leaf.callback, params=leaf.params, help=leaf.help,
                         short_help=leaf.short_help, epilog=f"See also {names} (--help for each).")
        self.subcommands = subcommands

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.subcommands:
            ctx.meta["orgkit.subcommand"] = args
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        args = ctx.meta.pop("orgkit.subcommand", None)
        if args is None:
            return super().invoke(ctx)
        sub = self.subcommands[args[0]]  # named from the root, so its usage reads `orgkit extract learn ...`
        with sub.make_context(f"{ctx.info_name} {args[0]}", args[1:], parent=ctx.parent) as inner:
            return sub.invoke(inner)


class LazyGroup(click.Group):
    """A group whose commands are made from the registry (or registered by their module) on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*_op_commands(listing=True), *(n for names in SERVER_MODULES.values() for n in names)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands:
            module = next((m for m, names in SERVER_MODULES.items() if name in names), None)
            if module is not None:
                importlib.import_module(f"{__name__}.{module}").register(self)
            elif name in (made := _op_commands(only=name)):
                self.add_command(made[name], name)
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
    from ..config import SETTINGS, VARIABLES

    rows = list(VARIABLES.items())
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
