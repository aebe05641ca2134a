"""Backends: text LLMs, audio LMs, speech (TTS and ASR), vLLM."""
