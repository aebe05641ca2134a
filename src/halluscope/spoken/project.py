"""'halluscope project RUN': per-item cost of each stage, measured on a run, projected to a paper-sized corpus.

Measures come from the store only: ASR from each Transcript's ``processing_s`` over its audio seconds
(real-time factor); TTS from the gaps between consecutive TTS results (``results.updated``) over the
clips' audio seconds, so it includes the driver's writes; model calls from the ``calls`` table (latency,
calls per item, tokens when the reply reports them). Speech stages scale linearly with audio length and
divide over N workers (they are embarrassingly parallel); API stages are bounded by the concurrency
(calls in flight) and by the rate limit, whichever is slower. Defaults: the paper's 12,013 samples with
a median of 96 s of audio.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioRef, Transcript
from halluscope.core.store import STORE_NAME, Store
from halluscope.spoken import language_stages

PAPER_SAMPLES = 12_013
PAPER_MEDIAN_AUDIO_S = 96.0


@dataclass(frozen=True)
class StageCost:
    """One stage's measured cost and its projection."""

    stage: str
    measured_items: int
    basis: str  # what the per-unit figure is per
    per_unit_s: float  # seconds of work per unit (audio second, or call)
    per_item_s: float  # at the projected audio length
    total_hours: float  # single-worker (or single-stream) work for the whole corpus
    wall_hours: dict[str, float] = field(default_factory=dict)  # 'N workers' or 'rate limit' -> hours
    calls_per_item: float | None = None
    tokens_per_call: float | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class Projection:
    run_dir: str
    samples: int
    audio_s: float
    workers: tuple[int, ...]
    stages: list[StageCost]

    def to_json(self) -> dict:
        return {
            "run_dir": self.run_dir,
            "samples": self.samples,
            "audio_s": self.audio_s,
            "workers": list(self.workers),
            "stages": [asdict(s) for s in self.stages],
        }


def _latest_stages(store: Store) -> dict[str, str]:
    stages: dict[str, str] = {}
    for m in store.manifests():
        stages.update(m.stages)
    return stages


def _speech(
    name: str, basis: str, per_audio_s: float, n: int, samples: int, audio_s: float, workers: tuple[int, ...]
) -> StageCost:
    per_item = per_audio_s * audio_s
    total_h = per_item * samples / 3600
    return StageCost(
        stage=name,
        measured_items=n,
        basis=basis,
        per_unit_s=round(per_audio_s, 4),
        per_item_s=round(per_item, 2),
        total_hours=round(total_h, 2),
        wall_hours={f"{w} workers": round(total_h / w, 2) for w in workers},
    )


def _tokens(response: str | None) -> int | None:
    try:
        data = json.loads(response or "null")
        body = json.loads(data["body"]) if isinstance(data, dict) and isinstance(data.get("body"), str) else data
        if isinstance(body, dict) and isinstance(body.get("usage"), dict):
            u = body["usage"]
            return int(u.get("prompt_tokens") or 0) + int(u.get("completion_tokens") or 0)
        if isinstance(body, dict) and "prompt_tokens" in body:
            return int(body["prompt_tokens"]) + int(body.get("completion_tokens") or 0)
    except (ValueError, TypeError, KeyError):
        return None
    return None


def project(
    run_dir: str | Path,
    *,
    samples: int = PAPER_SAMPLES,
    audio_s: float = PAPER_MEDIAN_AUDIO_S,
    workers: tuple[int, ...] = (1, 8, 32),
    rate_limit_per_min: float | None = None,
    concurrency: int = 8,
    usd_per_mtok: float | None = None,
) -> Projection:
    """Measure the run's stages and project them to ``samples`` items of ``audio_s`` seconds each."""
    run_dir = Path(run_dir)
    if not (run_dir / STORE_NAME).exists():
        raise HalluscopeError(
            f"{run_dir} holds no {STORE_NAME}; build it first ('halluscope build spoken {run_dir} ...')"
        )
    if samples < 1 or audio_s <= 0 or not workers or min(workers) < 1:
        raise HalluscopeError(
            f"expected samples >= 1, audio seconds > 0 and workers >= 1; got {samples}, {audio_s}, {workers}"
        )
    out: list[StageCost] = []
    with Store(run_dir) as store:
        stages = _latest_stages(store)
        n_items = 0
        if tts := language_stages.parts(stages, "tts"):  # one stage per language, run one after another
            refs = language_stages.results(store, stages, "tts", AudioRef)
            n_items = len(refs)
            times = sorted((t, k) for name, fp in tts.items() for k, t in store.updated(name, fp).items() if k in refs)
            if len(times) >= 2:
                span = times[-1][0] - times[0][0]
                audio = sum(refs[k].duration_s for _, k in times[1:])
                if span > 0 and audio > 0:
                    out.append(
                        _speech(
                            "tts",
                            "audio second (wall, from result gaps)",
                            span / audio,
                            len(times),
                            samples,
                            audio_s,
                            workers,
                        )
                    )
        if language_stages.parts(stages, "asr"):
            ts = [
                t
                for t in language_stages.results(store, stages, "asr", Transcript).values()
                if t.processing_s and t.audio_duration_s
            ]
            if ts:
                rtf = sum(t.processing_s for t in ts) / sum(t.audio_duration_s for t in ts)  # type: ignore[misc]
                out.append(
                    _speech("asr", "audio second (Transcript.processing_s)", rtf, len(ts), samples, audio_s, workers)
                )
        by_backend: dict[str, list[tuple[float, int | None]]] = {}
        for c in store.calls():
            if c["status"] == "ok" and c["latency_s"]:
                by_backend.setdefault(c["backend"], []).append((float(c["latency_s"]), _tokens(c["response"])))
    base = max(n_items, 1)
    for backend, rows in sorted(by_backend.items()):
        latency = statistics.median(r[0] for r in rows)
        per_item = len(rows) / base
        calls = per_item * samples
        toks = [r[1] for r in rows if r[1] is not None]
        tok = statistics.mean(toks) if toks else None
        total_h = calls * latency / 3600
        wall = {f"{concurrency} in flight": round(total_h / concurrency, 2)}
        if rate_limit_per_min:
            wall[f"{rate_limit_per_min:g}/min limit"] = round(
                max(total_h / concurrency, calls / rate_limit_per_min / 60), 2
            )
        cost = round(calls * tok * usd_per_mtok / 1e6, 2) if tok is not None and usd_per_mtok is not None else None
        out.append(
            StageCost(
                stage=f"calls {backend}",
                measured_items=len(rows),
                basis="call (median latency)",
                per_unit_s=round(latency, 3),
                per_item_s=round(latency * per_item, 3),
                total_hours=round(total_h, 2),
                wall_hours=wall,
                calls_per_item=round(per_item, 3),
                tokens_per_call=None if tok is None else round(tok, 1),
                cost_usd=cost,
            )
        )
    if not out:
        raise HalluscopeError(f"{run_dir}: no timed stage results or model calls to measure yet")
    return Projection(str(run_dir), samples, audio_s, tuple(workers), out)
