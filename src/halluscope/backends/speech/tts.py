"""Text-to-speech backends: 'espeak[/<voice>]' (Debian espeak-ng; bare: a voice pool), 'rhvoice[/<voice>]' (Debian
RHVoice, non-free; bare: a voice pool), 'festival/<voice>' (Debian Festival) and 'hf-tts/<path>' (transformers VITS,
speech/hf.py). Each has ``config()``: what keys the TTS stage."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from halluscope.backends.speech.audio import SAMPLE_RATE, read_audio, resample
from halluscope.core.errors import HalluscopeError, ItemError
from halluscope.core.hashing import seed_from
from halluscope.core.registry import Registry
from halluscope.core.spec import options_model


class TtsBackend(Protocol):
    spec: str

    def voices(self, language: str) -> list[str]: ...

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        """16 kHz mono float32 samples."""
        ...


TTS_BACKENDS: Registry[TtsBackend] = Registry("TTS backend", "halluscope.tts")

# seed 000, section 3.3 uses several voices per language; these espeak-ng voice+variant pairs all
# exist in Debian's espeak-ng and sound distinct (male/female variants, GB/US English).
ESPEAK_VOICE_POOLS: dict[str, list[str]] = {
    "en": ["en-us", "en-us+f3", "en-gb", "en-gb-x-rp+m3"],
    "ru": ["ru", "ru+f3", "ru+m3", "ru+f4"],
    "kk": ["kk", "kk+f3", "kk+m3", "kk+f4"],
}


def pick_voice(voices: list[str], *, seed: int, item_id: str) -> str:
    """Reproducible voice choice that does not depend on item order."""
    return voices[seed_from(f"{seed}:{item_id}", 4) % len(voices)]


@dataclass
class EspeakTts:
    """espeak-ng via its command line; one process per clip, WAV on stdout."""

    voice: str | None = None
    rate_wpm: int = 165
    binary: str = "espeak-ng"

    def __post_init__(self) -> None:
        if shutil.which(self.binary) is None:
            raise HalluscopeError(f"'{self.binary}' is not on PATH. Install it with: apt-get install -y espeak-ng")

    @property
    def spec(self) -> str:
        return f"espeak/{self.voice}" if self.voice else "espeak"

    def config(self) -> dict:
        return {
            "engine": "espeak-ng",
            "voice": self.voice,
            "version": espeak_version(self.binary),
            "rate_wpm": self.rate_wpm,
            "cleaning": None,
        }  # espeak-ng reads digits and symbols itself

    def voices(self, language: str) -> list[str]:
        if self.voice:
            return [self.voice]
        if language not in ESPEAK_VOICE_POOLS:
            raise HalluscopeError(f"espeak has no voice pool for language '{language}'; pass espeak/<voice>")
        return ESPEAK_VOICE_POOLS[language]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        if not text.strip():
            raise ItemError("TTS input is empty; nothing to speak")
        try:
            proc = subprocess.run(
                [self.binary, "-v", voice, "-s", str(self.rate_wpm), "-b", "1", "--stdout"],
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=600,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ItemError(f"espeak-ng timed out on a {len(text)}-character text") from None
        if proc.returncode != 0 or not proc.stdout:
            err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
            raise ItemError(f"espeak-ng failed with voice '{voice}': {err}; check 'espeak-ng --voices' for valid names")
        samples, rate = read_audio(
            proc.stdout, name=f"espeak-ng output (voice {voice})", fix="re-run the TTS stage to regenerate it"
        )
        if samples.size == 0 or float(np.abs(samples).max()) == 0.0:
            raise ItemError(f"espeak-ng produced silence for voice '{voice}'")
        return resample(samples, rate, SAMPLE_RATE)


@TTS_BACKENDS.register("espeak", options=options_model(EspeakTts, skip=("voice",)))
def _espeak(model: str, **options: object) -> TtsBackend:
    return EspeakTts(voice=model or None, **options)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=None)  # one process start per binary and process, not one per stage key
def espeak_version(binary: str = "espeak-ng") -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout
        return out.strip().split("  ")[0]
    except OSError:
        return "missing"


# ---- input cleaning per engine (the rule version is part of the TTS stage key) -------------------------------

CLEANING_VERSION = 1  # bump when a rule below changes: every clip spoken through it is re-rendered
_NUM2WORDS_LANG = {"en": "en", "ru": "ru", "kk": "kz"}  # num2words calls Kazakh 'kz'
_SYMBOL_WORDS = {
    "%": {"en": " percent", "ru": " процентов", "kk": " пайыз"},
    "№": {"en": "number ", "ru": "номер ", "kk": "нөмір "},
    "$": {"en": " dollars", "ru": " долларов", "kk": " доллар"},
    "€": {"en": " euros", "ru": " евро", "kk": " еуро"},
    "£": {"en": " pounds", "ru": " фунтов", "kk": " фунт"},
    "₸": {"en": " tenge", "ru": " тенге", "kk": " теңге"},
    "&": {"en": " and ", "ru": " и ", "kk": " және "},
    "+": {"en": " plus ", "ru": " плюс ", "kk": " плюс "},
}
_DIGIT_GROUPS = re.compile(r"(?<=\d)[\u00a0\u202f\u2009 ](?=\d{3}\b)")  # '1 000 000' -> '1000000'
_CURRENCY_FIRST = re.compile(r"([$€£₸])\s*(\d+(?:[.,]\d+)?)")  # '$300' is read '300 dollars'
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_DASHES = re.compile(r"\s*[\u2012\u2013\u2014\u2015\u2212]\s*")  # figure/en/em dashes, minus: a pause
_QUOTES = re.compile(r"[«»\"“”„‟‘’‚‹›`´]")
_OTHER = re.compile(r"[^\w\s.,;:!?'()\-]")  # any symbol still left


def speakable(text: str, language: str) -> str:
    """Text a letter-to-sound engine can read (Festival's Russian voice stops at guillemets, long dashes and
    digits): digits read as words in the language (num2words), quotes dropped, long dashes as a comma pause,
    %, №, currency and other symbols as words or spaces, '…' as a full stop, whitespace collapsed."""
    try:
        from num2words import num2words
    except ImportError:
        raise HalluscopeError(
            "'num2words' is not installed (it reads digits for Festival). Install it with: "
            "pip install num2words (or re-run scripts/install.sh)"
        ) from None
    lang = _NUM2WORDS_LANG.get(language, "en")

    def number(m: re.Match[str]) -> str:
        raw = m.group(0)
        value = float(raw.replace(",", ".")) if ("," in raw or "." in raw) else int(raw)
        return f" {num2words(value, lang=lang)} "

    text = text.replace("…", ". ")
    text = _DIGIT_GROUPS.sub("", text)
    text = _CURRENCY_FIRST.sub(r"\2\1", text)
    for sym, words in _SYMBOL_WORDS.items():
        text = text.replace(sym, words.get(language, words["en"]))
    text = _NUMBER.sub(number, text)
    text = _QUOTES.sub("", text)
    text = _DASHES.sub(", ", text)
    text = _OTHER.sub(" ", text)
    text = re.sub(r"\s+([.,;:!?)])", r"\1", text)
    text = re.sub(r"([(])\s+", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _wav_from_tool(engine: str, voice: str, argv: list[str], text: str, *, what: str = "") -> np.ndarray:
    """Run a TTS command that reads ``text`` on stdin and writes a WAV file to the path appended to ``argv``; its
    samples at 16 kHz. A failure, a timeout, no file or silence is an ItemError naming the engine and voice."""
    with tempfile.TemporaryDirectory(prefix=f"hs-{engine.lower()}-") as tmp:
        out = Path(tmp) / "out.wav"
        try:
            proc = subprocess.run(
                [*argv, str(out)], input=text.encode("utf-8"), capture_output=True, timeout=600, check=False
            )
        except subprocess.TimeoutExpired:
            raise ItemError(f"{engine} timed out on a {len(text)}-character text") from None
        data = out.read_bytes() if out.exists() else b""
    if proc.returncode != 0 or not data:
        err = proc.stderr.decode("utf-8", "replace").strip()[-300:] or f"exit code {proc.returncode}"
        raise ItemError(f"{engine} failed with voice '{voice}': {err}")
    samples, rate = read_audio(
        data, name=f"{engine} output (voice {voice})", fix="re-run the TTS stage to regenerate it"
    )
    if samples.size == 0 or float(np.abs(samples).max()) == 0.0:
        raise ItemError(f"{engine} produced silence for voice '{voice}'{what}")
    return resample(samples, rate, SAMPLE_RATE)


# ---- Festival ---------------------------------------------------------------------------------------------------

FESTIVAL_VOICE_DIRS = Path("/usr/share/festival/voices")
FESTIVAL_PACKAGES = {
    "msu_ru_nsh_clunits": "festvox-ru",
    "kal_diphone": "festvox-kallpc16k",
    "ked_diphone": "festvox-kdlpc16k",
    "rab_diphone": "festvox-rablpc16k",
}


@functools.lru_cache(maxsize=None)
def festival_version() -> str:
    try:
        out = subprocess.run(["festival", "--version"], capture_output=True, text=True, check=False).stdout
        return out.strip().rsplit(":", 2)[-2] if out.count(":") >= 2 else out.strip()
    except OSError:
        return "missing"


@dataclass
class FestivalTts:
    """Festival's text2wave with one installed voice, e.g. 'festival/msu_ru_nsh_clunits' (Debian festvox-ru).

    Its input goes through ``speakable`` first (CLEANING_VERSION); one process per clip.
    """

    voice: str = "msu_ru_nsh_clunits"
    binary: str = "text2wave"
    voice_dirs: Path = FESTIVAL_VOICE_DIRS

    def __post_init__(self) -> None:
        package = FESTIVAL_PACKAGES.get(self.voice)
        install = (
            f"apt-get install -y {package}"
            if package
            else "its festvox-* package (apt-cache search festvox), or pick an installed voice"
        )
        if shutil.which(self.binary) is None:
            raise HalluscopeError(
                f"'{self.binary}' (Festival) is not on PATH; 'festival/{self.voice}' needs it. "
                f"Install it with: apt-get install -y festival {package or ''}".rstrip()
            )
        if not list(self.voice_dirs.glob(f"*/{self.voice}")):
            have = sorted(p.name for p in self.voice_dirs.glob("*/*") if p.is_dir())
            raise HalluscopeError(
                f"Festival voice '{self.voice}' is not installed (have: {', '.join(have) or 'none'}). Install {install}"
            )

    @property
    def spec(self) -> str:
        return f"festival/{self.voice}"

    def config(self) -> dict:
        return {
            "engine": "festival",
            "voice": self.voice,
            "version": festival_version(),
            "cleaning": f"speakable-v{CLEANING_VERSION}",
        }

    def voices(self, language: str) -> list[str]:
        return [self.voice]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        spoken = speakable(text, language)
        if not spoken:
            raise ItemError("TTS input is empty after cleaning; nothing to speak")
        return _wav_from_tool(
            "Festival",
            voice,
            [self.binary, "-eval", f"(voice_{voice})", "-o"],
            spoken,
            what=f" (text after cleaning: {spoken[:80]!r})",
        )


@TTS_BACKENDS.register("festival", options=options_model(FestivalTts, skip=("voice",)))
def _festival(model: str, **options: object) -> TtsBackend:
    return FestivalTts(voice=model or "msu_ru_nsh_clunits", **options)  # type: ignore[arg-type]


# ---- RHVoice ----------------------------------------------------------------------------------------------------

RHVOICE_DIR = Path("/usr/share/RHVoice")
RHVOICE_PACKAGES = {"Russian": "rhvoice-russian", "English": "rhvoice-english", "Kyrgyz": "rhvoice-kyrgyz"}
RHVOICE_LANGUAGES = {"en": "English", "ru": "Russian"}  # halluscope language -> RHVoice's voice.info language
# seed 000, 3.3: several voices per language; the bare 'rhvoice' pool (docs/tutorials/spoken.md: measured)
RHVOICE_POOLS: dict[str, list[str]] = {
    "ru": ["aleksandr-hq", "irina", "artemiy", "tatiana"],  # two male, two female
    "en": ["slt", "alan", "clb", "bdl"],
}
_RHVOICE_INSTALL = (
    "apt-get install -y rhvoice {package} (Debian non-free: add 'non-free' to the Components of "
    "your apt sources first; scripts/install.sh does both)"
)


@functools.lru_cache(maxsize=None)
def rhvoice_version() -> str:
    """The installed RHVoice package version (its binary prints none)."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", "rhvoice"], capture_output=True, text=True, check=False
        ).stdout
        return out.strip() or "unknown"
    except OSError:
        return "unknown"


