"""Per speech engine: halluscope's TTS or ASR stage vs a bare loop of the same engine on the same items, one run.

    .venv/bin/python benchmarks/bench_speech.py --articles-per-language 2 --repeats 2 \
        [--hf-tts DIR] [--hf-asr DIR]
    .venv/bin/python benchmarks/bench_speech.py --smoke     # one article per language, one round

For each engine (espeak-ng on every language, RHVoice on English and Russian, Festival on Russian, Whisper base on every language, and the
transformers engines when given a checkpoint) it prints audio seconds per wall second for the stage and for the
bare loop, side by side, and their ratio (stage / bare). The two alternate (order swapped every repeat) so machine
noise hits both alike; both load their model inside the timing. The stage side includes everything a build does
on top of the engine: the store, sha256, atomic WAV writes, audio verification and per-item WER.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _ratios import ratio

from halluscope.backends.speech.asr import whisper_base_dir
from halluscope.backends.speech.audio import SAMPLE_RATE, encode_wav, read_audio, resample
from halluscope.backends.speech.route import PerLanguageAsr, PerLanguageTts
from halluscope.backends.speech.tts import ESPEAK_VOICE_POOLS, RHVOICE_POOLS, pick_voice, speakable
from halluscope.core.hashing import sha256_hex
from halluscope.core.records import AudioRef, Transcript, Variant
from halluscope.core.stages import Stage, run_stage
from halluscope.core.store import Store
from halluscope.spoken.build import BuildConfig, asr_config, select_articles, tts_config
from halluscope.spoken.speech_stages import Synthesize, Transcribe

SEED = 13


def _wav(data: bytes) -> np.ndarray:
    return read_audio(data, name="bench", rate=SAMPLE_RATE)[0]


# ---- bare loops: the engine called directly, nothing else ---------------------------------------------------------


def bare_espeak(items: list[Variant]) -> float:
    audio = 0.0
    for v in items:
        voice = pick_voice(ESPEAK_VOICE_POOLS[v.language], seed=SEED, item_id=v.id)
        out = subprocess.run(
            ["espeak-ng", "-v", voice, "-s", "165", "-b", "1", "--stdout"],
            input=v.text.encode(),
            capture_output=True,
            check=True,
        ).stdout
        audio += len(_wav(out)) / SAMPLE_RATE
    return audio


def bare_festival(items: list[Variant]) -> float:
    audio = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for v in items:
            out = Path(tmp) / "o.wav"
            subprocess.run(
                ["text2wave", "-eval", "(voice_msu_ru_nsh_clunits)", "-o", str(out)],
                input=speakable(v.text, v.language).encode(),
                capture_output=True,
                check=True,
            )
            audio += len(_wav(out.read_bytes())) / SAMPLE_RATE
    return audio


def bare_rhvoice(items: list[Variant]) -> float:
    audio = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for v in items:
            out = Path(tmp) / "o.wav"
            voice = pick_voice(RHVOICE_POOLS[v.language], seed=SEED, item_id=v.id)
            subprocess.run(
                ["RHVoice-test", "-p", voice, "-o", str(out)], input=v.text.encode(), capture_output=True, check=True
            )
            audio += len(_wav(out.read_bytes())) / SAMPLE_RATE
    return audio


def bare_hf_tts(path: str) -> Callable[[list[Variant]], float]:
    def run(items: list[Variant]) -> float:
        import torch
        from transformers import AutoTokenizer, VitsModel

        tok, model = AutoTokenizer.from_pretrained(path), VitsModel.from_pretrained(path).eval()
        audio = 0.0
        for v in items:
            torch.manual_seed(0)
            with torch.no_grad():
                wav = model(**tok(v.text, return_tensors="pt")).waveform[0].numpy()
            audio += len(resample(wav, int(model.config.sampling_rate))) / SAMPLE_RATE
        return audio

    return run


def bare_whisper(clips: list[tuple[str, np.ndarray]]) -> float:
    from faster_whisper import WhisperModel

    model = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8")
    for lang, x in clips:
        segs, _ = model.transcribe(
            x,
            language=lang,
            beam_size=2,
            temperature=0.0,
            condition_on_previous_text=False,
            no_repeat_ngram_size=4,
            vad_filter=False,
            without_timestamps=len(x) <= 30 * SAMPLE_RATE,  # timestamps past one window, as whisper/ does
        )
        " ".join(s.text for s in segs)
    return sum(len(x) for _, x in clips) / SAMPLE_RATE


def bare_hf_asr(path: str) -> Callable[[list[tuple[str, np.ndarray]]], float]:
    def run(clips: list[tuple[str, np.ndarray]]) -> float:
        from transformers import pipeline

        pipe = pipeline("automatic-speech-recognition", model=path, device="cpu")
        whisper = pipe.model.config.model_type == "whisper"
        for lang, x in clips:
            kw: dict = {}
            if whisper:  # long clips sequentially with timestamps, as hf-asr does
                kw["generate_kwargs"] = {"language": lang, "task": "transcribe"}
                if len(x) > 30 * SAMPLE_RATE:
                    kw["return_timestamps"] = True
            elif len(x) > 30 * SAMPLE_RATE:
                kw["chunk_length_s"] = 30.0
            pipe({"raw": x, "sampling_rate": SAMPLE_RATE}, **kw)
        return sum(len(x) for _, x in clips) / SAMPLE_RATE

    return run


# ---- the stages -------------------------------------------------------------------------------------------------


def stage_tts(spec: str, items: list[Variant]) -> float:
    run = Path(tempfile.mkdtemp(prefix="hs-bench-"))
    try:
        langs = sorted({v.language for v in items})
        tts = PerLanguageTts.create(spec, langs)
        voices = {lang: tts.voices(lang) for lang in langs}
        stage = Stage("tts", tts_config(tts, voices, SEED))
        with Store(run) as store:
            out = run_stage(
                store,
                stage,
                [(v.id, v) for v in items],
                Synthesize(tts, voices, SEED, run, Path("audio")),
                AudioRef,
                quiet=True,
            )
        assert not out.failed, out.failed
        return sum(a.duration_s for a in out.results.values())
    finally:
        shutil.rmtree(run, ignore_errors=True)


def stage_asr(spec: str, items: list[Variant], clips: list[tuple[str, np.ndarray]]) -> float:
    run = Path(tempfile.mkdtemp(prefix="hs-bench-"))
    try:
        refs = []
        for v, (_, x) in zip(items, clips):
            data = encode_wav(x)
            (run / f"{v.id}.wav").write_bytes(data)
            refs.append(
                AudioRef(
                    item_id=v.id,
                    path=f"{v.id}.wav",
                    sha256=sha256_hex(data),
                    sample_rate=SAMPLE_RATE,
                    duration_s=len(x) / SAMPLE_RATE,
                    engine="bench",
                    voice="-",
                    text_sha256="-",
                )
            )
        asr = PerLanguageAsr.create(spec, sorted({v.language for v in items}))
        with Store(run) as store:
            out = run_stage(
                store,
                Stage("asr", asr_config(asr)),
                [(r.item_id, r) for r in refs],
                Transcribe(asr, {v.id: v for v in items}, run),
                Transcript,
                quiet=True,
            )
        assert not out.failed, out.failed
        return sum(t.audio_duration_s for t in out.results.values())
    finally:
        shutil.rmtree(run, ignore_errors=True)


def _head(text: str, chars: int = 120) -> str:
    """About the first sentence: enough speech for every engine to work on, little for it to spend time on."""
    cut = text[:chars]
    return cut[: cut.rfind(" ")] if len(text) > chars and " " in cut else cut


def timed(fn: Callable[[], float]) -> tuple[float, float]:
    t0 = time.perf_counter()
    audio = fn()
    return time.perf_counter() - t0, audio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles-per-language", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--hf-tts", help="a VITS checkpoint folder: also bench hf-tts/<dir> (on every language)")
    ap.add_argument("--hf-asr", help="a Whisper or wav2vec2-CTC folder: also bench hf-asr/<dir>")
    ap.add_argument("--only", help="bench only the engines whose name contains this text, e.g. 'hf-'")
    ap.add_argument("--smoke", action="store_true", help="one article per language, one round (the test suite's run)")
    args = ap.parse_args()
    if args.smoke:
        args.articles_per_language, args.repeats = 1, 1
    cfg = BuildConfig(corpus="demo", rewrites_per_article=0, articles_per_language=args.articles_per_language)
    items = [
        Variant(id=a.id, article_id=a.id, language=a.language, text=a.text, label=0, generator="original")
        for a in select_articles(cfg).articles
    ]
    if args.smoke:  # English and Russian (every engine has one of them), the first sentence or so of each
        items = [v.model_copy(update={"text": _head(v.text)}) for v in items if v.language in ("en", "ru")]
    ru = [v for v in items if v.language == "ru"]
    en_ru = [v for v in items if v.language in RHVOICE_POOLS]
    whisper_base_dir()  # assemble the weights once, outside every timing
    # ASR input: the same espeak-ng clips for every ASR engine, made once outside the timings
    tts = PerLanguageTts.create("espeak", sorted({v.language for v in items}))
    clips = [
        (
            v.language,
            tts.synthesize(
                v.text, language=v.language, voice=pick_voice(tts.voices(v.language), seed=SEED, item_id=v.id)
            ),
        )
        for v in items
    ]
    engines: list[tuple[str, Callable[[], float], Callable[[], float], int]] = [
        ("tts espeak", lambda: stage_tts("espeak", items), lambda: bare_espeak(items), len(items)),
        ("tts rhvoice (en, ru)", lambda: stage_tts("rhvoice", en_ru), lambda: bare_rhvoice(en_ru), len(en_ru)),
        (
            "tts festival/msu_ru_nsh_clunits (ru)",
            lambda: stage_tts("festival/msu_ru_nsh_clunits", ru),
            lambda: bare_festival(ru),
            len(ru),
        ),
        ("asr whisper/base", lambda: stage_asr("whisper/base", items, clips), lambda: bare_whisper(clips), len(items)),
    ]
    if args.hf_tts:
        engines.append(
            (
                f"tts hf-tts/{args.hf_tts}",
                lambda: stage_tts(f"hf-tts/{args.hf_tts}", items),
                lambda: bare_hf_tts(args.hf_tts)(items),
                len(items),
            )
        )
    if args.hf_asr:
        engines.append(
            (
                f"asr hf-asr/{args.hf_asr}",
                lambda: stage_asr(f"hf-asr/{args.hf_asr}", items, clips),
                lambda: bare_hf_asr(args.hf_asr)(clips),
                len(items),
            )
        )
    if args.only:
        engines = [e for e in engines if args.only in e[0]]
    if args.hf_tts or args.hf_asr:
        import torch  # noqa: F401  # imported once before any timing: neither side pays it
        import transformers  # noqa: F401
    print(f"items: {len(items)} ({args.articles_per_language} per language), repeats: {args.repeats}")
    print(f"{'engine':<40} {'items':>5} {'stage a/s':>10} {'bare a/s':>10} {'stage/bare':>10}")
    for name, ours, bare, n in engines:
        o_wall = o_audio = b_wall = b_audio = 0.0
        for r in range(args.repeats):
            pair = [("o", ours), ("b", bare)] if r % 2 == 0 else [("b", bare), ("o", ours)]
            for side, fn in pair:
                wall, audio = timed(fn)
                if side == "o":
                    o_wall, o_audio = o_wall + wall, o_audio + audio
                else:
                    b_wall, b_audio = b_wall + wall, b_audio + audio
        o, b = o_audio / o_wall, b_audio / b_wall
        print(f"{name:<40} {n:>5} {o:>10.2f} {b:>10.2f} {o / b:>10.3f}", flush=True)
        ratio(f"{name} stage / bare loop, audio seconds per wall second", o / b, smoke=args.smoke)


if __name__ == "__main__":
    main()
