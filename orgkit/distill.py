"""A static embedding model distilled from the configured ONNX model: the fast tier.

A static (model2vec-format) model holds one vector per vocabulary token; a
text's embedding is the normalised mean of its tokens' vectors, so embedding
costs a tokenizer pass and a sum instead of a transformer run: a corpus that
takes minutes with MiniLM takes seconds. It is made the way model2vec distils
one: every token of the tokenizer's vocabulary goes through the dense model
alone between the model's special tokens (`[CLS] token [SEP]`), its output is
mean-pooled, the matrix is reduced with PCA, and each row is weighted by the
token's rank as a Zipf-law stand-in for its frequency (model2vec's SIF
weighting: frequent tokens count less). The result is `model.safetensors`
(key `embeddings`, float32) + `tokenizer.json` + model2vec's `config.json`,
which fastembed loads as a static model
(`ORGKIT_MODEL=minishlab/potion-base-8M ORGKIT_MODEL_PATH=DIR`).

Only numpy, onnxruntime and tokenizers are used (all fastembed's own
dependencies). The directory appears whole or not at all: everything is
computed in memory, written into a hidden staging directory beside the
target and renamed into place; a staging directory left by a killed run is
removed by the next run.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .errors import OrgkitError
from .files import replace_file, staged_directory
from .index.embedding import EmbedProgress
from .tensors import safetensors_bytes

if TYPE_CHECKING:
    import numpy as np

DEFAULT_DIMS = 256  # model2vec's default PCA size (and potion-base-8M's width)
SIF_COEFFICIENT = 1e-4  # model2vec's default: weight = a / (a + p(token))
BATCH_TOKENS = 6144  # input positions per ONNX run; every input has the same length, so no padding
STATIC_MODEL_NAME = "minishlab/potion-base-8M"  # the name fastembed loads a static model directory under
_STAGING = ".{name}.distill-{pid}.tmp"


@dataclass
class Distilled:
    """What `distill` wrote: `orgkit model distill`'s result."""

    out: Path
    source: Path
    tokens: int
    dims: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"out": str(self.out), "source": str(self.source), "tokens": self.tokens, "dims": self.dims,
                "seconds": round(self.seconds, 2), "model": STATIC_MODEL_NAME}


@dataclass
class _Source:
    """A dense ONNX text model: its graph file, its tokenizer, and its per-token output."""

    onnx: Path
    tokenizer: Path


def find_source(model_path: Path | None) -> _Source:
    """The dense model to distil from `model_path`, or a one-line OrgkitError saying what is missing."""
    if model_path is None:
        raise OrgkitError("no local model to distil: set ORGKIT_MODEL_PATH (or model_path in your config file) "
                          "to a dense ONNX model directory")
    if not model_path.is_dir():
        raise OrgkitError(f"model directory not found: {model_path} (ORGKIT_MODEL_PATH)")
    tokenizer = model_path / "tokenizer.json"
    if not tokenizer.is_file():
        raise OrgkitError(f"cannot distil {model_path}: it has no tokenizer.json")
    named = [p for p in (model_path / "model.onnx", model_path / "onnx" / "model.onnx") if p.is_file()]
    found = named or sorted([*model_path.glob("*.onnx"), *model_path.glob("onnx/*.onnx")])
    if not found:
        kind = "a static model already" if (model_path / "model.safetensors").is_file() else "not an ONNX model"
        raise OrgkitError(f"cannot distil {model_path}: it is {kind} (no .onnx file)")
    if len(found) > 1 and not named:
        raise OrgkitError(f"cannot distil {model_path}: several .onnx files and none named model.onnx")
    return _Source(found[0], tokenizer)


def distill(model_path: Path | None, out: Path, dims: int = DEFAULT_DIMS,
            progress: Callable[[EmbedProgress], None] | None = None) -> Distilled:
    """Distil the dense model at `model_path` into a static model written to `out` (a new or empty dir)."""
    started = time.monotonic()
    out = out.absolute()
    _check_target(out)
    source = find_source(model_path)
    tokenizer = _tokenizer(source.tokenizer)
    session, hidden_output = _session(source)
    vocabulary = tokenizer.get_vocab_size(with_added_tokens=True)
    prefix, suffix = _special_tokens(tokenizer)
    vectors = embed_vocabulary(session, hidden_output, vocabulary, prefix, suffix, progress)
    reduced = pca(vectors, dims)
    reduced *= sif_weights(vocabulary)[:, None]
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "tokenizer_name": str(model_path),
              "apply_pca": reduced.shape[1], "sif_coefficient": SIF_COEFFICIENT, "hidden_dim": reduced.shape[1],
              "seq_length": 1000000, "normalize": True}
    _write_model(out, reduced, tokenizer, config)
    return Distilled(out, source.onnx.parent, vocabulary, reduced.shape[1], time.monotonic() - started)


