"""A local model run without importing fastembed, computing what fastembed computes.

Importing fastembed costs 0.5-0.7 s (it brings huggingface_hub, httpx and its
model catalogue), more than a one-file update spends on everything else. For a
model directory whose fastembed class orgkit can repeat step by step, the first
load through fastembed leaves a record in the state dir: the tokenizer exactly
as fastembed configured it (truncation, padding, special tokens, serialised by
the tokenizers library itself), the model file it ran (for an ONNX model the
pre-optimised copy) with its session options, and what its class does after the
model (pooling, normalisation). Later loads read the record and run
onnxruntime (or numpy, for a static model) and tokenizers directly, with the
same inputs and post-processing; tests compare the vectors with fastembed's on
the real model and on a static model.

A record is named by the model's fingerprint (the content of its files) and
carries fastembed's version: a changed model or another fastembed goes through
fastembed again, which writes a new record. Only the classes in `_CLASSES`
have records; every other kind of model (CLIP, multi-task, custom models,
external data, a GPU session) always goes through fastembed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .files import replace_file

if TYPE_CHECKING:
    import numpy as np

RECORD_VERSION = 1
# fastembed's class -> (kind, pooling, normalised): the classes whose computation is repeated here.
_CLASSES = {
    "fastembed.text.pooled_normalized_embedding.PooledNormalizedEmbedding": ("onnx", "mean", True),
    "fastembed.text.pooled_embedding.PooledEmbedding": ("onnx", "mean", False),
    "fastembed.text.onnx_embedding.OnnxTextEmbedding": ("onnx", "cls", True),
    "fastembed.text.static_embedding.StaticTextEmbedding": ("static", "mean", True),
}
def _fastembed_version() -> str | None:
    """The installed fastembed's version, read from its metadata (fastembed itself not imported)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fastembed")
    except PackageNotFoundError:
        return None


def record_from_fastembed(model: Any, fingerprint: str) -> dict | None:
    """What a later load needs to run `model` (a loaded fastembed TextEmbedding) without fastembed.

    None when its class is not one whose computation is repeated here, or its
    session is not a plain CPU session of one ONNX file.
    """
    inner: Any = getattr(model, "model", None)
    cls = type(inner)
    kind = _CLASSES.get(f"{cls.__module__}.{cls.__qualname__}")
    description = getattr(inner, "model_description", None)
    model_dir = getattr(inner, "_model_dir", None)
    if kind is None or description is None or model_dir is None or description.additional_files:
        return None
    record: dict[str, Any] = {"version": RECORD_VERSION, "fastembed": _fastembed_version(),
                              "fingerprint": fingerprint, "kind": kind[0], "pooling": kind[1],
                              "normalise": kind[2], "model_file": str(Path(model_dir) / description.model_file)}
    if kind[0] == "onnx":
        session = getattr(inner, "model", None)
        if session is None or session.get_providers() != ["CPUExecutionProvider"]:
            return None
        record["threads"] = inner.threads
        record["session_options"] = dict(inner._extra_session_options)
        if set(record["session_options"]) - {"enable_cpu_mem_arena"}:
            return None
    else:
        inner._ensure_model()
        if getattr(inner, "mmap", False):
            return None
        record["unk_token_id"] = inner.unk_token_id
    if inner.tokenizer is None:
        return None
    record["tokenizer"] = inner.tokenizer.to_str()
    return record


def write_record(path: Path, record: dict) -> None:
    """Keep `record` at `path` (whole or not at all)."""
    replace_file(path, json.dumps(record).encode())


def read_record(path: Path, fingerprint: str) -> dict | None:
    """The record at `path` if it is for this model and this fastembed, else None."""
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if (not isinstance(record, dict) or record.get("version") != RECORD_VERSION
            or record.get("fingerprint") != fingerprint or record.get("fastembed") != _fastembed_version()):
        return None
    return record


