"""One optimised ONNX model per machine: in the user's cache, shared by every notes folder and process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import real_model, write_notes
from test_index import NOTES

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]


def _sizes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _model_env(cache: Path) -> dict:
    name, path = real_model()
    return {**os.environ, "ORGKIT_MODEL": name, "ORGKIT_MODEL_PATH": str(path), "XDG_CACHE_HOME": str(cache)}


def test_two_notes_folders_indexed_at_once_share_one_whole_optimised_copy(tmp_path: Path) -> None:
    """Two real processes index two folders at the same time on an empty cache: one copy, whole,
    made once; neither state dir keeps a model, and an earlier version's copy there is removed."""
    import onnxruntime as ort

    env = _model_env(tmp_path / "cache")
    folders = [write_notes(tmp_path / name, NOTES) for name in ("one", "two")]
    old = folders[1] / ".orgkit" / "model-0123456789ab"  # a copy an earlier version kept in the state dir
    old.mkdir(parents=True)
    (old / "model.onnx").write_bytes(b"\0" * 1024)
    (old.parent / "model-0123456789ab.json").write_text("{}")  # and its record
    procs = [subprocess.Popen([*ORGKIT, "index", "--notes", str(notes), "--json", "--quiet"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for notes in folders]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert json.loads(out)["embedded"] > 0
    cache = tmp_path / "cache" / "orgkit" / "models"
    (copy,) = [p for p in cache.iterdir() if p.is_dir()]
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]
    assert (copy / "model.onnx").stat().st_size > 1 << 20
    ort.InferenceSession(str(copy / "model.onnx"), providers=["CPUExecutionProvider"])  # whole, loadable
    for notes in folders:
        state = notes / ".orgkit"
        assert not list(state.rglob("*.onnx")), "a state dir keeps no model of its own"
        assert not [p for p in state.iterdir() if p.name.startswith("model-")]  # no copy, no record
        assert _sizes(state) < 15 << 20
