"""Rates: k of n with Wilson intervals and per-group hallucination and stance rates (MISHAP, seed 001,
section 4), detector flag rates per provenance cell (seed 000, Table 5), and the rates of the closed-form
benchmarks (HalluAudio, AHa-Bench), whose bootstrap intervals come from halluscope.metrics.bootstrap.

Unscored verdicts are counted and left out of every MISHAP rate, never folded into a class.

HalluAudio follows its paper (seed 002, the metrics section): with P_d the prompts of domain d that have a
well-defined ground truth and P_binary its yes/no prompts,

* Accuracy_d = |{p in P_d: y_hat = y}| / |P_d|
* Yes-p ratio = |{p in P_binary: y_hat = Yes}| / |P_binary|
* Unrelated ratio = |{p in P_binary: y_hat != y and y_hat = Yes}| / |{p in P_binary: y_hat != y}|
  (the spec's formula: the share of binary errors that are affirmative)
* Conditional accuracy = |{p in P_binary: y_hat = y}| / |P_binary|
* FRR_d = |{p in P_d: y_hat in R}| / |P_d|, R = {refusal, unknown} (abstentions), over prompts with a valid answer.

Prompts on invalid audio (no speaker, noise) have no well-defined answer: they are outside P_d and reported as
the rate at which the model abstains or states absence there. Non-answers (unknown, refusal, ambiguous, unrelated)
are never a yes or a no: they count in every denominator above and in no numerator but FRR's.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import STANCES
from halluscope.metrics.bootstrap import CI, ratio_ci
from halluscope.reply.reading import ABSTENTIONS

LABELS = ("grounded", "hallucinated")


@dataclass(frozen=True)
class Rate:
    """k of n, the rate and its 95% Wilson score interval (None when n = 0)."""

    n: int
    k: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None


def rate(*, k: int, n: int, confidence: float = 0.95) -> Rate:
    if not 0 <= k <= n:
        raise HalluscopeError(f"a rate needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Rate(0, 0, None, None, None)
    if confidence not in _Z:
        from scipy.stats import binomtest

        ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        return Rate(n, k, k / n, float(ci.low), float(ci.high))
    # scipy.stats.binomtest(k, n).proportion_ci(method="wilson") as SciPy computes it (Newcombe 1998), operation for
    # operation: the same floats, without importing SciPy (a second of a report)
    p, z = k / n, _Z[confidence]
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return Rate(n, k, p, 0.0 if k == 0 else center - delta, 1.0 if k == n else center + delta)


_Z = {0.95: 1.959963984540054}  # scipy.special.ndtri(0.975), the two-sided 95% normal quantile, as SciPy computes it


def _grouped(rows: Iterable[Mapping], by: Sequence[str], key: str) -> dict[tuple, list[str | None]]:
    """The values of ``key`` per group of the ``by`` keys."""
    groups: dict[tuple, list[str | None]] = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in by)].append(r.get(key))
    return groups


def hallucination_rates(rows: Iterable[Mapping], *, by: Sequence[str]) -> list[dict]:
    """One row per group of ``by`` (e.g. model, domain, category): n, hallucinated, rate, CI, unscored.

    Each input row has the ``by`` keys and 'verdict' ('grounded', 'hallucinated' or None for unscored).
    """
    groups = _grouped(rows, by, "verdict")
    bad = {v for verdicts in groups.values() for v in verdicts if v is not None and v not in LABELS}
    if bad:
        raise HalluscopeError(f"verdicts must be one of {LABELS} or None, got {sorted(bad)}")
    out = []
    for key in sorted(groups, key=lambda t: tuple(str(x) for x in t)):
        verdicts = groups[key]
        scored = [v for v in verdicts if v in LABELS]
        r = rate(k=sum(v == "hallucinated" for v in scored), n=len(scored))
        out.append(
            {
                **dict(zip(by, key)),
                "n": r.n,
                "hallucinated": r.k,
                "rate": r.rate,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "unscored": len(verdicts) - len(scored),
            }
        )
    return out


def stance_rates(rows: Iterable[Mapping], *, by: Sequence[str]) -> list[dict]:
    """Share of responses that abstain, assert an answer, or endorse a false premise, per group (with Wilson CIs)."""
    groups = _grouped(rows, by, "stance")
    out = []
    for key in sorted(groups, key=lambda t: tuple(str(x) for x in t)):
        stances = groups[key]
        known = [s for s in stances if s in STANCES]
        row: dict = {**dict(zip(by, key)), "n": len(known), "unscored": len(stances) - len(known)}
        for s in STANCES:
            r = rate(k=sum(x == s for x in known), n=len(known))
            row[s] = r.rate
            row[f"{s}_ci"] = None if r.rate is None else (r.ci_low, r.ci_high)
        out.append(row)
    return out


@dataclass(frozen=True)
class FlagRate:
    """Share of a cell's items predicted hallucinated (None when the cell is empty)."""

    cell: str
    n: int
    flagged: int
    invalid: int
    rate: float | None


