"""The speech stages of a build: TTS of every sample, then ASR of every clip, one resumable stage per language
(seed 000, 3.3); 'build spoken' and 'build realworld' drive them."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from halluscope.backends.speech.audio import SAMPLE_RATE, encode_wav, load_verified
from halluscope.backends.speech.tts import pick_voice
from halluscope.core.errors import HalluscopeError, ItemError
from halluscope.core.executors import Executor, ItemTask, Resources
from halluscope.core.fs import PathEscapeError, atomic_write, id_file_name, safe_join
from halluscope.core.hashing import file_sha256, sha256_hex
from halluscope.core.records import AudioRef, Transcript, Variant
from halluscope.core.stages import Stage, StageSummary, run_stage
from halluscope.core.store import Store
from halluscope.metrics.asr import item_scores
from halluscope.spoken import language_stages
from halluscope.spoken.language_stages import LanguageStages


def speech_versions() -> dict[str, str]:
    from halluscope.backends.speech.tts import espeak_version, festival_version, rhvoice_version

    return {"espeak-ng": espeak_version(), "rhvoice": rhvoice_version(), "festival": festival_version()}


def render_speech(
    store: Store,
    run_dir: Path,
    samples: dict[str, Variant],
    *,
    tts: object,
    asr: object,
    voices: dict[str, list[str]],
    seed: int,
    tts_stage: LanguageStages,
    asr_stage: LanguageStages,
    quiet: bool = False,
    executor: Executor | None = None,
) -> tuple[dict[str, StageSummary[AudioRef]], dict[str, StageSummary[Transcript]]]:
    """TTS -> ASR for ``samples`` as resumable stages, one per language and kind (language -> its stage's summary;
    used by 'build spoken' and 'build realworld')."""
    _check_names(samples)
    tts_stage.adopt(store, AudioRef, {k: v.language for k, v in samples.items()})  # a run keyed before the split
    audio: dict[str, StageSummary[AudioRef]] = {}
    for lang, stage in tts_stage.stages.items():
        audio_dir = Path("audio") / stage.fingerprint[:8]  # relative to run_dir; clips named by id_file_name
        _invalidate_bad_audio(store, stage, run_dir, samples)
        audio[lang] = run_stage(
            store,
            stage,
            [(k, samples[k]) for k in sorted(samples) if samples[k].language == lang],
            Synthesize(tts, voices, seed, run_dir, audio_dir),
            AudioRef,
            quiet=quiet,
            description=f"speech ({tts.spec_for(lang)}) {lang}",  # type: ignore[attr-defined]
            executor=executor,
        )
    clips = language_stages.merged(audio)
    transcripts = transcribe(store, run_dir, samples, clips, asr=asr, stages=asr_stage, quiet=quiet, executor=executor)
    return audio, transcripts


def transcribe(
    store: Store,
    run_dir: Path,
    samples: dict[str, Variant],
    clips: dict[str, AudioRef],
    *,
    asr: object,
    stages: LanguageStages,
    quiet: bool = False,
    executor: Executor | None = None,
) -> dict[str, StageSummary[Transcript]]:
    """ASR of ``clips``, one stage per language (language -> its stage's summary)."""
    stages.adopt(store, Transcript, {k: samples[k].language for k in clips})  # a run keyed before the split
    for stage in stages.stages.values():  # a transcript of another clip than the item's now is made again
        for k, t in store.results(stage.name, stage.fingerprint, Transcript).items():
            if k in clips and t.audio_sha256 != clips[k].sha256:
                store.fail(stage.name, stage.fingerprint, k, "the item's clip changed since its transcript; redone")
    return {
        lang: run_stage(
            store,
            stage,
            [(k, clips[k]) for k in sorted(clips) if samples[k].language == lang],
            Transcribe(asr, samples, run_dir),
            Transcript,
            quiet=quiet,
            description=f"transcribe ({asr.spec_for(lang)}) {lang}",  # type: ignore[attr-defined]
            executor=executor,
        )
        for lang, stage in stages.stages.items()
    }


@dataclass
class Synthesize(ItemTask):
    """TTS of one sample: speech on the worker, the WAV (sent back as bytes) written by the driver."""

    tts: object
    voices: dict[str, list[str]]
    seed: int
    run_dir: Path
    audio_dir: Path

    def __call__(self, v: Variant) -> tuple[dict, bytes]:
        voice = pick_voice(self.voices[v.language], seed=self.seed, item_id=v.id)
        samples_ = self.tts.synthesize(v.text, language=v.language, voice=voice)  # type: ignore[attr-defined]
        return {"voice": voice, "duration_s": round(len(samples_) / SAMPLE_RATE, 3)}, encode_wav(samples_)

    def finish(self, v: Variant, out: tuple[dict, bytes]) -> AudioRef:
        meta, data = out
        # ids are data, never paths: the file name is a slug + digest of the id, checked to stay in the run
        rel = self.audio_dir / v.language / id_file_name(v.id, ".wav")
        atomic_write(safe_join(self.run_dir, rel), data)
        return AudioRef(
            item_id=v.id,
            path=rel.as_posix(),
            sha256=sha256_hex(data),
            sample_rate=SAMPLE_RATE,
            duration_s=meta["duration_s"],
            engine=self.tts.spec_for(v.language),  # type: ignore[attr-defined]
            voice=meta["voice"],
            text_sha256=sha256_hex(v.text.encode()),
        )


@dataclass
class Transcribe(ItemTask):
    """ASR of one clip: the driver reads and checks the WAV, the worker decodes, transcribes and scores it."""

    asr: object
    samples: dict[str, Variant]
    run_dir: Path

    def setup(self, resources: Resources | None) -> None:
        if resources is None:
            return  # in-process: the engine's default threads
        n = max(1, int(resources.num_cpus))
        if hasattr(self.asr, "set_threads"):  # a per-language router: every engine of it
            self.asr.set_threads(n)  # type: ignore[attr-defined]
        elif hasattr(self.asr, "threads"):  # one engine for every language
            self.asr.threads = n  # type: ignore[attr-defined]

    def prepare(self, ref: AudioRef) -> tuple[AudioRef, str, str, np.ndarray]:
        v = self.samples[ref.item_id]
        return ref, v.language, v.text, load_verified(safe_join(self.run_dir, ref.path), ref.sha256)[0]

    def __getstate__(self) -> dict:
        # workers get each item's text with it, not the whole set, and load their own model
        asr = copy.copy(self.asr)
        if getattr(asr, "_model", None) is not None:
            asr._model = None  # type: ignore[attr-defined]
        return {**self.__dict__, "samples": {}, "asr": asr}

    def __call__(self, payload: tuple[AudioRef, str, str, np.ndarray]) -> Transcript:
        ref, language, reference, wav = payload
        t0 = time.perf_counter()
        try:
            text = self.asr.transcribe(wav, language=language)  # type: ignore[attr-defined]
        except ItemError:
            raise
        except Exception as exc:  # noqa: BLE001 - engine errors become item failures with context
            raise ItemError(f"ASR failed on {ref.path}: {type(exc).__name__}: {exc}") from exc
        elapsed = time.perf_counter() - t0
        return Transcript(
            item_id=ref.item_id,
            language=language,
            text=text,
            asr=self.asr.spec_for(language),  # type: ignore[attr-defined]
            audio_sha256=ref.sha256,
            audio_duration_s=ref.duration_s,
            processing_s=round(elapsed, 3),
            **item_scores(reference, text),
        )


def _check_names(samples: dict[str, Variant]) -> None:
    """Two ids must never share a clip file (a 64-bit digest clash is all but impossible; it is still checked)."""
    seen: dict[tuple[str, str], str] = {}
    for k, v in samples.items():
        name = (v.language, id_file_name(v.id))
        if name in seen:
            raise HalluscopeError(
                f"sample ids {seen[name]!r} and {v.id!r} map to one audio file name {name[1]}; "
                "expected distinct names. Fix: rename one of the two articles"
            )
        seen[name] = v.id


def _invalidate_bad_audio(store: Store, stage: Stage, run_dir: Path, samples: dict[str, Variant]) -> None:
    """A clip deleted or damaged since it was recorded, or recorded at a path outside the run (builds before ids
    were turned into safe names), or of a text that is not the item's text now (the per-language stage key holds
    the engine, not the texts), is marked failed, so this run regenerates it; clips of older runs at their old
    in-run paths are reused as they are (the TTS stage key did not change)."""
    for item_id, ref in store.results(stage.name, stage.fingerprint, AudioRef).items():
        if item_id in samples and ref.text_sha256 != sha256_hex(samples[item_id].text.encode()):
            store.fail(stage.name, stage.fingerprint, item_id, "the item's text changed since its clip; regenerated")
            continue
        try:
            path = safe_join(run_dir, ref.path)
        except PathEscapeError:
            store.fail(
                stage.name, stage.fingerprint, item_id, f"audio file {ref.path} lies outside the run; regenerated"
            )
            continue
        if not path.is_file() or file_sha256(path) != ref.sha256:
            store.fail(stage.name, stage.fingerprint, item_id, f"audio file {ref.path} missing or corrupt; regenerated")
