"""`orgkit tangle` and `orgkit detangle`: org-babel-compatible tangling from the shell."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..tangle import Options, Target, check, detangle, tangle
from ..tangle.write import current_umask, final_mode
from .common import emit, handle_errors, json_option, warn


def _rel(path: Path) -> str:
    """A path relative to the working directory when it lies below it, forward slashes."""
    relative = os.path.relpath(path)
    return Path(relative).as_posix() if not relative.startswith("..") else path.as_posix()


def _target_row(target: Target, umask: int) -> dict:
    return {
        "file": _rel(target.source),
        "target": _rel(target.path),
        "bytes": len(target.content),
        "mode": f"{final_mode(target, umask):04o}",
        "blocks": len(target.specs),
        "outside": target.outside,
    }


def _render_targets(rows: list[dict], verb: str) -> str:
    lines = []
    for row in rows:
        flag = "  [outside the org file's directory]" if row["outside"] else ""
        lines.append(f"{verb} {row['target']}  {row['bytes']} bytes  mode {row['mode']}  ({row['blocks']} blocks from {row['file']}){flag}")
    return "\n".join(lines)


def _render_check(data: dict) -> str:
    if not data["stale"]:
        return f"{len(data['targets'])} targets up to date"
    return "\n".join(f"stale {row['target']}: {row['reason']}  (from {row['file']})" for row in data["stale"])


preserve_indentation_option = click.option(
    "--preserve-indentation",
    is_flag=True,
    help="Behave as Emacs with org-src-preserve-indentation set to t.",
)


def register(main: click.Group) -> None:
    """Add `tangle` and `detangle` to the command group."""

    @main.command("tangle")
    @click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--dry-run", is_flag=True, help="List targets and sizes; write nothing.")
    @click.option("--check", "check_only", is_flag=True, help="Exit 1 if any target differs from what the org files produce.")
    @click.option("--confine", is_flag=True, help="Refuse targets outside each org file's directory tree.")
    @click.option("--force", is_flag=True, help="Overwrite targets edited since orgkit tangled them.")
    @preserve_indentation_option
    @json_option
    @handle_errors
    def tangle_command(
        files: tuple[Path, ...], dry_run: bool, check_only: bool, confine: bool, force: bool,
        preserve_indentation: bool, as_json: bool
    ) -> None:
        """Write the source files org-babel-tangle-file would write, byte for byte.

        Every target is written, or none: a file that would need Emacs to
        evaluate Lisp is refused with the file, line and block.
        """
        options = Options(preserve_indentation=preserve_indentation)
        umask = current_umask()
        if check_only:
            result = check(list(files), options)
            data = {
                "ok": result.ok,
                "targets": [_target_row(t, umask) for t in result.targets],
                "stale": [dict(_target_row(t, umask), reason=reason) for t, reason in result.stale],
            }
            emit(data, as_json, _render_check)
            if not result.ok:
                raise SystemExit(1)
            return
        outcome = tangle(list(files), options, dry_run=dry_run, confine=confine, force=force)
        rows = [_target_row(t, umask) for t in outcome.targets]
        for row in rows:
            if row["outside"]:
                warn(f"{row['target']} (from {row['file']}) is outside the org file's directory")
        if as_json:
            emit({"written": outcome.written, "targets": rows}, True, str)
        else:
            emit(rows, False, lambda r: _render_targets(r, "would write" if dry_run else "wrote"))

    @main.command("detangle")
    @click.argument("code_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @preserve_indentation_option
    @json_option
    @handle_errors
    def detangle_command(code_file: Path, preserve_indentation: bool, as_json: bool) -> None:
        """Carry edits in a tangled file (made with :comments link/both) back into the org blocks.

        Blocks whose code cannot be mapped back one to one are listed, never guessed.
        """
        result = detangle(code_file, Options(preserve_indentation=preserve_indentation))
        data = {
            "updated": [{"file": _rel(org), "block": name, "line": line} for org, name, line in result.updated],
            "unchanged": result.unchanged,
            "unmapped": [{"line": line, "block": name, "reason": reason} for line, name, reason in result.unmapped],
        }

        def render(d: dict) -> str:
            lines = [f"updated {u['file']}:{u['line']}: {u['block']}" for u in d["updated"]]
            lines += [f"not mapped back {_rel(code_file)}:{u['line']}: {u['block']}: {u['reason']}" for u in d["unmapped"]]
            lines.append(f"{len(d['updated'])} updated, {d['unchanged']} unchanged, {len(d['unmapped'])} not mapped back")
            return "\n".join(lines)

        emit(data, as_json, render)
        if result.unmapped:
            raise SystemExit(1)
