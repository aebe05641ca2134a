"""Metrics of the closed-form benchmarks: pure functions over per-item labels, frozen results with counts.

HalluAudio follows seed 002 (``../shared/spec/002_*.txt``): with P_d the prompts of domain d that have a
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

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from halluscope.closedform.extract import ABSTENTIONS

CI = tuple[float, float] | None


def ratio_ci(*, numerator: Sequence[float], denominator: Sequence[float], clusters: Sequence[str] | None = None,
             bootstrap: int = 1000, seed: int = 0) -> CI:
    """Percentile bootstrap 95% interval of sum(numerator) / sum(denominator), resampling items (or clusters)."""
    num, den = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if clusters is not None:
        keys = sorted(set(clusters))
        pos = {k: i for i, k in enumerate(keys)}
        idx = np.array([pos[c] for c in clusters])
        num, den = np.bincount(idx, num, len(keys)), np.bincount(idx, den, len(keys))
    n = len(num)
    if bootstrap <= 0 or n < 2 or den.sum() == 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(bootstrap, n))
    nums, dens = num[draws].sum(axis=1), den[draws].sum(axis=1)
    ok = dens > 0
    if not ok.any():
        return None
    ratios = nums[ok] / dens[ok]
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


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


def halluaudio_scores(*, reference: Sequence[str], hypothesis: Sequence[str], kind: Sequence[str],
                      bootstrap: int = 1000, seed: int = 0) -> HalluAudioScores:
    """``reference``: normalised gold ('yes'/'no', '3', 'first', a label); ``hypothesis``: the extracted class
    (an answer value, or unknown/refusal/ambiguous/unrelated); ``kind`` per item. For 'unanswerable' items an
    abstention or a 'no' (absence stated) is right."""
    if not (len(reference) == len(hypothesis) == len(kind)):
        raise ValueError(f"reference ({len(reference)}), hypothesis ({len(hypothesis)}) and kind ({len(kind)}) differ in length")
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
        n=len(ref), n_answerable=int(answerable.sum()), n_correct=int(correct.sum()),
        accuracy=_rate(int(correct.sum()), int(answerable.sum())),
        n_binary=int(binary.sum()), n_binary_correct=int((correct & binary).sum()), n_yes=int(yes.sum()),
        yes_p_ratio=_rate(int(yes.sum()), int(binary.sum())),
        n_binary_wrong=int(wrong.sum()), n_binary_wrong_yes=int((wrong & yes).sum()),
        unrelated_ratio=_rate(int((wrong & yes).sum()), int(wrong.sum())),
        conditional_accuracy=_rate(int((correct & binary).sum()), int(binary.sum())),
        n_abstain=int((abstain & answerable).sum()),
        false_refusal_rate=_rate(int((abstain & answerable).sum()), int(answerable.sum())),
        n_unanswerable=int(una.sum()), n_unanswerable_abstain_or_absent=int(una_ok.sum()),
        unanswerable_abstain_rate=_rate(int(una_ok.sum()), int(una.sum())),
        classes=dict(sorted(Counter(hypothesis).items())), ci=ci,
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
    return CountProbeScores(n, yes, yes / n, unrelated, unrelated / n, abstain, abstain / n, right, _rate(right, answered))


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
        return {"runs": self.runs, "n_items": self.n_items, "accuracy": self.accuracy, "bias": self.bias,
                "consistency_true": self.consistency_true, "consistency_wrong": self.consistency_wrong,
                "accuracy_ci95": list(self.accuracy_ci) if self.accuracy_ci else None, "classes": self.classes,
                "tasks": {t: s.as_dict() for t, s in self.tasks.items()}}


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def aha_scores(*, reference: Sequence[str], hypothesis: Sequence[str], correct: Sequence[bool], task: Sequence[str],
               audio: Sequence[str], run: Sequence[str], undefined_as_zero: bool = False,
               bootstrap: int = 1000, seed: int = 0) -> AhaScores:
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
            task=t, n_items=len(idx_all), n_audio=len({audio[i] for i in idx_all}), accuracy=_mean(accs),
            fnr=_mean(fnrs), fpr=_mean(fprs), bias=_mean(biases) if biases else None,
            consistency_true=_mean(c_true), consistency_wrong=_mean(c_wrong),
            classes=dict(sorted(Counter(hypothesis[i] for i in idx_all).items())))
    run_acc = [sum(bool(correct[i]) for i in idx) / len(idx) for idx in by_run.values()]
    ci = ratio_ci(numerator=[float(bool(c)) for c in correct], denominator=[1.0] * n, clusters=list(audio),
                  bootstrap=bootstrap, seed=seed)
    return AhaScores(
        runs=len(runs), n_items=n, accuracy=_mean(run_acc),
        bias=_mean([s.bias for s in per_task.values()]),
        consistency_true=_mean([s.consistency_true for s in per_task.values()]),
        consistency_wrong=_mean([s.consistency_wrong for s in per_task.values()]),
        tasks=per_task, classes=dict(sorted(Counter(hypothesis).items())), accuracy_ci=ci)


# ------------------------------------------------------------------------------------------------ yes/no objects
@dataclass(frozen=True)
class YesNoScores:
    """Object-hallucination scores with ``positive`` as the positive class ('yes' by default: the object is
    present). Abstentions and unparsable replies are in n, never a yes or a no: they lower accuracy and recall."""

    n: int
    positive: str
    accuracy: float
    precision: float | None
    recall: float | None
    f1: float | None
    yes_rate: float
    tp: int
    fp: int
    fn: int
    tn: int
    n_answered: int
    accuracy_answered: float | None
    classes: dict[str, int]
    ci: dict[str, CI]

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "ci"}
        d["ci95"] = _ci_dict(self.ci)
        return d


def yesno_scores(*, reference: Sequence[str], hypothesis: Sequence[str], positive: str = "yes",
                 bootstrap: int = 1000, seed: int = 0) -> YesNoScores:
    """Accuracy, precision, recall, F1 (scikit-learn, ``positive`` class), yes-rate, with bootstrap intervals.
    FN counts every positive item not answered ``positive`` (a refusal on a present object is a miss)."""
    if len(reference) != len(hypothesis):
        raise ValueError(f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}")
    if not reference:
        raise ValueError("cannot score an empty set of yes/no items")
    if positive not in ("yes", "no"):
        raise ValueError(f"positive must be 'yes' or 'no', got '{positive}'")
    negative = "no" if positive == "yes" else "yes"
    ref, hyp = np.array(reference, dtype=object), np.array(hypothesis, dtype=object)
    p, r, f, _ = precision_recall_fscore_support(list(ref), list(hyp), labels=[positive], average=None, zero_division=0)
    tp = int(((ref == positive) & (hyp == positive)).sum())
    fp = int(((ref == negative) & (hyp == positive)).sum())
    fn = int(((ref == positive) & (hyp != positive)).sum())
    tn = int(((ref == negative) & (hyp == negative)).sum())
    answered = np.isin(hyp, ["yes", "no"])
    correct = ref == hyp
    seeds = dict(bootstrap=bootstrap, seed=seed)
    tp_i = ((ref == positive) & (hyp == positive)).astype(float)
    fp_i = ((ref == negative) & (hyp == positive)).astype(float)
    fn_i = ((ref == positive) & (hyp != positive)).astype(float)
    ci = {
        "accuracy": ratio_ci(numerator=correct, denominator=np.ones(len(ref)), **seeds),
        "precision": ratio_ci(numerator=tp_i, denominator=(hyp == positive), **seeds),
        "recall": ratio_ci(numerator=tp_i, denominator=(ref == positive), **seeds),
        "f1": ratio_ci(numerator=2 * tp_i, denominator=2 * tp_i + fp_i + fn_i, **seeds),  # F1 = 2TP / (2TP + FP + FN)
        "yes_rate": ratio_ci(numerator=(hyp == "yes"), denominator=np.ones(len(ref)), **seeds),
    }
    return YesNoScores(
        n=len(ref), positive=positive, accuracy=float(accuracy_score(list(ref), list(hyp))),
        precision=float(p[0]) if tp + fp else None, recall=float(r[0]) if tp + fn else None,
        f1=float(f[0]) if tp + fp + fn else None, yes_rate=float((hyp == "yes").mean()),
        tp=tp, fp=fp, fn=fn, tn=tn, n_answered=int(answered.sum()),
        accuracy_answered=float(correct[answered].mean()) if answered.any() else None,
        classes=dict(sorted(Counter(hypothesis).items())), ci=ci)
