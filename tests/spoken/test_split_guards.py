"""Split guards (issue 29): after the real-world move and the plain split, each language's train/dev/test is
re-checked; a too-small split stops with one line naming the language and the option that fixes it."""

import json

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import Variant
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect.splits import guard_splits, split_counts
from halluscope.spoken.realworld import build_realworld
from support.hostile_helpers import assert_clean_failure, run_cli


def v(id, art, lang="ru", label=0):
    return Variant(id=id, article_id=art, language=lang, text="t", label=label, generator="rules")


def test_guard_names_language_split_and_fix():
    items = [v("a", "a"), v("a~x", "a", label=1), v("b", "b"), v("c", "c")]
    splits = {"a": "train", "b": "test", "c": "test"}
    assert split_counts(items, splits) == {"ru": {"train": 2, "dev": 0, "test": 2}}
    with pytest.raises(
        HalluscopeError,
        match=r"language 'ru' has no dev items after MOVE \(items per split: "
        r"train 2, dev 0, test 2\)\. Fix: FIX",
    ):
        guard_splits(items, splits, where="run", change="MOVE", fix="FIX")
    splits["c"] = "dev"
    guard_splits(items, splits, where="run", change="MOVE", fix="FIX")  # all three splits
    guard_splits([x for x in items if x.id != "a"], splits, where="run", change="MOVE", fix="FIX")  # one class


@pytest.fixture(scope="module")
def small_realworld(tmp_path_factory):
    from support.tiny_encoder import register_text_speech

    register_text_speech()
    tmp = tmp_path_factory.mktemp("guard")
    cfg = BuildConfig(
        corpus="demo",
        langs=("ru",),
        tts="test-bytes",
        asr="test-bytes",
        seed=2,
        rewrites_per_article=1,
        articles_per_language=5,
    )
    build_spoken(tmp / "run", cfg, quiet=True)
    rows = [{"id": f"f{i}", "language": "ru", "text": f"Ложь номер {i}.", "topic": "economy"} for i in range(4)]
    fakes = tmp / "fakes.jsonl"
    fakes.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    build_realworld(tmp / "run", fakes, quiet=True)
    return tmp / "run"


def test_realworld_detect_that_empties_a_split_stops_with_one_line(small_realworld, capsys, monkeypatch):
    # 4 of 5 ru articles become test negatives: dev or train is empty (was 'Found array with 0 sample(s)')
    code, out = run_cli(
        capsys, monkeypatch, "detect", small_realworld, "--detector", "tfidf", "--input", "all", "-o", "realworld=true"
    )
    assert_clean_failure(
        code,
        out,
        "language 'ru' has no",
        "-o realworld=true moved the matched truthful negatives",
        "Fix: pass fewer fakes",
        "--articles-per-language",
    )
    assert "Found array" not in out
