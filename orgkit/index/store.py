"""The index: where it lives, opening it, and the lookups readers need.

SQLite in WAL mode by default, or one PostgreSQL database when `database.url`
names one (see `backend`): one writer at a time (see `update`), any number of
readers, each reading inside one transaction so it sees a whole update or none
of it.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple

from ..org.units import no_node
from ..texts import TextCache
from ..vault import STATE_DIR_NAME
from ..storage.backend import DB_NAME, IndexBackend, backend_for
from ..storage.db import Connection
from .memo import IndexMemo

if TYPE_CHECKING:
    from ..config import Config



def default_state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


class FileState(NamedTuple):
    """What the index knows of a file: enough to tell whether it changed since it was read."""

    size: int
    mtime_ns: int
    hash: str


class PassageCounts(NamedTuple):
    """How many passages the index holds, and how many of them have a vector from one model (None: not asked)."""

    passages: int
    embedded: int | None


@dataclass
class Index:
    """The index of one notes directory, kept in `state_dir` or in the database `database` names."""

    root: Path
    state_dir: Path
    database: str | None = None
    # what calls remember of this index (a warm process gives every connection to one notes dir the same)
    memo: IndexMemo = field(default_factory=IndexMemo, repr=False, compare=False)
    _conn: Connection | None = field(default=None, repr=False)
    _backend: IndexBackend | None = field(default=None, repr=False)
    # inside `snapshot`'s read transaction (`_reading`), the generation it sees, once read: it cannot
    # move inside one, so it is read once; outside one it is read each time
    _reading: bool = field(default=False, repr=False)
    _seen: int | None = field(default=None, repr=False)

    @classmethod
    def at(cls, root: Path, state_dir: Path | None = None, database: str | None = None,
           memo: IndexMemo | None = None) -> "Index":
        return cls(root, state_dir if state_dir is not None else default_state_dir(root), database,
                   memo if memo is not None else IndexMemo())

    @classmethod
    def of(cls, config: "Config", state_dir: Path | None = None, memo: IndexMemo | None = None) -> "Index":
        """The index a configuration names: its state dir, and its database when one is set."""
        return cls.at(config.notes, state_dir or config.state_dir, config["database.url"], memo)

    @property
    def backend(self) -> IndexBackend:
        if self._backend is None:
            self._backend = backend_for(self.database)
        return self._backend

    @property
    def path(self) -> Path:
        return self.state_dir / DB_NAME

    def exists(self) -> bool:
        return self.database is not None or self.path.is_file()

    @property
    def conn(self) -> Connection:
        """The connection, opened (and the schema migrated) on first use, and again once it was lost."""
        if self._conn is not None and getattr(self._conn, "lost", False):
            self.close()
        if self._conn is None:
            self._conn = self.backend.connect(self)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read transaction: every query inside sees the same committed state."""
        conn = self.conn
        if conn.in_transaction:
            yield conn
            return
        conn.execute(self.backend.begin_read)
        self._reading, self._seen = True, None
        try:
            yield conn
        finally:
            self._reading, self._seen = False, None
            conn.execute("COMMIT")

    def stored_texts(self) -> "StoredTexts | None":
        """The files' text from the database where the notes are not here (else None: read the files)."""
        if self.root.is_dir() or not self.backend.stores_text:
            return None
        return StoredTexts(self.root, index=self)

    def generation(self, conn: Connection | None = None) -> int:
        """A number that grows with every committed change (vector caches check it): read once per
        read transaction of `snapshot`, which sees one state however often a call asks."""
        if not self._reading or (conn is not None and conn is not self._conn):
            return generation(conn or self.conn)
        if self._seen is None:
            self._seen = generation(self.conn)
        return self._seen

    def fact(self, conn: Connection, name: str, read: Callable[[], Any]) -> Any:
        """What `read` finds in the index as it is now (a count of rows, whether a vector index exists),
        read once per generation and kept in the memo: its key holds the generation, which every change
        of the index moves (a vector index built, a rebuild), so it is never stale. `read` must not
        answer None."""
        key = (self.generation(conn), name)
        found = self.memo.facts.get(key)
        if found is None:
            found = read()
            self.memo.facts.put(key, found)
        return found

    def locate(self, ids: list[str]) -> dict[str, list[str]]:
        """The files holding each ID, for the deep read (no ripgrep pass needed); a duplicate
        ID's files come in first-seen order, so its first file holds the node it resolves to."""
        found: dict[str, list[str]] = {}
        with self.snapshot() as conn:
            rows = self.backend.among(conn, "SELECT id, file, min(seen) FROM nodes WHERE id {} "
                                            "AND unit = 0 GROUP BY id, file", ids)
            for node_id, file, _ in sorted(rows, key=lambda r: (r[2], r[1])):
                found.setdefault(node_id, []).append(file)
        return found

    def backlinks(self, node_id: str) -> list[dict]:
        """The id links pointing at `node_id`, as `orgkit backlinks` prints them."""
        P = self.backend.P
        with self.snapshot() as conn:
            self._known(conn, node_id)
            rows = self.backend.run(
                conn,
                f"""SELECT l.source, l.dest, l.type, l.pos, l.file, l.line,
                          (SELECT n.title FROM nodes n WHERE n.id = l.source
                           ORDER BY n.seen, n.file, n.pos LIMIT 1)
                   FROM links l WHERE l.dest = {P} AND l.type = 'id'
                   ORDER BY l.file, l.pos""",
                (node_id,),
            ).fetchall()
        return [{"source": s, "dest": d, "type": t, "pos": p, "title": title, "file": f, "line": line}
                for s, d, t, p, f, line, title in rows]

    def nodes(self) -> list[dict]:
        """Every node as `orgkit nodes --json` shows it, in file and position order."""
        with self.snapshot() as conn:
            aliases: dict[int, list[str]] = {}
            for node, alias in conn.execute("SELECT node, alias FROM aliases ORDER BY rowid"):
                aliases.setdefault(node, []).append(alias)
            rows = conn.execute(
                "SELECT rowid, id, file, level, pos, line, title, todo, priority, outline, tags, refs, "
                "properties FROM nodes WHERE unit = 0 ORDER BY file, pos").fetchall()
            paths = olps(conn, self.backend, [r[9] for r in rows])
        return [{"id": r[1], "file": r[2], "level": r[3], "pos": r[4], "line": r[5], "title": r[6],
                 "todo": r[7], "priority": r[8], "olp": paths.get(r[9], []), "tags": json.loads(r[10]),
                 "aliases": aliases.get(r[0], []), "refs": json.loads(r[11]),
                 "properties": json.loads(r[12])} for r in rows]

    def _known(self, conn: Connection, node_id: str) -> None:
        """Refuse an ID no node has (units have none)."""
        if self.backend.run(conn, f"SELECT 1 FROM nodes WHERE id = {self.backend.P} AND unit = 0",
                            (node_id,)).fetchone() is None:
            raise no_node(node_id)

    def links(self, source: str | None = None) -> list[dict]:
        """Links as `orgkit links [ID] --json` shows them: all, or those out of `source`."""
        with self.snapshot() as conn:
            if source is None:
                rows = conn.execute("SELECT source, dest, type, pos FROM links ORDER BY file, pos")
            else:
                self._known(conn, source)
                rows = self.backend.run(conn, f"SELECT source, dest, type, pos FROM links WHERE source = "
                                              f"{self.backend.P} ORDER BY file, pos", (source,))
            return [{"source": s, "dest": d, "type": t, "pos": p} for s, d, t, p in rows]

    def file_states(self) -> Mapping[str, FileState]:
        """Every indexed file's size, mtime and hash, by path (shared: not to be changed).

        Read once per generation of the index and kept: a warm server looks for
        changed files every second or so, and at 10k files reading their rows
        each time cost more than walking the notes. A writer that changes rows
        without moving the generation (a touched file's mtime) forgets them
        (`forget_file_states`); another process's such change only makes the
        next check hash that file again. Kept in the memo, so every connection
        of a warm process to these notes shares them.
        """
        with self.snapshot() as conn:
            now = generation(conn)
            kept = self.memo.files
            if kept is not None and kept[0] == now:
                return kept[1]
            states = {path: FileState(size, mtime, digest)
                      for path, size, mtime, digest in conn.execute("SELECT path, size, mtime_ns, hash FROM files")}
        self.memo.files = (now, states)
        return states

    def forget_file_states(self) -> None:
        """Read the files' states afresh next time (this process changed them)."""
        self.memo.files = None

    def passage_counts(self, fingerprint: str | None) -> PassageCounts:
        """The passages, and (given a model's fingerprint) how many have its vector."""
        with self.snapshot() as conn:
            passages = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            embedded = None if fingerprint is None else self.backend.run(
                conn, "SELECT count(*) FROM chunks c WHERE EXISTS (SELECT 1 FROM vectors v "
                      f"WHERE v.model = {self.backend.P} AND v.hash = c.hash)", (fingerprint,)).fetchone()[0]
        return PassageCounts(passages, embedded)

    def title_of(self, node_id: str) -> str | None:
        """The title of the node `node_id` (of its first file by path, for a duplicate ID), or None."""
        with self.snapshot() as conn:
            row = self.backend.run(conn, f"SELECT title FROM nodes WHERE id = {self.backend.P} ORDER BY file LIMIT 1",
                                   (node_id,)).fetchone()
        return row[0] if row else None

    def nodes_by_rowid(self, rowids: list[int]) -> dict[int, dict]:
        """id, title, file, line, level (and the outline path) of nodes and units by row; a unit's `id` is
        its locator."""
        with self.snapshot() as conn:
            rows = self.backend.among(conn, "SELECT rowid, id, title, file, line, level, outline, unit "
                                            "FROM nodes WHERE rowid {}", rowids)
            paths = olps(conn, self.backend, [r[6] for r in rows])
        return {r[0]: {"id": r[1], "title": r[2], "file": r[3], "line": r[4], "level": r[5],
                       "olp": paths.get(r[6], []), "unit": bool(r[7])} for r in rows}

    def named(self, names: list[str], *, fold: bool = False) -> dict[str, list[dict]]:
        """The nodes and units whose title or one of whose aliases is each of `names`, exactly (with
        `fold`, regardless of case): {id (a unit's locator), file, line}, each once, in file order.

        Case is folded here rather than in SQL, where SQLite folds ASCII alone and
        PostgreSQL by its collation: every title is read, which only a name no
        title has exactly asks for.
        """
        found: dict[str, dict[str, dict]] = {}
        titles = "SELECT title, id, file, line FROM nodes"
        aliases = "SELECT a.alias, n.id, n.file, n.line FROM aliases a JOIN nodes n ON n.rowid = a.node"
        with self.snapshot() as conn:
            if fold:
                wanted = {name.casefold(): name for name in names}
                rows = [(wanted[row[0].casefold()], *row[1:])
                        for row in [*conn.execute(titles).fetchall(), *conn.execute(aliases).fetchall()]
                        if row[0] and row[0].casefold() in wanted]
            else:
                rows = self.backend.among(conn, titles + " WHERE title {}", names)
                rows += self.backend.among(conn, aliases + " WHERE a.alias {}", names)
        for name, key, file, line in sorted(rows, key=lambda r: (r[2], r[3])):
            found.setdefault(name, {}).setdefault(key, {"id": key, "file": file, "line": line})
        return {name: list(held.values()) for name, held in found.items()}

    def passages_within(self, spans: list[tuple[str, int, int]]) -> list[list[tuple[int, int]]]:
        """(passage row, line) of the passages within each (file, first line, last line): a call's
        notes in one query."""
        found: list[list[tuple[int, int]]] = [[] for _ in spans]
        with self.snapshot() as conn:
            for at, rowid, line in self.backend.passages_within(conn, spans):
                found[at].append((rowid, line))
        return found

    def passage_bm25(self, phrases: list[str], heading_weight: float, rowids: list[int]) -> dict[int, float]:
        """BM25 (the whole index's statistics, never below 0) of the passages `rowids` holding any phrase."""
        if not phrases or not rowids:
            return {}
        with self.snapshot() as conn:
            rows = self.backend.passage_scores(conn, phrases, heading_weight, rowids)
        return {rowid: max(float(score), 0.0) for rowid, score in rows}

    def passage_cosines(self, fingerprint: str, query_vector: Any, rowids: list[int]) -> dict[int, float]:
        """Cosines with `query_vector` of the passages `rowids`, from their stored vectors."""
        if not rowids:
            return {}
        with self.snapshot() as conn:
            return self.backend.cosines(conn, fingerprint, query_vector, rowids, by="rowid")

    def counts(self) -> dict[str, int]:
        """What the index holds: files, and headings, each with and without an ID (a unit)."""
        with self.snapshot() as conn:
            files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
            rows = dict(((level, unit), n) for level, unit, n in conn.execute(
                "SELECT CASE WHEN level = 0 THEN 0 ELSE 1 END, unit, count(*) FROM nodes GROUP BY 1, 2"))
        without = rows.get((0, 1), 0)
        return {"files": files, "files_with_id": files - without, "files_without_id": without,
                "headings_with_id": rows.get((1, 0), 0), "headings_without_id": rows.get((1, 1), 0)}

    def passage_words(self, rowids: list[int]) -> dict[int, str]:
        """The text BM25 reads of each passage of `rowids` (its heading, a space, its body), by row."""
        with self.snapshot() as conn:
            return dict(self.backend.among(conn, "SELECT rowid, heading || ' ' || body FROM chunk_text "
                                                 "WHERE rowid {}", rowids))

    def node_titles(self, rowids: list[int]) -> dict[int, str]:
        """The title of each node (or unit) of `rowids`, by row."""
        with self.snapshot() as conn:
            return dict(self.backend.among(conn, "SELECT rowid, title FROM nodes WHERE rowid {}", rowids))

    def hit_passages(self, rowids: list[int]) -> dict[int, "HitPassage"]:
        """What a search hit shows of each passage of `rowids`: its heading path, text and first line."""
        if not rowids:
            return {}
        with self.snapshot() as conn:
            rows = self.backend.among(conn, "SELECT c.rowid, f.title, c.outline, c.body, c.line FROM chunks c "
                                            "JOIN files f ON f.path = c.file WHERE c.rowid {}", rowids)
            paths = headings(conn, self.backend, [(title, outline) for _, title, outline, _, _ in rows])
        return {r[0]: HitPassage(heading, r[3], r[4]) for r, heading in zip(rows, paths)}

    def node_kinds(self, keys: list, *, by: str = "rowid") -> list["NodeKind"]:
        """What a scope decides a node by, for each node of `keys` (rows, or IDs with `by="id"`: every
        node holding one), in no order."""
        assert by in ("rowid", "id")
        with self.snapshot() as conn:
            return [NodeKind(*row) for row in self.backend.among(
                conn, f"SELECT {by}, id, file, kind, properties, tags, todo FROM nodes WHERE {by} {{}}", keys)]


