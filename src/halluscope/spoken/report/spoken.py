"""The spoken build's core section of the report (seed 000): Table 1, ASR error, Table 7, audio durations,
Table 2 (O vs T) with its plots, and the build's failures, as Tables built from one ReportData."""

from __future__ import annotations

from pathlib import Path

from halluscope.core.records import LANGUAGES
from halluscope.core.store import Store
from halluscope.report.links import asr_link, dataset_link, table2_link
from halluscope.report.plots import asr_vs_degradation_plot, o_vs_t_plot, wer_cer_plot
from halluscope.report.sections import Section, build_sections, register_section
from halluscope.report.table import Figure, Table
from halluscope.spoken.build import load_build_or_none
from halluscope.spoken.report.speech import AUDIO_COLS, AUDIO_NOTE, TABLE7_COLS, TABLE7_NOTE, audio_rows, table7_rows
from halluscope.spoken.report.tables import TYPE_ABBR, ReportData, _asr_rows, _dataset_rows, _detection_rows, o_vs_t

TITLE = "Spoken benchmark (Lost in Speech): dataset, ASR and detection"
DATASET_COLS = [
    ("language", "Lang"),
    ("original", "Orig"),
    ("hallucinated", "Halluc"),
    *[(abbr, abbr) for abbr in TYPE_ABBR.values()],
    ("mild", "Mild"),
    ("moderate", "Moderate"),
    ("severe", "Severe"),
    ("total", "Total"),
    ("audio_minutes", "Audio min"),
    ("transcripts", "Transcripts"),
]
ASR_COLS = [
    ("language", "Lang"),
    ("wer", "WER"),
    ("cer", "CER"),
    ("n", "n"),
    ("ref_words", "ref words"),
    ("rtf", "ASR time / audio time"),
    ("cleaner", "cleaner"),
]
ASR_NOTE = (
    "Corpus-level WER/CER after App. A.4's cleaning, identical across languages: lowercase; punctuation, quotes "
    "and brackets removed as characters (bracketed words are kept); noise tags ([music], <unk>) and timestamps "
    "removed; hyphens to spaces; digits removed (section 3.3). 'cleaner' names what cleaned each figure's text: "
    "rules = the rule-based cleaner."
)
TABLE2_COLS = [
    ("detector", "Detector"),
    ("language", "Lang"),
    ("task", "Task"),
    ("n_test", "n test"),
    ("O_acc", "O Acc"),
    ("O_f1", "O F1"),
    ("O_f1_ci", "O F1 95% CI"),
    ("T_acc", "T Acc"),
    ("T_f1", "T F1"),
    ("T_f1_ci", "T F1 95% CI"),
    ("majority_acc", "Maj Acc"),
    ("majority_f1", "Maj F1"),
    ("delta_f1", "F1 O-T"),
]
TABLE2_NOTE = (
    "Accuracy and macro-F1 on the test split (split by source article); unparsable predictions count as "
    "errors. Maj = majority-class baseline from the training split. CI = percentile bootstrap over source articles "
    "(an original and its rewrites resampled together)."
)
FAILURE_COLS = [("stage", "Stage"), ("item_id", "Item"), ("reason", "Reason")]


def spoken_section(data: ReportData) -> Section:
    table2 = o_vs_t(data.detection)
    failed = (
        (
            f"{len(data.failures)} item(s) failed; {data.excluded} sample(s) have no transcript and are excluded "
            "from O and T alike."
        )
        if data.failures or data.excluded
        else "No item failed."
    )
    blocks: list = [
        Table(
            "table1_dataset",
            DATASET_COLS,
            data.dataset,
            title="Table 1: dataset summary",
            link=dataset_link,
            notes=(
                "Type: C = contradiction, F = fabrication, I = context inconsistency. Table cells link to the "
                "items behind them in the viewer exported beside this report (halluscope view RUN --export "
                "RUN/view).",
            ),
        ),
        Table(
            "asr_wer_cer",
            ASR_COLS,
            data.asr,
            link=asr_link,
            notes=(ASR_NOTE,),
            title="ASR error (corpus level, Lost in Speech section 3.3 / App. A.4 normalisation)",
        ),
        Figure(wer_cer_plot(data.asr), "WER and CER by language"),
        Table(
            "table7_asr_systems",
            TABLE7_COLS,
            data.table7,
            title="Table 7: ASR systems on the same audio",
            notes=(TABLE7_NOTE,),
            link=asr_link,
            shown=len({r["asr"] for r in data.table7}) > 1,
        ),
        Table("audio_durations", AUDIO_COLS, data.audio, title="Audio durations", notes=(AUDIO_NOTE,)),
        Table(
            "table2_detection",
            TABLE2_COLS,
            table2,
            title="Table 2: detection, original text (O) vs ASR transcripts (T)",
            notes=(TABLE2_NOTE,),
            link=table2_link,
            empty="no detection runs yet: run `halluscope detect`",
        ),
        Figure(o_vs_t_plot(table2, data.languages), "O vs T macro-F1 by language and task"),
        Figure(asr_vs_degradation_plot(data.asr, table2, data.languages), "WER vs O-T macro-F1 drop"),
        Table(
            "detection_long",
            [],
            data.detection,
            title="Detection scores per detector x task x input x language",
            shown=False,
        ),
        Table(
            "failures",
            FAILURE_COLS,
            data.failures,
            title="Failures",
            notes=(failed,),
            shown=bool(data.failures),
            empty="No item failed.",
            limit=500,
        ),
    ]
    if not data.failures:
        blocks.append(f"Failures: {failed}")
    return Section(TITLE, blocks)


def report_data(store: Store) -> ReportData | None:
    """The numbers of the spoken build's core tables, from the store (None: the run has no spoken build)."""
    manifest = store.latest_manifest("build spoken")
    build = load_build_or_none(store)  # the one read of the build: the sections share it
    if manifest is None or build is None:
        return None
    present = {v.language for v in build.samples.values()}
    languages = [lang for lang in LANGUAGES if lang in present]
    failures = [
        {"stage": stage, "item_id": k, "reason": r}
        for stage, fs in build.failures.items()
        for k, r in sorted(fs.items())
    ]
    excluded = sum(1 for k in build.samples if k not in build.transcripts)
    return ReportData(
        run_dir=store.run_dir,
        languages=languages,
        dataset=_dataset_rows(build, languages),
        asr=_asr_rows(build, languages),
        detection=_detection_rows(store, build, languages),
        failures=failures,
        excluded=excluded,
        manifest=manifest.model_dump(),
        table7=table7_rows(build, languages),
        audio=audio_rows(build, languages),
    )


@register_section
def spoken_core(store: Store) -> Section | None:
    """Lost in Speech's core section (the first of every report that has a spoken build)."""
    data = report_data(store)
    return None if data is None else spoken_section(data)


def collect(run_dir: str | Path) -> ReportData:
    """Every number of the spoken build's core tables (empty without a build) and every section of the run's report
    (report.sections.build_sections: the same list 'halluscope report' writes)."""
    with Store(run_dir) as store:
        data = report_data(store) or ReportData(
            run_dir=Path(run_dir), languages=[], dataset=[], asr=[], detection=[], failures=[], excluded=0
        )
        data.run_dir = Path(run_dir)
        data.sections = build_sections(store)
        return data
