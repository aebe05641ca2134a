import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from support import REALDATA  # noqa: E402 - real material nobody on the project wrote
from support.corpus_fixtures import EN, KK, RU, write_jsonl  # noqa: E402


@pytest.fixture
def tiny_rows() -> list[dict]:
    rows = []
    for lang, texts in (("en", EN[:3]), ("ru", RU), ("kk", KK)):
        for i, text in enumerate(texts, start=1):
            rows.append(
                {
                    "id": f"{lang}-{i}",
                    "language": lang,
                    "text": text,
                    "outlet": "test",
                    "date": "2024-05-01",
                    "topic": "economy",
                }
            )
    return rows


@pytest.fixture
def tiny_corpus(tmp_path: Path, tiny_rows: list[dict]) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", tiny_rows)


@pytest.fixture
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.skip(f"real data folder {REALDATA} is absent")
    return REALDATA
