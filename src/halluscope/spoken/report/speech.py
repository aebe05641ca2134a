"""Speech figures of a build: ASR systems side by side on the same audio (seed 000 Table 7) and audio durations
against the audio encoders' 30 s window (seed 000, 4: median 96 s, 98% over 30 s)."""

from __future__ import annotations

import statistics

from halluscope.metrics.asr import score_asr
from halluscope.spoken.build import BuildResult

WINDOW_S = 30.0  # Qwen2-Audio's Whisper-large-v3 front end hears 30 s (seed 000, section 4)

TABLE7_COLS = [
    ("asr", "ASR system"),
    ("role", "Role"),
    ("language", "Lang"),
    ("engine", "Engine"),
    ("wer", "WER"),
    ("cer", "CER"),
    ("n", "n"),
    ("ref_words", "ref words"),
    ("rtf", "ASR time / audio time"),
]
TABLE7_NOTE = (
    "Every ASR system of the run on the same clips (Lost in Speech Table 7), corpus-level WER/CER after App. A.4's "
    "rule cleaning; 'build' is the system whose transcripts the detectors read by default "
    "('detect --transcripts SPEC' reads another). Only clips every system transcribed are counted, so the "
    "rows of one language compare like with like."
)
AUDIO_COLS = [
    ("language", "Lang"),
    ("clips", "Clips"),
    ("engines", "TTS"),
    ("median_s", "Median s"),
    ("mean_s", "Mean s"),
    ("max_s", "Max s"),
    ("over_window", f"Share over {WINDOW_S:.0f} s"),
    ("minutes", "Minutes"),
]
AUDIO_NOTE = (
    f"Clip durations per language. Audio-language models whose encoder hears {WINDOW_S:.0f} s (Qwen2-Audio's "
    "Whisper front end) get only the start of longer clips: the share over the window is the share of items "
    "whose label may lie in audio the model never hears (Lost in Speech section 4)."
)


def table7_rows(build: BuildResult, languages: list[str]) -> list[dict]:
    sets = build.transcript_sets()
    common = set.intersection(*(set(ts) for ts in sets.values())) if sets else set()
    rows = []
    for role_i, (system, ts) in enumerate(sets.items()):
        for lang in [*languages, "all"]:
            items = [ts[k] for k in sorted(common) if lang == "all" or ts[k].language == lang]
            if not items:
                continue
            score = score_asr(
                reference=[build.samples[t.item_id].text for t in items],
                hypothesis=[t.text for t in items],
                counts=[t.edits for t in items],
            )
            audio_s = sum(t.audio_duration_s for t in items)
            rows.append(
                {
                    "asr": system,
                    "role": "build" if role_i == 0 else "compared",
                    "language": lang,
                    "engine": ",".join(sorted({t.asr for t in items})),
                    **score.as_dict(),
                    "rtf": round(sum(t.processing_s for t in items) / audio_s, 3) if audio_s else None,
                }
            )
    return rows


def audio_rows(build: BuildResult, languages: list[str]) -> list[dict]:
    rows = []
    for lang in [*languages, "all"]:
        clips = [
            a
            for k, a in sorted(build.audio.items())
            if k in build.samples and (lang == "all" or build.samples[k].language == lang)
        ]
        if not clips:
            continue
        d = [a.duration_s for a in clips]
        rows.append(
            {
                "language": lang,
                "clips": len(d),
                "engines": ",".join(sorted({a.engine for a in clips})),
                "median_s": round(statistics.median(d), 2),
                "mean_s": round(statistics.fmean(d), 2),
                "max_s": round(max(d), 2),
                "over_window": round(sum(x > WINDOW_S for x in d) / len(d), 3),
                "minutes": round(sum(d) / 60, 2),
            }
        )
    return rows
