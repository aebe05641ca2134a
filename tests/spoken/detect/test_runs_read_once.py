"""detect_runs reads a store's predictions once per state of the store: every report section shares the read, a
write by this connection or another reads again, and no caller's changes reach another caller."""

from halluscope.core.manifest import record_manifest
from halluscope.core.records import Prediction
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.spoken.detect.runs import detect_runs

SPEC = "openai/detector-a"


def _prediction(item: str) -> Prediction:
    return Prediction(
        item_id=item,
        detector=SPEC,
        task="binary",
        input="text",
        split="test",
        gold="original",
        predicted="original",
        status="ok",
        answer="original",
        zero_shot=True,
    )


def test_detect_runs_are_read_once_and_again_after_any_write(tmp_path):
    stage = Stage("detect", {"detector": SPEC, "task": "binary", "input": "text"}, ())
    build = {"ingest": "i", "generate": "g", "tts": "t", "asr": "a"}  # an empty build: the run read it
    with Store(tmp_path) as store:
        store.put(stage.name, stage.fingerprint, "a", _prediction("a"))
        record_manifest(store, command="build spoken", config={}, seeds={}, stages=build)
        record_manifest(
            store,
            command="detect",
            config={"detector": SPEC, "task": "binary", "input": "text", "seed": 0, "options": {}},
            seeds={"split": 0},
            stages={"detect": stage.fingerprint, **build},
        )
        first = detect_runs(store)
        assert [sorted(d.predictions) for d in first] == [["a"]]
        first[0].predictions.clear()  # a caller's own dict: the next caller still gets every prediction
        assert sorted(detect_runs(store)[0].predictions) == ["a"]

        store.put(stage.name, stage.fingerprint, "b", _prediction("b"))  # a write by this connection
        assert sorted(detect_runs(store)[0].predictions) == ["a", "b"]

        with Store(tmp_path, create=False, readonly=True) as reader:
            assert sorted(detect_runs(reader)[0].predictions) == ["a", "b"]
            store.put(stage.name, stage.fingerprint, "c", _prediction("c"))  # a write by another connection
            assert sorted(detect_runs(reader)[0].predictions) == ["a", "b", "c"]
