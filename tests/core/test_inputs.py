"""halluscope.core.inputs: the one reader of every input file (encodings, binary, types, limits, headers, problem policy)."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from halluscope.core.errors import InputError, InputProblems, Problems
from halluscope.core.inputs import Field, Limits, read_json, read_rows, read_text

FIELDS = (Field("id"), Field("language"), Field("text"), Field("topic", required=False))
ROWS = [{"id": "a1", "language": "ru", "text": "Банк повысил ставку."}, {"id": "a2", "language": "en", "text": "Café"}]


def _read(path, **kw):
    return read_rows(path, FIELDS, what="corpus", **kw)


def _jsonl(rows, *, eol="\n", bom=False):
    return (b"\xef\xbb\xbf" if bom else b"") + "".join(json.dumps(r, ensure_ascii=False) + eol for r in rows).encode()


def _error(path, **kw) -> str:
    with pytest.raises(InputError) as err:
        _read(path, **kw)
    return str(err.value)


# -- encodings ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_utf8_with_or_without_bom_and_crlf_read_alike(tmp_path, bom, eol):
    (tmp_path / "c.jsonl").write_bytes(_jsonl(ROWS, eol=eol, bom=bom))
    header = "id,language,text"
    csv_text = eol.join([header, *(f"{r['id']},{r['language']},{r['text']}" for r in ROWS)]) + eol
    (tmp_path / "c.csv").write_bytes((b"\xef\xbb\xbf" if bom else b"") + csv_text.encode())
    (tmp_path / "c.tsv").write_bytes((b"\xef\xbb\xbf" if bom else b"") + csv_text.replace(",", "\t").encode())
    for name in ("c.jsonl", "c.csv", "c.tsv"):
        got = [r.values for r in _read(tmp_path / name).rows]
        assert got == ROWS, name


@pytest.mark.parametrize(
    ("encoding", "text", "guess"),
    [
        ("latin-1", "Café au lait, naïve résumé, déjà vu", "cp1252"),
        ("cp1251", "Банк повысил ключевую ставку до шестнадцати процентов", "cp1251"),
        ("koi8-r", "Банк повысил ключевую ставку до шестнадцати процентов", "KOI8-R"),
    ],
)
def test_non_utf8_names_file_line_offset_and_the_likely_encoding(tmp_path, encoding, text, guess):
    path = tmp_path / "c.jsonl"
    good = json.dumps({"id": "a0", "language": "en", "text": "fine"}) + "\n"
    path.write_bytes(
        good.encode()
        + json.dumps({"id": "a1", "language": "en", "text": text}, ensure_ascii=False).encode(encoding)
        + b"\n"
    )
    msg = _error(path)
    offset = len(good.encode()) + len('{"id": "a1", "language": "en", "text": "'.encode())
    offset += len(text[: next(i for i, c in enumerate(text) if ord(c) > 127)].encode())
    assert f"file {path}" in msg and "row 2" in msg and "not UTF-8" in msg
    assert f"byte offset {offset} (line 2," in msg and f"looks like {guess}" in msg and "iconv -f" in msg


def test_every_bad_line_is_counted_in_one_problem(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes("id,language,text\n1,en,Café\n2,en,ok\n3,en,Déjà\n".encode("latin-1"))
    msg = _error(path)
    assert "1 problem(s)" in msg and "row 2" in msg and "1 more line(s) are not UTF-8" in msg


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x00\x01\x02binary\xff" * 20, "binary file (a NUL byte at byte offset 0)"),
        ('{"id": "1"}\n'.encode("utf-16"), "UTF-16, expected UTF-8"),
        ('{"id": "1"}\n'.encode("utf-16-le"), "UTF-16, expected UTF-8"),
        (b"PAR1\x15\x04junk", "it is a parquet file; name it .parquet"),
        (b"PK\x03\x04rest-of-an-xlsx", "zip archive"),
        (b"\x1f\x8b\x08\x00gzip", "gzip-compressed"),
    ],
)
def test_binary_files_are_refused_before_parsing(tmp_path, data, expected):
    path = tmp_path / "c.jsonl"
    path.write_bytes(data)
    msg = _error(path)
    assert str(path) in msg and expected in msg and "Fix:" in msg


# -- files ---------------------------------------------------------------------------------------------


def test_a_directory_a_missing_file_and_an_unknown_suffix(tmp_path):
    (tmp_path / "d.jsonl").mkdir()
    assert "is a directory, expected a file" in _error(tmp_path / "d.jsonl")
    assert "file not found" in _error(tmp_path / "missing.csv")
    (tmp_path / "c.xlsx").write_bytes(b"x")
    assert "unsupported corpus format '.xlsx'" in _error(tmp_path / "c.xlsx")


def test_corrupt_parquet_and_a_parquet_missing_a_column(tmp_path):
    (tmp_path / "c.parquet").write_bytes(b"PAR1 not really PAR1")
    assert "cannot read parquet" in _error(tmp_path / "c.parquet")
    pq.write_table(pa.Table.from_pylist([{"id": "1", "language": "en"}]), tmp_path / "m.parquet")
    msg = _error(tmp_path / "m.parquet")
    assert "missing column(s) text" in msg and "field 'text'" in msg


# -- types ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "got"),
    [
        ("id", 42, "got a number (42)"),
        ("id", 4.5, "got a number (4.5)"),
        ("text", ["a"], "got a list of 1 item(s)"),
        ("text", {"a": 1}, "got an object with key(s) 'a'"),
        ("id", True, "got a boolean (true)"),
        ("topic", 7, "got a number (7)"),
    ],
)
def test_a_number_list_object_or_bool_is_not_a_text(tmp_path, field, value, got):
    row = {"id": "a1", "language": "en", "text": "fine", field: value}
    (tmp_path / "c.jsonl").write_bytes(_jsonl([row]))
    msg = _error(tmp_path / "c.jsonl")
    assert f"row 1, field '{field}': expected text (a string), {got}" in msg and "Fix:" in msg


def test_parquet_columns_are_type_checked_too(tmp_path):
    pq.write_table(pa.Table.from_pylist([{"id": 1, "language": "en", "text": "a"}]), tmp_path / "c.parquet")
    assert "row 1, field 'id': expected text (a string), got a number (1)" in _error(tmp_path / "c.parquet")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"id": "a", "id": "b", "language": "en", "text": "t"}', "the key 'id' appears twice"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"id": ' + b"9" * 5000 + b"}", "malformed JSON"),
        (b'{"id": "a", "language": "en", "text": "\\ud800"}', "lone surrogate \\ud800"),
        (b'{"id": "a", "language": "en", "text": "x\\u0000y"}', "NUL character at character 2"),
        (b'{"id": "a", "language": "en", "text": ', "malformed JSON (Expecting value at column"),
        (b'"just a string"', "expected an object with id, language, text, got text ('just a string')"),
        (b'{"id": "a", "language": "en", "text": "   "}', "field 'text': missing or empty (required)"),
    ],
)
def test_hostile_json_lines_become_problems(tmp_path, line, expected):
    (tmp_path / "c.jsonl").write_bytes(line + b"\n")
    msg = _error(tmp_path / "c.jsonl")
    assert "row 1" in msg and expected in msg


def test_bool_fields_take_booleans_and_the_usual_words_only(tmp_path):
    fields = (Field("id"), Field("flag", "bool", required=False))
    path = tmp_path / "c.csv"
    path.write_text("id,flag\na,yes\nb,FALSE\nc,\n", encoding="utf-8")
    assert [r.values for r in read_rows(path, fields, what="t").rows] == [
        {"id": "a", "flag": True},
        {"id": "b", "flag": False},
        {"id": "c"},
    ]
    path.write_text("id,flag\na,maybe\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 2, field 'flag': expected true or false, got text \('maybe'\)"):
        read_rows(path, fields, what="t")


# -- limits --------------------------------------------------------------------------------------------


def test_an_oversized_field_and_file_are_refused_with_the_override(tmp_path, monkeypatch):
    big = {"id": "a1", "language": "en", "text": "word " * 220_000}  # 1.1 MB: over the 1 MB default
    (tmp_path / "c.jsonl").write_bytes(_jsonl([big]))
    msg = _error(tmp_path / "c.jsonl")
    assert "field 'text': is 1,100,000 bytes, over the per-field limit of 1,000,000 bytes" in msg
    assert "HALLUSCOPE_MAX_FIELD_BYTES" in msg
    monkeypatch.setenv("HALLUSCOPE_MAX_FIELD_BYTES", "2MB")
    assert len(_read(tmp_path / "c.jsonl").rows) == 1
    monkeypatch.setenv("HALLUSCOPE_MAX_FILE_BYTES", "1KiB")
    msg = _error(tmp_path / "c.jsonl")
    assert "over the per-file limit of 1,024 bytes" in msg and "HALLUSCOPE_MAX_FILE_BYTES" in msg
    monkeypatch.setenv("HALLUSCOPE_MAX_FILE_BYTES", "lots")
    assert "HALLUSCOPE_MAX_FILE_BYTES='lots' is not a size" in _error(tmp_path / "c.jsonl")


def test_a_csv_cell_over_the_csv_module_limit_is_measured_not_crashed(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id,language,text\na,en," + "x" * 200_000 + "\n", encoding="utf-8")
    assert len(read_rows(path, FIELDS, what="corpus", limits=Limits(field_bytes=300_000)).rows) == 1
    msg = str(pytest.raises(InputError, read_rows, path, FIELDS, what="corpus", limits=Limits(field_bytes=1000)).value)
    assert "row 2, field 'text'" in msg and "limit" in msg


# -- headers and rows ----------------------------------------------------------------------------------


def test_a_headerless_csv_says_so(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("a1,en,Hello world\na2,en,Bye\n", encoding="utf-8")
    msg = _error(path)
    assert "the first row is not a header: expected columns id, language, text (optional: topic)" in msg
    assert "got 'a1', 'en', 'Hello world'" in msg and "no articles" not in msg


def test_header_problems(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id\tlanguage\ttext\n1\ten\tx\n", encoding="utf-8")
    assert "the header is tab-separated, expected comma-separated" in _error(path)
    path.write_text("id,language\n1,en\n", encoding="utf-8")
    assert "missing column(s) text; the header has id, language" in _error(path)
    path.write_text("id,language,text,id\n1,en,x,2\n", encoding="utf-8")
    assert "column(s) id appear more than once" in _error(path)
    path.write_text("", encoding="utf-8")
    assert "empty CSV: no header row" in _error(path)


def test_csv_rows_are_the_line_they_start_on(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b'id,language,text\r\n1,en,"two\r\nlines"\r\n2,en,a,b\r\n\r\n3,en,\r\n')
    msg = _error(path)
    assert "row 4: has 4 cell(s), the header has 3" in msg and "row 6, field 'text'" in msg


def test_comment_lines_before_a_tsv_header(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(
        "# a \"quoted\" note, with commas\n# Columns: ['id']\n\nid\tlanguage\ttext\n1\ten\tx\n", encoding="utf-8"
    )
    rows = _read(path, format="tsv", comments=True).rows
    assert [(r.number, r.values["id"]) for r in rows] == [(5, "1")]


def test_all_problems_are_collected_the_first_20_shown_and_nothing_loaded(tmp_path):
    rows = [{"id": i, "language": "en", "text": "t"} for i in range(25)]
    (tmp_path / "c.jsonl").write_bytes(_jsonl(rows))
    with pytest.raises(InputProblems) as err:
        _read(tmp_path / "c.jsonl")
    msg = str(err.value)
    assert "25 problem(s) in the corpus" in msg and "row 20, field 'id'" in msg and "row 21," not in msg
    assert "... and 5 more" in msg and len(err.value.problems) == 25


def test_a_callers_problems_get_the_clean_rows_back(tmp_path):
    (tmp_path / "c.jsonl").write_bytes(_jsonl([ROWS[0], {"id": 1, "language": "en", "text": "t"}, ROWS[1]]))
    problems = Problems(str(tmp_path / "c.jsonl"))
    got = _read(tmp_path / "c.jsonl", problems=problems)
    assert [r.number for r in got.rows] == [1, 3] and len(problems) == 1 and problems.items[0].field == "id"


# -- whole documents -----------------------------------------------------------------------------------


def test_read_json_and_read_text_apply_the_same_checks(tmp_path):
    (tmp_path / "e.json").write_bytes(b'\xef\xbb\xbf{"a": [1]}\r\n')
    assert read_json(tmp_path / "e.json", what="examples") == {"a": [1]}
    (tmp_path / "e.json").write_text('{"a": 1, "a": 2}')
    with pytest.raises(InputError, match="the key 'a' appears twice"):
        read_json(tmp_path / "e.json", what="examples")
    (tmp_path / "n.txt").write_bytes("Agence Française\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"n.txt, row 1: not UTF-8: byte 0xe7 at byte offset 11"):
        read_text(tmp_path / "n.txt", what="names")


# -- the loaders on top of it ----------------------------------------------------------------------------


def test_fakes_flags_are_typed_and_every_problem_is_reported(tmp_path):
    from halluscope.spoken.realworld import load_fakes

    path = tmp_path / "f.jsonl"
    path.write_bytes(
        _jsonl(
            [
                {"id": "f1", "language": "ru", "text": "т", "translated": "maybe"},
                {"id": 7, "language": "kk", "text": "т"},
                {"id": "f3", "language": "de", "text": "t"},
            ]
        )
    )
    msg = str(pytest.raises(InputError, load_fakes, path).value)
    assert "3 problem(s) in the fakes file" in msg and "row 1, field 'translated': expected true or false" in msg
    assert "row 2, field 'id': expected text (a string), got a number (7)" in msg and "row 3, field 'language'" in msg


def test_score_asr_pairs_may_have_an_empty_hypothesis_but_not_a_number(tmp_path):
    from halluscope.metrics.scoring import score_asr_file

    path = tmp_path / "p.jsonl"
    path.write_bytes(_jsonl([{"reference": "a b", "hypothesis": "", "language": "en"}]))
    assert score_asr_file(path)["en"]["wer"] == 1.0
    path.write_bytes(
        _jsonl([{"reference": "a b", "hypothesis": 12, "language": "en"}, {"reference": "a b", "language": "en"}])
    )
    msg = str(pytest.raises(InputError, score_asr_file, path).value)
    assert "row 1, field 'hypothesis': expected text (a string), got a number (12)" in msg
    assert "row 2, field 'hypothesis': missing (required)" in msg


def test_clip_manifest_reports_every_bad_row(tmp_path):
    from halluscope.mishap.clips import load_manifest

    base = {"id": "c1", "domain": "sound", "source": "s", "audio": "missing.wav", "description": "a dog barks"}
    path = tmp_path / "m.jsonl"
    path.write_bytes(_jsonl([{**base, "id": 1}, {**base, "id": "c2", "domain": "noise"}, {**base, "id": "c3"}]))
    msg = str(pytest.raises(InputError, load_manifest, path).value)
    assert "3 problem(s) in the clip manifest" in msg and "row 1, field 'id'" in msg
    assert "row 2, field 'domain'" in msg and "row 3, field 'audio'" in msg and "not found" in msg


def test_judge_examples_are_type_checked_field_by_field(tmp_path):
    from halluscope.mishap.judge import load_examples

    good = load_examples()
    bad = {**good, "context": [{**good["context"][0], "rubric": ["x"]}, *good["context"][1:]], "knowledge": "none"}
    path = tmp_path / "ex.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    msg = str(pytest.raises(InputError, load_examples, path).value)
    assert "field 'context[0].rubric': expected text (a string), got a list" in msg
    assert "field 'knowledge': expected a list of six example objects, got text ('none')" in msg
    path.write_text(json.dumps(good), encoding="utf-8")
    assert load_examples(path) == good


def test_source_names_and_evidence_documents_must_be_utf8(tmp_path):
    from halluscope.mishap.evidence import FtsEvidence
    from halluscope.mishap.questions import load_names

    (tmp_path / "names.txt").write_bytes("# real sources\nAgence France-Presse\nLe Monde\n".encode())
    assert load_names(tmp_path / "names.txt") == ("Agence France-Presse", "Le Monde")
    (tmp_path / "names.txt").write_bytes("Agence Française\n".encode("latin-1"))
    with pytest.raises(InputError, match="names.txt, row 1: not UTF-8"):
        load_names(tmp_path / "names.txt")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_bytes("# Dogs\nDogs bark.\n".encode())
    (docs / "b.txt").write_bytes("Caf\xe9s are loud.\n".encode("latin-1"))
    with pytest.raises(InputError, match="b.txt, row 1: not UTF-8"):
        FtsEvidence(docs)
    (tmp_path / "d.jsonl").write_bytes(_jsonl([{"id": 3, "title": "t", "text": "x"}]))
    with pytest.raises(InputError, match="row 1, field 'id': expected text"):
        FtsEvidence(tmp_path / "d.jsonl")


def test_closedform_question_sets_read_the_published_kuan_file(realdata):
    from halluscope.closedform.run import load_rows

    path = realdata / "kuan_object_hallucination" / "balanced_merged_test_2871.txt"
    rows = load_rows("yesno", [path], None)
    assert len(rows) == 2871 and rows[0].id == "popular/0" and rows[0].audio.name == "Y7fmOlUlwoNg.wav"
    assert rows[0].data["sampling"] == "popular" and rows[0].prompt.startswith("Is there a sound of speech")


def test_closedform_question_sets_report_every_file_and_row(tmp_path):
    from halluscope.closedform.run import load_rows

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(
        _jsonl([{"prompt": "Is there a dog?", "audio": "x.wav", "id": 5}, {"prompt": ["x"], "audio": "y.wav"}])
    )
    b.write_bytes(_jsonl([{"prompt": "Count the beats."}]))
    with pytest.raises(InputError) as err:
        load_rows("halluaudio", [a, b], None)
    msg = str(err.value)
    assert (
        "2 problem(s)" in msg and f"file {a}, row 2, field 'prompt'" in msg and f"file {b}, row 1, field 'audio'" in msg
    )
    b.write_bytes(_jsonl([{"prompt": "Count the beats.", "wav": "b.wav"}]))
    with pytest.raises(InputError, match=r"1 problem\(s\) in the halluaudio questions"):
        load_rows("halluaudio", [a, b], None)
    (tmp_path / "q.tsv").write_text("entry_id\taudio_index\tprompt_text\n1\tY1\t\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 2, field 'prompt_text': missing or empty"):
        load_rows("yesno", [tmp_path / "q.tsv"], None)
