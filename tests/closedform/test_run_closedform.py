"""'halluscope run closedform': an audio model on HalluAudio / AHa-Bench / yes-no sets, scored by 'halluscope score'."""

import json

import pytest

from support.tiny_audio_lm import clip45, omni_dir, qwen2_audio_dir  # noqa: F401 - fixtures

pytest.importorskip("transformers")

from typer.testing import CliRunner

from halluscope.backends.speech.audio import encode_wav
from halluscope.cli.main import app
from support import chat_server
from support.chat_server import ChatServer, Reply
from support.corpus_fixtures import write_jsonl
from support.tiny_audio_lm import espeak, espeak_of_length


def _text(request):
    out = []
    for m in request["messages"]:
        c = m["content"]
        out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if p.get("type") == "text"))
    return "\n".join(out)


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    root = tmp_path_factory.mktemp("clips")
    (root / "dog.wav").write_bytes(encode_wav(espeak("A dog is barking in the park.")))
    (root / "speech.wav").write_bytes(encode_wav(espeak("One two three four five.")))
    (root / "long.wav").write_bytes(encode_wav(espeak_of_length(35.0)))
    return root


def _halluaudio(tmp_path):
    rows = [
        {
            "id": "a",
            "audio": "dog.wav",
            "prompt": "Is there a dog barking?",
            "reference": "yes",
            "subset": "animal_binary",
            "domain": "sound",
        },
        {
            "id": "b",
            "audio": "dog.wav",
            "prompt": "Is there a cat meowing?",
            "reference": "no",
            "subset": "animal_binary",
            "domain": "sound",
        },
        {
            "id": "c",
            "audio": "speech.wav",
            "prompt": "How many words are spoken?",
            "reference": "5",
            "subset": "commonvoice_word_count",
        },
        {
            "id": "d",
            "audio": "missing.wav",
            "prompt": "Is there a bird?",
            "reference": "no",
            "subset": "animal_binary",
            "domain": "sound",
        },
        {
            "id": "e",
            "audio": "long.wav",
            "prompt": "Is anyone speaking?",
            "reference": "yes",
            "subset": "animal_binary",
            "domain": "sound",
        },
    ]
    return write_jsonl(tmp_path / "halluaudio.jsonl", rows)


def test_openai_audio_model_on_halluaudio_then_score(tmp_path, clips, monkeypatch):
    monkeypatch.setattr(chat_server, "user_text", _text)

    def script(req, n):
        parts = req["messages"][-1]["content"]
        assert parts[0]["type"] == "input_audio"
        q = _text(req)
        return Reply(
            content="Yes, a dog is barking."
            if "dog" in q
            else "There are five words."
            if "words" in q
            else "No."
            if "cat" in q
            else "Yes."
        )

    runner = CliRunner()
    src, out = _halluaudio(tmp_path), tmp_path / "preds" / "model.jsonl"
    with ChatServer(script) as srv:
        args = [
            "run",
            "closedform",
            str(tmp_path / "run"),
            str(src),
            "--model",
            "openai/audio-model",
            "--format",
            "halluaudio",
            "--audio-root",
            str(clips),
            "--out",
            str(out),
            "--audio-policy",
            "skip",
            "--json",
            "-o",
            f"base_url={srv.url}",
            "-o",
            "audio_window_s=30",
            "-o",
            "max_retries=0",
        ]
        res = runner.invoke(app, args)  # one row of five has no clip: more than the share fails, nothing written
        assert "step 'halluaudio openai/audio-model' failed on 20%" in str(res.exception), res.output
        assert srv.count == 3 and not out.exists()
        args.append("--allow-partial")  # keep the rows answered (their calls are in the store)
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        summary = json.loads(res.stdout)
        assert srv.count == 3 and summary["from_store"] == 3 and summary["answered"] == 3
        assert summary["status"] == {"ok": 3, "no audio": 1, "skipped": 1} and summary["audio"]["skipped"] == 1
        res = runner.invoke(app, args)  # the rerun is answered from the run's store
        assert json.loads(res.output)["calls"] == 0 and srv.count == 3
    assert (tmp_path / "run" / "halluscope.sqlite").exists()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [("pred" in r) for r in rows] == [True, True, True, False, False]  # failures are reported, not scored
    log = [json.loads(x) for x in (out.parent / "model.jsonl.delivery.jsonl").read_text().splitlines()]
    assert log[4]["audio"]["action"] == "skipped" and log[0]["audio"]["delivered"] is True
    res = runner.invoke(app, ["score", "halluaudio", str(out), "--json", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    scored = json.loads(res.output[res.output.index("\n{") + 1 :])  # problems are listed before the JSON
    assert scored["problems"]["count"] == 2
    assert "field 'pred': missing (required)" in json.dumps(scored["problems"])


def test_tiny_qwen2_audio_on_yesno_then_score(tmp_path, clips, qwen2_audio_dir):
    questions = tmp_path / "q.tsv"
    questions.write_text(
        "entry_id\taudio_index\tprompt_text\tobject\tlabel\tsampling\n"
        "1\tdog\tIs there a dog in the audio?\tdog\tYes\trandom\n"
        "1\tdog\tIs there a car in the audio?\tcar\tNo\tadversarial\n"  # ids repeat across strategies
        "3\tlong\tIs there speech in the audio?\tspeech\tYes\tpopular\n",
        encoding="utf-8",
    )
    out = tmp_path / "yesno.csv"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "run",
            "closedform",
            str(questions),
            "--model",
            f"hf-audio/{qwen2_audio_dir}",
            "--format",
            "yesno",
            "--audio-root",
            str(clips),
            "--out",
            str(out),
            "--audio-policy",
            "chunk",
            "--max-new-tokens",
            "4",
            "--json",
        ],
    )  # the old spelling (no RUN) still works
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert (
        summary["answered"] == 3 and summary["audio"] == {"whole": 2, "chunked": 1} and summary["audio_delivered"] == 3
    )
    log = [json.loads(x) for x in (tmp_path / "yesno.csv.delivery.jsonl").read_text().splitlines()]
    assert log[2]["audio"]["chunks"] == 2 and log[2]["audio"]["heard_s"] == pytest.approx(35.0)
    header = out.read_text().splitlines()[0]
    assert header == "entry_id,audio_index,sampling,response"
    res = runner.invoke(app, ["score", "yesno", str(questions), str(out), "--json", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    scored = json.loads(res.stdout)
    assert scored["problems"]["count"] == 0 and scored["n_items"] == 3, scored
