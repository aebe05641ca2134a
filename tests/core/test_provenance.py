"""core/provenance.py on its own: the one consistency rule, and records stored before digests were kept (a store
written by older code, and verdicts and labels rewritten without their digest): upgraded where their stage keys or
times say what they read, stale 'unknown' otherwise, never mixed in."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from halluscope.core.provenance import differs
from halluscope.core.records import GroundednessJudgement, MishapAnnotation
from halluscope.core.runs import latest_runs
from halluscope.core.store import Store
from halluscope.current import select, tables
from halluscope.spoken.detect.runs import detect_runs
from support import scripted
from support.chat_server import ChatServer, Reply

OLD = Path(__file__).parent / "data" / "store_before_renames"


def test_the_rule_compares_every_digest_a_record_stored():
    assert differs({"texts": "a", "split": "b"}, {"texts": "a", "split": "b", "audio": "c"}) is None
    kind, why = differs({"texts": "a", "split": "b"}, {"texts": "a", "split": "x"})
    assert kind == "changed" and why.startswith("split read b")
    assert differs({}, {"texts": "a"})[0] == "unknown" and differs(None, {})[0] == "unknown"


def test_a_detect_run_stored_before_digests_is_upgraded_by_the_build_stages_it_recorded(tmp_path):
    shutil.copytree(OLD / "run", tmp_path / "run")
    with Store(tmp_path / "run", create=False) as store:
        assert not store.latest_manifest("detect").inputs  # written before digests were kept
        chosen = select(store)
        assert set(chosen) == set(tables())
        assert len(chosen["detect"].current) == 1 and not chosen["detect"].stale
        assert [d.run for d in detect_runs(store)] == list(chosen["detect"].current.values())
        # the build it recorded is gone: the run is stale, with the command that reruns it
        build = store.latest_manifest("build spoken")
        moved = build.model_copy(update={"stages": {**build.stages, "generate": "0" * 16}})
        store.add_manifest(moved)
        store.memo.clear()
        chosen = select(store, "detect")["detect"]
        assert not chosen.current and [s.kind for s in chosen.stale] == ["changed"]
        assert "generate" in chosen.stale[0].why and chosen.stale[0].command.startswith("halluscope detect ")
        assert detect_runs(store) == [] and len(latest_runs(store, "detect")) == 1  # the one run, but not current


def _cut(state):
    base = scripted.make_script(state)

    def script(req, n):
        reply = base(req, n)
        if req["model"] == "alm" and (req.get("max_tokens") or 512) < 16:
            return Reply(content=" ".join((reply.content or "").split()[: req["max_tokens"]]))
        return reply

    return script


@pytest.fixture
def old_mishap(tmp_path, monkeypatch):
    """A judged, labelled scripted run whose verdicts and labels carry no digest (as older code stored them)."""
    from halluscope.mishap.annotate import annotation_items
    from halluscope.mishap.judge import STAGE

    run = scripted.build_run(tmp_path, monkeypatch, seeds=(), per_category=1)
    items, _ = annotation_items(run)
    with Store(run) as store:
        fp = store.latest_manifest("mishap judge").stages["judge"]
        for k, j in store.results(STAGE, fp, GroundednessJudgement).items():
            store.put(STAGE, fp, k, j.model_copy(update={"answer_sha256": None, "prompt": None}))
        for it in items:
            store.save_label(
                MishapAnnotation(answer_id=it["id"], annotator="old", label="grounded", created=time.time())
            )
    return run, len(items)


def test_verdicts_and_labels_without_digests_are_upgraded_then_stale_unknown_once_the_texts_change(
    old_mishap, monkeypatch
):
    from halluscope.mishap.answers import collect_answers
    from halluscope.mishap.judge import load_judgements
    from halluscope.mishap.labels import human_labels

    run, n = old_mishap
    with Store(run) as store:
        chosen = select(store, "verdicts", "labels")
        assert len(chosen["verdicts"].current) == n and len(chosen["labels"].current) == n
        assert not chosen["verdicts"].stale and not chosen["labels"].stale
    with ChatServer(_cut({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        collect_answers(run, "openai/alm", max_tokens=3, replace=True, quiet=True)
    with Store(run) as store:
        chosen = select(store, "verdicts", "labels")
        assert not load_judgements(store)  # no digest and another answers stage: nothing is mixed in
    assert not human_labels(run)  # the labels predate the new texts
    assert {(s.table, s.kind) for s in chosen["verdicts"].stale + chosen["labels"].stale} == {
        ("verdicts", "unknown"),
        ("labels", "unknown"),
    }
