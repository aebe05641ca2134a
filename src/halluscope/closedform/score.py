"""Score loaded predictions in both modes at once: strict (our extraction, spec metrics) and compat (the
official scorers' rules), keep every per-item decision, and explain each item the two modes score differently."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from halluscope.closedform import compat as cp
from halluscope.closedform.extract import (
    ABSTENTIONS,
    Extraction,
    Fallback,
    extract_choice,
    extract_label,
    extract_number,
    extract_yesno,
    normalize_label,
)
from halluscope.closedform.records import DOMAINS, SAMPLINGS, AhaItem, HalluAudioItem, Loaded, YesNoItem
from halluscope.closedform.scored import (  # re-exported: callers read them from score
    MODES as MODES,
    Mode as Mode,
    ScoredItem as ScoredItem,
    ScoreResult as ScoreResult,
    _require_items,
)
from halluscope.core.errors import InputError
from halluscope.metrics.asr import item_error_rate
from halluscope.metrics.classification import yesno_scores
from halluscope.metrics.rates import aha_scores, count_probe_scores, halluaudio_scores
from halluscope.reply.subject import asked_subject  # noqa: F401 - re-exported (tests, callers)


# ------------------------------------------------------------------------------------------------ HalluAudio
def _halluaudio_strict(
    item: HalluAudioItem, labels: Sequence[str], fallback: Fallback | None
) -> tuple[Extraction, str, str]:
    """(extraction, normalised reference, normalised hypothesis)."""
    ref = item.reference.strip()
    if item.kind == "binary":
        ex = extract_yesno(item.pred, question=item.prompt, fallback=fallback)
        return ex, ref.lower(), ex.label
    if item.kind == "count":
        ex = extract_number(item.pred)
        return ex, str(int(ref)), ex.label
    if item.kind == "choice":
        ex = extract_choice(item.pred)
        return ex, "first" if "first" in ref.lower() else "second", ex.label
    if item.kind == "label":
        ex = extract_label(item.pred, labels=labels)
        return ex, normalize_label(ref), normalize_label(str(ex.value)) if ex.is_answer else ex.label
    ex = extract_yesno(item.pred, question=item.prompt, fallback=fallback)
    return ex, "none", ex.label


def _halluaudio_compat(item: HalluAudioItem) -> cp.CompatDecision:
    if item.kind == "binary":
        return cp.halluaudio_binary(item.pred, item.reference)
    if item.kind == "count":
        return cp.halluaudio_count(item.pred, item.reference, subset=item.subset)
    if item.kind == "choice":
        return cp.halluaudio_choice(item.pred, item.reference)
    if item.kind == "label":
        return cp.halluaudio_label(item.pred, item.reference)
    return cp.halluaudio_unanswerable(item.pred)


def score_halluaudio(
    loaded: Loaded[HalluAudioItem],
    *,
    mode: Mode = "strict",
    bootstrap: int = 1000,
    seed: int = 0,
    fallback: Fallback | None = None,
    reader=None,
) -> ScoreResult:
    """Seed-002 metrics per domain and overall in strict mode, the official scripts' numbers in compat mode."""
    _require_items(loaded, "HalluAudio")
    labels: dict[str, set[str]] = defaultdict(set)
    for it in loaded.items:
        if it.kind == "label":
            labels[it.subset].add(it.reference.strip())
    label_sets = {subset: tuple(sorted(names)) for subset, names in labels.items()}  # once, not per item
    scored: list[ScoredItem] = []
    refs, hyps, refusal, probe = [], [], [], []
    for it in loaded.items:
        ex, ref, hyp = _halluaudio_strict(it, label_sets.get(it.subset, ()), fallback)
        ok = (hyp in ABSTENTIONS or hyp == "no") if it.kind == "unanswerable" else hyp == ref
        cd = _halluaudio_compat(it)
        side = cp.probe_side(it.subset) if it.kind == "count" else None
        refs.append(ref)
        hyps.append(hyp)
        refusal.append(cp.halluaudio_is_refusal(it.pred))
        probe.append(cp.probe_label(cp.halluaudio_probe_number(it.pred), side) if side else None)
        scored.append(
            ScoredItem(
                id=it.id,
                group=it.domain,
                subset=it.subset,
                kind=it.kind,
                reference=it.reference,
                reply=it.pred,
                strict=hyp,
                strict_correct=ok,
                strict_reason=ex.reason,
                hedged=ex.hedged,
                via=ex.via,
                compat=cd.label,
                compat_correct=cd.correct,
                compat_rule=cd.rule,
                misfire=cd.misfire,
            )
        )
    strict: dict[str, dict] = {}
    compat: dict[str, dict] = {}
    groups = [d for d in DOMAINS if any(i.group == d for i in scored)] + ["all"]
    for g in groups:
        idx = [k for k, i in enumerate(scored) if g == "all" or i.group == g]
        s = halluaudio_scores(
            reference=[refs[k] for k in idx],
            hypothesis=[hyps[k] for k in idx],
            kind=[scored[k].kind for k in idx],
            bootstrap=bootstrap,
            seed=seed,
        ).as_dict()
        probes: dict[str, dict] = {}
        for subset in sorted({scored[k].subset for k in idx if probe[k] is not None}):
            pk = [k for k in idx if scored[k].subset == subset]
            probes[subset] = count_probe_scores(
                reference=[refs[k] for k in pk], hypothesis=[hyps[k] for k in pk]
            ).as_dict()
        s["count_probes"] = probes
        strict[g] = s
        compat[g] = cp.halluaudio_official_scores(
            correct=[scored[k].compat_correct for k in idx],
            refusal=[refusal[k] for k in idx],
            subset=[scored[k].subset for k in idx],
            probe=[probe[k] for k in idx],
        ).as_dict()
        compat[g]["recipe"] = halluaudio_recipe([scored[k] for k in idx])
    subsets = []
    for (dom, subset, kind), members in sorted(_group(scored, lambda i: (i.group, i.subset, i.kind)).items()):
        binary = [i for i in members if kind == "binary"]
        subsets.append(
            {
                "domain": dom,
                "subset": subset,
                "kind": kind,
                "n": len(members),
                "accuracy_strict": sum(i.strict_correct for i in members) / len(members),
                "accuracy_compat": sum(i.compat_correct for i in members) / len(members),
                "yes_ratio_strict": sum(i.strict == "yes" for i in binary) / len(binary) if binary else None,
                "abstain_strict": sum(i.strict in ABSTENTIONS for i in members) / len(members),
            }
        )
    notes = (
        "unanswerable (invalid-audio) prompts are outside P_d in strict mode and reported as "
        "unanswerable_abstain_rate; the official scripts count them in accuracy",
        "strict Unrelated ratio follows the spec formula (affirmative share of binary errors) and is null when "
        "there is no binary error; HalluAudio's recipe (compat 'recipe') gives 0 there; the official script's "
        "'unrelated' is the share of count answers without a number, shown under count_probes",
        "strict FRR counts every abstention the reader finds (refusal or explicit uncertainty); the recipe's FRR "
        "counts only replies that are exactly 'refuse', 'cannot answer' or 'i dont know' (compat 'recipe')",
        "Accuracy is printed in percent in the tables, as the recipe gives its range; the JSON keeps fractions",
    )
    result = ScoreResult(
        "halluaudio", mode, "domain", strict, compat, tuple(scored), loaded, notes, {"subsets": subsets}
    )
    return _read_again(result, reader, {it.id: it.prompt for it in loaded.items})