def _check_target(out: Path) -> None:
    """Refuse a target that holds anything (nothing is overwritten); clear a killed run's staging dirs."""
    if out.exists() and not (out.is_dir() and not any(out.iterdir())):
        raise OrgkitError(f"{out} already exists: give a new or empty directory")
    if out.parent.is_dir():
        for stale in out.parent.glob(_STAGING.format(name=out.name, pid="*")):
            pid = stale.name.rsplit("-", 1)[-1].removesuffix(".tmp")
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for a bad file
        raise OrgkitError(f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    # A static model pads nothing and truncates as its loader decides; what the dense model's
    # tokenizer file says about either would only mislead a reader of the copy.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _session(source: _Source) -> tuple[Any, str]:
    """An onnxruntime session over the graph, and the name of its per-token (batch x tokens x dims) output."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = False
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(source.onnx), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's errors are long; the first line says what is wrong
        raise OrgkitError(f"cannot load {source.onnx}: {str(exc).strip().splitlines()[0]}") from None
    names = {i.name for i in session.get_inputs()}
    if "input_ids" not in names or not names <= {"input_ids", "attention_mask", "token_type_ids"}:
        raise OrgkitError(f"cannot distil {source.onnx}: it is not a text embedding model "
                          f"(inputs {', '.join(sorted(names))})")
    per_token = [o.name for o in session.get_outputs() if len(o.shape or ()) == 3]
    if not per_token:
        raise OrgkitError(f"cannot distil {source.onnx}: it has no per-token output (last_hidden_state)")
    return session, ("last_hidden_state" if "last_hidden_state" in per_token else per_token[0])


def _special_tokens(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text (`[CLS]` and `[SEP]` for BERT; none for some)."""
    for token, _ in sorted(tokenizer.get_vocab(with_added_tokens=False).items(), key=lambda kv: kv[1]):
        encoding = tokenizer.encode(token)
        inner = [i for i, special in enumerate(encoding.special_tokens_mask) if not special]
        if inner:
            return encoding.ids[:inner[0]], encoding.ids[inner[-1] + 1:]
    return [], []


def embed_vocabulary(session: Any, output: str, vocabulary: int, prefix: list[int], suffix: list[int],
                     progress: Callable[[EmbedProgress], None] | None = None) -> "np.ndarray":
    """Every token id alone between `prefix` and `suffix` through the model, mean-pooled: (vocabulary x hidden).

    All inputs have the same length, so a batch has no padding; its size is
    capped in positions so that memory stays flat.
    """
    import numpy as np

    length = len(prefix) + 1 + len(suffix)
    batch = max(1, BATCH_TOKENS // length)
    inputs = {i.name for i in session.get_inputs()}
    state = EmbedProgress(total=vocabulary, total_tokens=vocabulary * length, unit="vocabulary tokens")
    started = time.monotonic()
    rows = []
    for start in range(0, vocabulary, batch):
        ids = np.arange(start, min(start + batch, vocabulary), dtype=np.int64)
        input_ids = np.concatenate([np.tile(np.asarray(prefix, dtype=np.int64), (len(ids), 1)), ids[:, None],
                                    np.tile(np.asarray(suffix, dtype=np.int64), (len(ids), 1))], axis=1)
        feed = {"input_ids": input_ids}
        if "attention_mask" in inputs:
            feed["attention_mask"] = np.ones_like(input_ids)
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = session.run([output], feed)[0]
        rows.append(np.asarray(hidden, dtype=np.float32).mean(axis=1))  # every position is attended
        if progress is not None:
            state.done, state.tokens = start + len(ids), (start + len(ids)) * length
            state.seconds = time.monotonic() - started
            progress(state)
    return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def pca(matrix: "np.ndarray", dims: int) -> "np.ndarray":
    """`matrix` centred and projected on its `dims` principal axes (fewer when it has fewer columns).

    The eigenvectors of the (columns x columns) covariance, which for a
    vocabulary of tens of thousands of rows and a few hundred columns is far
    cheaper than an SVD of the whole matrix. Each axis's sign is fixed so that
    the same input gives the same output.
    """
    import numpy as np

    data = np.asarray(matrix, dtype=np.float64)
    data = data - data.mean(axis=0)
    values, vectors = np.linalg.eigh(data.T @ data)
    axes = vectors[:, np.argsort(values)[::-1][:min(dims, data.shape[1])]]
    axes *= np.where(axes[np.abs(axes).argmax(axis=0), range(axes.shape[1])] < 0, -1.0, 1.0)
    return (data @ axes).astype(np.float32)


def sif_weights(vocabulary: int) -> "np.ndarray":
    """model2vec's weight per token id: a / (a + p), p from Zipf's law with the id as the frequency rank."""
    import numpy as np

    inverse_rank = 1.0 / np.arange(2, vocabulary + 2, dtype=np.float64)
    probability = inverse_rank / inverse_rank.sum()
    return (SIF_COEFFICIENT / (SIF_COEFFICIENT + probability)).astype(np.float32)


def _write_model(out: Path, embeddings: "np.ndarray", tokenizer: Any, config: dict[str, Any]) -> None:
    """Stage the model's files beside `out`, then rename the directory into place."""
    files = {"model.safetensors": safetensors_bytes({"embeddings": embeddings}),
             "tokenizer.json": tokenizer.to_str().encode(),
             "config.json": (json.dumps(config, indent=2) + "\n").encode()}
    try:
        with staged_directory(out, _STAGING.format(name=out.name, pid=os.getpid())) as staging:
            for name, data in files.items():
                replace_file(staging / name, data)
    except OSError as exc:  # the rename refuses a directory that filled meanwhile
        raise OrgkitError(f"cannot write {out}: {exc.strerror or exc}") from None
