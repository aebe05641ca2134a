"""The hostile-input suite's fixtures (helpers: hostile_helpers.py; instant fake backends: hostile_fakes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import hostile_fakes  # noqa: E402
from support.corpus_fixtures import write_jsonl  # noqa: E402
from support.hostile_helpers import EN  # noqa: E402

hostile_fakes.register()


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two built runs with instant fakes: 'ok' (4 English articles) and 'few' (2 articles: too few to split)."""
    from halluscope.spoken.build import BuildConfig, build_spoken

    root = tmp_path_factory.mktemp("tiny")
    corpus = write_jsonl(root / "c.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN)])
    runs = {}
    for name, n in (("ok", None), ("few", 2)):
        runs[name] = root / name
        build_spoken(
            runs[name],
            BuildConfig(
                corpus=str(corpus),
                langs=("en",),
                tts="hostile-tts",
                asr="hostile-asr",
                rewrites_per_article=1,
                articles_per_language=n,
            ),
            quiet=True,
        )
    return runs