def flag_rates(
    *, predictions: Mapping[str, str | None], cells: Mapping[str, Sequence[str]], positive: str = "hallucinated"
) -> dict[str, FlagRate]:
    """Flag rate per cell over the cell's items that have a prediction; n is that coverage."""
    out = {}
    for cell, ids in cells.items():
        got = [predictions[i] for i in ids if i in predictions]
        flagged = sum(p == positive for p in got)
        out[cell] = FlagRate(cell, len(got), flagged, sum(p is None for p in got), flagged / len(got) if got else None)
    return out


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def _ci_dict(ci: dict[str, CI]) -> dict[str, list[float] | None]:
    return {k: (list(v) if v else None) for k, v in ci.items()}


# ------------------------------------------------------------------------------------------------ HalluAudio
@dataclass(frozen=True)
class HalluAudioScores:
    """Seed-002 metrics for one domain (or all), with the counts behind every rate."""

    n: int
    n_answerable: int
    n_correct: int
    accuracy: float | None
    n_binary: int
    n_binary_correct: int
    n_yes: int
    yes_p_ratio: float | None
    n_binary_wrong: int
    n_binary_wrong_yes: int
    unrelated_ratio: float | None
    conditional_accuracy: float | None
    n_abstain: int
    false_refusal_rate: float | None
    n_unanswerable: int
    n_unanswerable_abstain_or_absent: int
    unanswerable_abstain_rate: float | None
    classes: dict[str, int] = field(default_factory=dict)
    ci: dict[str, CI] = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("ci",)}
        d["ci95"] = _ci_dict(self.ci)
        return d


def halluaudio_scores(
    *, reference: Sequence[str], hypothesis: Sequence[str], kind: Sequence[str], bootstrap: int = 1000, seed: int = 0
) -> HalluAudioScores:
    """``reference``: normalised gold ('yes'/'no', '3', 'first', a label); ``hypothesis``: the extracted class
    (an answer value, or unknown/refusal/ambiguous/unrelated); ``kind`` per item. For 'unanswerable' items an
    abstention or a 'no' (absence stated) is right."""
    if not (len(reference) == len(hypothesis) == len(kind)):
        raise ValueError(
            f"reference ({len(reference)}), hypothesis ({len(hypothesis)}) and kind ({len(kind)}) differ in length"
        )
    ref, hyp, knd = np.array(reference, dtype=object), np.array(hypothesis, dtype=object), np.array(kind, dtype=object)
    answerable = knd != "unanswerable"
    binary = knd == "binary"
    correct = (ref == hyp) & answerable
    abstain = np.isin(hyp, list(ABSTENTIONS))
    yes = binary & (hyp == "yes")
    wrong = binary & ~correct
    una = ~answerable
    una_ok = una & (abstain | (hyp == "no"))
    seeds = dict(bootstrap=bootstrap, seed=seed)
    ci = {
        "accuracy": ratio_ci(numerator=correct, denominator=answerable, **seeds),
        "yes_p_ratio": ratio_ci(numerator=yes, denominator=binary, **seeds),
        "conditional_accuracy": ratio_ci(numerator=correct & binary, denominator=binary, **seeds),
        "false_refusal_rate": ratio_ci(numerator=abstain & answerable, denominator=answerable, **seeds),
    }
    return HalluAudioScores(
        n=len(ref),
        n_answerable=int(answerable.sum()),
        n_correct=int(correct.sum()),
        accuracy=_rate(int(correct.sum()), int(answerable.sum())),
        n_binary=int(binary.sum()),
        n_binary_correct=int((correct & binary).sum()),
        n_yes=int(yes.sum()),
        yes_p_ratio=_rate(int(yes.sum()), int(binary.sum())),
        n_binary_wrong=int(wrong.sum()),
        n_binary_wrong_yes=int((wrong & yes).sum()),
        unrelated_ratio=_rate(int((wrong & yes).sum()), int(wrong.sum())),
        conditional_accuracy=_rate(int((correct & binary).sum()), int(binary.sum())),
        n_abstain=int((abstain & answerable).sum()),
        false_refusal_rate=_rate(int((abstain & answerable).sum()), int(answerable.sum())),
        n_unanswerable=int(una.sum()),
        n_unanswerable_abstain_or_absent=int(una_ok.sum()),
        unanswerable_abstain_rate=_rate(int(una_ok.sum()), int(una.sum())),
        classes=dict(sorted(Counter(hypothesis).items())),
        ci=ci,
    )


