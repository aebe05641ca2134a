"""Instant stand-ins for TTS and ASR so LLM build tests exercise build.py without espeak or Whisper."""

from __future__ import annotations

import numpy as np

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS


class SilentTts:
    spec = "test-silence"

    def voices(self, language: str) -> list[str]:
        return ["none"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        return np.zeros(1600, dtype=np.float32)


class FixedAsr:
    spec = "test-fixed"

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        return "transcript"


def register() -> None:
    """Idempotent: the registries refuse a second registration of a name."""
    if "test-silence" not in TTS_BACKENDS.providers:
        TTS_BACKENDS.register("test-silence")(lambda model, **o: SilentTts())
    if "test-fixed" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("test-fixed")(lambda model, **o: FixedAsr())


ARTICLES = {
    "en": ["The National Bank of Kazakhstan raised the base rate to 16.75 percent on March 12, 2024, because of "
           "inflation. Governor Timur Suleimenov said prices rose sharply in Astana.",
           "Kazatomprom increased uranium output by 5.2 percent in 2023 after new wells opened in Turkistan region. "
           "The company earned 1,200 billion tenge.",
           "The Ministry of Energy approved a new tariff on June 3, 2024. Electricity prices in Almaty rose by 12 "
           "percent despite protests."],
    "ru": ["Национальный банк Казахстана повысил базовую ставку до 16,75 процента 12 марта 2024 года из-за инфляции.",
           "Казатомпром увеличил добычу урана на 5,2 процента в 2023 году после запуска новых скважин.",
           "Министерство энергетики одобрило новый тариф 3 июня 2024 года. Цены в Алматы выросли на 12 процентов."],
    "kk": ["Қазақстан Ұлттық банкі 2024 жылғы 12 наурызда базалық мөлшерлемені 16,75 пайызға дейін көтерді.",
           "Қазатомөнеркәсіп 2023 жылы уран өндіруді 5,2 пайызға арттырды.",
           "Энергетика министрлігі 2024 жылғы 3 маусымда жаңа тарифті бекітті. Алматыда бағалар 12 пайызға өсті."],
}


def write_corpus(path):
    """Nine articles, three per language, as a .jsonl corpus."""
    import json

    rows = [{"id": f"{lang}-{i}", "language": lang, "text": t}
            for lang, texts in ARTICLES.items() for i, t in enumerate(texts, 1)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path
