"""Kuan et al. (Interspeech 2024) object-hallucination files as released, the authors' per-strategy figures, and the
asked subject given to the yes/no reader. Real files are read from the realdata folder (never copied here)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.loaders import load_halluaudio, load_yesno
from halluscope.closedform.score import asked_subject, score_halluaudio, score_yesno

KUAN = "kuan_object_hallucination"
MERGED = "balanced_merged_test_2871.txt"
POPULAR = "balanced_popular_test_957.txt"
QWEN = "qwen25omni_predictions_balanced_merged_2871_cosine_lambda0.05.csv"
STRATEGIES = ("random", "popular", "adversarial")


# ---------------------------------------------------------------- an independent reference: the authors' rules
def _rows(path: Path, delimiter: str) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(
            csv.DictReader([line for line in fh if line.strip() and not line.startswith("#")], delimiter=delimiter)
        )


def _authors_answer(reply: str) -> str:
    """Yes-words first, then no-words, then phrases of absence, as the authors' evaluation.py orders them."""
    if "Yes" in reply or "yes" in reply:
        return "yes"
    if "No" in reply or "there is no" in reply or "does not contain" in reply or "doesn't contain" in reply:
        return "no"
    if "contain" in reply:
        return "yes"
    if "not" in reply or "unable" in reply or "can't" in reply:
        return "no"
    return ""


