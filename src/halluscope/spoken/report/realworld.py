"""Report section: the real-world split (seed 000, 3.2 and 4.3): summary, Table 4, Table 5, ru/kk disagreement.

Every figure comes from the dedicated 'detect ... -o realworld=true' runs (stage 'detect_realworld'),
whose train/dev pool excludes the matched truthful negatives; they are not comparable to Table 2.
"""

from __future__ import annotations

from collections import defaultdict

from halluscope.core.records import Prediction
from halluscope.core.store import Store
from halluscope.metrics.asr import score_asr
from halluscope.metrics.classification import score_classification
from halluscope.metrics.rates import flag_rates
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table
from halluscope.spoken.build import BuildResult, load_build_or_none
from halluscope.spoken.provenance import CELLS
from halluscope.spoken.realworld import DETECT_STAGE, RealWorldSplit, load_realworld
from halluscope.spoken.report.paired import latest_detect_runs

BINARY = ("original", "hallucinated")
SPLIT_COLS = [
    ("language", "Lang"),
    ("fakes", "Fakes"),
    ("native", "Native"),
    ("translated", "Translated"),
    ("near_parallel", "Near-parallel"),
    ("negatives", "Truthful negatives"),
    ("faithful", "Faithful LLM"),
    ("transcripts", "Transcripts"),
    ("fake_wer", "Fake WER"),
    ("mean_similarity", "Match cos"),
]
T4_COLS = [
    ("detector", "Detector"),
    ("language", "Lang"),
    ("data", "Data"),
    ("O_n", "O n"),
    ("O_acc", "O Acc"),
    ("O_f1", "O F1"),
    ("O_f1_ci", "O F1 95% CI"),
    ("T_n", "T n"),
    ("T_acc", "T Acc"),
    ("T_f1", "T F1"),
    ("T_f1_ci", "T F1 95% CI"),
]
T5_COLS = [
    ("detector", "Detector"),
    ("language", "Lang"),
    ("input", "Input"),
    *[(f"{c}", c.replace("/", " / ").replace("llm", "LLM").replace("human", "Human")) for c in CELLS],
    *[(f"{c}_n", f"n {c}") for c in CELLS],
]
PAIR_COLS = [
    ("detector", "Detector"),
    ("input", "Input"),
    ("pairs", "ru/kk pairs"),
    ("disagree", "Disagree"),
    ("rate", "Disagreement rate"),
    ("near_parallel_pairs", "Near-parallel pairs"),
    ("near_parallel_rate", "Near-parallel rate"),
]


def split_rows(build: BuildResult, rw: RealWorldSplit) -> list[dict]:
    rows = []
    for lang in sorted({f.language for f in rw.fakes.values()}, key=["ru", "kk"].index):
        fakes = {k: f for k, f in rw.fakes.items() if f.language == lang}
        ts = [rw.transcripts[k] for k in fakes if k in rw.transcripts]
        wer = (
            score_asr(reference=[fakes[t.item_id].text for t in ts], hypothesis=[t.text for t in ts]).wer
            if ts
            else None
        )
        ms = [m for m in rw.matches.values() if m.language == lang]
        rows.append(
            {
                "language": lang,
                "fakes": len(fakes),
                "native": sum(not f.translated for f in fakes.values()),
                "translated": sum(f.translated for f in fakes.values()),
                "near_parallel": sum(f.near_parallel for f in fakes.values()),
                "negatives": len(ms),
                "faithful": sum(v.language == lang for v in rw.faithful.values()),
                "transcripts": sum(t.language == lang for t in rw.transcripts.values()),
                "fake_wer": wer,
                "mean_similarity": sum(m.similarity for m in ms) / len(ms) if ms else None,
            }
        )
    return rows


def _score(preds: list[Prediction], clusters: list[str] | None = None) -> dict:
    """Accuracy and macro-F1; the interval resamples ``clusters`` (source articles) whole where given."""
    if not preds:
        return {"n": 0, "acc": None, "f1": None, "f1_ci": None}
    s = score_classification(
        reference=[p.gold for p in preds], hypothesis=[p.predicted for p in preds], labels=BINARY, clusters=clusters
    )
    return {"n": s.n, "acc": s.accuracy, "f1": s.macro_f1, "f1_ci": list(s.macro_f1_ci) if s.macro_f1_ci else None}


