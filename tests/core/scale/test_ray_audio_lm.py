"""'mishap answer --executor ray': an hf-audio model (plain and with AAD) answers on Ray workers exactly as
in-process, every call logged once by the driver."""

import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from typer.testing import CliRunner

from halluscope.backends.llm import LLMConfig
from halluscope.cli.main import app
from halluscope.core.store import Store
from halluscope.mishap.answers import collect_answers


def _answers(run: Path, spec: str) -> tuple[dict, Counter]:
    """The stored answers (read back by a rerun, which must make no call) and the ok calls per request key."""
    again = collect_answers(run, spec, config=LLMConfig(), max_tokens=3, audio_policy="chunk", quiet=True)
    assert again.stats.calls == 0 and not again.failed
    with Store(run) as store:
        ok = Counter(c["key"] for c in store.calls() if c["status"] == "ok" and c["backend"].startswith("hf-audio/"))
    return {k: (a.text, a.status, a.audio) for k, a in again.results.items()}, ok


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_mishap_answers_on_ray_match_in_process(tmp_path, monkeypatch, ray_cluster):
    import torch

    from support import scripted
    from support.tiny_audio_lm import build_qwen2_audio

    model = build_qwen2_audio(tmp_path / "qwen2-audio")
    spec = f"hf-audio/{model}?mitigation=aad&alpha=0.5"
    local_run = scripted.build_run(tmp_path / "a", monkeypatch, judge=False, seeds=(0,), per_category=1)
    ray_run = scripted.build_run(tmp_path / "b", monkeypatch, judge=False, seeds=(0,), per_category=1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as on a 1-CPU worker, so float sums match bit for bit
    try:
        collect_answers(local_run, spec, config=LLMConfig(), max_tokens=3, audio_policy="chunk", quiet=True)
    finally:
        torch.set_num_threads(threads)
    res = CliRunner().invoke(
        app,
        [
            "mishap",
            "answer",
            str(ray_run),
            "--model",
            f"hf-audio/{model}",
            "--mitigation",
            "aad&alpha=0.5",
            "--max-tokens",
            "3",
            "--policy",
            "chunk",
            "--executor",
            "ray",
            "--ray-workers",
            "2",
        ],
    )
    assert res.exit_code == 0, res.output
    local, local_calls = _answers(local_run, spec)
    remote, remote_calls = _answers(ray_run, spec)
    assert len(local) == 12 and remote == local
    assert set(remote_calls.values()) == {1} and set(remote_calls) == set(local_calls)
    with Store(ray_run) as store:
        reply = next(json.loads(c["response"]) for c in store.calls() if c["backend"].startswith("hf-audio/"))
    assert reply["mitigation"]["method"] == "aad"  # the contrastive decoding ran on the worker


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_run_closedform_on_ray_writes_the_same_predictions(tmp_path, ray_cluster):
    import torch

    from halluscope.backends.speech.audio import encode_wav
    from support.tiny_audio_lm import build_qwen2_audio, espeak

    model = build_qwen2_audio(tmp_path / "qwen2-audio")
    (tmp_path / "dog.wav").write_bytes(encode_wav(espeak("A dog is barking in the park.")))
    rows = [
        {"id": str(i), "audio": "dog.wav", "prompt": p, "reference": "yes", "subset": "animal_binary"}
        for i, p in enumerate(["Is there a dog barking?", "Is there a cat?", "Is anyone speaking?"])
    ]
    questions = tmp_path / "set.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    common = [str(questions), "--model", f"hf-audio/{model}", "--format", "halluaudio", "--max-new-tokens", "4"]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as on a 1-CPU worker
    try:
        local = CliRunner().invoke(app, ["run", "closedform", *common, "--out", str(tmp_path / "local.jsonl")])
    finally:
        torch.set_num_threads(threads)
    remote = CliRunner().invoke(
        app,
        ["run", "closedform", *common, "--out", str(tmp_path / "ray.jsonl"), "--executor", "ray", "--ray-workers", "2"],
    )
    assert local.exit_code == 0 and remote.exit_code == 0, local.output + remote.output
    lines = (tmp_path / "local.jsonl").read_text().splitlines()
    assert len(lines) == 3 and (tmp_path / "ray.jsonl").read_text().splitlines() == lines
