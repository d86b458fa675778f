"""The OpenAI-compatible chat completions backend (Ollama, llama.cpp, vLLM, hosted APIs).

One POST per attempt with explicit timeouts and no automatic retries: a
server that is down or slow fails the call once, in one line, instead of
being hammered. The JSON schema goes in `response_format`, which llama.cpp's
server, vLLM, Ollama and hosted APIs turn into constrained decoding.
"""

from __future__ import annotations

from typing import Any

import httpx

from .errors import ModelFailure
from .target import Target

CONNECT_TIMEOUT = 10.0


def request_body(target: Target, messages: list[dict], json_schema: dict | None) -> dict:
    """The chat completions request for one attempt."""
    body: dict[str, Any] = {"model": target.model, "messages": messages,
                            "max_tokens": target.max_tokens, "temperature": 0}
    if json_schema is not None:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "reply", "schema": json_schema}}
    return body


def chat(target: Target, messages: list[dict], json_schema: dict | None) -> tuple[str, str, str]:
    """(text, finish_reason, model) of one chat completion, or ModelFailure."""
    headers = {"Authorization": f"Bearer {target.api_key}"} if target.api_key else {}
    url = f"{target.endpoint}/chat/completions"
    timeout = httpx.Timeout(target.timeout, connect=min(CONNECT_TIMEOUT, target.timeout))
    try:
        response = httpx.post(url, json=request_body(target, messages, json_schema),
                              headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        raise ModelFailure(f"{target.role}: {url} did not answer within {target.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise ModelFailure(f"{target.role}: cannot reach {url}: {exc}") from None
    if response.status_code != 200:
        raise ModelFailure(f"{target.role}: {url} answered HTTP {response.status_code}: "
                           f"{_one_line(response.text)}")
    return parse_completion(response, target)


def parse_completion(response: httpx.Response, target: Target) -> tuple[str, str, str]:
    try:
        data = response.json()
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        return text, choice.get("finish_reason") or "stop", data.get("model") or target.model
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelFailure(f"{target.role}: not a chat completion reply: "
                           f"{_one_line(response.text)}") from None


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."
