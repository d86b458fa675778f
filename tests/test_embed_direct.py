"""A local model run from its record computes what fastembed computes, without importing fastembed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from conftest import real_model, write_notes
from orgkit.embed import Embedder
from orgkit.embed_direct import DirectModel
from test_index import NOTES

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TEXTS = [
    "a passage about trees and their roots",
    "Dogs are loyal pets; cats are independent. The garden needs water, soil and seeds.",
    "",
    "Ünïcödé text, テスト, and emoji 🌱 in one line",
    "a long passage that the model must truncate " * 120,  # past MiniLM's 256 tokens
    "x",
]


def _fastembed_vectors(name: str, path: Path, batches: tuple[list[str], ...]) -> list[np.ndarray]:
    """fastembed's own output for each batch of texts, each in one batch as orgkit asks for it."""
    from fastembed import TextEmbedding

    model = TextEmbedding(name, specific_model_path=str(path))
    return [np.vstack(list(model.embed(texts, batch_size=len(texts)))) for texts in batches]


def _record_then_direct(name: str, path: Path, work: Path) -> tuple[Embedder, Embedder]:
    """An embedder loaded through fastembed (which leaves the record), then one loaded from the record."""
    first = Embedder(name, path, work)
    first.load()
    assert not isinstance(first._model, DirectModel)
    assert (work / f"{first._work_name}.json").is_file()
    second = Embedder(name, path, work)
    second.load()
    assert isinstance(second._model, DirectModel)
    return first, second


# The texts in two batches: the short ones, and the long one beside a short one (padded to the
# model's 256 tokens, which a batch costs per row: 2 rows, not 6, of a real model's slowest work).
BATCHES = ([t for t in TEXTS if len(t) < 1000], [TEXTS[3], TEXTS[4]])


def _assert_same(name: str, path: Path, work: Path) -> None:
    first, second = _record_then_direct(name, path, work)
    for texts, expected in zip(BATCHES, _fastembed_vectors(name, path, BATCHES)):
        direct = second._model.embed(texts)
        assert direct.dtype == expected.dtype and direct.shape == expected.shape
        assert np.abs(direct - expected).max() <= 1e-6
        assert np.abs(second.embed(texts) - first.embed(texts)).max() <= 1e-6
    assert np.abs(second.embed_query("what do dogs eat") - first.embed_query("what do dogs eat")).max() <= 1e-6
    assert second.token_lengths(TEXTS) == first.token_lengths(TEXTS)
    assert second.fingerprint == first.fingerprint


def test_the_real_model_from_its_record_gives_fastembeds_vectors(tmp_path: Path) -> None:
    _assert_same(*real_model(), tmp_path / "state")


def test_a_static_model_from_its_record_gives_fastembeds_vectors(tiny_model_dir: Path, tmp_path: Path) -> None:
    from tiny_model import MODEL_NAME

    _assert_same(MODEL_NAME, tiny_model_dir, tmp_path / "state")


def test_a_static_model_with_weights_and_a_token_mapping(tmp_path: Path) -> None:
    """A vocabulary-quantised model2vec model shares rows between tokens and weighs each token."""
    from safetensors.numpy import load_file, save_file
    from tiny_model import MODEL_NAME, build_tiny_model

    path = build_tiny_model(tmp_path / "model")
    vocab = load_file(str(path / "model.safetensors"))["embeddings"]
    rng = np.random.default_rng(3)
    save_file({"embeddings": vocab[:10].astype(np.float16),
               "mapping": rng.integers(0, 10, len(vocab)).astype(np.int64),
               "weights": rng.uniform(0.5, 2.0, len(vocab)).astype(np.float32)}, str(path / "model.safetensors"))
    _assert_same(MODEL_NAME, path, tmp_path / "state")


def test_a_stale_or_broken_record_goes_back_to_fastembed(tiny_model_dir: Path, tmp_path: Path) -> None:
    from tiny_model import MODEL_NAME

    work = tmp_path / "state"
    first, _ = _record_then_direct(MODEL_NAME, tiny_model_dir, work)
    record_path = work / f"{first._work_name}.json"
    record = json.loads(record_path.read_text())
    for broken in ({**record, "fastembed": "0.0.1"}, {**record, "fingerprint": "other@0"},
                   {**record, "model_file": str(tmp_path / "gone.safetensors")}, "not json {"):
        record_path.write_text(broken if isinstance(broken, str) else json.dumps(broken))
        again = Embedder(MODEL_NAME, tiny_model_dir, work)
        assert np.abs(again.embed(TEXTS) - first.embed(TEXTS)).max() <= 1e-6
        assert not isinstance(again._model, DirectModel)
        assert json.loads(record_path.read_text()) == record  # written afresh by the fastembed load


def test_a_model_named_without_a_path_keeps_no_record(tmp_path: Path) -> None:
    embedder = Embedder(MINILM, None, tmp_path / "state")
    assert embedder._record_path() is None


