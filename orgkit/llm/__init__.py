"""The model seam: one call, `complete(config, role, messages, json_schema)`, three backends.

Backends, chosen by configuration per role: an OpenAI-compatible HTTP
endpoint (`llm.endpoint`, `llm.model`, key in the variable `llm.api_key_env`
names), an embedded GGUF file (`llm.gguf`, needs `orgkit[llm]`), or none, in
which case `ModelUnavailable` says in one line what to set and callers fall
back to their deterministic path.
"""

from .complete import Reply, complete, complete_with
from .errors import ModelFailure, ModelUnavailable
from .prompts import format_prompt, persona, watch_prompts
from .target import Target, resolve

__all__ = ["ModelFailure", "ModelUnavailable", "Reply", "Target", "complete", "complete_with",
           "format_prompt", "persona", "resolve", "watch_prompts"]
