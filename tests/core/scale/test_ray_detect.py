"""'detect --executor ray': encoder training per language as Ray jobs and hf generation on Ray actors give the
same predictions as in-process runs; a worker killed mid-generation loses and duplicates nothing."""

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from typer.testing import CliRunner

from halluscope.backends.llm import _hf
from halluscope.cli.main import app
from halluscope.core.executors import ItemTask, RayExecutor
from halluscope.core.records import EncoderTraining
from halluscope.core.store import Store
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect import detect
from halluscope.spoken.detect.encoder import TRAIN_STAGE_SUFFIX

FAST = {"epochs": 2, "lr": 5e-3, "batch_size": 8, "max_length": 64, "warmup_ratio": 0.0}
CFG = BuildConfig(
    corpus="demo",
    langs=("en", "ru"),
    tts="test-bytes",
    asr="test-bytes",
    seed=3,
    rewrites_per_article=1,
    articles_per_language=6,
)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from support.tiny_encoder import build_tiny_encoder, register_text_speech
    from support.tiny_hf import build_tiny_lm

    register_text_speech()
    tmp = tmp_path_factory.mktemp("raydet")
    texts = [v.text for v in build_spoken(tmp / "probe", CFG, quiet=True).samples.values()]
    return build_tiny_encoder(tmp / "enc", texts), build_tiny_lm(tmp / "lm")


def _run(path: Path) -> Path:
    build_spoken(path, CFG, quiet=True)  # in-process: the test TTS/ASR are registered here only
    return path


