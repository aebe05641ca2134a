"""'halluscope report RUN' on a MISHAP-only run (no spoken build): the MISHAP tables are written, and --json holds
every table that report.html shows."""

import csv
import json
import re

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import HalluscopeError
from halluscope.core.store import Store
from halluscope.report import write_report
from support import scripted


@pytest.fixture(scope="module")
def mishap_run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        yield scripted.build_run(tmp_path_factory.mktemp("mishap"), mp, seeds=(0,), per_category=1)
    finally:
        mp.undo()


def shown_tables(page: str) -> dict[str, int]:
    """id -> number of body rows of every table the page shows (an empty table is a <p id=...> saying why)."""
    out = {
        m.group(1): m.group(2).count("<tr><td") for m in re.finditer(r'<table id="([^"]+)">(.*?)</table>', page, re.S)
    }
    out.update({m.group(1): 0 for m in re.finditer(r'<p id="([^"]+)"><em>', page)})
    return out


def test_report_on_a_mishap_only_run_writes_the_mishap_tables(mishap_run):
    res = CliRunner().invoke(app, ["report", str(mishap_run)])
    assert res.exit_code == 0, res.output
    out = mishap_run / "report"
    md = (out / "tables.md").read_text(encoding="utf-8")
    assert "## MISHAP-Bench (seed 001)" in md and "### Table 1: hallucination rate (%) by domain and category" in md
    assert "Table 1: dataset summary" not in md  # no spoken build: no spoken section
    header = next(csv.reader((out / "mishap_table1.csv").open(encoding="utf-8")))
    assert header[:5] == ["model", "method", "music_context", "music_knowledge", "music_all"]
    rows = list(csv.DictReader((out / "mishap_table11.csv").open(encoding="utf-8")))
    assert [r["model"] for r in rows] == ["openai/alm"] and rows[0]["method"] == "W/O"
    assert (out / "mishap_stance.png").read_bytes()[:4] == b"\x89PNG"
    assert "data:image/png;base64" in (out / "report.html").read_text(encoding="utf-8")


