"""'build spoken': articles -> rewrites -> speech -> transcripts, as stages over one store (seed 000, 3.1 and 3.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from halluscope.backends.speech.route import PerLanguageAsr, PerLanguageTts, make_speech
from halluscope.core.errors import HalluscopeError
from halluscope.core.executors import Executor
from halluscope.core.hashing import chunks_sha256
from halluscope.core.keys import StageName
from halluscope.core.manifest import record_manifest
from halluscope.core.records import (
    LANGUAGES,
    SEVERITIES,
    TYPES,
    Article,
    AudioRef,
    HallucinationType,
    Language,
    Severity,
    Transcript,
    Variant,
)
from halluscope.core.stages import Stage, StageSummary, run_stage
from halluscope.core.store import Store
from halluscope.spoken import language_stages
from halluscope.spoken.corpus import Corpus, load_corpus
from halluscope.spoken.generate import create_generator, plan_rewrites
from halluscope.spoken.language_stages import asr_config as asr_config, tts_config as tts_config
from halluscope.spoken.speech_stages import render_speech, speech_versions, transcribe

if TYPE_CHECKING:
    from halluscope.backends.llm import CallStats


from halluscope.spoken.dataset import export_dataset as export_dataset  # noqa: E402


class BuildConfig(BaseModel):
    """Options of 'halluscope build spoken', validated before any work starts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    corpus: str = Field(description="Corpus file (.jsonl/.csv/.parquet) or 'demo'.")
    langs: tuple[Language, ...] = LANGUAGES
    generator: str = "rules"
    tts: str = Field(default="espeak", description="TTS spec, 'lang=spec,...' or a preset (speech/route.py).")
    asr: str = Field(default="whisper/base", description="ASR spec of the build's transcripts, per language too.")
    compare_asr: tuple[str, ...] = Field(
        default=(), description="More ASR systems on the same audio, each a stage of its own (Lost in Speech Table 7)."
    )
    seed: int = 13
    rewrites_per_article: int = Field(
        default=2, ge=0, le=9, description="Lost in Speech Table 1: about two per original"
    )
    articles_per_language: int | None = Field(default=None, ge=1)
    types: tuple[HallucinationType, ...] = TYPES
    severities: tuple[Severity, ...] = SEVERITIES


@dataclass
class BuildResult:
    run_dir: Path
    samples: dict[str, Variant]
    audio: dict[str, AudioRef]
    transcripts: dict[str, Transcript]
    failures: dict[str, dict[str, str]]
    stages: dict[str, str]
    compared: dict[str, dict[str, Transcript]] = field(default_factory=dict)  # ASR spec -> transcripts (Table 7)
    # what this build did, for the CLI to show (empty when read back by load_build)
    summaries: tuple[StageSummary, ...] = ()  # per stage: computed, reused, failed
    notes: tuple[str, ...] = ()  # corpus notes (ignored columns)
    generator_spec: str = ""
    generator_stats: CallStats | None = None  # the LLM generator's calls, tokens and cost when it made calls

    def transcript_sets(self) -> dict[str, dict[str, Transcript]]:
        """Every ASR system's transcripts of this build, the build's own first."""
        return {self.asr_spec: self.transcripts, **self.compared}

    @property
    def asr_spec(self) -> str:
        """The build's ASR as one spec ('whisper/base', or 'en=...,kk=...' when languages differ)."""
        from halluscope.backends.speech.route import canonical

        return canonical({t.language: t.asr for t in self.transcripts.values()}) if self.transcripts else "none"

    def transcripts_of(self, asr: str | None) -> dict[str, Transcript]:
        """The transcripts a reader asked for: None = the build's own; else a compared system's spec."""
        if asr is None or asr == self.asr_spec or asr == "build":
            return self.transcripts
        if asr in self.compared:
            return self.compared[asr]
        have = ", ".join(repr(k) for k in self.transcript_sets())
        raise HalluscopeError(
            f"{self.run_dir} has no transcripts from ASR '{asr}'; it has {have}. Fix: pass one of "
            "them, or add it with 'build spoken ... --compare-asr SPEC' (the audio is reused)"
        )


def compare_stage_name(spec: str) -> str:
    """The manifest's name of a compared ASR system's transcripts ('asr[spec]'; per language 'asr@en[spec]')."""
    return str(StageName("asr", subject=spec))


def _corpus_sha(articles: list[Article]) -> str:
    return chunks_sha256((a.model_dump_json() for a in articles), 16)


def speech_backends(cfg: BuildConfig, langs: Sequence[str]) -> tuple[PerLanguageTts, PerLanguageAsr]:
    """The build's TTS and ASR, one engine per language (a missing engine names what to install, exit 2)."""
    tts, asr, _ = speech_engines(cfg, langs)
    return tts, asr


