"""What `org-babel-tangle-file` would write for an org file, computed without writing.

The result is a list of targets (absolute path, exact bytes, file mode), in the
order Emacs writes them, so that writing, checking and dry runs all share one
computation.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import langs, variables
from .comments import (
    LINK_FORMAT_BEGIN,
    LINK_FORMAT_END,
    NoCommentSyntax,
    OwnCommentRegion,
    comment_region,
    fill_template,
    insert_comment,
    org_comment_text,
    remove_indentation,
)
from .document import OrgDocument, SrcBlock, load
from .elisp import LispForm
from .evaluate import Environment
from .errors import NeedsEvaluation, TangleError, located
from .headers import Params, block_params, get
from .links import block_link, link_string, source_name
from .noweb import Info, NowebExpander, Point, noweb_p
from .paths import expand_file_name, file_name_directory, file_name_sans_extension


@dataclass
class Spec:
    """One block as it goes into a target (`org-babel-tangle-single-block`)."""

    block: SrcBlock
    lang: str
    link: str
    source_name: str
    params: Params
    body: str
    comment: str | None


@dataclass
class Target:
    """One file the tangle writes."""

    name: str  # the target as written in the org file (Emacs groups blocks by it)
    path: Path  # absolute
    source: Path  # the org file
    content: bytes = b""
    mode: int | None = None  # explicit mode Emacs sets after writing (None: default)
    mkdirp: bool = False
    specs: list[Spec] = field(default_factory=list)

    @property
    def outside(self) -> bool:
        """Whether the target lies outside the org file's directory tree."""
        root = os.path.realpath(self.source.parent)
        real = os.path.realpath(self.path)
        return os.path.commonpath([root, real]) != root


@dataclass
class Options:
    """User settings Emacs keeps in variables rather than in the org file."""

    preserve_indentation: bool = False  # `org-src-preserve-indentation`
    # Whether header Lisp and target names may read the machine (environment, home directory,
    # files): the owner on the command line only (orgkit.roles.reaches_machine); closed by default.
    machine: bool = False


def plan_file(path: Path, options: Options | None = None) -> list[Target]:
    """The targets tangling PATH produces, in the order Emacs writes them."""
    options = options or Options()
    path = Path(os.path.abspath(path))
    # A caller who may not read the machine gets #+SETUPFILE from the org file's own tree only.
    doc = load(path, setup_within=None if options.machine else path.parent)
    return _Planner(doc, options).targets()


def named_targets(path: Path) -> list[Path]:
    """The files the org file at PATH names as targets now (none when it cannot be planned):
    what an interrupted run's journal may touch, derived again rather than believed."""
    try:
        path = Path(os.path.abspath(path))
        return _Planner(load(path, setup_within=path.parent), Options()).target_paths()
    except (TangleError, OSError):
        return []


