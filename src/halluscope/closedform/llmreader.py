"""An LLM reader beside the rules: any chat backend classifies each yes/no reply given its question, and the
reader-sensitivity table sets the two readers' figures side by side.

The reader asks for structured output: a JSON schema ``{"label": <one of the reader's classes>}`` sent as the
request's OpenAI ``response_format`` to a backend that enforces it (``openai/`` servers; ``hf/`` models, GGUF ones
included, decode under the schema's grammar), so a capable model's answer parses by construction. Whatever comes
back is read in any shape a model writes: JSON with a label, "Label: no", "The reply is a yes.", a class word
anywhere with no competing class word. What none of these reads stays a named non-answer ('unparsable'), never a
class. The classes are the rules' own (the reply module's answer words and non-answers), so both readers count
in one vocabulary.

Every call goes through the store-backed caller (``complete_all``): each is logged raw before it is read, a rerun
with the same model and store is answered from the store, and the raw output is kept with every reading. A server
that refuses the schema (HTTP 400 or 422, or an error naming it) is asked again without it, and the summary says so.
A reader that read none of the replies stops the command with that message: its figures would be empty, not zero.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from halluscope.core.errors import HalluscopeError
from halluscope.reply.jsonfind import objects
from halluscope.reply.reading import ABSTENTIONS, NON_ANSWERS

if TYPE_CHECKING:
    from halluscope.backends.llm import CallStats

ANSWERS = ("yes", "no")  # the answer values the yes/no reader gives
UNREAD = "unparsable"  # the reader's own failure, never a class it offers


def classes() -> tuple[str, ...]:
    """The classes the LLM chooses from: the rules' answers and every non-answer they name (their vocabulary)."""
    return ANSWERS + tuple(s for s in NON_ANSWERS if s != UNREAD)


# what each class means, for the prompt; a class the rules add later is offered by its name alone
MEANING = {
    "yes": "the reply says yes (what was asked about is there, or is true)",
    "no": "the reply says no (what was asked about is absent, or is not true)",
    "unknown": "the reply says it does not know, or cannot tell",
    "refusal": "the reply declines, or says it cannot hear or process the audio",
    "ambiguous": "the reply says both yes and no",
    "unrelated": "the reply answers something else, or does not answer the question",
    "hedge": "the reply leans to yes or no but hedges (maybe, possibly, it might be)",
}
# words models write for a class ("uncertain", "other") -> the class
ALIASES = {"uncertain": "unknown", "other": "unrelated", "refused": "refusal", "refuse": "refusal", "hedged": "hedge"}
PROMPT = (
    "You read a model's reply to a yes/no question about an audio clip and say what the reply answers.\n"
    "Question: {question}\nReply: {reply}\n\n"
    "Classes:\n{classes}\n\n"
    'Answer with JSON only: {{"label": "<class>"}}, the class being one of {names}.'
)
SCHEMA_NAME = "reply_reading"
MAX_TOKENS = 32


def schema() -> dict:
    """The reader's answer: ``{"label": <one of classes()>}``."""
    return {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": list(classes())}},
        "required": ["label"],
        "additionalProperties": False,
    }


def prompt(question: str, reply: str) -> str:
    return PROMPT.format(
        question=question or "(not given)",
        reply=reply,
        classes="\n".join(f"- {c}: {MEANING.get(c, c)}" for c in classes()),
        names=", ".join(classes()),
    )


@dataclass(frozen=True)
class LLMReading:
    """One reply as the LLM read it: the class in the rules' vocabulary, how its output was read (json, keyed,
    word), and the LLM's raw output."""

    status: str
    value: str | None
    raw: str | None
    error: str | None = None
    how: str | None = None

    @property
    def label(self) -> str:
        return str(self.value) if self.status == "answer" else self.status


def _class(word: str) -> str | None:
    w = word.strip().strip(" .!\"'`*_").lower()
    w = ALIASES.get(w, w)
    return w if w in classes() else None


_KEYED = re.compile(r"\b(?:label|class|answer|reading|category)\s*(?:is)?\s*[:=\-]?\s*[\"'*`]*([A-Za-z]+)", re.I)
_WORD = re.compile(r"[A-Za-z]+")


