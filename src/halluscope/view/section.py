"""Report section: speech-quality ratings made in the viewer (seed 000, section 3.4)."""

from __future__ import annotations

from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table
from halluscope.spoken.build import load_build_or_none
from halluscope.view.quality import excluded_items, latest_quality, quality_tables

RATING_COLS = [
    ("language", "Lang"),
    ("clips", "clips"),
    ("ratings", "ratings"),
    ("intelligibility_fully", "fully intell."),
    ("intelligibility_mostly", "mostly"),
    ("intelligibility_poorly", "poorly"),
    ("intelligibility_unintelligible", "unintell."),
    ("fidelity_faithful", "faithful"),
    ("fidelity_minor", "minor discr."),
    ("fidelity_major", "major discr."),
    ("excluded", "excluded"),
]
AGREE_COLS = [
    ("pair", "annotators"),
    ("n", "n"),
    ("intelligibility_agreement", "intell. agree"),
    ("intelligibility_kappa", "intell. kappa (quad.)"),
    ("fidelity_agreement", "fidelity agree"),
    ("fidelity_kappa", "fidelity kappa (quad.)"),
    ("excluded_agreement", "excl. agree"),
    ("excluded_kappa", "excl. kappa"),
]


@register_section
def quality_section(store: Store) -> Section | None:
    build = load_build_or_none(store)
    latest = latest_quality(store.run_dir) if build is not None else None
    if not latest:
        return None
    tables = quality_tables(latest, {k: v.language for k, v in build.samples.items()})
    gone = excluded_items(store.run_dir)
    intro = (
        "Shares of the latest rating per clip and annotator, made in 'halluscope view'. Excluded clips: "
        f"{len(gone)}; 'halluscope view RUN --drop-excluded' writes dataset/samples.kept.parquet without them."
    )
    return Section(
        "Speech quality (Lost in Speech section 3.4)",
        [
            intro,
            Table("speech_quality", RATING_COLS, tables["speech_quality.csv"], title="Ratings per language"),
            Table(
                "speech_quality_agreement",
                AGREE_COLS,
                tables["speech_quality_agreement.csv"],
                title="Agreement between annotators",
                empty="one annotator: no agreement to report",
            ),
        ],
    )
