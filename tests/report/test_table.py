"""One Table rendered to Markdown, CSV, LaTeX, HTML and JSON (golden strings); an empty table keeps its header."""

import csv
import io
import json

from halluscope.report.table import Column, Figure, Table

ROWS = [
    {"name": "a_b & c", "score": 0.5, "ci": (0.25, 0.75), "n": 3, "ok": True},
    {"name": "x|y", "score": None, "ci": None, "n": 10, "ok": False, "extra": [1, 2]},
]


def table(rows=ROWS) -> Table:
    return Table(
        "t1_demo",
        [("name", "Name"), Column("score", "Score", digits=2), ("ci", "95% CI"), ("n", "n"), ("ok", "OK")],
        rows,
        title="Table 1: demo",
        notes=("A note.",),
        empty="no rows yet",
    )


def test_markdown_golden():
    assert table().markdown() == (
        "### Table 1: demo\n\nA note.\n\n"
        "| Name | Score | 95% CI | n | OK |\n|---|---|---|---|---|\n"
        "| a_b & c | 0.50 | [0.25, 0.75] | 3 | yes |\n"
        "| x\\|y | - | - | 10 | no |"
    )
    assert table().markdown(heading=None).startswith("A note.\n\n| Name |")


def test_csv_golden_keeps_every_key_of_every_row():
    assert table().csv() == (
        'name,score,ci,n,ok,extra\r\na_b & c,0.5,"[0.25, 0.75]",3,True,\r\nx|y,,,10,False,"[1, 2]"\r\n'
    )


def test_latex_golden_booktabs():
    assert table().latex() == (
        "\\begin{table}[t]\n\\centering\n\\small\n\\begin{tabular}{lrrrr}\n\\toprule\n"
        "Name & Score & 95\\% CI & n & OK \\\\\n\\midrule\n"
        "a\\_b \\& c & 0.50 & [0.25, 0.75] & 3 & yes \\\\\n"
        "x|y & -- & -- & 10 & no \\\\\n"
        "\\bottomrule\n\\end{tabular}\n\\caption{Table 1: demo. A note.}\n\\label{tab:t1_demo}\n\\end{table}\n"
    )


def test_html_golden_with_links():
    t = table()
    t.link = lambda row, key: f"#n={row['n']}" if key == "n" else None
    assert t.html() == (
        "<h3>Table 1: demo</h3><p>A note.</p>"
        '<table id="t1_demo"><thead><tr><th>Name</th><th>Score</th><th>95% CI</th><th>n</th><th>OK</th></tr></thead>'
        '<tbody><tr><td>a_b &amp; c</td><td>0.50</td><td>[0.25, 0.75]</td><td><a href="#n=3">3</a></td><td>yes</td></tr>'
        '<tr><td>x|y</td><td>-</td><td>-</td><td><a href="#n=10">10</a></td><td>no</td></tr></tbody></table>'
    )


def test_json_holds_the_rows_with_lists_for_tuples():
    doc = table().to_json()
    assert json.loads(json.dumps(doc)) == doc
    assert doc["id"] == "t1_demo" and doc["title"] == "Table 1: demo" and doc["notes"] == ["A note."]
    assert [c["key"] for c in doc["columns"]] == ["name", "score", "ci", "n", "ok"]
    assert doc["rows"][0]["ci"] == [0.25, 0.75] and doc["rows"][1]["extra"] == [1, 2]


def test_empty_table_keeps_its_header_and_says_why(tmp_path):
    t = table(rows=[])
    path = t.write_csv(tmp_path / "t1_demo.csv")
    assert next(csv.reader(io.StringIO(path.read_text(encoding="utf-8")))) == ["name", "score", "ci", "n", "ok"]
    assert t.markdown() == "### Table 1: demo\n\nA note.\n\n_no rows yet_"
    assert t.html() == '<h3>Table 1: demo</h3><p>A note.</p><p id="t1_demo"><em>no rows yet</em></p>'
    assert "\\midrule\n\\bottomrule" in t.latex() and t.to_json()["rows"] == []


def test_figure_without_data_says_so():
    assert Figure(None, "WER by language").markdown() == "_WER by language: not enough data to plot._"
    assert Figure(b"\x89PNG", "x", file="x.png").markdown() == "![x](x.png)"
    assert Figure(b"\x89PNG", "x").html().startswith('<img alt="x" src="data:image/png;base64,')


def test_a_limit_shortens_the_views_not_the_data():
    t = Table("many", [("i", "i")], [{"i": i} for i in range(5)], limit=2)
    assert t.markdown() == "First 2 of 5 rows; all in many.csv.\n\n| i |\n|---|\n| 0 |\n| 1 |"
    assert t.html().count("<tr><td>") == 2 and t.csv().count("\r\n") == 6 and len(t.to_json()["rows"]) == 5