def read_output(raw: str | None) -> tuple[str | None, str]:
    """(class, how) from the reader LLM's output in any shape, or (None, why not)."""
    text = raw or ""
    for obj in reversed(objects(text)):  # JSON: the last object with a label
        for key in ("label", "class", "answer"):
            if isinstance(obj.get(key), str) and (c := _class(obj[key])):
                return c, "json"
    keyed = {c for m in _KEYED.finditer(text) if (c := _class(m.group(1)))}
    if len(keyed) == 1:
        return keyed.pop(), "keyed"
    words = {c for w in _WORD.findall(text) if (c := _class(w))}
    if len(words) == 1:
        return words.pop(), "word"
    if words:
        return None, f"the reader LLM's output names several classes ({', '.join(sorted(words))}): {text[:80]!r}"
    return None, f"the reader LLM's output has no class: {text[:80]!r}"


def parse(raw: str | None) -> LLMReading:
    label, how = read_output(raw)
    if label is None:
        return LLMReading(UNREAD, None, raw, how)
    if label in ANSWERS:
        return LLMReading("answer", label, raw, how=how)
    return LLMReading(label, None, raw, how=how)


class NothingRead(HalluscopeError):
    """The LLM reader read none of the replies: no figure of it means anything."""


class LLMReader:
    """``llm:<spec>``: ``read(pairs)`` -> one LLMReading per (question, reply), every call kept in ``store_dir``."""

    def __init__(self, spec: str, store_dir: str | Path, *, use_schema: bool = True) -> None:
        self.spec = spec
        self.store_dir = Path(store_dir)
        self.use_schema = use_schema  # False: the prompt alone asks for JSON (to measure what the schema adds)
        self.stats: CallStats | None = None
        self.structured = "none"  # how the schema was enforced: see read()
        self.schema_rejected = 0  # requests the server refused with the schema, asked again without it

    def read(self, pairs: Sequence[tuple[str, str]]) -> list[LLMReading]:
        from halluscope.backends.llm import complete_structured, create_chat_backend, response_format
        from halluscope.core.store import Store

        backend = create_chat_backend(self.spec)
        structured = self.use_schema and getattr(backend, "structured_output", False)
        fmt = response_format(SCHEMA_NAME, schema()) if structured else None
        self.structured = (
            "json_schema (server's response_format)"
            if fmt and self.spec.startswith("openai/")
            else "json_schema (constrained decoding)"
            if fmt
            else "none (prompt asks for JSON)"
        )

        params = {"temperature": 0.0, "max_tokens": MAX_TOKENS, **({"response_format": fmt} if fmt else {})}
        requests = [
            backend.request([{"role": "user", "content": prompt(q, r)}], params=params, tag=f"reader:{k}")
            for k, (q, r) in enumerate(pairs)
        ]
        with Store(self.store_dir) as store:
            responses, self.stats, self.schema_rejected = complete_structured(backend, requests, store)
        if self.schema_rejected:
            self.structured += f"; {self.schema_rejected} request(s) refused it, asked again without"
        return [
            parse(r.text)
            if r.status == "ok"
            else LLMReading(UNREAD, None, r.text, f"reader call failed: {r.error or r.status}")
            for r in responses
        ]


@dataclass(frozen=True)
class ReaderItem:
    """A yes/no reply both readers read: its question, the rules' label and, where the file has one, the answer
    the question expects (``reference``)."""

    id: str
    question: str
    reply: str
    rules: str
    reference: str | None = None
    run: str | None = None
    group: str | None = None
    rules_reason: str = ""


def reader_figures(reference: Sequence[str | None], labels: Sequence[str]) -> dict:
    """Accuracy, Yes-p ratio, FRR (abstentions) and bias (FNR - FPR, 'yes' positive) of one reader's labels;
    ``unread``: replies it could not read. Without references (None) only the shares are computed."""
    n = len(labels)
    known = [k for k, r in enumerate(reference) if r is not None]
    pos = [k for k in known if reference[k] == "yes"]
    neg = [k for k in known if reference[k] == "no"]
    fnr = sum(labels[k] == "no" for k in pos) / len(pos) if pos else None
    fpr = sum(labels[k] == "yes" for k in neg) / len(neg) if neg else None
    return {
        "n": n,
        "accuracy": sum(labels[k] == reference[k] for k in known) / len(known) if known else None,
        "yes_p_ratio": sum(lab == "yes" for lab in labels) / n if n else None,
        "frr": sum(lab in ABSTENTIONS for lab in labels) / n if n else None,
        "bias": fnr - fpr if fnr is not None and fpr is not None else None,
        "unscored": sum(lab not in ANSWERS and lab not in ABSTENTIONS for lab in labels),
        "unread": sum(lab == UNREAD for lab in labels),
    }