@dataclass(frozen=True)
class CountProbeScores:
    """HalluAudio's yes-bias reading of count prompts ('is there more than one?'), with strict extraction:
    Yes = a count above one, unrelated = no number (ambiguous or off-topic), abstentions counted apart."""

    n: int
    n_yes: int
    yes_pred_ratio: float
    n_unrelated: int
    unrelated_ratio: float
    n_abstain: int
    abstain_ratio: float
    n_correct: int
    conditional_accuracy: float | None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def count_probe_scores(*, reference: Sequence[str], hypothesis: Sequence[str]) -> CountProbeScores:
    """``reference``: the true count as text; ``hypothesis``: the extracted count or a non-answer class."""
    if len(reference) != len(hypothesis):
        raise ValueError(f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}")
    if not reference:
        raise ValueError("cannot score an empty set of count prompts")
    nums = [int(h) if h.lstrip("-").isdigit() else None for h in hypothesis]
    n = len(reference)
    yes = sum(v is not None and v > 1 for v in nums)
    abstain = sum(h in ABSTENTIONS for h in hypothesis)
    unrelated = sum(v is None for v in nums) - abstain
    answered = n - unrelated - abstain
    right = sum(v is not None and str(v) == r.strip() for v, r in zip(nums, reference))
    return CountProbeScores(
        n, yes, yes / n, unrelated, unrelated / n, abstain, abstain / n, right, _rate(right, answered)
    )


