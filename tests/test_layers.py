"""What holds the layers together where code cannot import it: values written twice on purpose."""

import re

from orgkit.storage.schema import MIGRATIONS
from orgkit.storage.terms import TOKENIZE


def test_the_index_tokenizes_passages_as_storage_ranks_words():
    """storage/terms.py tokenizes for PostgreSQL's BM25 and extraction's ranking; the index's
    latest migration declares the FTS5 tokenizer, and the two must be one."""
    declared = re.findall(r"tokenize = '([^']+)'", "".join(m.sqlite or "" for m in MIGRATIONS))
    assert declared and declared[-1] == TOKENIZE


# SQL is written only in orgkit/storage/ and the part stores: a caller that needs a new query adds a
# method to its part's store.
SQL_HOMES = ("orgkit/storage/", "orgkit/index/store.py", "orgkit/index/file_store.py", "orgkit/index/vector_store.py",
             "orgkit/memory/store.py")
SQL_TEXT = re.compile(r"\b(SELECT\b[\s\S]*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM"
                      r"|CREATE\s+(UNIQUE\s+|VIRTUAL\s+|TEMP\s+)?(TABLE|INDEX|VIEW)|DROP\s+(TABLE|INDEX))\b")


def holds_sql(source: str) -> bool:
    """Whether a module's string literals hold SQL: an f-string's text read whole, its fields as `{}`
    (so `f"SELECT {column} FROM t"` is seen although SELECT and FROM are in two of its pieces)."""
    import ast

    def text(node: ast.AST) -> str | None:
        if isinstance(node, ast.JoinedStr):  # an f-string: its text, each field standing as a name
            return "".join(str(part.value) if isinstance(part, ast.Constant) else "x" for part in node.values)
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    return any(SQL_TEXT.search(found) for found in map(text, ast.walk(ast.parse(source))) if found)


def test_sql_is_written_only_in_storage_and_the_part_stores():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    with_sql = {path.relative_to(root).as_posix() for path in sorted((root / "orgkit").rglob("*.py"))
                if holds_sql(path.read_text(encoding="utf-8"))}
    outside = {m for m in with_sql if not m.startswith(SQL_HOMES)}
    assert outside == set(), "SQL outside orgkit/storage/ and the part stores: add a store method"


def test_the_sql_check_sees_sql_in_plain_and_formatted_strings():
    assert holds_sql('q = "SELECT title FROM nodes WHERE id = ?"')
    assert holds_sql('q = f"DELETE FROM {table} WHERE file = ?"')
    assert holds_sql('q = f"SELECT {column}, id FROM nodes WHERE {column} IN ({{}})"')  # SQL around a field
    assert holds_sql('q = "INSERT OR IGNORE INTO secret VALUES (1, ?)"')
    assert not holds_sql('message = "select a note from the list"')  # prose, in lower case, is not SQL
    assert not holds_sql('# SELECT x FROM y\nx = 1')  # a comment is no literal


def test_the_memory_store_sends_each_statement_as_written_for_its_engine():
    """The memory store writes PostgreSQL's statements for psycopg and sends them through its engine's
    `run`; a connection's `execute` is the sqlite3 call shape, whose PostgreSQL side rewrote `?` at
    run time, so the store calls it nowhere."""
    import ast
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / "orgkit/memory/store.py").read_text(encoding="utf-8")
    calls = [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr in ("execute", "executemany")]
    assert calls == [], f"orgkit/memory/store.py calls execute at lines {calls}: send it through `send`"
