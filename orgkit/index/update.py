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
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _json_string
from typing import Callable, Iterator

from ..embed import Embedder, ModelUnavailable
from ..errors import OrgkitError
from ..files import LockBusy, file_lock
from ..org import OrgFile, parse_outlined
from ..org.acyclic import collector_paused
from ..vault import decode_note, iter_org_files, read_org_bytes, require_dir
from .chunks import Chunk, chunk_file
from .db import write_transaction
from .kinds import node_kinds
from .embedding import Progress, bump_generation, embed_pending, pending_count
from .outlines import insert_sections
from .store import DB_NAME, Index, bulk_cache

LOCK_NAME = "index.lock"
_RACY_NS = 2_000_000_000  # files this recent may change again within the same mtime


class IndexBusy(OrgkitError):
    """Another process is updating the index."""


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

    def to_json(self) -> dict:
        return {"files": self.files, "parsed": self.parsed, "removed": self.removed,
                "chunks": self.chunks, "embedded": self.embedded, "tokens": self.tokens,
                "pending": self.pending,
                "seconds": round(self.seconds, 3), "warnings": self.warnings,
                "model_error": self.model_error}


@contextmanager
def writer_lock(index: Index, *, wait: bool, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """The single-writer lock: a file lock, released by the kernel if the process dies."""
    index.state_dir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        try:
            stack.enter_context(file_lock(index.state_dir / LOCK_NAME, wait=wait, on_wait=on_wait))
        except LockBusy:
            raise IndexBusy("another orgkit process is updating the index") from None
        yield


def update(
    index: Index,
    *,
    embedder: Embedder | None = None,
    rebuild: bool = False,
    wait: bool = True,
    on_wait: Callable[[], None] | None = None,
    progress: Progress | None = None,
) -> UpdateStats:
    """Make the index match the notes; embed new passages when `embedder` is given.

    `progress` is called after each embedded batch. Without `wait`,
    a concurrent update raises IndexBusy instead of waiting for it.
    """
    started = time.perf_counter()
    require_dir(index.root)
    stats = UpdateStats()
    with writer_lock(index, wait=wait, on_wait=on_wait):
        if rebuild:
            _remove_database(index)
        _sync_files(index, stats)
        if embedder is not None:
            _embed(index, embedder, stats, progress)
        if stats.parsed or stats.removed or stats.embedded:
            _shrink_log(index)
    stats.seconds = time.perf_counter() - started
    return stats


def _shrink_log(index: Index) -> None:
    """Fold the write-ahead log into the database and truncate it, unless a reader is busy.

    One update is one transaction, so a first index leaves a log as big as the
    index itself; left alone, the state dir would hold it twice.
    """
    conn = index.conn
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.execute("PRAGMA busy_timeout = 30000")


def _remove_database(index: Index) -> None:
    index.close()
    for suffix in ("", "-wal", "-shm"):
        (index.state_dir / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
    for cache in index.state_dir.glob("vectors-*.bin"):
        cache.unlink(missing_ok=True)


@dataclass(slots=True)
class _Parsed:
    path: str
    size: int
    mtime_ns: int
    hash: str
    parsed: OrgFile
    chunks: list[Chunk]
    modified_ns: int  # the file's mtime as it is (mtime_ns is -1 while it may still change)


@collector_paused()  # many small objects, no cycles: see orgkit/org/acyclic.py
def _sync_files(index: Index, stats: UpdateStats) -> None:
    conn = index.conn
    known = {p: (s, m, h) for p, s, m, h in conn.execute("SELECT path, size, mtime_ns, hash FROM files")}
    now_ns = time.time_ns()
    touched: list[tuple[int, int, str]] = []
    changed: list[_Parsed] = []
    gone: list[str] = []
    present: set[str] = set()
    base = str(index.root)
    for rel in iter_org_files(index.root):
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
                               st.st_mtime_ns))
    gone.extend(p for p in known if p not in present)
    stats.parsed = len(changed)
    stats.removed = sum(1 for p in gone if p in known)
    if not (touched or changed or stats.removed):
        return
    with bulk_cache(conn), write_transaction(conn):
        conn.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", touched)
        seen = _first_seen(conn, changed, known)
        for rel in [p.path for p in changed if p.path in known] + [p for p in gone if p in known]:
            _delete_file(conn, rel)
        for item in changed:
            stats.chunks += _insert_file(conn, item, seen)
        stats.warnings.extend(_duplicate_ids(conn, [item.path for item in changed]))
        if changed or stats.removed:
            conn.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM chunks)")
            bump_generation(conn)


def _first_seen(conn, changed: list[_Parsed], known: dict) -> dict[tuple[str, str], int]:
    """The first-seen number of each (ID, file) of the changed files: kept from the index
    while the file still holds the ID, else new, in order of file mtime, then path (so a
    full rebuild ranks the older file first, and a file that brings an ID later never
    takes it from the node that held it)."""
    seen: dict[tuple[str, str], int] = {}
    before = [p.path for p in changed if p.path in known]
    for start in range(0, len(before), 500):
        part = before[start:start + 500]
        for node_id, file, number in conn.execute(
                f"SELECT id, file, min(seen) FROM nodes WHERE file IN ({','.join('?' * len(part))}) "
                "GROUP BY id, file", part):
            seen[(node_id, file)] = number
    number = conn.execute("SELECT coalesce(max(seen), 0) FROM nodes").fetchone()[0]
    for item in sorted(changed, key=lambda p: (p.modified_ns, p.path)):
        number += 1
        for node in item.parsed.nodes:
            seen.setdefault((node.id, item.path), number)
    return seen


