"""A safe evaluator for the pure Emacs Lisp that header arguments use.

Literate configurations compute target names with forms such as
`(concat (file-name-sans-extension (buffer-file-name)) ".elv")`.  Such a form reads
nothing but the org file's name, the environment and literals, and writes nothing, so
orgkit can compute its value exactly as Emacs does.  Anything outside the small set of
functions and special forms below (or a form Emacs would reject) is not evaluated: the
caller refuses the tangle and names the form.

What reads the machine (the environment, the home directory, the files, the
platform) is a capability of the `Environment`: `machine` is on only for the
owner at the command line, who gets Emacs' answer, as Emacs gives its user.
For any other caller (a server's) such a form is `Unreachable`: the tangle is
refused naming the header, and no error says what a value would have been.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, cast

from ..org.lisp import NIL, T, Cons, Symbol, Vector, prin1, princ
from .paths import abbreviate_file_name, expand_file_name, file_name_directory, file_relative_name


class NotPure(Exception):
    """A form orgkit does not evaluate (it may run code, or is simply not known here).

    A function raises it with no form when only some uses of it are pure; the
    evaluator then names the calling form.
    """

    def __init__(self, form: object = None) -> None:
        super().__init__("" if form is None else prin1(form))
        self.form = form


class LispSignal(Exception):
    """An error Emacs itself would signal while evaluating the form."""


class Unreachable(Exception):
    """A form that reads the machine, evaluated for a caller who may not (every caller but the owner)."""

    def __init__(self, form: object, reads: str) -> None:
        super().__init__(f"{prin1(form)} reads {reads}, which header Lisp does only for the owner "
                         "on the command line")


@dataclass(frozen=True)
class Environment:
    """What a header form may read: the org buffer's file and directory, and with `machine`
    (the owner on the command line only) the environment, the home directory and the files."""

    buffer_file_name: str
    default_directory: str
    machine: bool = False

    @classmethod
    def for_file(cls, path: str, machine: bool = False) -> "Environment":
        """The environment of a buffer visiting PATH (an absolute file name)."""
        return cls(buffer_file_name=path, default_directory=file_name_directory(path) or "/", machine=machine)

    def reach(self, form: object, reads: str) -> None:
        """Go on only with the `machine` capability: else `form` is Unreachable (it `reads` the machine)."""
        if not self.machine:
            raise Unreachable(form, reads)


def evaluate(form: object, env: Environment) -> object:
    """The value of FORM, or NotPure / LispSignal."""
    if isinstance(form, (str, int, float, Vector)):
        return form
    if isinstance(form, Symbol):
        return _variable(form, env)
    if isinstance(form, Cons) or not isinstance(form, list) or not isinstance(form[0], Symbol):
        raise NotPure(form)
    head, args = form[0].name, form[1:]
    special = _SPECIAL_FORMS.get(head)
    if special is not None:
        return special(args, env, form)
    function = _FUNCTIONS.get(head)
    if function is None:
        raise NotPure(form)
    values = [evaluate(arg, env) for arg in args]
    try:
        inspect.signature(function).bind(env, *values)
    except TypeError:
        raise LispSignal(f"wrong number of arguments in {prin1(form)}") from None
    try:
        return function(env, *values)
    except NotPure as exc:
        if exc.form is None:
            raise NotPure(form) from None
        raise


def truthy(value: object) -> bool:
    """Everything but nil is true."""
    return value != NIL


def _variable(symbol: Symbol, env: Environment) -> object:
    if symbol in (NIL, T) or symbol.name.startswith(":"):
        return symbol
    if symbol.name == "buffer-file-name":
        return env.buffer_file_name
    if symbol.name == "default-directory":
        return env.default_directory
    if symbol.name == "user-emacs-directory":
        env.reach(symbol, "the environment and the home directory")
        return _user_emacs_directory()
    if symbol.name == "system-type":
        env.reach(symbol, "the machine's platform")
        return _system_type()
    raise NotPure(symbol)


def _system_type() -> Symbol:
    """`system-type` of an Emacs built for this platform."""
    if sys.platform.startswith("linux"):
        return Symbol("gnu/linux")
    if sys.platform == "darwin":
        return Symbol("darwin")
    if sys.platform in ("win32", "cygwin"):
        return Symbol("windows-nt" if sys.platform == "win32" else "cygwin")
    return Symbol("berkeley-unix" if "bsd" in sys.platform else sys.platform)


def _user_emacs_directory() -> str:
    """`startup--xdg-or-homedot`: ~/.emacs.d/ unless only the XDG directory exists."""
    dot = "~/.emacs.d/"
    if os.path.exists(expand_file_name(dot, "/")) or os.path.exists(expand_file_name("~/.emacs", "/")):
        return dot
    xdg_home = os.environ.get("XDG_CONFIG_HOME")
    xdg = xdg_home + "/emacs/" if xdg_home else "~/.config/emacs/"
    return xdg if os.path.exists(expand_file_name(xdg, "/")) else dot


# Special forms: arguments are evaluated lazily, as Emacs does.

def _progn(body: list[object], env: Environment) -> object:
    value: object = NIL
    for form in body:
        value = evaluate(form, env)
    return value


def _if(args: list[object], env: Environment, form: object) -> object:
    if len(args) < 2:
        raise LispSignal(f"wrong number of arguments in {prin1(form)}")
    return evaluate(args[1], env) if truthy(evaluate(args[0], env)) else _progn(args[2:], env)


def _when(args: list[object], env: Environment, form: object) -> object:
    if not args:
        raise LispSignal(f"wrong number of arguments in {prin1(form)}")
    return _progn(args[1:], env) if truthy(evaluate(args[0], env)) else NIL


def _unless(args: list[object], env: Environment, form: object) -> object:
    if not args:
        raise LispSignal(f"wrong number of arguments in {prin1(form)}")
    return NIL if truthy(evaluate(args[0], env)) else _progn(args[1:], env)


def _or(args: list[object], env: Environment, form: object) -> object:
    for arg in args:
        value = evaluate(arg, env)
        if truthy(value):
            return value
    return NIL


def _and(args: list[object], env: Environment, form: object) -> object:
    value: object = T
    for arg in args:
        value = evaluate(arg, env)
        if not truthy(value):
            return NIL
    return value


def _cond(args: list[object], env: Environment, form: object) -> object:
    for clause in args:
        if not isinstance(clause, list) or not clause:
            raise NotPure(form)
        test = evaluate(clause[0], env)
        if truthy(test):
            return _progn(clause[1:], env) if len(clause) > 1 else test
    return NIL


def _quote(args: list[object], env: Environment, form: object) -> object:
    if len(args) != 1:
        raise LispSignal(f"wrong number of arguments in {prin1(form)}")
    return args[0]


_SPECIAL_FORMS: dict[str, Callable[[list[object], Environment, object], object]] = {
    "if": _if,
    "when": _when,
    "unless": _unless,
    "or": _or,
    "and": _and,
    "cond": _cond,
    "progn": lambda args, env, form: _progn(args, env),
    "quote": _quote,
}


# Functions: every argument is evaluated first.

def _string(value: object, function: str) -> str:
    if isinstance(value, str):
        return value
    raise LispSignal(f"wrong-type-argument stringp {prin1(value)} in {function}")


def _optional_string(value: object, function: str) -> str | None:
    return None if value == NIL else _string(value, function)


def _concat(env: Environment, *args: object) -> str:
    parts = []
    for arg in args:
        if arg == NIL:
            continue
        if isinstance(arg, str):
            parts.append(arg)
        elif isinstance(arg, (list, Vector)) and all(isinstance(c, int)
                                                      for c in (arg.items if isinstance(arg, Vector) else arg)):
            codes = cast("list[int]", arg.items if isinstance(arg, Vector) else arg)  # ints: checked just above
            parts.append("".join(chr(c) for c in codes))
        else:
            raise LispSignal(f"wrong-type-argument sequencep {prin1(arg)} in concat")
    return "".join(parts)


_FORMAT_SPEC = re.compile(r"%([-+ #0]*)([0-9]*)(?:\.([0-9]+))?([sSdoxXc%])")


def _format(env: Environment, template: object, *args: object) -> str:
    text = _string(template, "format")
    remaining = list(args)

    def directive(match: re.Match[str]) -> str:
        flags, width, precision, kind = match.groups()
        if kind == "%":
            return "%"
        if not remaining:
            raise LispSignal(f"not enough arguments for format string {prin1(text)}")
        value = remaining.pop(0)
        spec = "%" + flags + width
        if kind in "sS":
            shown = princ(value) if kind == "s" else prin1(value)
            return (spec + ("." + precision if precision else "") + "s") % shown
        if kind == "c":
            if not isinstance(value, int):
                raise LispSignal(f"format specifier %c wants a character, got {prin1(value)}")
            return (spec + "s") % chr(value)
        if isinstance(value, float):
            value = int(value)
        if not isinstance(value, int):
            raise LispSignal(f"format specifier %{kind} doesn't match argument type {prin1(value)}")
        return (spec + kind) % value

    out = []
    pos = 0
    for match in re.finditer(r"%", text):
        if match.start() < pos:
            continue
        spec = _FORMAT_SPEC.match(text, match.start())
        if spec is None:
            raise NotPure()
        out.append(text[pos : match.start()])
        out.append(directive(spec))
        pos = spec.end()
    out.append(text[pos:])
    return "".join(out)


_VERSIONS = re.compile(r"(?:\.~[-\w:#@^.]+(?:~[0-9]+)?~|~)\Z")


def _nondirectory(env: Environment, name: object) -> str:
    text = _string(name, "file-name-nondirectory")
    return text[text.rfind("/") + 1 :]


def _directory(env: Environment, name: object) -> object:
    found = file_name_directory(_string(name, "file-name-directory"))
    return NIL if found is None else found


def _extension_match(name: str) -> re.Match[str] | None:
    base = _VERSIONS.sub("", name[name.rfind("/") + 1 :])
    match = re.search(r"\.[^.]*\Z", base)
    return match if match and match.start() != 0 else None


def _sans_extension(env: Environment, name: object) -> str:
    text = _string(name, "file-name-sans-extension")
    match = _extension_match(text)
    if match is None:
        return text
    base = _VERSIONS.sub("", text[text.rfind("/") + 1 :])
    return (file_name_directory(text) or "") + base[: match.start()]


def _extension(env: Environment, name: object, period: object = NIL) -> object:
    text = _string(name, "file-name-extension")
    match = _extension_match(text)
    if match is None:
        return "" if truthy(period) else NIL
    return match.group(0) if truthy(period) else match.group(0)[1:]


def _base(env: Environment, name: object = NIL) -> str:
    """`file-name-base`; Emacs 28 defaults to the buffer's file name."""
    return _sans_extension(env, _nondirectory(env, env.buffer_file_name if name == NIL else name))