def _read_again(result: ScoreResult, reader, questions: dict[str, str]) -> ScoreResult:
    """With an LLM reader (``--reader llm:<spec>``), the reader-sensitivity tables of the binary items."""
    if reader is not None:
        from halluscope.closedform.llmreader import apply_reader

        apply_reader(result, reader, questions)
    return result


RECIPE_REFUSALS = frozenset({"refuse", "cannot answer", "i dont know"})  # seed 002, scoring recipe: refusal_set


def halluaudio_recipe(items: Sequence[ScoredItem]) -> dict:
    """Seed 002's compute_metrics() exactly, on the official scripts' readings (compat): accuracy over all prompts of
    the domain (in percent, as the recipe's range says), Yes-p ratio and conditional accuracy over binary prompts,
    Unrelated ratio = affirmative share of binary errors and 0 when there is no error, FRR = replies whose
    ``p.lower()`` is exactly one of the recipe's refusal set, over all prompts. None where the recipe divides by zero."""
    binary = [i for i in items if i.kind == "binary"]
    wrong = [i for i in binary if not i.compat_correct]
    n, nb = len(items), len(binary)
    return {
        "n": n,
        "n_binary": nb,
        "accuracy_percent": 100 * sum(i.compat_correct for i in items) / n if n else None,
        "yes_ratio": sum(i.compat == "yes" for i in binary) / nb if nb else None,
        "unrelated_ratio": sum(i.compat == "yes" for i in wrong) / len(wrong) if wrong else 0.0,
        "conditional_accuracy": sum(i.compat_correct for i in binary) / nb if nb else None,
        "frr": sum((i.reply or "").lower() in RECIPE_REFUSALS for i in items) / n if n else None,
    }


