"""Decoded note texts, each file read at most once per request (the deep read, the index's stored texts),
what a text costs of a token budget, and the files a warm process keeps read and parsed between calls."""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import OrgkitError
from .vault import follow_roots, read_org_text

if TYPE_CHECKING:
    from .org import OrgFile

KEPT_CHARS = 16_000_000  # text a warm process keeps (its parse takes about as much again): braindump is 1.5M
RACY_NS = 2_000_000_000  # a file changed this recently may change again within the same timestamps


@dataclass
class _Kept:
    """One file as read: its text, its parse (made when first asked for), and what says it is unchanged."""

    stamp: tuple[int, ...]
    roots: tuple[str, ...]
    text: str
    settled: bool  # read when the file's last change was RACY_NS old: its stamp vouches for its text
    parsed: "OrgFile | None" = None

    def parse(self, rel: str) -> "OrgFile":
        if self.parsed is None:
            from .org import parse_org  # here, so reading files (a scan) does not load the parser

            self.parsed = parse_org(self.text, rel)  # two threads may both parse: the same result
        return self.parsed


class KeptFiles:
    """Note files read and parsed once by a warm process and kept while they are unchanged.

    A file is the same while the file its path leads to has the same device,
    inode, size, modification and change time: one `stat` a call instead of
    reading, decoding and parsing it again. A file read within `racy_ns` of
    its last change is read again at its next use all the same (a second
    write within one tick of the file system's clock leaves its times as
    they were). A changed file is read afresh, through `read_org_text` and
    so through its symlink check, and parsed again only if its text
    differs; an unchanged one is the very file that check let in (the same
    inode), unless the roots `notes.follow_roots` adds have changed since.
    The least recently used files go first once their texts pass `limit`
    characters.
    """

    def __init__(self, root: Path, limit: int = KEPT_CHARS, racy_ns: int = RACY_NS) -> None:
        self.root, self.limit, self.racy_ns = root, limit, racy_ns
        self._files: OrderedDict[str, _Kept] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._files)

    @property
    def chars(self) -> int:
        """Characters of text kept."""
        return self._chars

    def get(self, rel: str, roots: tuple[str, ...]) -> _Kept:
        """The file `rel` as it is now (read again when it changed); an OrgkitError when it cannot be read."""
        now = time.time_ns()
        try:
            st = os.stat(os.path.join(self.root, rel))
            stamp: tuple[int, ...] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            settled = now - max(st.st_mtime_ns, st.st_ctime_ns) > self.racy_ns
        except OSError:
            stamp, settled = (), False  # gone or unreadable: read_org_text says why
        with self._lock:
            old = self._files.get(rel)
            if old is not None and old.settled and stamp and old.stamp == stamp and old.roots == roots:
                self._files.move_to_end(rel)
                return old
        text = read_org_text(self.root, rel)  # stamped before the read: a change after it is seen next time
        parsed = old.parsed if old is not None and old.text == text else None  # touched, not changed
        kept = _Kept(stamp, roots, text, settled, parsed)
        if stamp:
            self._keep(rel, kept)
        return kept

    def _keep(self, rel: str, kept: _Kept) -> None:
        with self._lock:
            old = self._files.pop(rel, None)
            if old is not None:
                self._chars -= len(old.text)
            if len(kept.text) > self.limit:
                return
            self._files[rel] = kept
            self._chars += len(kept.text)
            while self._chars > self.limit:
                _, gone = self._files.popitem(last=False)
                self._chars -= len(gone.text)


@dataclass
class TextCache:
    """Decoded file texts (and their parses) by relative path, for one request; failures remembered as
    warnings. With `kept`, files come from a warm process's KeptFiles, so an unchanged file is neither
    read nor parsed again."""

    root: Path
    texts: dict[str, str | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    kept: KeptFiles | None = None
    _parsed: dict[str, "OrgFile"] = field(default_factory=dict, repr=False)
    _entries: dict[str, _Kept] = field(default_factory=dict, repr=False)
    _roots: tuple[str, ...] | None = field(default=None, repr=False)

    def text(self, rel: str) -> str | None:
        if rel not in self.texts:
            try:
                self.texts[rel] = self._read(rel)
            except OrgkitError as exc:
                self.warnings.append(str(exc))
                self.texts[rel] = None
        return self.texts[rel]

    def _read(self, rel: str) -> str:
        if self.kept is None:
            return read_org_text(self.root, rel)
        if self._roots is None:
            self._roots = follow_roots()
        entry = self._entries[rel] = self.kept.get(rel, self._roots)
        return entry.text

    def parsed(self, rel: str) -> "OrgFile | None":
        """The file `rel` parsed (None when it cannot be read): the text this request read, parsed once."""
        text = self.text(rel)
        if text is None:
            return None
        if rel not in self._parsed:
            entry = self._entries.get(rel)
            if entry is not None:
                self._parsed[rel] = entry.parse(rel)
            else:
                from .org import parse_org

                self._parsed[rel] = parse_org(text, rel)
        return self._parsed[rel]


def estimate_tokens(text: str) -> int:
    """About four characters a token: close enough for budgeting English and org."""
    return (len(text) + 3) // 4