def _as_directory(env: Environment, name: object) -> str:
    text = _string(name, "file-name-as-directory")
    return "./" if not text else text if text.endswith("/") else text + "/"


def _directory_file_name(env: Environment, name: object) -> str:
    text = _string(name, "directory-file-name")
    stripped = text.rstrip("/")
    if stripped:
        return stripped
    return "//" if text == "//" else text[:1]


def _homeless(env: Environment, function: str, *names: str) -> None:
    """A file name starting with `~` reads the home directory (the environment, the password file)."""
    if any(name.startswith("~") for name in names):
        env.reach(Symbol(function), "the home directory")


def _expand(env: Environment, name: object, directory: object = NIL) -> str:
    base = env.default_directory if directory == NIL else _string(directory, "expand-file-name")
    _homeless(env, "expand-file-name", base, _string(name, "expand-file-name"))
    if not base.startswith(("/", "~")):
        base = expand_file_name(base, env.default_directory)
    return expand_file_name(_string(name, "expand-file-name"), base)


def _relative(env: Environment, name: object, directory: object = NIL) -> str:
    base = env.default_directory if directory == NIL else _string(directory, "file-relative-name")
    _homeless(env, "file-relative-name", base, _string(name, "file-relative-name"))
    return file_relative_name(_string(name, "file-relative-name"), base, env.default_directory)