# ------------------------------------------------------------------------------------------------ AHa-Bench
@dataclass(frozen=True)
class AhaTaskScores:
    """One task group, averaged over runs: accuracy, bias = FNR - FPR (yes positive), consistency per audio."""

    task: str
    n_items: int
    n_audio: int
    accuracy: float | None
    fnr: float | None
    fpr: float | None
    bias: float | None
    consistency_true: float | None
    consistency_wrong: float | None
    classes: dict[str, int]

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AhaScores:
    """Per-task scores and the overall figures (accuracy pooled per run; bias and consistency macro over tasks)."""

    runs: int
    n_items: int
    accuracy: float | None
    bias: float | None
    consistency_true: float | None
    consistency_wrong: float | None
    tasks: dict[str, AhaTaskScores]
    classes: dict[str, int]
    accuracy_ci: CI = None

    def as_dict(self) -> dict:
        return {
            "runs": self.runs,
            "n_items": self.n_items,
            "accuracy": self.accuracy,
            "bias": self.bias,
            "consistency_true": self.consistency_true,
            "consistency_wrong": self.consistency_wrong,
            "accuracy_ci95": list(self.accuracy_ci) if self.accuracy_ci else None,
            "classes": self.classes,
            "tasks": {t: s.as_dict() for t, s in self.tasks.items()},
        }


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def aha_scores(
    *,
    reference: Sequence[str],
    hypothesis: Sequence[str],
    correct: Sequence[bool],
    task: Sequence[str],
    audio: Sequence[str],
    run: Sequence[str],
    undefined_as_zero: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AhaScores:
    """``reference`` 'yes'/'no' (or 'asr' for transcription items, whose ``correct`` comes from WER);
    ``hypothesis`` the extracted class. FNR = FN / gold-yes, FPR = FP / gold-no, where only an explicit 'no' is a
    false negative and only an explicit 'yes' a false positive (abstentions are neither).
    ``undefined_as_zero`` reproduces the official 0 for a rate with an empty denominator."""
    n = len(reference)
    if not (n == len(hypothesis) == len(correct) == len(task) == len(audio) == len(run)):
        raise ValueError("reference, hypothesis, correct, task, audio and run must have the same length")
    if n == 0:
        raise ValueError("cannot score an empty set of AHa-Bench items")
    undefined = 0.0 if undefined_as_zero else None

    def rate(k: int, d: int) -> float | None:
        return k / d if d else undefined

    by_run_task: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_run: dict[str, list[int]] = defaultdict(list)
    for i, (r, t) in enumerate(zip(run, task)):
        by_run_task[(r, t)].append(i)
        by_run[r].append(i)
    runs = sorted(by_run)
    tasks = sorted(set(task))
    per_task: dict[str, AhaTaskScores] = {}
    for t in tasks:
        accs, fnrs, fprs, biases, c_true, c_wrong = [], [], [], [], [], []
        for r in runs:
            idx = by_run_task.get((r, t), [])
            if not idx:
                continue
            accs.append(sum(bool(correct[i]) for i in idx) / len(idx))
            yes_ref = [i for i in idx if reference[i] == "yes"]
            no_ref = [i for i in idx if reference[i] == "no"]
            if yes_ref or no_ref:
                fnr = rate(sum(hypothesis[i] == "no" for i in yes_ref), len(yes_ref))
                fpr = rate(sum(hypothesis[i] == "yes" for i in no_ref), len(no_ref))
                fnrs.append(fnr)
                fprs.append(fpr)
                biases.append(None if fnr is None or fpr is None else fnr - fpr)
            groups: dict[str, list[bool]] = defaultdict(list)
            for i in idx:
                groups[audio[i]].append(bool(correct[i]))
            c_true.append(sum(all(g) for g in groups.values()) / len(groups))
            c_wrong.append(sum(not any(g) for g in groups.values()) / len(groups))
        idx_all = [i for i in range(n) if task[i] == t]
        per_task[t] = AhaTaskScores(
            task=t,
            n_items=len(idx_all),
            n_audio=len({audio[i] for i in idx_all}),
            accuracy=_mean(accs),
            fnr=_mean(fnrs),
            fpr=_mean(fprs),
            bias=_mean(biases) if biases else None,
            consistency_true=_mean(c_true),
            consistency_wrong=_mean(c_wrong),
            classes=dict(sorted(Counter(hypothesis[i] for i in idx_all).items())),
        )
    run_acc = [sum(bool(correct[i]) for i in idx) / len(idx) for idx in by_run.values()]
    ci = ratio_ci(
        numerator=[float(bool(c)) for c in correct],
        denominator=[1.0] * n,
        clusters=list(audio),
        bootstrap=bootstrap,
        seed=seed,
    )
    return AhaScores(
        runs=len(runs),
        n_items=n,
        accuracy=_mean(run_acc),
        bias=_mean([s.bias for s in per_task.values()]),
        consistency_true=_mean([s.consistency_true for s in per_task.values()]),
        consistency_wrong=_mean([s.consistency_wrong for s in per_task.values()]),
        tasks=per_task,
        classes=dict(sorted(Counter(hypothesis).items())),
        accuracy_ci=ci,
    )
