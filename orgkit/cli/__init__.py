"""The `orgkit` command line: a thin layer of click commands over the library.

Each module in `COMMAND_MODULES` defines its commands and registers them on
`main`; heavy libraries (numpy, fastembed) are imported inside the commands
that need them so that start-up stays light.
"""

from __future__ import annotations

import importlib

import click

from .. import __version__

COMMAND_MODULES = ("graph", "retrieve", "edit", "doctor", "tangle")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="orgkit")
def main() -> None:
    """Deep, fast memory over plain org files."""


for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}").register(main)
