"""'halluscope mitigation sweep': one decoding-time mitigation at several strengths on the same MISHAP questions
and seeds, beside plain greedy and plain sampled decoding (MISHAP-Bench 001, 3.4 and App. B.3), judged, stored
and resumable (every arm is a 'mishap answer' run; answers and verdicts already stored are not asked again).

Arms, in order: plain greedy (no seed), then plain sampled and each strength (the method's contrast weight
``alpha``; 0 decodes as plain) over every seed. The arms are the sweep's own population (core/provenance.py): their
answers are recorded as 'mitigation sweep answer' runs and judged once, over the arms only, as a 'mitigation sweep
judge' run, so MISHAP's tables, their answers and the report's judge stay as they were. The 'mitigation sweep'
manifest records each arm's answers stage and the judge stage, which the mitigation card (analysis/cards.py) reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import StageName
from halluscope.core.manifest import record_manifest
from halluscope.core.provenance import SWEEP_ANSWERS, SWEEP_JUDGE
from halluscope.core.spec import ModelSpec
from halluscope.core.store import Store

COMMAND = "mitigation sweep"


def arm_models(model: str, method: str, strengths: Sequence[float]) -> list[tuple[str, str, float | None]]:
    """(arm name, model spec, strength) for the mitigated arms: the spec canonical, so answers keep apart."""
    from halluscope.mitigation import METHODS

    if method not in METHODS:
        raise HalluscopeError(f"unknown mitigation '{method}': expected one of {', '.join(METHODS)}")
    base = ModelSpec.parse(model)
    if "mitigation" in base.options:
        raise HalluscopeError(f"--model '{model}' already names a mitigation; give the plain model and --method")
    return [
        (f"{method} alpha={s:g}", str(base.with_options(mitigation=method, alpha=float(s))), float(s))
        for s in strengths
    ]


def run_sweep(
    run_dir: str | Path,
    model: str,
    *,
    method: str,
    strengths: Sequence[float],
    seeds: Sequence[int],
    judge: str | None = None,
    temperature: float = 0.7,
    top_p: float | None = None,
    max_tokens: int = 64,
    audio_policy: str = "truncate",
    config: object = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
) -> dict:
    """Answer (and judge) every arm; returns the manifest config recorded.

    ``allow_partial``: None records whatever was answered; False / True applies the one rule of core/outcome.py to
    every arm's answers and to the judge before the sweep is recorded (an arm or judge failing on more than the
    share fails the command unless True; one that produced nothing always does)."""
    from halluscope.mishap.answers import collect_answers
    from halluscope.mishap.judge import run_judge

    if not strengths or not seeds:
        raise HalluscopeError(
            "a sweep needs at least one --strength and one --seed (e.g. --strength 0,0.5,1 --seeds 0,1,2)"
        )
    if temperature <= 0:
        raise HalluscopeError("the sampled arms need --temperature > 0 (the model card's value)")
    base = str(ModelSpec.parse(model))
    arms = [
        ("plain greedy", base, None, None),
        ("plain sampled", base, None, list(seeds)),
        *[(name, spec, s, list(seeds)) for name, spec, s in arm_models(model, method, strengths)],
    ]
    done, judge_stages = [], []
    for name, spec, strength, arm_seeds in arms:
        collect_answers(
            run_dir,
            spec,
            seeds=arm_seeds,
            temperature=temperature if arm_seeds else 0.0,
            top_p=top_p,
            max_tokens=max_tokens,
            audio_policy=audio_policy,
            config=config,  # type: ignore[arg-type]
            quiet=quiet,
            command=SWEEP_ANSWERS,  # the sweep's own population: never the tables' answers
            allow_partial=allow_partial,
        )
        with Store(run_dir) as store:
            fp = store.latest_manifest(SWEEP_ANSWERS).stages[str(StageName("answers", subject=spec))]  # type: ignore[union-attr]
        done.append({"arm": name, "model": spec, "strength": strength, "seeds": arm_seeds, "answers": fp})
    if judge is not None:  # the sweep's answers only, recorded as the sweep's judge run (not the report's judge)
        run_judge(
            run_dir,
            judge,
            config=config,  # type: ignore[arg-type]
            quiet=quiet,
            answers={str(a["arm"]): str(a["answers"]) for a in done},
            command=SWEEP_JUDGE,
            allow_partial=allow_partial,
        )
        with Store(run_dir) as store:
            judge_stages.append(store.latest_manifest(SWEEP_JUDGE).stages["judge"])  # type: ignore[union-attr]
    cfg = {
        "model": base,
        "method": method,
        "strengths": [float(s) for s in strengths],
        "seeds": list(seeds),
        "temperature": temperature,
        "top_p": top_p,
        "max_tokens": max_tokens,
        "audio_policy": audio_policy,
        "judge": judge,
        "arms": done,
        "judge_stages": judge_stages,
    }
    with Store(run_dir) as store:
        record_manifest(
            store,
            command=COMMAND,
            config=cfg,
            seeds={f"answer:{s}": int(s) for s in seeds},
            stages={
                **{str(StageName("answers", subject=str(a["arm"]))): a["answers"] for a in done},
                **{str(StageName("judge", subject=str(k))): fp for k, fp in enumerate(judge_stages)},
            },
        )
    return cfg
