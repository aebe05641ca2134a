"""Kuan et al.'s generative captions, files written to the released shape (metadata CSV with list literals; the
authors' generation JSON): ECHO_I, ECHO_S and Cover computed by hand on three captions."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.kuan_captions import named_objects, score_kuan_captions
from halluscope.core.errors import InputError


def _files(tmp_path: Path) -> tuple[Path, Path]:
    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        w.writerow(["Y1", "['A dog barks as a man speaks']", "['Dog', 'Speech']"])
        w.writerow(["Y2", "['Rain falls on a roof']", "['Rain', 'Rain on surface']"])
    preds = tmp_path / "generative.json"
    preds.write_text(
        json.dumps(
            {
                "Y1": {
                    "Describe the audio.": {
                        "prediction": "A dog barks and a car engine idles."
                    },  # Dog; Car hallucinated
                    "What do you hear?": {"prediction": "Speech, not a dog."},
                },  # Speech; dog negated
                "Y2": {
                    "Describe the audio.": {"prediction": "Rain on surface, with speech."}
                },  # Rain on surface; Speech
                "Y9": {"Describe the audio.": {"prediction": "x"}},
            }
        ),
        encoding="utf-8",
    )
    return meta, preds


def test_echo_and_cover(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    # the vocabulary is every clip's labels: Dog, Speech, Rain, Rain on surface ("car" is no label: not an object)
    r = score_kuan_captions(meta, preds)
    m = r["metrics"]["all"]
    assert m["n_captions"] == 3 and m["objects_named"] == 4  # dog | speech | rain on surface, speech
    assert m["echo_i"] == 1 / 4 and m["echo_s"] == 1 / 3  # Y2's speech is hallucinated
    assert m["cover"] == 3 / 6  # Y1: dog, speech of 2 (twice 2 truths), Y2: rain on surface of 2
    assert r["problems"] == [f"{preds}: clip 'Y9' is not in {meta}"]
    assert named_objects("Rain on surface.", ["Rain", "Rain on surface"]) == {"rain on surface"}


def test_bad_literal_is_one_clear_error(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    meta.write_text("youtube_id,caption,label\nY1,\"['a']\",\"['Dog'\"\n", encoding="utf-8")
    with pytest.raises(InputError, match="row 2.*label|label.*row 2"):
        score_kuan_captions(meta, preds)


def test_cli(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    res = CliRunner().invoke(app, ["score", "captions", str(meta), str(preds), "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    assert json.loads(res.stdout)["metrics"]["Describe the audio."]["n_captions"] == 2


def _extract_script(answers: dict[str, str]):
    from support.chat_server import Reply, user_text

    def script(req: dict, n: int) -> Reply:
        caption = user_text(req).split("Description: ", 1)[1]
        return Reply(content=answers[caption])

    return script


def test_llm_extractor_through_a_scripted_server_stored_and_named(tmp_path: Path, monkeypatch) -> None:
    from support.chat_server import ChatServer

    meta, preds = _files(tmp_path)
    answers = {
        "A dog barks and a car engine idles.": 'Sounds: ["dog barking", "car engine"]',
        "Speech, not a dog.": '```json\n["speech"]\n```',
        "Rain on surface, with speech.": "I cannot tell.",  # no array: unscored, never 'names nothing'
        "A dog barks as a man speaks": '["dog", "man speaking"]',  # the human captions (the floor)
        "Rain falls on a roof": '["rain"]',
    }
    args = ["score", "captions", str(meta), str(preds), "--extractor", "llm:openai/extract-m"]
    with ChatServer(_extract_script(answers)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        first = CliRunner().invoke(app, [*args, "--json"])
        assert first.exit_code == 0, (first.output, first.exception)
        calls = srv.count
        text = CliRunner().invoke(app, args)
        assert text.exit_code == 0 and srv.count == calls == 5  # the rerun is answered from the store
    r = json.loads(first.stdout)
    assert r["extractor"] == "llm:openai/extract-m" and r["notes"][0].startswith("extractor: llm:openai/extract-m")
    m = r["metrics"]["all"]
    # Y1: dog barking (Dog) + car engine (no label: hallucinated); speech (Speech); Y2 unscored
    assert m["n_captions"] == 3 and m["unscored"] == 1 and m["objects_named"] == 3
    assert m["echo_i"] == 1 / 3 and m["echo_s"] == 1 / 2 and m["cover"] == 2 / 4
    raw = {i["prediction"]: i for i in r["items"]}
    assert raw["Rain on surface, with speech."]["extractor_raw"] == "I cannot tell."
    assert "no JSON array" in raw["Rain on surface, with speech."]["reason"]
    assert "extractor: llm:openai/extract-m" in text.output and "1 caption(s) unscored" in text.output
    assert (tmp_path / "generative.json.extractor").is_dir()


def test_vocabulary_is_the_default_and_named(tmp_path: Path) -> None:
    r = score_kuan_captions(*_files(tmp_path))
    assert r["extractor"] == "vocabulary" and "lower bound" in r["notes"][0]
    res = CliRunner().invoke(app, ["score", "captions", *map(str, _files(tmp_path)), "--extractor", "gpt"])
    assert isinstance(res.exception, InputError) and "llm:<spec>" in str(res.exception)


def _kuan_as_captions(realdata: Path, tmp_path: Path) -> tuple[Path, Path, list[dict]]:
    """Kuan et al.'s real question file in the generative task's released shape: each question is a 'caption' that
    names exactly one object (its 'object' column), a clip's labels are its objects asked with label Yes; the
    prompt key is the question's format (Format1..5, the paper's five phrasings)."""
    lines = [
        ln
        for ln in (realdata / "kuan_object_hallucination" / "balanced_popular_test_957.txt")
        .read_text(encoding="utf-8")
        .splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    present: dict[str, set[str]] = {}
    for r in rows:
        present.setdefault(r["audio_index"], set())
        if r["label"] == "Yes":
            present[r["audio_index"]].add(r["object"])
    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        for r in rows:
            w.writerow([f"{r['audio_index']}#{r['entry_id']}", "[]", repr(sorted(present[r["audio_index"]]))])
    preds = tmp_path / "generative.json"
    preds.write_text(
        json.dumps(
            {
                f"{r['audio_index']}#{r['entry_id']}": {r["question_format"]: {"prediction": r["prompt_text"]}}
                for r in rows
            }
        ),
        encoding="utf-8",
    )
    return meta, preds, rows


def test_both_extractors_on_kuan_real_questions(realdata: Path, tmp_path: Path, monkeypatch) -> None:
    import re

    from support.chat_server import ChatServer

    meta, preds, rows = _kuan_as_captions(realdata, tmp_path)
    yes = {f"{r['audio_index']}#{r['entry_id']}" for r in rows if r["label"] == "Yes"}
    vocab = score_kuan_captions(meta, preds)
    # every asked-present object is found in its question and grounded, whatever its released spelling
    # ("frying (food)", "clip-clop", "fixed-wing aircraft")
    assert all(i["covered"] and not i["hallucinated"] for i in vocab["items"] if i["youtube_id"] in yes)
    # the scripted LLM answers each question with its object as a person would write it: no qualifier in brackets
    plain = {r["prompt_text"]: json.dumps([re.sub(r"\s*\(.*?\)", "", r["object"])]) for r in rows}
    with ChatServer(_extract_script(plain)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        from halluscope.closedform.llmextract import LLMExtractor

        llm = score_kuan_captions(meta, preds, extractor=LLMExtractor("openai/extract-m", tmp_path / "store"))
        assert srv.count == len(plain)  # one call per distinct caption text: the same request is sent once
    assert llm["metrics"]["all"]["unscored"] == 0
    assert all(i["covered"] and not i["hallucinated"] for i in llm["items"] if i["youtube_id"] in yes)
    negatives = 1 - len(yes) / len(rows)
    for r in (vocab, llm):  # a negative question's object is hallucinated unless it names a present one
        assert 0.8 * negatives < r["metrics"]["all"]["echo_s"] <= negatives