def _abbreviate(env: Environment, name: object) -> str:
    env.reach(Symbol("abbreviate-file-name"), "the home directory")
    return abbreviate_file_name(_string(name, "abbreviate-file-name"))


def _buffer_file_name(env: Environment, buffer: object = NIL) -> object:
    if buffer != NIL:
        raise NotPure()
    return env.buffer_file_name


def _getenv(env: Environment, name: object, frame: object = NIL) -> object:
    env.reach(Symbol("getenv"), "the environment")
    value = os.environ.get(_string(name, "getenv"))
    return NIL if value is None else value


def _trim_left(env: Environment, text: object, regexp: object = NIL) -> str:
    if regexp != NIL:
        raise NotPure()
    return _string(text, "string-trim-left").lstrip(" \t\n\r")  # linear, as no regex over a long run is


def _trim_right(env: Environment, text: object, regexp: object = NIL) -> str:
    if regexp != NIL:
        raise NotPure()
    return _string(text, "string-trim-right").rstrip(" \t\n\r")


def _trim(env: Environment, text: object, left: object = NIL, right: object = NIL) -> str:
    return _trim_left(env, _trim_right(env, text, right), left)


def _remove_prefix(env: Environment, prefix: object, text: object) -> str:
    p, s = _string(prefix, "string-remove-prefix"), _string(text, "string-remove-prefix")
    return s[len(p) :] if s.startswith(p) else s