def _normalise(matrix: "np.ndarray") -> "np.ndarray":
    """fastembed's L2 normalisation (the norm floored at 1e-12, float16 normalised in float32)."""
    import numpy as np

    if matrix.dtype == np.float16:
        return _normalise(matrix.astype(np.float32)).astype(np.float16)
    norm = np.maximum(np.linalg.norm(matrix, ord=2, axis=1, keepdims=True), 1e-12)
    return matrix / norm


@dataclass
class DirectModel:
    """A model run from its record: `embed` and `query_embed` give what fastembed's would."""

    record: dict
    tokenizer: Any
    session: Any = None  # onnxruntime's session (ONNX models)
    tensors: dict | None = None  # embeddings, optional weights and mapping (static models)

    @classmethod
    def load(cls, record: dict) -> "DirectModel":
        """Open the model a record describes; raises (OSError, ValueError, onnxruntime's errors) when it cannot."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(record["tokenizer"])
        if record["kind"] == "static":
            return cls(record, tokenizer, tensors=_static_tensors(Path(record["model_file"])))
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Worker threads sleep between runs instead of spinning: a spinning pool burnt about 12 ms of
        # CPU after every query embedding (bench/README.md, "One warm client on each surface").
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if record["threads"] is not None:
            options.intra_op_num_threads = options.inter_op_num_threads = record["threads"]
        if "enable_cpu_mem_arena" in record["session_options"]:
            options.enable_cpu_mem_arena = record["session_options"]["enable_cpu_mem_arena"]
        session = ort.InferenceSession(record["model_file"], providers=["CPUExecutionProvider"],
                                       sess_options=options)
        return cls(record, tokenizer, session=session)

    def embed(self, texts: list[str], batch_size: int | None = None) -> "np.ndarray":
        """One row per text, computed as one batch (`batch_size` is accepted and not needed)."""
        return self._onnx(texts) if self.tensors is None else self._static(self.tensors, texts)

    def query_embed(self, text: str) -> "np.ndarray":
        return self.embed([text])

    def _onnx(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        encoded = self.tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encoded], dtype=np.int64)
        attention_mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        names = {node.name for node in self.session.get_inputs()}
        inputs = {"input_ids": input_ids}
        if "attention_mask" in names:
            inputs["attention_mask"] = attention_mask
        if "token_type_ids" in names:
            inputs["token_type_ids"] = np.zeros_like(input_ids)
        output = self.session.run(None, inputs)[0]
        if self.record["pooling"] == "cls":
            if output.ndim not in (2, 3):
                raise ValueError(f"unsupported embedding shape: {output.shape}")
            return _normalise(output[:, 0] if output.ndim == 3 else output)
        pooled = (np.sum(output, axis=1, where=attention_mask[:, :, None].astype(bool), dtype=np.float64)
                  / np.maximum(np.sum(attention_mask, axis=1, keepdims=True), 1e-9))
        return (_normalise(pooled) if self.record["normalise"] else pooled).astype(output.dtype, copy=False)

    def _static(self, tensors: dict, texts: list[str]) -> "np.ndarray":
        """Each text's token vectors summed (unknown tokens left out), normalised: the mean's direction."""
        import numpy as np

        embeddings = tensors["embeddings"]
        weights, mapping = tensors.get("weights"), tensors.get("mapping")
        unknown = self.record["unk_token_id"]
        sums = np.zeros((len(texts), embeddings.shape[1]), dtype=np.float32)
        for row, encoding in zip(sums, self.tokenizer.encode_batch_fast(texts, add_special_tokens=False)):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            if unknown is not None:
                ids = ids[ids != unknown]
            if ids.size:
                vectors = embeddings[ids if mapping is None else mapping[ids]]
                if weights is not None:
                    vectors = vectors * weights[ids, None]
                row[:] = vectors.sum(axis=0, dtype=np.float32)
        return _normalise(sums)


def _static_tensors(path: Path) -> dict[str, "np.ndarray"]:
    """A static model's tensors (its token vectors are `embeddings`)."""
    from .tensors import read_safetensors

    tensors = read_safetensors(path)
    if "embeddings" not in tensors:
        raise ValueError(f"no `embeddings` tensor in {path}")
    return tensors
