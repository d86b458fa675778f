"""Scaled corpora for the benchmarks: braindump copied many times under fresh IDs."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BRAINDUMP = REPO.parent / "shared" / "corpora" / "braindump"
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def replicate(source: Path, dest: Path, copies: int) -> int:
    """Write `copies` copies of `source` under `dest`; returns the number of files.

    Copy 0 keeps the original IDs (so an index of `source` can seed it); every
    other copy maps each ID to its own fresh one, links included, so each copy
    is a working org-roam directory of its own.
    """
    if dest.exists():
        shutil.rmtree(dest)
    texts = {f: f.read_text(encoding="utf-8") for f in sorted(source.rglob("*.org"))}
    count = 0
    for k in range(copies):
        mapping: dict[str, str] = {}

        def fresh(m: re.Match[str]) -> str:
            old = m.group(0).lower()
            if old not in mapping:
                mapping[old] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{k}:{old}"))
            return mapping[old]

        for f, text in texts.items():
            out = dest / f"copy{k:02d}" / f.relative_to(source)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(UUID_RE.sub(fresh, text) if k else text, encoding="utf-8")
            count += 1
    return count
