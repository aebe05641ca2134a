"""WER/CER with the spec's fixed normalisation (seed 000, section 3.3 and App. A.4), jiwer underneath.

The rule-based cleaner applies App. A.4's rules as written, identically for every language: lowercase;
remove punctuation, quotes and brackets *as characters* (the words inside brackets stay: "Astana
(Kazinform)" keeps both words); remove noise tokens, which are a closed list of tags inside [] or <>
(``[music]``, ``<unk>``, Whisper's ``<|...|>`` tokens; see NOISE_TAGS) and timestamps (``00:01:23``);
hyphens to spaces; digits removed (section 3.3); whitespace collapsed. The optional LLM cleaner of
App. A.4 is in halluscope.spoken.asr_clean. ``item_error_rate`` is AHa-Bench's per-item transcription error
(its own, lighter normalisation: NFKC, lowercase, punctuation out; characters for Chinese).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import jiwer
from rapidfuzz.distance import Levenshtein

RULES = "rules"  # the name of the rule-based cleaner in every WER/CER figure's 'cleaner' field

# seed 000, App. A.4: "noise tokens ([music], <unk>)": tags of ASR/caption noise, in [] or <> only
# (any other bracketed word is speech and is kept); matched case-insensitively, spaces read as '_'
NOISE_TAGS = frozenset(
    {
        "music",
        "noise",
        "unk",
        "laughter",
        "laughs",
        "laugh",
        "applause",
        "silence",
        "sil",
        "inaudible",
        "unintelligible",
        "crosstalk",
        "cough",
        "breath",
        "breathing",
        "blank_audio",
        "music_playing",
        "background_noise",
        "s",
        "/s",
        "pad",
        "sos",
        "eos",
        "no_speech",
        "nospeech",
        "музыка",
        "шум",
        "смех",
        "аплодисменты",
        "тишина",
        "неразборчиво",  # the same tags as Russian captions write them
        "күлкі",
        "қол_шапалақтау",
        "у_шу",
    }
)
_TAG = re.compile(r"\[([^\[\]<>]{1,40})\]|<([^\[\]<>]{1,40})>")
_WHISPER_TOKEN = re.compile(r"<\|[^|<>]{0,40}\|>")  # <|endoftext|>, <|0.00|>, <|en|>
_TIMESTAMP = re.compile(r"\d{1,2}(?::\d{2}){1,2}(?:[.,]\d+)?")  # 00:01:23, 1:05, 00:01:23.500
_APOSTROPHE = re.compile(r"(?<=\w)['\u2019\u02bc](?=\w)")  # don't -> dont: one word stays one word
_SPACE = re.compile(r"\s+")


def _drop_noise(m: re.Match) -> str:
    tag = (m.group(1) or m.group(2)).strip().lower()
    return " " if re.sub(r"[\s\-]+", "_", tag) in NOISE_TAGS else m.group(0)


@lru_cache(maxsize=1 << 16)  # a pure function: a report cleans each of its texts once, not once per table
def normalize_for_wer(text: str) -> str:
    """App. A.4's rules (see the module doc); the same function for reference and hypothesis, every language."""
    text = unicodedata.normalize("NFC", text)
    if "<" in text or "[" in text:  # each pattern only where its first character occurs (a report cleans 10^4 texts)
        text = _TAG.sub(_drop_noise, _WHISPER_TOKEN.sub(" ", text))
    if ":" in text:
        text = _TIMESTAMP.sub(" ", text)
    text = text.lower()
    if "'" in text or "\u2019" in text or "\u02bc" in text:
        text = _APOSTROPHE.sub("", text)
    if _ASTRAL.search(text):  # beyond the pattern's plane (emoji, historic scripts): looked up one by one
        text = text.translate(_BLANKED)
    # one C pass (str.translate looks every character up in a dict: 3x slower), whitespace collapsed
    return " ".join(_blank_pattern().sub(" ", text).split())


def _blanked(ch: str) -> bool:
    """Turned into a space: digits; punctuation: quotes, brackets, hyphens and dashes (Pd) alike; symbols (%, $, <,
    >, ₸). Every other character stays."""
    cat = unicodedata.category(ch)
    return cat == "Nd" or cat[0] in "PS"


