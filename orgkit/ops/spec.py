"""What an operation is: its name, typed parameters, result, and whether it writes.

One `Op` is the whole contract of an operation for every surface. Parameters
are validated here, once: an unknown field, a wrong type or a value out of
range is a `ParamError` naming the field and the type it must have, with the
same words whether the request came from the shell, a JSON line or MCP.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import OrgkitError
from ..roles import ROLES

if TYPE_CHECKING:
    from .context import OpContext

TYPES = ("string", "integer", "number", "boolean", "array", "object", "path")
_NAMES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
          "array": "a list of strings", "object": "a JSON object", "path": "a path (a string)"}
_JSON_TYPES = {"path": "string"}
INT_LIMIT = 2**31 - 1  # the largest integer any parameter takes (a count, a budget, a line)


class ParamError(OrgkitError):
    """A request's parameters do not fit the operation (a usage error: exit status 2 on the CLI).

    A value a later check refuses (outside its bounds, a path that leaves the
    notes) is an errors.BadParameter, which the table answers alike (HTTP 400).
    """


@dataclass(frozen=True)
class Param:
    """One parameter: its JSON type, default, bounds and help, and how the shell gives it.

    `positional` makes it a command-line argument instead of an option; a
    positional string with `words` takes several words joined by spaces
    (`orgkit scan two words`). An array given as an option is comma-separated
    (or the option repeated); an object is given as JSON text. `stdin` lets `-` stand for standard input.

    The boundary of an untrusted caller (`serve`, MCP) is declared here too:
    `cli_only` leaves the parameter out of every other surface's schema;
    `paths` says the value names files ("file": every value; "name": a name,
    or a file when it looks like a path; a `path` type is "file"), which such
    a caller may name only inside the notes dir (or the directories of the
    setting `roots`); `max_chars` and `max_bytes` name the setting that bounds
    a string's length; `pattern` is a regular expression the whole value
    must match (an ID that is joined into a path), said as `pattern_help`.
    `roles` pairs values with the least role a caller of the team server needs
    to give them (a deposit in the human lane needs a reviewer); `ops.call`
    checks them with the operation's own role.
    """

    name: str
    type: str
    help: str
    default: Any = None
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    enum: tuple[str, ...] | None = None
    positional: bool = False
    words: bool = False
    flag: str | None = None
    stdin: bool = False
    metavar: str | None = None
    cli_only: bool = False
    paths: str | None = None
    roots: str | None = None
    max_chars: str | None = None
    max_bytes: str | None = None
    pattern: str | None = None
    pattern_help: str = ""
    roles: tuple[tuple[Any, str], ...] = ()

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter {self.name}: type must be one of {', '.join(TYPES)}")
        if self.type == "boolean" and self.default not in (None, False):
            raise ValueError(f"parameter {self.name}: a boolean defaults to false (a flag turns it on)")
        if self.stdin and not self.max_bytes:
            raise ValueError(f"parameter {self.name}: standard input needs a size limit (max_bytes)")
        if self.type == "path" and self.paths is None:
            object.__setattr__(self, "paths", "file")

    @property
    def option(self) -> str:
        """The command-line option that gives this parameter."""
        return self.flag or "--" + self.name.replace("_", "-")

    def type_name(self) -> str:
        return _NAMES[self.type]

    def schema(self) -> dict[str, Any]:
        """This parameter as a JSON Schema property."""
        out: dict[str, Any] = {"type": _JSON_TYPES.get(self.type, self.type), "description": self.help}
        if self.type == "array":
            out["items"] = {"type": "string"}
            if self.required:
                out["minItems"] = 1
        if self.enum:
            out["enum"] = list(self.enum)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        elif self.type == "integer":
            out["maximum"] = INT_LIMIT
        if self.pattern is not None:
            out["pattern"] = self.pattern
        if self.default is not None or self.type == "boolean":
            out["default"] = bool(self.default) if self.type == "boolean" else self.default
        return out


@dataclass(frozen=True)
class Op:
    """One operation, declared once for the CLI, `serve`, MCP and Emacs.

    `run(ctx, args)` gets validated arguments (every parameter present,
    defaults filled in) and returns the result document; it reports warnings
    and partial failures through `ctx`. `cli` is the command path (default:
    the name; None: no command), `aliases` are older names `serve` still
    answers to, `notes` says whether it works on a notes directory, and `mcp`
    whether it is an MCP tool (an agent's tool should not write outside the
    notes); `mcp_setting` names a boolean setting that must be on for MCP to
    offer it (review decisions: `mcp.allow_review`). `capability` names the
    capability the operation belongs to: while it is off, the operation is
    absent from every listing and refused when called. `config_problems_ok`
    runs it even when a config file is wrong (`config`, which shows them).
    `cli_only` says why only the user (the command line) may run it: every other
    surface (serve, MCP, HTTP) is refused whatever it offers. `role` is the least
    role (orgkit.roles.ROLES) a caller needs for it, stated by every operation:
    there is no default, so no operation is open because nobody thought of it.
    `result` is the result's shape in the notation results.py reads into the
    JSON Schema MCP publishes. Of an operation that writes, `destructive` says it
    may change or remove what is already there (not only add), and `idempotent`
    that calling it again with the same arguments changes nothing more; MCP
    gives both to clients as tool annotations. `writes_notes` False says an
    operation that writes keeps records only (recall: its audit line), never a
    note file, so a warm process's next call need not look at the files again.
    `progress` says it reports how
    far it is through `ctx.progress` (MCP sends that as progress notifications).
    `rate` names the kind of call a server limits per token (ops/rates.py:
    "deposit", or "read" for a read that costs the server much).
    """

    name: str
    description: str
    run: Callable[["OpContext", dict[str, Any]], Any]
    params: tuple[Param, ...] = ()
    result: str = ""
    writes: bool = False
    writes_notes: bool = True
    cli: tuple[str, ...] | None = ()
    aliases: tuple[str, ...] = ()
    notes: bool = True
    mcp: bool = True
    capability: str | None = None
    mcp_setting: str | None = None
    config_problems_ok: bool = False
    role: str = ""
    cli_only: str | None = None
    destructive: bool = False
    idempotent: bool = False
    progress: bool = False
    rate: str | None = None
    check: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"operation {self.name}: state its role, one of {', '.join(ROLES)} "
                             f"(got {self.role!r}); no operation takes one by default")

    @property
    def command(self) -> tuple[str, ...] | None:
        return (self.cli or (self.name,)) if self.cli is not None else None

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def params_on(self, surface: str) -> tuple[Param, ...]:
        """The parameters `surface` offers (those for the command line only left out elsewhere)."""
        return tuple(p for p in self.params if surface == "cli" or not p.cli_only)

    def schema(self, surface: str = "mcp") -> dict[str, Any]:
        """The JSON Schema of this operation's parameters on `surface` (built once: treat it as read-only)."""
        built = self.__dict__.setdefault("_schemas", {})
        if surface not in built:
            params = self.params_on(surface)
            built[surface] = {
                "type": "object",
                "properties": {p.name: p.schema() for p in params},
                "required": [p.name for p in params if p.required],
                "additionalProperties": False,
            }
        return built[surface]

    def result_schema(self) -> dict[str, Any]:
        """The JSON Schema of this operation's result, read from `result` (read-only)."""
        from .results import result_schema

        return result_schema(self.result)

    def output_schema(self) -> dict[str, Any]:
        """The JSON Schema of a whole answer, as every surface gives it: `{result, warnings, errors?}`."""
        built = self.__dict__.get("_output")
        if built is None:
            texts = {"type": "array", "items": {"type": "string"}}
            built = {"type": "object",
                     "properties": {"result": self.result_schema(), "warnings": texts, "errors": texts},
                     "required": ["result", "warnings"]}
            self.__dict__["_output"] = built
        return built

    def describe(self, surface: str = "cli") -> dict[str, Any]:
        """The operation as `orgkit ops --json` (or `serve`'s `ops`) lists it; `returns` is the JSON
        Schema of its whole answer, the `outputSchema` of its MCP tool."""
        return {"name": self.name, "description": self.description,
                "command": list(self.command) if self.command else None, "mcp": self.mcp,
                "writes": self.writes, "result": self.result, "aliases": list(self.aliases),
                "notes": self.notes, "positional": [p.name for p in self.params_on(surface) if p.positional],
                "options": {p.name: p.option for p in self.params_on(surface) if not p.positional},
                "parameters": self.schema(surface), "returns": self.output_schema()}


