"""How each language's Babel library writes `:var` values into tangled code.

`org-babel-variable-assignments:LANG` (shell family, Python, Ruby, JavaScript, Perl,
Lua, Haskell) gives lines put before the body; Emacs Lisp, Scheme, Common Lisp and
Clojure wrap the body in a `let`, C and C++ declare typed variables (ob-C).  Values are Lisp data
(see `orgkit.org.lisp`) and are printed with each library's own rules, character for character.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import cast

from ..org.lisp import NIL, Symbol, prin1, princ

HLINE = Symbol("hline")


@dataclass(frozen=True)
class Var:
    """One resolved variable, as Org holds it after `org-babel-process-params`."""

    name: str
    value: object


SHELL_NAMES = ("sh", "bash", "zsh", "fish", "csh", "ash", "dash", "ksh", "mksh", "posh", "shell")


class AssignmentError(Exception):
    """Emacs itself fails to write this value (a type its library does not handle)."""


def _is_list(value: object) -> bool:
    """`listp`: lists, including nil."""
    return isinstance(value, list) or value == NIL


def _items(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _fmt_s(value: object) -> str:
    """`(format "%S" value)`."""
    return prin1(value)


def assignment_lines(lang: str, variables: list[Var], params: list[tuple[str, object]]) -> list[str] | None:
    """`org-babel-variable-assignments:LANG`, or None when LANG has no such function."""
    if lang in SHELL_NAMES:
        return [_shell(v, params) for v in variables]
    if lang == "python":
        return [f"{v.name}={_python(v.value)}" for v in variables]
    if lang == "ruby":
        return [f"{v.name}={_ruby(v.value)}" for v in variables]
    if lang == "js":
        return [f"var {v.name}={_js(v.value)};" for v in variables]
    if lang == "perl":
        return [_perl_assign(v) for v in variables]
    if lang == "lua":
        return [f"{v.name}={_lua(v.value)}" for v in variables]
    if lang == "haskell":
        return [f"let {v.name} = {_haskell(v.value)}" for v in variables]
    return None


def _haskell(value: object) -> str:
    if _is_list(value):
        return "[" + ", ".join(_haskell(v) for v in _items(value)) + "]"
    return _fmt_s(value)


def _python(value: object) -> str:
    if _is_list(value):
        return "[" + ", ".join(_python(v) for v in _items(value)) + "]"
    if value == HLINE:
        return "None"
    if isinstance(value, str) and ("\n" in value or "\r" in value):
        return '""' + _fmt_s(value) + '""'
    return _fmt_s(value)


def _ruby(value: object) -> str:
    if _is_list(value):
        return "[" + ", ".join(_ruby(v) for v in _items(value)) + "]"
    return "nil" if value == HLINE else _fmt_s(value)


def _js(value: object) -> str:
    if _is_list(value):
        return "[" + ", ".join(_js(v) for v in _items(value)) + "]"
    return _fmt_s(value).replace("\n", "\\n")


def _perl_assign(var: Var) -> str:
    return "my $" + var.name + "=" + ("\n" if _is_list(var.value) else "") + _perl(var.value, 0) + ";\n"


def _perl(value: object, level: int) -> str:
    prefix = " " * (2 * level)
    if _is_list(value):
        body = "[\n" + "".join(_perl(v, level + 1) for v in _items(value)) + prefix + "]"
    else:
        body = f"q({princ(value)})"
    return prefix + body + (",\n" if level else "")


def _lua(value: object) -> str:
    if _is_list(value):
        items = _items(value)
        if len(items) == 1 and not _is_list(items[0]):
            return _lua(items[0])
        if len(items) == 2 and not _is_list(items[0]):
            if not isinstance(items[0], str):
                raise AssignmentError(f"ob-lua cannot write {prin1(value)} "
                                      "(a two-element list whose key is not a string)")
            return items[0] + "=" + _lua(items[1:])
        return "{" + ", ".join(_lua(v) for v in items) + "}"
    if value == HLINE:
        return "None"
    if isinstance(value, str) and ("\n" in value or "\r" in value):
        return f"[=[{value}]=]"
    return _fmt_s(value)


# Shell: ob-shell writes bash arrays only when `shell-file-name` is bash.

def _shell(var: Var, params: list[tuple[str, object]]) -> str:
    get = dict(params).get
    sep = get(":separator")
    hline = cast("str | None", (get(":hline-string") or "hline") if get(":hlines") == "yes" else None)
    value = var.value
    if _bash():
        items = _items(value)
        if items and isinstance(items[0], list) and len(items[0]) >= 2:
            lines = [f"{var.name}[{_sh_quote(row[0], sep, hline)}]={_sh_quote(row[1:], sep, hline)}"
                     for row in items if isinstance(row, list)]
            if len(lines) != len(items):
                raise AssignmentError(f"ob-shell cannot write {var.name} (an hline in an associative array)")
            return f"unset {var.name}\ndeclare -A {var.name}\n" + "\n".join(lines)
        if items:
            quoted = " ".join(_sh_quote(v, sep, hline) for v in items)
            return f"unset {var.name}\ndeclare -a {var.name}=( {quoted} )"
    return f"{var.name}={_sh_quote(value, sep, hline)}"


def _bash() -> bool:
    """Whether Emacs' `shell-file-name` (from $SHELL, else /bin/sh) ends in bash."""
    return (os.environ.get("SHELL") or "/bin/sh").endswith("bash")


def _sh_quote(value: object, sep: object, hline: str | None) -> str:
    return "'" + _sh_string(value, sep, hline).replace("'", "'\"'\"'") + "'"


def _echo(value: object) -> str:
    return value if isinstance(value, str) else _fmt_s(value)


