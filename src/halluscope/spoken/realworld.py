"""The real-world evaluation split (seed 000, section 3.2): fact-checked fakes and matched truthful negatives.

'build realworld' loads the fakes, matches each to one original article of the run (same language) by
greedy TF-IDF cosine over topic and time period, without replacement, optionally makes faithful LLM
rewrites of the negatives (Table 5), and renders every new item through the run's own TTS -> ASR stages. The fakes
file and the matching live in spoken/realworld_fakes.py; this module keeps the split in the store.

'detect ... -o realworld=true' is the dedicated run of Table 4: the split is rebuilt from the same seed,
then every matched negative's article (with all its rewrites) is moved to the test split, so no model
evaluated on the real-world data trains or selects checkpoints on it; fakes and faithful rewrites are
test items too. Its predictions live under their own stage, 'detect_realworld', so Table 2 (the full
corpus split) never mixes with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import file_sha256
from halluscope.core.manifest import record_manifest
from halluscope.core.outcome import StepOutcome, check_outcomes
from halluscope.core.records import (
    AudioRef,
    RealWorldFake,
    RealWorldMatch,
    Transcript,
    Variant,
)
from halluscope.core.spec import ModelSpec
from halluscope.core.stages import Stage, StageSummary, run_stage
from halluscope.core.store import Store
from halluscope.spoken import language_stages
from halluscope.spoken.build import (
    BuildConfig,
    BuildResult,
    _corpus_sha,
    load_build,
    select_articles,
    speech_backends,
)
from halluscope.spoken.realworld_fakes import (
    REAL_LANGUAGES,
    fake_id,
    fake_variant,
    load_fakes as load_fakes,
    match_key as match_key,
    match_negatives as match_negatives,
)
from halluscope.spoken.speech_stages import render_speech

# -- the split in the store -------------------------------------------------------------------------


@dataclass
class RealWorldSplit:
    fakes: dict[str, RealWorldFake]  # sample id ('fake~<id>') -> fake
    matches: dict[str, RealWorldMatch]  # sample id of the fake -> its negative
    faithful: dict[str, Variant]  # '<article>~faithful' -> faithful LLM rewrite
    audio: dict[str, AudioRef]
    transcripts: dict[str, Transcript]
    failures: dict[str, dict[str, str]]
    stages: dict[str, str]
    config: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # corpus notes (ignored columns), for the CLI to show

    @property
    def negatives(self) -> dict[str, str]:
        """article id -> language of every matched truthful negative."""
        return {m.article_id: m.language for m in self.matches.values()}

    @property
    def variants(self) -> dict[str, Variant]:
        """Every new item of the split (fakes and faithful rewrites) as samples."""
        return {**{k: fake_variant(f) for k, f in self.fakes.items()}, **self.faithful}


def _check(run_dir: Path, allow_partial: bool | None, outcomes: list[StepOutcome]) -> None:
    """The one rule of core/outcome.py over some of the split's steps (nothing when ``allow_partial`` is None)."""
    if allow_partial is not None:
        kept = f"in {run_dir} (a rerun reuses it and retries only the failed items)"
        check_outcomes(outcomes, command="build realworld", allow_partial=allow_partial, kept=kept)


def _file_sha(path: Path) -> str:
    return file_sha256(path, 16)