@pytest.fixture
def one_thread():
    """Ray workers get one torch thread per CPU asked; the in-process side uses one too, so sums match bit for bit."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _training(run_dir: Path, fp: str) -> dict:
    with Store(run_dir) as store:
        return store.results("detect" + TRAIN_STAGE_SUFFIX, fp, EncoderTraining)


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_encoder_on_ray_via_the_cli_matches_in_process(tmp_path, models, ray_cluster, one_thread):
    encoder, _ = models
    local_run, ray_run = _run(tmp_path / "local"), _run(tmp_path / "ray")
    local = detect(local_run, detector=f"encoder/{encoder}", options=FAST)
    opts = [arg for k, v in FAST.items() for arg in ("-o", f"{k}={v}")]
    res = CliRunner().invoke(
        app,
        ["detect", str(ray_run), "--detector", f"encoder/{encoder}", *opts, "--executor", "ray", "--ray-workers", "2"],
    )
    assert res.exit_code == 0, res.output
    remote = detect(ray_run, detector=f"encoder/{encoder}", options=FAST)  # a rerun: reads what the CLI stored
    assert remote.stage_fingerprint == local.stage_fingerprint  # the executor is not part of the key
    assert remote.predictions == local.predictions and len(local.predictions) >= 8
    a, b = _training(local_run, local.stage_fingerprint), _training(ray_run, remote.stage_fingerprint)
    assert set(a) == set(b) == {"en", "ru"}  # one model per language, each a Ray job
    for lang in a:
        assert a[lang].dev_macro_f1 == b[lang].dev_macro_f1 and a[lang].best_checkpoint == b[lang].best_checkpoint
        # the worker sent the kept model back; the driver wrote it where an in-process run saves it
        assert b[lang].saved_to == a[lang].saved_to
        assert (ray_run / b[lang].saved_to / "config.json").read_bytes() == (
            local_run / a[lang].saved_to / "config.json"
        ).read_bytes()


def _calls(run_dir: Path) -> tuple[dict, Counter]:
    with Store(run_dir) as store:
        calls = list(store.calls())
    ok = Counter(c["key"] for c in calls if c["status"] == "ok")
    return {c["key"]: json.loads(c["response"])["text"] for c in calls if c["status"] == "ok"}, ok


@dataclass
class KillOnce(ItemTask):
    """Wraps the hf batch task: the first batch holding ``victim`` kills its worker process (SIGKILL)."""

    inner: ItemTask
    victim: str
    marker: str

    def setup(self, resources):
        self.inner.setup(resources)

    def __call__(self, requests):
        if any(self.victim in (r.tag or "") for r in requests) and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner(requests)


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_hf_generation_on_ray_matches_in_process_and_survives_a_killed_worker(
    tmp_path, models, ray_cluster, one_thread, monkeypatch
):
    _, lm = models
    spec = f"hf/{lm}"
    # batch_size=1: a batch's left padding changes float sums; one request per call keeps replies comparable
    options = {"max_tokens": 5, "batch_size": 1}
    local_run, ray_run = _run(tmp_path / "local"), _run(tmp_path / "ray")
    local = detect(local_run, detector=spec, options=options)
    victim = sorted(local.predictions)[3]
    marker = tmp_path / "killed"
    original = _hf._Generate
    monkeypatch.setattr(_hf, "_Generate", lambda backend: KillOnce(original(backend), victim, str(marker)))
    with RayExecutor(ray_run, workers=2) as ex:
        remote = detect(ray_run, detector=spec, options=options, executor=ex)
    assert marker.exists(), "the victim's worker was never killed"
    assert remote.stage_fingerprint == local.stage_fingerprint
    assert remote.predictions == local.predictions  # nothing lost, the victim retried on a fresh worker
    texts_local, ok_local = _calls(local_run)
    texts_ray, ok_ray = _calls(ray_run)
    assert texts_ray == texts_local and set(ok_ray.values()) == {1}  # each reply generated and stored once
    # a rerun on Ray makes no call at all
    with RayExecutor(ray_run, workers=1) as ex:
        again = detect(ray_run, detector=spec, options=options, executor=ex)
    assert again.predictions == local.predictions and _calls(ray_run)[1] == ok_ray


@dataclass
class Square(ItemTask):
    """x -> x*x; ``x == bomb`` kills its worker every time."""

    bomb: int = -1

    def __call__(self, x: int) -> int:
        if x == self.bomb:
            os.kill(os.getpid(), signal.SIGKILL)
        return x * x


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_actor_pool_spreads_calls_and_fails_only_the_call_that_keeps_killing_workers(tmp_path, ray_cluster):
    async def main(pool):
        await pool.start()
        try:
            return pool.size, await asyncio.gather(*(pool.call(x) for x in range(6)))
        finally:
            await pool.close()

    with RayExecutor(tmp_path, workers=2, max_item_attempts=2) as ex:
        size, out = asyncio.run(main(ex.pool("hf", Square(bomb=4))))
    assert size == 2
    assert [o for i, o in enumerate(out) if i != 4] == [(True, i * i) for i in range(6) if i != 4]
    assert out[4][0] is False and "died 2 times" in out[4][1]


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_detect_against_a_cluster_address_streams_the_model_back(tmp_path, models, ray_cluster):
    """A second driver reaches the tests' cluster by RAY_ADDRESS; the encoder trains there, the driver writes."""
    encoder, _ = models
    run = _run(tmp_path / "run")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_ADDRESS": ray_cluster.get_runtime_context().gcs_address}
    env.pop("PYTHONPATH", None)
    opts = [arg for k, v in {**FAST, "epochs": 1}.items() for arg in ("-o", f"{k}={v}")]
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "halluscope",
            "detect",
            str(run),
            "--detector",
            f"encoder/{encoder}",
            *opts,
            "--executor",
            "ray",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    with Store(run) as store:
        fp = [m for m in store.manifests() if m.command == "detect"][-1].stages["detect"]
    logs = _training(run, fp)
    assert set(logs) == {"en", "ru"}
    assert all((run / log.saved_to / "model.safetensors").exists() for log in logs.values())
    assert not (run / ".ray").exists()


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_hf_audio_on_ray_matches_in_process(tmp_path, ray_cluster, one_thread):
    from support.tiny_audio_lm import build_qwen2_audio
    from support.tiny_encoder import register_text_speech

    register_text_speech()  # the run's test TTS/ASR, also when this test runs alone

    model = build_qwen2_audio(tmp_path / "qwen2-audio")
    spec = f"hf-audio/{model}"
    options = {"max_tokens": 4, "audio_window_s": 1.0}
    local_run, ray_run = _run(tmp_path / "local"), _run(tmp_path / "ray")
    local = detect(local_run, detector=spec, input="audio", options=options)
    with RayExecutor(ray_run, workers=2) as ex:
        remote = detect(ray_run, detector=spec, input="audio", options=options, executor=ex)
    assert remote.predictions == local.predictions
    assert any(p.status != "error" for p in local.predictions.values()), "every generation failed"
    assert len(remote.predictions) >= 8 and all(p.audio is not None for p in remote.predictions.values())
    assert _calls(ray_run)[0] == _calls(local_run)[0]
