"""An LLM reader beside the rules (issue 25): any chat backend classifies each yes/no reply given its question, and
the reader-sensitivity table sets the two readers' figures side by side.

Every call goes through the store-backed caller (``Caller``/``complete_all``): a second run with the same model and
store answers from the store, and the raw LLM output is kept with every reading. The LLM's own output is read by
the rules (an answer word: yes / no; refusal; unknown), so what it writes that the rules cannot read stays a named
non-answer ('unparsable'), never a class. Published comparisons of the same model differ by up to 10 points for the
reader alone; no harness reports it, so every closed-form report scored with both readers shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from halluscope.reply.reading import ABSTENTIONS, Reading
from halluscope.reply.yesno import extract_yesno

PROMPT = (
    "You read a model's reply to a yes/no question about an audio clip and say what the reply answers.\n"
    "Question: {question}\nReply: {reply}\n\n"
    "Answer with one word: yes (the reply says yes), no (the reply says no), refusal (it declines or says it "
    "cannot hear the audio), uncertain (it says it does not know), or other (it answers something else)."
)
LABELS = {"refusal": "refusal", "uncertain": "unknown", "other": "unrelated"}


@dataclass(frozen=True)
class LLMReading:
    """One reply as the LLM read it: the class in the rules' vocabulary, and the LLM's raw output."""

    status: str
    value: str | None
    raw: str | None
    error: str | None = None

    @property
    def label(self) -> str:
        return str(self.value) if self.status == "answer" else self.status


def _parse(raw: str | None) -> LLMReading:
    text = (raw or "").strip()
    word = text.lower().strip(" .!\"'`*").split()[0] if text.strip(" .!\"'`*") else ""
    if word in LABELS:
        return LLMReading(LABELS[word], None, raw)
    r: Reading = extract_yesno(text)
    if r.is_answer:
        return LLMReading("answer", str(r.value), raw)
    if r.status in ABSTENTIONS:
        return LLMReading(r.status, None, raw)
    return LLMReading("unparsable", None, raw, f"the reader LLM's output has no class: {text[:80]!r}")


class LLMReader:
    """``llm:<spec>``: ``read(pairs)`` -> one LLMReading per (question, reply), every call kept in ``store_dir``."""

    def __init__(self, spec: str, store_dir: str | Path) -> None:
        self.spec = spec
        self.store_dir = Path(store_dir)
        self.stats = None

    def read(self, pairs: Sequence[tuple[str, str]]) -> list[LLMReading]:
        from halluscope.backends.llm import complete_all, create_chat_backend
        from halluscope.core.store import Store

        backend = create_chat_backend(self.spec)
        requests = [
            backend.request(
                [{"role": "user", "content": PROMPT.format(question=q or "(not given)", reply=r)}],
                params={"temperature": 0.0, "max_tokens": 8},
                tag=f"reader:{k}",
            )
            for k, (q, r) in enumerate(pairs)
        ]
        with Store(self.store_dir) as store:
            responses, self.stats = complete_all(backend, requests, store=store)
        out = []
        for resp in responses:
            if resp.status != "ok":
                out.append(
                    LLMReading("unparsable", None, resp.text, f"reader call failed: {resp.error or resp.status}")
                )
            else:
                out.append(_parse(resp.text))
        return out


def reader_figures(reference: Sequence[str], labels: Sequence[str]) -> dict:
    """Accuracy, Yes-p ratio, FRR (abstentions) and bias (FNR - FPR, 'yes' positive) of one reader's labels."""
    n = len(reference)
    pos = [k for k, r in enumerate(reference) if r == "yes"]
    neg = [k for k, r in enumerate(reference) if r == "no"]
    fnr = sum(labels[k] == "no" for k in pos) / len(pos) if pos else None
    fpr = sum(labels[k] == "yes" for k in neg) / len(neg) if neg else None
    return {
        "n": n,
        "accuracy": sum(a == b for a, b in zip(reference, labels)) / n if n else None,
        "yes_p_ratio": sum(lab == "yes" for lab in labels) / n if n else None,
        "frr": sum(lab in ABSTENTIONS for lab in labels) / n if n else None,
        "bias": fnr - fpr if fnr is not None and fpr is not None else None,
        "unscored": sum(lab not in ("yes", "no") and lab not in ABSTENTIONS for lab in labels),
    }


def sensitivity(items: Sequence, readings: Sequence[LLMReading], spec: str) -> tuple[list[dict], list[dict], dict]:
    """(figures per reader, disagreeing items, summary) for the binary items of a scored result."""
    ref = [i.reference.strip().lower() for i in items]
    rules = [i.strict for i in items]
    llm = [r.label for r in readings]
    agree = sum(a == b for a, b in zip(rules, llm))
    rows = [
        {"reader": "rules (strict)", **reader_figures(ref, rules)},
        {"reader": f"llm:{spec}", **reader_figures(ref, llm)},
    ]
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
            "rules_reason": i.strict_reason,
        }
        for i, a, b, r in zip(items, rules, llm, readings)
        if a != b
    ]
    summary = {
        "reader": f"llm:{spec}",
        "n": len(items),
        "agree": agree,
        "agreement": agree / len(items) if items else None,
        "n_disagree": len(diff),
    }
    return rows, diff, summary


def apply_reader(result, reader: LLMReader, questions: dict[str, str]) -> None:
    """Read the binary items of ``result`` with ``reader`` and add the reader-sensitivity tables and summary."""
    items = [i for i in result.items if i.kind == "binary"]
    readings = reader.read([(questions.get(i.id, ""), i.reply) for i in items])
    rows, diff, summary = sensitivity(items, readings, reader.spec)
    result.tables["reader_sensitivity"] = rows
    result.tables["reader_disagreements"] = diff
    result.tables["reader_summary"] = [summary]
    result.tables["reader_items"] = [
        {"id": i.id, "rules": i.strict, "llm": r.label, "llm_raw": r.raw, "error": r.error}
        for i, r in zip(items, readings)
    ]