def _index_in_a_process(notes: Path, *extra: str) -> tuple[dict, list[str]]:
    """`orgkit index NOTES --json --quiet` as a fresh process: its result, and which heavy modules it imported."""
    code = ("import sys\nfrom orgkit.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('\\nIMPORTED ' + ' '.join(m for m in ('fastembed', 'onnxruntime', 'huggingface_hub')"
            " if m in sys.modules) + '\\n')\n")
    out = subprocess.run([sys.executable, "-c", code, "index", "--notes", str(notes), "--json", "--quiet", *extra],
                         capture_output=True, text=True, check=True)
    imported = out.stderr.rsplit("IMPORTED", 1)[1].split()
    return json.loads(out.stdout), imported


def _touch(notes: Path, line: str) -> None:
    time.sleep(0.01)
    with (notes / "dogs.org").open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}\n")


def test_index_with_nothing_to_embed_imports_no_model_runtime(tmp_path: Path, tiny_model: Path) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    first, _ = _index_in_a_process(notes)
    assert first["embedded"] > 0
    unchanged, imported = _index_in_a_process(notes)
    assert unchanged["parsed"] == 0 and unchanged["embedded"] == 0 and imported == []
    _touch(notes, "A new thought about compost.")
    words_only, imported = _index_in_a_process(notes, "--no-embed")
    assert words_only["parsed"] == 1 and imported == []


def test_a_changed_file_is_embedded_from_the_record_without_fastembed(tmp_path: Path, tiny_model: Path,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a machine that never loaded the model
    notes = write_notes(tmp_path / "notes", NOTES)
    first, imported = _index_in_a_process(notes)
    assert first["embedded"] > 0 and "fastembed" in imported  # the first load goes through fastembed
    _touch(notes, "A new thought about compost and seeds.")
    changed, imported = _index_in_a_process(notes)
    assert changed["parsed"] == 1 and changed["embedded"] >= 1 and changed["model_error"] is None
    assert imported == []  # a static model needs neither fastembed nor onnxruntime


def test_the_record_serves_every_notes_folder_of_the_machine(tmp_path: Path, tiny_model: Path, monkeypatch) -> None:
    """The record is kept in the user's cache: a second notes folder (or one whose state dir was deleted)
    loads the model from it without importing fastembed, and no state dir keeps one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    one, two = (write_notes(tmp_path / name, NOTES) for name in ("one", "two"))
    assert "fastembed" in _index_in_a_process(one)[1]
    indexed, imported = _index_in_a_process(two)
    assert indexed["embedded"] > 0 and indexed["model_error"] is None and imported == []
    records = list((tmp_path / "cache" / "orgkit" / "models").glob("model-*.json"))
    assert len(records) == 1
    assert not [p for notes in (one, two) for p in (notes / ".orgkit").rglob("model-*.json")]


def test_a_record_of_a_model_copy_in_the_state_dir_is_no_longer_used(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Earlier versions kept the model's copy in the state dir; a record naming one is passed over
    (the model loads through fastembed, and the record is written afresh)."""
    import shutil

    from tiny_model import MODEL_NAME

    work = tmp_path / "state"
    first, _ = _record_then_direct(MODEL_NAME, tiny_model_dir, work)
    record_path = work / f"{first._work_name}.json"
    record = json.loads(record_path.read_text())
    old = work / "model-0123456789ab"
    shutil.copytree(tiny_model_dir, old)
    record_path.write_text(json.dumps({**record, "model_file": str(old / Path(record["model_file"]).name)}))
    again = Embedder(MODEL_NAME, tiny_model_dir, work)
    again.load()
    assert not isinstance(again._model, DirectModel)
    assert json.loads(record_path.read_text()) == record


def test_the_floors_probes_are_embedded_once_per_model_and_read_back_whole(tiny_model_dir: Path,
                                                                         tmp_path: Path) -> None:
    """A cold process reads the probes' vectors from the model's cache; one that does not read back
    whole, or in another shape, is embedded again and replaced."""
    from orgkit.retrieve.probes import PROBES
    from tiny_model import MODEL_NAME

    cache = tmp_path / "cache"
    first = Embedder(MODEL_NAME, tiny_model_dir, tmp_path / "state", cache)
    expected = first.embed_queries(list(PROBES))
    assert np.array_equal(first.kept_queries(PROBES), expected)
    (kept,) = cache.glob("queries-*.npy")
    cold = Embedder(MODEL_NAME, tiny_model_dir, tmp_path / "state", cache)
    assert np.array_equal(cold.kept_queries(PROBES), expected) and cold._model is None  # read, not embedded
    assert Embedder(MODEL_NAME, None, tmp_path / "state", cache)._kept_dir() is None  # its files may change
    for broken in (kept.read_bytes()[:100], b"not a matrix", None):
        if broken is None:
            np.save(kept, expected[:3])  # whole, but not the probes' shape
        else:
            kept.write_bytes(broken)
        again = Embedder(MODEL_NAME, tiny_model_dir, tmp_path / "state", cache)
        assert np.array_equal(again.kept_queries(PROBES), expected)
        assert np.array_equal(np.load(kept), expected)  # written afresh
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]
