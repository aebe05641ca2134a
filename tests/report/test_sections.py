"""Sections built from real records without a model: speech quality (ratings saved in the store) and the judge
section read back from the tables.json that 'build judge' writes."""

import contextlib
import json

from halluscope.core.records import RunManifest, Variant
from halluscope.core.store import Store
from halluscope.report.sections import Section
from halluscope.spoken.judge.tables import judge_section_from, mean_rows, write_tables
from halluscope.view.quality import QualityLabels, QualityRequest
from halluscope.view.section import quality_section


def _variant(i: str, lang: str) -> Variant:
    return Variant(id=i, article_id=i, language=lang, text="t", label=0, generator="original")


def test_speech_quality_section_from_ratings_in_the_store(tmp_path):
    run = tmp_path / "run"
    with Store(run) as store:
        assert quality_section(store) is None  # no spoken build
        for v in (_variant("k1", "kk"), _variant("e1", "en")):
            store.put("ingest", "ingest-fp", v.id, v)
        store.add_manifest(
            RunManifest(
                command="build spoken",
                created="2026-01-01T00:00:00",
                config={},
                versions={},
                seeds={},
                platform="test",
                stages={"ingest": "ingest-fp", "generate": "g", "tts": "t", "asr": "a"},
            )
        )
        assert quality_section(store) is None  # nothing rated yet
    q = QualityLabels(run)
    for n, (item, who, fid) in enumerate((("k1", "a", "minor"), ("k1", "b", "major"), ("e1", "a", "faithful"))):
        q.save(
            QualityRequest(
                save_id=f"save-{n:04d}",
                item_id=item,
                annotator=who,
                intelligibility="mostly",
                fidelity=fid,
                excluded=False,
            )
        )
    q.close()
    with Store(run) as store:
        section = quality_section(store)
    assert [t.id for t in section.tables] == ["speech_quality", "speech_quality_agreement"]
    kk = next(r for r in section.rows("speech_quality") if r["language"] == "kk")
    assert kk["ratings"] == 2 and kk["fidelity_major"] == 0.5
    assert "| kk |" in section.markdown and '<table id="speech_quality_agreement">' in section.html


def test_judge_section_reads_back_what_build_judge_wrote(tmp_path):
    out = tmp_path / "report" / "judge"
    summary = {
        "sampled": 2,
        "per_cell": 1,
        "short_cells": [],
        "judges": [{"judge": "openai/j", "scored": 2, "unscored": 0, "failed": 0, "calls": 2, "from_store": 0}],
    }
    quality = {
        "openai/j": mean_rows(
            [("fabrication", "mild", "en", {"Fl": 4, "AT": 5}), ("fabrication", "mild", "en", {"Fl": 5})]
        )
    }
    assert quality["openai/j"][0]["Fl"] == 4.5
    files = write_tables(out, agreement=[], quality=quality, self_assessment=[], summary=summary, unscored=[])
    assert {p.name for p in files} >= {
        "judge.md",
        "judge.html",
        "tables.json",
        "table10_openai_j.tex",
        "table10_openai_j.csv",
        "heatmap_openai_j.png",
        "table9_agreement.csv",
    }
    assert "table9_agreement.tex" not in {p.name for p in files}  # no rows: no LaTeX table
    doc = json.loads((out / "tables.json").read_text(encoding="utf-8"))
    again: Section = judge_section_from(doc)
    assert [t.to_json() for t in again.tables] == list(doc["tables"].values())
    assert "\\toprule" in (out / "table10_openai_j.tex").read_text(encoding="utf-8")


def test_sections_built_in_two_processes_equal_one_process(tmp_path):
    # build_sections forks a second process for SECOND_PROCESS's builders: the same sections, in the same order.
    # Run in a fresh interpreter: a test worker may hold other threads (a server, a progress bar's monitor) from
    # earlier tests, and then build_sections rightly does not fork
    import subprocess
    import sys

    from support import fakes

    run_dir = fakes.spoken_run(tmp_path, langs=("en", "ru"))
    code = """
import sys
from halluscope.core.store import Store
from halluscope.report import sections as mod
forked = []
real = mod._second_process
mod._second_process = lambda *a: forked.append(real(*a)) or forked[-1]
with Store(sys.argv[1], readonly=True) as store:
    two = mod.build_sections(store)
assert forked and forked[0][0] is not None, "the second process did not run"
mod.SECOND_PROCESS = ()
with Store(sys.argv[1], readonly=True) as store:
    one = mod.build_sections(store)
assert [s.title for s in two] == [s.title for s in one] and len(one) >= 3, [s.title for s in one]
assert two == one
print("equal", len(one))
"""
    proc = subprocess.run([sys.executable, "-c", code, str(run_dir)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "equal" in proc.stdout, proc.stderr[-3000:]


def test_no_second_process_while_other_threads_run(tmp_path):
    """A fork copies the locks other threads hold and the child never sees them released: a report written by a
    pipeline that still has a server or a progress-bar thread is built in one process (it once hung there)."""
    import threading

    from halluscope.report import sections as mod
    from support import fakes

    run_dir = fakes.spoken_run(tmp_path, langs=("en",))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        with Store(run_dir, readonly=True) as store:
            assert mod._second_process(store, ["x"], contextlib.ExitStack()) == (None, None)
            assert mod.build_sections(store)
    finally:
        stop.set()
        other.join()