def realworld_tables(store: Store, build: BuildResult, rw: RealWorldSplit) -> tuple[list[dict], list[dict], list[dict]]:
    """Table 4 rows, Table 5 rows and the ru/kk disagreement rows."""
    runs = latest_detect_runs(store, command="detect realworld", stage=DETECT_STAGE)
    negatives = rw.negatives
    langs = sorted({f.language for f in rw.fakes.values()}, key=["ru", "kk"].index)
    t4, t5, pairs = [], [], []
    detectors = sorted({det for det, _, _ in runs})
    for det in detectors:
        by_input = {inp: preds for (d, _, inp), preds in runs.items() if d == det}
        for lang in langs:
            real_ids = {k for k, f in rw.fakes.items() if f.language == lang} | {
                a for a, lg in negatives.items() if lg == lang
            }
            for data in ("Synth (test)", "Real"):
                row: dict = {"detector": det, "language": lang, "data": data}
                for inp, tag in (("text", "O"), ("transcript", "T")):
                    preds = by_input.get(inp, {})
                    if data == "Real":
                        sel = [p for i, p in preds.items() if i in real_ids]
                    else:
                        sel = [
                            p
                            for i, p in preds.items()
                            if p.split == "test" and i in build.samples and build.samples[i].language == lang
                        ]
                    s = _score(sel, None if data == "Real" else [build.samples[p.item_id].article_id for p in sel])
                    row.update(
                        {f"{tag}_n": s["n"], f"{tag}_acc": s["acc"], f"{tag}_f1": s["f1"], f"{tag}_f1_ci": s["f1_ci"]}
                    )
                t4.append(row)
            for inp, preds in sorted(by_input.items()):
                cells = {
                    "human/truthful": [a for a, lg in negatives.items() if lg == lang],
                    "human/false": [k for k, f in rw.fakes.items() if f.language == lang],
                    "llm/truthful": [k for k, v in rw.faithful.items() if v.language == lang],
                    "llm/false": [
                        i
                        for i, p in preds.items()
                        if p.split == "test"
                        and i in build.samples
                        and build.samples[i].label == 1
                        and build.samples[i].language == lang
                    ],
                }
                rates = flag_rates(predictions={i: p.predicted for i, p in preds.items()}, cells=cells)
                t5.append(
                    {
                        "detector": det,
                        "language": lang,
                        "input": inp,
                        **{c: rates[c].rate for c in CELLS},
                        **{f"{c}_n": rates[c].n for c in CELLS},
                    }
                )
        for inp, preds in sorted(by_input.items()):
            stories: dict[str, dict[str, tuple[str | None, bool]]] = defaultdict(dict)
            for k, f in rw.fakes.items():
                if f.pair_id and k in preds:
                    stories[f.pair_id][f.language] = (preds[k].predicted, f.near_parallel)
            both = [s for s in stories.values() if {"ru", "kk"} <= set(s)]
            diff = [s["ru"][0] != s["kk"][0] for s in both]
            near = [s["ru"][0] != s["kk"][0] for s in both if s["ru"][1] or s["kk"][1]]
            pairs.append(
                {
                    "detector": det,
                    "input": inp,
                    "pairs": len(both),
                    "disagree": sum(diff),
                    "rate": sum(diff) / len(diff) if diff else None,
                    "near_parallel_pairs": len(near),
                    "near_parallel_rate": sum(near) / len(near) if near else None,
                }
            )
    return t4, t5, pairs


T4_NOTE = (
    "Binary detection on the synthetic test split (augmented with the matched truthful negatives) vs the "
    "real-world split (fakes + the same negatives), from the dedicated run whose train/dev pool excludes "
    "the negatives (`detect ... -o realworld=true`); not comparable to Table 2. O and T columns use detectors "
    "trained on original text and on transcripts over identical ids; n is the number of predicted items."
)
T5_NOTE = (
    'Share of items predicted "hallucinated". Human/Truthful = matched truthful negatives; Human/False = '
    "fact-checked fakes; LLM/Truthful = faithful LLM rewrites of the same negatives; LLM/False = synthetic "
    "hallucinations of the test split. n per cell is the coverage (items with a prediction)."
)
PAIR_NOTE = (
    "Share of ru/kk fake pairs (same pair_id) whose two versions get different predictions; near-parallel "
    "= pairs flagged as independently fact-checked in both languages."
)


@register_section
def realworld_section(store: Store) -> Section | None:
    build = load_build_or_none(store)
    rw = load_realworld(store) if build is not None else None
    if rw is None:
        return None
    t4, t5, pairs = realworld_tables(store, build, rw)
    blocks: list = [
        Table(
            "realworld_split", SPLIT_COLS, split_rows(build, rw), title="Real-world split (Lost in Speech section 3.2)"
        )
    ]
    none = "no real-world detection runs yet: run `halluscope detect RUN --detector ... --input all -o realworld=true`"
    blocks += [
        Table(
            "table4_realworld",
            T4_COLS,
            t4,
            title="Table 4: synthetic test vs real-world (binary)",
            notes=(T4_NOTE,),
            empty=none,
        ),
        Table(
            "table5_provenance",
            T5_COLS,
            t5,
            title="Table 5: provenance x veracity flag rates",
            notes=(T5_NOTE,),
            shown=bool(t4),
        ),
        Table(
            "realworld_pair_disagreement",
            PAIR_COLS,
            pairs,
            title="Cross-lingual stability on parallel fakes",
            notes=(PAIR_NOTE,),
            shown=bool(t4),
        ),
    ]
    return Section("Real-world split and provenance (Tables 4 and 5)", blocks)
