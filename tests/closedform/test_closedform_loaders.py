"""Bad input: one clear problem per bad row (file, row, field, fix), fatal errors for missing files and columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from halluscope.closedform.loaders import load_aha, load_halluaudio, load_yesno
from halluscope.closedform.score import score_halluaudio
from halluscope.core.errors import InputError
from support.corpus_fixtures import write_jsonl


def _ha(**kw) -> dict:
    row = {
        "audio": "a.wav",
        "prompt": "Is there a dog?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes.",
    }
    row.update(kw)
    return {k: v for k, v in row.items() if v is not ...}


def test_halluaudio_loads_known_and_declared_subsets(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "p.jsonl",
        [
            _ha(),
            {
                "audio": "b.wav",
                "prompt": "How many words?",
                "reference": 5,
                "subset": "commonvoice_word_count",
                "pred": "five",
                "model": "x",
            },
        ],
    )
    loaded = load_halluaudio([f])
    assert [i.domain for i in loaded.items] == ["sound", "speech"]
    assert [i.kind for i in loaded.items] == ["binary", "count"]
    assert loaded.items[1].reference == "5" and loaded.items[0].kind_source == "inferred from reference"
    assert not loaded.problems and any("model" in n for n in loaded.notes)


def test_halluaudio_bad_rows_each_reported(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "p.jsonl",
        [
            _ha(),
            _ha(audio="b.wav", pred=...),  # row 2: missing pred
            _ha(audio="c.wav", subset="mystery", domain=...),  # row 3: unknown subset, no domain
            "{not json",  # row 4
            _ha(),  # row 5: duplicate of row 1
            _ha(audio="d.wav", reference="maybe"),  # row 6: binary reference not yes/no
            _ha(audio="e.wav", pred=None),  # row 7: null reply
            _ha(audio="f.wav", domain="space"),  # row 8: unknown domain
            _ha(audio="g.wav", reference=None),  # row 9: null reference for a binary prompt
        ],
    )
    loaded = load_halluaudio([f])
    assert len(loaded.items) == 1
    by_row = {p.row: p for p in loaded.problems}
    assert sorted(by_row) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert by_row[2].field == "pred" and "missing" in by_row[2].message and '"pred"' in by_row[2].fix
    text = by_row[3].text()
    assert str(f) in text and "row 3" in text and "field 'subset'" in text and "mystery" in text and "Fix:" in text
    assert "duplicate of" in by_row[5].message
    assert by_row[6].field == "reference" and "maybe" in by_row[6].message
    assert by_row[7].field == "pred" and "missing" in by_row[7].message  # null is no reply
    assert by_row[8].field == "domain" and by_row[9].field == "reference"


def test_halluaudio_default_domain_admits_unknown_subsets(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "p.jsonl", [_ha(subset="mystery", domain=...)])
    assert load_halluaudio([f]).problems
    loaded = load_halluaudio([f], domain="music")
    assert loaded.items[0].domain == "music" and not loaded.problems
    with pytest.raises(InputError, match="unknown domain"):
        load_halluaudio([f], domain="space")


def test_halluaudio_missing_file_and_nothing_valid(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_halluaudio([tmp_path / "nope.jsonl"])
    f = write_jsonl(tmp_path / "bad.jsonl", [_ha(pred=...)])
    with pytest.raises(InputError, match="no valid HalluAudio rows"):
        score_halluaudio(load_halluaudio([f]))


def _aha(index: str, **kw) -> dict:
    row = {"index": index, "type": "existence", "question": "Is there a dog?", "answer": "Yes", "prediction": "Yes"}
    row.update(kw)
    return row


def test_aha_bad_rows(tmp_path: Path) -> None:
    a = write_jsonl(
        tmp_path / "run_0.jsonl",
        [
            _aha("60_0_1"),
            _aha("60_0_2", type="teleportation"),
            _aha("60_0_1"),
            _aha("60-0-3"),
            _aha("60_0_4", answer="Perhaps"),
            _aha("10_0_1"),
            _aha("220_0_1", type="asr_en", answer="hello world", prediction="hello"),
            {k: v for k, v in _aha("60_0_5").items() if k != "prediction"},  # a row without a prediction
        ],
    )
    b = write_jsonl(tmp_path / "run_1.jsonl", [_aha("60_0_1"), _aha("60_0_9")])
    loaded = load_aha([a, b])
    msgs = [(p.file, p.row, p.field, p.message) for p in loaded.problems]
    assert (str(a), 2, "type", "unknown AHa-Bench type 'teleportation'") in msgs
    assert any(r == 3 and "duplicate index" in m for _, r, _, m in msgs)
    assert any(r == 4 and fld == "index" for _, r, fld, _ in msgs)
    assert any(r == 5 and fld == "answer" for _, r, fld, _ in msgs)
    assert any(r == 6 and "does not match type" in m for _, r, _, m in msgs)
    assert any(r == 8 and fld == "prediction" for _, r, fld, _ in msgs)
    # across runs: 60_0_9 only in run_1, 220_0_1 only in run_0
    assert any(f == str(a) and "60_0_9" in m for f, _, _, m in msgs)
    assert any(f == str(b) and "220_0_1" in m for f, _, _, m in msgs)
    assert sorted((i.run, i.index) for i in loaded.items) == [
        ("run_0", "220_0_1"),
        ("run_0", "60_0_1"),
        ("run_1", "60_0_1"),
        ("run_1", "60_0_9"),
    ]
    assert loaded.items[0].task == "existence" and loaded.items[0].audio_key == "60_0"


def _tsv(path: Path, rows: list[list[str]]) -> Path:
    path.write_text("\n".join("\t".join(r) for r in rows) + "\n", encoding="utf-8")
    return path


QHEAD = ["entry_id", "audio_index", "prompt_text", "object", "attribute", "label", "sampling"]


def test_yesno_bad_rows_and_joins(tmp_path: Path) -> None:
    q = _tsv(
        tmp_path / "q.tsv",
        [
            QHEAD,
            ["1", "Ya", "Is there a dog?", "dog", "", "Yes", "random"],
            ["2", "Yb", "Is there a cat?", "cat", "", "Maybe", "random"],
            ["3", "Yc", "Is there a car?", "car", "", "No", "sideways"],
            ["1", "Yd", "Is there a bird?", "bird", "", "No", "random"],
            ["4", "Ye", "Is there rain?", "rain", "", "No", "adversarial"],
            ["5", "Yf", "Is there wind?", "wind", "", "No", "popular"],
        ],
    )
    p = tmp_path / "p.csv"
    p.write_text("entry_id,response,label\n1,Yes,Yes\n1,No,Yes\n99,Yes,No\n5,No,Yes\n", encoding="utf-8")
    loaded = load_yesno(q, p)
    assert [i.entry_id for i in loaded.items] == ["1"]
    # rows are file lines (the header is line 1)
    probs = {(Path(x.file).name, x.row, x.field): x.message for x in loaded.problems}
    assert "Maybe" in probs[("q.tsv", 3, "label")]
    assert "sideways" in probs[("q.tsv", 4, "sampling")]
    assert "duplicate question (sampling 'random', entry_id '1')" in probs[("q.tsv", 5, "entry_id")]
    assert "duplicate prediction" in probs[("p.csv", 3, "entry_id")]
    assert "no matching question" in probs[("p.csv", 4, "entry_id")]
    assert "disagrees" in probs[("p.csv", 5, "label")]
    assert "has no prediction" in probs[("q.tsv", 6, "entry_id")]


def test_yesno_missing_columns_are_fatal(tmp_path: Path) -> None:
    q = _tsv(tmp_path / "q.tsv", [["entry_id", "audio_index", "prompt_text", "label"], ["1", "Y", "?", "Yes"]])
    p = tmp_path / "p.csv"
    p.write_text("entry_id,response\n1,Yes\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_yesno(q, p)
    assert err.value.field == "object" and str(q) in str(err.value)
    q2 = _tsv(tmp_path / "q2.tsv", [QHEAD[:-1], ["1", "Y", "?", "dog", "", "Yes"]])
    with pytest.raises(InputError, match="sampling"):
        load_yesno(q2, p)
    assert load_yesno(q2, p, sampling="popular").items[0].sampling == "popular"
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,Yes\n", encoding="utf-8")
    with pytest.raises(InputError, match="the first row is not a header") as err:
        load_yesno(q2, bad, sampling="random")
    assert (err.value.file, err.value.row) == (str(bad), 1)


def test_halluaudio_field_types_and_reference_missing_or_null(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "p.jsonl",
        [
            _ha(pred=["Yes"]),  # row 1: a list is not a reply
            _ha(audio="b.wav", reference=True),  # row 2: a boolean reference
            _ha(audio="c.wav", reference=...),  # row 3: no reference at all
            _ha(audio="d.wav", id=["x"], domain=3),  # row 4: two bad fields, both listed
            _ha(
                audio="e.wav", subset="invalid_noise", domain=..., reference=None
            ),  # row 5: null reference, invalid audio
            _ha(audio="f.wav", audio_path="f.wav"),  # row 6: an unknown field is a note
            [1, 2],  # row 7: not an object
        ],
    )
    loaded = load_halluaudio([f])
    got = [(p.row, p.field) for p in loaded.problems]
    assert got == [(1, "pred"), (2, "reference"), (3, "reference"), (4, "domain"), (4, "id"), (7, None)]
    text = {(p.row, p.field): p.text() for p in loaded.problems}
    assert "expected text or a number, got a list of 1 item(s)" in text[(1, "pred")] and str(f) in text[(1, "pred")]
    assert "got a boolean (true)" in text[(2, "reference")] and "Fix:" in text[(2, "reference")]
    assert "missing" in text[(3, "reference")] and "null for a prompt without one" in text[(3, "reference")]
    assert "expected an object" in text[(7, None)] and "row 7" in text[(7, None)]
    assert [(i.row, i.reference, i.kind) for i in loaded.items] == [(5, "none", "unanswerable"), (6, "yes", "binary")]
    assert "ignored fields: audio_path (1)" in loaded.notes


def test_bom_crlf_and_empty_judge_reading(tmp_path: Path) -> None:
    f = tmp_path / "run.jsonl"
    rows = [_aha("60_0_1", prediction_match=""), _aha("60_0_2", prediction="", prediction_match=None), _aha("60_0_3")]
    f.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(json.dumps(r).encode() for r in rows) + b"\r\n")
    loaded = load_aha([f])
    assert not loaded.problems
    # an empty judge reading is the judge's (compat mode reads it); a null or absent one falls back to the reply
    assert [(i.index, i.prediction, i.prediction_match) for i in loaded.items] == [
        ("60_0_1", "Yes", ""),
        ("60_0_2", "", None),
        ("60_0_3", "Yes", None),
    ]


def test_aha_non_string_judge_reading_and_malformed_line(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "run.jsonl", [_aha("60_0_1", prediction_match=1), '{"index": "60_0_2",', _aha("60_0_3")])
    loaded = load_aha([f])
    assert [(p.row, p.field) for p in loaded.problems] == [(1, "prediction_match"), (2, None)]
    assert "expected text (a string), got a number (1)" in loaded.problems[0].message
    assert "malformed JSON" in loaded.problems[1].message and [i.index for i in loaded.items] == ["60_0_3"]


def test_yesno_rows_are_the_lines_records_start_on(tmp_path: Path) -> None:
    q = _tsv(
        tmp_path / "q.tsv",
        [
            QHEAD,
            ["1", "Ya", "Is there a dog?", "dog", "", "Yes", "random"],
            ["2", "Yb", "Is there a cat?", "", "", "No", "random"],
            ["3", "Yc", "Is there a car?", "car", "", "No", "random"],
        ],
    )
    p = tmp_path / "p.csv"
    # a quoted reply over two lines (2-3), a row with a cell too many (line 4), a reply that is empty (line 5)
    p.write_text('entry_id,response\n1,"Yes,\na dog."\n3,No,extra\n2,\n', encoding="utf-8")
    loaded = load_yesno(q, p)
    probs = [(Path(x.file).name, x.row, x.field, x.message) for x in loaded.problems]
    assert ("q.tsv", 3, "object", "missing or empty (required)") in probs
    assert ("p.csv", 4, None, "has 3 cell(s), the header has 2") in probs
    assert any(
        x[:3] == ("p.csv", 5, "entry_id") and "no matching question" in x[3] for x in probs
    )  # its question was bad
    assert any(x[:3] == ("q.tsv", 4, "entry_id") and "has no prediction" in x[3] for x in probs)
    assert [(i.entry_id, i.prediction_row, i.response) for i in loaded.items] == [("1", 2, "Yes,\na dog.")]
    assert next(x for x in loaded.problems if x.field == "object").fix.startswith(
        "every row of the questions TSV needs"
    )


def test_a_file_not_in_utf8_is_refused_whole(tmp_path: Path) -> None:
    f = tmp_path / "run.jsonl"
    zh = _aha("100_0_1", type="homophone_zh-zh", question="音频里有狗吗?", answer="是")
    f.write_bytes(
        json.dumps(_aha("60_0_1")).encode() + b"\n" + json.dumps(zh, ensure_ascii=False).encode("gbk") + b"\n"
    )
    with pytest.raises(InputError) as err:
        load_aha([f])
    assert (
        (err.value.file, err.value.row) == (str(f), 2) and "not UTF-8" in str(err.value) and "iconv" in str(err.value)
    )
