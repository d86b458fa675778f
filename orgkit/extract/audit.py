"""The auditor's checks, at the end of a run and any time later (`orgkit audit`).

Each claim note's quote heading is read back: its verbatim block,
`:START:`/`:END:` and `:SOURCE_SHA256:`. The source copy with that hash must
still hash to it, and `text[start:end]` must equal the quote. When the original
file has changed since, the quote is looked for in the new text: found, the
quote heading is written again with the new offsets and hash (drawer and
sentence alike; the new content copied into the data dir); not found, the quote
heading and the claim are marked `:STALE: t` (and the run's hub says so).
Nothing is ever deleted.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..files import replace_file
from ..org import parse_org
from ..org.escape import read_verbatim_block
from ..org.write import atomic_write
from ..locator import note_ids
from .anchor import find_quote
from .notes import quote_section
from .sources import decode_source, sources_dir
from .store import claim_note, refused_claim

_DRAWER_END = re.compile(r"^[ \t]*:END:[ \t]*$", re.M | re.I)


def read_quote_note(path: Path, quote_id: str) -> dict | None:
    """The quote, offsets, hash and stale flag of the quote node `quote_id` in the claim note at
    `path`, with the note's text and the quote heading's line; None when either is gone."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    node = next((n for n in parse_org(text, str(path)).nodes if n.id == quote_id), None)
    if node is None:
        return None
    lines = text.split("\n")
    quote = read_verbatim_block("\n".join(lines[node.line:])) or ""
    props = node.properties
    try:
        start, end = int(props.get("START", "")), int(props.get("END", ""))
    except ValueError:
        start = end = -1
    return {"quote": quote, "start": start, "end": end, "sha256": props.get("SOURCE_SHA256", ""),
            "stale": props.get("STALE", "nil") not in ("", "nil"), "text": text, "line": node.line}


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


def verify_source(notes: Path, data_dir: Path, source: dict, claims: list[dict], tags: dict[str, str],
                  reanchor: bool) -> dict:
    """Check every quote of one source (`tags`: each dimension's tag); with `reanchor`, follow a
    changed original too, and mark each claim `stale` or not."""
    dimensions = list(tags)
    suffix = Path(source["path"]).suffix.lower()
    current = _current_original(source) if reanchor else None
    report = {"source": source["given"], "quotes": len(claims), "verified": 0, "reanchored": 0, "stale": 0,
              "missing": 0, "coverage": {d: 0 for d in dimensions}, "problems": []}
    for claim in claims:
        report["coverage"][claim["dimension"]] = report["coverage"].get(claim["dimension"], 0) + 1
        path = claim_note(notes, claim)
        if path is None:
            report["missing"] += 1
            report["problems"].append(refused_claim(claim.get("run", "?"), claim))
            continue
        note = read_quote_note(path, claim["quote_id"])
        if note is None:
            report["missing"] += 1
            report["problems"].append(f"{claim['claim_file']}: claim note or its quote is missing")
            continue
        text = copy_text(data_dir, note["sha256"], suffix)
        intact = text is not None and note["start"] >= 0 and text[note["start"]:note["end"]] == note["quote"]
        if reanchor and current is not None and current[0] != note["sha256"]:
            outcome = _follow(notes, path, note, current, data_dir, suffix, source, claim,
                              tags.get(claim["dimension"], ""))
            report[outcome] += 1
            claim["stale"] = outcome == "stale"
            if outcome == "reanchored":
                claim.update(start=note["start"], end=note["end"])
            continue
        if intact and not note["stale"]:
            report["verified"] += 1
        else:
            report["stale"] += 1
            report["problems"].append(f"{claim['claim_file']}: quote not at {note['start']}-{note['end']} "
                                      f"of its source ({note['sha256'][:12]})")
    return report


def _current_original(source: dict) -> tuple[str, str, bytes] | None:
    """(sha256, text, bytes) of the original file now, or None when it is gone or unreadable."""
    try:
        data = Path(source["path"]).read_bytes()
        return hashlib.sha256(data).hexdigest(), decode_source(data, source["path"]), data
    except (OSError, ValueError):
        return None


def _follow(notes: Path, path: Path, note: dict, current: tuple[str, str, bytes], data_dir: Path, suffix: str,
            source: dict, claim: dict, tag: str) -> str:
    """Re-anchor a quote in the changed original, or mark it stale: the quote heading is written
    again whole (drawer, sentence and text agree) and the claim's own drawer says `:STALE:`."""
    sha, text, data = current
    found = find_quote(text, note["quote"], near=note["start"])
    if found is None:
        start, end, quote, stale = note["start"], note["end"], note["quote"], True
        anchored = {**source, "sha256": note["sha256"]}
        outcome = "stale"
    else:
        copy = sources_dir(data_dir) / f"{sha}{suffix}"
        if not copy.exists():
            replace_file(copy, data)
        start, end = found
        quote, stale = text[start:end], False
        anchored = {**source, "sha256": sha}
        note.update(start=start, end=end, sha256=sha)
        outcome = "reanchored"
    rewrite_quote(notes, path, note, anchored, {**claim, "start": start, "end": end, "quote": quote}, tag, stale)
    return outcome


def rewrite_quote(notes: Path, path: Path, note: dict, source: dict, claim: dict, tag: str, stale: bool) -> None:
    """Write the claim note's quote heading again for `claim`'s offsets and text (`source`: its
    hash), through the one writer; the claim's drawer says `:STALE: t` when the quote is lost."""
    old = note["text"]
    lines = old.split("\n")
    section = quote_section(claim["quote_id"], source, claim, tag, _prop(old, "RUN"), stale=stale)
    flag = {"STALE": "t"} if stale else ({"STALE": "nil"} if _prop(old, "STALE") else {})
    new = set_props("\n".join(lines[: note["line"] - 1]) + "\n", flag) + section
    if new != old:
        atomic_write(path, new.encode("utf-8"), expected=old.encode("utf-8"), ids=note_ids(notes))


def _prop(text: str, key: str) -> str:
    m = re.search(rf"^:{key}:[ \t]*(.*?)[ \t]*$", _split_drawer(text)[0], re.M)
    return m.group(1) if m else ""


def set_props(text: str, values: dict[str, str]) -> str:
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
