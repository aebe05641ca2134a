"""'cascade/<asr>+hf/<dir>' with --executor ray: the inner hf model generates on Ray workers (the driver never
loads it), the ASR on the driver, and the replies equal the in-process ones."""

import asyncio

import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("faster_whisper")

from halluscope.backends.audio_lm import clip_of, create_audio_backend, with_audio
from halluscope.backends.llm import Caller, LLMConfig
from halluscope.core.executors import RayExecutor, place
from halluscope.core.store import Store


def _ask(backend, run) -> list:
    tone = clip_of(0.3 * np.sin(2 * np.pi * 440 * np.arange(8000) / 16000), 16000)
    reqs = [
        with_audio(backend.request([{"role": "user", "content": q}], params={"max_tokens": 4}), [tone])
        for q in ("hello world", "the bank rate")
    ]

    async def main():
        async with Caller(backend, Store(run)) as caller:
            return [await caller.complete(r) for r in reqs]

    return asyncio.run(main())


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_cascade_llm_generates_on_ray_workers_like_in_process(tmp_path, ray_cluster):
    import torch

    from support.tiny_hf import build_tiny_lm

    lm = build_tiny_lm(tmp_path / "lm")
    spec = f"cascade/whisper/base+hf/{lm}?language=en"
    config = LLMConfig(hf={"device": "cpu", "batch_size": 1})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as on a 1-CPU worker, so float sums match bit for bit
    try:
        local = create_audio_backend(spec, config=config)
        here = _ask(local, tmp_path / "local")
    finally:
        torch.set_num_threads(threads)
    assert local.llm._model is not None  # in-process: the driver loaded it
    with RayExecutor(tmp_path / "ray", workers=1) as ex:
        remote = place(create_audio_backend(spec, config=config), ex)
        assert remote.llm.executor is ex
        there = _ask(remote, tmp_path / "ray")
    assert remote.llm._model is None  # generated on the worker: the driver never loaded the model
    assert [r.status for r in there] == ["ok", "ok"]
    assert [(r.text, r.audio_delivered, r.key) for r in there] == [(r.text, r.audio_delivered, r.key) for r in here]


def test_place_hands_the_executor_to_the_text_llm_only_where_it_has_one(monkeypatch):
    """No cluster needed: the wiring --executor relies on (an API LLM keeps calling from the driver)."""
    from halluscope.core.executors import LOCAL

    monkeypatch.setenv("OPENAI_API_KEY", "k")

    local = place(create_audio_backend("cascade/whisper/base+hf/some-dir", config=LLMConfig()), LOCAL)
    assert local.executor is LOCAL and local.llm.executor is LOCAL
    api = place(create_audio_backend("cascade/whisper/base+openai/m", config=LLMConfig()), LOCAL)
    assert api.executor is None and not hasattr(api.llm, "executor")
