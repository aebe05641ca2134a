import sqlite3

import pytest

from halluscope.core.errors import HalluscopeError, ItemError
from halluscope.core.records import Article, Variant
from halluscope.core.stages import Stage, run_stage
from halluscope.core.store import Store


def _variant(i: int) -> Variant:
    return Variant(id=f"a{i}", article_id=f"a{i}", language="en", text=f"text {i}", label=0, generator="original")


def test_store_is_wal_and_roundtrips_records(tmp_path):
    with Store(tmp_path) as store:
        mode = store._db.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        store.put("s", "fp", "a1", _variant(1))
        store.fail("s", "fp", "a2", "boom")
        assert store.results("s", "fp", Variant) == {"a1": _variant(1)}
        assert store.failures("s", "fp") == {"a2": "boom"}
        assert store.done_ids("s", "fp") == {"a1"}
        # a different fingerprint is a different key
        assert store.done_ids("s", "other") == set()


def test_records_reject_unknown_fields_and_bad_labels():
    with pytest.raises(Exception):
        Variant(id="x", article_id="x", language="en", text="t", label=2, generator="g")
    with pytest.raises(Exception):
        Article(id="x", language="de", text="t")
    with pytest.raises(Exception):
        Article(id="x", language="en", text="t", langauge="en")


def test_stage_resumes_without_redoing_and_records_failures(tmp_path):
    calls: list[str] = []

    def fn(i: int) -> Variant:
        calls.append(f"a{i}")
        if i == 3:
            raise ItemError("item 3 is bad")
        return _variant(i)

    stage = Stage("gen", {"k": 1})
    items = [(f"a{i}", i) for i in range(5)]
    with Store(tmp_path) as store:
        first = run_stage(store, stage, items, fn, Variant, quiet=True)
        assert first.computed == 4 and first.reused == 0
        assert first.failed == {"a3": "item 3 is bad"}
        calls.clear()
        second = run_stage(store, stage, items, fn, Variant, quiet=True)
        # only the failed item is retried; finished items are not redone
        assert calls == ["a3"]
        assert second.reused == 4 and set(second.results) == {"a0", "a1", "a2", "a4"}
        calls.clear()
        third = run_stage(store, stage, items, fn, Variant, quiet=True, retry_failed=False)
        assert calls == [] and third.failed == {"a3": "item 3 is bad"}
        # a changed config is a new fingerprint: everything runs again under its own key
        other = run_stage(store, Stage("gen", {"k": 2}), items[:2], fn, Variant, quiet=True)
        assert other.computed == 2
        assert store.attempts("gen", stage.fingerprint)["a0"] == 1


def test_unexpected_exceptions_are_recorded_with_their_type(tmp_path):
    def fn(_: int) -> Variant:
        raise ZeroDivisionError("division by zero")

    with Store(tmp_path) as store:
        s = run_stage(store, Stage("x", {}), [("a", 1)], fn, Variant, quiet=True)
    assert s.failed == {"a": "ZeroDivisionError: division by zero"}


def test_duplicate_item_ids_are_refused(tmp_path):
    with Store(tmp_path) as store, pytest.raises(HalluscopeError, match="duplicate item ids"):
        run_stage(store, Stage("x", {}), [("a", 1), ("a", 2)], lambda i: _variant(i), Variant, quiet=True)


def test_store_has_no_duplicate_rows_per_key(tmp_path):
    with Store(tmp_path) as store:
        for _ in range(3):
            store.put("s", "fp", "a1", _variant(1))
    n = sqlite3.connect(tmp_path / "halluscope.sqlite").execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert n == 1