@lru_cache(maxsize=1)
def _blank_pattern() -> re.Pattern[str]:
    """Runs of the Basic Multilingual Plane's blanked characters, as one character class of code-point ranges."""
    ranges: list[list[int]] = []
    for cp in range(0x10000):
        if not 0xD800 <= cp <= 0xDFFF and _blanked(chr(cp)):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]+")


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class _Blanked(dict):
    """str.translate's table (code point -> " " or the character), grown with the characters met."""

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        out = self[cp] = " " if _blanked(ch) else ch
        return out


_BLANKED = _Blanked()


class Cleaner(Protocol):
    """Turns raw references and hypotheses into the strings WER/CER are computed on (App. A.4). A cleaner that
    can fall back to the rules for some texts (the LLM cleaner) also has ``fell_back(texts) -> int``; every
    figure it cleans then carries that count."""

    name: str

    def clean(self, texts: Sequence[str]) -> list[str]: ...


class RuleCleaner:
    """The default: normalize_for_wer on every string."""

    name = RULES

    def clean(self, texts: Sequence[str]) -> list[str]:
        return [normalize_for_wer(t) for t in texts]


class RawText:
    """No cleaning: the text as written, split on whitespace (the 'before' of the normaliser's effect)."""

    name = "none"

    def clean(self, texts: Sequence[str]) -> list[str]:
        return [_raw(t) for t in texts]


