"""TTS -> ASR throughput in-process and on Ray with one and two workers (1 CPU each).

    .venv/bin/python benchmarks/bench_ray.py --items 20 --repeats 3
    .venv/bin/python benchmarks/bench_ray.py --smoke     # one clip, one round, in-process / Ray 1 / Ray 2 only

Renders the same demo articles (English, espeak-ng + Whisper base int8) into a fresh run directory per
mode and times the two stages: in-process (CTranslate2's default threads, and pinned to 1 thread), and
on a local Ray cluster started once beforehand (its start-up is reported apart) with one and with two
workers of 1 CPU each, whose ASR threads follow the CPU request. The four modes run in interleaved rounds
(order rotated) and the median run of each is reported, because the machine is shared and noisy. Worker start and model loading count.
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

from _ratios import ratio

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from halluscope.backends.speech.route import PerLanguageAsr, PerLanguageTts
from halluscope.core.executors import RayExecutor, Resources
from halluscope.core.manifest import record_manifest
from halluscope.core.records import Variant
from halluscope.core.store import Store
from halluscope.spoken import language_stages
from halluscope.spoken.build import BuildConfig, render_speech, select_articles
from halluscope.spoken.project import project


def once(
    root: Path, name: str, samples: dict[str, Variant], *, threads: int = 0, executor=None
) -> tuple[float, float, float]:
    """Wall seconds of TTS -> ASR, the ASR seconds the workers report (sum of processing_s) and the seconds
    spent starting workers (process start, imports, setup; 0 in-process)."""
    tts, asr = PerLanguageTts.create("espeak", ["en"]), PerLanguageAsr.create("whisper/base", ["en"])
    asr.set_threads(threads)
    voices = {"en": tts.voices("en")}
    tts_stage = language_stages.tts_stages(tts, voices, 13, ())
    asr_stage = language_stages.asr_stages(asr, tts_stage)
    run = root / name
    t0 = time.perf_counter()
    with Store(run) as store:
        _, per_language = render_speech(
            store,
            run,
            samples,
            tts=tts,
            asr=asr,
            voices=voices,
            seed=13,
            tts_stage=tts_stage,
            asr_stage=asr_stage,
            quiet=True,
            executor=executor,
        )
        elapsed = time.perf_counter() - t0
        # the stages this run measured, for 'halluscope project' (spoken/project.py reads them from the manifest)
        record_manifest(
            store,
            command="bench ray",
            config={"mode": name},
            seeds={"tts": 13},
            stages={**tts_stage.manifest(), **asr_stage.manifest()},
        )
    transcripts = language_stages.merged(per_language)
    failed = {k: e for s in per_language.values() for k, e in s.failed.items()}
    assert len(transcripts) == len(samples) and not failed, failed
    started = executor.worker_start_s if executor is not None else 0.0
    if executor is not None:
        executor.close()
    return elapsed, sum(t.processing_s or 0.0 for t in transcripts.values()), started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=20, help="English demo articles (at most 20)")
    ap.add_argument("--repeats", type=int, default=2, help="rounds of all four modes, interleaved; medians reported")
    ap.add_argument("--smoke", action="store_true", help="one clip, one round, three modes (the test suite's run)")
    args = ap.parse_args()
    if args.smoke:
        args.items, args.repeats = 1, 1
    arts = select_articles(BuildConfig(corpus="demo", langs=("en",), articles_per_language=args.items))
    samples = {
        a.id: Variant(
            id=a.id,
            article_id=a.id,
            language=a.language,
            label=0,
            generator="original",
            text=a.text[:160].rsplit(" ", 1)[0] if args.smoke else a.text,
        )  # smoke: a sentence
        for a in arts.articles
    }
    root = Path(tempfile.mkdtemp(prefix="hs-bench-"))
    modes = {
        "in-process": {},
        "in-process, 1 thread": {"threads": 1},
        "ray, 1 worker": {"workers": 1},
        "ray, 1 worker, 2 CPUs": {"workers": 1, "cpus": 2},
        "ray, 2 workers": {"workers": 2},
    }
    if args.smoke:
        modes = {k: v for k, v in modes.items() if k in ("in-process", "ray, 1 worker", "ray, 2 workers")}
    runs: dict[str, list[tuple[float, float, float]]] = {m: [] for m in modes}
    try:
        if not args.smoke:
            once(root, "warm", dict(list(samples.items())[:1]))  # page in espeak and the weights
        import ray

        t0 = time.perf_counter()
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            _temp_dir=str(root / ".ray"),
            log_to_driver=False,
            logging_level="warning",
        )
        startup = time.perf_counter() - t0
        names = list(modes)
        for r in range(args.repeats):  # rotate the order so no mode always runs first or last
            for m in names[r % len(names) :] + names[: r % len(names)]:
                kw = modes[m]
                ex = None
                if "workers" in kw:
                    ex = RayExecutor(root, workers=kw["workers"], resources=Resources(num_cpus=kw.get("cpus", 1)))
                runs[m].append(
                    once(
                        root,
                        f"{m}-{r}".replace(" ", "").replace(",", ""),
                        samples,
                        threads=kw.get("threads", 0),
                        executor=ex,
                    )
                )
        ray.shutdown()
        # the paper-scale projection ('halluscope project') from the median in-process run: Lost in Speech's 12,013
        # samples of 96 s (seed 000) on 1 and 32 workers
        median = sorted(range(len(runs["in-process"])), key=lambda i: runs["in-process"][i][0])[
            len(runs["in-process"]) // 2
        ]
        projection = project(root / f"in-process-{median}", workers=(1, 32))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = {m: sorted(v)[len(v) // 2] for m, v in runs.items()}  # the median run (upper median)
    print(
        f"{len(samples)} English demo clips, TTS -> ASR, median of {args.repeats} interleaved rounds "
        f"(Ray cluster start-up, not counted: {startup:.1f} s)"
    )
    for name, (s, busy, started) in results.items():
        spread = ", ".join(f"{x[0]:.1f}" for x in runs[name])
        print(
            f"  {name:<22} {s:6.1f} s  {60 * len(samples) / s:5.1f} clips/min  (ASR busy {busy:5.1f} s, "
            f"worker start {started:4.1f} s; runs: {spread} s)"
        )
    wall = {k: v[0] for k, v in results.items()}
    net = {k: v[0] - v[2] for k, v in results.items()}  # without the fixed worker start
    rows = [
        ("ray 1 worker, 2 CPUs / in-process", "ray, 1 worker, 2 CPUs", "in-process", ">= 0.9", "same threads"),
        ("ray 1 worker / in-process 1 thread", "ray, 1 worker", "in-process, 1 thread", ">= 0.9", "same threads"),
        ("ray 1 worker / in-process", "ray, 1 worker", "in-process", None, "1 thread vs CTranslate2's default"),
        ("ray 2 workers / ray 1 worker", "ray, 2 workers", "ray, 1 worker", ">= 1.8", "bounded by the cores"),
    ]
    busy = {k: v[1] for k, v in results.items()}
    for label, a_, b_, goal, note in rows:  # throughput of a_ over that of b_
        if a_ in wall and b_ in wall:
            ratio(f"throughput {label}, all-in", wall[b_] / wall[a_], goal, note, smoke=args.smoke)
            ratio(f"throughput {label}, without worker start", net[b_] / net[a_], goal, note, smoke=args.smoke)
    # two workers doing twice one worker's ASR work in the same wall time means the cores, not the executor, limit
    cores = os.cpu_count() or 1
    ratio(
        "ASR busy seconds ray 2 workers / ray 1 worker",
        busy["ray, 2 workers"] / max(busy["ray, 1 worker"], 1e-9),
        note=f"~2 with {cores} cores busy: each worker runs slower when both share them",
        smoke=args.smoke,
    )
    # 'halluscope project' on the measured in-process run: TTS and ASR wall hours for the paper's corpus
    print(f"paper-scale projection (halluscope project): {projection.samples} samples x {projection.audio_s:g} s")
    for st in projection.stages:
        for key in ("1 workers", "32 workers"):
            ratio(
                f"paper-scale {st.stage} wall hours on {key.replace('1 workers', '1 worker')}",
                st.wall_hours[key],
                note=f"{st.per_unit_s:g} s per {st.basis}, measured on {st.measured_items} clips",
                smoke=args.smoke,
                unit=" h",
            )


if __name__ == "__main__":
    main()
