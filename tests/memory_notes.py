"""A small notes directory for the memory-flow tests, and helpers to read its data dir."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import write_notes

NOTES = {
    "tangle.org": """
        :PROPERTIES:
        :ID:       11111111-1111-4111-8111-111111111111
        :END:
        #+title: Tangling code blocks
        #+filetags: :literate:tools:

        orgkit tangle writes the code blocks of an org file to their target files,
        byte for byte as org-babel-tangle-file does. Header arguments such as :var
        need evaluation and are refused.
        """,
    "noweb.org": """
        :PROPERTIES:
        :ID:       22222222-2222-4222-8222-222222222222
        :END:
        #+title: Noweb references
        #+filetags: :literate:tools:

        Noweb references <<name>> expand named code blocks inside other blocks when
        tangling; :noweb-ref collects blocks under one name.
        """,
    "gardening.org": """
        :PROPERTIES:
        :ID:       33333333-3333-4333-8333-333333333333
        :END:
        #+title: Growing tomatoes
        #+filetags: :garden:

        Tomatoes want sun, deep watering and a stake.
        """,
}

TANGLE, NOWEB, GARDEN = ("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222",
                         "33333333-3333-4333-8333-333333333333")

FINDING = ("When tangling code blocks, orgkit refuses :var header arguments because evaluating them would "
           "run code.\n\n"
           "Noweb references are the way to share code between blocks when tangling.")


def make_notes(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    return write_notes(root, NOTES)


def notes_with_loopback_model(path: Path, llm_server, monkeypatch, *, clear: tuple[str, ...] = ("ORGKIT_LLM",)) -> Path:
    """`make_notes` at `path`, its librarian the loopback model server, acting as `reviewer`.

    The endpoint comes from the environment (a trust-granting setting is never read
    from the notes); variables starting with one of `clear` are removed first.
    """
    import os

    for key in list(os.environ):
        if key.startswith(clear):
            monkeypatch.delenv(key)
    monkeypatch.setenv("USER", "reviewer")
    root = make_notes(path)
    monkeypatch.setenv("ORGKIT_LLM_ENDPOINT", llm_server.url)
    (root / "orgkit.toml").write_text('[llm]\nmodel = "loopback"\n')
    return root


def rows(notes: Path, sql: str, args: tuple = ()) -> list[dict]:
    """Rows of the memory database (read-only), as dicts with JSON columns decoded."""
    conn = sqlite3.connect(f"file:{notes / 'orgkit-data' / 'memory.sqlite'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [decoded(dict(row)) for row in conn.execute(sql, args)]
    finally:
        conn.close()


def pg_rows(url: str, sql: str, args: tuple = ()) -> list[dict]:
    """`rows` of a memory store in PostgreSQL (`%s` placeholders)."""
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(url, row_factory=dict_row) as conn:
        return [decoded(row) for row in conn.execute(sql, args)]


def decoded(item: dict) -> dict:
    """A row with its JSON columns decoded."""
    for key in ("payload", "chunks", "evidence", "detail", "plan", "before", "after", "meta"):
        if isinstance(item.get(key), str):
            item[key] = json.loads(item[key])
    return item
