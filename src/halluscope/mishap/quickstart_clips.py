"""The MISHAP quickstart's clips, made on this machine so their descriptions are exact: espeak-ng speech (the
description is the text it spoke) and numpy-made music and sounds (the description states the synthesis parameters)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from halluscope.core.errors import HalluscopeError

RATE = 16_000
DEFAULT_CLIPS = 3  # one per domain: a few minutes on 2 cores


@dataclass(frozen=True)
class SynthClip:
    id: str
    domain: str
    description: str
    kind: str  # description_kind: transcript (speech) or caption (synthesized)
    make: Callable[[], np.ndarray]


def _t(seconds: float) -> np.ndarray:
    return np.arange(int(seconds * RATE)) / RATE


def _fade(x: np.ndarray, ms: float = 10.0) -> np.ndarray:
    n = min(len(x) // 2, int(RATE * ms / 1000))
    ramp = np.linspace(0.0, 1.0, n)
    x = x.copy()
    x[:n] *= ramp
    x[len(x) - n :] *= ramp[::-1]
    return x


def chord(freqs: tuple[float, ...], seconds: float) -> np.ndarray:
    t = _t(seconds)
    return _fade(sum(np.sin(2 * np.pi * f * t) for f in freqs) * (0.6 / len(freqs)))


def metronome(bpm: float, clicks: int) -> np.ndarray:
    period = int(RATE * 60 / bpm)
    out = np.zeros(period * clicks)
    click = np.sin(2 * np.pi * 1000 * _t(0.03)) * np.exp(-_t(0.03) * 150)
    for k in range(clicks):
        out[k * period : k * period + len(click)] += 0.8 * click
    return out


def sweep(f0: float, f1: float, seconds: float) -> np.ndarray:
    t = _t(seconds)
    k = (f1 / f0) ** (1 / seconds)  # exponential sweep: phase = 2 pi f0 (k^t - 1) / ln k
    return _fade(0.4 * np.sin(2 * np.pi * f0 * (k**t - 1) / np.log(k)))


def noise(seconds: float, seed: int = 0) -> np.ndarray:
    return _fade(0.2 * np.random.default_rng(seed).standard_normal(int(seconds * RATE)))


def speech(text: str, voice: str = "en-us") -> np.ndarray:
    from halluscope.backends.speech.audio import read_audio

    try:
        wav = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise HalluscopeError(
            f"espeak-ng could not speak the quickstart's speech clips ({exc}); install it: apt-get install espeak-ng"
        ) from None
    return read_audio(wav, name=f"espeak-ng output (voice {voice})", rate=RATE)[0]


SPEECH = (
    "The train to Paris leaves from platform four at nine thirty.",
    "Please send the blue folder to the office before Friday.",
)
CLIPS = (  # domains interleaved, so the first N clips cover every domain from N = 3
    SynthClip("speech-train", "speech", f'A man says: "{SPEECH[0]}"', "transcript", lambda: speech(SPEECH[0])),
    SynthClip(
        "music-chord",
        "music",
        "A sustained A major chord of three pure sine tones (A4 440 Hz, C#5 554 Hz, "
        "E5 659 Hz) held for two seconds; no other instrument, no rhythm, no voice.",
        "caption",
        lambda: chord((440.0, 554.37, 659.25), 2.0),
    ),
    SynthClip(
        "sound-noise",
        "sound",
        "Two seconds of steady white noise at a low, constant level; no voice, no music, no other event.",
        "caption",
        lambda: noise(2.0),
    ),
    SynthClip("speech-folder", "speech", f'A man says: "{SPEECH[1]}"', "transcript", lambda: speech(SPEECH[1])),
    SynthClip(
        "music-metronome",
        "music",
        "A metronome clicking eight times at 120 beats per minute (one click every "
        "half second), each click a short 1 kHz tick; nothing else.",
        "caption",
        lambda: metronome(120, 8),
    ),
    SynthClip(
        "sound-sweep",
        "sound",
        "A pure sine tone sweeping smoothly upward from 200 Hz to 2000 Hz over three "
        "seconds; no voice, no music, no other event.",
        "caption",
        lambda: sweep(200.0, 2000.0, 3.0),
    ),
)


def _facts():
    from halluscope.mishap.rules import ClipFacts

    return {  # what each clip is, exactly, as the rules writer's templates need it (mishap/rules.py)
        "speech-train": ClipFacts(
            "the train announcement",
            "the platform number",
            "four",
            "seven",
            "the woman who answers him",
            ("woman", "she", "her"),
            "the destination of the train",
            ("paris",),
            "the year the platform numbering of the station in this announcement was last changed",
            "Paris is the capital of Belgium",
            ("belgium", "belgian"),
            ("france", "french"),
        ),
        "music-chord": ClipFacts(
            "the A major chord",
            "the number of tones in the chord",
            "three",
            "five",
            "the violin that plays a melody over the chord",
            ("violin", "melody", "bow"),
            "the pitch of the lowest tone",
            ("440", "a4"),
            "the name of the first person to tune an A major chord to 440 Hz",
            "an A major chord is built on a minor third",
            ("minor",),
            ("major third", "c#", "c sharp"),
        ),
        "sound-noise": ClipFacts(
            "the steady white noise",
            "the length of the noise",
            "two seconds",
            "ten seconds",
            "the dog that barks during the noise",
            ("dog", "bark", "barks", "barking"),
            "how the noise level changes",
            ("steady", "constant"),
            "the date the first white noise generator was sold to the public",
            "white noise has all its energy at one single frequency",
            ("one frequency", "single frequency"),
            ("all frequencies", "every frequency", "equal power", "flat spectrum"),
        ),
        "speech-folder": ClipFacts(
            "the request about the folder",
            "the colour of the folder",
            "blue",
            "red",
            "the colleague who replies that he will do it",
            ("colleague", "replies", "he will"),
            "the day of the deadline",
            ("friday",),
            "the number of blue folders the office ordered last year",
            "Friday is the first day of the week in every country",
            ("first day",),
            ("not the first", "monday", "sunday"),
        ),
        "music-metronome": ClipFacts(
            "the metronome",
            "the tempo",
            "120 beats per minute",
            "60 beats per minute",
            "the drummer who plays along with the clicks",
            ("drummer", "drum", "drums"),
            "how many clicks there are",
            ("eight", "8"),
            "the serial number of the first metronome ever built",
            "a metronome at 120 beats per minute clicks once every two seconds",
            ("two seconds", "every 2 seconds"),
            ("half a second", "half second", "0.5"),
        ),
        "sound-sweep": ClipFacts(
            "the rising sine sweep",
            "the direction of the sweep",
            "upward",
            "downward",
            "the voice that counts along with the sweep",
            ("voice", "counts", "counting", "speaker"),
            "the highest frequency the sweep reaches",
            ("2000", "2 khz", "2,000"),
            "the laboratory where the first exponential sine sweep was recorded",
            "a sine sweep contains many instruments playing at once",
            ("instruments",),
            ("single tone", "one tone", "pure tone", "no instruments"),
        ),
    }


def write_clips(folder: str | Path, n: int = DEFAULT_CLIPS) -> Path:
    """Write the first ``n`` synthesized clips as 16 kHz WAVs and their manifest; returns the manifest path."""
    import soundfile as sf

    if not 1 <= n <= len(CLIPS):
        raise HalluscopeError(f"the MISHAP quickstart has {len(CLIPS)} clips; expected 1 to {len(CLIPS)}, got {n}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for c in CLIPS[:n]:
        path = folder / f"{c.id}.wav"
        if not path.is_file():  # the same bytes on a rerun: the clips stage keeps its fingerprint
            sf.write(str(path), np.clip(c.make(), -1, 1).astype(np.float32), RATE, subtype="PCM_16")
        rows.append(
            {
                "id": c.id,
                "domain": c.domain,
                "source": "halluscope-synth",
                "audio": path.name,
                "description": c.description,
                "description_kind": c.kind,
            }
        )
    manifest = folder / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return manifest
