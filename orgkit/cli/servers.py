"""`orgkit serve` and `orgkit mcp`: the long-lived servers over the operation registry."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import click

from ..ops import OpContext
from ..ops.warm import ProcessState
from .common import handle_errors


def server_context(notes_dir: Path | None, state_dir: Path | None, recheck_after: float | None, *,
                   resume: bool = True) -> OpContext:
    """A warm context whose relative paths start at the notes directory; a bad notes dir fails now.
    With `resume`, deposits left unprocessed are picked up (a server of several processes leaves
    that to the worker that leads)."""
    ctx = OpContext(notes_dir, {"state_dir": state_dir, "serve.recheck_after": recheck_after}, warm=True,
                    process=ProcessState())  # held for the server's life: what its calls keep between them
    ctx.base = ctx.root
    if resume:
        resume_memory(ctx)
    return ctx


def blas_settings() -> None:
    """Vector products in a server run on one OpenBLAS thread, and numpy finds its affinity setting made
    (both read when numpy first loads, which is after this; a server's worker processes inherit them).

    OpenBLAS splits a product over every core, and its threads then spin,
    waiting for the next one, longer than a server waits between calls: a warm
    context call cost the machine twice the CPU it used. One thread takes a few
    milliseconds more only over tens of thousands of passages, and a server
    busy with several calls has the other cores at work anyway.

    numpy's first import sets OPENBLAS_MAIN_FREE with putenv and then unsets
    it, in whichever thread imports it first: in a server, a worker thread,
    while others read the environment or start processes. Set here, in the
    main thread before any other starts, numpy leaves the environment alone.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_MAIN_FREE", "1")


def resume_memory(ctx: OpContext) -> None:
    """Pick up deposits a stopped server or a crash left unprocessed (when the notes use the memory flow)."""
    from ..memory.store import in_use

    if in_use(ctx.config):
        ctx.process.catch_ups.start(ctx.config, ctx.embedder, ctx.held.memo)


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
    @click.option("--workers", type=click.IntRange(min=1), default=None,
                  help="With --http: worker processes serving the one address (one of them runs background "
                       "embedding and the librarian) [default: the number of cores].")
    @handle_errors
    def serve_command(recheck_after: float | None, notes_dir: Path | None, state_dir: Path | None,
                      address: str | None, workers: int | None) -> None:
        """Answer JSON requests on stdin, one a line: {"op": NAME, ...} for every op in `orgkit ops`."""
        blas_settings()
        if address is not None:
            from ..http import default_workers, run

            count = workers or default_workers()
            run(partial(server_context, notes_dir, state_dir, recheck_after, resume=count == 1), address, count)
            return
        if workers is not None:
            raise click.UsageError("--workers goes with --http: `serve` on stdio is one process")
        from ..serve import serve

        serve(server_context(notes_dir, state_dir, recheck_after), sys.stdin.buffer, sys.stdout.buffer)

    @main.command("mcp")
    @_options
    @handle_errors
    def mcp_command(recheck_after: float | None, notes_dir: Path | None, state_dir: Path | None) -> None:
        """A Model Context Protocol server on stdio: the operations as tools, skills as prompts, notes as resources."""
        blas_settings()
        from ..mcp import run_stdio

        run_stdio(server_context(notes_dir, state_dir, recheck_after))
