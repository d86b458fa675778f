"""Generated notes for the feedback tests: claim notes as extraction writes them, recorded."""

from __future__ import annotations

from pathlib import Path

from orgkit import config
from orgkit.feedback.generated import Generator, record_generated
from orgkit.org.write import atomic_write

GENERATOR = Generator("extractor", "paper", "1")


def claim_text(node_id: str, title: str, body: str, links: str = "") -> str:
    return (f":PROPERTIES:\n:ID: {node_id}\n:END:\n#+title: {title}\n#+filetags: :claim:\n\n{body}\n"
            + (f"\n{links}\n" if links else ""))


def generate_claims(notes: Path, count: int = 3) -> config.Config:
    """`count` hub notes and one generated claim note per source document, recorded."""
    notes.mkdir(parents=True, exist_ok=True)
    cfg = config.load(notes, env={})
    for i in range(count):
        hub = notes / f"hub-{i}.org"
        hub.write_text(f":PROPERTIES:\n:ID: hub-{i}\n:END:\n#+title: Document {i}\n", encoding="utf-8")
        path = notes / "claims" / f"claim-{i}.org"
        path.parent.mkdir(exist_ok=True)
        text = claim_text(f"claim-{i}", f"Claim {i}", f"The study found effect {i} in most cases.",
                          f"From [[id:hub-{i}][Document {i}]].")
        atomic_write(path, text.encode(), expected=None, ids=None)
        record_generated(cfg, file=path, node_id=f"claim-{i}", node_type="claim", generator=GENERATOR,
                         source_path=f"docs/doc-{i}.txt", text=text)
    return cfg


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
