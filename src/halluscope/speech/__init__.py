"""Speech backends: TTS ('espeak/<voice>') and ASR ('whisper/<size-or-dir>')."""

from halluscope.speech.asr import ASR_BACKENDS, AsrBackend
from halluscope.speech.tts import TTS_BACKENDS, TtsBackend

__all__ = ["ASR_BACKENDS", "TTS_BACKENDS", "AsrBackend", "TtsBackend"]
