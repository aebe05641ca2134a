"""Balanced subsets for zero-shot decoders (seed 000, Table 3): seeded per (language, label) cell, stored in the
run, the same items for every model; audio clips filtered by length."""

from collections import Counter

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import Variant
from halluscope.core.store import Store
from halluscope.spoken.build import load_build
from halluscope.spoken.detect import detect
from halluscope.spoken.detect.subset import STAGE, Subset, balanced_subset
from support import fakes
from support.chat_server import ChatServer, Reply


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return fakes.spoken_run(tmp_path_factory.mktemp("subset"), langs=("en", "ru"))


def test_balanced_per_language_and_label_and_stored_for_every_model(run_dir):
    with ChatServer(lambda req, n: Reply(content='{"binary": "no"}')) as srv:
        a = detect(
            run_dir,
            detector="openai/model-a",
            task="binary",
            input="text",
            options={"base_url": srv.url, "max_retries": 0, "subset": 1},
        )
        b = detect(
            run_dir,
            detector="openai/model-b",
            task="binary",
            input="transcript",
            options={"base_url": srv.url, "max_retries": 0, "subset": 1},
        )
        assert sum(r["model"] == "model-a" for r in srv.requests) == len(a.predictions) == 4  # only the subset is asked
    assert set(a.predictions) == set(b.predictions)  # every model and input: the same items
    with Store(run_dir) as store:
        build = load_build(store)
        per = Counter((build.samples[k].language, p.gold) for k, p in a.predictions.items())
    assert set(per.values()) == {1} and len(per) == 4  # one per (language, label) cell
    import sqlite3

    db = sqlite3.connect(run_dir / "halluscope.sqlite")
    rows = db.execute("SELECT payload FROM results WHERE stage = ?", (STAGE,)).fetchall()
    db.close()
    assert len(rows) == 1  # drawn once, stored in the run, read back by the second model
    stored = Subset.model_validate_json(rows[0][0])
    assert (
        set(stored.ids) == set(a.predictions) and stored.per_class == 1 and stored.cells["en/original"]["chosen"] == 1
    )


def test_balanced_subset_is_seeded_and_reports_short_cells():
    items = [Variant.model_construct(id=f"en-{i}", language="en", label=i % 3 == 0) for i in range(30)] + [
        Variant.model_construct(id=f"kk-{i}", language="kk", label=i == 0) for i in range(5)
    ]
    gold = lambda v: "hallucinated" if v.label else "original"
    chosen, cells = balanced_subset(items, gold, per_class=4, seed=1)
    assert cells == {
        "en/hallucinated": {"available": 10, "chosen": 4},
        "en/original": {"available": 20, "chosen": 4},
        "kk/hallucinated": {"available": 1, "chosen": 1},
        "kk/original": {"available": 4, "chosen": 4},
    }
    assert [v.id for v in chosen] == [v.id for v in balanced_subset(items, gold, per_class=4, seed=1)[0]]
    assert [v.id for v in chosen] != [v.id for v in balanced_subset(items, gold, per_class=4, seed=2)[0]]
    dur = {v.id: (10.0 if v.id.endswith(("1", "2")) else 40.0) for v in items}
    short, _ = balanced_subset(items, gold, per_class=4, seed=1, duration=lambda v: dur[v.id], max_audio_s=30)
    assert short and all(dur[v.id] <= 30 for v in short)
    with pytest.raises(HalluscopeError, match="empty"):
        balanced_subset(items, gold, per_class=4, seed=1, duration=lambda v: 99.0, max_audio_s=30)


@pytest.mark.parametrize(
    "opts, words",
    [
        ({"subset": 0}, "-o subset"),
        ({"subset": "ten"}, "-o subset"),
        ({"subset_max_audio_s": 30}, "without -o subset"),
        ({"subset": 2, "subset_max_audio_s": -1}, "subset_max_audio_s"),
    ],
)
def test_bad_subset_options_stop_before_any_call(run_dir, opts, words):
    with ChatServer(lambda req, n: Reply(content='{"binary": "no"}')) as srv:
        with pytest.raises(HalluscopeError, match=words):
            detect(
                run_dir,
                detector="openai/m",
                task="binary",
                input="text",
                options={"base_url": srv.url, "max_retries": 0, **opts},
            )
        assert srv.count == 0
