"""TTS -> ASR throughput in-process and on Ray with one and two workers (1 CPU each).

    .venv/bin/python benchmarks/bench_ray.py --items 8

Renders the same demo articles (English, espeak-ng + Whisper base int8) into a fresh run directory per
mode and times the two stages: in-process (CTranslate2's default threads, and pinned to 1 thread), then
on a local Ray cluster started once beforehand (its start-up is reported apart) with one and with two
workers of 1 CPU each, whose ASR threads follow the CPU request. Worker start and model loading count.
Workers carry over from the TTS stage to the ASR stage; the seconds spent starting them are measured and
the ratios printed with and without them. Prints seconds, clips per minute, the ASR seconds the workers report (if two workers report twice the
busy time of one in the same wall time, the cores, not the executor, are the limit) and the ratios the scale-out issue asks about:
Ray-1 / in-process (aim >= 0.9) and Ray-2 / Ray-1 (aim >= 1.8 on 2 cores, bounded by cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from halluscope.build import (
    BuildConfig,
    asr_config,
    render_speech,
    select_articles,
    tts_config,
)
from halluscope.executors import RayExecutor
from halluscope.records import Variant
from halluscope.speech import ASR_BACKENDS, TTS_BACKENDS
from halluscope.stages import Stage
from halluscope.store import Store


def once(root: Path, name: str, samples: dict[str, Variant], *, cpu_threads: int = 0,
         executor=None) -> tuple[float, float, float]:
    """Wall seconds of TTS -> ASR, the ASR seconds the workers report (sum of processing_s) and the seconds
    spent starting workers (process start, imports, setup; 0 in-process)."""
    tts, asr = TTS_BACKENDS.create("espeak"), ASR_BACKENDS.create("whisper/base")
    asr.cpu_threads = cpu_threads  # type: ignore[attr-defined]
    voices = {"en": tts.voices("en")}
    tts_stage = Stage("tts", tts_config(tts, voices, 13))
    asr_stage = Stage("asr", asr_config(asr), (tts_stage.fingerprint,))
    run = root / name
    t0 = time.perf_counter()
    with Store(run) as store:
        _, transcripts = render_speech(store, run, samples, tts=tts, asr=asr, voices=voices, seed=13,
                                           tts_stage=tts_stage, asr_stage=asr_stage, quiet=True, executor=executor)
    elapsed = time.perf_counter() - t0
    assert len(transcripts.results) == len(samples) and not transcripts.failed, transcripts.failed
    started = executor.worker_start_s if executor is not None else 0.0
    if executor is not None:
        executor.close()
    return elapsed, sum(t.processing_s or 0.0 for t in transcripts.results.values()), started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=8)
    args = ap.parse_args()
    arts = select_articles(BuildConfig(corpus="demo", langs=("en",), articles_per_language=args.items))
    samples = {a.id: Variant(id=a.id, article_id=a.id, language=a.language, text=a.text, label=0, generator="original")
               for a in arts}
    root = Path(tempfile.mkdtemp(prefix="hs-bench-"))
    try:
        once(root, "warm", dict(list(samples.items())[:1]))  # page in espeak and the weights
        results = {"in-process": once(root, "local", samples),
                   "in-process, 1 thread": once(root, "local1", samples, cpu_threads=1)}
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=str(root / ".ray"), log_to_driver=False,
                 logging_level="warning")
        startup = time.perf_counter() - t0
        for n in (1, 2):
            results[f"ray, {n} worker{'s' * (n > 1)}"] = once(root, f"ray{n}", samples, executor=RayExecutor(root, workers=n))
        ray.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{len(samples)} English demo clips, TTS -> ASR (Ray cluster start-up, not counted: {startup:.1f} s)")
    for name, (s, busy, started) in results.items():
        print(f"  {name:<22} {s:6.1f} s  {60 * len(samples) / s:5.1f} clips/min  (ASR busy {busy:5.1f} s, "
              f"worker start {started:4.1f} s)")
    base, r1, r2 = (results[k][0] for k in ("in-process", "ray, 1 worker", "ray, 2 workers"))
    s1, s2 = (results[k][2] for k in ("ray, 1 worker", "ray, 2 workers"))
    print("                                    all-in   without worker start (a fixed cost per run)")
    print(f"ray 1 worker / in-process:          {base / r1:.2f}x    {base / (r1 - s1):.2f}x  (aim >= 0.9)")
    print(f"ray 1 worker / in-process 1 thread: {results['in-process, 1 thread'][0] / r1:.2f}x    "
          f"{results['in-process, 1 thread'][0] / (r1 - s1):.2f}x")
    print(f"ray 2 workers / ray 1 worker:       {r1 / r2:.2f}x    {(r1 - s1) / (r2 - s2):.2f}x  (aim >= 1.8)")


if __name__ == "__main__":
    main()