def speech_engines(
    cfg: BuildConfig, langs: Sequence[str]
) -> tuple[PerLanguageTts, PerLanguageAsr, list[PerLanguageAsr]]:
    """The build's TTS, ASR and compared ASR systems, every engine of every language made and checked (options,
    weights) before any work: one error lists every problem (speech/route.py ``make_speech``)."""
    return make_speech(tts=cfg.tts, asr=cfg.asr, compare_asr=cfg.compare_asr, langs=langs)


def _check_stages(
    summaries: Sequence[StageSummary], allow_partial: bool | None, run_dir: Path, engines: dict[str, str]
) -> tuple[str, ...]:
    """The one rule of core/outcome.py over some of the build's stages (nothing when ``allow_partial`` is None).
    ``engines``: stage name -> the spec its items ran through, named in the fix."""
    if allow_partial is None:
        return ()
    from halluscope.core.outcome import StepOutcome, check_outcomes

    fixes = {
        "ingest": "check the corpus rows ('halluscope corpus check CORPUS')",
        "generate": "check the generator {} (its server, model and replies: 'halluscope view RUN'), then run the "
        "same command again; a rewrite it cannot make (an article with too few alterable facts for the type and "
        "severity) fails again on a rerun",
        "tts": "check the TTS engine {} on one text, then run the same command again",
    }
    asr_fix = "check the ASR engine {} and its options on one clip, then run the same command again"
    outcomes = [
        StepOutcome.of(s, fix=fixes.get(StageName.decode(s.stage).kind, asr_fix).format(repr(engines.get(s.stage, ""))))
        for s in summaries
    ]
    kept = f"in {run_dir} (a rerun reuses it and retries only the failed items)"
    return tuple(check_outcomes(outcomes, command="build spoken", allow_partial=allow_partial, kept=kept))


def select_articles(cfg: BuildConfig) -> Corpus:
    """The build's articles (and the corpus notes): its languages, the first N per language when asked."""
    corpus = load_corpus(cfg.corpus, langs=cfg.langs)
    articles = corpus.articles
    if not articles:
        raise HalluscopeError(f"the corpus has no articles in {', '.join(cfg.langs)}; check the languages asked for")
    if cfg.articles_per_language:
        kept: list[Article] = []
        for lang in cfg.langs:
            kept += sorted((a for a in articles if a.language == lang), key=lambda a: a.id)[: cfg.articles_per_language]
        articles = kept
    return Corpus(articles, corpus.notes)


