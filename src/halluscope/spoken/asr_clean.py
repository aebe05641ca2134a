"""The LLM transcript cleaner of seed 000, App. A.4, an option beside the rule-based default (metrics.asr).

Texts go to the model in batches with the batched (JSONL) prompt; a batch whose reply does not read as one
``{"idx": <int>, "cleaned": "<string>"}`` line per item is split in two and each half asked again, down to
single items, which get the canonical single-item prompt (App. A.4: "batches are split recursively on JSON
parse failures"). Both prompts are the appendix's text verbatim (prompts/asr_clean/), sent as the system
turn; the items follow as the user turn. Every call goes through the run store's Caller: logged with its raw
reply before it is read, and answered from the store on a rerun.

A reply is used only if it is a cleaning of the text it was given (``cleaning_problem``: the words the rules
cleaner makes of each must mostly coincide, and their counts be close); any other reply ("ok", another text, half
of this one) is replaced by the rules cleaner's output for that text and counted (``LLMCleaner.fallbacks``), so
no figure rests on a reply that is not a transcript.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from halluscope.backends.llm import Caller, CallStats, ChatBackend
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ChatMessage
from halluscope.core.store import Store
from halluscope.metrics.asr import normalize_for_wer
from halluscope.prompts import template
from halluscope.reply import json_records

# seed 000, section 3.3: digits are removed; App. A.4 leaves the wording of its {DIGITS RULE} slot open
DIGITS_RULE = "Remove all digits."
PARAMS = {"temperature": 0}
TAG = "asr_clean"


def cleaner_prompt(variant: str) -> str:
    """The App. A.4 prompt, 'single' or 'batched', with the digits rule filled in."""
    return template(f"asr_clean/{variant}").render({"DIGITS RULE": DIGITS_RULE})


def read_jsonl(text: str | None, n: int) -> tuple[dict[int, str] | None, str | None]:
    """The cleaned strings of a batched reply by idx (0..n-1), or None and why the reply does not read
    (the shared reply reader finds the objects; every idx must be answered exactly once)."""
    records, why = json_records(text, {"idx": int, "cleaned": str})
    if records is None:
        return None, why
    out = {r["idx"]: r["cleaned"] for r in records}
    if len(out) != len(records):
        return None, "an idx is answered twice"
    if set(out) != set(range(n)):
        return None, f"idx {sorted(out)} given, expected 0..{n - 1}"
    return out, None


# A reply counts as a cleaning of its text when, after the rules cleaner on both, it keeps MIN_KEPT of the text's
# words, MIN_OWN of its own words come from the text, and its length is within LENGTH_RATIO of the text's (docs:
# the thresholds and the replies they were measured on, in docs/tutorials/spoken.md#wercer-and-the-cleaners).
MIN_KEPT = 0.8
MIN_OWN = 0.8
LENGTH_RATIO = (0.8, 1.25)


def cleaning_problem(text: str, reply: str) -> str | None:
    """Why ``reply`` is not a cleaning of ``text``, said of the reply (None when it is one). Both are cleaned by the rules first, so only
    words count: a reply that kept digits or punctuation the rules drop still passes; one that drops, adds or
    replaces words beyond the thresholds does not."""
    want, got = normalize_for_wer(text).split(), normalize_for_wer(reply).split()
    if not want:
        return None if not got else f"has {len(got)} words where the text has none to keep"
    if not got:
        return f"is empty for a text of {len(want)} words"
    common = sum((Counter(want) & Counter(got)).values())
    kept, own, ratio = common / len(want), common / len(got), len(got) / len(want)
    if kept < MIN_KEPT or own < MIN_OWN or not LENGTH_RATIO[0] <= ratio <= LENGTH_RATIO[1]:
        return (
            f"keeps {kept:.0%} of the text's {len(want)} words (at least {MIN_KEPT:.0%} expected), "
            f"{own:.0%} of its {len(got)} words are the text's (at least {MIN_OWN:.0%}), "
            f"length ratio {ratio:.2f} (expected {LENGTH_RATIO[0]}-{LENGTH_RATIO[1]})"
        )
    return None


@dataclass
class CleanerStats:
    batches: int = 0
    splits: int = 0
    singles: int = 0
    fallbacks: int = 0  # distinct texts whose reply was not a cleaning of them: the rules cleaned them


class LLMCleaner:
    """A Cleaner (metrics.asr) that asks ``backend``; calls are kept in ``store``. Each distinct text is
    cleaned once per instance, so per-language and overall figures share the same calls. A reply that is not a
    cleaning of its text (``cleaning_problem``) is replaced by the rules cleaner's output; ``fallbacks`` maps
    each such text to why, and ``fell_back(texts)`` counts them among any texts (what score_asr reports)."""

    def __init__(self, backend: ChatBackend, store: Store, *, batch_size: int = 16) -> None:
        if batch_size < 1:
            raise HalluscopeError(f"the cleaner's batch size must be >= 1, got {batch_size}")
        self.backend, self.store, self.batch_size = backend, store, batch_size
        self.name = f"llm:{backend.spec}"
        self.stats = CleanerStats()
        self.calls = CallStats()
        self._done: dict[str, str] = {"": ""}
        self.fallbacks: dict[str, str] = {}

    def clean(self, texts: Sequence[str]) -> list[str]:
        todo = list(dict.fromkeys(t for t in texts if t not in self._done))
        if todo:
            asyncio.run(self._clean_all(todo))
        return [self._done[t] for t in texts]

    def fell_back(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` (cleaned before) the rules cleaned because the model's reply was no cleaning."""
        return sum(t in self.fallbacks for t in texts)

    def _keep(self, text: str, reply: str) -> None:
        why = cleaning_problem(text, reply)
        if why is None:
            self._done[text] = " ".join(reply.split())
            return
        self.fallbacks[text] = why
        self.stats.fallbacks += 1
        self._done[text] = normalize_for_wer(text)

    async def _clean_all(self, todo: list[str]) -> None:
        async with Caller(self.backend, self.store) as caller:
            chunks = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
            await asyncio.gather(*(self._batch(caller, chunk) for chunk in chunks))
            self.calls.add(caller.stats)

    async def _ask(self, caller: Caller, variant: str, user: str) -> str:
        messages = [ChatMessage(role="system", content=cleaner_prompt(variant)), ChatMessage(role="user", content=user)]
        resp = await caller.complete(self.backend.request(messages, tag=f"{TAG}:{variant}", params=PARAMS))
        if resp.status != "ok":
            raise HalluscopeError(
                f"{self.backend.spec} gave no cleaned text ({resp.status}: {resp.error}) for "
                f"{user[:80]!r}; rerun (answered calls come from the store) or use --cleaner rules"
            )
        return resp.text or ""

    async def _batch(self, caller: Caller, texts: list[str]) -> None:
        if len(texts) == 1:
            self.stats.singles += 1
            self._keep(texts[0], await self._ask(caller, "single", texts[0]))
            return
        self.stats.batches += 1
        user = "\n".join(json.dumps({"idx": i, "text": t}, ensure_ascii=False) for i, t in enumerate(texts))
        cleaned, _why = read_jsonl(await self._ask(caller, "batched", user), len(texts))
        if cleaned is None:  # App. A.4: split recursively on a parse failure
            self.stats.splits += 1
            half = len(texts) // 2
            await asyncio.gather(self._batch(caller, texts[:half]), self._batch(caller, texts[half:]))
            return
        for i, t in enumerate(texts):
            self._keep(t, cleaned[i])
