"""Speech backends: TTS ('espeak[/<voice>]', 'festival/<voice>', 'hf-tts/<path>', 'piper/<voice.onnx>', 'silero/<file>',
'xtts/<dir>', 'espnet-tts/<dir>': speech/neural.py) and ASR ('whisper/<size-or-dir>',
'hf-asr/<path>'), one engine per language through speech/route.py."""

from halluscope.backends.speech import (
    hf as _hf,  # noqa: E402,F401  (registers hf-asr, hf-tts, hf-punct)
    neural as _neural,  # noqa: E402,F401  (piper, silero, xtts, espnet-tts)
)
from halluscope.backends.speech.asr import ASR_BACKENDS, AsrBackend
from halluscope.backends.speech.tts import TTS_BACKENDS, TtsBackend

__all__ = ["ASR_BACKENDS", "TTS_BACKENDS", "AsrBackend", "TtsBackend"]
