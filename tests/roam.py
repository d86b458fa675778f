"""Build org-roam's own database for a directory and read it back.

The reference for `orgkit nodes` / `orgkit links` is what org-roam 2.2 stores
after `org-roam-db-sync`. This harness runs Emacs once per directory in batch
mode (`emacs --batch -q`, so no user init file), lets org-roam build its
SQLite database in a temporary file, and reads that database with `sqlite3`.

emacsql stores every value Lisp-printed (`prin1` with newlines and control
characters escaped): a string "foo" is stored as the text `"foo"`, an outline
path as `("a" "b")`, nothing as `nil`. `read_lisp` decodes those forms; it is
written here, independently of orgkit's own Lisp reader, so that the two are
not wrong together.

Emacs 28 talks to SQLite through emacsql's helper binary `emacsql-sqlite`.
Debian's `elpa-emacsql-sqlite` ships it prebuilt as /usr/bin/emacsql-sqlite
(built against the system libsqlite3), so nothing has to be compiled; the
harness still checks that it exists and is executable and names the package
to install when it is not.
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from emacs_batch import batch_emacs

EMACS_PACKAGES = "emacs-nox elpa-org-roam"
EMACSQL_SQLITE = "/usr/bin/emacsql-sqlite"

_SYNC_SCRIPT = r"""
(progn
  (setq user-emacs-directory (file-name-as-directory (getenv "ROAM_HOME")))
  (setq org-id-locations-file (expand-file-name "org-id-locations" user-emacs-directory))
  (setq make-backup-files nil auto-save-default nil create-lockfiles nil)
  (require 'org-roam)
  (setq org-roam-db-gc-threshold gc-cons-threshold)
  (setq org-roam-directory (file-truename (getenv "ROAM_DIR")))
  (setq org-roam-db-location (getenv "ROAM_DB"))
  (org-roam-db-sync)
  (org-roam-db--close-all)
  (princ "ORGKIT-ROAM-SYNC-DONE\n" #'external-debugging-output))
"""


# The two character sets of `orgkit/org/emacs_chars.py`, as ranges of hexadecimal code
# points, from the syntax table of an org-mode buffer: one pass over every code point (2 s).
_CHAR_SETS_SCRIPT = r"""
(progn
  (require 'org)
  (defun orgkit--ranges (pred)
    (let ((c 0) (start nil) (out nil))
      (while (<= c #x10FFFF)
        (if (funcall pred c)
            (unless start (setq start c))
          (when start
            (push (if (= start (1- c)) (format "%X" start) (format "%X-%X" start (1- c))) out)
            (setq start nil)))
        (setq c (1+ c)))
      (when start (push (format "%X-10FFFF" start) out))
      (mapconcat #'identity (nreverse out) " ")))
  (byte-compile 'orgkit--ranges)
  (with-temp-buffer
    (org-mode)
    (let ((latin (aref char-script-table ?a)))
      (princ (format "NO_WORD_START %s\n"
                     (orgkit--ranges
                      (byte-compile
                       `(lambda (c) (and (eq (char-syntax c) ?w)
                                         (or (eq (aref char-script-table c) ',latin)
                                             (aref (char-category-set c) ?^))))))))
      (princ (format "NON_WORD %s\n"
                     (orgkit--ranges
                      (byte-compile
                       (lambda (c) (and (>= c #x80) (not (eq (char-syntax c) ?w))))))))
      (princ (format "ALNUM %s\n"
                     (orgkit--ranges
                      (byte-compile (lambda (c) (string-match-p "[[:alnum:]]" (string c))))))))))
"""


def emacs_char_sets() -> dict[str, str]:
    """`orgkit.org.emacs_chars`' sets as the installed Emacs has them: NO_WORD_START, the
    characters with word syntax in the script of ASCII letters or combining (after which
    `\\<` fails before a letter), and NON_WORD, those beyond ASCII without word syntax
    (what `[:punct:]` matches there); and ALNUM, what `[:alnum:]` matches."""
    proc = subprocess.run(batch_emacs("--eval", _CHAR_SETS_SCRIPT),
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"emacs failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line)


class RoamUnavailable(RuntimeError):
    """Emacs, org-roam or its SQLite helper is missing; the message says what to install."""


# --- the printed Lisp forms emacsql stores -------------------------------------------


class LispSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class Symbol:
    name: str


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "a": "\a", "b": "\b",
            "e": "\x1b", "s": " ", "d": "\x7f", "v": "\v"}
_DELIMS = set(" \t\n\r\f()\"';")


def read_lisp(text: str):
    """Read one printed Lisp form: strings (with escapes), integers, floats,
    symbols (`nil` -> None, `t` -> True), lists (-> list), dotted pairs
    (-> tuple), vectors (-> list) and propertized strings `#("s" ...)` (-> "s").
    """
    value, i = _read(text, _skip(text, 0))
    if _skip(text, i) != len(text):
        raise LispSyntaxError(f"trailing text after form in {text!r}")
    return value


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n\r\f":
        i += 1
    return i


def _read(text: str, i: int):
    if i >= len(text):
        raise LispSyntaxError(f"unexpected end of {text!r}")
    ch = text[i]
    if ch == '"':
        return _read_string(text, i)
    if ch == "(":
        return _read_list(text, i + 1, ")")
    if ch == "[":
        items, j = _read_list(text, i + 1, "]")
        return list(items), j
    if text.startswith("#(", i):
        items, j = _read_list(text, i + 2, ")")
        return items[0], j
    return _read_atom(text, i)


def _read_list(text: str, i: int, close: str):
    items: list = []
    while True:
        i = _skip(text, i)
        if i >= len(text):
            raise LispSyntaxError(f"unterminated list in {text!r}")
        if text[i] == close:
            return items, i + 1
        if close == ")" and text[i] == "." and i + 1 < len(text) and text[i + 1] in _DELIMS:
            tail, i = _read(text, _skip(text, i + 1))
            i = _skip(text, i)
            if i >= len(text) or text[i] != ")":
                raise LispSyntaxError(f"bad dotted pair in {text!r}")
            if len(items) != 1:
                raise LispSyntaxError(f"improper list in {text!r}")
            return (items[0], tail), i + 1
        item, i = _read(text, i)
        items.append(item)


def _read_string(text: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    i += 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        esc = text[i]
        if esc in "01234567":
            j = i
            while j < len(text) and j < i + 3 and text[j] in "01234567":
                j += 1
            out.append(chr(int(text[i:j], 8)))
            i = j
        elif esc == "x":
            j = i + 1
            while j < len(text) and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(text[i + 1:j], 16)))
            i = j
        elif esc in "uU":
            width = 4 if esc == "u" else 8
            out.append(chr(int(text[i + 1:i + 1 + width], 16)))
            i += 1 + width
        elif esc == "^":
            out.append(chr(ord(text[i + 1].upper()) ^ 0x40))
            i += 2
        elif esc in " \n":  # backslash-space and backslash-newline read as nothing
            i += 1
        else:
            out.append(_ESCAPES.get(esc, esc))
            i += 1
    raise LispSyntaxError(f"unterminated string in {text!r}")


def _read_atom(text: str, i: int):
    j = i
    chars: list[str] = []
    while j < len(text) and text[j] not in _DELIMS and text[j] not in "[]":
        if text[j] == "\\" and j + 1 < len(text):
            j += 1
        chars.append(text[j])
        j += 1
    if j == i:
        raise LispSyntaxError(f"unexpected {text[i]!r} in {text!r}")
    atom = "".join(chars)
    for convert in (int, float):
        try:
            return convert(atom), j
        except ValueError:
            pass
    if atom == "nil":
        return None, j
    if atom == "t":
        return True, j
    return Symbol(atom), j


def _value(raw):
    """A column value from the db: text is a printed Lisp form, numbers are numbers."""
    if isinstance(raw, str):
        return read_lisp(raw)
    return raw


# --- the database ---------------------------------------------------------------------


@dataclass
class RoamNode:
    id: str
    file: str
    level: int
    pos: int
    title: str
    todo: str | None
    priority: str | None
    olp: list[str]
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RoamLink:
    source: str
    dest: str
    type: str
    pos: int


@dataclass
class RoamDB:
    """org-roam's view of a directory: nodes and links, plus what Emacs said."""

    root: Path
    nodes: list[RoamNode]
    links: list[RoamLink]
    files: list[str]
    stderr: str
    elapsed: float

    @property
    def warnings(self) -> list[str]:
        """Emacs' warning lines (`Warning (org-roam): ...`, `Error (org-roam): ...`)."""
        return [
            line for line in self.stderr.splitlines()
            if line.startswith(("Warning", "Error", "⛔")) or "(org-roam)" in line
        ]


def roam_ref(ref: str, kind: str) -> str:
    """orgkit's string form of an org-roam refs row (ref, type)."""
    return "@" + ref if kind == "cite" else f"{kind}:{ref}"


@functools.lru_cache(maxsize=None)
def check_available() -> None:
    """Raise RoamUnavailable, naming what to install, if org-roam cannot run here
    (a failure is not cached: the next call checks again)."""
    if shutil.which("emacs") is None:
        raise RoamUnavailable(f"emacs not found (apt-get install -y {EMACS_PACKAGES})")
    if not os.access(EMACSQL_SQLITE, os.X_OK):
        raise RoamUnavailable(
            f"{EMACSQL_SQLITE} missing (apt-get install -y elpa-emacsql-sqlite, "
            "which ships it prebuilt)"
        )
    probe = subprocess.run(
        batch_emacs("--eval", "(progn (require 'org-roam) (princ org-version))"),
        capture_output=True, text=True, timeout=120,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        raise RoamUnavailable(
            f"org-roam not loadable in Emacs (apt-get install -y {EMACS_PACKAGES}): {last}"
        )


def skip_unless_available() -> None:
    """pytest.skip with the reason when Emacs/org-roam is missing."""
    import pytest

    try:
        check_available()
    except RoamUnavailable as exc:
        pytest.skip(f"org-roam reference unavailable: {exc}")


def build_db(directory: Path, timeout: float = 300) -> RoamDB:
    """Run `org-roam-db-sync` over `directory` and return what it stored.

    Emacs may visit the files (org-roam opens each in a buffer), so pass a
    copy when the directory must stay untouched.
    """
    import time

    directory = Path(directory).resolve()
    with tempfile.TemporaryDirectory(prefix="orgkit-roam-") as tmp:
        db_path = Path(tmp) / "org-roam.db"
        home = Path(tmp) / "home"
        home.mkdir()
        env = dict(os.environ, ROAM_DIR=str(directory), ROAM_DB=str(db_path),
                   ROAM_HOME=str(home), HOME=str(home))
        start = time.monotonic()
        proc = subprocess.run(
            batch_emacs("--eval", _SYNC_SCRIPT),
            capture_output=True, text=True, env=env, timeout=timeout,
            errors="replace",
        )
        elapsed = time.monotonic() - start
        output = proc.stdout + proc.stderr
        if proc.returncode != 0 or "ORGKIT-ROAM-SYNC-DONE" not in output or not db_path.exists():
            raise RuntimeError(f"org-roam-db-sync failed (exit {proc.returncode}):\n{output[-4000:]}")
        nodes, links, files = _read_db(db_path, directory)
    return RoamDB(directory, nodes, links, files, output, elapsed)


def _read_db(db_path: Path, root: Path) -> tuple[list[RoamNode], list[RoamLink], list[str]]:
    con = sqlite3.connect(db_path)
    try:
        def rows(sql: str):
            return [tuple(_value(v) for v in row) for row in con.execute(sql)]

        prefix = str(root) + os.sep

        def rel(path: str) -> str:
            assert path.startswith(prefix), (path, prefix)
            return path[len(prefix):].replace(os.sep, "/")

        files = sorted(rel(f) for (f,) in rows("SELECT file FROM files"))
        nodes: dict[str, RoamNode] = {}
        for (nid, file, level, pos, todo, priority, title, props, olp) in rows(
            "SELECT id, file, level, pos, todo, priority, title, properties, olp FROM nodes"
        ):
            nodes[nid] = RoamNode(
                id=nid, file=rel(file), level=level, pos=pos, title=title, todo=todo,
                priority=chr(priority) if isinstance(priority, int) else priority,
                olp=list(olp or []),
                properties={k: v for k, v in (props or [])},
            )
        for nid, tag in rows("SELECT node_id, tag FROM tags"):
            nodes[nid].tags.append(tag)
        for nid, alias in rows("SELECT node_id, alias FROM aliases"):
            nodes[nid].aliases.append(alias)
        for nid, ref, kind in rows("SELECT node_id, ref, type FROM refs"):
            nodes[nid].refs.append(roam_ref(ref, kind))
        links = [
            RoamLink(source=s, dest=d, type=t, pos=p)
            for (p, s, d, t) in rows("SELECT pos, source, dest, type FROM links")
        ]
    finally:
        con.close()
    return list(nodes.values()), links, files
