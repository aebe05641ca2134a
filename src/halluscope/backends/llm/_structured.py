"""Structured output: a request's OpenAI ``response_format`` (a JSON schema) honoured by every text backend.

``openai/`` sends it as it is (the server's own constrained decoding: OpenAI, vLLM, llama.cpp's server, Ollama).
``hf/`` (transformers checkpoints and the GGUF files de-quantized for them, e.g. ``hf/smollm2-135m-instruct``)
compiles the schema with xgrammar (the grammar engine vLLM and SGLang use; CPU and GPU) into a logits processor
that masks every token the schema does not allow, so the reply is JSON of that schema by construction. The
compiled grammar is kept per schema for the life of the loaded model.
"""

from __future__ import annotations

import importlib.util
import json
import re
from typing import Any

from halluscope.core.errors import HalluscopeError, MissingExtraError

# how a caller asks: {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}, "strict": true}}
JSON_SCHEMA = "json_schema"


def response_format(name: str, schema: dict) -> dict:
    """The OpenAI chat-completions ``response_format`` that asks for JSON of ``schema``."""
    return {"type": JSON_SCHEMA, "json_schema": {"name": name, "schema": schema, "strict": True}}


def schema_of(fmt: Any, spec: str) -> dict:
    """The JSON schema a ``response_format`` asks for; a clear error for any other shape."""
    if isinstance(fmt, dict) and fmt.get("type") == JSON_SCHEMA:
        inner = fmt.get(JSON_SCHEMA)
        if isinstance(inner, dict) and isinstance(inner.get("schema"), dict):
            return inner["schema"]
    raise HalluscopeError(
        f"{spec}: response_format {json.dumps(fmt)[:200]} is not understood; expected "
        '{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}'
    )


def refused_schema(error: str | None) -> bool:
    """Whether a failed call's error is a server refusing the request's response_format: HTTP 400 or 422 (a
    request it cannot validate), or any error naming response_format / json_schema (older llama.cpp servers)."""
    return bool(re.search(r"HTTP 4(00|22)\b|response_format|json_schema", error or ""))


def complete_structured(backend: Any, requests: list, store: Any = None) -> tuple[list, Any, int]:
    """``complete_all``, then the requests a server refused for their response_format (it knows no schemas) sent
    again without it: (responses, stats, how many were sent again)."""
    from halluscope.backends.llm._base import complete_all

    responses, stats = complete_all(backend, requests, store=store)
    rejected = [
        k
        for k, (q, r) in enumerate(zip(requests, responses))
        if q.params.get("response_format") and r.status == "error" and refused_schema(r.error)
    ]
    if rejected:
        plain = [
            backend.request(
                requests[k].messages,
                params={p: v for p, v in requests[k].params.items() if p != "response_format"},
                tag=requests[k].tag,
            )
            for k in rejected
        ]
        again, more = complete_all(backend, plain, store=store)
        stats.add(more)
        for k, r in zip(rejected, again):
            responses[k] = r
    return responses, stats, len(rejected)


def available() -> bool:
    """Whether local constrained decoding can run here (xgrammar is installed)."""
    return importlib.util.find_spec("xgrammar") is not None


class Grammars:
    """Compiled grammars of one tokenizer, one per schema; ``processor(fmt)`` is a fresh logits processor (each
    generate() call needs its own: it tracks the tokens accepted so far)."""

    def __init__(self, tokenizer: Any, vocab_size: int, spec: str) -> None:
        try:
            import xgrammar as xgr
        except ImportError as exc:
            raise MissingExtraError("xgrammar", "structured") from exc
        self.spec = spec
        self._xgr = xgr
        self._compiler = xgr.GrammarCompiler(
            xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size), max_threads=1
        )
        self._compiled: dict[str, Any] = {}

    def processor(self, fmt: Any) -> Any:
        schema = json.dumps(schema_of(fmt, self.spec), sort_keys=True)
        if schema not in self._compiled:
            # compact separators, no free whitespace: the model cannot pad the reply until the token limit
            self._compiled[schema] = self._compiler.compile_json_schema(schema, any_whitespace=False)
        return self._xgr.contrib.hf.LogitsProcessor(self._compiled[schema])