class NodeKind(NamedTuple):
    """A node's kind, properties (JSON), tags (JSON) and TODO state, under the key it was asked by."""

    key: int | str
    id: str
    file: str
    kind: str
    properties: str
    tags: str
    todo: str | None


class HitPassage(NamedTuple):
    """A passage as a search hit shows it: "File title > Heading" path, its text, its first line."""

    heading: str
    body: str
    line: int


@dataclass
class StoredTexts(TextCache):
    """Files' text as the shared database holds it, for a machine without the notes."""

    index: Index = field(kw_only=True)

    def text(self, rel: str) -> str | None:
        if rel not in self.texts:
            backend = self.index.backend
            with self.index.snapshot() as conn:
                row = backend.run(conn, f"SELECT content FROM file_texts WHERE path = {backend.P}", (rel,)).fetchone()
            self.texts[rel] = row[0] if row else None
            if row is None:
                self.warnings.append(f"{rel}: not in the database")
        return self.texts[rel]


def generation(conn: Connection) -> int:
    """A number that grows with every committed change: what a process's caches of the index check."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


class OutlineRow(NamedTuple):
    """One stored heading: its parent's row, its title, and the label a passage's heading shows."""

    parent: int | None
    title: str
    label: str


def outline_rows(conn: Connection, backend: IndexBackend, rowids: list[int]) -> dict[int, OutlineRow]:
    """The heading rows `rowids` and every ancestor of theirs, a level of the outline a query (per
    500 rows). One recursive query would read them all, but PostgreSQL joins each of its steps
    against the whole table: 5.4 ms a lookup at 10k files, against 2.7 level by level."""
    known: dict[int, OutlineRow] = {}
    todo = sorted(set(rowids))
    while todo:
        found: list[int] = []
        for rowid, parent, title, label in backend.among(
                conn, "SELECT rowid, parent, title, label FROM outlines WHERE rowid {}", todo):
            known[rowid] = OutlineRow(parent, title, label if label is not None else title)
            if parent is not None and parent not in known:
                found.append(parent)
        todo = [r for r in dict.fromkeys(found) if r not in known]
    return known


def olps(conn: Connection, backend: IndexBackend, rowids: list[int | None]) -> dict[int, list[str]]:
    """The outline path above each heading row: its ancestors' titles, outermost first."""
    known = outline_rows(conn, backend, [r for r in rowids if r is not None])
    out: dict[int, list[str]] = {}
    for rowid in rowids:
        if rowid is None or rowid in out:
            continue
        titles = []
        parent = known[rowid].parent if rowid in known else None
        while parent is not None and parent in known:
            titles.append(known[parent].title)
            parent = known[parent].parent
        out[rowid] = titles[::-1]
    return out


