"""Text embeddings through fastembed, with the model named by the configuration.

`model` names a fastembed model and `model_path` points at a local copy of it
(fastembed's `specific_model_path`), for machines without a model hub. A model
named without a path is taken from fastembed's cache only: loading never asks
the network, so a machine offline learns in a moment that there is no model
(one line that says how to get one) instead of waiting on retries. Only
`orgkit model pull` downloads, after a short check that the hub answers.

fastembed and numpy are imported only when a model is really loaded, so that
commands which never embed start fast. The fingerprint names the model without
loading it: stored vectors are keyed by it, so a changed model re-embeds.

Embedding runs in batches of similar length whose padded size is capped in
tokens (a batch is padded to its longest text, and attention grows with the
square of that), with onnxruntime's memory arena off, so memory stays flat
however many passages there are.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import socket
import threading
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .config import DEFAULT_MODEL, model_cache
from .errors import OrgkitError, first_line
from .files import file_lock, replace_file, staged_directory

if TYPE_CHECKING:
    import numpy as np

    from .config import Config

_SAMPLE = 1 << 20  # bytes hashed from each end of a model file
HUB_TIMEOUT = 2.0  # seconds the hub gets to answer before a pull gives up
BATCH_TOKENS = 4096  # padded tokens per batch
BATCH_ITEMS = 64  # texts per batch, even when they are short
ATTENTION_CELLS = 1 << 17  # texts x longest^2 per batch: attention's share of memory
RECENT_QUERIES = 4  # query vectors kept: a call embeds its query, and perhaps the query as corrected
HOW_TO_GET = ("run `orgkit model pull` to download it, or set ORGKIT_MODEL_PATH "
              "to a local copy")


class ModelUnavailable(OrgkitError):
    """No embedding model could be loaded (offline, no cache, a bad path)."""


def _file_digest(path: Path) -> str:
    """Size plus both ends of the file: cheap, and different for different weights."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(_SAMPLE))
        if size > 2 * _SAMPLE:
            handle.seek(-_SAMPLE, os.SEEK_END)
            digest.update(handle.read(_SAMPLE))
    return digest.hexdigest()


def _quiet_fastembed() -> None:
    """fastembed logs each failed source as an ERROR line; orgkit says what matters once."""
    try:
        from loguru import logger

        logger.disable("fastembed")
    except ImportError:  # pragma: no cover - fastembed depends on loguru
        pass


