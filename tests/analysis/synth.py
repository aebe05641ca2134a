"""Hand-built store records in the real schema (the analyses' tests): a spoken build's samples and transcripts,
detect runs, judge runs, MISHAP answers, verdicts, human labels and calls, so every expected figure is computable."""

from __future__ import annotations

from halluscope.core.provenance import text_digest
from halluscope.core.records import (
    GroundednessJudgement,
    Judgement,
    MishapAnnotation,
    MishapAnswer,
    Prediction,
    RunManifest,
    Transcript,
    Variant,
)
from halluscope.core.store import Store


def manifest(store: Store, command: str, config: dict, stages: dict) -> None:
    store.add_manifest(
        RunManifest(
            command=command,
            created="2026-01-01T00:00:00",
            config=config,
            versions={},
            seeds={},
            stages=stages,
            platform="test",
        )
    )


def original(article: str, lang: str = "en", text: str = "x") -> Variant:
    return Variant(id=article, article_id=article, language=lang, text=text, label=0, generator="original")


def rewrite(article: str, typ: str, sev: str, lang: str = "en") -> Variant:
    return Variant(
        id=f"{article}~{typ}~{sev}",
        article_id=article,
        language=lang,
        text="y",
        label=1,
        type=typ,
        severity=sev,
        generator="rules",
    )


def transcript(v: Variant, text: str, wer: float | None = None) -> Transcript:
    return Transcript(
        item_id=v.id,
        language=v.language,
        text=text,
        asr="whisper/base",
        audio_sha256="0",
        audio_duration_s=1.0,
        processing_s=0.1,
        wer=wer,
    )


BUILD_STAGES = {"ingest": "ingest-synth", "generate": "generate-synth", "tts": "tts-synth", "asr": "asr-synth"}


def store_build(store: Store, samples: list[Variant], transcripts: list[Transcript] = ()) -> None:
    """A 'build spoken' in the store (samples as its ingest stage, transcripts as its ASR stage, no audio), so a
    section reads it back with load_build_or_none(store) as from a real build."""
    for v in samples:
        store.put("ingest", "ingest-synth", v.id, v)
    for t in transcripts:
        store.put("asr", "asr-synth", t.item_id, t)
    manifest(store, "build spoken", {}, BUILD_STAGES)


def detect_run(store: Store, detector: str, task: str, inp: str, preds: dict[str, tuple[str, str | None]]) -> None:
    """``preds``: item id -> (gold, predicted); all on the test split."""
    fp = f"{detector}-{task}-{inp}"
    for i, (g, p) in preds.items():
        store.put(
            "detect",
            fp,
            i,
            Prediction(
                item_id=i,
                detector=detector,
                task=task,
                input=inp,
                split="test",
                gold=g,
                predicted=p,
                status="ok" if p else "unparsable",
            ),
        )
    # the build stages it read, as 'detect' records them (halluscope.current: a run on another build is stale)
    manifest(
        store, "detect", {"detector": detector, "task": task, "input": inp, "seed": 0}, {"detect": fp, **BUILD_STAGES}
    )


def spoken_judge(store: Store, judge: str, scores: dict[str, dict[str, int] | None]) -> None:
    fp = f"judge-{judge}"
    for i, s in scores.items():
        store.put("judge", fp, i, Judgement(item_id=i, judge=judge, status="ok" if s else "unscored", scores=s or {}))
    manifest(store, "build judge", {"judges": [judge]}, {f"judge:{judge}": fp})


def mishap_judge(store: Store, judge: str, verdicts: dict[str, str | None], texts: dict[str, str] | None = None) -> str:
    """``texts``: answer id -> the text each verdict read (its digest is stored, as 'mishap judge' does)."""
    fp = f"mjudge-{judge}"
    for aid, v in verdicts.items():
        store.put(
            "mishap.judge",
            fp,
            aid,
            GroundednessJudgement(
                answer_id=aid,
                judge=judge,
                status="ok" if v else "unscored",
                verdict=v,
                answer_sha256=text_digest(texts[aid]) if texts is not None else None,
            ),
        )
    manifest(store, "mishap judge", {"judge": judge}, {"judge": fp})
    return fp


def human(store: Store, aid: str, who: str, label: str, response: str | None = None) -> None:
    """``response``: the text labelled (its digest is stored, as the annotation app does)."""
    digest = text_digest(response) if response is not None else None
    store.save_label(MishapAnnotation(answer_id=aid, annotator=who, label=label, created=1.0, answer_sha256=digest))


def answer(store: Store, fp: str, qid: str, model: str, seed: int | None, text: str, key: str) -> MishapAnswer:
    a = MishapAnswer(
        id=f"{qid}~{model}~{'greedy' if seed is None else f's{seed}'}",
        question_id=qid,
        model=model,
        seed=seed,
        status="ok",
        text=text,
        call_key=key,
    )
    store.put("mishap.answers", fp, a.id, a)
    return a
