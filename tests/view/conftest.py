"""A small real run for the viewer: rules rewrites -> espeak-ng -> Whisper base on three English articles, TF-IDF
detectors on O and T, a zero-shot run whose stored replies carry markup, and the report."""

from pathlib import Path

import pytest

from support.view_helpers import add_zero_shot_run


@pytest.fixture(scope="session")
def viewrun(tmp_path_factory) -> Path:
    from halluscope.report import write_report
    from halluscope.spoken.build import BuildConfig, build_spoken
    from halluscope.spoken.detect import detect
    from support.corpus_fixtures import EN, write_jsonl

    tmp = tmp_path_factory.mktemp("view")
    corpus = write_jsonl(
        tmp / "corpus.jsonl",
        [{"id": f"en-{i}", "language": "en", "text": t, "date": "2024-05-01"} for i, t in enumerate(EN[:3], 1)],
    )
    run = tmp / "run"
    build_spoken(run, BuildConfig(corpus=str(corpus), langs=("en",), rewrites_per_article=1, seed=5), quiet=True)
    for inp in ("text", "transcript"):
        detect(run, task="binary", input=inp)
    add_zero_shot_run(run)
    write_report(run)
    return run
