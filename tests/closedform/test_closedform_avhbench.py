"""AVHBench as released (a JSON array per video: video_id, task, text, label; the README's example objects) with
model replies added: the yes/no tasks and captioning score end to end; bad objects are named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.avhbench import caption_overlap, load_avhbench, score_avhbench
from halluscope.core.errors import InputError

runner = CliRunner()
RELEASED = [  # the README's example for video 00191, with replies
    (
        "Video-driven Audio Hallucination",
        "Is the sleeping man making sound in the audio?",
        "Yes",
        "Yes, he is snoring.",
    ),
    ("Video-driven Audio Hallucination", "Is the couch making sound in the audio?", "No", "I hear a couch creaking."),
    (
        "Audio-driven Video Hallucination",
        "Is the sleeping man visible in the video?",
        "Yes",
        "The sleeping man is lying in bed.",
    ),
    ("Audio-driven Video Hallucination", "Is the person walking visible in the video?", "No", "No, nobody walks."),
    ("AV Matching", "Are the contexts of audio and visual content matching?", "Yes", "Yes."),
    (
        "AV Captioning",
        "Describe what you see and hear in a single sentence.",
        "A young man with no shirt on is laying in bed, with footsteps walking on a hard surface followed by a person snoring.",
        "A man lies in bed snoring while footsteps walk.",
    ),
]


CAPTION_Q = "Describe what you see and hear in a single sentence."
OTHER_VIDEOS = {  # two more videos' captioning objects in the same shape: the reply verbatim, and an unrelated one
    "00006": (
        "A woman speaks while birds chirp in the background.",
        "A woman speaks while birds chirp in the background.",
    ),
    "00159": ("A train horn blows as a train passes by.", "Someone types on a keyboard."),
}


def _file(tmp_path: Path, *, captions: bool = True) -> Path:
    objs = [
        {"video_id": "00191", "task": t, "text": q, "label": lab, "prediction": p}
        for t, q, lab, p in RELEASED
        if captions or t != "AV Captioning"
    ]
    objs.append({"video_id": "00191", "task": "AV Matching", "text": "?", "label": "Yes"})  # no reply
    f = tmp_path / "00191.json"
    f.write_text(json.dumps(objs, indent=2), encoding="utf-8")
    return f


def _captions(tmp_path: Path) -> list[Path]:
    out = [_file(tmp_path)]
    for vid, (label, reply) in OTHER_VIDEOS.items():
        out.append(tmp_path / f"{vid}.json")
        out[-1].write_text(
            json.dumps(
                [{"video_id": vid, "task": "AV Captioning", "text": CAPTION_Q, "label": label, "prediction": reply}],
                indent=2,
            ),
            encoding="utf-8",
        )
    return out


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict:
    """Three videos scored once (METEOR starts one Java process and loads its paraphrase table)."""
    return score_avhbench(load_avhbench(_captions(tmp_path_factory.mktemp("avhbench"))))


def test_released_array_scores_every_task(scored: dict) -> None:
    r = scored
    assert r["n_items"] == 8 and len(r["problems"]) == 1 and "object 7" in r["problems"][0]
    vda = r["tasks"]["Video-driven Audio Hallucination"]
    # "I hear a couch creaking." to the couch question reads yes: a false positive, Yes 100 %
    assert vda["accuracy_percent"] == 50.0 and vda["yes_percent"] == 100.0 and vda["precision_percent"] == 50.0
    avh = r["tasks"]["Audio-driven Video Hallucination"]
    assert avh["accuracy_percent"] == 100.0 and avh["f1_percent"] == 100.0  # "The sleeping man is lying in bed." is yes
    cap = r["tasks"]["AV Captioning"]
    para = next(i for i in r["items"] if i["video_id"] == "00191" and i["task"] == "AV Captioning")
    assert 0 < para["recall"] < para["precision"] <= 1 and "METEOR" in cap["metric"]


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR and the COCO tokenizer need java")
def test_captioning_is_scored_with_meteor_and_cider(scored: dict) -> None:
    r = scored
    cap = r["tasks"]["AV Captioning"]
    items = {i["video_id"]: i for i in r["items"] if i["task"] == "AV Captioning"}
    assert cap["n"] == 3 and "metric_error" not in cap
    same, para, other = items["00006"], items["00191"], items["00159"]
    # the reply that is the reference scores highest, the paraphrase between, the unrelated caption 0 on both
    assert same["meteor"] > 0.9 and same["cider"] > para["cider"] > other["cider"] == 0.0
    assert same["meteor"] > para["meteor"] > other["meteor"] >= 0.0
    # corpus figures: METEOR from the jar's pooled statistics, CIDEr the mean of the per-item scores
    assert 0 < cap["meteor"] < 1 and cap["cider"] == pytest.approx(sum(i["cider"] for i in items.values()) / 3)


def test_without_java_the_caption_metrics_say_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    cap = score_avhbench(load_avhbench(_captions(tmp_path)))["tasks"]["AV Captioning"]
    assert cap["meteor"] is None and cap["cider"] is None and "default-jre-headless" in cap["metric_error"]
    assert cap["word_f1"] > 0  # the overlap column needs no Java


def test_caption_overlap_counts_content_words() -> None:
    assert caption_overlap("a dog barks", "the dog barks loudly") == {"precision": 2 / 3, "recall": 1.0, "f1": 0.8}


def test_cli(tmp_path: Path) -> None:
    res = runner.invoke(app, ["score", "avhbench", str(_file(tmp_path, captions=False)), "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    assert json.loads(res.stdout)["tasks"]["AV Matching"]["accuracy_percent"] == 100.0


# qa_final_single_filtered.json's shape: one array for every video, v1 task names (written here in that shape)
QA_FILE = [
    ("02060", "AV Hallucination (Audio)", "Is the car making sound in the audio?", "Yes", "Yes, the car is."),
    ("02060", "AV Hallucination (Audio)", "Is the street making sound in the audio?", "No", "No."),
    ("02060", "AV Hallucination (Video)", "Is the car visible in the video?", "Yes", "Yes."),
    ("02060", "AV Hallucination (Audio_only)", "Is the car making sound in the audio?", "Yes", "Yes."),
    ("02060", "AV Hallucination (Video_only)", "Is the rain visible in the video?", "Yes", "No."),
    ("02060", "AV Matching", "Are the contexts of audio and visual content matching?", "Yes", "Yes."),
    ("01162", "AV Matching", "Are the contexts of audio and visual content matching?", "No", "No."),
    ("01162", "AV Reasoning", "Why is the man laughing?", "He is tickled.", "He is tickled."),
    ("01162", "AV Matching", "Are the contexts of audio and visual content matching?", "Maybe", "No."),
    ("01630", "AV Hallucination (Audio)", "Is the man making sound in the audio?", "Yes", None),
    ("01630", "AV Hallucination (Audio)", "Is the bird making sound in the audio?", "No", "No."),
    ("01630", "AV Hallucination (Audio)", "Is the bird making sound in the audio?", "No", "No, it is not."),
]


def _qa_file(tmp_path: Path) -> Path:
    objs = []
    for vid, task, text, label, reply in QA_FILE:
        obj = {"video_id": vid, "task": task, "text": text, "label": label}
        objs.append(obj if reply is None else {**obj, "prediction": reply})
    f = tmp_path / "qa_final_single_filtered.json"
    f.write_text(json.dumps(objs, indent=4), encoding="utf-8")
    return f


def test_qa_file_v1_names_map_to_the_tasks_and_every_object_is_counted(tmp_path: Path) -> None:
    r = score_avhbench(load_avhbench([_qa_file(tmp_path)]))
    assert r["n_objects"] == len(QA_FILE) == r["n_items"] + r["n_problems"]
    assert r["n_problems"] == 3 and sum(r["problem_totals"].values()) == 3
    assert r["problem_totals"]["unknown task 'AV Reasoning'"] == 1
    assert any(k.startswith("a yes/no task needs label Yes or No") for k in r["problem_totals"])
    assert any(k.startswith("no reply") for k in r["problem_totals"])
    tasks = r["tasks"]
    assert tasks["Video-driven Audio Hallucination"]["released_as"] == {"AV Hallucination (Audio)": 4}
    assert tasks["Audio-driven Video Hallucination"]["n"] == 1
    assert tasks["Audio Hallucination (audio only)"]["accuracy_percent"] == 100.0
    assert tasks["Video Hallucination (video only)"]["accuracy_percent"] == 0.0  # "No." to a Yes label
    assert tasks["AV Matching"]["n"] == 2
    assert any("1 question(s) appear more than once" in n for n in r["notes"])


def test_v0_and_v1_names_score_the_same_task_together(tmp_path: Path) -> None:
    r = score_avhbench(load_avhbench([_file(tmp_path, captions=False), _qa_file(tmp_path)]))
    vda = r["tasks"]["Video-driven Audio Hallucination"]
    assert vda["released_as"] == {"AV Hallucination (Audio)": 4, "Video-driven Audio Hallucination": 2}
    assert len({i["id"] for i in r["items"]}) == r["n_items"]  # ids stay unique across the two files


def test_text_output_prints_the_problem_totals(tmp_path: Path) -> None:
    res = runner.invoke(app, ["score", "avhbench", str(_qa_file(tmp_path))])
    assert res.exit_code == 0, (res.output, res.exception)
    out = " ".join(res.output.split())
    assert f"{len(QA_FILE)} object(s) in 1 file(s): {len(QA_FILE) - 3} scored, 3 problem(s)" in out
    assert "3 input problem(s)" in out and "1 unknown task 'AV Reasoning'" in out
    data = json.loads(runner.invoke(app, ["score", "avhbench", str(_qa_file(tmp_path)), "--json"]).stdout)
    assert data["n_problems"] == len(data["problems"]) == 3


def test_a_file_with_no_scorable_object_says_how_many_problems(tmp_path: Path) -> None:
    f = tmp_path / "00001.json"
    f.write_text(json.dumps([{"video_id": "00001", "task": "AV Reasoning", "text": "?", "label": "x"}]), "utf-8")
    with pytest.raises(InputError, match=r"1 problem\(s\).*unknown task"):
        score_avhbench(load_avhbench([f]))
