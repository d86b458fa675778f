"""Every operation orgkit offers, declared once; the CLI, `serve`, MCP and Emacs adapt them.

An operation is an `Op` (spec.py): a name, a description, typed parameters
(`Param`: type, default, bounds, enum, help, and how the shell gives it), the
shape of its result, and whether it writes. `validate` checks a request against
it in one place, and `Op.schema()` is its JSON Schema. Operations run on an
`OpContext` (context.py): the resolved Config and the warm index, model,
vectors and skills, the same for a one-shot command and a long-lived server.

To add an operation:
1. In the module of its concern (or a new one listed in `MODULES` below), write
   `def run(ctx, args) -> result` that calls the library (never click, never
   print); report warnings with `ctx.warn`, partial failures with `ctx.error`,
   and raise OrgkitError for a failed call.
2. Declare it: `declare(Op("name", "what it does", run, params=(Param(...), ...),
   result="[{id, title}]", writes=False, role="reader"))`. The role (the least
   one a caller needs, orgkit/roles.py) has no default: an operation without one
   cannot be declared.
That is all: `orgkit name` (or the `cli=` path), the `{"op": "name"}` request,
the MCP tool and `orgkit ops --json` come from the declaration, and
tests/test_parity.py checks a read-only one on all three surfaces. A
human-readable rendering for the shell may be added to `orgkit/cli/render.py`
(JSON otherwise). `mcp=False` keeps an operation from agents (one that writes
files by path), `mcp_setting=` offers it over MCP only when a setting is on,
`capability=` ties it to a capability that can be switched off, and `check=`
validates a rule across parameters (a ParamError, like any bad parameter).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..deadline import within
from ..config import Config
from ..errors import BadParameter, DatabaseUnavailable, OrgkitError, Refused
from ..instructions import deposits_waiting_from
from .boundary import enforce
from .context import OpContext
from ..roles import Identity
from .shown import error_for_caller, private, texts_for_caller
from .spec import Op, Param, ParamError, validate

# The modules that declare operations, imported (cheaply: they load the library lazily) on first use.
MODULES = ("graph", "retrieve", "index", "database", "edit", "doctor", "model", "tangle", "skills", "extract",
           "memory", "feedback", "meta",
           "tokens")

# What a machine without the notes answers from a shared database (config: has_notes).
FROM_DATABASE = frozenset({"search", "read", "context", "recall", "db_status", "db_migrate", "config",
                           "token_add", "token_list", "token_revoke"})



def _deposits_waiting(config: Config) -> frozenset[str]:
    """The memory flow's deposits waiting for review, for the layers under it that read instructions."""
    from ..memory.store import pending_deposit_paths

    return pending_deposit_paths(config)


deposits_waiting_from(_deposits_waiting)

_REGISTRY: dict[str, Op] = {}
_ALIASES: dict[str, str] = {}
_loaded = False


def declare(op: Op) -> Op:
    """Add `op` to the registry; a second operation of the same name is a programming error."""
    if op.name in _REGISTRY or op.name in _ALIASES:
        raise ValueError(f"operation {op.name!r} is declared twice")
    _REGISTRY[op.name] = op
    for alias in op.aliases:
        _ALIASES[alias] = op.name
    return op


