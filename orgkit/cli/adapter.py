"""Click commands made from the operation registry: options, help and defaults all come from it.

A command takes its operation's parameters (positional ones as arguments, the
rest as options), plus `--notes`, `--state-dir` and `--json`. Values are passed
on as the text the user typed: the registry validates them, so a bad value
gets the same message here as from `serve` or MCP (a usage error, exit 2).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

from ..ops import Op, OpContext, call
from ..ops.boundary import read_limited, setting
from ..ops.spec import Param
from ..roles import OWNER
from .common import common_options, emit, handle_errors, json_option, warn

Render = Callable[[Any, dict], str]


def _help(param: Param) -> str:
    shown = param.default if param.default not in (None, "", False) else None
    return f"{param.help}  [default: {shown}]" if shown is not None else param.help


_METAVARS = {"integer": "N", "number": "X", "array": "A,B", "object": "JSON", "path": "PATH"}


def _click_params(op: Op) -> list[click.Parameter]:
    out: list[click.Parameter] = []
    for param in op.params:
        metavar = param.metavar or _METAVARS.get(param.type, param.name.upper())
        if param.enum and not param.metavar:
            metavar = f"[{'|'.join(param.enum)}]"
        if param.positional:
            many = param.type == "array" or param.words
            out.append(click.Argument([param.name], nargs=-1 if many else 1, required=param.required,
                                      metavar=metavar))
        elif param.type == "boolean":
            out.append(click.Option([param.option, param.name], is_flag=True, help=param.help))
        elif param.type == "array":  # `--tag a --tag b` is `--tag a,b`, not the last one alone
            out.append(click.Option([param.option, param.name], multiple=True, metavar=metavar,
                                    help=_help(param)))
        else:
            out.append(click.Option([param.option, param.name], default=None, metavar=metavar,
                                    help=_help(param)))
    return out


def _given(ctx: OpContext, op: Op, values: dict[str, Any]) -> dict[str, Any]:
    """The parameters the user gave, as the registry takes them (None: not given).

    `-` for a parameter that takes standard input reads it, up to the parameter's
    size limit and one byte more (`--body - < /dev/zero` is one error line).
    """
    given: dict[str, Any] = {}
    for param in op.params:
        value = values.get(param.name)
        if param.positional and isinstance(value, tuple):
            value = (" ".join(value) if param.words else list(value)) if value else None
        elif isinstance(value, tuple):  # an array option given once or more, each comma-separated
            value = ",".join(value) if value else None
        if param.type == "boolean" and value is False:
            value = None
        if param.stdin and param.max_bytes and value == "-":  # a stdin parameter always has its limit
            limit = setting(ctx, op, param.max_bytes)
            value = read_limited(sys.stdin.buffer, limit, f"{param.option} - (standard input)", param.max_bytes)
        given[param.name] = value
    return given


def _progress(ctx: OpContext) -> Callable[[], None]:
    """Embedding progress on stderr (a bar on a terminal, plain lines otherwise); returns its closer."""
    from .progress import ProgressReport

    report = ProgressReport()
    ctx.progress = report
    return report.close


def run_op(op: Op, values: dict[str, Any], render: Render | None) -> None:
    """Validate, run and print one operation: result on stdout, warnings and errors on stderr."""
    notes, state_dir, as_json = values.pop("notes_dir", None), values.pop("state_dir", None), values.pop("as_json")
    ctx = OpContext(notes, {"state_dir": state_dir})
    ctx.on_wait = lambda: warn("another orgkit index is running; waiting for it")
    close = _progress(ctx)
    try:  # a ParamError is one line and exit status 2 (handle_errors, by the one table)
        outcome = call(ctx, op.name, _given(ctx, op, values), from_text=True, identity=OWNER)
    finally:
        close()
        ctx.close()
    for message in outcome.warnings:
        warn(message)
    emit(outcome.result, as_json or render is None, lambda r: render(r, values) if render else "")
    for message in outcome.errors:
        click.echo(f"orgkit: error: {message}", err=True)
    if outcome.failed:
        sys.exit(1)


def command(op: Op, render: Render | None, name: str) -> click.Command:
    """The click command of `op`, named `name` (the last word of its command path)."""
    def callback(**values: Any) -> None:
        run_op(op, values, render)

    params = _click_params(op) + (common_options() if op.notes else [json_option()])
    return click.Command(name, callback=handle_errors(callback), params=params,
                         help=op.description, short_help=op.description.split(". ")[0].rstrip("."))