def compare(items: Sequence[ReaderItem], readings: Sequence[LLMReading], reader: LLMReader) -> dict[str, list[dict]]:
    """The reader tables: figures per reader, the items they read apart, the summary, every item's reading."""
    spec = reader.spec
    ref = [i.reference.strip().lower() if i.reference is not None else None for i in items]
    rules = [i.rules for i in items]
    llm = [r.label for r in readings]
    agree = sum(a == b for a, b in zip(rules, llm))
    read = sum(lab != UNREAD for lab in llm)
    diff = [
        {
            "id": i.id,
            "run": i.run,
            "group": i.group,
            "reference": i.reference,
            "reply": " ".join(i.reply.split())[:200],
            "rules": a,
            "llm": b,
            "llm_raw": (r.raw or "")[:80],
            "rules_reason": i.rules_reason,
        }
        for i, a, b, r in zip(items, rules, llm, readings)
        if a != b
    ]
    summary = {
        "reader": f"llm:{spec}",
        "n": len(items),
        "read": read,
        "unread": len(items) - read,
        "agree": agree,
        "agreement": agree / len(items) if items else None,
        "n_disagree": len(diff),
        "structured": reader.structured,
        "by_shape": {h: sum(r.how == h for r in readings) for h in ("json", "keyed", "word")},
        "store": str(reader.store_dir),
    }
    return {
        "reader_sensitivity": [
            {"reader": "rules (strict)", **reader_figures(ref, rules)},
            {"reader": f"llm:{spec}", **reader_figures(ref, llm)},
        ],
        "reader_disagreements": diff,
        "reader_summary": [summary],
        "reader_items": [
            {
                "id": i.id,
                "run": i.run,
                "rules": i.rules,
                "llm": r.label,
                "how": r.how,
                "llm_raw": r.raw,
                "error": r.error,
            }
            for i, r in zip(items, readings)
        ],
    }


def read_items(reader: LLMReader, items: Sequence[ReaderItem]) -> dict[str, list[dict]]:
    """Read ``items`` with ``reader`` and compare; raises NothingRead when it read none of them."""
    readings = reader.read([(i.question, i.reply) for i in items]) if items else []
    tables = compare(items, readings, reader)
    if items and not tables["reader_summary"][0]["read"]:
        first = next((r.error for r in readings if r.error), "")
        raise NothingRead(
            f"the LLM reader llm:{reader.spec} read none of the {len(items)} yes/no replies (first: {first[:160]}); "
            f"no reader figure is computed. Its calls are kept in {reader.store_dir}. Fix: use a model that follows "
            "the instruction, or check the server"
        )
    return tables


def apply_reader(result, reader: LLMReader, questions: dict[str, str]) -> None:
    """Read the binary items of a scored file (``ScoreResult``) with ``reader`` and add the reader tables."""
    items = [
        ReaderItem(
            id=i.id,
            question=questions.get(i.id, ""),
            reply=i.reply,
            rules=i.strict,
            reference=i.reference,
            run=i.run,
            group=i.group,
            rules_reason=i.strict_reason,
        )
        for i in result.items
        if i.kind == "binary"
    ]
    result.tables.update(read_items(reader, items))


def avhbench_items(result: dict) -> list[ReaderItem]:
    """The yes/no items of a scored AVHBench file (those the rules read: every task but captioning)."""
    return [
        ReaderItem(
            id=str(r["id"]),
            question=str(r.get("text") or ""),
            reply=str(r.get("reply") or ""),
            rules=str(r["read"]),
            reference=str(r["label"]),
            group=r.get("task"),
            rules_reason=str(r.get("reason") or ""),
        )
        for r in result["items"]
        if r.get("read") is not None
    ]


def audiotrust_items(loaded, result: dict) -> list[ReaderItem]:
    """The mismatch subsets' items of a scored AudioTrust file: the match question ("Is the audio jazz music?") and
    the rules' stance; AudioTrust gives no yes/no answer key, so the readers are compared on agreement and shares."""
    rows = {r["id"]: r for r in result["items"]}
    return [
        ReaderItem(
            id=it.id,
            question=it.match_question,
            reply=it.response,
            rules=str(rows[it.id]["stance"]),
            group=it.subset,
            rules_reason=str(rows[it.id].get("stance_reason") or ""),
        )
        for it in loaded.items
        if it.match_question and it.id in rows
    ]