def _authors_figures(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """(label, reply) pairs of one strategy -> the five printed figures (percent, 2 decimals, positive class 'no')."""
    answers = [(label.lower(), _authors_answer(reply)) for label, reply in pairs]
    right = sum(label == got for label, got in answers)
    right_no = sum(label == got == "no" for label, got in answers)
    said_yes = sum(got == "yes" for _, got in answers)
    precision = round(right_no / (len(answers) - said_yes) * 100, 2)
    recall = round(right_no / sum(label == "no" for label, _ in answers) * 100, 2)
    return {
        "accuracy": round(right / len(answers) * 100, 2),
        "precision": precision,
        "recall": recall,
        "f1": round(2 * precision * recall / (precision + recall), 2),
        "yes_rate": round(said_yes / len(answers) * 100, 2),
    }


def _reference(questions: Path, predictions: Path) -> dict[str, dict[str, float]]:
    asked = {(q["sampling"], q["entry_id"]): q for q in _rows(questions, "\t")}
    by_strategy: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for p in _rows(predictions, ","):
        key = (p["sampling_method"], p["entry_id"])
        if key in asked:
            assert asked[key]["label"] == p["label"] and asked[key]["audio_index"] == p["audio_index"]
            by_strategy[key[0]].append((p["label"], p["response"]))
    return {s: _authors_figures(pairs) for s, pairs in by_strategy.items()}


# ---------------------------------------------------------------- the released files
def test_released_files_give_the_authors_figures_per_strategy(realdata: Path) -> None:
    q, p = realdata / KUAN / MERGED, realdata / KUAN / QWEN
    expected = _reference(q, p)
    assert set(expected) == set(STRATEGIES)
    result = CliRunner().invoke(app, ["score", "yesno", str(q), str(p), "--compat", "--json", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout[result.stdout.index("{") :])
    assert d["problems"]["count"] == 0 and d["n_items"] == 2871
    for s in STRATEGIES:
        assert d["metrics"][s]["n"] == 957  # ids repeat across strategies: none was dropped
        assert d["metrics"][s]["as_published_percent"] == expected[s], s
    # the prediction file's own 'correct' column (written by whoever ran the model) agrees item by item
    correct = defaultdict(int)
    for row in _rows(p, ","):
        correct[row["sampling_method"]] += row["correct"] == "True"
    for s in STRATEGIES:
        assert d["metrics"][s]["accuracy"] == correct[s] / 957


def test_strict_differences_on_the_released_files_are_the_listed_rules(realdata: Path) -> None:
    loaded = load_yesno(realdata / KUAN / MERGED, realdata / KUAN / QWEN)
    assert len({i.key for i in loaded.items}) == 2871 and len({i.entry_id for i in loaded.items}) < 2871
    r = score_yesno(loaded, positive="no", bootstrap=0)
    cmp_ = r.comparison()
    assert cmp_["n_differ"] == 0 and cmp_["rows"] == []  # Qwen2.5-Omni replied 'Yes' or 'No': read alike
    assert any("positive class" in rule for rule in cmp_["rules"])
    for s in (*STRATEGIES, "all"):  # so with the authors' positive class the fractions coincide
        for k in ("accuracy", "precision", "recall", "f1", "yes_rate"):
            assert r.strict[s][k] == pytest.approx(r.compat[s][k], abs=1e-12), (s, k)
    default = score_yesno(loaded, bootstrap=0)  # positive 'yes': precision and recall are other figures
    assert default.strict["popular"]["recall"] != pytest.approx(default.compat["popular"]["recall"])


def test_one_strategy_file_against_merged_predictions(realdata: Path) -> None:
    merged = score_yesno(load_yesno(realdata / KUAN / MERGED, realdata / KUAN / QWEN), mode="compat", bootstrap=0)
    loaded = load_yesno(realdata / KUAN / POPULAR, realdata / KUAN / QWEN)
    assert len(loaded.items) == 957 and {i.sampling for i in loaded.items} == {"popular"}
    # the other strategies' 1,914 replies: one problem per strategy, naming file, first line and column
    assert [(Path(x.file).name, x.field) for x in loaded.problems] == [(QWEN, "sampling_method")] * 2
    assert {x.message.split(" (")[0] for x in loaded.problems} == {
        "957 prediction(s) for sampling 'random'",
        "957 prediction(s) for sampling 'adversarial'",
    }
    popular = score_yesno(loaded, mode="compat", bootstrap=0)
    assert popular.compat["popular"] == merged.compat["popular"]


def test_asked_subject_is_the_object_column_on_every_released_question(realdata: Path) -> None:
    rows = _rows(realdata / KUAN / MERGED, "\t")
    assert [asked_subject(r["prompt_text"]) for r in rows] == [r["object"] for r in rows]


# ---------------------------------------------------------------- the same shape, written here
HEADER = "# A merged test set\n# Sampling methods: random, popular\n\n"
QCOLS = ["entry_id", "audio_index", "prompt_text", "object", "attribute", "label", "sampling"]


def _questions(path: Path, rows: list[list[str]], preamble: str = HEADER) -> Path:
    path.write_text(preamble + "\n".join("\t".join(r) for r in [QCOLS, *rows]) + "\n", encoding="utf-8")
    return path


def _predictions(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


QROWS = [
    ["7", "Ya", "Is there a sound of dog in the audio?", "dog", "positive", "Yes", "random"],
    ["7", "Yb", "Is there a sound of siren in the audio?", "siren", "negative", "No", "popular"],
    ["8", "Yc", "Can you hear the sound of rain in the audio?", "rain", "negative", "No", "popular"],
    ["9", "Yd", "Does the audio contain the sound of wind?", "wind", "positive", "Yes", "popular"],
    ["9", "Yd", "Does the audio contain the sound of car?", "car", "negative", "No", "random"],
]


def test_comment_header_and_ids_repeated_across_strategies(tmp_path: Path) -> None:
    q = _questions(tmp_path / "q.txt", QROWS)
    p = _predictions(
        tmp_path / "p.csv",
        ["entry_id", "audio_index", "label", "response", "sampling_method"],
        [
            ["7", "Ya", "Yes", "Yes", "random"],
            ["7", "Yb", "No", "No", "popular"],
            ["8", "Yc", "No", "Yes", "popular"],
            ["9", "Yd", "Yes", "Yes", "popular"],
            ["9", "Yd", "No", "No", "random"],
        ],
    )
    loaded = load_yesno(q, p)
    assert loaded.problems == ()
    assert [i.key for i in loaded.items] == ["random:7", "popular:7", "popular:8", "popular:9", "random:9"]
    assert [i.question_row for i in loaded.items] == [5, 6, 7, 8, 9]  # file lines: 3 preamble lines, header on 4
    assert any("skipped 3" in n for n in loaded.notes)
    r = score_yesno(loaded, mode="compat", bootstrap=0)
    assert r.compat["random"]["n"] == 2 and r.compat["popular"]["accuracy"] == pytest.approx(2 / 3)
    assert [i.id for i in r.items][:2] == ["random:7", "popular:7"]


def test_predictions_without_a_sampling_column(tmp_path: Path) -> None:
    q = _questions(tmp_path / "q.txt", QROWS)
    # id 8 is unique; id 7 repeats but its audio tells the strategies apart; id 9 repeats with the same audio
    p = _predictions(
        tmp_path / "p.csv",
        ["entry_id", "audio_index", "response"],
        [["8", "Yc", "No"], ["7", "Yb", "No"], ["9", "Yd", "Yes"]],
    )
    loaded = load_yesno(q, p)
    assert [i.key for i in loaded.items] == ["popular:8", "popular:7"]
    bad = next(x for x in loaded.problems if x.file == str(p))
    assert (
        (bad.row, bad.field) == (4, "entry_id")
        and "under 2 sampling strategies" in bad.message
        and "sampling_method" in bad.fix
    )
    assert any("placed by their audio_index" in n for n in loaded.notes)
    # --sampling names the predictions' strategy
    only_random = load_yesno(q, p, sampling="random")
    assert [i.key for i in only_random.items] == ["random:9"]


def test_audio_index_must_agree(tmp_path: Path) -> None:
    q = _questions(tmp_path / "q.txt", QROWS[:1])
    p = _predictions(
        tmp_path / "p.csv", ["entry_id", "audio_index", "response", "sampling"], [["7", "YA", "Yes", "random"]]
    )
    loaded = load_yesno(q, p)
    assert loaded.items == ()
    assert [(x.row, x.field) for x in loaded.problems] == [(2, "audio_index")]
    assert "'YA' disagrees with the question's 'Ya' (questions line 5" in loaded.problems[0].message


def test_items_read_differently_are_listed_with_reasons(tmp_path: Path) -> None:
    q = _questions(tmp_path / "q.txt", QROWS[:2])
    # "I'm not sure." to a present dog: wrong in both modes, but the authors' rule reads 'not' as a 'no' answer
    # (it enters their precision denominator); strict reads uncertainty
    p = _predictions(
        tmp_path / "p.csv",
        ["entry_id", "response", "sampling"],
        [["7", "I'm not sure.", "random"], ["7", "No.", "popular"]],
    )
    r = score_yesno(load_yesno(q, p), bootstrap=0)
    cmp_ = r.comparison()
    assert cmp_["n_differ"] == 1 and cmp_["read_differently_only"] == 1
    assert (
        cmp_["rows"][0]["id"] == "random:7"
        and cmp_["rows"][0]["strict"] == "unknown"
        and cmp_["rows"][0]["compat"] == "no"
    )
    assert cmp_["by_reason"] == {"abstention read as an answer by the official rules": 1}


@pytest.mark.parametrize(
    "preamble,field,row,message",
    [
        ("# only a comment\n\n", None, 1, "no header row"),
        ("# header\n\n", "object", 3, "missing column"),
    ],
)
def test_bad_files_exit_2_naming_file_row_and_field(
    tmp_path: Path, monkeypatch, capsys, preamble: str, field: str | None, row: int, message: str
) -> None:
    import sys

    from halluscope.cli.main import main

    q = tmp_path / "q.txt"
    q.write_text(
        preamble
        if field is None
        else preamble + "entry_id\taudio_index\tprompt_text\tlabel\tsampling\n1\tYa\t?\tYes\trandom\n",
        encoding="utf-8",
    )
    p = _predictions(tmp_path / "p.csv", ["entry_id", "response"], [["1", "Yes"]])
    monkeypatch.setattr(sys, "argv", ["halluscope", "score", "yesno", str(q), str(p)])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert f"file {q}" in err and message in err and (field is None or f"field '{field}'" in err)
    assert f", row {row}" in err


def test_unreadable_text_is_an_input_error_naming_the_line(tmp_path: Path, monkeypatch) -> None:
    from halluscope.core.errors import InputError

    q = _questions(tmp_path / "q.txt", QROWS)
    p = tmp_path / "p.csv"
    p.write_bytes(b"entry_id,response,sampling\n7,Yes,random\n8,S\xed,popular\n")  # latin-1, not UTF-8
    with pytest.raises(InputError) as err:
        load_yesno(q, p)
    assert (err.value.file, err.value.row) == (str(p), 3) and "not UTF-8" in str(err.value)
    assert "byte 0xed at byte offset 43" in str(err.value)
    # an over-long reply is that row's problem; the other rows load
    monkeypatch.setenv("HALLUSCOPE_MAX_FIELD_BYTES", "100000")
    long = _predictions(
        tmp_path / "long.csv",
        ["entry_id", "response", "sampling"],
        [["7", "Yes", "random"], ["8", "x" * 200_000, "popular"]],
    )
    loaded = load_yesno(q, long)
    bad = next(x for x in loaded.problems if x.file == str(long))
    assert (bad.row, bad.field) == (3, "response") and "over the per-field limit of 100,000 bytes" in bad.message
    assert "HALLUSCOPE_MAX_FIELD_BYTES" in bad.fix and [i.key for i in loaded.items] == ["random:7"]


# ---------------------------------------------------------------- the asked subject reaches the yes/no reader
@pytest.mark.parametrize(
    "question,subject",
    [
        ("Is there a dog barking?", "dog barking"),
        ("Is there a sound of frying (food) in the audio?", "frying (food)"),
        ("Does the audio contain the sound of train wagon?", "train wagon"),
        ("Have you noticed the sound of speech in the audio?", "speech"),
        ("Can you detect the sound of a kid speaking in the audio?", "kid speaking"),
        ("Can you hear a trumpet?", "trumpet"),
        ("What is the speaker's gender?", None),
    ],
)
def test_asked_subject(question: str, subject: str | None) -> None:
    assert asked_subject(question) == subject


def _binary(tmp_path: Path, write_jsonl, prompt: str, pred: str) -> Path:
    return write_jsonl(
        tmp_path / "binary.jsonl",
        [
            {
                "audio": "a.wav",
                "prompt": prompt,
                "reference": "no",
                "subset": "fsd_binary",
                "domain": "sound",
                "pred": pred,
            }
        ],
    )


def test_halluaudio_and_yesno_pass_the_asked_subject(tmp_path: Path, write_jsonl, monkeypatch) -> None:
    import halluscope.closedform.score as score

    seen: list[str | None] = []
    real = score.extract_yesno
    monkeypatch.setattr(
        score,
        "extract_yesno",
        lambda text, **kw: seen.append(kw.get("subject") or asked_subject(kw.get("question"))) or real(text, **kw),
    )
    score_halluaudio(load_halluaudio([_binary(tmp_path, write_jsonl, "Is there a dog barking?", "No.")]), bootstrap=0)
    q = _questions(tmp_path / "q.txt", QROWS[2:3])
    score_yesno(load_yesno(q, _predictions(tmp_path / "p.csv", ["entry_id", "response"], [["8", "No."]])), bootstrap=0)
    assert seen == ["dog barking", "rain"]


@pytest.mark.parametrize(
    "prompt,pred",
    [
        ("Is there a dog barking?", "I hear birds singing, not a dog."),
        ("Is there a trumpet?", "I only hear drums."),
    ],
)
def test_a_reply_about_another_sound_is_not_yes(tmp_path: Path, write_jsonl, prompt: str, pred: str) -> None:
    r = score_halluaudio(load_halluaudio([_binary(tmp_path, write_jsonl, prompt, pred)]), bootstrap=0)
    assert r.items[0].strict == "no"