class _Planner:
    def __init__(self, doc: OrgDocument, options: Options) -> None:
        self.doc = doc
        self.options = options
        self.directory = str(doc.path.parent) + "/"
        self.noweb = NowebExpander(doc, self.normalize, self._noweb_comment)

    def normalize(self, block: SrcBlock) -> str:
        """`org-babel--normalize-body`: drop the final newline and common indentation."""
        value = block.value[:-1] if block.value.endswith("\n") else block.value
        if self.options.preserve_indentation or block.preserve_indent:
            return value
        return remove_indentation(value)

    def target_paths(self) -> list[Path]:
        """The files the blocks name, whatever they would fail on later (a target that is a
        directory now), as `targets` names them."""
        paths = []
        for block in self._tangled_blocks():
            try:
                name = self._target_name(self._spec(block))
            except TangleError:
                continue
            if name is not None and (self.options.machine or not name.startswith("~")):
                paths.append(Path(expand_file_name(name, self.directory)))
        return paths

    def _tangled_blocks(self) -> list[SrcBlock]:
        return [block for block in self.doc.blocks
                if not (self.doc.commented(block.heading) or self.doc.archived(block.heading))
                and get(block_params(self.doc, block, evaluate=False), ":tangle") != "no"]

    def targets(self) -> list[Target]:
        for line in self.doc.unreadable:
            heading = self.doc.heading_at(line)
            if not (self.doc.commented(heading) or self.doc.archived(heading)):
                raise TangleError(located(str(self.doc.path), line + 1, f"at line {line + 1}",
                                          "#+begin_src without its own #+end_src: Emacs reads it up to the end "
                                          "of a later block and fails (Wrong type argument: stringp, nil)"))
        groups: dict[str, list[Spec]] = {}
        for block in self._tangled_blocks():
            spec = self._spec(block)
            name = self._target_name(spec)
            if name is not None:
                groups.setdefault(name, []).append(spec)
        return [self._target(name, specs) for name, specs in groups.items()]

    def _fail(self, block: SrcBlock, message: str, cls: type[TangleError] = TangleError) -> TangleError:
        return cls(located(str(self.doc.path), block.line, block.name or f"at line {block.line}", message))

    def _spec(self, block: SrcBlock) -> Spec:
        params = block_params(self.doc, block, evaluate=True, machine=self.options.machine)
        for key, value in params:
            if isinstance(value, LispForm):
                if value.signals or value.refused:
                    raise self._fail(block, f"header argument {key} {value.text}: {value.reason}")
                raise self._fail(
                    block,
                    f"header argument {key} {value.text} is Lisp that Emacs would evaluate and orgkit does not: "
                    f"{value.reason} (orgkit never runs code)",
                    NeedsEvaluation,
                )
        if any(key == ":var" for key, _ in params):
            params = self._resolve_variables(block, params)
        lang = block.language or ""
        info = Info(block, self.normalize(block), params)
        body, point_line = info.body, block.begin_line
        if noweb_p(params, "tangle"):
            body = self.noweb.expand(info)
            point_line = self.noweb.point.line if self.noweb.point else point_line
        if get(params, ":no-expand") is None and not any(k == ":no-expand" for k, _ in params):
            try:
                body = langs.expand_body(lang, body, params)
            except langs.UnsupportedExpansion as exc:
                raise self._fail(block, str(exc)) from exc
        if block.switches and "-r" in block.switches:
            body = _remove_coderefs(body, block.label_format or "(ref:%s)")
        if self.options.preserve_indentation:
            body = _trim(body, keep_lead=True)
        else:
            body = _trim(remove_indentation(body))
        comments = get(params, ":comments")
        comment = org_comment_text(self.doc, point_line) if comments in ("both", "org") else None
        tfile = get(params, ":tangle")
        return Spec(
            block=block,
            lang=lang,
            link=block_link(self.doc, block, tfile if isinstance(tfile, str) else "", self.directory),
            source_name=source_name(self.doc, block),
            params=params,
            body=body,
            comment=comment,
        )

    def _resolve_variables(self, block: SrcBlock, params: Params) -> Params:
        """The block's `:var` values, computed as `org-babel-process-params` does."""
        env = Environment.for_file(str(self.doc.path), machine=self.options.machine)
        try:
            return variables.resolve(self.doc, params, env, self.noweb.headline_body)
        except variables.VarError as exc:
            raise self._fail(block, str(exc), NeedsEvaluation if exc.needs_evaluation else TangleError) from None

    def _target_name(self, spec: Spec) -> str | None:
        """`org-babel-effective-tangled-filename`."""
        tfile = get(spec.params, ":tangle")
        if not isinstance(tfile, str):
            raise self._fail(spec.block, f":tangle {tfile!r} is not a file name")
        if tfile == "yes":
            base = file_name_sans_extension(self.doc.path.name)
            return f"{base}.{langs.extension(spec.lang)}"
        if tfile == "no" or not tfile:
            return None
        if "\0" in tfile:
            raise self._fail(spec.block, f":tangle {tfile!r} contains a NUL character, which no file name can")
        return tfile

    def _target(self, name: str, specs: list[Spec]) -> Target:
        if name.startswith("~") and not self.options.machine:
            raise self._fail(specs[0].block, f":tangle {name} names a home directory, which orgkit expands only "
                                             "for the owner on the command line")
        full = expand_file_name(name, self.directory)
        target = Target(name=name, path=Path(full), source=self.doc.path)
        # A name ending in a slash is a directory even if none exists: Emacs' write fails.
        if full.endswith("/") or target.path.is_dir():
            raise self._fail(specs[0].block, f":tangle {name} names a directory, not a file (Emacs fails too)")
        out: list[str] = []
        modes: list[int] = []
        syntax: langs.CommentSyntax | None = None
        lang: str | None = None
        shebanged = False
        for spec in specs:
            if spec.lang != lang:
                lang = spec.lang
                started = langs.comment_syntax(lang, "".join(out))
                if started is not None:
                    syntax = started
            shebang = get(spec.params, ":shebang")
            shebang = shebang if isinstance(shebang, str) and shebang else None
            mode = get(spec.params, ":tangle-mode")
            if shebang and mode is None:
                mode = 0o755
            if mode is not None:
                if not isinstance(mode, int):
                    raise self._fail(spec.block, f":tangle-mode {mode} is not a file mode "
                                                 "(Org 9.5 wants e.g. (identity #o755))")
                if mode not in modes:
                    modes.append(mode)
            mkdirp = get(spec.params, ":mkdirp")
            if mkdirp is not None and mkdirp != "no" and file_name_directory(name):
                target.mkdirp = True
            if get(spec.params, ":padline") != "no" and out:
                out.append("\n")
            if shebang and not shebanged:
                out.append(shebang + "\n")
                shebanged = True
            try:
                out.append(self._spec_text(spec, syntax))
            except (NoCommentSyntax, OwnCommentRegion) as exc:
                raise self._uncommentable(spec.block, spec.lang, exc) from None
        target.specs = specs
        target.mode = modes[0] if modes else None
        text = "".join(out)
        if not self.doc.utf8 and not text.isascii():
            raise self._fail(specs[0].block, f"{self.doc.path.name} is not valid UTF-8: Emacs would guess its "
                                             f"encoding (Latin-1, Shift-JIS...) and write {name} as UTF-8; "
                                             "convert the file to UTF-8")
        target.content = text.encode("utf-8", errors="surrogateescape")
        return target

    def _spec_text(self, spec: Spec, syntax: langs.CommentSyntax | None) -> str:
        """`org-babel-spec-to-string`."""
        comments = get(spec.params, ":comments")
        link_p = comments in ("both", "link", "yes", "noweb")
        data = {
            "start-line": str(spec.block.line + 1),
            "file": self.doc.path.name,
            "link": spec.link,
            "source-name": spec.source_name,
        }
        active = comments is not None and comments != "no"
        parts: list[str] = []
        if spec.comment is not None and active:
            parts.append(insert_comment(spec.comment, syntax))
        if link_p and active:
            parts.append(insert_comment(fill_template(LINK_FORMAT_BEGIN, data), syntax))
        parts.append(spec.body + "\n")
        if link_p and active:
            parts.append(insert_comment(fill_template(LINK_FORMAT_END, data), syntax))
        return "".join(parts)

    def _noweb_comment(self, body: str, item: Info, outer: Info, point: Point) -> str:
        """`:comments noweb`: link comments, in the expanding block's language, around BODY."""
        syntax = langs.comment_syntax(outer.block.language or "")
        data = {
            "start-line": str(item.block.line),
            "file": str(self.doc.path),
            "link": link_string(self.doc, point.heading, point.name, point.line, point.column),
            "source-name": item.block.name or "",
        }
        try:
            begin, end = (_trim(comment_region(fill_template(t, data), syntax))
                          for t in (LINK_FORMAT_BEGIN, LINK_FORMAT_END))
        except (NoCommentSyntax, OwnCommentRegion) as exc:
            raise self._uncommentable(outer.block, outer.block.language, exc) from None
        return f"{begin}\n{body}\n{end}"

    def _uncommentable(self, block: SrcBlock, lang: str | None, exc: Exception) -> TangleError:
        """The error for a comment orgkit cannot write in LANG's major mode: Emacs fails
        too when the mode has no comment syntax, but not when it has its own way to comment."""
        if isinstance(exc, OwnCommentRegion):
            return self._fail(block, f"the major mode of language {lang!r} comments with its own function {exc}, "
                                     "which orgkit does not reproduce (use :comments no for these blocks)")
        return self._fail(block, f"no comment syntax is known for language {lang!r} (Emacs fails here too)")


def _remove_coderefs(body: str, fmt: str) -> str:
    label = r"([-a-zA-Z0-9_][-a-zA-Z0-9_ ]*)"
    pattern = re.escape(fmt).replace(re.escape("%s"), label)
    return re.sub(r"([ \t]*(" + pattern + r")[ \t]*)$", "", body, flags=re.MULTILINE)


def _trim(text: str, keep_lead: bool = False) -> str:
    """`org-trim`."""
    text = re.sub(r"[ \t\n\r]+\Z", "", text)
    return re.sub(r"\A([ \t]*\n)+" if keep_lead else r"\A[ \t\n\r]+", "", text)