def _sh_string(value: object, sep: object, hline: str | None) -> str:
    if _is_list(value):
        items = _items(value)
        if items and (isinstance(items[0], list) or items[0] == HLINE):
            separator = sep if isinstance(sep, str) else "\t"
            rows: list[str] = []
            for row in items:
                if row == HLINE:
                    if hline is not None:
                        rows.append(hline)
                elif isinstance(row, list):
                    rows.append(separator.join(_echo(c) for c in row))
                else:
                    raise AssignmentError(f"ob-shell cannot write the table row {prin1(row)}")
            return "\n".join(rows)
        return "\n".join(_echo(v) for v in items)
    return _echo(value)


# Emacs Lisp: `org-babel-expand-body:emacs-lisp`.

def emacs_lisp(body: str, variables: list[Var]) -> str:
    """The body wrapped in a `let` binding the variables (or followed by a newline)."""
    if not variables:
        return body + "\n"
    bindings = "\n      ".join(prin1([Symbol(v.name), [Symbol("quote"), v.value]]) for v in variables)
    return f"(let ({bindings})\n{body}\n)"


def common_lisp(body: str, variables: list[Var]) -> str:
    """`org-babel-expand-body:lisp` with variables: a `let` of quoted values."""
    bindings = "\n      ".join(f"({prin1(Symbol(v.name))} (quote {prin1(v.value)}))" for v in variables)
    return f"(let ({bindings})\n{body})"


def clojure(body: str, variables: list[Var]) -> str:
    """`org-babel-expand-body:clojure` with variables: a `let` vector of name-value pairs."""
    bindings = "\n      ".join(f"{prin1(Symbol(v.name))} {prin1(v.value)}" for v in variables)
    return f"(let [{bindings}]\n{body})"


# C and C++: `org-babel-C-expand-C`'s variables, table sizes and column-name helpers.

_C_UTILITY = """
#ifndef _STRING_H
#include <string.h>
#endif
int get_column_num (int nbcols, const char** header, const char* column)
{
  int c;
  for (c=0; c<nbcols; c++)
    if (strcmp(header[c],column)==0)
      return c;
  return -1;
}
"""


def c_parts(variables: list[Var], colnames: object) -> list[str]:
    """The four parts ob-C puts between the namespaces and the body."""
    parts = [
        "\n".join(_c_var(v) for v in variables),
        "\n".join(_c_sizes(v) for v in variables),
        _C_UTILITY if _items(colnames) else "",
        "\n".join(_c_header(head, variables) for head in _items(colnames)),
    ]
    return parts


def _c_base_type(value: object) -> str | None:
    if isinstance(value, int):
        return "integerp"
    if isinstance(value, float):
        return "floatp"
    if _is_list(value):
        kind = None
        for item in _items(value):
            sub = _c_base_type(item)
            if sub == "stringp":
                kind = "stringp"
            elif sub == "floatp" and kind in (None, "integerp"):
                kind = "floatp"
            elif sub == "integerp" and kind is None:
                kind = "integerp"
        return kind
    return "stringp"


_C_TYPES = {"integerp": ("int", "%d"), "floatp": ("double", "%f"), "stringp": ("const char*", '"%s"')}


def _c_format(fmt: str, value: object) -> str:
    if fmt == "%d":
        if not isinstance(value, (int, float)):
            raise AssignmentError(f"ob-C cannot format {prin1(value)} as an integer")
        return str(int(value))
    if fmt == "%f":
        if not isinstance(value, (int, float)):
            raise AssignmentError(f"ob-C cannot format {prin1(value)} as a double")
        return "%f" % value
    return f'"{princ(value)}"'


def _c_var(var: Var) -> str:
    value = var.value
    if isinstance(value, Symbol):
        value = value.name
        if len(value) == 1:
            value = ord(value)
    base = _c_base_type(value)
    if base is None:
        raise AssignmentError(f"ob-C cannot declare {var.name} (Unknown type nil)")
    type_name, fmt = _C_TYPES[base]
    if not _is_list(value):
        return f"{type_name} {var.name} = {_c_format(fmt, value)};"
    items = _items(value)
    if items and _is_list(items[0]):
        suffix = f"[{len(items)}][{len(_items(items[0]))}]"
        rows = ",\n".join(" {" + ",".join(_c_format(fmt, w) for w in _items(row)) + "}" for row in items)
        return f"{type_name} {var.name}{suffix} = {{\n{rows}\n}};"
    return f"{type_name} {var.name}[{len(items)}] = {{" + ",".join(_c_format(fmt, v) for v in items) + "};"


def _c_sizes(var: Var) -> str:
    if not _is_list(var.value):
        return ""
    items = _items(var.value)
    if items and _is_list(items[0]):
        return f"const int {var.name}_rows = {len(items)};\nconst int {var.name}_cols = {len(_items(items[0]))};"
    if not items:
        raise AssignmentError(f"ob-C cannot size {var.name} (an empty list)")
    return f"const int {var.name}_cols = {len(items)};"


def _c_header(head: object, variables: list[Var]) -> str:
    name = head[0].name  # type: ignore[index]
    headers = head[1:]  # type: ignore[index]
    table = next((v.value for v in variables if v.name == name), NIL)
    type_name = {"integerp": "int", "floatp": "double", "stringp": "const char*"}.get(_c_base_type(table) or "", "")
    names = ",".join(f'"{princ(h)}"' for h in headers)
    return (f"const char* {name}_header[{len(headers)}] = {{{names}}};\n"
            f"{type_name} {name}_h (int row, const char* col) "
            f"{{ return {name}[row][get_column_num({len(headers)},{name}_header,col)]; }}")

