"""The embedded backend: a GGUF file run in-process through xllamacpp.

xllamacpp exposes llama.cpp's own server engine, so a request is the same
OpenAI-shaped chat completion the HTTP backend sends (including the JSON
schema, which llama.cpp turns into a grammar). The model is loaded once per
process and file, then shared by every role and thread that names it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from .errors import ModelFailure, ModelUnavailable
from .http import request_body
from .target import Target

CONTEXT_TOKENS = 8192
_servers: dict[Path, Any] = {}
_lock = threading.Lock()


def _server(path: Path) -> Any:
    """The loaded model for `path`, loading it on first use."""
    with _lock:
        if path not in _servers:
            try:
                import xllamacpp as xlc
            except ImportError:
                raise ModelUnavailable("llm.gguf is set but xllamacpp is not installed "
                                       "(pip install 'orgkit[llm]')") from None
            params = xlc.CommonParams()
            params.model.path = str(path)
            params.n_ctx = CONTEXT_TOKENS
            params.verbosity = 0  # llama.cpp's progress logs would drown orgkit's one-line messages
            threads = max(1, (os.cpu_count() or 2))
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            try:
                _servers[path] = xlc.Server(params)
            except Exception as exc:  # the native loader's errors carry no common type
                raise ModelUnavailable(f"cannot load GGUF model {path}: {exc}") from None
        return _servers[path]


def chat(target: Target, messages: list[dict], json_schema: dict | None) -> tuple[str, str, str]:
    """(text, finish_reason, model) of one chat completion from the embedded model."""
    if target.gguf is None:
        raise ModelUnavailable(f"no GGUF file is set for {target.model}")
    server = _server(target.gguf.resolve())
    try:
        result = server.handle_chat_completions(request_body(target, messages, json_schema))
    except Exception as exc:
        raise ModelFailure(f"{target.role}: the embedded model failed: {exc}") from None
    if not isinstance(result, dict) or "error" in result:
        detail = result.get("error") if isinstance(result, dict) else result
        raise ModelFailure(f"{target.role}: the embedded model failed: {detail}")
    try:
        choice = result["choices"][0]
        return choice["message"].get("content") or "", choice.get("finish_reason") or "stop", target.model
    except (KeyError, IndexError, TypeError):
        raise ModelFailure(f"{target.role}: the embedded model gave no chat completion") from None
