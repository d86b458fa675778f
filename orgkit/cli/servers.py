"""`orgkit serve` and `orgkit mcp`: the long-lived servers over the operation registry."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..ops import OpContext
from .common import handle_errors


def server_context(notes_dir: Path | None, state_dir: Path | None, recheck_after: float | None) -> OpContext:
    """A warm context whose relative paths start at the notes directory; a bad notes dir fails now."""
    ctx = OpContext(notes_dir, {"state_dir": state_dir, "serve.recheck_after": recheck_after}, warm=True)
    ctx.base = ctx.root
    resume_memory(ctx)
    return ctx


def resume_memory(ctx: OpContext) -> None:
    """Pick up deposits a stopped server or a crash left unprocessed (when the notes use the memory flow)."""
    from ..memory.store import in_use

    if in_use(ctx.config):
        from ..memory.worker import in_background

        in_background(ctx.config, ctx.embedder)


def _options(func):
    for option in reversed([
        click.option("--recheck-after", type=float, default=None,
                     help="Seconds between checks of the files for changes (0: before every request) "
                          "[default: serve.recheck_after, 1].") ,
        click.option("--notes", "notes_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Notes directory (default: $ORGKIT_NOTES, else ./notes)."),
        click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Where the index lives (default: $ORGKIT_STATE_DIR, else NOTES/.orgkit)."),
    ]):
        func = option(func)
    return func


def register(main: click.Group) -> None:
    @main.command("serve")
    @_options
    @click.option("--http", "address", metavar="HOST:PORT", default=None,
                  help="Serve over HTTP instead (the team server: MCP at /mcp, the operations at /ops/NAME, the "
                       "review page at /; bearer tokens from `orgkit token add`). HOST defaults to 127.0.0.1.")
    @handle_errors
    def serve_command(recheck_after: float | None, notes_dir: Path | None, state_dir: Path | None,
                      address: str | None) -> None:
        """Answer JSON requests on stdin, one a line: {"op": NAME, ...} for every op in `orgkit ops`."""
        ctx = server_context(notes_dir, state_dir, recheck_after)
        if address is not None:
            from ..http import run

            run(ctx, address)
            return
        from ..serve import serve

        serve(ctx, sys.stdin.buffer, sys.stdout.buffer)

    @main.command("mcp")
    @_options
    @handle_errors
    def mcp_command(recheck_after: float | None, notes_dir: Path | None, state_dir: Path | None) -> None:
        """A Model Context Protocol server on stdio: the operations as tools, skills as prompts, notes as resources."""
        from ..mcp import run_stdio

        run_stdio(server_context(notes_dir, state_dir, recheck_after))