def _group(items: Sequence[ScoredItem], key) -> dict:
    out: dict = defaultdict(list)
    for i in items:
        out[key(i)].append(i)
    return out


# ------------------------------------------------------------------------------------------------ AHa-Bench
def score_aha(
    loaded: Loaded[AhaItem],
    *,
    mode: Mode = "strict",
    bootstrap: int = 1000,
    seed: int = 0,
    judge_fallback: bool = True,
    reader=None,
) -> ScoreResult:
    """Accuracy, bias (FNR - FPR, yes positive) and consistency per task and overall, averaged over runs.
    With ``judge_fallback`` a reply our rules cannot classify is decided by the file's ``prediction_match``."""
    _require_items(loaded, "AHa-Bench")
    scored: list[ScoredItem] = []
    strict_ref: list[str] = []
    compat_ref: list[str] = []
    for it in loaded.items:
        asr = "asr" in it.type.lower()
        if asr:
            err = item_error_rate(it.answer, it.prediction, chinese=it.type.lower().endswith("zh"))
            ex = Extraction("answer", "asr", f"{'CER' if it.type.lower().endswith('zh') else 'WER'} {err:.3f}")
            ref, ok, hyp = "asr", err < 0.1, "asr"
        else:
            fb = (lambda _t, m=it.prediction_match: m) if judge_fallback and it.prediction_match is not None else None
            ex = extract_yesno(it.prediction, question=it.question, fallback=fb)
            ref = extract_yesno(it.answer).label
            hyp, ok = ex.label, ex.label == ref
        cd = cp.aha_item(it.answer, it.prediction, it.prediction_match, asr=asr)
        strict_ref.append(ref)
        compat_ref.append("asr" if asr else cp.aha_normalize(it.answer))
        scored.append(
            ScoredItem(
                id=f"{it.run}:{it.index}",
                group=it.task,
                subset=it.type,
                kind="asr" if asr else "binary",
                reference=it.answer,
                reply=it.prediction,
                strict=hyp,
                strict_correct=ok,
                strict_reason=ex.reason,
                hedged=ex.hedged,
                via=ex.via,
                compat=cd.label,
                compat_correct=cd.correct,
                compat_rule=cd.rule,
                misfire=cd.misfire,
                run=it.run,
                compat_scored=it.index not in cp.AHA_SKIPPED,
            )
        )
    audio = [it.audio_key for it in loaded.items]
    s = aha_scores(
        reference=strict_ref,
        hypothesis=[i.strict for i in scored],
        correct=[i.strict_correct for i in scored],
        task=[i.group for i in scored],
        audio=audio,
        run=[i.run for i in scored],
        bootstrap=bootstrap,
        seed=seed,
    )
    keep = [k for k, i in enumerate(scored) if i.compat_scored]
    if not keep:
        raise InputError("every row is one the official scorer skips; nothing to score in compatibility mode")
    c = aha_scores(
        reference=[compat_ref[k] for k in keep],
        hypothesis=[scored[k].compat for k in keep],
        correct=[scored[k].compat_correct for k in keep],
        task=[scored[k].group for k in keep],
        audio=[audio[k] for k in keep],
        run=[scored[k].run for k in keep],
        undefined_as_zero=True,
        bootstrap=0,
    )
    strict = {t: v.as_dict() for t, v in s.tasks.items()}
    strict["all"] = {k: v for k, v in s.as_dict().items() if k != "tasks"}
    compat = {t: v.as_dict() for t, v in c.tasks.items()}
    compat["all"] = {k: v for k, v in c.as_dict().items() if k != "tasks"}
    notes = [
        "bias = FNR - FPR with 'yes' positive; strict mode counts only an explicit 'no' as a false negative and "
        "only an explicit 'yes' as a false positive; a rate with an empty denominator is null (official: 0)"
    ]
    if judge_fallback and any(i.prediction_match is not None for i in loaded.items):
        notes.append("strict mode asks the judge's prediction_match only for replies its rules find no answer in")
    return _read_again(
        ScoreResult("aha", mode, "task", strict, compat, tuple(scored), loaded, tuple(notes)),
        reader,
        {f"{it.run}:{it.index}": it.question for it in loaded.items},
    )