def headings(conn: Connection, backend: IndexBackend, rows: list[tuple[str, int | None]]) -> list[str]:
    """Passage headings ("File title > Parent > Child") of (file title, heading row) pairs."""
    known = outline_rows(conn, backend, [r for _, r in rows if r is not None])
    out = []
    for file_title, rowid in rows:
        labels = []
        while rowid is not None and rowid in known:
            labels.append(known[rowid].label)
            rowid = known[rowid].parent
        out.append(" > ".join([file_title, *reversed(labels)]))
    return out


def missing_texts(index: Index, hashes: list[str]) -> list[tuple[str, str]]:
    """(hash, text) of the passage texts with these hashes, sorted by hash (gone ones left out):
    what embedding and its work queue embed."""
    conn = index.conn
    rows = index.backend.among(conn, index.backend.missing_texts_sql, sorted(hashes))
    paths = headings(conn, index.backend, [(title, outline) for _, title, outline, _ in rows])
    return [(h, f"{heading}: {body}" if body else heading) for (h, _, _, body), heading in zip(rows, paths)]


def bump_generation(conn: Connection) -> None:
    """Say that the index changed (inside the writer's transaction): processes' caches of it check the number."""
    conn.execute("INSERT INTO meta VALUES ('generation', '1') "
                 "ON CONFLICT (key) DO UPDATE SET value = CAST(meta.value AS INTEGER) + 1")


