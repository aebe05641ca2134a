"""Objects of a generated caption as an LLM extracts them (Kuan et al., Interspeech 2024, section 3: the generative
task's objects are extracted from each caption by an LLM, then compared with the clip's labels).

``--extractor llm:<spec>``: any chat backend lists the sound sources a caption says are heard, as a JSON array of
short noun phrases (``{"objects": [...]}``; a backend that enforces a JSON schema is asked with one as the request's
``response_format``, see backends/llm/_structured.py; a bare array is read too). Every call goes through the store-backed caller (``complete_all``): a rerun with the same model
and store is answered from the store, and the raw output is kept with every caption. An output with no JSON array
of strings is 'unparsable' with its reason: that caption is left out of the figures and counted, never read as
naming nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from halluscope.reply.jsonfind import string_list

if TYPE_CHECKING:
    from halluscope.backends.llm import CallStats

PROMPT = (
    "Here is a description of an audio clip. List every sound source or sound event that it says can be heard, "
    "leaving out anything it says is absent or not heard. Answer with JSON only: a list of short English noun "
    'phrases, for example {{"objects": ["dog barking", "car engine"]}}, or {{"objects": []}} if it names none.'
    "\n\nDescription: {caption}"
)
SCHEMA = {
    "type": "object",
    "properties": {"objects": {"type": "array", "items": {"type": "string"}}},
    "required": ["objects"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Extraction:
    """One caption's objects as the LLM listed them (None: not read, see ``error``), with its raw output."""

    objects: tuple[str, ...] | None
    raw: str | None
    error: str | None = None


def parse(raw: str | None) -> Extraction:
    found = string_list(raw)
    if found is None:
        return Extraction(None, raw, f"the extractor's output holds no JSON array of strings: {(raw or '')[:80]!r}")
    return Extraction(tuple(dict.fromkeys(" ".join(o.split()) for o in found if o.strip())), raw)


class LLMExtractor:
    """``llm:<spec>``: ``extract(captions)`` -> one Extraction per caption, every call kept in ``store_dir``."""

    def __init__(self, spec: str, store_dir: str | Path) -> None:
        self.spec = spec
        self.store_dir = Path(store_dir)
        self.stats: CallStats | None = None

    @property
    def name(self) -> str:
        return f"llm:{self.spec}"

    def extract(self, captions: Sequence[str]) -> list[Extraction]:
        from halluscope.backends.llm import complete_structured, create_chat_backend, response_format
        from halluscope.core.store import Store

        backend = create_chat_backend(self.spec)
        params: dict = {"temperature": 0.0, "max_tokens": 128}
        if getattr(backend, "structured_output", False):
            params["response_format"] = response_format("caption_objects", SCHEMA)
        requests = [
            backend.request([{"role": "user", "content": PROMPT.format(caption=c)}], params=params, tag=f"extract:{k}")
            for k, c in enumerate(captions)
        ]
        with Store(self.store_dir) as store:
            responses, self.stats, _ = complete_structured(backend, requests, store)
        return [
            parse(r.text)
            if r.status == "ok"
            else Extraction(None, r.text, f"extractor call failed: {r.error or r.status}")
            for r in responses
        ]
