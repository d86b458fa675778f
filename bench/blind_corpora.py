"""The corpora of bench/retrieval_blind/ as notes directories orgkit takes in, and their targets.

    python bench/blind_corpora.py CORPUS DEST [SOURCE]   # braindump, adr, manual or literate

- braindump and the manual are org-roam notes already: copied as they are;
- adr: each markdown ADR becomes an org note: a file `:ID:` derived from its
  name (`adr_id`), `#+title:` from its first heading, `##` sections as `*`
  headings (one level per `#` after the first), code fences as example blocks;
- literate: each `.org` file gets a file `:ID:` derived from its path in a
  property drawer on top (three lines, so a target's line moves down by
  LITERATE_SHIFT), nothing else changed.

`matcher(corpus, dest, query)` says whether a search hit or a context entry
answers a query: by node ID (braindump, manual), by file (adr), by file and a
line inside the target heading's section (literate: a hit's line is its best
passage's; a context entry counts when it gives a line of that section).
"""

from __future__ import annotations

import re
import shutil
import sys
import uuid
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpora"
SOURCES = {"braindump": SHARED / "braindump", "adr": SHARED / "adr", "literate": SHARED / "literate",
           "manual": REPO / "notes"}
LITERATE_SHIFT = 3  # lines of the property drawer put on top of a literate file


def node_id(kind: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"orgkit-bench:{kind}:{name}"))


def build(corpus: str, dest: Path, source: Path | None = None) -> Path:
    """Write CORPUS as a notes directory at `dest` (replaced if there)."""
    source = source or SOURCES[corpus]
    if dest.exists():
        shutil.rmtree(dest)
    if corpus in ("braindump", "manual"):
        shutil.copytree(source, dest)
    elif corpus == "adr":
        dest.mkdir(parents=True)
        for md in sorted(source.glob("[0-9]*.md")):
            (dest / f"{md.stem}.org").write_text(adr_note(md), encoding="utf-8")
    else:
        for org in sorted(source.rglob("*.org")):
            rel = org.relative_to(source).as_posix()
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(f":PROPERTIES:\n:ID: {node_id('literate', rel)}\n:END:\n"
                           + org.read_text(encoding="utf-8", errors="replace"), encoding="utf-8")
    return dest


def adr_note(md: Path) -> str:
    """A markdown ADR as an org note."""
    lines = md.read_text(encoding="utf-8").splitlines()
    title = next((line.lstrip("#").strip() for line in lines if line.startswith("#")), md.stem)
    out = [":PROPERTIES:", f":ID: {node_id('adr', md.name)}", ":END:", f"#+title: {title}", ""]
    first, fenced = True, False
    for line in lines:
        if line.startswith("```"):
            out.append("#+end_example" if fenced else "#+begin_example")
            fenced = not fenced
        elif not fenced and (m := re.match(r"^(#+)\s+(.*)", line)):
            if first:
                first = False
                continue
            out.append("*" * max(1, len(m.group(1)) - 1) + " " + m.group(2))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _section_end(dest: Path, file: str, line: int) -> int:
    """The last line of the section of the heading at `line` (1-based) in `dest/file`."""
    lines = (dest / file).read_text(encoding="utf-8", errors="replace").splitlines()
    level = len(lines[line - 1]) - len(lines[line - 1].lstrip("*"))
    for n in range(line, len(lines)):
        stars = len(lines[n]) - len(lines[n].lstrip("*"))
        if 0 < stars <= level and lines[n][stars:stars + 1] == " ":
            return n
    return len(lines)


def matcher(corpus: str, dest: Path, query: dict) -> Callable[[dict], bool]:
    """Whether a hit or context entry ({id, file, line, passages?, excerpt?}) answers `query`."""
    targets = [t for t in [query.get("target"), *query.get("also", [])] if t]
    if corpus in ("braindump", "manual"):
        ids = {t["id"] for t in targets}
        return lambda entry: entry["id"] in ids
    if corpus == "adr":
        files = {Path(t["file"]).stem + ".org" for t in targets}
        return lambda entry: entry["file"] in files
    spans = [(t["file"], t["line"] + LITERATE_SHIFT, _section_end(dest, t["file"], t["line"] + LITERATE_SHIFT))
             for t in targets]

    def answers(entry: dict) -> bool:
        if "content" in entry:  # a context entry: the lines it gives
            given = ([(p["line"], p["end_line"]) for p in entry.get("passages", [])] if entry.get("excerpt")
                     else [(entry["line"], entry["line"] + entry["content"].count("\n"))])
        else:
            given = [(entry["line"], entry["line"])]
        return any(entry["file"] == f and a <= last and first <= b
                   for f, first, last in spans for a, b in given)
    return answers


if __name__ == "__main__":
    build(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) > 3 else None)
