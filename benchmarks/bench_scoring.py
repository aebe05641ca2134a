"""Label scoring at scale (issue 25): HalluAudio label items scored end to end against a bare regex loop.

    .venv/bin/python benchmarks/bench_scoring.py [--items 10000] [--labels 2000] [--repeats 1] [--smoke]

Writes ``--items`` label rows (one subset, ``--labels`` distinct two-word reference labels, AVHBench-caption scale)
with replies that name the reference, a negated other label, two labels, or none, loads the file and scores it in
both modes (``score_halluaudio``, bootstrap off). The bare loop runs, for every item, the same per-label regex
``extract_label`` uses (precompiled) for the item's own reference only: the least any label reader must do. Printed:
items per second of each, their ratio (scorer / bare), and the scorer's seconds for the whole set (goal <= 10 s at
10,000 items x 2,000 labels). The reader used to compile every label's pattern for every item (quadratic: 1,109
AVHBench captions did not finish in 400 s); it now looks up only the labels whose first word the reply contains.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from _ratios import ratio

from halluscope.closedform.loaders import load_halluaudio
from halluscope.closedform.score import score_halluaudio
from halluscope.reply.free import _label_pattern, normalize_label, normalize_reply

WORDS = (
    "acoustic amber bright cold deep distant dry electric faint fast gentle grand harsh heavy hollow loud low "
    "metal muted noisy old quiet rapid rough sharp short slow smooth soft steady sweet thin warm wet wild"
).split()
NOUNS = (
    "bell birds brass chime choir clap crowd drum engine fan flute gong guitar horn motor organ piano rain siren "
    "snare string synth tap thunder train violin voice water whistle wind"
).split()


def labels(n: int, rng: random.Random) -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        out.add(
            f"{rng.choice(WORDS)} {rng.choice(NOUNS)} {len(out)}"
            if len(out) >= len(WORDS) * len(NOUNS) // 2
            else f"{rng.choice(WORDS)} {rng.choice(NOUNS)}"
        )
    return sorted(out)


def rows(n: int, names: list[str], rng: random.Random) -> list[dict]:
    shapes = ("It is {r}.", "I hear {r}, not {o}.", "Probably {r} or {o}.", "Nothing I can name.", "The sound of {r}s.")
    out = []
    for i in range(n):
        r, o = names[i % len(names)], rng.choice(names)
        out.append(
            {
                "id": f"b{i}",
                "audio": f"a{i}.wav",
                "prompt": "Which sound is this?",
                "reference": r,
                "subset": "speech_music_classification",
                "pred": rng.choice(shapes).format(r=r, o=o),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--labels", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="200 items, 50 labels, one repeat (the test suite's run)")
    a = ap.parse_args()
    if a.smoke:
        a.items, a.labels, a.repeats = 200, 50, 1
    rng = random.Random(0)
    names = labels(a.labels, rng)
    data = rows(a.items, names, rng)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "labels.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
        best_scorer = best_bare = float("inf")
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            result = score_halluaudio(load_halluaudio([path]), bootstrap=0)
            best_scorer = min(best_scorer, time.perf_counter() - t0)
            t0 = time.perf_counter()
            hits = 0
            for r in data:
                hits += _label_pattern(normalize_label(r["reference"])).search(normalize_reply(r["pred"])) is not None
            best_bare = min(best_bare, time.perf_counter() - t0)
    n = len(result.items)
    assert n == a.items and hits, (n, hits)
    acc = result.strict["all"]["accuracy"]
    print(
        f"{a.items} items, {len(set(names))} labels: scorer {best_scorer:.2f} s ({a.items / best_scorer:,.0f} items/s, "
        f"strict accuracy {acc:.3f}), bare loop {best_bare:.3f} s ({a.items / best_bare:,.0f} items/s)"
    )
    ratio(
        "scorer items/s / bare regex loop items/s",
        best_bare / best_scorer,
        note=f"scorer {a.items / best_scorer:,.0f} items/s, bare {a.items / best_bare:,.0f} items/s",
    )
    ratio(f"scorer seconds for {a.items} items x {a.labels} labels", best_scorer, "<= 10", smoke=a.smoke, unit=" s")


if __name__ == "__main__":
    main()
