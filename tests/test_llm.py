"""The model seam against a real loopback chat server: backends, checks, retries, personas."""

from __future__ import annotations

import pytest

from orgkit import config as cfgmod
from orgkit.llm import (ModelFailure, ModelUnavailable, complete, format_prompt, persona,
                        watch_prompts)
from llm_server import Canned

SCHEMA = {"type": "object", "required": ["answer"],
          "properties": {"answer": {"type": "integer"}}, "additionalProperties": False}


def _config(notes, **flags):
    return cfgmod.load(notes, flags=flags, env={})


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    return root


def test_no_model_configured_is_unavailable_in_one_line(notes):
    with pytest.raises(ModelUnavailable) as err:
        complete(_config(notes), "extractor", [{"role": "user", "content": "hi"}])
    assert "\n" not in str(err.value) and "llm.endpoint" in str(err.value)


def test_plain_reply_and_request_shape(notes, llm_server):
    llm_server.reply("hello")
    cfg = _config(notes, **{"llm.endpoint": llm_server.url, "llm.model": "m1"})
    reply = complete(cfg, "extractor", [{"role": "user", "content": "hi"}])
    assert reply.text == "hello" and reply.data is None and reply.attempts == 1
    sent = llm_server.requests[0]
    assert sent["_path"] == "/v1/chat/completions" and sent["model"] == "m1"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert "response_format" not in sent


def test_json_reply_is_parsed_and_schema_sent(notes, llm_server):
    llm_server.reply("```json\n{\"answer\": 42}\n```")
    cfg = _config(notes, **{"llm.endpoint": llm_server.url})
    reply = complete(cfg, "auditor", [{"role": "user", "content": "q"}], SCHEMA)
    assert reply.data == {"answer": 42}
    assert llm_server.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_corrective_retry_succeeds(notes, llm_server):
    llm_server.reply("not json at all", {"answer": 7})
    cfg = _config(notes, **{"llm.endpoint": llm_server.url})
    reply = complete(cfg, "extractor", [{"role": "user", "content": "q"}], SCHEMA)
    assert reply.data == {"answer": 7} and reply.attempts == 2
    second = llm_server.requests[1]["messages"]
    assert second[1] == {"role": "assistant", "content": "not json at all"}
    assert "not valid JSON" in second[2]["content"]


def test_schema_violation_then_failure_again(notes, llm_server):
    llm_server.reply({"answer": "seven"}, {"wrong": 1})
    cfg = _config(notes, **{"llm.endpoint": llm_server.url})
    with pytest.raises(ModelFailure) as err:
        complete(cfg, "extractor", [{"role": "user", "content": "q"}], SCHEMA)
    assert "after one corrective retry" in str(err.value)
    assert len(llm_server.requests) == 2
    assert "answer" in llm_server.requests[1]["messages"][-1]["content"]


def test_length_cut_reply_is_a_failure(notes, llm_server):
    llm_server.reply(Canned('{"answer": 4', finish_reason="length"))
    cfg = _config(notes, **{"llm.endpoint": llm_server.url, "llm.max_tokens": 32})
    with pytest.raises(ModelFailure) as err:
        complete(cfg, "extractor", [{"role": "user", "content": "q"}], SCHEMA)
    assert "cut off" in str(err.value) and len(llm_server.requests) == 1


def test_http_error_fails_once_without_retry(notes, llm_server):
    llm_server.reply(Canned("overloaded", status=503))
    cfg = _config(notes, **{"llm.endpoint": llm_server.url})
    with pytest.raises(ModelFailure) as err:
        complete(cfg, "extractor", [{"role": "user", "content": "q"}])
    assert "HTTP 503" in str(err.value) and len(llm_server.requests) == 1


def test_timeout_is_a_failure(notes, llm_server):
    llm_server.reply(Canned("late", delay=2.5))
    cfg = _config(notes, **{"llm.endpoint": llm_server.url, "llm.timeout": 1})
    with pytest.raises(ModelFailure) as err:
        complete(cfg, "extractor", [{"role": "user", "content": "q"}])
    assert "did not answer" in str(err.value)


def test_unreachable_endpoint_is_a_failure(notes):
    cfg = _config(notes, **{"llm.endpoint": "http://127.0.0.1:9/v1", "llm.timeout": 2})
    with pytest.raises(ModelFailure):
        complete(cfg, "extractor", [{"role": "user", "content": "q"}])


def test_role_overrides_and_api_key(notes, llm_server, monkeypatch):
    llm_server.reply("ok")
    monkeypatch.setenv("MY_KEY", "sekrit")
    cfg = _config(notes, **{"llm.gguf": str(notes / "missing.gguf"), "llm.auditor.endpoint": llm_server.url,
                            "llm.model": "base", "llm.auditor.model": "other-family",
                            "llm.api_key_env": "MY_KEY"})
    reply = complete(cfg, "auditor", [{"role": "user", "content": "q"}])
    assert reply.model == "other-family"
    assert llm_server.requests[0]["_authorization"] == "Bearer sekrit"
    with pytest.raises(ModelUnavailable) as err:  # the extractor falls back to the missing GGUF
        complete(cfg, "extractor", [{"role": "user", "content": "q"}])
    assert "not found" in str(err.value)


def test_watchers_see_every_prompt_sent(notes, llm_server):
    llm_server.reply("bad", {"answer": 1})
    cfg = _config(notes, **{"llm.endpoint": llm_server.url})
    seen = []
    with watch_prompts(lambda role, model, messages: seen.append(format_prompt(role, model, messages))):
        complete(cfg, "extractor", [{"role": "system", "content": "SYS"}, {"role": "user", "content": "Q"}],
                 SCHEMA)
    assert len(seen) == 2 and "--- system ---\nSYS" in seen[0] and "corrective" not in seen[0]
    assert "could not be used" in seen[1]


def test_persona_from_package_and_overlay(notes):
    cfg = _config(notes)
    assert "quote" in persona(cfg, "extractor").lower()
    (notes / "personas").mkdir()
    (notes / "personas" / "extractor.org").write_text("#+title: Mine\n\nBe terse.\n", encoding="utf-8")
    assert persona(cfg, "extractor") == "Be terse."
