"""TTS -> ASR throughput: halluscope's stages vs a bare espeak-ng + faster-whisper loop, same items, same run.

    .venv/bin/python benchmarks/bench_speech.py --articles-per-language 3 --repeats 2

Prints audio seconds processed per wall second for both and their ratio (ours / bare). The two runs
alternate (and swap order every repeat) so that machine noise hits both alike. Both sides load the
Whisper model inside their timing. Our side includes everything the stage does on top
of the engines: store writes, sha256, atomic file writes, audio verification and per-item WER.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

from halluscope.build import BuildConfig, build_spoken, select_articles
from halluscope.speech.asr import whisper_base_dir
from halluscope.speech.audio import resample
from halluscope.speech.tts import ESPEAK_VOICE_POOLS, pick_voice


def bare_loop(texts: list[tuple[str, str, str]], seed: int) -> tuple[float, float]:
    """espeak-ng to WAV, then faster-whisper with the same decoding options; returns (wall s, audio s)."""
    from faster_whisper import WhisperModel

    t0 = time.perf_counter()
    model = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8")
    audio_s = 0.0
    for item_id, lang, text in texts:
        voice = pick_voice(ESPEAK_VOICE_POOLS[lang], seed=seed, item_id=item_id)
        wav = subprocess.run(["espeak-ng", "-v", voice, "-s", "165", "-b", "1", "--stdout"], input=text.encode(),
                             capture_output=True, check=True).stdout
        with wave.open(io.BytesIO(wav)) as w:
            rate = w.getframerate()
            x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
        x = resample(x, rate)
        audio_s += len(x) / 16000
        segs, _ = model.transcribe(x, language=lang, beam_size=2, temperature=0.0, condition_on_previous_text=False,
                                   no_repeat_ngram_size=4, vad_filter=False, without_timestamps=True)
        " ".join(s.text for s in segs)
    return time.perf_counter() - t0, audio_s


def ours(cfg: BuildConfig) -> tuple[float, float]:
    out = Path(tempfile.mkdtemp(prefix="hs-bench-"))
    try:
        t0 = time.perf_counter()
        result = build_spoken(out, cfg, quiet=True)
        wall = time.perf_counter() - t0
        return wall, sum(a.duration_s for a in result.audio.values())
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles-per-language", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    # originals only: the stage under test is TTS -> ASR, not the rewrite generator
    cfg = BuildConfig(corpus="demo", rewrites_per_article=0, seed=args.seed,
                      articles_per_language=args.articles_per_language)
    texts = [(a.id, a.language, a.text) for a in select_articles(cfg)]
    whisper_base_dir()  # assemble weights once, outside both timings
    rows = []
    for r in range(args.repeats):
        if r % 2 == 0:  # alternate the order so drift in machine load hits both sides alike
            b_wall, b_audio = bare_loop(texts, args.seed)
            o_wall, o_audio = ours(cfg)
        else:
            o_wall, o_audio = ours(cfg)
            b_wall, b_audio = bare_loop(texts, args.seed)
        rows.append((b_wall, b_audio, o_wall, o_audio))
        print(f"repeat {r + 1}: bare {b_wall:6.1f} s for {b_audio:6.1f} s audio | "
              f"halluscope {o_wall:6.1f} s for {o_audio:6.1f} s audio")
    b = sum(x[1] for x in rows) / sum(x[0] for x in rows)
    o = sum(x[3] for x in rows) / sum(x[2] for x in rows)
    print(f"items: {len(texts)} ({args.articles_per_language} per language), repeats: {args.repeats}")
    print(f"bare loop:  {b:.2f} audio s / wall s")
    print(f"halluscope: {o:.2f} audio s / wall s")
    print(f"ratio halluscope / bare: {o / b:.3f}")


if __name__ == "__main__":
    main()
