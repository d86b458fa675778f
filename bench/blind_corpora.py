"""The corpora of bench/retrieval_blind/ as notes directories orgkit takes in, and their targets.

    python bench/blind_corpora.py CORPUS DEST [SOURCE] [--no-ids] [--one-file]

CORPUS: braindump, adr, manual, literate, enews, npmdocs, elpadocs, litnotes, agenda, roamdaily or
roamdaily2.

- braindump and the manual are org-roam notes already: copied as they are;
- adr: each markdown ADR becomes an org note: a file `:ID:` derived from its
  name (`adr_id`), `#+title:` from its first heading, `##` sections as `*`
  headings (one level per `#` after the first), code fences as example blocks;
- literate: each `.org` file gets a file `:ID:` derived from its path in a
  property drawer on top (three lines, so a target's line moves down by
  LITERATE_SHIFT), nothing else changed;
- npmdocs: the seventeen pages of npm's manual on using and configuring it
  (npm 11.19.1's, as node ships it), each an org note as an ADR becomes one
  (`npm_note`): a small folder on one tool, as adr is;
- enews: release notes in outline form (Emacs 26 and 27, Org, ERC, MH-E, Calc,
  nXML), as Emacs 28.2 ships them in its `etc` folder (Debian's emacs-common),
  copied as `.org` files under the names ENEWS gives them, nothing changed: a
  folder without IDs, one subject. Their hashes are checked, since targets are
  lines.
- elpadocs: the documentation in org of the Emacs packages Debian 12 ships
  (73 files of 62 `elpa-*` packages: READMEs, manuals, release notes), each
  as `PACKAGE/NAME.org`, nothing changed: a folder of many small documents,
  most without IDs, prose beside configuration snippets, as a literate
  config is. SOURCE is the folder of the packages' `.deb` files
  (`apt-get download`, the versions in ELPADOCS); every file's hash is checked.
- litnotes: literate programs and configurations written for this benchmark
  (bench/retrieval_blind/litnotes, CC0): eighteen files in five folders, most
  of each file's text inside source blocks, as in the held-out literate
  corpus, copied as they are: no IDs.
- agenda: one person's org folder of work and home written for this benchmark
  (bench/retrieval_blind/agenda, CC0): eighteen files, TODO trees with their
  drawers and planning lines, meetings, a datetree journal, checklists; many
  short headings, copied as they are: no IDs.
- roamdaily: an org-roam folder written for this benchmark
  (bench/retrieval_blind/roamdaily, CC0): daily notes and permanent notes of
  one person's work and home, every file a node with an ID, TODO items and
  decisions written as headings with nothing under them; roamdaily2, another
  (bench/retrieval_blind/roamdaily2, CC0), another person's, held out.

With `--no-ids` a corpus is built as most org folders are, without IDs:
literate gets no drawer, and every `:ID:` line of braindump, the manual and
roamdaily (roamdaily2) is removed (with a property drawer it leaves empty), so orgkit finds them as
files and headings without IDs (org/units.py).

With `--one-file` (braindump and the manual), the corpus is built as those who
keep one big org file have it: every note a top-level heading of ONE_FILE
(its title, its file tags as the heading's), its own headings a level down,
no IDs.

`matcher(corpus, dest, query)` says whether a search hit or a context entry
answers a query: by node ID (braindump, manual), by file (adr, npmdocs), by file and a
line inside the target heading's section (literate, enews, elpadocs, litnotes, agenda, roamdaily (roamdaily2), and
braindump_sections' sections of braindump's notes: a hit's line is its best passage's; a context
entry counts when it gives a line of that section).
Without IDs, braindump's and the manual's targets are judged the literate
way: by file and a line inside the target node's text (a file node: the
whole file; a heading node: its subtree), and braindump_sections' by a line
inside the section, their lines as they are once the IDs are gone (and, in a
corpus built as one file, where those lines went in it).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path
from typing import Callable
from urllib.parse import unquote

REPO = Path(__file__).resolve().parents[1]
# ORGKIT_SHARED_CORPORA: for a checkout with no ../shared beside it
SHARED = Path(os.environ.get("ORGKIT_SHARED_CORPORA", REPO.parent / "shared" / "corpora"))
EMACS_ETC = Path(os.environ.get("ORGKIT_EMACS_ETC", "/usr/share/emacs/28.2/etc"))  # where Emacs keeps its NEWS files
NPM_DOCS = Path(os.environ.get("ORGKIT_NPM_DOCS", "/usr/lib/node_modules/npm/docs/content"))  # npm's own manual
SOURCES = {"braindump": SHARED / "braindump", "adr": SHARED / "adr", "literate": SHARED / "literate",
           "manual": REPO / "notes", "enews": EMACS_ETC, "npmdocs": NPM_DOCS, "elpadocs": None,
           "litnotes": REPO / "bench" / "retrieval_blind" / "litnotes",
           "agenda": REPO / "bench" / "retrieval_blind" / "agenda",
           "roamdaily": REPO / "bench" / "retrieval_blind" / "roamdaily",
           "roamdaily2": REPO / "bench" / "retrieval_blind" / "roamdaily2"}
# enews: each note's name, the Emacs file it is, and that file's SHA-256 in Emacs 28.2
ENEWS = {
    "calc-news.org": ("CALC-NEWS", "fa4cbd0a064cb44a0acf0c631ac2d960a9f2f354f426e27d7aaaa1c99ead69d4"),
    "emacs-26-news.org": ("NEWS.26", "843078de3ee0f484e9a37075cd29116bcc24d197f01ab987402aea094ce9b0a7"),
    "emacs-27-news.org": ("NEWS.27", "e84bd822168ee004fcc0d4b0b62d214bff2ed1c4ccc54d70491f93c73a7b3411"),
    "erc-news.org": ("ERC-NEWS", "41d45fdcdf3e94695c09ecd44bf4624251b0225f143ae639302aae3e156494b2"),
    "mh-e-news.org": ("MH-E-NEWS", "2ae049b92c83c2669dc255e5805366d5017ccd17204cc92702b99d210834559b"),
    "nxml-news.org": ("NXML-NEWS", "13e41f3ad9ea8ce525b47727e1a2865a8f51c270edac2637507eddbcad73fc4d"),
    "org-news.org": ("ORG-NEWS", "f4705a6d88b842a726d89f77dca624f6518fdc6325e5ce4e0a91d1d0c547bb4d"),
}
# npmdocs: the pages of npm's manual taken (their paths under NPM_DOCS) and their SHA-256 in npm 11.19.1
NPMDOCS = {
    "configuring-npm/folders.md": "350ff467e2c4c6ae5d68cc7e2128d3115743971e99839753520612e1ffe1a522",
    "configuring-npm/install.md": "edaed251152c5ae1d435082e9d811028be4bc276aa809022af3076214cb25cfa",
    "configuring-npm/npm-shrinkwrap-json.md": "19e6c7fcd19a29e457edb669fa050f50b4ae39cab2a20a56399861dff4e4d617",
    "configuring-npm/npmrc.md": "27679e35984fed04bb01697704e096092839c968fd797ce6e50c4660959d4df6",
    "configuring-npm/package-json.md": "3644b6951ffe70f98f02456ce7fb5b8888906e474705d979fa0bbb2eddfb42c1",
    "configuring-npm/package-lock-json.md": "41b2fbcb9b4436368b079f8efbe0cbcff92641d031fbf3ecdd98e3c5ba5310d6",
    "using-npm/config.md": "01feec10d720e14f67b9d835e27db58e30fa13b73eee13471194deb241cb0495",
    "using-npm/dependency-selectors.md": "5038794ecfa8801b2c2f37d5d32ca302eec1a48a04b45ebdc6717985d5d93d04",
    "using-npm/developers.md": "98520436e38cee73dd5a2ce56de84bdb9c3f8e1de0a6f209deebe9cb11696ff7",
    "using-npm/logging.md": "900db43ef2eee353b87c66b4385dcb14aff73f71f2c85ff93c9bcda951fb89d9",
    "using-npm/orgs.md": "c0627e35a4df724fd448052b6f63fb764152339a9a3f924dcb129f8e6b70cea5",
    "using-npm/package-spec.md": "de31cf3dcd710c6aac5e18d170adea815365b5296b8fcac6510ac8e84500ffd1",
    "using-npm/registry.md": "fce7ad40d89f636ee47828c967f36eb14ad10f969b3ff658d67b8720afbe21cb",
    "using-npm/removal.md": "41c1f5d4bf35eea318f2b9ca8ce629bf7c5fa0751f13266b69dca782ec3dd30f",
    "using-npm/scope.md": "a3d5191047739a56ab0e6110d38eacc25c870aede38ffcb33d8a93481c4c757f",
    "using-npm/scripts.md": "65e6a99222ab1f46696c6626747a488bd0429c6ae54898c6cb43f19e2282953d",
    "using-npm/workspaces.md": "87f5ce2c28468c9d5fa1789805b2131641f989f122da9771bd0b5ac4c8ec8d5a",
}
# elpadocs: each file, the .deb it is in, its path there (gzipped: .gz) and its SHA-256
ELPADOCS = REPO / "bench" / "retrieval_blind" / "elpadocs_files.json"
LITERATE_SHIFT = 3  # lines of the property drawer put on top of a literate file
ONE_FILE = "all-notes.org"  # the one file a corpus built `--one-file` is


def node_id(kind: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"orgkit-bench:{kind}:{name}"))


def build(corpus: str, dest: Path, source: Path | None = None, ids: bool = True, one_file: bool = False) -> Path:
    """Write CORPUS as a notes directory at `dest` (replaced if there), without IDs unless `ids`, as
    one file with `one_file` (braindump and the manual)."""
    source = source or SOURCES.get(corpus)
    if dest.exists():
        shutil.rmtree(dest)
    if one_file:
        if corpus not in ("braindump", "manual"):
            raise SystemExit(f"--one-file takes a folder of notes (braindump or manual), not {corpus}")
        dest.mkdir(parents=True)
        (dest / ONE_FILE).write_text(as_one_file(source)[0], encoding="utf-8")
    elif corpus in ("braindump", "manual", "roamdaily", "roamdaily2"):
        shutil.copytree(source, dest)
        if not ids:
            for org in dest.rglob("*.org"):
                org.write_text(strip_ids(org.read_text(encoding="utf-8", errors="replace"))[0], encoding="utf-8")
    elif corpus in ("litnotes", "agenda") or (corpus == "literate" and not ids):
        for org in sorted(source.rglob("*.org")):
            out = dest / org.relative_to(source)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(org.read_text(encoding="utf-8", errors="replace"), encoding="utf-8")
    elif corpus == "enews":
        dest.mkdir(parents=True)
        for name, (emacs_name, sha) in ENEWS.items():
            data = (source / emacs_name).read_bytes()
            if hashlib.sha256(data).hexdigest() != sha:
                raise SystemExit(f"{source / emacs_name} is not the one the enews queries were written on "
                                 "(Emacs 28.2's; ORGKIT_EMACS_ETC names another etc folder)")
            (dest / name).write_bytes(data)
    elif corpus == "npmdocs":
        dest.mkdir(parents=True)
        for rel, sha in NPMDOCS.items():
            md = source / rel
            if hashlib.sha256(md.read_bytes()).hexdigest() != sha:
                raise SystemExit(f"{md} is not the one the npmdocs queries were written on "
                                 "(npm 11.19.1's; ORGKIT_NPM_DOCS names another docs folder)")
            (dest / f"{md.stem}.org").write_text(npm_note(md, rel), encoding="utf-8")
    elif corpus == "elpadocs":
        if source is None:
            raise SystemExit("elpadocs needs SOURCE, the folder of its .deb files: " + elpa_download())
        dest.mkdir(parents=True)
        for rel, (deb, member, sha) in json.loads(ELPADOCS.read_text(encoding="utf-8")).items():
            data = deb_member(source / deb, member)
            if hashlib.sha256(data).hexdigest() != sha:
                raise SystemExit(f"{rel} in {source / deb} is not the one the elpadocs queries were written on")
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(data)
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


_ID_LINE = re.compile(r"^[ \t]*:ID:[ \t]+\S", re.I)


def strip_ids(text: str) -> tuple[str, list[int]]:
    """`text` without its `:ID:` lines (and the property drawers they leave empty), and where each
    of its lines went (1-based; a removed line maps to the next line kept)."""
    lines = text.split("\n")
    drop = {i for i, line in enumerate(lines) if _ID_LINE.match(line)}
    for i in sorted(drop):
        before, after = i - 1, i + 1
        while before in drop:
            before -= 1
        while after in drop:
            after += 1
        if (0 <= before and after < len(lines) and lines[before].strip().upper() == ":PROPERTIES:"
                and lines[after].strip().upper() == ":END:"):
            drop |= {before, after}
    kept, where, n = [], [], 0
    for i, line in enumerate(lines):
        where.append(n + 1)
        if i not in drop:
            kept.append(line)
            n += 1
    return "\n".join(kept), where


_FILE_KEYWORD = re.compile(r"#\+(title|filetags):", re.I)  # what a note's heading takes the place of


def as_one_file(source: Path) -> tuple[str, dict[str, list[int]]]:
    """Every note under `source` as one org file without IDs: each note a top-level heading (its title,
    its file tags), its headings a level down, its title and file tags lines folded into that heading;
    and, per note (by its path), where each of its lines once its IDs are gone (strip_ids) went, 1-based
    (its first line and the folded ones: the note's heading)."""
    from orgkit.org import parse_org

    out: list[str] = []
    moved: dict[str, list[int]] = {}
    for org in sorted(source.rglob("*.org")):
        rel = org.relative_to(source).as_posix()
        text = strip_ids(org.read_text(encoding="utf-8", errors="replace"))[0]
        note, lines = parse_org(text, rel).units[0], text.split("\n")
        out.append(f"* {note.title or org.stem}" + (f" :{':'.join(note.tags)}:" if note.tags else ""))
        heading, where = len(out), []
        for n, line in enumerate(lines):
            folded = _FILE_KEYWORD.match(line)
            if not folded:
                out.append("*" + line if re.match(r"\*+ ", line) else line)
            where.append(heading if folded or n == 0 else len(out))
        moved[rel] = where
    return "\n".join(out) + "\n", moved


@functools.cache
def _one_file_lines(corpus: str) -> dict[str, list[int]]:
    return as_one_file(SOURCES[corpus])[1]


def _in_one_file(corpus: str, file: str, *lines: int) -> tuple:
    """(ONE_FILE, where each of `lines` of `file`, without IDs, went in the corpus built as one file)."""
    where = _one_file_lines(corpus)[file]
    return (ONE_FILE, *(where[min(line, len(where)) - 1] for line in lines))


def elpa_download() -> str:
    """The command that fetches elpadocs' packages, at the versions its queries were written on."""
    debs = sorted({deb for deb, _, _ in json.loads(ELPADOCS.read_text(encoding="utf-8")).values()})
    return "apt-get download " + " ".join("=".join(unquote(deb).split("_")[:2]) for deb in debs)


def deb_member(deb: Path, member: str) -> bytes:
    """The file at `member` in the Debian package `deb` (unzipped when it ends in .gz)."""
    if not deb.is_file():
        raise SystemExit(f"{deb} is missing: " + elpa_download())
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        extracted = archive.extractfile("./" + member)
        if extracted is None:
            raise SystemExit(f"{member} is not a file in {deb}")
        data = extracted.read()
    return gzip.decompress(data) if member.endswith(".gz") else data


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


def npm_note(md: Path, rel: str) -> str:
    """A page of npm's manual as an org note: a file `:ID:` derived from `rel`, its front matter's title
    and description, `###` sections as `*` headings, `*` bullets as `-` ones, code fences as example blocks."""
    text = md.read_text(encoding="utf-8")
    front, _, body = text.removeprefix("---\n").partition("\n---\n")
    meta = dict(line.split(": ", 1) for line in front.splitlines() if ": " in line)
    out = [":PROPERTIES:", f":ID: {node_id('npmdocs', rel)}", ":END:", f"#+title: {meta.get('title', md.stem)}", ""]
    out += [meta["description"], ""] if "description" in meta else []
    fenced = False
    for line in body.splitlines():
        if line.startswith("```"):
            out.append("#+end_example" if fenced else "#+begin_example")
            fenced = not fenced
        elif not fenced and (m := re.match(r"^(#+)\s+(.*)", line)):
            out.append("*" * max(1, len(m.group(1)) - 2) + " " + m.group(2))
        else:
            out.append("- " + line[2:] if not fenced and line.startswith("* ") else line)  # a bullet, not a heading
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


def _node_span(corpus: str, target: dict) -> tuple[str, int, int]:
    """(file, first line, last line) of a target node's text once the corpus's IDs are removed."""
    from orgkit.org import parse_org

    text = (SOURCES[corpus] / target["file"]).read_text(encoding="utf-8", errors="replace")
    node = next(n for n in parse_org(text, target["file"]).nodes if n.id == target["id"])
    where = strip_ids(text)[1]
    return target["file"], where[node.line - 1], where[min(node.end_line, len(where)) - 1]


def _line_without_ids(corpus: str, file: str, line: int) -> int:
    """Where line `line` of a corpus file is once its IDs are removed."""
    return strip_ids((SOURCES[corpus] / file).read_text(encoding="utf-8", errors="replace"))[1][line - 1]


def matcher(corpus: str, dest: Path, query: dict, ids: bool = True) -> Callable[[dict], bool]:
    """Whether a hit or context entry ({id, file, line, passages?, excerpt?}) answers `query` (in the
    corpus built with or without `ids`)."""
    targets = [t for t in [query.get("target"), *query.get("also", [])] if t]
    one_file = not ids and corpus in ("braindump", "manual") and (dest / ONE_FILE).is_file()
    if corpus in ("braindump", "roamdaily", "roamdaily2") and targets and "line" in targets[0]:  # a section
        lines = [(t["file"], t["line"] if ids else _line_without_ids(corpus, t["file"], t["line"])) for t in targets]
        lines = [_in_one_file(corpus, f, line) for f, line in lines] if one_file else lines
        return _answers([(f, line, _section_end(dest, f, line)) for f, line in lines])
    if corpus in ("braindump", "manual") and ids:
        wanted = {t["id"] for t in targets}
        return lambda entry: entry["id"] in wanted
    if corpus in ("adr", "npmdocs"):
        files = {Path(t["file"]).stem + ".org" for t in targets}
        return lambda entry: entry["file"] in files
    if corpus in ("braindump", "manual"):
        spans = [_node_span(corpus, t) for t in targets]
        spans = [_in_one_file(corpus, f, first, last) for f, first, last in spans] if one_file else spans
    else:
        shift = LITERATE_SHIFT if ids and corpus == "literate" else 0
        spans = [(t["file"], t["line"] + shift, _section_end(dest, t["file"], t["line"] + shift)) for t in targets]
    return _answers(spans)


def _answers(spans: list[tuple[str, int, int]]) -> Callable[[dict], bool]:
    """Whether a hit (its line) or a context entry (a line it gives) falls in one of `spans` (file, first, last)."""

    def answers(entry: dict) -> bool:
        if "content" in entry:  # a context entry: the lines it gives
            given = ([(p["line"], p["end_line"]) for p in entry.get("passages", [])] if entry.get("excerpt")
                     else [(entry["line"], entry["line"] + entry["content"].rstrip("\n").count("\n"))])
        else:
            given = [(entry["line"], entry["line"])]
        return any(entry["file"] == f and a <= last and first <= b
                   for f, first, last in spans for a, b in given)
    return answers


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a not in ("--no-ids", "--one-file")]
    if len(args) not in (2, 3) or args[0] not in SOURCES:
        raise SystemExit("usage: " + __doc__.split("\n")[2].strip())
    one = "--one-file" in sys.argv
    build(args[0], Path(args[1]), Path(args[2]) if len(args) > 2 else None,
          ids="--no-ids" not in sys.argv and not one, one_file=one)