def _duplicate_ids(conn, files: list[str]) -> list[str]:
    """`file:line: duplicate ID ...` for each node of `files` whose ID a node seen before it has."""
    out = []
    for start in range(0, len(files), 500):
        part = files[start:start + 500]
        out += [f"{file}:{line}: duplicate ID {node_id} (also at {other}:{other_line})"
                for node_id, file, line, other, other_line in conn.execute(
                    f"""SELECT n.id, n.file, n.line, o.file, o.line FROM nodes n JOIN nodes o
                        ON o.id = n.id AND (o.seen < n.seen OR (o.seen = n.seen AND
                            (o.file < n.file OR (o.file = n.file AND o.line < n.line))))
                        WHERE n.file IN ({','.join('?' * len(part))})
                        GROUP BY n.rowid ORDER BY n.file, n.line""", part)]
    return out


def _delete_file(conn, rel: str) -> None:
    # The full-text index reads its text through a view: tell it what it indexed.
    conn.execute("INSERT INTO chunks_fts (chunks_fts, rowid, heading, body) "
                 "SELECT 'delete', rowid, heading, body FROM chunk_text WHERE file = ?", (rel,))
    conn.execute("DELETE FROM chunks WHERE file = ?", (rel,))
    conn.execute("DELETE FROM outlines WHERE file = ?", (rel,))
    conn.execute("DELETE FROM aliases WHERE node IN (SELECT rowid FROM nodes WHERE file = ?)", (rel,))
    conn.execute("DELETE FROM nodes WHERE file = ?", (rel,))
    conn.execute("DELETE FROM links WHERE file = ?", (rel,))
    conn.execute("DELETE FROM files WHERE path = ?", (rel,))


def _insert_file(conn, item: _Parsed, seen: dict[tuple[str, str], int]) -> int:
    """Insert one parsed file; returns its number of passages."""
    parsed = item.parsed
    conn.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?)",
                 (item.path, item.size, item.mtime_ns, item.hash, parsed.title))
    sections = insert_sections(conn, item.path, item.chunks)
    base = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM nodes").fetchone()[0]
    rowids = {id(node): base + k for k, node in enumerate(parsed.nodes)}  # one statement for all
    kinds = node_kinds(parsed)
    conn.executemany(
        "INSERT INTO nodes (rowid, id, file, level, pos, line, end_line, title, todo, priority, outline, "
        "tags, refs, properties, seen, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(rowids[id(node)], node.id, node.file, node.level, node.pos, node.line, node.end_line, node.title,
          node.todo, node.priority, sections.get(node.line - 1) if node.level else None,
          _json_strings(node.tags), _json_strings(node.refs), _json_object(node.properties),
          seen[(node.id, item.path)], kind)
         for node, kind in zip(parsed.nodes, kinds)])
    conn.executemany("INSERT INTO aliases VALUES (?, ?)",
                     [(rowids[id(node)], a) for node in parsed.nodes for a in node.aliases])
    conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?)",
                     [(item.path, l.source, l.dest, l.type, l.pos, l.line) for l in parsed.links])
    conn.executemany(
        "INSERT INTO chunks (node, file, line, outline, body, hash) VALUES (?, ?, ?, ?, ?, ?)",
        [(rowids[id(chunk.node)], item.path, chunk.line,
          sections[chunk.section.line] if chunk.section is not None else None, chunk.body, chunk.hash)
         for chunk in item.chunks])
    conn.execute("INSERT INTO chunks_fts (rowid, heading, body) "
                 "SELECT rowid, heading, body FROM chunk_text WHERE file = ?", (item.path,))
    return len(item.chunks)


def _json_strings(items: list[str]) -> str:
    """`json.dumps` of a list of strings, byte for byte, without its setup cost per call
    (three fields of every node: a file of 100,000 headings spent a tenth of its time there)."""
    return "[" + ", ".join(map(_json_string, items)) + "]" if items else "[]"


def _json_object(values: dict[str, str]) -> str:
    """`json.dumps` of a dict of strings to strings, byte for byte (see `_json_strings`)."""
    return "{" + ", ".join([f"{_json_string(k)}: {_json_string(v)}" for k, v in values.items()]) + "}"


def _embed(index: Index, embedder: Embedder, stats: UpdateStats, progress: Progress | None) -> None:
    try:
        done = embed_pending(index, embedder, progress=progress)
    except ModelUnavailable as exc:
        stats.model_error = str(exc)
        stats.pending = pending_count(index, embedder.fingerprint)
        return
    stats.embedded, stats.tokens, stats.pending = done.done, done.tokens, done.total - done.done


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
