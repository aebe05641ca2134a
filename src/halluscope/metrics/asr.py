"""WER/CER with the spec's fixed normalisation (seed 000, section 3.3 and App. A.4), jiwer underneath."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import jiwer

_TIMESTAMP = re.compile(r"\b\d{1,2}(?::\d{2}){1,2}(?:[.,]\d+)?\b")
# noise tokens such as [music], <unk>, (inaudible): removed with their content
_NOISE = re.compile(r"\[[^\]]*\]|<[^>]*>|\([^)]*\)|\{[^}]*\}")
_HYPHENS = re.compile(r"[\-\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACE = re.compile(r"\s+")


def normalize_for_wer(text: str) -> str:
    """Identical across languages: lowercase; drop timestamps, noise tokens, punctuation, symbols and digits;
    hyphens to spaces; collapse whitespace (App. A.4 rules, digit rule of section 3.3)."""
    text = unicodedata.normalize("NFC", text)
    text = _TIMESTAMP.sub(" ", text)
    text = _NOISE.sub(" ", text)
    text = text.lower()
    text = _HYPHENS.sub(" ", text)
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat == "Nd" or cat[0] in "PS":  # digits, punctuation (quotes, brackets) and symbols (%, $, ₸)
            out.append(" ")
        else:
            out.append(ch)
    return _SPACE.sub(" ", "".join(out)).strip()


@dataclass(frozen=True)
class AsrScore:
    """Corpus-level error rates: total edits over total reference words/characters."""

    wer: float | None
    cer: float | None
    n: int
    ref_words: int
    ref_chars: int
    skipped_empty_reference: int

    def as_dict(self) -> dict:
        return {
            "wer": self.wer, "cer": self.cer, "n": self.n, "ref_words": self.ref_words,
            "ref_chars": self.ref_chars, "skipped_empty_reference": self.skipped_empty_reference,
        }


def score_asr(*, reference: Sequence[str], hypothesis: Sequence[str]) -> AsrScore:
    """Corpus-level WER and CER after normalisation; pairs whose reference normalises to empty are counted, not scored."""
    if len(reference) != len(hypothesis):
        raise ValueError(f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}; pass aligned lists")
    refs, hyps, skipped = [], [], 0
    for r, h in zip(reference, hypothesis):
        rn, hn = normalize_for_wer(r), normalize_for_wer(h)
        if not rn:
            skipped += 1
            continue
        refs.append(rn)
        hyps.append(hn)
    if not refs:
        return AsrScore(None, None, 0, 0, 0, skipped)
    wer = jiwer.wer(reference=refs, hypothesis=hyps)
    cer = jiwer.cer(reference=refs, hypothesis=hyps)
    return AsrScore(
        wer=float(wer), cer=float(cer), n=len(refs),
        ref_words=sum(len(r.split()) for r in refs), ref_chars=sum(len(r) for r in refs),
        skipped_empty_reference=skipped,
    )
