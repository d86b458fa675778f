"""Text embeddings through fastembed, with the model chosen by the environment.

`ORGKIT_MODEL` names a fastembed model and `ORGKIT_MODEL_PATH` points at a local
copy of it (fastembed's `specific_model_path`), for machines without a model hub.
fastembed and numpy are imported only when a model is really loaded, so that
commands which never embed start fast. The fingerprint names the model without
loading it: stored vectors are keyed by it, so a changed model re-embeds.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .config import DEFAULT_MODEL
from .errors import OrgkitError

if TYPE_CHECKING:
    import numpy as np

_SAMPLE = 1 << 20  # bytes hashed from each end of a model file


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


@dataclass
class Embedder:
    """One embedding model, loaded on first use."""

    name: str
    path: Path | None = None
    _model: object | None = field(default=None, repr=False)
    _error: str | None = field(default=None, repr=False)  # a failed load is not retried

    @classmethod
    def from_env(cls) -> "Embedder":
        path = os.environ.get("ORGKIT_MODEL_PATH")
        return cls(os.environ.get("ORGKIT_MODEL") or DEFAULT_MODEL, Path(path) if path else None)

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

    def load(self) -> None:
        """Load the model now; ModelUnavailable says why it cannot be loaded, in one line."""
        if self._model is not None:
            return
        if self._error is None and self.path is not None and not self.path.is_dir():
            self._error = f"model directory not found: {self.path}"
        if self._error is not None:
            raise ModelUnavailable(self._error)
        try:
            from fastembed import TextEmbedding

            kwargs = {"specific_model_path": str(self.path)} if self.path else {}
            self._model = TextEmbedding(self.name, **kwargs)
        except Exception as exc:  # fastembed raises many kinds; all mean "no model"
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self._error = f"cannot load embedding model {self.name}: {detail}"
            raise ModelUnavailable(self._error) from None

    def embed(self, texts: list[str]) -> "np.ndarray":
        """L2-normalised float32 vectors, one row per text, run as one batch."""
        import numpy as np

        self.load()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows = list(self._model.embed(texts, batch_size=len(texts)))  # type: ignore[union-attr]
        return normalise(np.vstack(rows))

    def embed_query(self, text: str) -> "np.ndarray":
        import numpy as np

        self.load()
        vector = next(iter(self._model.query_embed(text)))  # type: ignore[union-attr]
        return normalise(np.asarray(vector, dtype=np.float32)[None, :])[0]


def normalise(matrix: "np.ndarray") -> "np.ndarray":
    """Unit rows in float32 (zero rows stay zero), so a dot product is a cosine."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def plan_batches(lengths: list[int], *, max_items: int = 64, max_chars: int = 16_000) -> list[range]:
    """Consecutive batches whose padded size stays bounded.

    A transformer pads a batch to its longest text and its attention grows with
    the square of that length, so a batch of long passages must be smaller than
    a batch of short ones: each batch holds at most `max_items` texts and at most
    `max_chars` once every text is counted at the batch's longest length.
    """
    batches: list[range] = []
    start = 0
    longest = 0
    for i, length in enumerate(lengths):
        longest = max(longest, length)
        if i > start and (i - start >= max_items or (i - start + 1) * longest > max_chars):
            batches.append(range(start, i))
            start, longest = i, length
    if start < len(lengths):
        batches.append(range(start, len(lengths)))
    return batches