def _remove_suffix(env: Environment, suffix: object, text: object) -> str:
    p, s = _string(suffix, "string-remove-suffix"), _string(text, "string-remove-suffix")
    return s[: len(s) - len(p)] if p and s.endswith(p) else s


def _boolean(value: bool) -> Symbol:
    return T if value else NIL


def _prefix_p(env: Environment, prefix: object, text: object, ignore_case: object = NIL) -> Symbol:
    p, s = _string(prefix, "string-prefix-p"), _string(text, "string-prefix-p")
    return _boolean(s.lower().startswith(p.lower()) if truthy(ignore_case) else s.startswith(p))


def _suffix_p(env: Environment, suffix: object, text: object, ignore_case: object = NIL) -> Symbol:
    p, s = _string(suffix, "string-suffix-p"), _string(text, "string-suffix-p")
    return _boolean(s.lower().endswith(p.lower()) if truthy(ignore_case) else s.endswith(p))


def _string_equal(env: Environment, a: object, b: object) -> Symbol:
    as_text = [v.name if isinstance(v, Symbol) else _string(v, "string=") for v in (a, b)]
    return _boolean(as_text[0] == as_text[1])


def _substring(env: Environment, text: object, start: object = 0, end: object = NIL) -> str:
    s = _string(text, "substring")
    begin = start if isinstance(start, int) else 0 if start == NIL else None
    stop = len(s) if end == NIL else end if isinstance(end, int) else None
    if begin is None or stop is None:
        raise LispSignal("wrong-type-argument integerp in substring")
    begin, stop = (begin + len(s) if begin < 0 else begin), (stop + len(s) if stop < 0 else stop)
    if not 0 <= begin <= stop <= len(s):
        raise LispSignal(f"args-out-of-range {prin1(s)} {start} {prin1(end)}")
    return s[begin:stop]


def _eq(env: Environment, a: object, b: object) -> Symbol:
    """`eq` where identity is knowable: symbols and integers (strings are distinct objects)."""
    for value in (a, b):
        if not isinstance(value, (Symbol, int)) and value != NIL:
            raise NotPure()
    return _boolean(type(a) is type(b) and a == b)


def _equal(env: Environment, a: object, b: object) -> Symbol:
    return _boolean(type(a) is type(b) and a == b)