def keep_generation(conn: Connection, backend: IndexBackend, value: int) -> None:
    """Set the generation (inside the writer's transaction): a rebuilt index goes on from the number
    the one it replaces reached, so that no process's memo reads an older generation's facts as its."""
    backend.run(conn, f"INSERT INTO meta VALUES ('generation', {backend.P}) "
                      "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(value),))


def passage_text(conn: Connection, backend: IndexBackend, rowid: int) -> str:
    """A passage's heading and text as its words are indexed ("" for a passage gone meanwhile)."""
    row = backend.run(conn, f"SELECT heading || ' ' || body FROM chunk_text WHERE rowid = {backend.P}",
                      (rowid,)).fetchone()
    return row[0] if row else ""



# What the librarian's evidence reads of the index (`orgkit.memory.evidence`), inside its snapshot.

class PassageOfNote(NamedTuple):
    """A passage's indexed heading and text, and the note it is of (ID, title, file, tags)."""

    heading: str
    body: str
    id: str
    title: str
    file: str
    tags: list[str]


def passage_words_in(conn: Connection, backend: IndexBackend, files: list[str]) -> dict[int, str]:
    """The indexed text (heading, then body) of every passage of `files`, by passage row."""
    return {rowid: f"{heading}\n{body}" for rowid, heading, body in backend.among(
        conn, "SELECT rowid, heading, body FROM chunk_text WHERE file {}", sorted(files))}


def passages_of_notes(conn: Connection, backend: IndexBackend, rowids: list[int]) -> dict[int, PassageOfNote]:
    """Each passage of `rowids` with the note it is of, by passage row (gone ones left out)."""
    rows = backend.among(conn, "SELECT t.rowid, t.heading, t.body, n.id, n.title, n.file, n.tags FROM chunk_text t "
                               "JOIN chunks c ON c.rowid = t.rowid JOIN nodes n ON n.rowid = c.node "
                               "WHERE t.rowid {}", sorted(rowids))
    return {r[0]: PassageOfNote(r[1], r[2], r[3], r[4], r[5], json.loads(r[6])) for r in rows}


def note_passage_bodies(conn: Connection, backend: IndexBackend, node_id: str) -> list[str]:
    """The text of each passage of the note `node_id` (of every file holding the ID)."""
    return [body for (body,) in backend.run(
        conn, f"SELECT c.body FROM chunks c JOIN nodes n ON n.rowid = c.node WHERE n.id = {backend.P}", (node_id,))]
