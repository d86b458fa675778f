"""What each language's Babel library and Emacs major mode contribute to a tangle.

The reference is Emacs 28.2 with Org 9.5.5 and the common `ob-LANG` libraries
loaded.  Three things depend on the language: the extension `:tangle yes` uses
(`org-babel-tangle-lang-exts`), the comment syntax of its major mode (used by
`comment-region` for `:comments`), and the language's `org-babel-expand-body:`
function, which some languages use to wrap the body (C wraps it in `main`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from ..org.lisp import read_lisp_string
from . import assign

# `org-babel-tangle-lang-exts` after loading the common languages.
EXTENSIONS: dict[str, str] = {
    "latex": "tex",
    "sed": "sed",
    "awk": "awk",
    "clojurescript": "cljs",
    "clojure": "clj",
    "haskell": "hs",
    "perl": "pl",
    "ruby": "rb",
    "lua": "lua",
    "lisp": "lisp",
    "java": "java",
    "D": "d",
    "C++": "cpp",
    "python": "py",
    "emacs-lisp": "el",
    "elisp": "el",
}

# `org-src-lang-modes`: language names whose major mode is not LANG-mode.
LANG_MODES: dict[str, str] = {
    "C": "c",
    "C++": "c++",
    "asymptote": "asy",
    "bash": "sh",
    "beamer": "latex",
    "calc": "fundamental",
    "cpp": "c++",
    "ditaa": "artist",
    "dot": "fundamental",
    "elisp": "emacs-lisp",
    "ocaml": "tuareg",
    "screen": "shell-script",
    "shell": "sh",
    "sqlite": "sql",
}


@dataclass(frozen=True)
class CommentSyntax:
    """A major mode's comment variables, as `comment-region` uses them."""

    start: str | None
    end: str = ""
    add: int = 0
    style: str = "indent"
    # The mode's own `comment-region-function`, when it is not `comment-region-default`
    # (or a variant orgkit models through `style`): orgkit does not reproduce it.
    own_region_function: str | None = None


# Major modes of Emacs 28.2 and their comment settings (nil start: none defined).  A
# language whose mode is missing here keeps the previous block's mode, as in Emacs when
# the mode function does not exist, so every mode Emacs has must be listed.
MODES: dict[str, CommentSyntax] = {
    "emacs-lisp": CommentSyntax(";", add=1),
    "lisp": CommentSyntax(";", add=1),
    "lisp-data": CommentSyntax(";", add=1),
    "scheme": CommentSyntax(";", add=1),
    "python": CommentSyntax("# "),
    "sh": CommentSyntax("# "),
    "shell-script": CommentSyntax("# "),
    "c": CommentSyntax("/* ", " */"),
    "c++": CommentSyntax("// "),
    "objc": CommentSyntax("// "),
    "idl": CommentSyntax("// "),
    "pike": CommentSyntax("// "),
    "java": CommentSyntax("// "),
    "js": CommentSyntax("// "),
    "javascript": CommentSyntax("// "),
    "ruby": CommentSyntax("# "),
    "perl": CommentSyntax("# "),
    "cperl": CommentSyntax("# "),
    "sql": CommentSyntax("--"),
    "css": CommentSyntax("/*", "*/"),
    "scss": CommentSyntax("// "),
    "makefile": CommentSyntax("#"),
    "awk": CommentSyntax("# "),
    "latex": CommentSyntax("%", add=1, style="plain"),
    "tex": CommentSyntax("%", add=1, style="plain"),
    "conf-unix": CommentSyntax("#"),
    "org": CommentSyntax("# "),
    "html": CommentSyntax("<!-- ", " -->"),
    "mhtml": CommentSyntax("<!-- ", " -->"),
    "sgml": CommentSyntax("<!-- ", " -->"),
    "xml": CommentSyntax("<!--", "-->"),
    "nxml": CommentSyntax("<!--", "-->"),
    "asm": CommentSyntax(";", add=1),
    "m4": CommentSyntax("#"),
    "tcl": CommentSyntax("# "),
    "prolog": CommentSyntax("%", add=1),
    "octave": CommentSyntax("#", add=1),
    "f90": CommentSyntax("!"),
    "pascal": CommentSyntax("{", "}"),
    "vhdl": CommentSyntax("--"),
    "verilog": CommentSyntax("// "),
    "icon": CommentSyntax("# "),
    "simula": CommentSyntax("! ", " ;"),
    "bat": CommentSyntax("rem "),
    "ps": CommentSyntax("%"),
    "vera": CommentSyntax("//"),
    "texinfo": CommentSyntax("@c "),
    "dcl": CommentSyntax("!"),
    "gdb-script": CommentSyntax("#"),
    "ld-script": CommentSyntax("/* ", " */"),
    "sieve": CommentSyntax("#"),
    "snmp": CommentSyntax("-- "),
    "conf-space": CommentSyntax("#"),
    "conf-colon": CommentSyntax("#"),
    "conf-toml": CommentSyntax("#"),
    "conf-javaprop": CommentSyntax("#"),
    "conf-windows": CommentSyntax(";"),
    "conf-xdefaults": CommentSyntax("!"),
    "conf-ppd": CommentSyntax("*%"),
    "makefile-gmake": CommentSyntax("#"),
    "makefile-bsdmake": CommentSyntax("#"),
    "makefile-automake": CommentSyntax("#"),
    "makefile-imake": CommentSyntax("#"),
    "makefile-makepp": CommentSyntax("#"),
    "lisp-interaction": CommentSyntax(";", add=1),
    "common-lisp": CommentSyntax(";", add=1),
    "dsssl": CommentSyntax(";", add=1),
    "idlwave": CommentSyntax(";", add=1),
    "plain-tex": CommentSyntax("%", add=1),
    "doctex": CommentSyntax("%", add=1, style="plain"),
    "bibtex": CommentSyntax("@Comment"),
    "antlr": CommentSyntax("// "),
    "opascal": CommentSyntax("// "),
    "less-css": CommentSyntax("//"),
    "dns": CommentSyntax(";"),
    "metafont": CommentSyntax("%"),
    "metapost": CommentSyntax("%"),
    "mixal": CommentSyntax("*"),
    "nroff": CommentSyntax('\\" '),
    "m2": CommentSyntax("(* ", " *)"),
    "modula-2": CommentSyntax("(* ", " *)"),
    "snmpv2": CommentSyntax("-- "),
    "cfengine3": CommentSyntax("# "),
    "fortran": CommentSyntax("C", own_region_function="fortran-comment-region"),
    "rst": CommentSyntax(".. ", own_region_function="rst-comment-region"),
    "js-jsx": CommentSyntax("// ", own_region_function="js-jsx--comment-region"),
    "text": CommentSyntax(None),
    "indented-text": CommentSyntax(None),
    "paragraph-indent-text": CommentSyntax(None),
    "outline": CommentSyntax(None),
    "fundamental": CommentSyntax(None),
    "artist": CommentSyntax(None),  # ditaa: the minor mode turns on picture-mode
    "picture": CommentSyntax(None),
    "eshell": CommentSyntax(None),
    "diff": CommentSyntax(None),
}