def rhvoice_info(voice: str, data_dir: Path = RHVOICE_DIR) -> dict[str, str] | None:
    """A voice's voice.info (name, language, gender, format, revision), or None when it is not installed."""
    f = data_dir / "voices" / voice / "voice.info"
    if not f.is_file():
        return None
    pairs = (line.split("=", 1) for line in f.read_text(encoding="utf-8", errors="replace").splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


@dataclass
class RHVoiceTts:
    """RHVoice's RHVoice-test with one voice or, bare, a pool per language; one process per clip.

    RHVoice reads digits, abbreviations and symbols itself in its languages (measured: its raw input beats the
    Festival cleaning, docs/tutorials/spoken.md), so the text goes in as it is; the voice's revision keys the stage.
    """

    voice: str | None = None
    binary: str = "RHVoice-test"
    data_dir: Path = RHVOICE_DIR

    def __post_init__(self) -> None:
        wanted = [self.voice] if self.voice else sorted({v for pool in RHVOICE_POOLS.values() for v in pool})
        if shutil.which(self.binary) is None:
            raise HalluscopeError(
                f"'{self.binary}' (RHVoice) is not on PATH; '{self.spec}' needs it. Install it "
                "with: " + _RHVOICE_INSTALL.format(package="rhvoice-russian")
            )
        if self.voice and rhvoice_info(self.voice, self.data_dir) is None:
            have = sorted(p.name for p in (self.data_dir / "voices").glob("*") if p.is_dir())
            raise HalluscopeError(
                f"RHVoice voice '{self.voice}' is not installed (have: {', '.join(have) or 'none'}). "
                "Install its language's package: "
                + _RHVOICE_INSTALL.format(package="rhvoice-<language>, e.g. rhvoice-russian")
            )
        self._wanted = wanted

    @property
    def spec(self) -> str:
        return f"rhvoice/{self.voice}" if self.voice else "rhvoice"

    def config(self) -> dict:
        revisions = {v: (rhvoice_info(v, self.data_dir) or {}).get("revision") for v in self._wanted}
        return {
            "engine": "rhvoice",
            "voice": self.voice,
            "version": rhvoice_version(),
            "voice_revisions": revisions,
            "cleaning": None,
        }  # RHVoice reads digits and symbols itself

    def voices(self, language: str) -> list[str]:
        if self.voice:
            return [self.voice]
        if language not in RHVOICE_POOLS:
            raise HalluscopeError(
                f"rhvoice has no voice pool for language '{language}' (pools: "
                f"{', '.join(RHVOICE_POOLS)}); pass rhvoice/<voice> or another engine for it"
            )
        pool = RHVOICE_POOLS[language]
        missing = [v for v in pool if rhvoice_info(v, self.data_dir) is None]
        if missing:
            package = RHVOICE_PACKAGES.get(RHVOICE_LANGUAGES.get(language, ""), "rhvoice-<language>")
            raise HalluscopeError(
                f"rhvoice's {language} pool needs the voices {', '.join(missing)}, not installed. "
                "Install them with: " + _RHVOICE_INSTALL.format(package=package)
            )
        return pool

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        if not text.strip():
            raise ItemError("TTS input is empty; nothing to speak")
        return _wav_from_tool("RHVoice", voice, [self.binary, "-p", voice, "-o"], text)


@TTS_BACKENDS.register("rhvoice", options=options_model(RHVoiceTts, skip=("voice",)))
def _rhvoice(model: str, **options: object) -> TtsBackend:
    return RHVoiceTts(voice=model or None, **options)  # type: ignore[arg-type]
