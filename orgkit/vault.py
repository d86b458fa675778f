"""A notes directory: which files count, their nodes and links, lookups by ID.

Which files count follows org-roam (`org-roam-file-p` with its defaults):
every `*.org` file below the directory, following symlinks, except paths that
match `org-attach-id-dir` ("data/"), Emacs backup/auto-save/lock files, and
orgkit's own state directory.

A symlink is followed only where it leads inside the notes dir (or a root the
user's `notes.follow_roots` adds): a notes folder may come from someone else,
and a link in it to `~/.ssh/config` must not make that file a note that
search, read and the team server hand out. Such links are left out of every
listing, and a file read by name through one is refused (`reachable`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from .config import STATE_DIR_NAME
from .errors import OrgkitError
from .org.text import UndecodableFile, decode_org
from .org.units import no_node

if TYPE_CHECKING:
    from .org import Link, Node, OrgFile

_EXCLUDED_DIRS = {STATE_DIR_NAME, ".git"}


def follow_roots() -> tuple[str, ...]:
    """The directories outside the notes the user's `notes.follow_roots` lets a symlink lead to
    (a trust setting: the environment or the user's config file, never the notes)."""
    from .config import SETTINGS, user_config_file

    setting = SETTINGS["notes.follow_roots"]
    user_file = user_config_file(os.environ)
    try:
        stamp = user_file.stat().st_mtime_ns
    except OSError:
        stamp = None
    return _follow_roots(os.environ.get(setting.env or "", ""), str(user_file), stamp)


@lru_cache(maxsize=8)
def _follow_roots(env_value: str, user_file: str, stamp: int | None) -> tuple[str, ...]:
    """Resolved once per value of the variable and version of the user's file."""
    from .config import without_notes

    try:
        roots = without_notes("notes.follow_roots")
    except OrgkitError:  # a broken user file: `orgkit config` says why; nothing outside is followed
        return ()
    return tuple(os.path.realpath(os.path.expanduser(r)) for r in roots)


def _within(real: str, roots: Iterable[str]) -> bool:
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


def reachable(root: Path, rel: str) -> bool:
    """Whether the file `rel` of the notes resolves inside them (or a root `notes.follow_roots` adds).

    A path with no symlink in it below the notes dir is inside (one `lstat` a
    part: a scan asks this of every file it reads); one with a link is resolved.
    """
    path = os.fspath(root)
    parts = rel.split("/")
    if ".." not in parts:
        for part in parts:
            path = os.path.join(path, part)
            if os.path.islink(path):
                break
        else:
            return True
    real = os.path.realpath(os.path.join(root, rel))
    return _within(real, (os.path.realpath(root), *follow_roots()))


def iter_org_files(root: Path, outside: list[tuple[str, str]] | None = None,
                   attachments: list[str] | None = None) -> Iterator[str]:
    """Relative paths (forward slashes) of the org files org-roam would index, sorted.

    A symlink leading out of the notes (and the roots `notes.follow_roots` adds)
    is not followed; each is added to `outside` as (its path, where it leads).
    The org files left out for lying under a `data/` folder are added to
    `attachments`: a folder that is not org-roam's may keep notes there, and
    its owner is told why they are not found.
    """
    found: list[str] = []
    seen_dirs: set[tuple[int, int]] = set()
    roots = (os.path.realpath(root), *follow_roots())

    def walk(directory: str, rel: str) -> None:
        try:
            st = os.stat(directory)
            key = (st.st_dev, st.st_ino)
            if key in seen_dirs:  # a symlink loop
                return
            seen_dirs.add(key)
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            name = entry.name
            sub = f"{rel}{name}"
            try:
                is_dir = entry.is_dir()
                if entry.is_symlink() and (is_dir or is_org_file(sub)):
                    target = os.path.realpath(entry.path)
                    if not _within(target, roots):
                        if outside is not None:
                            outside.append((sub + "/" * is_dir, target))
                        continue
            except OSError:
                continue
            if is_dir:
                if name not in _EXCLUDED_DIRS:
                    walk(entry.path, sub + "/")
            elif is_org_file(sub) and entry.is_file():  # not a dangling symlink
                found.append(sub)
            elif attachments is not None and _in_attachments(sub) and _org_name(name) and entry.is_file():
                attachments.append(sub)

    walk(str(root), "")
    if attachments is not None:
        attachments.sort()
    return iter(sorted(found))


def in_walked_folders(rel: str) -> bool:
    """Whether the walk of the notes (`iter_org_files`) enters every folder of `rel`: not the
    state dir, not .git."""
    return not any(part in _EXCLUDED_DIRS for part in rel.split("/")[:-1])


def is_org_file(rel: str) -> bool:
    """org-roam's file test on a path relative to the notes directory."""
    return _org_name(rel.rsplit("/", 1)[-1]) and not _in_attachments(rel)


def _org_name(name: str) -> bool:
    # `.#x.org` is Emacs' lock file (a dangling symlink, which org-roam's `find -type f`
    # skips); `#x.org#` auto-save files do not end in .org, and `#x.org` is a real note.
    return name.endswith(".org") and not name.startswith(".#")


def _in_attachments(rel: str) -> bool:
    """Whether `rel` matches org-roam's default exclusion, `org-attach-id-dir` ("data/", a regexp
    matched anywhere in the path, as org-roam does: "metadata/x.org" too)."""
    return "data/" in rel


def older_first(root: Path, rels: Iterable[str]) -> list[str]:
    """`rels` ordered as a duplicate ID is resolved without the index: the file modified
    earlier first, then by path (a file that cannot be read last)."""
    def key(rel: str) -> tuple[int, str]:
        try:
            return os.stat(os.path.join(root, rel)).st_mtime_ns, rel
        except OSError:
            return 1 << 63, rel

    return sorted(rels, key=key)


def require_dir(root: Path) -> None:
    """Library entry points check the directory themselves (the CLI checks earlier)."""
    if not root.is_dir():
        raise OrgkitError(f"notes directory not found: {root}")


def read_org_bytes(root: Path, rel: str) -> bytes:
    """A note file's bytes; an unreadable file is an OrgkitError naming it, in one line."""
    # Plain file descriptors, not pathlib or buffered files: a scan reads a thousand of these
    # while ripgrep runs, and this is half the cost of each.
    if not reachable(root, rel):
        raise OrgkitError(f"{rel}: a symlink leading outside the notes, not read (notes.follow_roots adds a root)")
    try:
        fd = os.open(os.path.join(root, rel), os.O_RDONLY)
        try:
            parts = []
            while chunk := os.read(fd, 1 << 16):
                parts.append(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OrgkitError(f"{rel}: cannot read ({exc.strerror or exc}), skipped") from None
    return b"".join(parts)  # one part: the same bytes object, not a copy


def decode_note(rel: str, data: bytes) -> str:
    """A note file's text; binary or non-UTF-8 bytes are an OrgkitError naming it."""
    try:
        return decode_org(data)
    except UndecodableFile as exc:
        raise OrgkitError(f"{rel}: {exc}") from None


def read_org_text(root: Path, rel: str) -> str:
    return decode_note(rel, read_org_bytes(root, rel))


def read_org_file(root: Path, rel: str) -> OrgFile:
    """Parse one file; unreadable or undecodable files raise OrgkitError."""
    from .org.parse import parse_org  # here, so reading files (a scan) does not load the parser

    return parse_org(read_org_text(root, rel), rel)


@dataclass
class Vault:
    """Every node and link of a notes directory, parsed from the files.

    A duplicate ID keeps the node of the file modified earlier (then the first by
    path, then by position: `older_first`), and warns, naming both.
    """

    root: Path
    files: list[OrgFile] = field(default_factory=list)
    by_id: dict[str, Node] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    duplicates: list[tuple[Node, Node]] = field(default_factory=list)  # (kept, other)

    @property
    def warnings(self) -> list[str]:
        """Every problem as one line: skipped files, parse warnings, duplicate IDs."""
        lines = [why for _, why in self.skipped]
        lines += [str(w) for f in self.files for w in f.warnings]
        lines += [f"duplicate ID {a.id}: {a.file}:{a.line} and {b.file}:{b.line}"
                  for a, b in self.duplicates]
        return lines

    @classmethod
    def load(cls, root: Path, paths: Iterable[str] | None = None) -> "Vault":
        require_dir(root)
        vault = cls(root=root)
        for rel in paths if paths is not None else iter_org_files(root):
            try:
                parsed = read_org_file(root, rel)
            except OrgkitError as exc:
                vault.skipped.append((rel, str(exc)))
                continue
            vault.files.append(parsed)
        by_path = {f.path: f for f in vault.files}
        for rel in older_first(root, by_path):
            vault._register(by_path[rel])
        return vault

    def add(self, parsed: OrgFile) -> None:
        self.files.append(parsed)
        self._register(parsed)

    def _register(self, parsed: OrgFile) -> None:
        for node in parsed.nodes:
            first = self.by_id.get(node.id)
            if first is None:
                self.by_id[node.id] = node
            else:
                self.duplicates.append((first, node))

    @property
    def nodes(self) -> list[Node]:
        return [n for f in self.files for n in f.nodes]

    @property
    def links(self) -> list[Link]:
        return [link for f in self.files for link in f.links]

    def node(self, node_id: str) -> Node:
        try:
            return self.by_id[node_id]
        except KeyError:
            raise no_node(node_id) from None

    def links_from(self, node_id: str) -> list[Link]:
        self.node(node_id)
        return [link for link in self.links if link.source == node_id]

    def backlinks(self, node_id: str) -> list[Link]:
        self.node(node_id)
        return [link for link in self.links if link.type == "id" and link.dest == node_id]
