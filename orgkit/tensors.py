"""The safetensors format, read and written with numpy alone.

Static embedding models (model2vec format) keep their token vectors in it:
`model distill` writes one, and a static model is run from one without the
`safetensors` package or fastembed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# safetensors dtypes read directly (BF16 is widened to float32).
_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
          "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}


def safetensors_bytes(tensors: dict[str, "np.ndarray"]) -> bytes:
    """The safetensors encoding of float32 `tensors`: an 8-byte header size, the JSON header, the data."""
    import numpy as np

    header: dict[str, Any] = {"__metadata__": {"format": "np"}}
    blobs, offset = [], 0
    for name, tensor in tensors.items():
        blob = np.ascontiguousarray(tensor, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def read_safetensors(path: Path) -> dict[str, "np.ndarray"]:
    """A file's tensors, read with numpy as fastembed reads them (BF16 widened to float32)."""
    import numpy as np

    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    header.pop("__metadata__", None)
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        shape, dtype = tuple(info["shape"]), info["dtype"]
        wide = dtype == "BF16"
        if not wide and dtype not in _DTYPES:
            raise ValueError(f"unsupported safetensors dtype {dtype} for {name} in {path}")
        raw = np.fromfile(path, dtype="<u2" if wide else _DTYPES[dtype],
                          count=(end - start) // (2 if wide else np.dtype(_DTYPES[dtype]).itemsize),
                          offset=8 + size + start).reshape(shape)
        tensors[name] = (raw.astype(np.uint32) << 16).view(np.float32) if wide else raw
    return tensors
