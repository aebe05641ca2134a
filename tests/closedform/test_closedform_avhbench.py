"""AVHBench as released (a JSON array per video: video_id, task, text, label; the README's example objects) with
model replies added: the yes/no tasks and captioning score end to end; bad objects are named."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.avhbench import caption_overlap, load_avhbench, score_avhbench

runner = CliRunner()
RELEASED = [  # the README's example for video 00191, with replies
    ("Video-driven Audio Hallucination", "Is the sleeping man making sound in the audio?", "Yes", "Yes, he is snoring."),
    ("Video-driven Audio Hallucination", "Is the couch making sound in the audio?", "No", "I hear a couch creaking."),
    ("Audio-driven Video Hallucination", "Is the sleeping man visible in the video?", "Yes", "The sleeping man is lying in bed."),
    ("Audio-driven Video Hallucination", "Is the person walking visible in the video?", "No", "No, nobody walks."),
    ("AV Matching", "Are the contexts of audio and visual content matching?", "Yes", "Yes."),
    ("AV Captioning", "Describe what you see and hear in a single sentence.",
     "A young man with no shirt on is laying in bed, with footsteps walking on a hard surface followed by a person snoring.",
     "A man lies in bed snoring while footsteps walk."),
]


def _file(tmp_path: Path) -> Path:
    objs = [{"video_id": "00191", "task": t, "text": q, "label": lab, "prediction": p} for t, q, lab, p in RELEASED]
    objs.append({"video_id": "00191", "task": "AV Matching", "text": "?", "label": "Yes"})  # no reply
    f = tmp_path / "00191.json"
    f.write_text(json.dumps(objs, indent=2), encoding="utf-8")
    return f


def test_released_array_scores_every_task(tmp_path: Path) -> None:
    r = score_avhbench(load_avhbench([_file(tmp_path)]))
    assert r["n_items"] == 6 and len(r["problems"]) == 1 and "object 7" in r["problems"][0]
    vda = r["tasks"]["Video-driven Audio Hallucination"]
    # "I hear a couch creaking." to the couch question reads yes: a false positive, Yes 100 %
    assert vda["accuracy_percent"] == 50.0 and vda["yes_percent"] == 100.0 and vda["precision_percent"] == 50.0
    avh = r["tasks"]["Audio-driven Video Hallucination"]
    assert avh["accuracy_percent"] == 100.0 and avh["f1_percent"] == 100.0  # "The sleeping man is lying in bed." is yes
    cap = r["tasks"]["AV Captioning"]
    assert 0 < cap["word_recall"] < cap["word_precision"] <= 1 and "not METEOR" in cap["metric"]


def test_caption_overlap_counts_content_words() -> None:
    assert caption_overlap("a dog barks", "the dog barks loudly") == {"precision": 2 / 3, "recall": 1.0, "f1": 0.8}


def test_cli(tmp_path: Path) -> None:
    res = runner.invoke(app, ["score", "avhbench", str(_file(tmp_path)), "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    assert json.loads(res.stdout)["tasks"]["AV Matching"]["accuracy_percent"] == 100.0
