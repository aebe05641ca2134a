"""Lost in Speech (000) Tables 1-5 and 7-10 in the paper's layouts (issue 29): row and column order, best cells
bold, every table as Markdown, CSV, LaTeX, HTML and JSON; LaTeX compiled where pdflatex is installed."""

import csv
import io
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect import detect
from halluscope.spoken.realworld import build_realworld, detect_realworld
from halluscope.spoken.report.paper import table2, table3, table7, table9, table10


def check_latex(tex: str, ncols: int) -> None:
    """A booktabs tabular whose every row has ``ncols`` cells and whose braces balance; compiled when possible."""
    spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", tex)
    assert spec and len(spec.group(1)) == ncols, tex
    body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    head = tex.split("\\toprule\n", 1)[1].split("\\midrule", 1)[0]
    for line in [head, *body.strip().splitlines()]:
        if line.strip():
            assert len(re.findall(r"(?<!\\)&", line)) == ncols - 1, line
    depth = 0
    for ch in re.sub(r"\\[{}]", "", tex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    if shutil.which("pdflatex"):  # Debian texlive-latex-base + texlive-latex-recommended (booktabs)
        doc = (
            "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
            "\\usepackage{textcomp}\n\\begin{document}\n"
            + tex.replace("κ", "kappa").replace("ρ", "rho").replace("\u2020", "+")
            + "\n\\end{document}\n"
        )
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "table.tex").write_text(doc, encoding="utf-8")
            proc = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "table.tex"],
                capture_output=True,
                timeout=120,
                cwd=d,
            )
            assert proc.returncode == 0 and (Path(d) / "table.pdf").stat().st_size > 0, proc.stdout[-2000:]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A three-language run with a real-world split and TF-IDF runs; the paper tables built from the report's own
    row builders (the full report's plots are other tests' business)."""
    from halluscope.core.store import Store
    from halluscope.spoken.build import load_build
    from halluscope.spoken.report.paper import paper_section, write_paper_tables
    from halluscope.spoken.report.realworld import realworld_section
    from halluscope.spoken.report.speech import table7_rows
    from halluscope.spoken.report.tables import ReportData, _dataset_rows, _detection_rows
    from support.tiny_encoder import register_text_speech

    register_text_speech()
    tmp = tmp_path_factory.mktemp("paper")
    run = tmp / "run"
    build_spoken(
        run,
        BuildConfig(
            corpus="demo",
            langs=("en", "ru", "kk"),
            tts="test-bytes",
            asr="test-bytes",
            seed=2,
            rewrites_per_article=1,
            articles_per_language=7,
        ),
        quiet=True,
    )
    rows = [
        {"id": f"f{i}-{lang}", "language": lang, "text": f"Fake {i} {lang}.", "topic": "economy"}
        for i in range(2)
        for lang in ("ru", "kk")
    ]
    (tmp / "fakes.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    build_realworld(run, tmp / "fakes.jsonl", quiet=True)
    for inp in ("text", "transcript"):
        detect(run, task="binary", input=inp)
    for inp in ("text", "transcript"):
        detect_realworld(run, detector="tfidf", input=inp)
    with Store(run) as store:
        build = load_build(store)
        langs = ["en", "ru", "kk"]
        data = ReportData(
            run_dir=run,
            languages=langs,
            dataset=_dataset_rows(build, langs),
            asr=[],
            detection=_detection_rows(store, build, langs),
            failures=[],
            excluded=0,
            table7=table7_rows(build, langs),
        )
        sections = [realworld_section(store)]
    section = paper_section(data, sections)
    write_paper_tables(run / "report" / "paper", [section])
    (run / "report" / "tables.md").write_text(section.markdown, encoding="utf-8")
    return run / "report"


def test_tables_1_to_5_in_every_format_with_the_papers_order(report):
    paper = report / "paper"
    for n in (1, 2, 3, 4, 5, 7, 8):
        for ext in ("md", "csv", "tex", "html", "json"):
            assert (paper / f"paper_table{n}.{ext}").is_file(), (n, ext)
    md = (report / "tables.md").read_text(encoding="utf-8")
    assert "Table 1: Dataset summary across languages" in md and "Table 5: Provenance x veracity" in md
    t1 = json.loads((paper / "paper_table1.json").read_text(encoding="utf-8"))
    assert [c["title"] for c in t1["columns"]][:4] == ["Lang", "Res", "Orig", "Halluc"]
    langs = [r["language"] for r in t1["rows"]]
    assert langs == ["EN", "RU", "KZ", "Total", "RU (real)\u2020", "KZ (real)\u2020"]
    assert [r["res"] for r in t1["rows"][:3]] == ["H", "M", "L"]
    assert t1["rows"][4]["halluc"] == 2 and t1["rows"][4]["orig"] == 2  # two fakes and their two negatives
    assert t1["rows"][3]["total"] == sum(r["total"] for r in t1["rows"][:3])
    t2 = json.loads((paper / "paper_table2.json").read_text(encoding="utf-8"))
    order = [(r["language"], r["task"], r["split"]) for r in t2["rows"]]
    assert order == [(lang, "B", s) for lang in ("EN", "RU", "KZ") for s in "OT"]
    assert [c["title"] for c in t2["columns"]][3:] == ["tfidf Acc", "tfidf F1"]
    t4 = json.loads((paper / "paper_table4.json").read_text(encoding="utf-8"))
    assert [(r["language"], r["data"]) for r in t4["rows"]] == [
        ("RU", "Synth (test)"),
        ("RU", "Real"),
        ("KZ", "Synth (test)"),
        ("KZ", "Real"),
    ]
    assert all(r["O0"] is not None and r["T0"] is not None for r in t4["rows"])
    t5 = json.loads((paper / "paper_table5.json").read_text(encoding="utf-8"))
    assert [(r["language"], r["input"], r["provenance"]) for r in t5["rows"][:4]] == [
        ("RU", "O", "Human"),
        ("RU", "O", "LLM"),
        ("RU", "T", "Human"),
        ("RU", "T", "LLM"),
    ]
    assert t5["rows"][0]["n_false"] == 2 and t5["rows"][0]["n_truthful"] == 2
    for n, cols in ((1, 11), (2, 5), (4, 4), (5, 8)):
        check_latex((paper / f"paper_table{n}.tex").read_text(encoding="utf-8"), cols)
    rows = list(csv.DictReader(io.StringIO((paper / "paper_table2.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(t2["rows"]) and "best" in rows[0]
    assert "no zero-shot runs yet" in (paper / "paper_table3.md").read_text(encoding="utf-8")


def test_table2_rows_lang_task_split_and_a_column_pair_per_detector():
    det = [
        {"detector": d, "language": lang, "task": t, "split": sp, "accuracy": 0.5, "macro_f1": f}
        for d, f in (("enc-a", 0.4), ("enc-b", 0.6))
        for lang in ("kk", "en")
        for t in ("severity", "binary", "type")
        for sp in ("T", "O")
    ]
    t = table2(det)
    assert [(r["language"], r["task"], r["split"]) for r in t.rows] == [
        (lang, task, sp) for lang in ("EN", "KZ") for task in "BTL" for sp in "OT"
    ]
    assert [c.title for c in t.cols] == ["Lang", "Task", "Split", "enc-a Acc", "enc-a F1", "enc-b Acc", "enc-b F1"]
    assert all(r["best"] == ["f11"] for r in t.rows) and t.markdown().count("**0.600**") == 12


def test_best_cells_are_bold_in_every_view():
    cells = [
        {
            "model": m,
            "language": "en",
            "input": "T",
            "task": t,
            "accuracy": a,
            "macro_f1": f,
            "n": 10,
            "prompting": "direct",
        }
        for m, t, a, f in (
            ("m1", "binary", 0.6, 0.5),
            ("m2", "binary", 0.7, 0.61),
            ("m1", "severity", 0.4, 0.3),
            ("m2", "severity", 0.3, 0.2),
            ("m1", "type", 0.3, 0.25),
            ("m2", "type", 0.3, 0.25),
        )
    ]
    t = table3(cells)
    assert [c.title for c in t.cols][3:] == ["B Acc", "B F1", "B n", "T Acc", "T F1", "T n", "L Acc", "L F1", "L n"]
    assert t.rows[0]["best"] == ["T_f1", "L_f1"] and t.rows[1]["best"] == ["B_f1", "T_f1"]  # ties both bold
    assert "| **0.610** |" in t.markdown() and "<strong>0.300</strong>" in t.html()
    tex = t.latex()
    assert "\\textbf{0.610}" in tex and "\\textbf{0.500}" not in tex
    check_latex(tex, 12)
    t7 = table7(
        [
            {"asr": "whisper/base", "language": "kk", "wer": 0.9, "cer": 0.5},
            {"asr": "hf-asr/w2v", "language": "kk", "wer": 0.4, "cer": 0.2},
        ]
    )
    assert t7.rows[1]["best"] == ["kk_wer"] and "KZ WER" in [c.title for c in t7.cols]
    t9 = table9(
        [
            {
                "judge_a": "a",
                "judge_b": "b",
                "dimension": d,
                "kappa_quadratic": 0.8,
                "spearman_rho": 0.9,
                "within_one": 1.0,
                "n": 8,
            }
            for d in ("Sa", "FA", "AT")
        ]
    )
    assert [r["dimension"] for r in t9.rows] == ["AT", "FA", "Sa"]  # seed 000, 3.4's order
    t10 = table10(
        "claude",
        [
            {"type": "fabrication", "severity": "severe", "language": "kk", "n": 8},
            {"type": "contradiction", "severity": "mild", "language": "ru", "n": 8},
            {"type": "contradiction", "severity": "mild", "language": "en", "n": 8},
        ],
    )
    assert [(r["type"], r["language"]) for r in t10.rows] == [
        ("contradiction", "EN"),
        ("contradiction", "RU"),
        ("fabrication", "KZ"),
    ]
