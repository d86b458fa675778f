"""Embedding without surprises: offline in a moment, no corpus embedded unannounced, progress, flat batches."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import write_notes
from orgkit.config import load
from orgkit.embed import Embedder, plan_batches
from orgkit.index import Index, update
from orgkit.index.embedding import BackgroundEmbedder, embed_pending, pending_count
from orgkit.index.vectors import cache_path
from orgkit.retrieve.search import search
from test_index import NOTES


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_offline_without_a_cached_model_answers_at_once_with_one_line(cli, notes: Path, tmp_path: Path,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_MODEL", "sentence-transformers/all-MiniLM-L6-v2")
    monkeypatch.delenv("ORGKIT_MODEL_PATH", raising=False)
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))
    assert cli("index", "--notes", str(notes), "--no-embed").exit_code == 0
    started = time.perf_counter()
    found = cli("search", "--notes", str(notes), "--json", "loyal canine")
    assert time.perf_counter() - started < 15  # no retries (they took 41 s); generous for a loaded machine
    assert found.exit_code == 0
    hits = json.loads(found.stdout)
    assert hits[0]["id"] == "dogs" and hits[0]["mode"] == "lexical"
    lines = warnings_of(found.stderr)
    assert len(lines) == 1, lines
    assert "orgkit model pull" in lines[0] and "ORGKIT_MODEL_PATH" in lines[0]
    # the same on a corpus far larger than the inline limit (nothing embedded, nothing to embed with)
    monkeypatch.setenv("ORGKIT_INLINE_EMBED_LIMIT", "0")
    again = cli("search", "--notes", str(notes), "--json", "loyal canine")
    assert len(warnings_of(again.stderr)) == 1 and "orgkit model pull" in again.stderr
    # `index` says the same once, and indexes the words
    indexed = cli("index", "--notes", str(notes), "--json")
    assert indexed.exit_code == 0 and len(warnings_of(indexed.stderr)) == 1
    assert "orgkit model pull" in indexed.stderr


def test_a_model_that_is_not_downloaded_is_reported_without_the_network(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))
    embedder = Embedder("sentence-transformers/all-MiniLM-L6-v2")
    started = time.perf_counter()
    with pytest.raises(Exception) as caught:
        embedder.load()
    assert time.perf_counter() - started < 15  # no retries (they took 41 s); generous for a loaded machine
    assert "not downloaded" in str(caught.value) and "orgkit model pull" in str(caught.value)


def test_model_pull_offline_fails_in_one_line(cli, notes: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("ORGKIT_MODEL", "sentence-transformers/all-MiniLM-L6-v2")
    monkeypatch.delenv("ORGKIT_MODEL_PATH", raising=False)
    monkeypatch.setenv("ORGKIT_NOTES", str(notes))
    result = cli("model", "pull")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "orgkit: error: cannot download sentence-transformers/all-MiniLM-L6-v2: HF_HUB_OFFLINE is set")


def test_model_show_says_where_the_model_comes_from(cli, tmp_path: Path, tiny_model: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no notes directory here: the environment's settings
    monkeypatch.delenv("ORGKIT_NOTES", raising=False)
    result = cli("model", "show", "--json")
    assert result.exit_code == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["path"] == str(tiny_model) and info["loaded"] and info["dimensions"] == 24


def test_a_large_backlog_is_not_embedded_by_a_query(cli, notes: Path, tiny_model: Path, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_INLINE_EMBED_LIMIT", "1")
    found = cli("search", "--notes", str(notes), "--json", "compost", "soil")
    assert found.exit_code == 0
    assert json.loads(found.stdout)[0]["mode"] == "lexical"
    assert "run `orgkit index`" in found.stderr and len(warnings_of(found.stderr)) == 1
    context = cli("context", "--notes", str(notes), "--json", "compost")
    doc = json.loads(context.stdout)
    assert doc["mode"] == "lexical" and "orgkit index" in doc["reason"]
    assert pending_count(Index.at(notes), Embedder.from_config(load(notes)).fingerprint) > 1


def test_a_small_backlog_is_embedded_inline(cli, notes: Path, tiny_model: Path) -> None:
    found = cli("search", "--notes", str(notes), "--json", "compost", "soil")
    assert found.exit_code == 0 and found.stderr == ""
    assert json.loads(found.stdout)[0]["mode"] == "hybrid"
    assert pending_count(Index.at(notes), Embedder.from_config(load(notes)).fingerprint) == 0


def test_part_embedded_ranks_the_rest_by_words_and_says_so(cli, notes: Path, tiny_model: Path,
                                                           monkeypatch) -> None:
    assert cli("index", "--notes", str(notes)).exit_code == 0
    write_notes(notes, {f"extra{i}.org": f":PROPERTIES:\n:ID: extra{i}\n:END:\n#+title: Extra {i}\n\nseeds {i}\n"
                        for i in range(3)})
    monkeypatch.setenv("ORGKIT_INLINE_EMBED_LIMIT", "2")
    found = cli("search", "--notes", str(notes), "--json", "seeds")
    hits = json.loads(found.stdout)
    assert hits[0]["mode"] == "hybrid" and {h["id"] for h in hits} >= {"extra0", "extra1", "extra2"}
    assert "3 passage(s) have no vector yet" in found.stderr


def test_index_reports_progress_when_piped_and_quiet_silences_it(cli, notes: Path, tiny_model: Path) -> None:
    result = cli("index", "--notes", str(notes))
    assert result.exit_code == 0
    progress = [line for line in result.stderr.splitlines() if line.startswith("orgkit: embedding")]
    assert progress and "tokens/s" in progress[-1] and "(100%)" in progress[-1]
    assert cli("index", "--notes", str(notes), "--rebuild", "--quiet").stderr == ""


def test_background_embedding_switches_to_hybrid_when_done(notes: Path, tiny_model: Path) -> None:
    index = Index.at(notes)
    update(index)  # words only
    embedder = Embedder.from_config(load(notes))
    assert search(index, "compost soil", embedder=embedder).mode == "lexical"
    background = BackgroundEmbedder(index.root, index.state_dir, embedder)
    assert background.start(pending_count(index, embedder.fingerprint))
    deadline = time.monotonic() + 30
    while background.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert background.error is None and not background.running
    assert pending_count(index, embedder.fingerprint) == 0
    assert search(index, "compost soil", embedder=embedder).mode == "hybrid"
    assert not background.start(0)


def test_identical_texts_are_embedded_once(notes: Path, tiny_model: Path) -> None:
    same = ":PROPERTIES:\n:ID: {id}\n:END:\n#+title: Twin\n\nthe same words in two files\n"
    write_notes(notes, {"a.org": same.format(id="a"), "b.org": same.format(id="b")})
    index = Index.at(notes)
    update(index)
    with index.snapshot() as conn:
        passages, distinct = conn.execute("SELECT count(*), count(DISTINCT hash) FROM chunks").fetchone()
    done = embed_pending(index, Embedder.from_config(load(notes)))
    assert passages == distinct + 1 and done.done == distinct and done.tokens > 0


def test_a_model_change_removes_the_old_models_vector_file(notes: Path, tmp_path: Path, tiny_model: Path,
                                                           monkeypatch) -> None:
    from tiny_model import build_tiny_model

    index = Index.at(notes)
    first = Embedder.from_config(load(notes))
    update(index, embedder=first)
    assert cache_path(index, first.fingerprint).exists()
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(build_tiny_model(tmp_path / "other", seed=1)))
    second = Embedder.from_config(load(notes))
    update(index, embedder=second)
    assert sorted(p.name for p in index.state_dir.glob("vectors-*.bin")) == [cache_path(index, second.fingerprint).name]


def test_batches_cap_padded_tokens() -> None:
    lengths = sorted([5] * 100 + [200] * 50 + [256] * 10)
    batches = plan_batches(lengths, max_items=64, max_tokens=2048)
    assert [i for b in batches for i in b] == list(range(len(lengths)))
    assert all(len(b) <= 64 and len(b) * max(lengths[i] for i in b) <= 2048 for b in batches)


def test_an_onnx_model_is_prepared_once_and_embeds_the_same(tmp_path: Path) -> None:
    from conftest import real_model

    from orgkit.embed_direct import DirectModel

    name, model = real_model()
    texts = ["a passage about trees and their roots", "another"]
    plain = Embedder(name, model)
    prepared = Embedder(name, model, tmp_path / "state", tmp_path / "cache")
    import numpy as np

    np.testing.assert_allclose(prepared.embed(texts), plain.embed(texts), atol=1e-6)
    (copy,) = [p for p in (tmp_path / "cache").iterdir() if p.is_dir()]
    assert (copy / "model.onnx").is_file() and (copy / "tokenizer.json").is_symlink()
    assert not (tmp_path / "state").exists(), "the state dir keeps no model copy, and no record"
    again = Embedder(name, model, tmp_path / "other-state", tmp_path / "cache")
    np.testing.assert_allclose(again.embed(texts), plain.embed(texts), atol=1e-6)
    assert isinstance(again._model, DirectModel)  # another state dir loads from the cache's record
    assert prepared.fingerprint == plain.fingerprint


def test_embedded_text_is_what_a_reader_sees() -> None:
    from orgkit.index.chunks import chunk_file
    from orgkit.org import parse_org

    text = (":PROPERTIES:\n:ID: a\n:END:\n#+title: Filters\n#+filetags: :robotics:\n\n"
            "Used with [[id:521c87bc-95eb-47ca-990f-58695d65490d][Simultaneous\nLocalization]] and\n"
            "[[https://example.org][a page]].\n\n* Part\n:PROPERTIES:\n:ID: b\n:END:\nBody.\n")
    texts = [c.text for c in chunk_file(parse_org(text, "a.org"), text)]
    assert texts == ["Filters: Used with Simultaneous\nLocalization and\na page.", "Filters > Part: Body."]


def test_a_stop_while_runs_start_waits_for_a_started_run_and_starts_no_more(notes: Path, tiny_model: Path) -> None:
    """A server closing as its first query starts a background run: `stop` met the run's thread made
    but not yet started ("cannot join thread before it is started", and the process exited 1)."""
    import threading

    index = Index.at(notes)
    update(index)
    embedder = Embedder.from_config(load(notes))
    pending = pending_count(index, embedder.fingerprint)
    for _ in range(50):
        background = BackgroundEmbedder(index.root, index.state_dir, embedder)
        starter = threading.Thread(target=background.start, args=(pending,))
        starter.start()
        background.stop(timeout=30)  # raised now and then before
        starter.join()
        background.stop(timeout=30)
        assert not background.running and not background.start(pending)
