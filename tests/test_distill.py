"""`orgkit model distill`: a static model distilled from a dense ONNX model, loaded through fastembed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, real_model
from tiny_dense_model import build_tiny_dense_model

pytest.importorskip("onnx", reason="onnx builds the dense test model (pip install -e '.[test]')")

STATIC = "minishlab/potion-base-8M"
WORDS = ("cat dog kitten puppy garden soil seed compost python rust compiler borrow checker "
         "memory notes search index vector meaning words").split()


@pytest.fixture(scope="module")
def dense(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """A tiny dense ONNX model (hidden size 16) and its token embedding matrix."""
    dest = tmp_path_factory.mktemp("dense") / "model"
    return dest, build_tiny_dense_model(dest, WORDS)


def _ids(model_dir: Path) -> dict[str, int]:
    return json.loads((model_dir / "tokenizer.json").read_text())["model"]["vocab"]


def _expected_directions(model_dir: Path, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each token's pooled `[CLS] token [SEP]` row, centred; and model2vec's SIF weight per token id."""
    ids = _ids(model_dir)
    rows = (embeddings[ids["[CLS]"]] + embeddings + embeddings[ids["[SEP]"]]) / 3
    inverse_rank = 1 / np.arange(2, len(rows) + 2)
    probability = inverse_rank / inverse_rank.sum()
    return rows - rows.mean(axis=0), 1e-4 / (1e-4 + probability)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_distilled_model_embeds_through_fastembed_as_the_dense_model_implies(dense, tmp_path):
    from orgkit.distill import distill
    from orgkit.embed import Embedder

    model_dir, embeddings = dense
    out = tmp_path / "static"
    result = distill(model_dir, out, dims=16)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    assert (result.tokens, result.dims) == (len(_ids(model_dir)), 16)

    embedder = Embedder(STATIC, out)
    vectors = embedder.embed(["cat", "dog", "cat dog", "compiler borrow checker", "cat garden"])
    assert vectors.shape == (5, 16)
    centred, weight = _expected_directions(model_dir, embeddings)
    ids = _ids(model_dir)
    cat, dog = ids["cat"], ids["dog"]
    # With every dimension kept, PCA is a rotation of the centred rows, so angles are the dense model's.
    assert vectors[0] @ vectors[1] == pytest.approx(_cos(centred[cat], centred[dog]), abs=1e-4)
    # A text is the sum of its tokens' weighted vectors.
    pair = weight[cat] * centred[cat] + weight[dog] * centred[dog]
    assert vectors[2] @ vectors[0] == pytest.approx(_cos(pair, centred[cat]), abs=1e-4)
    # Texts sharing a token are closer than texts sharing none.
    assert vectors[4] @ vectors[0] > vectors[3] @ vectors[0]
    query = embedder.embed_query("cat dog")
    assert query @ vectors[2] == pytest.approx(1.0, abs=1e-5)


def test_dims_are_reduced_by_pca_and_capped_at_the_models_own(dense, tmp_path):
    from orgkit.distill import distill
    from orgkit.embed import Embedder

    model_dir, _ = dense
    assert distill(model_dir, tmp_path / "small", dims=4).dims == 4
    assert Embedder(STATIC, tmp_path / "small").embed(["search index"]).shape == (1, 4)
    assert distill(model_dir, tmp_path / "wide", dims=300).dims == 16


def test_index_and_search_use_the_distilled_model(dense, tmp_path, cli, monkeypatch):
    from conftest import write_notes

    model_dir, _ = dense
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(model_dir))
    made = cli("model", "distill", "--out", str(tmp_path / "static"), "--dims", "8", "--json")
    assert made.exit_code == 0, made.stderr
    assert json.loads(made.stdout)["dims"] == 8
    notes = write_notes(tmp_path / "notes", {
        "a.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: Pets\n\ncat dog kitten puppy\n",
        "b.org": ":PROPERTIES:\n:ID: b\n:END:\n#+title: Code\n\npython rust compiler borrow checker\n"})
    monkeypatch.setenv("ORGKIT_MODEL", STATIC)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(tmp_path / "static"))
    indexed = cli("index", "--notes", str(notes), "--json", "--quiet")
    assert json.loads(indexed.stdout)["embedded"] == 2
    hits = json.loads(cli("search", "--notes", str(notes), "--json", "--mode", "dense", "kitten", "cat").stdout)
    assert [h["id"] for h in hits][:1] == ["a"] and hits[0]["mode"] == "dense"


