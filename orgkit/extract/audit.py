"""The auditor's checks, at the end of a run and any time later (`orgkit audit`).

Each quote note is read back: its quote block, `:START:`/`:END:` and
`:SOURCE_SHA256:`. The source copy with that hash must still hash to it, and
`text[start:end]` must equal the quote. When the original file has changed
since, the quote is looked for in the new text: found, the note is
re-anchored (new offsets and hash, the new content copied into the data
dir); not found, the note is marked `:STALE: t`. Nothing is ever deleted.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..files import replace_file
from ..org.write import atomic_write
from ..retrieve.locate import note_ids
from .anchor import find_quote
from .sources import decode_source, sources_dir

_DRAWER_END = re.compile(r"^[ \t]*:END:[ \t]*$", re.M | re.I)
_BLOCK = re.compile(r"^#\+begin_quote\n(.*?)\n#\+end_quote$", re.S | re.M | re.I)


def read_quote_note(path: Path) -> dict | None:
    """The quote, offsets, hash and stale flag a quote note holds; None when it is gone."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    head, _ = _split_drawer(text)
    props = dict(re.findall(r"^:([A-Z_0-9]+):[ \t]*(.*?)[ \t]*$", head, re.M))
    block = _BLOCK.search(text)
    quote = "\n".join(line[1:] if line.startswith(",") else line
                      for line in block.group(1).split("\n")) if block else ""
    try:
        start, end = int(props.get("START", "")), int(props.get("END", ""))
    except ValueError:
        start = end = -1
    return {"quote": quote, "start": start, "end": end, "sha256": props.get("SOURCE_SHA256", ""),
            "stale": props.get("STALE", "nil") not in ("", "nil"), "text": text}


def copy_text(data_dir: Path, sha256: str, suffix: str) -> str | None:
    """The source copy with this hash, if it exists and still has it."""
    copy = sources_dir(data_dir) / f"{sha256}{suffix}"
    try:
        data = copy.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != sha256:
        return None
    return decode_source(data, str(copy))


def verify_source(notes: Path, data_dir: Path, source: dict, claims: list[dict], dimensions: list[str],
                  reanchor: bool) -> dict:
    """Check every quote of one source; with `reanchor`, follow a changed original too."""
    suffix = Path(source["path"]).suffix.lower()
    current = _current_original(source)
    report = {"source": source["given"], "quotes": len(claims), "verified": 0, "reanchored": 0, "stale": 0,
              "missing": 0, "coverage": {d: 0 for d in dimensions}, "problems": []}
    for claim in claims:
        report["coverage"][claim["dimension"]] = report["coverage"].get(claim["dimension"], 0) + 1
        path = notes / claim["quote_file"]
        note = read_quote_note(path)
        if note is None:
            report["missing"] += 1
            report["problems"].append(f"{claim['quote_file']}: quote note is missing")
            continue
        text = copy_text(data_dir, note["sha256"], suffix)
        intact = text is not None and note["start"] >= 0 and text[note["start"]:note["end"]] == note["quote"]
        if reanchor and current is not None and current[0] != note["sha256"]:
            outcome = _follow(notes, path, note, current, data_dir, suffix)
            report[outcome] += 1
            if outcome == "reanchored":
                claim.update(start=note["start"], end=note["end"])
            continue
        if intact and not note["stale"]:
            report["verified"] += 1
        else:
            report["stale"] += 1
            report["problems"].append(f"{claim['quote_file']}: quote not at {note['start']}-{note['end']} "
                                      f"of its source ({note['sha256'][:12]})")
    return report


def _current_original(source: dict) -> tuple[str, str, bytes] | None:
    """(sha256, text, bytes) of the original file now, or None when it is gone or unreadable."""
    try:
        data = Path(source["path"]).read_bytes()
        return hashlib.sha256(data).hexdigest(), decode_source(data, source["path"]), data
    except (OSError, ValueError):
        return None


def _follow(notes: Path, path: Path, note: dict, current: tuple[str, str, bytes], data_dir: Path, suffix: str) -> str:
    """Re-anchor a quote note in the changed original, or mark it stale."""
    sha, text, data = current
    found = find_quote(text, note["quote"], near=note["start"])
    old = note["text"]
    if found is None:
        new = _set_props(old, {"STALE": "t"})
        outcome = "stale"
    else:
        copy = sources_dir(data_dir) / f"{sha}{suffix}"
        if not copy.exists():
            replace_file(copy, data)
        start, end = found
        new = _set_props(old, {"START": str(start), "END": str(end), "SOURCE_SHA256": sha, "STALE": "nil"})
        new = _BLOCK.sub(lambda m: "#+begin_quote\n" + "\n".join(
            ("," + line) if re.match(r"^(\*|[ \t]*#\+|[ \t]*,)", line) else line
            for line in text[start:end].split("\n")) + "\n#+end_quote", new, count=1)
        note.update(start=start, end=end, sha256=sha)
        outcome = "reanchored"
    if new != old:
        atomic_write(path, new.encode("utf-8"), expected=old.encode("utf-8"), ids=note_ids(notes))
    return outcome


def _set_props(text: str, values: dict[str, str]) -> str:
    head, tail = _split_drawer(text)
    for key, value in values.items():
        line = f"{':' + key + ':':<10} {value}"
        pattern = re.compile(rf"^:{key}:.*$", re.M)
        head = pattern.sub(line, head, count=1) if pattern.search(head) else head.rstrip("\n") + "\n" + line + "\n"
    return head + tail


def _split_drawer(text: str) -> tuple[str, str]:
    """The top property drawer's lines before its `:END:` line, and the rest from that line on."""
    m = _DRAWER_END.search(text)
    return (text[: m.start()], text[m.start():]) if m else (text, "")