def test_report_json_holds_every_table_the_html_shows(mishap_run):
    res = CliRunner().invoke(app, ["report", str(mishap_run), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    page = (mishap_run / "report" / "report.html").read_text(encoding="utf-8")
    shown = shown_tables(page)
    assert {"mishap_balance", "mishap_table1", "mishap_table11", "mishap_stance", "mishap_agreement"} <= set(shown)
    assert set(shown) <= set(doc["tables"])
    for table_id, n in shown.items():
        assert len(doc["tables"][table_id]["rows"]) == n, table_id
    assert doc["tables"]["mishap_agreement"]["rows"] == []  # no human label yet: shown as 'why', kept in JSON
    # data-only tables are in the JSON (and CSV) but not on the page
    assert {"mishap_rates_strategy", "mishap_rates_domain_category"} <= set(doc["tables"]) - set(shown)
    assert [s["title"] for s in doc["sections"]] == ["MISHAP-Bench (seed 001)"]
    assert json.loads((mishap_run / "report" / "headline.json").read_text(encoding="utf-8")) == doc


def test_mishap_report_folder_is_the_same_section(mishap_run):
    res = CliRunner().invoke(app, ["mishap", "report", str(mishap_run)])
    assert res.exit_code == 0, res.output
    folder, main = mishap_run / "report" / "mishap", mishap_run / "report"
    assert (folder / "table1.csv").read_text(encoding="utf-8") == (main / "mishap_table1.csv").read_text(
        encoding="utf-8"
    )
    assert (folder / "stance.png").exists() and json.loads((folder / "summary.json").read_text())["judged"] > 0


def test_a_run_with_nothing_to_report_says_so(tmp_path):
    Store(tmp_path / "run").close()
    with pytest.raises(HalluscopeError, match="holds nothing to report"):
        write_report(tmp_path / "run")


HALLUAUDIO = [
    {
        "audio": "s1.wav",
        "prompt": "Is there a dog barking?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes, a dog is barking.",
    },
    {
        "audio": "s2.wav",
        "prompt": "Is there a dog barking?",
        "reference": "no",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "I don't know.",
    },
    {
        "audio": "s4.wav",
        "prompt": "Is there a siren?",
        "reference": "no",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes.",
    },
    {
        "audio": "p1.wav",
        "prompt": "How many words?",
        "reference": "5",
        "subset": "commonvoice_word_count",
        "pred": "There are five words.",
    },
]


def test_report_on_a_closedform_run_scores_its_predictions(tmp_path):
    from halluscope.closedform.loaders import load_halluaudio
    from halluscope.closedform.score import score_halluaudio

    run = tmp_path / "run"
    Store(run).close()
    preds = run / "predictions" / "halluaudio-qwen2-audio.jsonl"
    preds.parent.mkdir()
    preds.write_text("".join(json.dumps(r) + "\n" for r in HALLUAUDIO), encoding="utf-8")
    res = CliRunner().invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [s["title"] for s in doc["sections"]] == ["Closed-form: halluaudio-qwen2-audio.jsonl"]
    strict = doc["tables"]["halluaudio-qwen2-audio_metrics_strict"]["rows"]
    expected = score_halluaudio(load_halluaudio([preds]), bootstrap=0).strict["all"]["accuracy"]
    assert next(r for r in strict if r["domain"] == "all")["accuracy"] == pytest.approx(expected)
    assert (run / "report" / "halluaudio-qwen2-audio_metrics_compat.csv").exists()
    assert set(shown_tables((run / "report" / "report.html").read_text(encoding="utf-8"))) <= set(doc["tables"])


def _closedform_predictions(run):
    preds = run / "predictions" / "halluaudio-qwen2-audio.jsonl"
    preds.parent.mkdir(parents=True, exist_ok=True)
    preds.write_text("".join(json.dumps(r) + "\n" for r in HALLUAUDIO), encoding="utf-8")


def test_mishap_only_closedform_only_and_all_three_runs_share_one_page_structure(mishap_run, tmp_path, monkeypatch):
    """Issue 24, item 4: one write_report and the same page for every kind of run: each pipeline's sections are
    built from the store alone, so a section of a single-pipeline run is the same section, tables and rows, in a run
    holding all three, in the same registration order; headline.json has one shape."""
    import shutil

    import halluscope.closedform.report  # noqa: F401 - imported before the MISHAP section: order must not follow imports
    from halluscope.spoken.build import BuildConfig, build_spoken
    from halluscope.spoken.report.paper import SECTION_TITLE as PAPER_TITLE
    from halluscope.spoken.report.spoken import TITLE as SPOKEN_TITLE
    from support.tiny_encoder import register_text_speech

    register_text_speech()  # the transcript is the text: a spoken build in a second, real stages
    mishap, closedform, every = tmp_path / "mishap", tmp_path / "closedform", tmp_path / "every"
    shutil.copytree(mishap_run, mishap, ignore=shutil.ignore_patterns("report"))
    Store(closedform).close()
    _closedform_predictions(closedform)
    shutil.copytree(mishap_run, every, ignore=shutil.ignore_patterns("report"))
    _closedform_predictions(every)
    build_spoken(
        every,
        BuildConfig(
            corpus="demo",
            langs=("en",),
            tts="test-bytes",
            asr="test-bytes",
            seed=1,
            rewrites_per_article=1,
            articles_per_language=3,
        ),
        quiet=True,
    )
    import halluscope.spoken.build as spoken_build

    reads, load = [], spoken_build.load_build
    monkeypatch.setattr(spoken_build, "load_build", lambda store: reads.append(store.run_dir) or load(store))
    docs = {}
    for run in (mishap, closedform, every):
        summary = write_report(run)
        doc = json.loads((run / "report" / "headline.json").read_text(encoding="utf-8"))
        assert doc == summary.document and set(doc) == {"run_dir", "sections", "tables"}
        assert all(set(s) == {"title", "tables"} for s in doc["sections"])
        assert [s["title"] for s in doc["sections"]] == summary.sections
        assert (run / "report" / "report.html").is_file() and (run / "report" / "tables.md").is_file()
        docs[run.name] = doc
    assert reads == [every]  # the spoken build is read once per report, shared by every section that needs it
    titles = {k: [s["title"] for s in d["sections"]] for k, d in docs.items()}
    assert titles["mishap"] == ["MISHAP-Bench (seed 001)"]
    assert titles["closedform"] == ["Closed-form: halluaudio-qwen2-audio.jsonl"]
    # the spoken build's core section first and its paper tables last, around the registered sections
    assert titles["every"][0] == SPOKEN_TITLE and titles["every"][-1] == PAPER_TITLE
    # registration order: the MISHAP section before the closed-form files, each exactly as in its own run
    assert [t for t in titles["every"] if t in titles["mishap"] + titles["closedform"]] == titles["mishap"] + titles[
        "closedform"
    ]
    for single in ("mishap", "closedform"):
        for section in docs[single]["sections"]:
            assert section in docs["every"]["sections"]
            for table_id in section["tables"]:
                assert docs["every"]["tables"][table_id] == docs[single]["tables"][table_id], table_id