def registry() -> dict[str, Op]:
    """Every declared operation by name, in declaration order."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in MODULES:
            importlib.import_module(f"{__name__}.{module}")
    return _REGISTRY


def get(name: Any) -> Op:
    """The operation called `name` (or an alias of it); an OrgkitError listing them otherwise."""
    ops = registry()
    if isinstance(name, str) and (name in ops or name in _ALIASES):
        return ops[_ALIASES.get(name, name)]
    raise ParamError(f"unknown op {name!r} (ops: {', '.join(ops)})")


def capability_on(op: Op, config: Any) -> bool:
    """Whether `op` is offered under `config`: always, unless its capability is off."""
    if op.capability is None:
        return True
    from ..skills.registry import first_party_enabled

    return first_party_enabled(op.capability, config)


def offered(config: Any) -> dict[str, Op]:
    """The operations a listing shows under `config` (those of a disabled capability left out)."""
    return {name: op for name, op in registry().items() if capability_on(op, config)}


def _gate(op: Op, given: Mapping[str, Any], config: Any) -> None:
    """Refuse an operation of a disabled capability, and any request carrying a schema then."""
    from ..extract.capability import HOW_TO_ENABLE, NAME, enabled

    if op.capability is not None and not capability_on(op, config):
        raise OrgkitError(f"{op.name} belongs to the {op.capability} capability, which is off: "
                          f"{HOW_TO_ENABLE if op.capability == NAME else 'see orgkit config'}")
    if isinstance(given, Mapping) and given.get("schema") is not None and not enabled(config):
        raise ParamError(f"a request with a schema needs the {NAME} capability, which is off: {HOW_TO_ENABLE}")


def refusal(op: Op, identity: Identity | None, args: Mapping[str, Any] | None = None) -> str | None:
    """Why `identity` (orgkit.roles.Identity) may not call `op`, with `args` when known; None when it may.

    The one rule of who may call what: the operation's least role
    (`Op.role`), and a higher one for the parameter values that need it
    (`Param.roles`). Adapters ask it only to decide what to show, and to guard
    what they serve besides tools (MCP prompts and resources: by the operation
    that answers them). No identity: refused.
    """
    if identity is None:
        return f"{op.name} needs the {op.role} role, and the request names no caller"
    if not identity.may(op.role):
        return f"{op.name} needs the {op.role} role (this token's role is {identity.role})"
    for param in op.params:
        value = args.get(param.name) if args else None
        needed = dict(param.roles).get(value) if param.roles else None
        if needed is not None and not identity.may(needed):
            return (f"{param.name} {value!r} is for people with the {needed} role "
                    f"(this token's role is {identity.role})")
    return None


def _authorize(op: Op, identity: Identity, args: Mapping[str, Any] | None = None) -> None:
    refused = refusal(op, identity, args)
    if refused is not None:
        raise Refused(refused)


@dataclass
class Outcome:
    """What a call gives back: the result, its warnings, and partial failures."""

    result: Any
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed: bool = False


def call(ctx: OpContext, name: str, given: Mapping[str, Any], *, from_text: bool = False,
         identity: Identity | None = None, progress: Any = None) -> Outcome:
    """Validate `given` against operation `name` and run it on `ctx`.

    `identity` is the caller (orgkit.roles.Identity): `OWNER` on the command
    line, `STDIO` for `serve` and `mcp` on a pipe, a token's for the team
    server. A call without one is refused (no surface is open by omission), and
    so is a caller whose role does not allow the call, for every surface; the
    operation records a token's name as the actor, whatever the request says.
    `progress` (a server's, for this one call) replaces `ctx.progress` while the call runs.

    Raises Refused for a caller without the role, ParamError for bad parameters
    and OrgkitError when the call fails as a whole; the adapters answer each as
    the one table says (ops/answers.py).
    """
    op = get(name)
    if not isinstance(identity, Identity):
        raise Refused(f"{op.name}: refused: the call names no caller (every surface passes one: the owner on the "
                      "command line, a token's on the server)")
    try:
        return _call(ctx, op, given, from_text, identity, progress)
    except BadParameter as exc:
        raise error_for_caller(ctx, _named(exc, op, ctx.surface)) from None
    except Exception as exc:  # what a reader may see of any failure: no host, no path outside the notes
        raise error_for_caller(ctx, exc)


def _named(exc: BadParameter, op: Op, surface: str) -> BadParameter:
    """`exc` naming its parameter as `surface` calls it: the option on the command line."""
    param = next((p for p in op.params if p.name == exc.param.strip("'")), None)  # bare, or quoted as a name
    if param is None or surface != "cli" or param.positional:
        return exc
    return BadParameter(param.option, exc.rest)


def _call(ctx: OpContext, op: Op, given: Mapping[str, Any], from_text: bool, identity: Identity,
          progress: Any) -> Outcome:
    _authorize(op, identity)
    if op.cli_only and not ctx.trusted:
        raise OrgkitError(f"{op.name} {op.cli_only}: the command line only")
    config = ctx.loaded_config() if op.config_problems_ok else ctx.config if op.notes else ctx.optional_config()
    _gate(op, given, config)
    if op.notes and op.name not in FROM_DATABASE and config is not None and not config.has_notes:
        where = "the notes directory" if private(ctx) else config.notes.absolute()  # the path the user gave, in full
        raise OrgkitError(f"{op.name} needs the notes, and {where} is not here: this machine answers "
                          f"{', '.join(sorted(FROM_DATABASE))} from the database")
    args = enforce(ctx, op, validate(op, given, from_text=from_text, surface=ctx.surface))
    _authorize(op, identity, args)
    limits = ctx.process.limits
    if limits is not None:  # a server's caller: its rate, after its role
        limits.take(op.rate, identity.name)
    if op.writes:
        try:
            return _run(ctx, op, args, identity, progress)
        finally:
            if op.writes_notes and ctx.warm and config is not None and config.has_notes:  # searchable at once
                ctx.held.notes_written()
    try:
        return _run(ctx, op, args, identity, progress)
    except DatabaseUnavailable:  # a connection the server dropped while it was away: once more, afresh
        return _run(ctx, op, args, identity, progress)


def _run(ctx: OpContext, op: Op, args: dict[str, Any], identity: Any, progress: Any) -> Outcome:
    with ctx.call(identity, progress) as state:
        result = op.run(ctx, args)
        return Outcome(result, texts_for_caller(ctx, state.warnings), texts_for_caller(ctx, state.errors),
                       state.failed)


def call_within(ctx: OpContext, name: str, given: Mapping[str, Any], identity: Identity | None = None,
                progress: Any = None) -> Outcome:
    """`call` under the server's per-call deadline (`serve.call_timeout`): an error in time, never a hang."""
    return within(ctx.loaded_config()["serve.call_timeout"], str(name)[:100],
                  lambda: call(ctx, name, given, identity=identity, progress=progress))


__all__ = ["MODULES", "Op", "OpContext", "OrgkitError", "Outcome", "Param", "ParamError", "call", "call_within",
           "capability_on", "declare", "get", "offered", "refusal", "registry", "validate"]