def _file_name_concat(env: Environment, directory: object, *components: object) -> str:
    """`file-name-concat`: a slash between non-empty parts that lack one."""
    parts = [_string(p, "file-name-concat") for p in (directory, *components) if p != NIL]
    parts = [p for p in parts if p]
    return "".join(p if i == len(parts) - 1 or p.endswith("/") else p + "/" for i, p in enumerate(parts))


def _string_join(env: Environment, strings: object, separator: object = NIL) -> str:
    items = strings if isinstance(strings, list) else [] if strings == NIL else None
    if items is None:
        raise LispSignal(f"wrong-type-argument listp {prin1(strings)} in string-join")
    sep = "" if separator == NIL else _string(separator, "string-join")
    return sep.join(_string(item, "string-join") for item in items)


def _string_replace(env: Environment, old: object, new: object, text: object) -> str:
    o, n, s = (_string(v, "string-replace") for v in (old, new, text))
    if not o:
        raise LispSignal("wrong-length-argument in string-replace")
    return s.replace(o, n)


def _integers(function: str, values: tuple[object, ...]) -> list[int]:
    """Arithmetic on integers only (floats print and round as Emacs', which is not worth copying)."""
    if not all(isinstance(v, int) for v in values):
        if all(isinstance(v, (int, float)) for v in values):
            raise NotPure()
        raise LispSignal(f"wrong-type-argument number-or-marker-p in {function}")
    return [int(v) for v in values if isinstance(v, int)]  # every one, checked above


def _plus(env: Environment, *values: object) -> int:
    return sum(_integers("+", values))


def _minus(env: Environment, *values: object) -> int:
    numbers = _integers("-", values)
    if not numbers:
        return 0
    return -numbers[0] if len(numbers) == 1 else numbers[0] - sum(numbers[1:])


def _times(env: Environment, *values: object) -> int:
    product = 1
    for number in _integers("*", values):
        product *= number
    return product


def _logior(env: Environment, *values: object) -> int:
    result = 0
    for number in _integers("logior", values):
        result |= number
    return result


def _number_to_string(env: Environment, number: object) -> str:
    if isinstance(number, (int, float)) and not isinstance(number, bool):
        return prin1(number)
    raise LispSignal(f"wrong-type-argument numberp {prin1(number)}")


_FUNCTIONS: dict[str, Callable[..., object]] = {
    "identity": lambda env, value: value,
    "concat": _concat,
    "format": _format,
    "buffer-file-name": _buffer_file_name,
    "getenv": _getenv,
    "file-name-nondirectory": _nondirectory,
    "file-name-directory": _directory,
    "file-name-sans-extension": _sans_extension,
    "file-name-extension": _extension,
    "file-name-base": _base,
    "file-name-as-directory": _as_directory,
    "directory-file-name": _directory_file_name,
    "expand-file-name": _expand,
    "file-relative-name": _relative,
    "abbreviate-file-name": _abbreviate,
    "string-trim": _trim,
    "string-trim-left": _trim_left,
    "string-trim-right": _trim_right,
    "string-remove-prefix": _remove_prefix,
    "string-remove-suffix": _remove_suffix,
    "string-prefix-p": _prefix_p,
    "string-suffix-p": _suffix_p,
    "string-empty-p": lambda env, text: _boolean(_string(text, "string-empty-p") == ""),
    "string=": _string_equal,
    "string-equal": _string_equal,
    "upcase": lambda env, text: _string(text, "upcase").upper(),
    "downcase": lambda env, text: _string(text, "downcase").lower(),
    "substring": _substring,
    "number-to-string": _number_to_string,
    "buffer-name": lambda env: _nondirectory(env, env.buffer_file_name),
    "list": lambda env, *values: list(values) if values else NIL,
    "string-join": _string_join,
    "string-replace": _string_replace,
    "+": _plus,
    "-": _minus,
    "*": _times,
    "logior": _logior,
    "eq": _eq,
    "equal": _equal,
    "file-name-concat": _file_name_concat,
    "not": lambda env, value: _boolean(not truthy(value)),
    "null": lambda env, value: _boolean(not truthy(value)),
}
