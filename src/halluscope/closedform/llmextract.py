"""Objects of a generated caption as an LLM extracts them (Kuan et al., Interspeech 2024, section 3: the generative
task's objects are extracted from each caption by an LLM, then compared with the clip's labels).

``--extractor llm:<spec>``: any chat backend lists the sound sources a caption says are heard, as a JSON array of
short noun phrases. Every call goes through the store-backed caller (``complete_all``): a rerun with the same model
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
    "leaving out anything it says is absent or not heard. Answer with a JSON array of short English noun phrases "
    'only, for example ["dog barking", "car engine"], or [] if it names none.\n\nDescription: {caption}'
)


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
        from halluscope.backends.llm import complete_all, create_chat_backend
        from halluscope.core.store import Store

        backend = create_chat_backend(self.spec)
        requests = [
            backend.request(
                [{"role": "user", "content": PROMPT.format(caption=c)}],
                params={"temperature": 0.0, "max_tokens": 128},
                tag=f"extract:{k}",
            )
            for k, c in enumerate(captions)
        ]
        with Store(self.store_dir) as store:
            responses, self.stats = complete_all(backend, requests, store=store)
        return [
            parse(r.text)
            if r.status == "ok"
            else Extraction(None, r.text, f"extractor call failed: {r.error or r.status}")
            for r in responses
        ]