def _shown(value: Any) -> str:
    """A value as the user wrote it, in JSON (the same on every surface)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text)} characters)"


def _from_text(param: Param, value: Any) -> Any:
    """A value typed on the command line, as the parameter's JSON type."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if param.type == "integer":
            return int(text)
        if param.type == "number":
            return float(text)
    except ValueError:
        return value
    if param.type == "array":
        return [part.strip() for part in text.split(",") if part.strip()]
    if param.type == "object":
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def check_value(param: Param, value: Any) -> Any:
    """`value` if it fits `param`, else a ParamError naming the field and its type."""
    def wrong(expected: str) -> ParamError:
        return ParamError(f"{param.name!r} must be {expected}, not {_shown(value)}")

    kind = param.type
    if kind in ("string", "path"):
        if not isinstance(value, str):
            raise wrong(param.type_name())
        _check_text(param, value)
        if param.pattern is not None and not re.fullmatch(param.pattern, value):
            raise ParamError(f"{param.name!r} must be {param.pattern_help or 'of the form ' + param.pattern}, "
                             f"not {_shown(value[:80])}")
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise wrong(param.type_name())
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong(param.type_name())
        value = float(value)
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise wrong(param.type_name())
    elif kind == "array":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise wrong(param.type_name())
        for item in value:
            _check_text(param, item)
        if param.required and not value:
            raise wrong("a non-empty list of strings")
    elif kind == "object" and not isinstance(value, dict):
        raise wrong(param.type_name())
    if param.enum is not None and value not in param.enum:
        raise wrong(f"one of {', '.join(param.enum)}")
    if param.minimum is not None and value < param.minimum:
        raise wrong(f"{param.type_name()} of at least {param.minimum:g}")
    if param.maximum is not None and value > param.maximum:
        raise wrong(f"{param.type_name()} of at most {param.maximum:g}")
    if kind == "integer" and param.maximum is None and abs(value) > INT_LIMIT:
        raise wrong(f"{param.type_name()} of at most {INT_LIMIT}")
    return value