@dataclass
class Embedder:
    """One embedding model, loaded on first use."""

    name: str
    path: Path | None = None
    work_dir: Path | None = None  # the state dir: earlier versions' model copies; the record without a model cache
    model_cache: Path | None = None  # the user's shared cache: optimised ONNX models, records (config.model_cache)
    batch_limits: dict[str, int] = field(default_factory=dict, repr=False)  # plan_batches' limits, for benchmarks
    _model: Any = field(default=None, repr=False)
    _error: str | None = field(default=None, repr=False)  # a failed load is not retried
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one load across threads
    # The last few queries' vectors, newest first: a context ranks notes, then the passages of a long
    # one, by the same query, and a mistyped query is judged as corrected between the two.
    _recent: tuple[tuple[str, Any], ...] = field(default=(), repr=False)

    @classmethod
    def from_config(cls, config: "Config") -> "Embedder":
        return cls(config["model"] or DEFAULT_MODEL, config["model_path"], config.state_dir, model_cache())

    @cached_property
    def fingerprint(self) -> str:
        """The model's identity: its name, plus the content of a local model directory."""
        digest = hashlib.sha256(self.name.encode())
        if self.path is not None and self.path.is_dir():
            for file in sorted(p for p in self.path.iterdir() if p.is_file()):
                digest.update(f"\0{file.name}\0{_file_digest(file)}".encode())
        elif self.path is not None:
            digest.update(f"\0missing:{self.path}".encode())
        return f"{self.name}@{digest.hexdigest()[:16]}"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def error(self) -> str | None:
        """Why an earlier load failed (it is not retried), else None."""
        return self._error

    def load(self) -> None:
        """Load the model now, from its path or the cache (never the network).

        ModelUnavailable says why it cannot be loaded and how to get it, in one line.
        """
        with self._lock:
            self._load()

    def _load(self) -> None:
        if self._model is not None:
            return
        if self._error is None and self.path is not None and not self.path.is_dir():
            self._error = f"model directory not found: {self.path} (ORGKIT_MODEL_PATH)"
        if self._error is not None:
            raise ModelUnavailable(self._error)
        if self._load_direct():
            return
        try:
            from fastembed import TextEmbedding

            _quiet_fastembed()
            where = {"specific_model_path": str(self.path)} if self.path else {"local_files_only": True}
            with warnings.catch_warnings():  # a static model says the arena option does not apply
                warnings.simplefilter("ignore", UserWarning)
                model = TextEmbedding(self.name, enable_cpu_mem_arena=False, lazy_load=True, **where)
                prepared = self._prepared(model)
                if prepared is not None:
                    model = TextEmbedding(self.name, enable_cpu_mem_arena=False, lazy_load=True,
                                          specific_model_path=str(prepared))
                if hasattr(model.model, "load_onnx_model"):
                    model.model.load_onnx_model()
                elif hasattr(model.model, "load_model"):  # a static model: a broken file fails here, not mid-run
                    model.model.load_model()
                self._model = model
            self._keep_record(model)
        except Exception as exc:  # fastembed raises many kinds; all mean "no model"
            if self.path is None and "from any source" in str(exc):
                self._error = f"embedding model {self.name} is not downloaded ({HOW_TO_GET})"
            else:
                self._error = f"cannot load embedding model {self.name}: {first_line(exc)}"
            raise ModelUnavailable(self._error) from None

    def _record_path(self) -> Path | None:
        """Where the record for running this model without fastembed is kept (a local model only): in the
        user's model cache, beside the optimised copy, so that one load through fastembed serves every notes
        folder and process of the machine (a fresh state dir loads without it); else in the state dir."""
        where = self._kept_dir()
        return where / f"{self._work_name}.json" if where is not None else None

    def _kept_dir(self) -> Path | None:
        """Where what is derived from a local model alone is kept: the user's model cache, else the state
        dir (None for a model named without a path: its files, and so its vectors, may change under it)."""
        where = self.model_cache if self.model_cache is not None else self.work_dir
        return where if self.path is not None else None

    @property
    def _work_name(self) -> str:
        return f"model-{hashlib.sha1(self.fingerprint.encode()).hexdigest()[:12]}"

    def _load_direct(self) -> bool:
        """Load the model from its record (see `embed_direct`), without importing fastembed; whether it did.

        A missing, stale or unreadable record, or a model that no longer opens,
        leaves the load to fastembed.
        """
        path = self._record_path()
        if path is None or not path.is_file():
            return False
        from .embed_direct import DirectModel, read_record

        record = read_record(path, self.fingerprint)
        if record is None or self._in_state_dir(record["model_file"]):
            return False
        try:
            self._model = DirectModel.load(record)
        except Exception:  # onnxruntime, tokenizers or the files: fastembed loads it instead
            return False
        return True

    def _in_state_dir(self, model_file: str) -> bool:
        """Whether a record names a model copy an earlier version kept in the state dir (no longer used:
        the shared cache holds the one copy, and the next index removes this one)."""
        return self.work_dir is not None and Path(model_file).resolve().is_relative_to(self.work_dir.resolve())

    def _keep_record(self, model: Any) -> None:
        """After fastembed loaded a local model, record how to run it without fastembed next time."""
        path = self._record_path()
        if path is None:
            return
        from .embed_direct import record_from_fastembed, write_record

        try:
            record = record_from_fastembed(model, self.fingerprint)
            if record is not None:
                write_record(path, record)
        except Exception:  # a record is an optimisation: without it, fastembed loads the model
            pass

    def missing(self) -> str | None:
        """Why the model cannot be loaded, found without loading it (no session, no network); else None.

        For a first search on a corpus never embedded: the one warning should
        say how to get the model when there is none, and a present model is
        not loaded for nothing.
        """
        if self._model is not None:
            return None
        if self._error is None and self.path is not None:
            return None if self.path.is_dir() else f"model directory not found: {self.path} (ORGKIT_MODEL_PATH)"
        if self._error is None:
            try:
                from fastembed import TextEmbedding

                _quiet_fastembed()
                TextEmbedding(self.name, lazy_load=True, local_files_only=True)
            except Exception as exc:  # as in load(): any failure means no model
                if "from any source" in str(exc):
                    self._error = f"embedding model {self.name} is not downloaded ({HOW_TO_GET})"
                else:
                    self._error = f"cannot load embedding model {self.name}: {first_line(exc)}"
        return self._error

    def _prepared(self, model: Any) -> Path | None:
        """A copy of the model directory whose ONNX graph is already optimised, made once per machine.

        onnxruntime spends most of a model's load time optimising its graph
        (0.4-0.8 s for MiniLM here); loading a graph it optimised before takes
        a fraction of that, which is most of what a one-file update pays. The
        copy lives in the user's cache (`model_cache/DIGEST/`), keyed by the
        model's fingerprint (its files' digest), where it came from and the
        onnxruntime that optimised it, so every notes folder and process shares
        one; it links every other file to the original. The first process to
        need it makes it under a file lock, the others wait and use it. None
        when there is no cache, the model is not a single ONNX file, or
        preparing fails (the original is loaded then).
        """
        inner = getattr(model, "model", None)
        description = getattr(inner, "model_description", None)
        source = getattr(inner, "_model_dir", None)
        if self.model_cache is None or description is None or source is None:
            return None
        model_file = str(description.model_file)
        if not model_file.endswith(".onnx") or description.additional_files:
            return None
        target = self.model_cache / _cache_key(self.fingerprint, Path(source))
        if (target / model_file).is_file():
            return target
        try:
            self.model_cache.mkdir(parents=True, exist_ok=True)
            with file_lock(self.model_cache / f"{target.name}.lock"):
                if not (target / model_file).is_file():  # another process may have made it meanwhile
                    _prepare_model_dir(Path(source), model_file, target)
        except Exception:  # onnxruntime or the file system: the original still loads
            return None
        return target

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Each text's length in the model's tokens (truncated as the model truncates)."""
        self.load()
        tokenizer = getattr(self._model, "tokenizer", None) or getattr(getattr(self._model, "model", None),
                                                                       "tokenizer", None)
        if tokenizer is None:
            return [max(1, len(t) // 4) for t in texts]
        # In slices: the tokenizer pads a call's texts to its longest, and holds every token.
        return [sum(e.attention_mask) or len(e.ids)
                for start in range(0, len(texts), 256) for e in tokenizer.encode_batch(texts[start:start + 256])]

    def embed(self, texts: list[str]) -> "np.ndarray":
        """L2-normalised float32 vectors, one row per text, run as one batch."""
        import numpy as np

        self.load()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows = list(self._model.embed(texts, batch_size=len(texts)))
        return normalise(np.vstack(rows))

    def embed_batches(self, texts: list[str], lengths: list[int] | None = None
                      ) -> Iterator[tuple[list[int], "np.ndarray", int]]:
        """(positions in `texts`, their vectors, their tokens) batch by batch, shortest first.

        Texts are sorted by token length and cut into batches whose padded size
        stays bounded (see `plan_batches`), so no batch holds more than a bounded
        amount of memory; only one batch's vectors exist at a time. `lengths`
        are the texts' token lengths, when the caller has them already.
        """
        lengths = self.token_lengths(texts) if lengths is None else lengths
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        for span in plan_batches([lengths[i] for i in order], **self.batch_limits):
            picked = [order[i] for i in span]
            yield picked, self.embed([texts[i] for i in picked]), sum(lengths[i] for i in picked)

    def embed_queries(self, texts: list[str]) -> "np.ndarray":
        """Texts embedded as a query is (a model may prefix queries), none of them kept as a recent query."""
        import numpy as np

        self.load()
        rows = [np.asarray(next(iter(self._model.query_embed(text))), dtype=np.float32) for text in texts]
        return normalise(np.vstack(rows))

    def kept_queries(self, texts: tuple[str, ...]) -> "np.ndarray":
        """`texts` embedded as queries, kept per model and texts beside the model's record: a fixed set
        (the relevance floor's probes, 50 of them, 0.3 s) that every cold process would embed again.

        A kept matrix that does not read back whole, or not in their shape, is embedded again.
        """
        import numpy as np

        where = self._kept_dir()
        digest = hashlib.sha1("\0".join((self.fingerprint, *texts)).encode()).hexdigest()[:16]
        path = where / f"queries-{digest}.npy" if where is not None else None
        if path is not None:
            try:
                kept = np.load(path, allow_pickle=False)
                if kept.dtype == np.float32 and kept.ndim == 2 and kept.shape[0] == len(texts):
                    return kept
            except (OSError, ValueError, EOFError):
                pass
        vectors = self.embed_queries(list(texts))
        if path is not None:
            buffer = io.BytesIO()
            np.save(buffer, vectors, allow_pickle=False)
            try:
                replace_file(path, buffer.getvalue(), sync=False)  # a derived cache: a crash may lose it
            except OSError:
                pass  # a read-only cache: embedded again next time
        return vectors

    def embed_query(self, text: str) -> "np.ndarray":
        import numpy as np

        recent = self._recent  # replaced whole, never changed in place: threads may share the embedder
        for seen, vector in recent:
            if seen == text:
                return vector
        self.load()
        vector = next(iter(self._model.query_embed(text)))
        out = normalise(np.asarray(vector, dtype=np.float32)[None, :])[0]
        self._recent = ((text, out), *recent[:RECENT_QUERIES - 1])
        return out


def _cache_key(fingerprint: str, source: Path) -> str:
    """The shared copy's directory name: the model's identity, its source and the optimiser's version."""
    import onnxruntime as ort

    identity = f"{fingerprint}\0{source.resolve()}\0{ort.__version__}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def drop_old_copies(state_dir: Path) -> list[Path]:
    """Remove the optimised model copies and the records earlier versions kept in a state dir
    (`model-*/`, `model-*.json`); they are derived data, and the shared cache replaces them. What was removed."""
    gone = [p for p in state_dir.glob("model-*") if not p.is_symlink() and (p.is_dir() or p.suffix == ".json")]
    for path in gone:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return gone


def _prepare_model_dir(source: Path, model_file: str, target: Path) -> None:
    """Write `target`: `source`'s files linked, `model_file` replaced by its optimised graph.

    The graph is optimised to onnxruntime's portable "extended" level (the
    hardware-specific layout passes still run at load), written under a
    temporary name and renamed, so a reader finds a whole copy or none.
    """
    import onnxruntime as ort

    with staged_directory(target, f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp") as staging:
        for file in source.rglob("*"):
            rel = file.relative_to(source)
            if file.is_file() and str(rel) != model_file:
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                (staging / rel).symlink_to(file.resolve())
        (staging / model_file).parent.mkdir(parents=True, exist_ok=True)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(staging / model_file)
        options.enable_cpu_mem_arena = False
        ort.InferenceSession(str(source / model_file), options, providers=["CPUExecutionProvider"])


def normalise(matrix: "np.ndarray") -> "np.ndarray":
    """Unit rows in float32 (zero rows stay zero), so a dot product is a cosine."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def plan_batches(lengths: list[int], *, max_items: int = BATCH_ITEMS, max_tokens: int = BATCH_TOKENS,
                 max_cells: int = ATTENTION_CELLS) -> list[range]:
    """Consecutive batches whose padded size stays bounded.

    A transformer pads a batch to its longest text, and its attention holds a
    score per head for every pair of positions, so memory grows with the
    number of texts times the square of the longest: each batch holds at most
    `max_items` texts, at most `max_tokens` padded tokens, and at most
    `max_cells` attention cells (texts x longest^2). Measured with MiniLM on
    onnxruntime, 16 texts of 512 tokens (4M cells) take 1 GiB beyond the
    loaded model and 1M cells 200-350 MiB; braindump's whole run peaks at
    713 MiB with 256k cells and 499 MiB with 128k, and small batches are no
    slower on a CPU (43.8 s against 54.4 s).
    """
    batches: list[range] = []
    start = 0
    longest = 0
    for i, length in enumerate(lengths):
        longest = max(longest, length)
        size = i - start + 1
        if size > 1 and (size > max_items or size * longest > max_tokens or size * longest * longest > max_cells):
            batches.append(range(start, i))
            start, longest = i, length
    if start < len(lengths):
        batches.append(range(start, len(lengths)))
    return batches


def hub_problem(timeout: float = HUB_TIMEOUT) -> str | None:
    """Why the model hub cannot be reached now (offline mode, no answer in `timeout` s), or None.

    One TCP connection in a daemon thread, so a dead network or a resolver
    that never answers costs `timeout` seconds, not fastembed's retries.
    """
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    url = urlsplit(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(f"cannot reach {host}: {exc.strerror or exc}")

    probe = threading.Thread(target=connect, daemon=True)
    probe.start()
    probe.join(timeout)
    return outcome[0] if outcome else f"cannot reach {host}: no answer in {timeout:g} s"


def pull(embedder: Embedder) -> Path:
    """Download `embedder`'s model into fastembed's cache (progress on stderr); its directory.

    Search and index load it from there afterwards without asking the network.
    """
    if embedder.path is not None:
        raise OrgkitError(f"model_path is set to {embedder.path}: that copy is used, nothing to download")
    problem = hub_problem()
    if problem is not None:
        raise OrgkitError(f"cannot download {embedder.name}: {problem}")
    try:
        from fastembed import TextEmbedding

        _quiet_fastembed()
        model = TextEmbedding(embedder.name, lazy_load=True)
    except Exception as exc:
        raise OrgkitError(f"cannot download {embedder.name}: {first_line(exc)}") from None
    return Path(getattr(model.model, "_model_dir"))  # fastembed's own attribute, not in its types


def describe(embedder: Embedder) -> dict[str, Any]:
    """Where the model comes from, whether it loads, and its size: `orgkit model show`."""
    out: dict[str, Any] = {"name": embedder.name, "path": str(embedder.path) if embedder.path else None,
                           "fingerprint": embedder.fingerprint, "loaded": False, "error": None,
                           "dimensions": None}
    try:
        out["dimensions"] = int(embedder.embed_query("dimension probe").shape[0])
        out["loaded"] = True
    except ModelUnavailable as exc:
        out["error"] = str(exc)
    return out
