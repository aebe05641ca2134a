"""Viewer pieces without a browser or a build: edit location, alignment chunks, speech-quality tables, the
append-only table, dropping excluded clips, report links, closed-form spec errors."""

import sqlite3

import jiwer
import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.store import Store
from halluscope.report.links import dataset_link, table2_link
from halluscope.view.data import _mark, alignment, reply_text
from halluscope.view.quality import QualityLabels, QualityRequest, latest_quality, quality_tables


def test_edits_are_located_and_missing_ones_listed():
    segs, missing = _mark("The bank raised rates by 5 percent in May.", [(0, "5 percent"), (1, "June"), (2, "rates")])
    assert "".join(s for s, _ in segs) == "The bank raised rates by 5 percent in May."
    assert [(s, i) for s, i in segs if i is not None] == [("rates", 2), ("5 percent", 0)]
    assert missing == [1]
    # the same span twice marks two places, not one place twice
    segs, _ = _mark("up and up", [(0, "up"), (1, "up")])
    assert [i for _, i in segs if i is not None] == [0, 1]


def test_alignment_is_jiwer_on_the_normalised_words():
    a = alignment("The cat, sat on 1 mat!", "the bat sat on on mat")
    out = jiwer.process_words("the cat sat on mat", "the bat sat on on mat")
    assert (
        (a["substitutions"], a["deletions"], a["insertions"], a["hits"])
        == (out.substitutions, out.deletions, out.insertions, out.hits)
        == (1, 0, 1, 4)
    )
    assert [c["op"] for c in a["chunks"]] == [c.type for c in out.alignments[0]]
    assert alignment("123 !!", "anything") is None  # nothing left to align after normalisation


def test_reply_text_reads_chat_completions_and_keeps_anything_else():
    assert reply_text({"choices": [{"message": {"content": "yes"}}]}) == "yes"
    assert reply_text({"text": "t"}) == "t"
    assert '"odd": 1' in reply_text({"odd": 1})
    assert reply_text(None) is None


def _store(tmp_path):
    with Store(tmp_path / "run"):
        pass
    return tmp_path / "run"


def test_quality_table_is_append_only_and_idempotent(tmp_path):
    run = _store(tmp_path)
    q = QualityLabels(run)
    base = dict(item_id="a", annotator="ann", intelligibility="mostly", fidelity="minor", excluded=False)
    row, new = q.save(QualityRequest(save_id="save-0001", **base))
    again, new2 = q.save(QualityRequest(save_id="save-0001", **base))
    assert new and not new2 and again["fidelity"] == "minor" and len(q.all()) == 1
    with pytest.raises(HalluscopeError, match="different rating"):
        q.save(QualityRequest(save_id="save-0001", **{**base, "fidelity": "major"}))
    q.save(QualityRequest(save_id="save-0002", **{**base, "fidelity": "major"}))
    assert latest_quality(run)["a"]["ann"]["fidelity"] == "major"  # the latest row counts
    q.close()
    db = sqlite3.connect(f"{run}/halluscope.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE speech_quality SET fidelity='faithful'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM speech_quality")
    db.close()
    with pytest.raises(Exception, match="intelligibility"):
        QualityRequest(save_id="save-0003", **{**base, "intelligibility": "great"})


def test_quality_tables_shares_agreement_and_exclusion():
    latest = {
        "k1": {
            "a": {"item_id": "k1", "intelligibility": "mostly", "fidelity": "minor", "excluded": False},
            "b": {"item_id": "k1", "intelligibility": "mostly", "fidelity": "major", "excluded": False},
        },
        "k2": {
            "a": {"item_id": "k2", "intelligibility": "poorly", "fidelity": "major", "excluded": True},
            "b": {"item_id": "k2", "intelligibility": "poorly", "fidelity": "major", "excluded": True},
        },
        "e1": {"a": {"item_id": "e1", "intelligibility": "fully", "fidelity": "faithful", "excluded": False}},
    }
    t = quality_tables(latest, {"k1": "kk", "k2": "kk", "e1": "en"})
    kk = next(r for r in t["speech_quality.csv"] if r["language"] == "kk")
    assert kk["ratings"] == 4 and kk["clips"] == 2
    assert kk["intelligibility_mostly"] == 0.5 and kk["fidelity_major"] == 0.75 and kk["excluded"] == 0.5
    (pair,) = t["speech_quality_agreement.csv"]
    assert pair["pair"] == "a vs b" and pair["n"] == 2
    assert pair["intelligibility_agreement"] == 1.0 and pair["fidelity_agreement"] == 0.5
    assert pair["intelligibility_kappa"] == 1.0 and pair["excluded_kappa"] == 1.0


def test_report_links_name_the_cell_filters():
    row = {"language": "en", "detector": "tfidf", "task": "type"}
    assert dataset_link(row, "F") == "../view/index.html#lang=en&kind=spoken&type=fabrication"
    assert dataset_link({"language": "all"}, "original") == "../view/index.html#kind=spoken&label=original"
    assert table2_link(row, "T_f1") == "../view/index.html#run=tfidf%7Ctype%7Ctranscript&lang=en&split=test"


def test_closedform_spec_errors_name_the_forms(tmp_path):
    from halluscope.view.data import load_closedform

    with pytest.raises(HalluscopeError, match="yesno=QUESTIONS.csv,PREDICTIONS.csv"):
        load_closedform(["yesno=only-one.csv"])
    with pytest.raises(HalluscopeError, match="halluaudio=FILE"):
        load_closedform(["nonsense"])


def test_prediction_index_read_in_a_fork_gives_the_same_view(viewrun):
    # load_view reads predictions and clips in a forked process while it reads samples and transcripts (issue 27): the same
    # index, runs and every item's detail (each prediction with its raw reply) as read in one process. A fresh
    # interpreter: a test worker may hold other threads, and then load_view rightly does not fork
    import subprocess
    import sys

    code = """
import sys
from halluscope.core import forked
from halluscope.view.data import load_view
pools = []
real = forked.fork_pool
forked.fork_pool = lambda: pools.append(1) or real()
two = load_view(sys.argv[1])
assert pools, "the item index was not read in a forked process"
forked.fork_pays = lambda: False
one = load_view(sys.argv[1])
assert (two.index, two.runs) == (one.index, one.runs) and len(one.runs) >= 3, one.runs
details = [one.detail(r["id"]) for r in one.index]
assert [two.detail(r["id"]) for r in two.index] == details
assert sum(len(d["predictions"]) for d in details) >= len(details) and any(p["raw"] for d in details for p in d["predictions"])
print("equal", len(one.index))
"""
    proc = subprocess.run([sys.executable, "-c", code, str(viewrun)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "equal" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
