"""Bringing the index up to date with the notes directory, incrementally.

A file is re-read only when its size or mtime changed, and re-parsed only when
its content hash changed too. All changes to files, nodes, links and passages
are committed in one transaction, so a reader (or a run killed half-way) sees
the old index or the new one. Vectors are keyed by passage hash and model
fingerprint: only passages whose text is new to the model are embedded, a
moved or renamed note costs nothing, and embedding commits batch by batch, so
a killed run loses at most one batch and the next run embeds the rest.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _json_string
from pathlib import Path
from stat import S_ISREG
from typing import Callable, Mapping

from ..embed import Embedder, ModelUnavailable
from ..confine import writable
from ..errors import OrgkitError
from ..org import OrgFile, parse_outlined
from ..org.acyclic import collector_paused
from ..vault import decode_note, iter_org_files, read_org_bytes, require_dir
from ..storage.backend import IndexBusy
from .chunks import Chunk, chunk_file
from ..storage.db import write_transaction
from .kinds import NOTE, node_kinds
from .embedding import Progress, embed_pending, pending_count
from .file_store import FileRows, FileStore
from .outlines import section_rows
from .store import Index, bump_generation, keep_generation

_RACY_NS = 2_000_000_000  # files this recent may change again within the same mtime
CHECKED = "checked"  # in the state dir: its mtime is when the last whole check of the files began


@dataclass
class UpdateStats:
    """What an update did, for the user and the benchmarks."""

    files: int = 0
    parsed: int = 0
    removed: int = 0
    chunks: int = 0
    embedded: int = 0  # distinct passage texts embedded
    tokens: int = 0  # their tokens
    pending: int = 0  # passage texts still without a vector for the current model
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    model_error: str | None = None
    attachments: list[str] = field(default_factory=list)  # org files left out under a data/ folder

    def to_json(self) -> dict:
        return {"files": self.files, "parsed": self.parsed, "removed": self.removed,
                "chunks": self.chunks, "embedded": self.embedded, "tokens": self.tokens,
                "pending": self.pending,
                "seconds": round(self.seconds, 3), "warnings": self.warnings,
                "model_error": self.model_error, "attachments": len(self.attachments)}


def update(
    index: Index,
    *,
    embedder: Embedder | None = None,
    rebuild: bool = False,
    wait: bool = True,
    on_wait: Callable[[], None] | None = None,
    progress: Progress | None = None,
    workers: int = 1,
) -> UpdateStats:
    """Make the index match the notes; embed new passages when `embedder` is given.

    `progress` is called after each embedded batch; `workers` embedding
    workers share the work (PostgreSQL's queue; SQLite embeds with one). Without `wait`,
    a concurrent update raises IndexBusy instead of waiting for it.
    """
    started = time.perf_counter()
    require_dir(index.root)
    stats = UpdateStats()
    with index.backend.writer_lock(index, wait=wait, on_wait=on_wait):
        if rebuild:
            before = _generation_of_old(index)
            index.backend.clear(index)
            index.forget_file_states()
            with write_transaction(index.conn):  # the number keeps growing: memos are keyed by it
                keep_generation(index.conn, index.backend, before + 1)
        _sync_files(index, stats)
        if embedder is not None:
            _embed(index, embedder, stats, progress, workers)
        if stats.parsed or stats.removed or stats.embedded:
            index.backend.after_update(index, stats.parsed + stats.removed, stats.files + stats.removed)
    stats.seconds = time.perf_counter() - started
    return stats


def _generation_of_old(index: Index) -> int:
    """The generation of the index a rebuild replaces, 0 when it cannot be read (a newer schema, a
    damaged file: what a rebuild is for), for no process could read its memos' entries either."""
    try:
        return index.generation()
    except Exception:  # noqa: BLE001 - whatever is wrong with it, the old index is thrown away
        return 0


@dataclass(slots=True)
class _Parsed:
    path: str
    size: int
    mtime_ns: int
    hash: str
    parsed: OrgFile
    chunks: list[Chunk]
    modified_ns: int  # the file's mtime as it is (mtime_ns is -1 while it may still change)
    text: str | None  # kept only for a backend that stores the files' text


@collector_paused()  # many small objects, no cycles: see orgkit/org/acyclic.py
def _sync_files(index: Index, stats: UpdateStats) -> None:
    known = index.file_states()
    conn = index.conn
    now_ns = time.time_ns()
    touched: list[tuple[int, int, str]] = []
    changed: list[_Parsed] = []
    gone: list[str] = []
    present: set[str] = set()
    base = str(index.root)
    for rel in iter_org_files(index.root, attachments=stats.attachments):
        stats.files += 1
        present.add(rel)
        try:
            st = os.stat(f"{base}/{rel}")
        except OSError:
            continue
        mtime = st.st_mtime_ns if now_ns - st.st_mtime_ns > _RACY_NS else -1
        old = known.get(rel)
        if old is not None and old[0] == st.st_size and old[1] == st.st_mtime_ns:
            continue
        try:
            data = read_org_bytes(index.root, rel)
            digest = hashlib.sha1(data).hexdigest()
            if old is not None and old[2] == digest:
                touched.append((st.st_size, mtime, rel))
                continue
            text = decode_note(rel, data)
        except OrgkitError as exc:
            stats.warnings.append(str(exc))
            gone.append(rel)
            continue
        parsed, outline = parse_outlined(text, rel)
        stats.warnings.extend(str(w) for w in parsed.warnings)
        changed.append(_Parsed(rel, st.st_size, mtime, digest, parsed, chunk_file(parsed, text, outline),
                               st.st_mtime_ns, text if index.backend.stores_text else None))
    gone.extend(p for p in known if p not in present)
    stats.parsed = len(changed)
    stats.removed = sum(1 for p in gone if p in known)
    if not (touched or changed or stats.removed):
        return
    store = FileStore(conn, index.backend)
    with index.backend.bulk(conn), write_transaction(conn):
        store.touch(touched)
        seen = _first_seen(store, changed, known)
        for rel in [p.path for p in changed if p.path in known] + [p for p in gone if p in known]:
            store.remove(rel)
        stats.chunks += _insert_files(store, changed, seen)
        stats.warnings.extend(f"{d.file}:{d.line}: duplicate ID {d.id} (also at {d.other_file}:{d.other_line})"
                              for d in store.duplicate_ids([item.path for item in changed]))
        if changed or stats.removed:
            store.drop_unused_vectors()
            bump_generation(conn)
    index.forget_file_states()


def _first_seen(store: FileStore, changed: list[_Parsed], known: Mapping) -> dict[tuple[str, str], int]:
    """The first-seen number of each (ID, file) of the changed files: kept from the index
    while the file still holds the ID, else new, in order of file mtime, then path (so a
    full rebuild ranks the older file first, and a file that brings an ID later never
    takes it from the node that held it)."""
    seen = store.first_seen([p.path for p in changed if p.path in known])
    number = store.last_seen()
    for item in sorted(changed, key=lambda p: (p.modified_ns, p.path)):
        number += 1
        for node in item.parsed.nodes + item.parsed.units:
            seen.setdefault((node.id, item.path), number)
    return seen


def _insert_files(store: FileStore, items: list[_Parsed], seen: dict[tuple[str, str], int]) -> int:
    """Insert parsed files, one statement per table for all of them; returns their number of passages.

    Row ids are numbered here as SQLite numbers them (the largest plus one),
    so every backend gives the same rows the same ids.
    """
    if not items:
        return 0
    outline_row, node_row, chunk_row = store.next_rows()
    rows = FileRows([], [], [], [], [], [])
    for item in items:
        parsed = item.parsed
        rows.files.append((item.path, item.size, item.mtime_ns, item.hash, parsed.title))
        sections, outlines = section_rows(item.path, item.chunks, outline_row)
        outline_row += len(outlines)
        rows.outlines += outlines
        entries = parsed.nodes + parsed.units
        rowids = {id(node): node_row + k for k, node in enumerate(entries)}
        node_row += len(entries)
        kinds = node_kinds(parsed)
        rows.nodes += [(rowids[id(node)], node.id, node.file, node.level, node.pos, node.line, node.end_line,
                        node.title, node.todo, node.priority, sections.get(node.line - 1) if node.level else None,
                        _json_strings(node.tags), _json_strings(node.refs), _json_object(node.properties),
                        seen[(node.id, item.path)], kinds[k] if k < len(kinds) else NOTE, int(k >= len(kinds)))
                       for k, node in enumerate(entries)]
        rows.aliases += [(rowids[id(node)], a) for node in parsed.nodes for a in node.aliases]
        rows.links += [(item.path, link.source, link.dest, link.type, link.pos, link.line) for link in parsed.links]
        rows.passages += [(chunk_row + k, rowids[id(chunk.node)], item.path, chunk.line,
                           sections[chunk.section.line] if chunk.section is not None else None, chunk.body,
                           chunk.hash)
                          for k, chunk in enumerate(item.chunks)]
        chunk_row += len(item.chunks)
    store.insert(rows, [(item.path, item.text) for item in items if item.text is not None])
    return len(rows.passages)


def _json_strings(items: list[str]) -> str:
    """`json.dumps` of a list of strings, byte for byte, without its setup cost per call
    (three fields of every node: a file of 100,000 headings spent a tenth of its time there)."""
    return "[" + ", ".join(map(_json_string, items)) + "]" if items else "[]"


def _json_object(values: dict[str, str]) -> str:
    """`json.dumps` of a dict of strings to strings, byte for byte (see `_json_strings`)."""
    return "{" + ", ".join([f"{_json_string(k)}: {_json_string(v)}" for k, v in values.items()]) + "}"


def _embed(index: Index, embedder: Embedder, stats: UpdateStats, progress: Progress | None, workers: int) -> None:
    try:
        done = embed_pending(index, embedder, progress=progress, workers=workers)
    except ModelUnavailable as exc:
        stats.model_error = str(exc)
        stats.pending = pending_count(index, embedder.fingerprint)
        return
    stats.embedded, stats.tokens, stats.pending = done.done, done.tokens, done.total - done.done


def checked_ago(state_dir: Path) -> float | None:
    """Seconds since a process sharing `state_dir` (a server's other worker) began a whole check of
    the files that brought the index up to date (None: none is known). What changed before then is
    in the index already, and at 10k files a walk of the notes costs each process tens of
    milliseconds of CPU. A stamp from the future (a clock set back, a planted file) is not believed."""
    try:
        st = os.lstat(state_dir / CHECKED)
    except OSError:
        return None
    ago = time.time() - st.st_mtime
    return ago if S_ISREG(st.st_mode) and ago >= 0 else None


def note_checked(state_dir: Path, began: float) -> None:
    """Record that a whole check of the files, begun at `began` (`time.time()`), brought the index
    up to date (never through a symlink; without the stamp each process checks for itself)."""
    try:
        fd = os.open(writable(state_dir / CHECKED), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except (OSError, OrgkitError):  # not written: each process checks for itself
        return
    try:
        os.utime(fd, (began, began))
    finally:
        os.close(fd)


def refresh(
    index: Index,
    *,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> UpdateStats:
    """Update before answering a query; while another process writes, use the index as it is."""
    try:
        return update(index, embedder=embedder, wait=False, progress=progress)
    except IndexBusy:
        stats = UpdateStats()
        stats.warnings.append("another orgkit process is updating the index; using it as it is")
        return stats
