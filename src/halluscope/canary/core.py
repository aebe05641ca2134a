"""The canary's ablations, its calls (stage 'canary', through the store) and its statistics."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from halluscope.canary.records import SR, CanaryAnswer, CanaryDivergence, Probe
from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import derived_seed
from halluscope.core.records import ModelResponse
from halluscope.core.runs import latest_runs
from halluscope.core.stages import Stage
from halluscope.core.store import Store

VERSION = 1
STAGE = "canary"
LOGITS_STAGE = "canary_logits"
ABLATIONS = ("silence", "noise", "swap")
# H0 of the binomial test: an ablation changes at most this share of answers (the audio barely matters); a model
# whose answers change no more than this under every ablation is flagged
CHANGE_FLOOR = 0.1
ALPHA = 0.05


# (reply) -> (answer compared across ablations, label compared with gold or None)
Reader = Callable[[ModelResponse], "tuple[str | None, str | None]"]


def normalized(text: str | None) -> str | None:
    return None if text is None else " ".join(text.lower().split())


def read_text(response: ModelResponse) -> tuple[str | None, str | None]:
    """The default reader: the reply normalised, no label."""
    return normalized(response.text), None


def _fit(samples: np.ndarray, n: int) -> np.ndarray:
    """``samples`` cut or looped to ``n`` samples."""
    if len(samples) == 0:
        return np.zeros(n, dtype=np.float32)
    return np.tile(samples, n // len(samples) + 1)[:n].astype(np.float32)


def ablate(kind: str, samples: np.ndarray, *, seed: int, donor: np.ndarray | None = None) -> np.ndarray:
    """The clip under an ablation, same length: zeros, Gaussian noise at its RMS, or ``donor`` cut/looped to it."""
    x = np.asarray(samples, dtype=np.float32)
    if kind == "real":
        return x
    if kind == "silence":
        return np.zeros_like(x)
    if kind == "noise":
        rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0
        noise = np.random.default_rng(seed % 2**63).standard_normal(len(x)) * rms
        return np.clip(noise, -1.0, 1.0).astype(np.float32)
    if kind == "swap":
        if donor is None:
            raise HalluscopeError("the swap ablation needs a donor clip")
        return _fit(np.asarray(donor, dtype=np.float32), len(x))
    raise HalluscopeError(f"unknown ablation '{kind}': expected one of real, {', '.join(ABLATIONS)}")


def sample_probes(probes: Sequence[Probe], n: int, seed: int, source: str) -> list[Probe]:
    if n < 1:
        raise HalluscopeError(f"--canary expects a positive number of items, got {n}")
    ordered = sorted(probes, key=lambda p: p.id)
    if len({p.id for p in ordered}) != len(ordered):
        raise HalluscopeError("canary: probe ids must be unique")
    picked = random.Random(derived_seed(seed, STAGE, source)).sample(ordered, min(n, len(ordered)))
    return sorted(picked, key=lambda p: p.id)


@dataclass
class CanaryResult:
    """What a canary run found for one model: one row per ablation, the verdict and the lines to print."""

    model: str
    source: str
    n: int
    rows: list[dict] = field(default_factory=list)
    divergence: dict | None = None
    delivered: tuple[int, int] = (0, 0)  # real calls whose audio reached the model, real calls
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        """Answers barely change: every ablation left at least 1 - CHANGE_FLOOR of them unchanged."""
        measured = [r for r in self.rows if r["n"]]
        return bool(measured) and all(r["unchanged"] >= 1 - CHANGE_FLOOR for r in measured)

    @property
    def verdict(self) -> str:
        if not any(r["n"] for r in self.rows):
            return "no pairs"
        if self.flagged:
            return "FLAGGED: answers barely change without the audio"
        if any(r["p_changed"] is not None and r["p_changed"] < ALPHA for r in self.rows):
            return "depends on the audio"
        return "inconclusive (too few items to tell)"

    def lines(self) -> list[str]:
        out = [f"canary {self.model} ({self.source}, {self.n} items): {self.verdict}"]
        for r in self.rows:
            if not r["n"]:
                out.append(f"  {r['ablation']}: no pairs ({r['note']})")
                continue
            mc = (
                ""
                if r["mcnemar_p"] is None
                else (f"; accuracy {r['acc_real']:.2f} real vs {r['acc_ablated']:.2f}, McNemar p={r['mcnemar_p']:.3g}")
            )
            out.append(
                f"  {r['ablation']}: {r['unchanged']:.0%} of {r['n']} answers unchanged "
                f"(95% CI {r['unchanged_ci'][0]:.0%}-{r['unchanged_ci'][1]:.0%}); binomial p={r['p_changed']:.3g}{mc}"
            )
        if self.divergence:
            d = self.divergence
            out.append(
                f"  logits with vs without audio at the first answer token: mean KL {d['kl_mean']:.4f} nats, "
                f"mean JS {d['js_mean']:.4f}, same top token {d['same_top1']:.0%} ({d['n']} items)"
            )
        if self.delivered[1] and self.delivered[0] < self.delivered[1]:
            out.append(f"  warning: audio reached the model in {self.delivered[0]} of {self.delivered[1]} real calls")
        if self.flagged:
            out.append(
                "  WARNING: the model answers the same with silence, noise or another clip: its audio is "
                "probably not reaching it, or the task is answerable without listening"
            )
        return out


def summarize(
    model: str,
    source: str,
    answers: dict[str, CanaryAnswer],
    divergences: dict[str, CanaryDivergence],
    failed: dict[str, str] | None = None,
) -> CanaryResult:
    """Per ablation: pairs with an answer on both sides, the unchanged share (Wilson 95% CI), a one-sided exact
    binomial test of the changed count against CHANGE_FLOOR, and the exact McNemar test on correctness with gold."""
    from scipy.stats import binomtest

    from halluscope.metrics.paired import mcnemar
    from halluscope.metrics.rates import rate

    real = {a.item_id: a for a in answers.values() if a.ablation == "real"}
    res = CanaryResult(model, source, len(real), failed=dict(failed or {}))
    res.delivered = (sum(bool(a.audio and a.audio.delivered) for a in real.values()), len(real))
    for kind in ABLATIONS:
        pairs = [
            (real[a.item_id], a)
            for a in answers.values()
            if a.ablation == kind and a.item_id in real and a.answer is not None and real[a.item_id].answer is not None
        ]
        row: dict[str, Any] = {
            "model": model,
            "source": source,
            "ablation": kind,
            "n": len(pairs),
            "unchanged": None,
            "unchanged_ci": None,
            "p_changed": None,
            "acc_real": None,
            "acc_ablated": None,
            "mcnemar_p": None,
            "note": "" if pairs else "no item answered on both sides",
        }
        if pairs:
            same = sum(r.answer == a.answer for r, a in pairs)
            ci = rate(k=same, n=len(pairs))
            row.update(
                unchanged=same / len(pairs),
                unchanged_ci=(ci.ci_low, ci.ci_high),
                p_changed=float(binomtest(len(pairs) - same, len(pairs), CHANGE_FLOOR, alternative="greater").pvalue),
            )
            gold = [(r.gold, r.label, a.label) for r, a in pairs if r.gold is not None]
            if gold and len(gold) == len(pairs):
                m = mcnemar(
                    reference=[g for g, _, _ in gold],
                    hypothesis_a=[x for _, x, _ in gold],
                    hypothesis_b=[y for _, _, y in gold],
                )
                row.update(acc_real=m.a_correct / m.n, acc_ablated=m.b_correct / m.n, mcnemar_p=m.p_value)
        res.rows.append(row)
    if divergences:
        d = list(divergences.values())
        res.divergence = {
            "n": len(d),
            "kl_mean": float(np.mean([x.kl for x in d])),
            "js_mean": float(np.mean([x.js for x in d])),
            "same_top1": float(np.mean([x.same_top1 for x in d])),
        }
    return res


def canary_stage(
    backend: Any,
    source: str,
    picked: Sequence[Probe],
    *,
    seed: int,
    audio_policy: str,
    window: float | None,
    upstream: Sequence[str] = (),
) -> Stage:
    identity = backend.identity() if hasattr(backend, "identity") else {"backend": backend.spec}
    # "policy": the stored key of --audio-policy (core.names.STORED_KEYS), so stored fingerprints are unchanged
    return Stage(
        STAGE,
        {
            "version": VERSION,
            "model": identity,
            "source": source,
            "seed": seed,
            "policy": audio_policy,
            "window_s": window,
            "items": [p.id for p in picked],
            "requests": [p.request.key() for p in picked],
        },
        tuple(upstream),
    )


def run_canary(
    store: Store,
    backend: Any,
    probes: Sequence[Probe],
    *,
    source: str,
    n: int,
    seed: int = 0,
    audio_policy: str = "truncate",
    window: float | None = None,
    read: Reader = read_text,
    upstream: Sequence[str] = (),
    quiet: bool = False,
    divergence: bool = True,
    allow_partial: bool | None = None,
    command: str = "canary",
) -> CanaryResult:
    """Ask a seeded sample of ``n`` probes with their real clip and the three ablations (stage 'canary'; the real
    calls are answered from the store when the command already asked them), then summarize; on an hf-audio
    backend also the first-answer-token divergence (stage 'canary_logits'). Records a 'canary' manifest.

    ``allow_partial``: None records whatever was asked; False / True applies the one rule of core/outcome.py to
    the canary's calls before it is recorded (``command``: the command the user ran, named in the error)."""
    from halluscope.backends.audio_lm import ask_audio
    from halluscope.backends.runner import run_calls
    from halluscope.backends.speech.audio import resample
    from halluscope.core.manifest import record_manifest

    picked = sample_probes(probes, n, seed, source)
    if not picked:
        raise HalluscopeError(f"canary ({source}): no items to sample from")
    clips = {p.id: resample(np.asarray(p.clip[0], dtype=np.float32), int(p.clip[1]), SR) for p in picked}
    donors = {p.id: picked[(i + 1) % len(picked)].id for i, p in enumerate(picked)} if len(picked) > 1 else {}
    stage = canary_stage(
        backend, source, picked, seed=seed, audio_policy=audio_policy, window=window, upstream=upstream
    )

    async def ask(caller: Any, item: tuple[Probe, str]) -> CanaryAnswer | str:
        p, kind = item
        donor = donors.get(p.id) if kind == "swap" else None
        samples = ablate(
            kind, clips[p.id], seed=derived_seed(seed, STAGE, p.id, kind), donor=clips[donor] if donor else None
        )
        request = p.request.model_copy(update={"tag": f"{STAGE}:{kind}:{p.id}"})
        got = await ask_audio(caller, request, (samples, SR), audio_policy, window)
        base: dict[str, Any] = {
            "item_id": p.id,
            "ablation": kind,
            "donor": donor,
            "gold": p.gold,
            "audio": got.delivery,
        }
        if got.skipped:
            return CanaryAnswer(**base, status="skipped")
        resp: Any = got.response
        if resp.status == "error":
            return f"{backend.spec}: {resp.error}"
        answer, label = read(resp) if resp.text is not None else (None, None)
        return CanaryAnswer(**base, status=resp.status, answer=answer, label=label, call_key=resp.key)

    items = [
        (f"{p.id}#{kind}", (p, kind))
        for p in picked
        for kind in ("real", *ABLATIONS)
        if kind != "swap" or p.id in donors
    ]
    summary = run_calls(
        store, stage, items, backend, ask, CanaryAnswer, description=f"canary {backend.spec}", quiet=quiet
    )
    if allow_partial is not None:  # before the canary is recorded: a failed one is not reported as a verdict
        from halluscope.core.outcome import StepOutcome, check_outcomes

        fix = f"check the model {backend.spec} (its server or weights; the reasons: 'halluscope view RUN'), then run again"
        outcome = StepOutcome.of(summary, step=f"canary {backend.spec} ({source})", fix=fix)
        kept = "in the run's store (a rerun asks only the failed items)"
        check_outcomes([outcome], command=command, allow_partial=allow_partial, kept=kept)
    stages = {STAGE: stage.fingerprint}
    divs: dict[str, CanaryDivergence] = {}
    if divergence and hasattr(backend, "adapter_class"):  # a local hf-audio model: its logits are ours to read
        from halluscope.canary.logits import divergences

        lstage = Stage(LOGITS_STAGE, {"of": stage.fingerprint}, ())
        divs = divergences(store, lstage, backend, picked, clips, audio_policy=audio_policy, window=window, quiet=quiet)
        stages[LOGITS_STAGE] = lstage.fingerprint
    record_manifest(
        store,
        command="canary",
        config={
            "model": backend.spec,
            "source": source,
            "n": n,
            "seed": seed,
            "audio_policy": audio_policy,
            "window_s": window,
        },
        seeds={"canary": seed},
        stages=stages,
    )
    return summarize(backend.spec, source, summary.results, divs, summary.failed)


def stored_results(store: Store) -> list[CanaryResult]:
    """The latest canary of each (model, source) in a run, summarized from its stored records."""
    latest = {(r.config.model, r.config.source): r.stages for r in latest_runs(store, "canary")}  # CanaryConfig
    out = []
    for (model, source), stages in sorted(latest.items()):
        answers = store.results(STAGE, stages[STAGE], CanaryAnswer)
        divs = store.results(LOGITS_STAGE, stages[LOGITS_STAGE], CanaryDivergence) if LOGITS_STAGE in stages else {}
        out.append(summarize(model, source, answers, divs, store.failures(STAGE, stages[STAGE])))
    return out