def _check_text(param: Param, text: str) -> None:
    """Refuse what no file, query or ID may hold: a NUL, a lone surrogate (not Unicode text)."""
    if "\0" in text:
        raise ParamError(f"{param.name!r} must not contain a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ParamError(f"{param.name!r} holds a lone surrogate (U+{ord(text[exc.start]):04X}) at character "
                         f"{exc.start}: not Unicode text") from None


def validate(op: Op, given: Mapping[str, Any], *, from_text: bool = False, surface: str = "cli") -> dict[str, Any]:
    """Every parameter of `op`, from `given` or its default; ParamError on the first misfit.

    `from_text` accepts command-line text for numbers, lists and objects.
    A null (None) value counts as not given. A parameter `surface` does not
    offer is an unknown field there.
    """
    if not isinstance(given, Mapping):
        raise ParamError(f"the parameters of {op.name} must be a JSON object, not {_shown(given)}")
    offered = op.params_on(surface)
    known = {p.name for p in offered}
    unknown = sorted(str(k) for k in given if k not in known)
    if unknown:
        fields = ", ".join(p.name for p in offered) or "none"
        raise ParamError(f"unknown field {unknown[0][:100]!r} for {op.name} (fields: {fields})")
    args: dict[str, Any] = {}
    for param in op.params:
        value = given.get(param.name)
        if value is None:
            if param.required:
                raise ParamError(f"{param.name!r} is required ({param.type_name()})")
            args[param.name] = False if param.type == "boolean" else param.default
            continue
        args[param.name] = check_value(param, _from_text(param, value) if from_text else value)
    if op.check is not None:
        op.check(args)
    return args