def test_without_a_model_path_the_cli_says_so_in_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ORGKIT_MODEL_PATH", raising=False)
    result = cli("model", "distill", "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == ["orgkit: error: no local model to distil: set ORGKIT_MODEL_PATH (or "
                                          "model_path in your config file) to a dense ONNX model directory"]
    assert not (tmp_path / "out").exists()


def test_a_static_model_is_not_a_source(cli, tiny_model, tmp_path):
    result = cli("model", "distill", "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "it is a static model already" in result.stderr and len(result.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_broken_onnx_file_fails_in_one_line_leaving_nothing(dense, tmp_path, cli, monkeypatch):
    model_dir, _ = dense
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    (broken / "model.onnx").write_bytes(b"not a graph")
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(broken))
    result = cli("model", "distill", "--out", str(tmp_path / "out"))
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"orgkit: error: cannot load {broken / 'model.onnx'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken"]


def test_an_existing_directory_is_never_overwritten(dense, tmp_path, cli, monkeypatch):
    model_dir, _ = dense
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(model_dir))
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    result = cli("model", "distill", "--out", str(out))
    assert result.exit_code == 1
    assert result.stderr == f"orgkit: error: {out} already exists: give a new or empty directory\n"
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("model", "distill", "--out", str(empty), "--quiet").exit_code == 0
    assert (empty / "model.safetensors").is_file()


def test_a_killed_run_leaves_nothing_and_the_next_run_clears_its_staging(tmp_path):
    from orgkit.distill import distill

    words = [f"w{i}" for i in range(60_000)]  # enough batches to be killed in the middle of
    model_dir = tmp_path / "dense"
    build_tiny_dense_model(model_dir, words, hidden=32)
    out = tmp_path / "out"
    env = {**os.environ, "ORGKIT_MODEL_PATH": str(model_dir), "ORGKIT_MODEL": "dense"}
    process = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "model", "distill",
                                "--out", str(out)],
                               cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    first = process.stderr.readline()
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert "vocabulary tokens" in first, first
    assert not out.exists()

    dead = tmp_path / ".out.distill-999999999.tmp"  # what a run killed while writing leaves
    dead.mkdir()
    (dead / "model.safetensors").write_bytes(b"half")
    distill(model_dir, out, dims=8)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dense", "out"]


def test_the_shared_minilm_is_a_source_with_bert_special_tokens():
    from orgkit.distill import _special_tokens, _tokenizer, find_source

    source = find_source(real_model()[1])
    assert source.onnx.name == "model.onnx"
    assert _special_tokens(_tokenizer(source.tokenizer)) == ([101], [102])


def test_a_broken_static_model_falls_back_to_words_in_one_line(dense, tmp_path, cli, monkeypatch):
    from conftest import write_notes
    from orgkit.distill import distill

    out = distill(dense[0], tmp_path / "static", dims=8).out
    data = (out / "model.safetensors").read_bytes()
    (out / "model.safetensors").write_bytes(data[: len(data) // 2])  # a copy cut short
    notes = write_notes(tmp_path / "notes", {"a.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: Pets\n\ncat dog\n"})
    monkeypatch.setenv("ORGKIT_MODEL", STATIC)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(out))
    result = cli("index", "--notes", str(notes), "--json", "--quiet")
    assert result.exit_code == 0
    assert [line for line in result.stderr.splitlines() if "cannot load embedding model" in line] == \
        result.stderr.splitlines()
    hits = json.loads(cli("search", "--notes", str(notes), "--json", "cat").stdout)
    assert [(h["id"], h["mode"]) for h in hits] == [("a", "lexical")]


def test_switching_between_distilled_models_re_embeds_and_drops_the_old_vector_file(dense, tmp_path, cli,
                                                                                      monkeypatch):
    from conftest import write_notes
    from orgkit.distill import distill

    notes = write_notes(tmp_path / "notes", {
        "a.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: Pets\n\ncat dog kitten puppy\n",
        "b.org": ":PROPERTIES:\n:ID: b\n:END:\n#+title: Code\n\npython rust compiler borrow checker\n"})
    monkeypatch.setenv("ORGKIT_MODEL", STATIC)
    for dims in (8, 4):  # two models of different widths over the same index
        monkeypatch.setenv("ORGKIT_MODEL_PATH", str(distill(dense[0], tmp_path / f"static{dims}", dims).out))
        assert json.loads(cli("index", "--notes", str(notes), "--json", "--quiet").stdout)["embedded"] == 2
        assert len(list((notes / ".orgkit").glob("vectors-*.bin"))) == 1
        hits = json.loads(cli("search", "--notes", str(notes), "--json", "--mode", "dense", "kitten").stdout)
        assert hits[0]["id"] == "a" and hits[0]["mode"] == "dense"
