"""Numbers behind the report, laid out like seed 000's Table 1, Table 2 and its WER/CER figures."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES
from halluscope.core.store import Store
from halluscope.metrics.asr import score_asr
from halluscope.metrics.classification import majority_baseline, score_classification
from halluscope.report.sections import Section
from halluscope.spoken.build import BuildResult
from halluscope.spoken.detect.run import LABELS, gold
from halluscope.spoken.detect.splits import split_by_article

TYPE_ABBR = {"contradiction": "C", "fabrication": "F", "context_inconsistency": "I"}


@dataclass
class ReportData:
    run_dir: Path
    languages: list[str]
    dataset: list[dict]
    asr: list[dict]
    detection: list[dict]
    failures: list[dict]
    excluded: int
    manifest: dict = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    table7: list[dict] = field(default_factory=list)  # ASR systems on the same audio (spoken/report/speech.py)
    audio: list[dict] = field(default_factory=list)  # clip durations per language against the 30 s window


def _dataset_rows(build: BuildResult, languages: list[str]) -> list[dict]:
    rows = []
    for lang in [*languages, "all"]:
        vs = [v for v in build.samples.values() if lang == "all" or v.language == lang]
        alt = [v for v in vs if v.label == 1]
        audio = [build.audio[v.id] for v in vs if v.id in build.audio]
        row = {"language": lang, "original": sum(v.label == 0 for v in vs), "hallucinated": len(alt)}
        for t in TYPES:
            row[TYPE_ABBR[t]] = sum(v.type == t for v in alt)
        for s in SEVERITIES:
            row[s] = sum(v.severity == s for v in alt)
        row["total"] = len(vs)
        row["audio_clips"] = len(audio)
        row["audio_minutes"] = round(sum(a.duration_s for a in audio) / 60, 2)
        row["transcripts"] = sum(v.id in build.transcripts for v in vs)
        rows.append(row)
    return rows


def _asr_rows(build: BuildResult, languages: list[str]) -> list[dict]:
    rows = []
    for lang in [*languages, "all"]:
        ts = [t for t in build.transcripts.values() if lang == "all" or t.language == lang]
        score = score_asr(
            reference=[build.samples[t.item_id].text for t in ts],
            hypothesis=[t.text for t in ts],
            counts=[t.edits for t in ts],  # each transcript's own, kept when it was made
        )
        audio_s = sum(t.audio_duration_s for t in ts)
        rows.append(
            {
                "language": lang,
                **score.as_dict(),
                "rtf": round(sum(t.processing_s for t in ts) / audio_s, 3) if audio_s else None,
                "asr": sorted({t.asr for t in ts}),
            }
        )
    return rows


def _detection_rows(store: Store, build: BuildResult, languages: list[str]) -> list[dict]:
    from halluscope.spoken.detect.runs import detect_runs

    rows = []
    # one row label per distinct run: a run on a compared ASR system's transcripts is 'tfidf [transcripts=...]'
    for d in detect_runs(store):
        detector, task, input_, preds = d.key, d.task, d.input, d.predictions
        splits = split_by_article(build.samples.values(), seed=d.run.config.seed)
        labels = LABELS[task]
        for lang in [*languages, "all"]:
            test = [
                p
                for p in preds.values()
                if p.split == "test"
                and not p.zero_shot  # zero-shot: Table 3
                and (lang == "all" or build.samples[p.item_id].language == lang)
            ]
            if not test:
                continue
            train = [
                gold(v, task)
                for v in build.samples.values()
                if splits.get(v.article_id) == "train"
                and v.id in build.transcripts
                and (task == "binary" or v.label == 1)
                and (lang == "all" or v.language == lang)
            ]
            score = score_classification(
                reference=[p.gold for p in test],
                hypothesis=[p.predicted for p in test],
                labels=labels,
                clusters=[build.samples[p.item_id].article_id for p in test],
            )
            base = majority_baseline(train=train, test=[p.gold for p in test], labels=labels)
            rows.append(
                {
                    "detector": detector,
                    "task": task,
                    "input": input_,
                    "language": lang,
                    "split": "O" if input_ == "text" else "T",
                    **score.as_dict(),
                    "majority_accuracy": base.accuracy,
                    "majority_macro_f1": base.macro_f1,
                }
            )
    return rows


def o_vs_t(detection: list[dict]) -> list[dict]:
    """Table 2 layout: one row per detector x language x task with O and T side by side."""
    cells: dict[tuple, dict] = defaultdict(dict)
    for r in detection:
        cells[(r["detector"], r["language"], r["task"])][r["split"]] = r
    out = []
    for (det, lang, task), by in sorted(cells.items(), key=lambda kv: (kv[0][0], _lang_order(kv[0][1]), kv[0][2])):
        o, t = by.get("O"), by.get("T")
        base = o or t
        out.append(
            {
                "detector": det,
                "language": lang,
                "task": task,
                "n_test": base["n"],
                "O_acc": o and o["accuracy"],
                "O_f1": o and o["macro_f1"],
                "O_f1_ci": o and o["macro_f1_ci"],
                "T_acc": t and t["accuracy"],
                "T_f1": t and t["macro_f1"],
                "T_f1_ci": t and t["macro_f1_ci"],
                "majority_acc": base["majority_accuracy"],
                "majority_f1": base["majority_macro_f1"],
                "delta_f1": (o["macro_f1"] - t["macro_f1"]) if o and t else None,
            }
        )
    return out


def _lang_order(lang: str) -> int:
    return list(LANGUAGES).index(lang) if lang in LANGUAGES else len(LANGUAGES)