def mode_of(lang: str) -> str:
    """`org-src-get-lang-mode` without the `-mode` suffix."""
    return LANG_MODES.get(lang, lang)


def comment_syntax(lang: str, buffer: str = "") -> CommentSyntax | None:
    """The comment syntax of LANG's major mode, or None when Emacs has no such mode.

    BUFFER is the text of the buffer the mode starts in: `conf-mode` picks its variant
    from it, so `conf` blocks after `;;` comments get `;` comments (`conf-windows-mode`).
    """
    mode = mode_of(lang)
    return MODES.get(_guess_conf_mode(buffer) if mode == "conf" else mode)


_CONF_ASSIGNMENT_RE = re.compile(r"[^ \t\n=:]+(?:  ?[^ \t\n=:]+)*[ \t]*[=:]")


def _guess_conf_mode(buffer: str) -> str:
    """`conf--guess-mode`: the variant of `conf-mode` the lines of BUFFER suggest."""
    unix = win = equal = colon = space = javaprop = 0
    lines = buffer.split("\n")
    if lines[-1] == "":
        lines.pop()  # Emacs stops at the end of the buffer, not on an empty last line
    for line in lines:
        rest = line.lstrip(" \t\f")
        assignment = _CONF_ASSIGNMENT_RE.match(rest)
        if rest.startswith("#"):
            unix += 1
        elif rest.startswith(";"):
            win += 1
        elif not rest or rest[0] in "[}":
            pass
        elif assignment:
            if assignment.group(0).endswith("="):
                equal += 1
            else:
                colon += 1
        elif re.match(r"/[/*]", rest):
            javaprop += 1
        elif "{" not in rest:
            space += 1
    if javaprop > max(unix, win, 3):
        return "conf-javaprop"
    if colon > max(equal, space):
        return "conf-colon"
    if space > max(equal, colon):
        return "conf-space"
    return "conf-windows" if win > unix else "conf-unix"


def extension(lang: str) -> str:
    """The extension `:tangle yes` gives a file of this language."""
    return EXTENSIONS.get(lang, lang)


class UnsupportedExpansion(Exception):
    """The language's expansion needs something orgkit does not reproduce."""


# Languages whose `org-babel-expand-body:LANG` uses `:var` values in ways orgkit does
# not reproduce: D declarations, SQL and LaTeX substitute values into the body, and
# Java blocks are refused anyway.
_VARS_UNSUPPORTED = {"D", "sql", "latex", "java"}


