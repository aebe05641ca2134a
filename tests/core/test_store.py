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


def test_the_store_is_the_gateway_for_labels_ratings_timings_and_read_only_views(tmp_path):
    import threading

    from halluscope.core.records import MishapAnnotation
    from halluscope.core.store import SaveConflict

    with Store(tmp_path) as store:
        store.put("s", "fp", "a1", _variant(1))
        store.log_call(key="k", backend="b", request={}, response={"text": "old"}, status="ok", latency_s=0.1)
        store.log_call(key="k", backend="b", request={}, response=None, status="error", latency_s=0.2)
    with Store(tmp_path, create=False, readonly=True) as ro:
        assert ro.labels() == [] and ro.ratings() == []  # no tables yet, and none made
        assert ro.latest_call("k") == (None, "error") and ro.latest_call("nope") is None
        assert set(ro.updated("s", "fp")) == {"a1"}
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro._db.execute("DELETE FROM results")
    names = {r[0] for r in sqlite3.connect(tmp_path / "halluscope.sqlite").execute("SELECT name FROM sqlite_master")}
    assert "mishap_annotations" not in names and "speech_quality" not in names

    with Store(tmp_path, create=False, lock=False, threads=True) as store:

        def label(i: int, text: str = "grounded") -> MishapAnnotation:
            return MishapAnnotation(answer_id=f"a{i % 3}", annotator="x", label=text, created=float(i))

        # labels saved from several threads at once: each save id stored once
        threads = [threading.Thread(target=store.save_label, args=(label(i), f"save-{i:04d}")) for i in range(20)]
        threads += [threading.Thread(target=store.save_label, args=(label(i), f"save-{i:04d}")) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(store.labels()) == 20 and set(store.latest_labels()) == {("a0", "x"), ("a1", "x"), ("a2", "x")}
        assert store.save_label(label(0), "save-0000")[1] is False
        with pytest.raises(SaveConflict, match="different label"):
            store.save_label(label(0, "hallucinated"), "save-0000")
        row = {
            "item_id": "v1",
            "annotator": "x",
            "intelligibility": "fully",
            "fidelity": "minor",
            "excluded": True,
            "note": "",
            "created": 1.0,
        }
        assert store.save_quality(row, "q-000001") == (row, True)
        assert store.save_quality(row, "q-000001")[1] is False
        with pytest.raises(HalluscopeError, match="different rating"):
            store.save_quality({**row, "fidelity": "major"}, "q-000001")
    with Store(tmp_path, create=False, readonly=True) as ro:
        assert len(ro.labels()) == 20 and ro.ratings() == [row]