# ------------------------------------------------------------------------------------------------ yes/no objects
def _answer_class(label: str) -> str:
    """'yes', 'no', 'unparsed' (the authors' rules found nothing: a 'no' answer in their precision denominator, never
    right) or 'none' (strict: unknown, refusal, ambiguous, unrelated: in no denominator but accuracy's)."""
    return label if label in ("yes", "no") else "unparsed" if label in ("", "none") else "none"


def yesno_rules(positive: str) -> tuple[str, ...]:
    """How strict and the authors' figures are defined differently, beyond how each reply is read."""
    return (
        f"precision, recall, F1: strict positive class '{positive}' (--positive); the authors' evaluation.py uses 'no'",
        "precision denominator: the authors count every reply not read as 'yes' (unparsed ones included) as a 'no' "
        "answer; strict counts only replies read as the positive class",
        "replies without an answer: the authors count them as wrong and as not-yes; strict keeps unknown, refusal, "
        "ambiguous and unrelated apart (wrong in accuracy, outside n_answered)",
        "F1 as published (as_published_percent): from precision and recall already rounded to 2 decimals in percent; "
        "strict and the fractions use unrounded counts",
        "reply reading: the authors' case-sensitive substring rules ('Yes'/'yes', then 'No', then phrases of absence); "
        "strict reads answer words with their negation and the object asked about; items read differently are listed",
        "groups: both modes per sampling strategy over (sampling, entry_id) pairs; 'all' pools the strategies "
        "(the authors score one strategy's file at a time)",
    )


def score_yesno(
    loaded: Loaded[YesNoItem],
    *,
    mode: Mode = "strict",
    positive: str = "yes",
    bootstrap: int = 1000,
    seed: int = 0,
    fallback: Fallback | None = None,
    reader=None,
) -> ScoreResult:
    """Accuracy, precision, recall, F1 (``positive`` class, default 'yes') and yes-rate per sampling strategy."""
    _require_items(loaded, "yes/no")
    scored: list[ScoredItem] = []
    for it in loaded.items:
        ex = extract_yesno(it.response, subject=it.object, question=it.prompt_text, fallback=fallback)
        cd = cp.kuan_item(it.response, it.label)
        scored.append(
            ScoredItem(
                id=it.key,
                group=it.sampling,
                subset=it.object,
                kind="binary",
                reference=it.label,
                reply=it.response,
                strict=ex.label,
                strict_correct=ex.label == it.label,
                strict_reason=ex.reason,
                hedged=ex.hedged,
                via=ex.via,
                compat=cd.label,
                compat_correct=cd.correct,
                compat_rule=cd.rule,
                misfire=cd.misfire,
                read_differently=_answer_class(ex.label) != _answer_class(cd.label),
            )
        )
    strict: dict[str, dict] = {}
    compat: dict[str, dict] = {}
    for g in [s for s in SAMPLINGS if any(i.group == s for i in scored)] + ["all"]:
        members = [i for i in scored if g == "all" or i.group == g]
        strict[g] = yesno_scores(
            reference=[i.reference for i in members],
            hypothesis=[i.strict for i in members],
            positive=positive,
            bootstrap=bootstrap,
            seed=seed,
        ).as_dict()
        compat[g] = cp.kuan_official_scores(
            reference=[i.reference for i in members], parsed=["" if i.compat == "none" else i.compat for i in members]
        ).as_dict()
    return _read_again(
        ScoreResult("yesno", mode, "sampling", strict, compat, tuple(scored), loaded, rules=yesno_rules(positive)),
        reader,
        {it.key: it.prompt_text for it in loaded.items},
    )
