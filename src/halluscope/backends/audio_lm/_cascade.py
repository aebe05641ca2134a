"""'cascade/<asr>+<llm>': an audio LM made of an ASR backend and a text LLM, the cascaded baseline of audio-LM
benchmarks. Each clip of a request is transcribed; the text LLM is then asked the same conversation with the
transcripts in place of the audio (before the last user turn's text). E.g. 'cascade/whisper/base+hf/smollm2-135m-instruct'
or 'cascade/whisper/base+openai/<model>'; '?language=en' fixes the ASR language (default: detected).

The delivery record says what the model heard: ``audio_heard_s`` is the audio that produced words and
``audio_delivered`` is False when the ASR heard nothing (non-speech audio reaches the LLM as nothing); the
call log and every stored reply keep the transcripts. Calls go through the text LLM's own backend (its
retries, batching, decoding) and are logged under the cascade's request key, so a rerun makes no call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from halluscope.backends.llm import ChatBackend, LLMConfig
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioClip, ChatMessage, ModelRequest, ModelResponse
from halluscope.core.spec import ModelSpec

NOTHING = "(nothing: the speech recognizer heard no words)"


def transcript_turn(transcripts: Sequence[str], text: str) -> str:
    """The last user turn as the text LLM sees it: the transcripts, then the original text."""
    heard = "\n".join(f"Transcript of audio clip {i + 1}: {t or NOTHING}" for i, t in enumerate(transcripts))
    return f"{heard}\n\n{text}"


class CascadeBackend:
    def __init__(self, spec: str, asr, llm: ChatBackend, language: str | None) -> None:
        self.spec, self.asr, self.llm, self.language = spec, asr, llm, language
        self.audio_window_s = None  # the ASR takes audio of any length
        self._asr_lock = threading.Lock()
        self._transcripts: dict[str, str] = {}  # clip sha256 -> transcript (see _transcribe)
        self.transcriptions = 0  # ASR calls made (each clip once)

    @property
    def executor(self):
        """Where the text LLM generates: ``core.executors.place`` sets it, and it passes to the inner backend (an
        hf/ model then generates on Ray workers; an API LLM calls from here). The ASR runs on the driver."""
        return getattr(self.llm, "executor", None)

    @executor.setter
    def executor(self, executor) -> None:
        if hasattr(self.llm, "executor"):
            self.llm.executor = executor

    def identity(self) -> dict:
        asr_options = getattr(self.asr, "options", None)
        return {
            "backend": self.spec,
            "asr": {"spec": self.asr.spec, **(asr_options() if callable(asr_options) else {})},
            "language": self.language,
            "llm": self.llm.identity(),
        }

    def request(
        self,
        messages: Sequence[ChatMessage | dict],
        *,
        nonce: int = 0,
        tag: str | None = None,
        params: dict | None = None,
    ) -> ModelRequest:
        inner = self.llm.request(messages, nonce=nonce, tag=tag, params=params)
        return inner.model_copy(update={"backend": self.spec})

    def _inner(self, request: ModelRequest, transcripts: Sequence[str]) -> ModelRequest:
        messages = [m.model_dump() for m in request.messages]
        last = max(i for i, m in enumerate(messages) if m["role"] == "user")
        messages[last]["content"] = transcript_turn(transcripts, messages[last]["content"])
        inner = self.llm.request(messages, nonce=request.nonce, tag=request.tag)
        return inner.model_copy(update={"params": request.params})  # the params the cascade request was keyed by

    def _heard(self, request: ModelRequest, transcripts: Sequence[str], response: ModelResponse) -> ModelResponse:
        sent = sum(a.seconds for a in request.audio)
        heard = sum(a.seconds for a, t in zip(request.audio, transcripts) if t.strip())
        return response.model_copy(
            update={
                "key": request.key(),
                "backend": self.spec,
                "audio_sent_s": round(sent, 3),
                "audio_heard_s": round(heard, 3),
                "audio_delivered": any(t.strip() for t in transcripts),
            }
        )

    def from_stored(self, request: ModelRequest, stored: dict) -> ModelResponse:
        transcripts = stored.get("transcripts") or []
        inner = self._inner(request, transcripts)
        return self._heard(request, transcripts, self.llm.from_stored(inner, stored["llm"]))

    async def open(self) -> None:
        await self.llm.open()

    async def aclose(self) -> None:
        await self.llm.aclose()

    def _transcribe(self, clip: AudioClip) -> str:
        """The clip's transcript, made once per clip (by its sha256) and backend: every question on a clip hears the
        same audio, and the ASR is deterministic. One transcription at a time: concurrent requests would load the
        ASR model once each and oversubscribe the CPU (each ASR call already uses its own threads)."""
        from halluscope.backends.speech.audio import SAMPLE_RATE, read_audio

        with self._asr_lock:
            if clip.sha256 not in self._transcripts:
                samples, _ = read_audio(clip.wav, name=f"clip {clip.sha256[:12]}", rate=SAMPLE_RATE)
                self._transcripts[clip.sha256] = (
                    self.asr.transcribe(samples, language=self.language).strip() if samples.size else ""
                )
                self.transcriptions += 1
            return self._transcripts[clip.sha256]

    async def send(self, request: ModelRequest, log) -> ModelResponse:
        transcripts = [await asyncio.to_thread(self._transcribe, a) for a in request.audio]
        inner = self._inner(request, transcripts)

        def inner_log(
            *,
            request: ModelRequest,
            payload: dict,
            response: dict | None,
            status: str,
            latency_s: float | None,
            outer: ModelRequest = request,
        ) -> None:
            log(
                request=outer,
                payload={**payload, "transcripts": transcripts, "llm_key": request.key()},
                response={"transcripts": transcripts, "llm": response},
                status=status,
                latency_s=latency_s,
            )

        return self._heard(request, transcripts, await self.llm.send(inner, inner_log))


def create_cascade(spec: ModelSpec, *, config: LLMConfig | None = None, **options: object) -> CascadeBackend:
    """'cascade/<asr spec>+<llm spec>[?language=xx]' (registered in CHAT_BACKENDS); other options go to the text LLM."""
    from halluscope.backends.llm import create_backend
    from halluscope.backends.speech import ASR_BACKENDS

    asr_spec, plus, llm_spec = spec.model.partition("+")
    if not plus or "/" not in asr_spec or "/" not in llm_spec:
        raise HalluscopeError(
            f"'{spec}': expected 'cascade/<asr>+<llm>', e.g. "
            "'cascade/whisper/base+hf/smollm2-135m-instruct' or 'cascade/whisper/base+openai/<model>'"
        )
    glued, rest = spec.split(("language",))
    language = options.pop("language", glued.get("language"))
    asr = ASR_BACKENDS.create(asr_spec)
    llm = create_backend(ModelSpec.parse(llm_spec, rest.options), config=config, **options)
    return CascadeBackend(str(spec), asr, llm, None if language is None else str(language))
