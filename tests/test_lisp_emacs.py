"""The Lisp reader, printer and header-form evaluator against Emacs' own `read`, `prin1` and `eval`.

One batch Emacs reads (or evaluates) every sample; orgkit must give the same value,
printed the same way, or fail where Emacs signals an error.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from emacs_batch import batch_emacs
from emacs_tangle import emacs_available
from orgkit.org.lisp import LispReadError, Symbol, prin1, read
from orgkit.tangle.evaluate import Environment, LispSignal, NotPure, evaluate

pytestmark = pytest.mark.skipif(not emacs_available(), reason="emacs is not installed (apt-get install emacs-nox)")

STRINGS = [
    r'"\x41"', r'"\x41g"', r'"\x"', r'"\xg"', r'"\101"', r'"\1011"', r'"\8"', r'"a\ b"', '"a\\\nb"',
    r'"\s"', r'"\s-a"', r'"\d\e\a\b\f\v\t\r\n"', r'"\C-a"', r'"\^a"', r'"\^?"', r'"\C-?"', r'"\^@"',
    r'"\M-a"', r'"\N{U+41}"', r'"\N{LATIN SMALL LETTER A}"', r'"\u00e9"', r'"\U0001F600"', r'"\z"',
    r'"\x100"', r'"\xe9"', r'"\351"', r'"\u00e9\xe9"', '"é\\xe9"', r'"\x0041"', r'"\400"', r'"\S-a"',
    r'"q\"uote\\"', '"plain é"',
]
DATA = [
    "1", "-7", "+3", "1.", "1.5", ".5", "1e3", "1.0e+INF", "#o755", "#x1ED", "#b101", "foo", "a\\ b", "\\1",
    "(a b . c)", "(a . nil)", "()", "'x", "(quote (1 2))", "#'car", "[1 \"two\" three]", "?a", "?\\n",
    "(1 (2 \"three\" (4.25)))", "(a ; comment\n b)", "\\.a", "1e21", "100.0",
]
FORMS = [
    '(concat (file-name-sans-extension (buffer-file-name)) ".elv")',
    '(concat "a" nil "b")',
    '(format "%s-%d-%S-%%" "x" 42 "q")',
    '(format "%05d|%-4s|%x" 42 "ab" 255)',
    '(format "%d" 2.9)',
    "(file-name-nondirectory (buffer-file-name))",
    "(file-name-directory (buffer-file-name))",
    '(file-name-directory "plain")',
    '(file-name-extension "a/b.tar.gz")',
    '(file-name-extension "a/b.tar.gz" t)',
    '(file-name-extension ".emacs")',
    '(file-name-extension "noext" t)',
    '(file-name-sans-extension "dir.d/file")',
    '(file-name-sans-extension "x.el~")',
    '(file-name-base "/a/b.c.d")',
    '(expand-file-name "x/../y.el")',
    '(expand-file-name "y.el" "/tmp/sub/")',
    '(expand-file-name "~/init.el")',
    '(file-name-as-directory "a")',
    '(file-name-as-directory "")',
    '(directory-file-name "/a/b//")',
    "default-directory",
    "buffer-file-name",
    "user-emacs-directory",
    '(concat user-emacs-directory "init.el")',
    '(getenv "HOME")',
    '(getenv "ORGKIT_SURELY_UNSET")',
    '(if (getenv "ORGKIT_SURELY_UNSET") "yes" "no" "ignored")',
    '(when t "a" "b")',
    '(unless nil "u")',
    '(or nil (getenv "ORGKIT_SURELY_UNSET") "fallback")',
    '(and "a" "b")',
    '(and)',
    '(cond ((string= "a" "b") 1) ((string-prefix-p "ab" "abc") 2))',
    '(string-trim "  x y \\n")',
    '(string-trim-left "\\t x ")',
    '(string-trim-right " x \\r\\n")',
    '(string-remove-prefix "ab" "abc")',
    '(string-remove-suffix ".org" "notes.org")',
    '(string-suffix-p ".ORG" "x.org" t)',
    '(string-empty-p "")',
    '(upcase "abc")',
    '(substring "hello" 1 -1)',
    '(substring "hello" -3)',
    "(number-to-string 1.5)",
    "(identity #o755)",
    "'(a \"b\" 3)",
    "(quote sym)",
    "(not nil)",
    "[1 2]",
    "(if (eq system-type 'gnu/linux) \"linux.el\" \"other.el\")",
    "(equal \"a\" \"a\")",
    "(equal '(1 \"a\") '(1 \"a\"))",
    "(eq 'a 'a)",
    "(eq 1 1)",
    '(file-name-concat "a" "b/" nil "" "c")',
    '(file-name-concat "/etc/")',
    '(expand-file-name "init.el" user-emacs-directory)',
    '(format "%s.el" (file-name-base))',
    "(buffer-name)",
    '(string-join (list "a" "b" "c") "/")',
    "(string-join '(\"a\" \"b\"))",
    '(string-replace ".org" ".el" (buffer-name))',
    "(identity (+ #o600 #o44))",
    "(logior #o644 #o111)",
    "(- 10 3 2)",
    "(- 5)",
    "(* 2 3 4)",
    # Emacs signals an error for these; orgkit must too.
    "(concat 1)",
    '(file-name-nondirectory nil)',
    '(format "%d" "x")',
    '(substring "abc" 5)',
    "(if)",
    '(string-replace "" "x" "abc")',
    '(+ 1 "2")',
]
NOT_PURE = [
    ('(shell-command-to-string "ls")', '(shell-command-to-string "ls")'),
    ('(concat "a" (org-id-uuid))', "(org-id-uuid)"),
    ("(setq x 1)", "(setq x 1)"),
    ('(string-trim "x" "[ ]+")', '(string-trim "x" "[ ]+")'),
    ("load-path", "load-path"),
    ('(eq "a" "a")', '(eq "a" "a")'),
    ('(buffer-file-name (current-buffer))', "(current-buffer)"),
]


STRING_SCRIPT = """(let ((v (read sample)))
      (mapconcat (lambda (c) (if (or (>= c #x3fff80) (and (not (multibyte-string-p v)) (>= c 128)))
                                 (format "R%d" (if (>= c #x3fff80) (- c #x3fff00) c))
                               (number-to-string c)))
                 v " "))"""
BAD_SYNTAX = ['"unterminated', r'"\H-a"', "(a b", r'"\N{NO SUCH NAME}"', "?\\"]
SYMBOL_NAMES = ["a.b", ".a", "?a", "a?", "1", "-1", "1.5", "a b", "a,b", "-", "+1", "1e5", "a#", "#a", "."]
_END_OF_JOB = "\x1d"  # printed after each job's answers


@pytest.fixture(scope="module")
def emacs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every sample of every test answered by one batch Emacs: job name -> its output lines,
    and "base": the folder it ran in (its HOME is base/home; the visited org file is
    base/dir.d/notes.org)."""
    base = tmp_path_factory.mktemp("lisp")
    org = base / "dir.d" / "notes.org"
    org.parent.mkdir()
    org.write_text("* x\n")
    jobs = {"strings": (STRING_SCRIPT, STRINGS, None),
            "data": ("(prin1-to-string (read sample))", DATA, None),
            "bad": ("(prin1-to-string (read sample))", BAD_SYNTAX, None),
            "forms": ("(prin1-to-string (eval (read sample) t))", FORMS, org),
            "symbols": ("(prin1-to-string (intern sample))", SYMBOL_NAMES, None)}
    program = "(progn " + "".join(_job(base / f"{name}.txt", *job) + f'(princ "{_END_OF_JOB}\n")'
                                  for name, job in jobs.items()) + ")"
    env = dict(os.environ, HOME=str(base / "home"), LANG="C.UTF-8", LC_ALL="C.UTF-8")
    (base / "home").mkdir()
    proc = subprocess.run(batch_emacs("--eval", program, init="-Q"), env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    answers = proc.stdout.split(f"{_END_OF_JOB}\n")
    assert len(answers) == len(jobs) + 1 and answers[-1] == "", proc.stdout
    found: dict = {"base": base}
    for (name, (_, lines, _)), text in zip(jobs.items(), answers):
        found[name] = text.split("\n")[:-1]
        assert len(found[name]) == len(lines), (name, text)
    return found


def _job(data: Path, script: str, lines: list[str], visit: Path | None) -> str:
    """The Lisp that feeds LINES (samples, NUL-separated in DATA) to SCRIPT, one answer a line."""
    data.write_text("\0".join(lines), encoding="utf-8")
    return f"""
(let ((visit {f'(find-file-noselect "{visit}")' if visit else 'nil'}))
  (dolist (sample (with-temp-buffer (let ((coding-system-for-read 'utf-8)) (insert-file-contents "{data}"))
                    (split-string (buffer-string) "\\0")))
    (princ (concat (with-current-buffer (or visit (current-buffer))
                     (condition-case err {script} (error (format "ERR %S" (car err)))))
                   "\n"))))
"""


def _codes(value: str, multibyte: bool) -> str:
    """Characters as Emacs shows them: raw bytes as R<byte>, others as code points."""
    out = []
    for char in value:
        code = ord(char)
        out.append(f"R{code - 0xDC00}" if 0xDC80 <= code <= 0xDCFF else str(code))
    return " ".join(out)


def test_strings_read_as_emacs_reads_them(emacs: dict) -> None:
    for sample, answer in zip(STRINGS, emacs["strings"]):
        assert _codes(read(sample)[0], False) == answer, sample


def test_data_read_and_printed_as_emacs_does(emacs: dict) -> None:
    for sample, answer in zip(DATA, emacs["data"]):
        assert prin1(read(sample)[0]) == answer, sample


def test_bad_syntax_is_an_error_as_in_emacs(emacs: dict) -> None:
    for sample, answer in zip(BAD_SYNTAX, emacs["bad"]):
        assert answer.startswith("ERR"), (sample, answer)
        with pytest.raises(LispReadError):
            read(sample)


def test_pure_forms_evaluate_as_in_emacs(emacs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(emacs["base"] / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    env = Environment.for_file(str(emacs["base"] / "dir.d" / "notes.org"), machine=True)  # the owner
    for form, answer in zip(FORMS, emacs["forms"]):
        try:
            mine = prin1(evaluate(read(form)[0], env))
        except LispSignal:
            mine = "ERR"
        assert mine == (answer if not answer.startswith("ERR") else "ERR"), form


@pytest.mark.parametrize("form,culprit", NOT_PURE)
def test_other_forms_are_refused_naming_the_form(form: str, culprit: str, tmp_path: Path) -> None:
    with pytest.raises(NotPure) as info:
        evaluate(read(form)[0], Environment.for_file(str(tmp_path / "x.org"), machine=True))
    assert str(info.value) == culprit


def test_symbols_print_escaped_as_emacs_prints_them(emacs: dict) -> None:
    assert [prin1(Symbol(n)) for n in SYMBOL_NAMES] == emacs["symbols"]