def build_spoken(
    run_dir: str | Path,
    cfg: BuildConfig,
    *,
    quiet: bool = False,
    executor: Executor | None = None,
    allow_partial: bool | None = None,
) -> BuildResult:
    """Build a spoken benchmark; ``executor`` runs TTS and ASR elsewhere (e.g. Ray), same records either way.

    ``allow_partial``: None leaves judging the stages' failures to the caller; False / True applies the one rule
    (core/outcome.py) after the rewrites (before any speech work) and after the transcripts."""
    run_dir = Path(run_dir)
    corpus = select_articles(cfg)
    articles = corpus.articles
    generator = create_generator(cfg.generator, cfg.langs)  # one spec, or one per language (issue 29)
    tts, asr, compared_asr = speech_engines(cfg, cfg.langs)  # every engine checked before any work
    compared = {}
    for value, other in zip(cfg.compare_asr, compared_asr):
        if other.spec == asr.spec or other.spec in compared:
            raise HalluscopeError(
                f"the compared ASR '{value}' repeats ASR '{other.spec}' already in this build; "
                "expected each ASR system once"
            )
        compared[other.spec] = other

    ingest = Stage("ingest", {"corpus_sha": _corpus_sha(articles)})
    generate = Stage(
        "generate",
        {
            "generator": generator.config(),
            "seed": cfg.seed,
            "per_article": cfg.rewrites_per_article,
            "types": list(cfg.types),
            "severities": list(cfg.severities),
        },
        (ingest.fingerprint,),
    )
    voices: dict[str, list[str]] = {lang: tts.voices(lang) for lang in cfg.langs}
    # one stage per language and kind: a change to one language's engine recomputes that language only
    tts_stage = language_stages.tts_stages(tts, voices, cfg.seed, (ingest.fingerprint, generate.fingerprint))
    asr_stage = language_stages.asr_stages(asr, tts_stage)
    compare_stages = {spec: language_stages.asr_stages(a, tts_stage, system=spec) for spec, a in compared.items()}
    stages = {ingest.name: ingest.fingerprint, generate.name: generate.fingerprint}
    for group in (tts_stage, asr_stage, *compare_stages.values()):
        stages.update(group.manifest())

    with Store(run_dir) as store:
        record_manifest(
            store,
            command="build spoken",
            config=cfg.model_dump(mode="json"),
            seeds={"generate": cfg.seed, "voices": cfg.seed},
            stages=stages,
            extra_versions=speech_versions(),
        )

        originals = run_stage(
            store,
            ingest,
            [(a.id, a) for a in articles],
            lambda a: Variant(
                id=a.id, article_id=a.id, language=a.language, text=a.text, label=0, generator="original"
            ),
            Variant,
            quiet=True,
        )
        plan = plan_rewrites(
            articles, per_article=cfg.rewrites_per_article, seed=cfg.seed, types=cfg.types, severities=cfg.severities
        )
        if hasattr(generator, "prepare"):  # LLM generators make their calls concurrently, logged in the store
            done = store.done_ids(generate.name, generate.fingerprint)
            generator.prepare(
                store, generate, [p for p in plan if p.variant_id not in done], seed=cfg.seed, quiet=quiet
            )
        generated = run_stage(
            store,
            generate,
            [(p.variant_id, p) for p in plan],
            lambda p: generator.rewrite(p.article, type=p.type, severity=p.severity, seed=cfg.seed),
            Variant,
            quiet=quiet,
            description=f"rewrite ({generator.spec})",
        )
        samples = {**originals.results, **generated.results}
        engines = {
            "generate": generator.spec,
            **{s.name: tts.spec_for(lang) for lang, s in tts_stage.stages.items()},
            **{s.name: asr.spec_for(lang) for lang, s in asr_stage.stages.items()},
            **{
                s.name: a.spec_for(lang)
                for spec, a in compared.items()
                for lang, s in compare_stages[spec].stages.items()
            },
        }
        outcome_notes = _check_stages((originals, generated), allow_partial, run_dir, engines)

        audio, transcripts = render_speech(
            store,
            run_dir,
            samples,
            tts=tts,
            asr=asr,
            voices=voices,
            seed=cfg.seed,
            tts_stage=tts_stage,
            asr_stage=asr_stage,
            quiet=quiet,
            executor=executor,
        )
        clips = language_stages.merged(audio)
        others = {
            spec: transcribe(
                store, run_dir, samples, clips, asr=a, stages=compare_stages[spec], quiet=quiet, executor=executor
            )
            for spec, a in compared.items()
        }
        speech: list[StageSummary] = [
            *audio.values(),
            *transcripts.values(),
            *(s for o in others.values() for s in o.values()),
        ]
        summaries = (originals, generated, *speech)
        outcome_notes += _check_stages(speech, allow_partial, run_dir, engines)
        failures = {s.stage: s.failed for s in summaries if s.failed}
        result = BuildResult(
            run_dir,
            samples,
            clips,
            language_stages.merged(transcripts),
            failures,
            stages,
            {spec: language_stages.merged(o) for spec, o in others.items()},
            summaries=summaries,
            notes=(*corpus.notes, *outcome_notes),
            generator_spec=generator.spec,
            generator_stats=getattr(generator, "stats", None),
        )
        export_dataset(result)
        return result


def load_build(store: Store) -> BuildResult:
    """The latest 'build spoken' of a run directory, read back from the store."""
    manifest = store.latest_manifest("build spoken")
    if manifest is None:
        raise HalluscopeError(
            f"{store.run_dir} holds no 'build spoken' run; build it first ('halluscope build spoken {store.run_dir} ...')"
        )
    st = manifest.stages
    samples = {**store.results("ingest", st["ingest"], Variant), **store.results("generate", st["generate"], Variant)}
    audio = language_stages.results(store, st, "tts", AudioRef)
    transcripts = language_stages.results(store, st, "asr", Transcript)
    compared = {
        n.subject: language_stages.results(store, st, n, Transcript)
        for name in st
        if (n := StageName.parse(name)) is not None and n.kind == "asr" and n.subject is not None and n.language is None
    }
    names = ["ingest", "generate"]
    for kind in ("tts", "asr", *(compare_stage_name(s) for s in compared)):
        names += language_stages.parts(st, kind)
    failures = {name: f for name in names if (f := store.failures(name, st[name]))}
    return BuildResult(Path(store.run_dir), samples, audio, transcripts, failures, dict(st), compared)


def load_build_or_none(store: Store) -> BuildResult | None:
    """The latest 'build spoken' of the run (None when it has none), read once per open store: every report
    section built from this store shares one BuildResult (treat it as read-only); a newer build is read again."""
    manifest = store.latest_manifest("build spoken")
    if manifest is None:
        return None
    key = manifest.model_dump_json()
    hit = store.memo.get("build spoken")
    if hit is None or hit[0] != key:
        hit = store.memo["build spoken"] = (key, load_build(store))
    return hit[1]