def build_realworld(
    run_dir: str | Path,
    fakes_path: str | Path,
    *,
    langs: Sequence[str] = REAL_LANGUAGES,
    faithful: str | None = None,
    faithful_langs: Sequence[str] = ("ru",),
    text_weight: float = 0.0,
    corpus: str | None = None,
    llm_config: object | None = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
) -> RealWorldSplit:
    """Load fakes, match negatives, make faithful rewrites (optional) and render new items through TTS -> ASR.

    ``allow_partial``: None records whatever was made; False / True applies the one rule of core/outcome.py after
    the faithful rewrites (before any speech work) and after the speech, before the split is recorded (a step
    failing on more than the share fails the command unless True; one that produced nothing always does)."""
    run_dir = Path(run_dir)
    bad = [x for x in [*langs, *faithful_langs] if x not in REAL_LANGUAGES]
    if bad:
        raise HalluscopeError(f"the real-world split is Russian and Kazakh only (languages ru, kk); got {bad}")
    fakes = load_fakes(fakes_path, langs=langs)
    with Store(run_dir) as store:
        build = load_build(store)
        manifest = store.latest_manifest("build spoken")
        cfg = BuildConfig(**manifest.config)  # type: ignore[union-attr]
        if corpus is not None:
            cfg = cfg.model_copy(update={"corpus": corpus})
        chosen = select_articles(cfg)
        articles = chosen.articles
        if Stage("ingest", {"corpus_sha": _corpus_sha(articles)}).fingerprint != build.stages["ingest"]:
            raise HalluscopeError(
                f"the corpus '{cfg.corpus}' is not the one {run_dir} was built from (its articles "
                "differ); pass --corpus with the original file"
            )
        candidates = [a for a in articles if a.language in langs and a.id in build.transcripts]
        fakes_stage = Stage("realworld_fakes", {"sha": _file_sha(Path(fakes_path)), "langs": sorted(langs)})
        match_stage = Stage(
            "realworld_match",
            {"text_weight": text_weight, "method": "greedy tfidf topic+period"},
            (fakes_stage.fingerprint, build.stages["ingest"], build.stages["asr"]),
        )
        by_id = {fake_id(f.id): f for f in fakes}
        run_stage(store, fakes_stage, sorted(by_id.items()), lambda f: f, RealWorldFake, quiet=True)
        matches = {m.fake_id: m for m in match_negatives(fakes, candidates, text_weight=text_weight)}
        run_stage(store, match_stage, sorted(matches.items()), lambda m: m, RealWorldMatch, quiet=True)
        stages = {fakes_stage.name: fakes_stage.fingerprint, match_stage.name: match_stage.fingerprint}

        new: dict[str, Variant] = {k: fake_variant(f) for k, f in by_id.items()}
        failures: dict[str, dict[str, str]] = {}
        faithful_results: dict[str, Variant] = {}
        if faithful:
            from halluscope.spoken import provenance

            backend = provenance.faithful_backend(faithful, llm_config)
            fstage = Stage(
                "realworld_faithful",
                {**provenance.faithful_config(backend, retries=2), "seed": cfg.seed, "langs": sorted(faithful_langs)},
                (match_stage.fingerprint,),
            )
            arts = {a.id: a for a in articles}
            negs = sorted({m.article_id for m in matches.values() if m.language in faithful_langs})
            summary = provenance.faithful_rewrites(
                store, fstage, backend, [arts[a] for a in negs], seed=cfg.seed, quiet=quiet
            )
            fix = (
                f"check the generator '{faithful}' (its server, key and replies: 'halluscope view RUN'), then run again"
            )
            _check(run_dir, allow_partial, [StepOutcome.of(summary, step=fstage.name, fix=fix)])
            faithful_results = summary.results
            if summary.failed:
                failures[fstage.name] = summary.failed
            new.update(faithful_results)
            stages[fstage.name] = fstage.fingerprint

        new_langs = sorted({v.language for v in new.values()})
        tts, asr = speech_backends(cfg, new_langs)  # the build's engines, per language
        voices: dict[str, list[str]] = {lang: tts.voices(lang) for lang in new_langs}
        audio: dict[str, AudioRef] = {}
        transcripts: dict[str, Transcript] = {}
        # fakes and faithful rewrites render in stages of their own, so adding rewrites later re-renders no fake
        groups = [("realworld", {k: v for k, v in new.items() if k in by_id}, fakes_stage.fingerprint)]
        if faithful:
            groups.append(("realworld_faithful", faithful_results, stages["realworld_faithful"]))
        for prefix, items, upstream in groups:
            # one stage per language and kind, as in 'build spoken' (spoken/language_stages.py)
            tts_stage = language_stages.tts_stages(tts, voices, cfg.seed, (upstream,), kind=f"{prefix}_tts")
            asr_stage = language_stages.asr_stages(asr, tts_stage, kind=f"{prefix}_asr")
            a, t = render_speech(
                store,
                run_dir,
                items,
                tts=tts,
                asr=asr,
                voices=voices,
                seed=cfg.seed,
                tts_stage=tts_stage,
                asr_stage=asr_stage,
                quiet=quiet,
            )
            audio.update(language_stages.merged(a))
            transcripts.update(language_stages.merged(t))
            done: list[StageSummary] = [*a.values(), *t.values()]
            fix = "check the build's speech engines on one item (the reasons: 'halluscope view RUN'), then run again"
            _check(run_dir, allow_partial, [StepOutcome.of(s, fix=fix) for s in done])
            failures.update({s.stage: s.failed for s in done if s.failed})
            stages.update({**tts_stage.manifest(), **asr_stage.manifest()})
        config = {
            "fakes": str(fakes_path),
            "langs": list(langs),
            "faithful": faithful,
            "faithful_langs": list(faithful_langs),
            "text_weight": text_weight,
            "corpus": cfg.corpus,
        }
        record_manifest(store, command="build realworld", config=config, seeds={"voices": cfg.seed}, stages=stages)
        return RealWorldSplit(
            by_id, matches, faithful_results, audio, transcripts, failures, stages, config, chosen.notes
        )


