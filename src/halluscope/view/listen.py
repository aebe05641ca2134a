"""Listening sets for the listener study (seed 000, 3.4: a native speaker rated 120 random Kazakh clips for
intelligibility, faithfulness to the text and exclusion): 'view RUN --listen N --lang kk --seed S'.

The draw is seeded and depends only on the run's clips of that language (their ids, in sorted order), N and the
seed; it is stored in the run (stage 'listen_set', keyed by the TTS stage, language, N and seed), so every listener
and every later call gets the same clips in the same order. RUN/listening/<lang>-<N>-seed<S>.csv lists them with the
clip path and sha256 and empty rating columns for each listener to fill in.
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.fs import atomic_write
from halluscope.core.records import Record
from halluscope.core.stages import Stage
from halluscope.core.store import Store

STAGE = "listen_set"
RATING_COLUMNS = ("intelligibility", "faithfulness", "excluded", "notes")  # seed 000, 3.4's criteria


class ListeningSet(Record):
    language: str
    n: int
    seed: int
    available: int
    ids: tuple[str, ...]


def listening_set(run_dir: str | Path, *, n: int, language: str, seed: int) -> tuple[Path, ListeningSet, bool]:
    """The stored set (drawn now when new), its CSV path and whether it was drawn by this call."""
    from halluscope.spoken.build import load_build

    run_dir = Path(run_dir)
    if n < 1:
        raise HalluscopeError(f"--listen expects a positive number of clips, got {n}")
    with Store(run_dir, create=False) as store:
        build = load_build(store)
        clips = sorted(
            k for k, a in build.audio.items() if k in build.samples and build.samples[k].language == language
        )
        if not clips:
            langs = sorted({build.samples[k].language for k in build.audio if k in build.samples})
            raise HalluscopeError(
                f"{run_dir} has no clips in language '{language}' (it has {', '.join(langs) or 'none'}). "
                "Fix: pass --lang with one of them"
            )
        if n > len(clips):
            raise HalluscopeError(
                f"--listen {n}: {run_dir} has only {len(clips)} '{language}' clips. Fix: pass "
                f"--listen {len(clips)} or fewer"
            )
        stage = Stage(STAGE, {"language": language, "n": n, "seed": seed}, (build.stages["tts"],))
        name = f"{language}-{n}-seed{seed}"
        stored = store.results(STAGE, stage.fingerprint, ListeningSet).get(name)
        drawn = stored is None
        if stored is None:
            ids = random.Random(f"listen:{language}:{seed}").sample(clips, n)
            stored = ListeningSet(language=language, n=n, seed=seed, available=len(clips), ids=tuple(ids))
            store.put(STAGE, stage.fingerprint, name, stored)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["order", "item_id", "label", "clip", "clip_sha256", "voice", *RATING_COLUMNS])
        for i, k in enumerate(stored.ids, 1):
            a, v = build.audio[k], build.samples[k]
            w.writerow(
                [
                    i,
                    k,
                    "hallucinated" if v.label == 1 else "original",
                    a.path,
                    a.sha256,
                    a.voice,
                    *([""] * len(RATING_COLUMNS)),
                ]
            )
        path = atomic_write(run_dir / "listening" / f"{name}.csv", buf.getvalue())
        return path, stored, drawn