@lru_cache(maxsize=1 << 16)  # each language's texts are cleaned again for 'all'
def _raw(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class AsrScore:
    """Corpus-level error rates: total edits over total reference words/characters, and the cleaner behind them."""

    wer: float | None
    cer: float | None
    n: int
    ref_words: int
    ref_chars: int
    skipped_empty_reference: int
    cleaner: str = RULES
    cleaner_fallbacks: int | None = None  # texts the rules cleaned for a cleaner that can fall back; else None

    def as_dict(self) -> dict:
        out = {
            "wer": self.wer,
            "cer": self.cer,
            "n": self.n,
            "ref_words": self.ref_words,
            "ref_chars": self.ref_chars,
            "skipped_empty_reference": self.skipped_empty_reference,
            "cleaner": self.cleaner,
        }
        if self.cleaner_fallbacks is not None:
            out["cleaner_fallbacks"] = self.cleaner_fallbacks
        return out


_RUNS_OF_SPACE = re.compile(r"\s\s+")


def _words(s: str) -> list[str]:
    """The words jiwer's default WER transform makes of ``s``: whitespace runs to one space, stripped, split on ' '."""
    if s.isprintable():  # its only whitespace is ' ' (any other is a control or separator): str.split's words
        return s.split()
    return [w for w in _RUNS_OF_SPACE.sub(" ", s).strip().split(" ") if w]


@lru_cache(maxsize=1 << 15)  # pure, like normalize_for_wer: each table of a report asks for the same pairs again
def edit_counts(reference: str, hypothesis: str) -> tuple[int, int, int, int]:
    """(word edits, reference words, character edits, reference characters) of one pair: what jiwer's corpus WER
    and CER sum (S + D + I over the reference length, its default transforms), as the Levenshtein distance that
    rapidfuzz (jiwer's own engine) computes directly, without jiwer's per-character Python bookkeeping (a
    12,000-item report spent minutes there)."""
    rc, hc = reference.strip(), hypothesis.strip()
    # score_hint: the band rapidfuzz starts from (widened until the distance fits, so still exact), about an ASR's
    # error rate; without it every pair of 4,000-character articles pays the full matrix
    return (
        *word_edits(reference, hypothesis),
        Levenshtein.distance(rc, hc, score_hint=_hint(len(rc), len(hc))),
        len(rc),
    )


@lru_cache(maxsize=1 << 15)
def word_edits(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word edits, reference words) of one pair: edit_counts' WER half, alone where no CER is wanted."""
    rw, hw = _words(reference), _words(hypothesis)
    return Levenshtein.distance(rw, hw, score_hint=_hint(len(rw), len(hw))), len(rw)


@lru_cache(maxsize=1 << 15)  # each table of a report counts the same references again (a split of 10^4 articles)
def _word_count(text: str) -> int:
    return len(text.split())


def _hint(a: int, b: int) -> int:
    return max(abs(a - b), max(a, b) // 8, 8)


EditCounts = tuple[int, int, int, int]  # (word edits, reference words, character edits, reference characters)


def pair_counts(reference: str, hypothesis: str, cleaner: Cleaner | None = None) -> EditCounts:
    """One pair's edit counts after cleaning (App. A.4's rules unless ``cleaner`` is given): what score_asr sums
    ((0, 0, 0, 0) where the reference cleans to nothing: counted, not scored). A transcript keeps its own
    (Transcript.edits and raw_edits), so a report does not clean and align every text again."""
    ref, hyp = (cleaner or RuleCleaner()).clean([reference, hypothesis])
    return edit_counts(ref, hyp) if ref else (0, 0, 0, 0)


def item_scores(reference: str, hypothesis: str) -> dict:
    """A transcript's own figures against its source text: Transcript's ``wer``, ``cer``, ``edits`` (App. A.4's
    cleaning) and ``raw_edits`` (none)."""
    counts = pair_counts(reference, hypothesis)
    score = score_asr(reference=[reference], hypothesis=[hypothesis], counts=[counts])
    return {
        "wer": score.wer,
        "cer": score.cer,
        "edits": counts,
        "raw_edits": pair_counts(reference, hypothesis, RawText()),
    }


def score_asr(
    *,
    reference: Sequence[str],
    hypothesis: Sequence[str],
    cleaner: Cleaner | None = None,
    cer: bool = True,
    counts: Sequence[EditCounts | None] | None = None,
) -> AsrScore:
    """Corpus-level WER and CER after cleaning (rule-based unless ``cleaner`` is given); pairs whose reference
    cleans to empty are counted, not scored. ``cer=False``: WER alone (CER None), the character pass skipped.
    ``counts``: per pair its pair_counts under the same cleaner as stored (Transcript.edits for the rule-based
    cleaner, raw_edits for RawText) or None: a pair with counts is not cleaned or aligned again, the figures the
    same."""
    if len(reference) != len(hypothesis):
        raise ValueError(
            f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}; pass aligned lists"
        )
    if counts is not None and len(counts) != len(reference):
        raise ValueError(f"{len(reference)} pairs but {len(counts)} stored counts; pass one (or None) per pair")
    cleaner = cleaner if cleaner is not None else RuleCleaner()
    todo = [i for i in range(len(reference)) if counts is None or counts[i] is None]
    texts = [*(reference[i] for i in todo), *(hypothesis[i] for i in todo)]
    cleaned = cleaner.clean(texts)
    fell_back = getattr(cleaner, "fell_back", None)
    fallbacks = fell_back(texts) if fell_back is not None else None
    stored = [c for c in counts or () if c is not None]
    rows: list[tuple[int, ...]] = [c for c in stored if c[1]]  # a reference that cleaned to nothing has no words
    skipped = len(stored) - len(rows)
    ref_words, ref_chars = sum(c[1] for c in rows), sum(c[3] for c in rows)
    for rn, hn in zip(cleaned[: len(todo)], cleaned[len(todo) :]):
        if not rn:
            skipped += 1
            continue
        rows.append(edit_counts(rn, hn) if cer else word_edits(rn, hn))
        ref_words += _word_count(rn)
        ref_chars += len(rn)
    if not rows:
        return AsrScore(None, None, 0, 0, 0, skipped, cleaner.name, fallbacks)
    return AsrScore(
        wer=sum(c[0] for c in rows) / max(1, sum(c[1] for c in rows)),
        cer=sum(c[2] for c in rows) / max(1, sum(c[3] for c in rows)) if cer else None,
        n=len(rows),
        ref_words=ref_words,
        ref_chars=ref_chars,
        skipped_empty_reference=skipped,
        cleaner=cleaner.name,
        cleaner_fallbacks=fallbacks,
    )


def _item_text(s: str) -> str:
    s = unicodedata.normalize("NFKC", s or "").lower()
    s = "".join(" " if unicodedata.category(c).startswith("P") else c for c in s)
    return _SPACE.sub(" ", s).strip()


def item_error_rate(reference: str, hypothesis: str, *, chinese: bool) -> float:
    """One item's error (AHa-Bench transcription items): punctuation-free lower-cased text; CER for Chinese (no
    spaces), WER otherwise; 0 for an empty reference answered empty, else 1."""
    ref, hyp = _item_text(reference), _item_text(hypothesis)
    if chinese:
        ref, hyp = " ".join(ref.replace(" ", "")), " ".join(hyp.replace(" ", ""))
    if not ref:
        return 0.0 if not hyp else 1.0
    return float(jiwer.wer(ref, hyp))
