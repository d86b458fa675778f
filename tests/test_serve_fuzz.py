"""`orgkit serve` against hostile input: every line gets one valid JSON answer, the server lives.

Random bytes, random JSON, operations with random parameters, lines over the
limit, deep nesting and lone surrogates, 10,000 lines and more, into one real
server process; its peak memory stays bounded by the line limit.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

from conftest import write_notes
from test_index import NOTES

LIMIT = 1 << 16  # serve.max_line_bytes for this run
CHEAP_OPS = ["nodes", "links", "backlinks", "read", "ops", "config", "skills_list", "skills_show",
             "guidance", "review_batches", "tangle_plan", "fly", "", None, 7]
SLOW_OPS = ["scan", "search", "context", "doctor", "new", "id_add", "deposit", "skills_run"]


def scalar(rng: random.Random):
    return rng.choice([None, True, False, 0, -1, 2**70, 1.5e308, "", "x" * rng.randint(0, 50),
                       "\ud800", "\udfff end", "\x00", "é☕", [], {}, "../../etc/passwd", "-1"])


def nested(rng: random.Random, depth: int) -> str:
    opener = rng.choice(["[", '{"a":'])
    closer = "]" if opener == "[" else "}"
    return opener * depth + "1" + closer * depth


def hostile_line(rng: random.Random, k: int) -> bytes:
    kind = k % 10
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))).replace(b"\n", b" ")
    if kind == 1:
        return json.dumps(scalar(rng)).encode()
    if kind == 2:
        return nested(rng, rng.choice([10, 1000, 30000])).encode()
    if kind == 3:  # a lone surrogate echoed back, or in a parameter
        return (f'{{"op": "{rng.choice(CHEAP_OPS[:5])}", "request": "\\ud8{rng.randrange(16):x}{rng.randrange(256):02x}", '
                f'"id": "\\udc00"}}').encode()
    if kind == 4:  # not UTF-8 inside JSON
        return b'{"op": "nodes", "request": "\xff\xfe\xc3"}'
    if kind in (5, 6, 7):
        op = rng.choice(CHEAP_OPS)
        params = {rng.choice(["query", "id", "ids", "limit", "depth", "budget", "files", "name", "x"]): scalar(rng)
                  for _ in range(rng.randint(0, 3))}
        return json.dumps({"op": op, **params, "request": k}).encode()
    if kind == 8 and k % 50 == 8:  # a slow op, now and then
        op = rng.choice(SLOW_OPS)
        return json.dumps({"op": op, "query": scalar(rng), "title": scalar(rng), "file": scalar(rng),
                           "name": "atomic-notes", "line": scalar(rng), "body": scalar(rng)}).encode()
    if kind == 9 and k % 500 == 9:  # over the limit: several MB on one line
        return b'{"op": "scan", "query": "' + b"y" * (rng.randint(2, 4) << 20) + b'"}'
    if kind == 9 and k % 500 == 19:  # just under it
        return b'{"op": "scan", "query": "' + b"z" * (LIMIT - 64) + b'"}'
    return json.dumps({"op": "nodes", "request": [k, "\u2028", "\ud83d"]}).encode()


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MiB."""
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


def answered(line: bytes) -> bool:
    return bool(line.decode("utf-8", errors="replace").strip())


def test_hostile_lines_get_one_json_answer_each(tmp_path: Path, tiny_model: Path) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    rng = random.Random(2026)
    lines = [hostile_line(rng, k) for k in range(10_000)] + [b'{"op": "ops", "request": "last"}']
    expected = sum(answered(line) for line in lines)
    env = dict(os.environ, ORGKIT_MAX_LINE_BYTES=str(LIMIT))
    proc = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "serve",
                             "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)

    def feed() -> None:
        for line in lines:
            proc.stdin.write(line + b"\n")
        proc.stdin.flush()

    writer = threading.Thread(target=feed)
    writer.start()
    answers = [proc.stdout.readline() for _ in range(expected)]
    writer.join()
    peak = peak_rss_mib(proc.pid)  # still running: it answered the last line
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0 and proc.stdout.read() == b""  # one answer a line, no more
    print(f"{len(answers)} answers, peak RSS {peak:.0f} MiB")
    decoded = [json.loads(a.decode("utf-8")) for a in answers]  # strict UTF-8, valid JSON
    assert all(isinstance(d, dict) and ("result" in d or "error" in d) for d in decoded)
    assert decoded[-1]["request"] == "last" and decoded[-1]["result"]
    assert sum("longer than" in d.get("error", "") for d in decoded) >= 20
    assert peak < 400  # MiB: the model and searches run too; no line was held whole


def test_a_huge_line_is_never_held_whole(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    proc = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "serve",
                             "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)

    def feed() -> None:
        proc.stdin.write(b'{"op": "scan", "query": "')
        block = b"q" * (1 << 20)
        for _ in range(300):  # a 300 MB line
            proc.stdin.write(block)
        proc.stdin.write(b'"}\n{"op": "ops"}\n')
        proc.stdin.flush()

    writer = threading.Thread(target=feed)
    writer.start()
    answers = [proc.stdout.readline().decode("utf-8") for _ in range(2)]
    writer.join()
    peak = peak_rss_mib(proc.pid)
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert "longer than 1048576 bytes" in json.loads(answers[0])["error"]
    assert json.loads(answers[1])["result"]
    assert peak < 150  # MiB: far below the line's 300 MB
