"""tangle, detangle: org-babel-compatible tangling."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import OrgkitError
from ..roles import reaches_machine
from . import declare
from .context import OpContext
from .spec import Op, Param, ParamError

ORG_SUFFIXES = (".org", ".org_archive")  # what Emacs opens in org-mode; .org.gpg is ciphertext to orgkit
PRESERVE = Param("preserve_indentation", "boolean",
                 "Behave as Emacs with org-src-preserve-indentation set to t.")


def _files(ctx: OpContext, names: list[str]) -> list[Path]:
    paths = [ctx.path(name) for name in names]
    for name, path in zip(names, paths):
        if not path.is_file():
            raise OrgkitError(f"{name}: no such file")
    return paths


def _org_files(ctx: OpContext, names: list[str], any_file: bool) -> list[Path]:
    """The org files to tangle: a name that does not end in .org is a usage error unless `any_file`.

    Emacs' org-babel-tangle-file tangles whatever it is given (a README.md, a
    text file with an org block in it); orgkit asks to be told, so a slip of the
    shell's completion does not write files from a file that is not a note.
    """
    paths = _files(ctx, names)
    if not any_file:
        for name, path in zip(names, paths):
            if not path.name.lower().endswith(ORG_SUFFIXES):
                option = "--any-file" if ctx.surface == "cli" else "any_file"
                raise ParamError(f"{name} is not an org file (.org); give {option} to tangle it anyway")
    return paths


def _none_to_tangle(ctx: OpContext, rows: list[dict]) -> bool:
    """Say so when no block of the files tangles (a warning, and true: the JSON's `nothing`)."""
    if not rows:
        ctx.warn("no blocks to tangle")
    return not rows


def _rel(ctx: OpContext, path: Path) -> str:
    """A path relative to the caller's directory when it lies below it, with forward slashes."""
    relative = os.path.relpath(path, ctx.base) if ctx.base is not None else os.path.relpath(path)
    return Path(relative).as_posix() if not relative.startswith("..") else path.as_posix()


def _row(ctx: OpContext, target, umask: int) -> dict:
    from ..tangle.write import final_mode

    return {"file": _rel(ctx, target.source), "target": _rel(ctx, target.path), "bytes": len(target.content),
            "mode": f"{final_mode(target, umask):04o}", "blocks": len(target.specs), "outside": target.outside}


def tangle(ctx: OpContext, args: dict[str, Any]) -> dict:
    """Tangle (or plan, or check) org files; `nothing` is true when no block of them tangles."""
    from ..tangle import Options, check, tangle as tangle_files
    from ..files import process_umask

    files = _org_files(ctx, args["files"], args["any_file"])
    options = Options(preserve_indentation=args["preserve_indentation"], machine=reaches_machine(ctx.identity))
    umask = process_umask()
    if args["check"]:
        result = check(files, options)
        for message in result.recovered:
            ctx.warn(message)
        ctx.failed = not result.ok
        rows = [_row(ctx, t, umask) for t in result.targets]
        return {"ok": result.ok, "targets": rows, "nothing": _none_to_tangle(ctx, rows),
                "stale": [dict(_row(ctx, t, umask), reason=reason) for t, reason in result.stale]}
    # A server's client tangles only files in the notes, and only into their own directory trees.
    confine = args["confine"] or (not ctx.trusted and not args["dry_run"])
    outcome = tangle_files(files, options, dry_run=args["dry_run"], confine=confine, force=args.get("force", False))
    for message in outcome.recovered + outcome.kept:
        ctx.warn(message)
    rows = [_row(ctx, t, umask) for t in outcome.targets]
    for row in rows:
        if row["outside"]:
            ctx.warn(f"{row['target']} (from {row['file']}) is outside the org file's directory")
    nothing = _none_to_tangle(ctx, rows)
    return {"written": outcome.written and not nothing, "targets": rows, "nothing": nothing}


def detangle(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..tangle import Options, detangle as detangle_file

    (code_file,) = _files(ctx, [args["code_file"]])
    result = detangle_file(code_file, Options(preserve_indentation=args["preserve_indentation"],
                                              machine=reaches_machine(ctx.identity)))
    ctx.failed = bool(result.unmapped)
    return {
        "updated": [{"file": _rel(ctx, org), "block": name, "line": line} for org, name, line in result.updated],
        "unchanged": result.unchanged,
        "unmapped": [{"line": line, "block": name, "reason": reason} for line, name, reason in result.unmapped],
    }


def tangle_plan(ctx: OpContext, args: dict[str, Any]) -> dict:
    return tangle(ctx, {**args, "dry_run": True, "confine": False})


FILES = Param("files", "array", "The org files to tangle.", required=True, positional=True, metavar="FILE.org...",
              paths="file")
CHECK = Param("check", "boolean", "Fail if any target differs from what the org files produce.")
TARGETS = ("{written, nothing, targets: [{file, target, bytes, mode, blocks, outside}]} "
           "(check: {ok, nothing, targets, stale})")
ANY_FILE = Param("any_file", "boolean", "Tangle files whose names do not end in .org too (as Emacs would).")

declare(Op("tangle", "Write the source files org-babel-tangle-file would write, byte for byte, all or none "
           "(with dry_run or check, write nothing).", tangle,
           params=(FILES,
                   Param("dry_run", "boolean", "List targets and sizes; write nothing."),
                   CHECK, ANY_FILE,
                   Param("confine", "boolean", "Refuse targets outside each org file's directory tree."),
                   Param("force", "boolean", "Overwrite targets edited since orgkit tangled them."),
                   PRESERVE),
           result=TARGETS, writes=True, notes=False, mcp=False, role="admin"))
declare(Op("tangle_plan", "What tangling org files would write (targets, sizes, modes), or with check which "
           "targets differ from the org sources; writes nothing.", tangle_plan,
           params=(FILES, CHECK, ANY_FILE, PRESERVE), result=TARGETS, cli=None, role="reader"))
declare(Op("detangle", "Carry edits in a tangled file (made with :comments link/both) back into the org blocks.",
           detangle, cli_only="writes the org files its link comments name",
           params=(Param("code_file", "path", "The tangled file.", required=True, positional=True,
                         metavar="CODE_FILE"),
                   PRESERVE),
           result="{updated: [{file, block, line}], unchanged, unmapped: [{line, block, reason}]}",
           writes=True, notes=False, mcp=False, role="admin"))
