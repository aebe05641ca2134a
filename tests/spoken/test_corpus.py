import csv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from halluscope.core.errors import InputError
from halluscope.spoken.corpus import load_articles
from support.corpus_fixtures import write_jsonl


def test_demo_corpus_has_twenty_articles_per_language_with_alterable_facts():
    import re

    arts = load_articles("demo")
    for lang in ("en", "ru", "kk"):
        group = [a for a in arts if a.language == lang]
        assert len(group) >= 20
        for a in group:
            assert re.search(r"(?<!\d)(19|20)\d\d(?!\d)", a.text), a.id  # a year
            assert re.search(r"\d", a.text.replace(re.search(r"(19|20)\d\d", a.text).group(0), "")), a.id  # an amount
            assert a.topic in {"economy", "politics", "technology"}


def test_loads_jsonl_csv_and_parquet_alike(tmp_path, tiny_rows):
    write_jsonl(tmp_path / "c.jsonl", tiny_rows)
    with (tmp_path / "c.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(tiny_rows[0]))
        w.writeheader()
        w.writerows(tiny_rows)
    pq.write_table(pa.Table.from_pylist(tiny_rows), tmp_path / "c.parquet")
    loaded = [load_articles(tmp_path / f"c.{ext}") for ext in ("jsonl", "csv", "parquet")]
    assert loaded[0] == loaded[1] == loaded[2]
    assert len(loaded[0]) == len(tiny_rows)


def test_kz_is_read_as_kk(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "1", "language": "kz", "text": "Сәлем әлем."}])
    assert load_articles(path)[0].language == "kk"


def test_malformed_json_names_file_and_row(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1", "language": "en", "text": "ok"}\n{"id": "2", "language": \n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_articles(path)
    msg = str(err.value)
    assert "bad.jsonl" in msg and "row 2" in msg and "malformed JSON" in msg and "Fix:" in msg


@pytest.mark.parametrize(
    ("row", "field", "expected"),
    [
        ({"id": "1", "language": "en"}, "text", "missing or empty"),
        ({"id": "1", "language": "en", "text": "   "}, "text", "missing or empty"),
        ({"id": "1", "language": "de", "text": "Hallo"}, "language", "unsupported language code 'de'"),
        ({"language": "en", "text": "Hi"}, "id", "missing or empty"),
    ],
)
def test_bad_rows_name_row_and_field(tmp_path, row, field, expected):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "0", "language": "en", "text": "fine"}, row])
    with pytest.raises(InputError) as err:
        load_articles(path)
    msg = str(err.value)
    assert "row 2" in msg and f"field '{field}'" in msg and expected in msg


def test_duplicate_ids_and_all_problems_reported_together(tmp_path):
    rows = [
        {"id": "1", "language": "en", "text": "a"},
        {"id": "1", "language": "en", "text": "b"},
        {"id": "2", "language": "xx", "text": "c"},
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    with pytest.raises(InputError) as err:
        load_articles(path)
    msg = str(err.value)
    assert "2 problem(s)" in msg and "duplicate id '1' (first seen at row 1)" in msg and "row 3" in msg


def test_csv_rows_are_counted_from_the_header(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id,language,text\n1,en,fine\n2,en,\n", encoding="utf-8")
    with pytest.raises(InputError, match="row 3"):
        load_articles(path)


def test_unsupported_format_and_missing_file(tmp_path):
    (tmp_path / "c.txt").write_text("x")
    with pytest.raises(InputError, match="unsupported corpus format '.txt'"):
        load_articles(tmp_path / "c.txt")
    with pytest.raises(InputError, match="file not found"):
        load_articles(tmp_path / "nope.jsonl")


def test_corrupt_parquet_is_a_clear_error(tmp_path):
    (tmp_path / "c.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="cannot read parquet"):
        load_articles(tmp_path / "c.parquet")


def test_cli_reports_bad_corpus_and_bad_options_with_exit_code_2(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "c.jsonl"
    bad.write_text('{"id": "1", "language": "fr", "text": "Bonjour"}\n', encoding="utf-8")
    out = tmp_path / "run"
    res = subprocess.run(
        [sys.executable, "-m", "halluscope", "build", "spoken", "--corpus", str(bad), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert "row 1" in res.stderr and "field 'language'" in res.stderr and "unsupported language code 'fr'" in res.stderr
    assert not (out / "dataset").exists()  # nothing that looks like a finished build
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "halluscope",
            "build",
            "spoken",
            "--corpus",
            "demo",
            "--out",
            str(out),
            "--rewrites-per-article",
            "12",
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "--rewrites-per-article" in res.stderr and "less than or equal to 9" in res.stderr