def expand_body(lang: str, body: str, params: list[tuple[str, object]]) -> str:
    """The body after `org-babel-expand-body:LANG` (or the generic expansion)."""
    get = dict(reversed(params)).get
    result_params = cast("list[str]", get(":result-params") or [])  # the header's words, as parsed
    variables = [v for k, v in params if k == ":var" and isinstance(v, assign.Var)]
    try:
        return _expand(lang, body, params, get, result_params, variables)
    except assign.AssignmentError as exc:
        raise UnsupportedExpansion(f"{exc} (Emacs fails too)") from None


def _expand(lang: str, body: str, params: list[tuple[str, object]], get, result_params: list[str],  # type: ignore[no-untyped-def]
            variables: list[assign.Var]) -> str:
    if variables and lang in _VARS_UNSUPPORTED:
        raise UnsupportedExpansion(f"orgkit does not write :var values into {lang} blocks as ob-{lang} does")
    if lang in ("emacs-lisp", "elisp"):  # Org aliases elisp to emacs-lisp
        return assign.emacs_lisp(body, variables)
    if lang in ("C", "C++", "cpp"):
        return _expand_c(body, get, variables)
    if lang == "D":
        return _expand_d(body, get)
    if lang == "clojure":
        return _expand_clojure(body, get, result_params, variables)
    if lang == "lisp":
        body = assign.common_lisp(body, variables) if variables else body.strip(" \t\n\r")
        return f"(pprint {body})" if {"code", "pp"} & set(result_params) else body
    if lang == "scheme":
        pro, epi = get(":prologue"), get(":epilogue")
        body = assign.emacs_lisp(body, variables) if variables else body
        return (f"{_text(pro)}\n" if pro is not None else "") + body + (f"\n{_text(epi)}" if epi is not None else "")
    if lang == "sql":
        return "\n".join([_text(get(":prologue")), body, _text(get(":epilogue"))])
    if lang == "latex":
        return _trim(body)
    if lang == "awk":
        return body
    if lang == "java":
        raise UnsupportedExpansion("Java blocks are wrapped in a class by ob-java; orgkit does not reproduce that")
    pro, epi = get(":prologue"), get(":epilogue")
    var_lines = assign.assignment_lines(lang, variables, params) or []
    parts = ([_text(pro)] if pro is not None else []) + var_lines + [body] + ([_text(epi)] if epi is not None else [])
    return "\n".join(parts)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise UnsupportedExpansion(f"a non-string header value ({value!r}) where Org expects text")


def _trim(text: str) -> str:
    return re.sub(r"\A[ \t\n\r]+", "", re.sub(r"[ \t\n\r]+\Z", "", text))


def _expand_c(body: str, get, variables: list[assign.Var]) -> str:  # type: ignore[no-untyped-def]
    includes = _words(get(":includes"))
    defines_words = _words(get(":defines"))
    defines = [f"{a} {b}" for a, b in zip(defines_words[::2], defines_words[1::2])]
    namespaces = _words(get(":namespaces"))
    main_p = get(":main") != "no"
    parts = [
        "\n".join(f"#include {i}" if i.startswith("<") else f'#include "{i}"' for i in includes),
        "\n".join(f"#define {d}" for d in defines),
        "\n".join(f"using namespace {n};" for n in namespaces),
        *assign.c_parts(variables, get(":colname-names")),
        _ensure_main(body) if main_p else body,
    ]
    return "\n".join(parts) + "\n"


def _expand_d(body: str, get) -> str:  # type: ignore[no-untyped-def]
    imports = _words(get(":imports")) + ["std.stdio", "std.conv"]
    main_p = get(":main") != "no"
    parts = ["module mmm;", "\n".join(f"import {i};" for i in imports), "", "", "", "",
             _ensure_main(body) if main_p else body]
    return "\n".join(parts) + "\n"


def _words(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        if value.startswith('"'):
            value = read_lisp_string(value, 0)[0]
        return value.split()
    raise UnsupportedExpansion(f"a non-string header value ({value!r}) where Org expects words")


def _ensure_main(body: str) -> str:
    if re.search(r"^[ \t]*[intvod]+[ \t\n\r]*main[ \t]*\(.*\)", body, re.IGNORECASE | re.MULTILINE):
        return body
    return f"int main() {{\n{body}\nreturn 0;\n}}\n"


def _expand_clojure(body: str, get, result_params: list[str], variables: list[assign.Var]) -> str:  # type: ignore[no-untyped-def]
    body = re.sub(r"^[ \t]*;+.*$", "", body, flags=re.MULTILINE)
    ns = get(":ns")
    head = f"(ns {ns})\n" if ns else ""
    body = _trim(head + (assign.clojure(body, variables) if variables else _trim(body)))
    if {"code", "pp"} & set(result_params):
        return f"(clojure.pprint/pprint (do {body}))"
    return body
