"""Compatibility mode: the official scorers' extraction rules, re-implemented so published numbers can be reproduced.

Verified against the public scorer code (read, not copied):

* HalluAudio (github.com/Feiyuzhao25/halluaudio): ``accuracy_classify.py`` (yes/no: substring "yes"/"no" in the
  lower-cased reply, so "eyes" is yes, "I don't know" / "not" / "unknown" are no, a reply with both words is credited
  whichever the reference is); ``accuracy_else.py`` (word count: first ``\\b\\d+\\b`` else first number word;
  first/second comparisons: substring, both -> wrong; invalid-audio subsets: correct when any "cannot hear" keyword,
  including "sorry", is in the reply); ``accuracy_label.py`` (reference label as a substring); ``yesno_bias_test.py``
  (count probes: first digit run anywhere else number-word *substrings* in dictionary order, so "none" is 1 and
  "listen" is 10; Yes-pred ratio = Yes / all, Unrelated ratio = no number / all, conditional accuracy =
  correct / (all - unrelated)); ``refuse_to_answer.py`` (refusal regexes, an empty reply is a refusal, rate over all
  rows). Denominators are all rows of a file.
* AHa-Bench (github.com/AHa-Bench/AHa-Bench ``eval_metric.py``): answers and the GPT judge's ``prediction_match``
  are mapped with ``'yes' in s or '是' in s`` then ``'no' in s or '否' in s`` (so the judge's "Unknown" becomes "no");
  ASR items are correct when jiwer WER < 0.1; items 40_10_3 and 40_10_4 are skipped; task = ``type.split('_')[0]``;
  per-run accuracy, bias FNR - FPR and consistency, averaged over runs, overall bias and consistency macro-averaged.
* Kuan et al. 2024 (github.com/kuan2jiu99/audio-hallucination ``evaluation.py``): case-sensitive substring rules
  ("Yes"/"yes" first, then "No", "there is no", "does not contain", "contain", "not"/"unable"/"can't"); anything else
  is an empty answer counted as negative; the *positive class is "no"* (precision = correct "no" / all non-yes
  answers); F1 is computed from the rounded percentages.

Not verifiable from public code and therefore our choice, stated in the output notes: HalluAudio's binary subset
names and their domains (the scripts work per results folder), which subsets are count probes beyond
single_*/multiple_*/tonic_count (the published ``yesno_bias_test.py`` names ``stroke_count`` but has no branch for it;
we use the multiple-count rule), and AHa-Bench scoring without a judge field (we apply its normaliser to the raw
prediction; the official pipeline always runs the GPT judge first).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import jiwer


@dataclass(frozen=True)
class CompatDecision:
    """How the official rules read one reply: ``label`` as they would count it, ``correct`` against the reference,
    ``rule`` the rule that fired, ``misfire`` a known failure of the rule when it is detectable (else None)."""

    label: str
    correct: bool
    rule: str
    misfire: str | None = None


def _inside_word(text: str, needle: str) -> str | None:
    """The first word containing ``needle`` that is not ``needle`` itself ('eyes' for 'yes'), else None."""
    for m in re.finditer(re.escape(needle), text):
        a, b = m.start(), m.end()
        while a > 0 and (text[a - 1].isalnum() or text[a - 1] == "'"):
            a -= 1
        while b < len(text) and (text[b].isalnum() or text[b] == "'"):
            b += 1
        if text[a:b] != needle:
            return text[a:b]
    return None


def _whole_word(text: str, needle: str) -> bool:
    return re.search(rf"(?<![\w']){re.escape(needle)}(?![\w'])", text) is not None


# ------------------------------------------------------------------------------------------------ HalluAudio
HALLUAUDIO_CANNOT_HEAR = (
    "sorry",
    "don't have access",
    "do not have access",
    "no recording",
    "didn't provide",
    "did not provide",
    "cannot access",
    "i'm not capable",
    "i am not capable",
    "cannot listen",
    "cannot hear",
    "no audio",
    "no recording provided",
)
HALLUAUDIO_REFUSAL = re.compile(
    "|".join(
        [
            r"i (can|cannot|can't) (not )?(access|listen|hear|process).*audio",
            r"unable to (access|listen|hear|process).*audio",
            r"as a .*?(language model|text-based).*cannot.*audio",
            r"i (can|cannot|can't).*determine.*audio",
            r"audio.*not.*available",
            r"no audio.*provided",
            r"i'm not able to",
            r"i am not able to",
            r"unable to answer",
            r"cannot answer",
            r"can't answer",
            r"i do not have access",
            r"i don't have access",
            r"i (can|cannot|can't).*analyze audio",
        ]
    ),
    re.IGNORECASE,
)
_HA_WORDS = {
    "zero": 0,
    "one": 1,
    "once": 1,
    "single": 1,
    "two": 2,
    "twice": 2,
    "three": 3,
    "thrice": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
}
_HA_WORD_RE = re.compile(r"\b(" + "|".join(sorted(_HA_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


def halluaudio_binary(pred: str, reference: str) -> CompatDecision:
    """accuracy_classify.py: credited when the reference word is a substring of the lower-cased reply."""
    p, ref = (pred or "").lower(), (reference or "").strip().lower()
    has_yes, has_no = "yes" in p, "no" in p
    label = "yes+no" if has_yes and has_no else "yes" if has_yes else "no" if has_no else "none"
    correct = (has_yes and ref == "yes") or (has_no and ref == "no")
    misfire = None
    if has_yes and has_no:
        misfire = "reply contains both 'yes' and 'no' substrings: credited whichever the reference is"
    elif has_yes and not _whole_word(p, "yes"):
        misfire = f"'yes' matched inside '{_inside_word(p, 'yes')}'"
    elif has_no and not _whole_word(p, "no"):
        misfire = f"'no' matched inside '{_inside_word(p, 'no')}'"
    return CompatDecision(label, correct, f"substring test -> {label}", misfire)


def halluaudio_word_count_number(pred: str) -> int | None:
    """accuracy_else.py: the first whole digit run, else the first whole number word."""
    m = re.search(r"\b(\d+)\b", pred)
    if m:
        return int(m.group(1))
    m = _HA_WORD_RE.search(pred)
    return _HA_WORDS[m.group(1).lower()] if m else None


def halluaudio_probe_number(text: object) -> int | None:
    """yesno_bias_test.py: the first digit run anywhere, else the first number word found as a substring, in
    dictionary order ('none' -> 1, 'listen' -> 10, 'eighteen' -> 8)."""
    if not isinstance(text, str):
        return None
    m = re.search(r"\d+", text)
    if m:
        return int(m.group())
    low = text.lower()
    for word, n in _HA_WORDS.items():
        if word in low:
            return n
    return None


def halluaudio_count(pred: str, reference: str, *, subset: str) -> CompatDecision:
    """Count subsets: word_count via accuracy_else.py, count probes via yesno_bias_test.py."""
    p = (pred or "").strip().lower()
    if subset == "commonvoice_word_count":
        try:
            ref = int(str(reference).strip())
        except ValueError:
            ref = None
        n = halluaudio_word_count_number(p)
        return CompatDecision("none" if n is None else str(n), n is not None and n == ref, f"first number -> {n}")
    n, ref_n = halluaudio_probe_number(pred or ""), halluaudio_probe_number(str(reference))
    misfire = None
    if n is not None and not re.search(r"\d", p):
        word = next(w for w in _HA_WORDS if w in p)
        if not _whole_word(p, word):
            misfire = f"number word '{word}' matched inside '{_inside_word(p, word)}'"
    if probe_side(subset) == "single":
        correct = n == 1
    else:
        correct = n is not None and ref_n is not None and n == ref_n and ref_n > 1
    return CompatDecision("none" if n is None else str(n), correct, f"first number (substring rule) -> {n}", misfire)


def probe_side(subset: str) -> str | None:
    """Which yes-bias probe a count subset is: 'single' (reference No), 'multiple' (reference Yes), or None."""
    if subset.startswith("single_") or subset == "tonic_count":
        return "single"
    if subset.startswith("multiple_") or subset == "stroke_count":
        return "multiple"
    return None


def probe_label(n: int | None, side: str) -> str:
    """The Yes / No / Unrelated reading of a count answer in the yes-bias probes."""
    if n is None:
        return "Unrelated"
    if side == "single":
        return "No" if n == 1 else "Yes"
    return "Yes" if n > 1 else "No"


def halluaudio_choice(pred: str, reference: str) -> CompatDecision:
    """accuracy_else.py comparisons: 'first'/'second' substrings; a reply with both is never correct."""
    p, ref = (pred or "").strip().lower(), str(reference).strip().lower()
    f, s = "first" in p, "second" in p
    label = "both" if f and s else "first" if f else "second" if s else "none"
    correct = not (f and s) and ((f and "first" in ref) or (s and "second" in ref))
    misfire = "both 'first' and 'second' present: never credited" if f and s else None
    return CompatDecision(label, correct, f"substring test -> {label}", misfire)


def halluaudio_label(pred: str, reference: str) -> CompatDecision:
    """accuracy_label.py: the lower-cased reference label is a substring of the reply."""
    p, ref = (pred or "").lower(), str(reference).strip().lower()
    hit = bool(ref) and ref in p
    misfire = f"label '{ref}' matched inside '{_inside_word(p, ref)}'" if hit and not _whole_word(p, ref) else None
    return CompatDecision(ref if hit else "none", hit, f"reference substring -> {hit}", misfire)


def halluaudio_unanswerable(pred: str) -> CompatDecision:
    """accuracy_else.py invalid-audio subsets: correct when any 'cannot hear' keyword (incl. 'sorry') appears."""
    p = (pred or "").strip().lower()
    hit = next((k for k in HALLUAUDIO_CANNOT_HEAR if k in p), None)
    return CompatDecision("refusal" if hit else "answer", hit is not None, f"keyword -> {hit!r}")


def halluaudio_is_refusal(pred: str | None) -> bool:
    """refuse_to_answer.py: a missing or empty reply, or any refusal regex."""
    if pred is None or not pred.strip():
        return True
    return HALLUAUDIO_REFUSAL.search(pred.strip()) is not None


@dataclass(frozen=True)
class HalluAudioOfficialScores:
    """One domain as the official scripts report it; count-probe figures per subset."""

    n: int
    n_correct: int
    accuracy: float | None
    n_refusal: int
    refusal_rate: float | None
    probes: dict[str, dict[str, float | int]]

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "n_correct": self.n_correct,
            "accuracy": self.accuracy,
            "n_refusal": self.n_refusal,
            "false_refusal_rate": self.refusal_rate,
            "count_probes": self.probes,
        }


def halluaudio_official_scores(
    *, correct: Sequence[bool], refusal: Sequence[bool], subset: Sequence[str], probe: Sequence[str | None]
) -> HalluAudioOfficialScores:
    """All denominators are all rows. ``probe`` is the Yes/No/Unrelated reading for count-probe rows, else None."""
    n = len(correct)
    probes: dict[str, dict[str, float | int]] = {}
    by_subset: dict[str, list[int]] = defaultdict(list)
    for i, (s, p) in enumerate(zip(subset, probe)):
        if p is not None:
            by_subset[s].append(i)
    for s, idx in sorted(by_subset.items()):
        total = len(idx)
        yes = sum(probe[i] == "Yes" for i in idx)
        unrelated = sum(probe[i] == "Unrelated" for i in idx)
        right = sum(bool(correct[i]) for i in idx)
        probes[s] = {
            "n": total,
            "yes_pred_ratio": yes / total,
            "unrelated_ratio": unrelated / total,
            "conditional_accuracy": right / (total - unrelated) if total > unrelated else 0.0,
        }
    k, r = sum(map(bool, correct)), sum(map(bool, refusal))
    return HalluAudioOfficialScores(n, k, k / n if n else None, r, r / n if n else None, probes)


# ------------------------------------------------------------------------------------------------ AHa-Bench
AHA_SKIPPED = frozenset({"40_10_3", "40_10_4"})


def aha_normalize(s: str) -> str:
    """eval_metric.py normalize(): 'yes'/'是' substring -> yes, then 'no'/'否' -> no, else the stripped text."""
    s = (s or "").strip().lower()
    if "yes" in s or "是" in s:
        return "yes"
    if "no" in s or "否" in s:
        return "no"
    return s


def aha_asr_correct(answer: str, prediction: str) -> bool:
    """eval_metric.py: an ASR item is correct when jiwer WER(answer, prediction) < 0.1 after strip+lower."""
    ref, hyp = (answer or "").strip().lower(), (prediction or "").strip().lower()
    if not ref:  # jiwer refuses an empty reference; the official script would stop here
        return not hyp
    return jiwer.wer(ref, hyp) < 0.1


def aha_item(answer: str, prediction: str, prediction_match: str | None, *, asr: bool) -> CompatDecision:
    """One AHa-Bench item under the official rules (the judge's field if present, else the raw prediction)."""
    if asr:
        ok = aha_asr_correct(answer, prediction)
        return CompatDecision("asr", ok, "WER < 0.1" if ok else "WER >= 0.1")
    source = prediction_match if prediction_match is not None else prediction
    got, want = aha_normalize(source), aha_normalize(answer)
    misfire = None
    low = (source or "").strip().lower()
    if got == "no" and "yes" not in low and not _whole_word(low, "no") and "否" not in low:
        misfire = f"'no' matched inside '{_inside_word(low, 'no')}'"
    elif got == "yes" and "是" not in low and not _whole_word(low, "yes"):
        misfire = f"'yes' matched inside '{_inside_word(low, 'yes')}'"
    where = "judge" if prediction_match is not None else "prediction"
    return CompatDecision(got, got == want, f"normalize({where}) -> {got}", misfire)


# ------------------------------------------------------------------------------------------------ Kuan et al.
def kuan_parse(response: str) -> tuple[str, str]:
    """evaluation.py parse_response(): returns (answer, rule) with answer 'yes', 'no' or '' (unparsed)."""
    r = response or ""
    if "Yes" in r or "yes" in r:
        return "yes", "'Yes'/'yes' substring"
    if "No" in r:
        return "no", "'No' substring"
    for phrase in ("there is no sound", "there is no sound of", "there is no", "does not contain", "doesn't contain"):
        if phrase in r:
            return "no", f"'{phrase}'"
    if "contain" in r:
        return "yes", "'contain'"
    for word in ("not", "unable", "can't"):
        if word in r:
            return "no", f"'{word}' substring"
    return "", "no rule fired (counted as a negative answer)"


def kuan_item(response: str, label: str) -> CompatDecision:
    parsed, rule = kuan_parse(response)
    misfire = None
    if parsed == "yes" and not re.search(r"(?<![\w'])[Yy]es(?![\w'])", response or ""):
        misfire = f"'yes' matched inside '{_inside_word(response.lower(), 'yes')}'"
    elif parsed == "no" and rule == "'No' substring" and not re.search(r"(?<![\w'])No(?![\w'])", response):
        misfire = f"'No' matched inside '{_inside_word(response, 'No')}'"
    elif parsed == "":
        misfire = "unparsed reply counted as a negative answer"
    return CompatDecision(parsed or "none", parsed == label, rule, misfire)


@dataclass(frozen=True)
class KuanOfficialScores:
    """evaluation.py's five numbers (positive class 'no'), as fractions and as published (percent, 2 decimals)."""

    n: int
    accuracy: float
    precision: float | None
    recall: float | None
    f1: float | None
    yes_rate: float
    published: dict[str, float | None]

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "positive_class": "no",
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "yes_rate": self.yes_rate,
            "as_published_percent": self.published,
        }


