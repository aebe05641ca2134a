"""'halluscope report RUN' on a MISHAP-only run (no spoken build): the MISHAP tables are written, and --json holds
every table that report.html shows."""

import csv
import json
import re

import pytest
from support import scripted
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import HalluscopeError
from halluscope.core.store import Store
from halluscope.report import write_report


@pytest.fixture(scope="module")
def mishap_run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        yield scripted.build_run(tmp_path_factory.mktemp("mishap"), mp, seeds=(0,), per_category=1)
    finally:
        mp.undo()


def shown_tables(page: str) -> dict[str, int]:
    """id -> number of body rows of every table the page shows (an empty table is a <p id=...> saying why)."""
    out = {m.group(1): m.group(2).count("<tr><td") for m in re.finditer(r'<table id="([^"]+)">(.*?)</table>', page, re.S)}
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
    assert (folder / "table1.csv").read_text(encoding="utf-8") == (main / "mishap_table1.csv").read_text(encoding="utf-8")
    assert (folder / "stance.png").exists() and json.loads((folder / "summary.json").read_text())["judged"] > 0


def test_a_run_with_nothing_to_report_says_so(tmp_path):
    Store(tmp_path / "run").close()
    with pytest.raises(HalluscopeError, match="holds nothing to report"):
        write_report(tmp_path / "run")


HALLUAUDIO = [
    {"audio": "s1.wav", "prompt": "Is there a dog barking?", "reference": "yes", "subset": "fsd_binary", "domain": "sound",
     "pred": "Yes, a dog is barking."},
    {"audio": "s2.wav", "prompt": "Is there a dog barking?", "reference": "no", "subset": "fsd_binary", "domain": "sound",
     "pred": "I don't know."},
    {"audio": "s4.wav", "prompt": "Is there a siren?", "reference": "no", "subset": "fsd_binary", "domain": "sound",
     "pred": "Yes."},
    {"audio": "p1.wav", "prompt": "How many words?", "reference": "5", "subset": "commonvoice_word_count",
     "pred": "There are five words."},
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
