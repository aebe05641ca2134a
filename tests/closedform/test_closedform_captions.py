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
    preds.write_text(json.dumps({
        "Y1": {"Describe the audio.": {"prediction": "A dog barks and a car engine idles."},   # Dog; Car hallucinated
               "What do you hear?": {"prediction": "Speech, not a dog."}},                      # Speech; dog negated
        "Y2": {"Describe the audio.": {"prediction": "Rain on surface, with speech."}},          # Rain on surface; Speech
        "Y9": {"Describe the audio.": {"prediction": "x"}},
    }), encoding="utf-8")
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