def kuan_official_scores(*, reference: Sequence[str], parsed: Sequence[str]) -> KuanOfficialScores:
    """``reference`` 'yes'/'no'; ``parsed`` as from kuan_parse ('yes', 'no' or '' / 'none')."""
    n = len(reference)
    right = sum(r == p for r, p in zip(reference, parsed))
    said_yes = sum(p == "yes" for p in parsed)
    said_other = n - said_yes
    right_no = sum(r == "no" and p == "no" for r, p in zip(reference, parsed))
    total_no = sum(r == "no" for r in reference)
    precision = right_no / said_other if said_other else None
    recall = right_no / total_no if total_no else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision and recall
        else (0.0 if precision == 0 or recall == 0 else None)
    )
    pub_p = round(precision * 100, 2) if precision is not None else None
    pub_r = round(recall * 100, 2) if recall is not None else None
    # evaluation.py: F1 from the rounded percentages (it divides by zero when both are 0; we give None)
    pub_f1 = (
        round(2 * pub_p * pub_r / (pub_p + pub_r), 2)
        if pub_p is not None and pub_r is not None and pub_p + pub_r
        else None
    )
    published = {
        "accuracy": round(right / n * 100, 2),
        "precision": pub_p,
        "recall": pub_r,
        "f1": pub_f1,
        "yes_rate": round(said_yes / n * 100, 2),
    }
    return KuanOfficialScores(n, right / n, precision, recall, f1, said_yes / n, published)
