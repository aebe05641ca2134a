"""Structured output: a request's response_format (a JSON schema) enforced by the hf backend while it decodes
(xgrammar over a tiny random-weight Llama with a byte-level BPE tokenizer trained here), and sent as it is by the
openai backend (the scripted loopback server sees it in the body)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("xgrammar")

from halluscope.backends.llm import LLMConfig, complete_all, create_backend, response_format  # noqa: E402
from halluscope.core.store import Store  # noqa: E402
from support.chat_server import ChatServer, Reply  # noqa: E402

CLASSES = ["yes", "no", "refusal", "unknown", "unrelated"]
SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": CLASSES}},
    "required": ["label"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def byte_lm(tmp_path_factory):
    """A random-weight Llama whose byte-level BPE tokenizer can spell JSON (trained here on a few lines)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("hf") / "bytes"
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<pad>", "</s>", "<|user|>", "<|assistant|>", "<|end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(['{"label": "yes"} the reply says no', "a dog barks in the audio"] * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>")
    fast.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    fast.save_pretrained(path)
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=fast.pad_token_id,
        eos_token_id=fast.eos_token_id,
    )
    LlamaForCausalLM(cfg).save_pretrained(path)
    return path


def _requests(b, fmt):
    texts = ["Is there a dog? Reply: yes", "Is there a cat? Reply: no, a dog", "the audio"]
    params = {"max_tokens": 40, **({"response_format": fmt} if fmt else {})}
    return [b.request([{"role": "user", "content": t}], params=params) for t in texts]


def test_hf_decodes_under_the_schema(byte_lm, tmp_path):
    b = create_backend(f"hf/{byte_lm}", config=LLMConfig(), batch_size=3)
    assert b.structured_output
    fmt = response_format("reading", SCHEMA)
    free, _ = complete_all(b, _requests(b, None))
    out, _ = complete_all(b, _requests(b, fmt), store=Store(tmp_path))
    assert not any(_is_reading(r.text) for r in free)  # random weights write no such JSON on their own
    assert all(r.status == "ok" and r.finish_reason == "stop" for r in out)
    for r in out:
        assert _is_reading(r.text), r.text
    # the schema is part of the request: its calls are stored apart from the free ones, and read back as they were
    again, stats = complete_all(b, _requests(b, fmt), store=Store(tmp_path))
    assert stats.from_store == 3 and [r.text for r in again] == [r.text for r in out]
    assert _requests(b, fmt)[0].key() != _requests(b, None)[0].key()


def _is_reading(text: str | None) -> bool:
    try:
        data = json.loads(text or "")
    except ValueError:
        return False
    return isinstance(data, dict) and set(data) == {"label"} and data["label"] in CLASSES


def test_a_response_format_the_schema_reader_does_not_know_is_one_clear_error():
    from halluscope.backends.llm._structured import schema_of
    from halluscope.core.errors import HalluscopeError

    with pytest.raises(HalluscopeError, match="json_schema"):
        schema_of({"type": "text"}, "hf/x")


def test_openai_sends_the_schema_in_the_body(monkeypatch):
    with ChatServer(lambda req, n: Reply(content='{"label": "no"}')) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        b = create_backend("openai/m", config=LLMConfig())
        assert b.structured_output
        fmt = response_format("reading", SCHEMA)
        out, _ = complete_all(b, [b.request([{"role": "user", "content": "q"}], params={"response_format": fmt})])
    assert out[0].text == '{"label": "no"}'
    assert srv.requests[0]["response_format"] == fmt
