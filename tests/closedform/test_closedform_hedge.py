"""A hedged reply is its own class wherever the strict reader's classes are counted: never a yes (the Yes-ratio
leaves it out), never an abstention (FRR leaves it out), and every score output names the reader's version and the
replies it could not read."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.loaders import load_halluaudio
from halluscope.closedform.score import score_halluaudio
from halluscope.reply.yesno import READER_VERSION
from support.corpus_fixtures import write_jsonl

ROWS = [  # (prompt, reference, reply, strict class)
    ("Is there a dog barking in the audio?", "yes", "Yes, a dog is barking.", "yes"),
    ("Is there a dog barking in the audio?", "no", "Maybe.", "hedge"),
    ("Is there a siren in the audio?", "no", "There might be a siren far away.", "hedge"),
    ("Is there a siren in the audio?", "no", "The siren cannot be heard.", "no"),
    ("Is there a cat in the audio?", "no", "The category of this sound is traffic.", "unrelated"),
    ("Is there a cat in the audio?", "yes", "I'm sorry, but I can't listen to audio files.", "refusal"),
]


def _file(tmp_path: Path) -> Path:
    rows = [
        {"audio": f"a{i}.wav", "prompt": p, "reference": ref, "subset": "fsd_binary", "domain": "sound", "pred": reply}
        for i, (p, ref, reply, _) in enumerate(ROWS)
    ]
    return write_jsonl(tmp_path / "preds.jsonl", rows)


def test_hedge_counted_apart_from_yes_and_abstention(tmp_path: Path) -> None:
    result = score_halluaudio(load_halluaudio([_file(tmp_path)]), bootstrap=0)
    assert [i.strict for i in result.items] == [want for *_, want in ROWS]
    m = result.strict["all"]
    n_yes = sum(want == "yes" for *_, want in ROWS)
    assert m["classes"]["hedge"] == sum(want == "hedge" for *_, want in ROWS)
    assert m["n_yes"] == n_yes and m["yes_p_ratio"] == n_yes / len(ROWS)
    assert m["n_abstain"] == sum(want in ("refusal", "unknown") for *_, want in ROWS)
    d = result.as_dict()
    assert d["extraction"]["classes"]["hedge"] == 2
    reader = d["reply_reader"]
    assert reader["version"] == READER_VERSION and reader["n_replies"] == len(ROWS)
    assert reader["unread"] == sum(want in ("ambiguous", "unrelated") for *_, want in ROWS)
    assert reader["hedge"] == 2 and READER_VERSION in reader["line"]


def test_score_outputs_state_reader_version_and_unread(tmp_path: Path) -> None:
    path = _file(tmp_path)
    text = CliRunner().invoke(app, ["score", "halluaudio", str(path), "--bootstrap", "0"])
    assert text.exit_code == 0, text.output
    assert f"reply reader {READER_VERSION}: 1 of {len(ROWS)} replies could not be read" in text.output
    out = CliRunner().invoke(app, ["score", "halluaudio", str(path), "--bootstrap", "0", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output[out.output.index("{") :])
    assert data["reply_reader"]["version"] == READER_VERSION and data["reply_reader"]["unread"] == 1
    report = tmp_path / "report"
    rep = CliRunner().invoke(app, ["score", "halluaudio", str(path), "--bootstrap", "0", "--report", str(report)])
    assert rep.exit_code == 0, rep.output
    html = (report / "report.html").read_text(encoding="utf-8")
    assert READER_VERSION in html and "could not be read" in html


AVH = [  # AVHBench's released QA shape: (task, question, label, reply, strict reading)
    ("AV Hallucination (Audio)", "Is the dog making sound in the audio?", "No", "The dog cannot be heard.", "no"),
    ("AV Hallucination (Audio)", "Is the man making sound in the audio?", "Yes", "Maybe.", "hedge"),
    ("AV Hallucination (Audio)", "Is the car making sound in the audio?", "No", "A bird sings.", "unrelated"),
]


def test_avhbench_output_states_the_reader(tmp_path: Path) -> None:
    objs = [
        {"video_id": f"v{i}", "task": task, "text": q, "label": label, "prediction": reply}
        for i, (task, q, label, reply, _) in enumerate(AVH)
    ]
    path = tmp_path / "qa_final_single_filtered.json"
    path.write_text(json.dumps(objs), encoding="utf-8")
    out = CliRunner().invoke(app, ["score", "avhbench", str(path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output[out.output.index("{") :])
    assert [r["read"] for r in data["items"]] == [want for *_, want in AVH]
    assert data["reply_reader"]["version"] == READER_VERSION and data["reply_reader"]["unread"] == 1
    text = CliRunner().invoke(app, ["score", "avhbench", str(path)])
    assert f"reply reader {READER_VERSION}: 1 of {len(AVH)} replies could not be read" in text.output


def test_audiotrust_output_states_the_reader(realdata) -> None:
    path = realdata / "audiotrust_hallucination" / "content_mismatc.jsonl"
    out = CliRunner().invoke(app, ["score", "audiotrust", str(path)])
    assert out.exit_code == 0, out.output
    assert f"reply reader {READER_VERSION}: " in out.output and "replies could not be read" in out.output
