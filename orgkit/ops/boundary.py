"""The boundary every call passes, by what its parameters declare: bounds for all, the notes for agents.

The command line is the user; `serve`, MCP (and any server to come) speak for
clients that may be hostile. So, after a request is validated:
- every caller gets the length bounds a parameter declares (`max_chars`,
  `max_bytes`: a query past `query.max_chars`, a body past
  `deposit.max_bytes`), as one clear error;
- an untrusted caller (any surface but the command line) names files only
  inside the notes dir: each value of a parameter declared `paths` is
  resolved from the notes dir, symlinks followed, and refused outside it and
  outside the directories of the setting the parameter names in `roots`
  (extraction sources: `extract.source_roots`, a user setting).
Operations keep no rules of their own about who calls; they declare.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from ..config import without_notes
from ..confine import confined, looks_like_path
from ..errors import BadParameter, OrgkitError
from .context import OpContext
from .spec import Op, Param


def setting(ctx: OpContext, op: Op, key: str) -> Any:
    """A setting's value for this call (from the environment and defaults when the op needs no notes)."""
    config = ctx.config if op.notes else ctx.optional_config()
    return config[key] if config is not None else without_notes(key)


def enforce(ctx: OpContext, op: Op, args: dict[str, Any]) -> dict[str, Any]:
    """`args` within their bounds, and within the notes for an untrusted caller; an OrgkitError otherwise."""
    for param in op.params:
        value = args.get(param.name)
        if value is None or not isinstance(value, (str, list)):
            continue
        for text in value if isinstance(value, list) else [value]:
            _bounded(ctx, op, param, text)
        if param.paths and not ctx.trusted:
            for text in value if isinstance(value, list) else [value]:
                _check_inside(ctx, op, param, text)
    return args


def _bounded(ctx: OpContext, op: Op, param: Param, text: str) -> None:
    if param.max_chars and len(text) > (limit := setting(ctx, op, param.max_chars)):
        raise BadParameter(f"{param.name!r}", f" is {len(text)} characters long, over {param.max_chars} ({limit})")
    if param.max_bytes and len(text) > (limit := setting(ctx, op, param.max_bytes)) // 4:
        size = len(text.encode("utf-8"))
        if size > limit:
            raise BadParameter(f"{param.name!r}", f" is {size} bytes, over {param.max_bytes} ({limit})")


def _check_inside(ctx: OpContext, op: Op, param: Param, text: str) -> None:
    """Refuse a file outside the notes (and the param's roots), as the op will resolve it; a name passes."""
    if param.paths == "name" and not looks_like_path(text):
        return
    roots = [ctx.root]
    if param.roots:
        roots += [ctx.root / Path(r).expanduser() for r in setting(ctx, op, param.roots)]
    confined(ctx.path(text), roots, param.name)


def file_inside(ctx: OpContext, text: str, what: str) -> Path:
    """A file named inside a parameter's content (a verdicts file's sources), as the op will read it:
    anywhere for the user, only inside the notes for any other caller (the check `paths` gets)."""
    path = ctx.path(text)
    return path if ctx.trusted else confined(path, [ctx.root], what)


def read_limited(stream: IO[bytes], limit: int, what: str, setting_key: str) -> str:
    """At most `limit` bytes of `stream` as UTF-8 text: one byte more is read to see that it is over."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise OrgkitError(f"{what} is over {setting_key} ({limit} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OrgkitError(f"{what} is not UTF-8 text (byte {exc.start})") from None