def load_realworld(store: Store) -> RealWorldSplit | None:
    """The latest 'build realworld' of a run directory, or None when there is none."""
    m = store.latest_manifest("build realworld")
    if m is None:
        return None
    st = m.stages
    faithful = (
        store.results("realworld_faithful", st["realworld_faithful"], Variant) if "realworld_faithful" in st else {}
    )
    audio: dict[str, AudioRef] = {}
    transcripts: dict[str, Transcript] = {}
    for prefix in ("realworld", "realworld_faithful"):
        audio.update(language_stages.results(store, st, f"{prefix}_tts", AudioRef))
        transcripts.update(language_stages.results(store, st, f"{prefix}_asr", Transcript))
    failures = {k: f for k in st if k.startswith("realworld_") and (f := store.failures(k, st[k]))}
    return RealWorldSplit(
        fakes=store.results("realworld_fakes", st["realworld_fakes"], RealWorldFake),
        matches=store.results("realworld_match", st["realworld_match"], RealWorldMatch),
        faithful=faithful,
        audio=audio,
        transcripts=transcripts,
        failures=failures,
        stages=dict(st),
        config=m.config,
    )


# -- the dedicated detection run ----------------------------------------------------------------------

DETECT_STAGE = "detect_realworld"


def realworld_splits(build: BuildResult, split: RealWorldSplit, *, seed: int) -> dict[str, str]:
    """The article-level split of 'detect' with every negative's article and every new item moved to test."""
    from halluscope.spoken.detect.splits import split_by_article

    splits = split_by_article(build.samples.values(), seed=seed)
    for aid in split.negatives:
        splits[aid] = "test"
    for v in split.variants.values():
        splits[v.article_id] = "test"
    return splits


def detect_realworld(
    run_dir: str | Path,
    *,
    detector: ModelSpec | str = "tfidf",
    task: str = "binary",
    input: str = "text",
    seed: int = 0,
    options: dict[str, Any] | None = None,
    executor: Any = None,
    allow_partial: bool | None = None,
) -> Any:
    """Train/evaluate any registered detector with the real-world negatives held out of train and dev.

    ``allow_partial``: as in ``detect`` (None fails only when nothing was predicted; False / True the whole rule)."""
    from halluscope.spoken.detect.run import (
        DETECTORS,
        DetectContext,
        DetectResult,
        checked_predictions,
        detect,
        display_option,
    )

    options = dict(options or {})
    detector, name = display_option(detector, options)
    if task != "binary":
        raise HalluscopeError(f"the real-world split has binary labels only; got task '{task}' (use the binary task)")
    spec, model = ModelSpec.written(detector)  # the model part as written: the stage key holds it
    provider = spec.provider
    if provider not in DETECTORS or input not in DETECTORS[provider].inputs:
        return detect(
            run_dir, detector=detector, task="binary", input=input, seed=seed, options=options, executor=executor
        )  # its error
    kind = DETECTORS[provider]
    with Store(run_dir) as store:
        build = load_build(store)
        rw = load_realworld(store)
        if rw is None:
            raise HalluscopeError(
                f"{run_dir} has no real-world split; run 'halluscope build realworld {run_dir} --fakes FILE' first"
            )
        samples = {**build.samples, **rw.variants}
        transcripts = {**build.transcripts, **rw.transcripts}
        merged = BuildResult(
            build.run_dir, samples, {**build.audio, **rw.audio}, transcripts, build.failures, build.stages
        )
        excluded = {k: "no transcript (see the build's failures)" for k in samples if k not in transcripts}
        items = [v for k, v in sorted(samples.items()) if k in transcripts]
        splits = realworld_splits(build, rw, seed=seed)
        if kind.trains:  # moving the negatives to test may empty a language's train or dev (issue 29)
            from halluscope.spoken.detect.splits import guard_splits

            guard_splits(
                items,
                splits,
                where=str(run_dir),
                change="-o realworld=true moved the matched truthful negatives (with their rewrites) to test",
                fix="pass fewer fakes of that language to 'build realworld' (or leave the language out with "
                "--langs), or build the run with more articles per language (--articles-per-language), "
                "then run 'build realworld' again",
            )
        stage = Stage(
            DETECT_STAGE,
            {
                "detector": detector,
                "config": kind.config(model, {**options, "seed": seed}),
                "task": task,
                "input": input,
                "seed": seed,
            },
            (
                build.stages["generate"],
                build.stages["asr"],
                *(fp for name, fp in sorted(rw.stages.items()) if name.endswith(("_match", "_asr"))),
            ),
        )
        record_manifest(
            store,
            command="detect realworld",
            config={
                "detector": detector,
                "task": task,
                "input": input,
                "seed": seed,
                "options": options,
                **({"name": name} if name else {}),
            },
            seeds={"split": seed, "detector": seed},
            stages={DETECT_STAGE: stage.fingerprint, **rw.stages},
        )
        ctx = DetectContext(
            store=store,
            build=merged,
            stage=stage,
            spec=detector,
            model=model,
            task="binary",
            input=input,
            seed=seed,
            items=items,
            splits=splits,
            options=options,
            **({"executor": executor} if executor is not None else {}),
        )
        kind.run(ctx)
        predictions = checked_predictions(
            store,
            stage,
            n_items=len(items),
            step=f"detect {detector} task={task} input={input} realworld=true",
            run_dir=run_dir,
            allow_partial=allow_partial,
        )
        return DetectResult(stage.fingerprint, predictions, excluded)
