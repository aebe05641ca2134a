"""Table 8 (seed 000, App. C: models and their modality support), generated from the adapter registry: every
local audio-LM adapter (hf-audio/<dir>) with its declared window, mitigations and documented languages (class
attributes of the adapter), and the audio-LM families the papers evaluate that halluscope reaches only through an
OpenAI-compatible server (openai/<model>, no logits, so no mitigation), each with the reason. 'halluscope models'
prints it; the documentation's model page (reference/models.md) is generated from it."""

from __future__ import annotations

from halluscope.backends.audio_lm._adapters import ADAPTERS

LOCAL_COMMANDS = "detect (text, transcript, audio), run closedform, mishap answer / questions"
SERVER_COMMANDS = "detect (text, transcript, audio), run closedform, mishap answer (openai/<model>, audio parts)"
# evaluated in seed 000 (Table 3) or seed 001 (4.1-4.3), served by a server here; languages only where a seed states them
SERVER_ONLY = (
    ("Kimi-Audio", "remote code (not in transformers)", None),
    ("Step-Audio 2 mini", "remote code (not in transformers)", None),
    ("MiMo-Audio", "remote code (not in transformers)", None),
    ("Covo-Audio", "remote code (not in transformers)", None),
    ("LFM2-Audio", "not in transformers as an audio model", "English only (Lost in Speech, section 4.2)"),
)
# transformers' other audio families are not audio chat models: ASR only (voxtral_realtime, kyutai_speech_to_text,
# omniasr, whisper), speech output (higgs_audio_v2), codecs and encoders (mimi, pocket_tts_audio_tokenizer, pe_audio)
FAMILY_TESTS = "tiny random weights (tests/backends/audio_lm/test_adapters_families.py: window, AAD, all four at zero strength, detect)"
VERIFIED = {
    "qwen2-audio": "tiny random weights (tests/backends/audio_lm, tests/mitigation)",
    "qwen2.5-omni-thinker": "tiny random weights (tests/backends/audio_lm, tests/mitigation)",
    "audio-flamingo-3": "tiny random weights (tests/backends/audio_lm/test_af3.py)",
    "qwen3-omni-thinker": FAMILY_TESTS,
    "phi-4-multimodal": FAMILY_TESTS,
    "voxtral": FAMILY_TESTS + "; both tokenizers: a chat-template one and a tiny tekken.json (the released "
    "format, mistral-common)",
    "music-flamingo": FAMILY_TESTS,
    "granite-speech": FAMILY_TESTS + "; mel front end in torch, checked against transformers' extractor with "
    "torchaudio 2.9.1 on real speech (a stored reference) and an independent numpy one",
    "gemma-3n": FAMILY_TESTS + "; vision tower not built (audio and text only)",
    "nemotron-3-nano-omni": FAMILY_TESTS + "; hybrid Mamba decoder (AAD/VCD branches batched with the Mamba "
    "states stacked, MTI restores the Mamba recurrent states); the released chat "
    "template's audio layout is untested",
}


def table8() -> list[dict]:
    rows = []
    by_class: dict[type, list[str]] = {}
    for model_type, cls in ADAPTERS.items():
        by_class.setdefault(cls, []).append(model_type)
    for cls, types in by_class.items():
        rows.append(
            {
                "model": cls.name,
                "access": "local hf-audio/<dir>",
                "model_types": ", ".join(types),
                "inputs": "text, audio",
                "window_s": cls.default_window_s,
                "mitigation": "AAD, VCD, MTI, DoLa",
                "commands": LOCAL_COMMANDS,
                "languages": cls.languages,
                "verified": VERIFIED.get(cls.name, "-"),
            }
        )
    for name, why, langs in SERVER_ONLY:
        rows.append(
            {
                "model": name,
                "access": f"server only: {why}",
                "model_types": "-",
                "inputs": "text, audio",
                "window_s": None,
                "mitigation": "none (no logits)",
                "commands": SERVER_COMMANDS,
                "languages": langs or "-",
                "verified": "protocol only (loopback server tests)",
            }
        )
    return rows


def markdown(rows: list[dict]) -> str:
    cols = [
        ("model", "Model"),
        ("access", "Access"),
        ("model_types", "transformers model_type"),
        ("inputs", "Inputs"),
        ("window_s", "Window (s)"),
        ("mitigation", "Mitigation"),
        ("commands", "Commands"),
        ("languages", "Languages documented"),
        ("verified", "Verified"),
    ]
    from halluscope.report.table import Table

    shown = [
        {
            **r,
            "window_s": "declared by the server (-o audio_window_s)" if r["window_s"] is None else f"{r['window_s']:g}",
        }
        for r in rows
    ]
    return Table("table8", cols, shown).markdown(heading=None)
