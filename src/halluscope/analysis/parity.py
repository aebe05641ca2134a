"""Language parity (issue 31, 3): is the benchmark fair across English, Russian and Kazakh?

One table per run, a row per language (and detector): corpus WER before and after App. A.4's cleaning (the
normaliser's effect = raw - cleaned), the listeners' speech quality (share rated fully or mostly intelligible,
share excluded; seed 000, 3.4), binary macro-F1 per input (O, T, audio) with intervals over source articles,
the judges' agreement among themselves (mean Krippendorff alpha over dimensions) and, in the 'all' row, the
MISHAP-Bench (001) hallucination rate and judge-human agreement (MISHAP clips carry no language).
Between every two languages: cleaned WER, and each detector x input's accuracy and macro-F1, compared by a
permutation test that reassigns whole source articles between the two languages (2000 rounds, two-sided), with
Holm's correction over every test in the table.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from halluscope.analysis._common import (
    INPUT_NAMES,
    INPUT_ORDER,
    cluster_permutation,
    detect_runs,
    holm,
    per_cluster,
    ratio_stat,
    scored,
)
from halluscope.core.records import LANGUAGES, Transcript, Variant
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Figure, Table

BINARY = ("original", "hallucinated")


def f1_counts(gold: str, pred: str | None) -> list[float]:
    """Per item [tp, fp, fn] of each binary class (None predicted: a miss of its gold class)."""
    out: list[float] = []
    for c in BINARY:
        out += [float(pred == c and gold == c), float(pred == c and gold != c), float(pred != c and gold == c)]
    return out


def macro_f1_stat(x: np.ndarray) -> np.ndarray:
    f = 0.0
    for k in range(len(BINARY)):
        tp, fp, fn = x[:, 3 * k], x[:, 3 * k + 1], x[:, 3 * k + 2]
        den = 2 * tp + fp + fn
        f = f + np.where(den > 0, 2 * tp / np.maximum(den, 1e-12), 0.0)
    return f / len(BINARY)


def wer_counts(reference: str, transcript: Transcript) -> list[float]:
    """[word edits, reference words] after App. A.4's cleaning (a reference that cleans to nothing: [0, 0]): the
    transcript's own counts where it kept them."""
    from halluscope.metrics.asr import pair_counts

    edits, words, _, _ = transcript.edits or pair_counts(reference, transcript.text)
    return [float(edits), float(words)]


def pairwise_tests(items: dict[str, list[tuple[str, list[float]]]], metric: str, stat, **extra) -> list[dict]:  # type: ignore[no-untyped-def]
    """``items``: language -> [(article id, per-item counts)]; one row per language pair."""
    rows = []
    for a, b in combinations([lang for lang in LANGUAGES if items.get(lang)], 2):
        ca = per_cluster([c for c, _ in items[a]], [x for _, x in items[a]])
        cb = per_cluster([c for c, _ in items[b]], [x for _, x in items[b]])
        va, vb = float(stat(ca.sum(0)[None])[0]), float(stat(cb.sum(0)[None])[0])
        diff, p = cluster_permutation(ca, cb, stat)
        rows.append(
            {
                "metric": metric,
                **extra,
                "lang_a": a,
                "lang_b": b,
                "value_a": va,
                "value_b": vb,
                "difference": diff,
                "p": p,
            }
        )
    return rows


def parity_tables(store: Store, build: object) -> tuple[list[dict], list[dict]]:
    from halluscope.metrics.asr import RawText, score_asr
    from halluscope.metrics.classification import score_classification
    from halluscope.spoken.detect.run import gold

    samples: dict[str, Variant] = build.samples  # type: ignore[attr-defined]
    transcripts = build.transcripts  # type: ignore[attr-defined]
    langs = [lang for lang in LANGUAGES if any(v.language == lang for v in samples.values())]
    binary = {(d, i): scored(p, samples) for (d, t, i), p in detect_runs(store).items() if t == "binary"}
    ratings: dict[str, list[dict]] = {}
    for r in store.ratings():
        if r["item_id"] in samples:
            ratings.setdefault(samples[r["item_id"]].language, []).append(r)
    judge_alpha = _judge_alpha(store, build)
    mishap = _mishap_all(store)
    rows: list[dict] = []
    detectors = sorted({d for d, _ in binary}) or [None]
    for lang in [*langs, "all"]:
        ts = [t for t in transcripts.values() if t.item_id in samples and lang in ("all", t.language)]
        ref, hyp = [samples[t.item_id].text for t in ts], [t.text for t in ts]
        clean, raw = (  # WER alone: no character pass where a transcript kept no counts
            score_asr(reference=ref, hypothesis=hyp, cer=False, counts=[t.edits for t in ts]),
            score_asr(reference=ref, hypothesis=hyp, cleaner=RawText(), cer=False, counts=[t.raw_edits for t in ts]),
        )
        rs = [r for k, v in ratings.items() if lang in ("all", k) for r in v]
        base = {
            "language": lang,
            "wer": clean.wer,
            "wer_raw": raw.wer,
            "normaliser_effect": None if clean.wer is None or raw.wer is None else raw.wer - clean.wer,
            "intelligible": (sum(r["intelligibility"] in ("fully", "mostly") for r in rs) / len(rs)) if rs else None,
            "excluded": (sum(bool(r["excluded"]) for r in rs) / len(rs)) if rs else None,
            "judge_alpha": judge_alpha.get(lang),
            **(mishap if lang == "all" else {"mishap_rate": None, "judge_human_kappa": None}),
        }
        for det in detectors:
            row = {**base, "detector": det}
            for inp in INPUT_ORDER:
                preds = [p for p in binary.get((det, inp), {}).values() if lang in ("all", samples[p.item_id].language)]
                if not preds:
                    row[f"f1_{INPUT_NAMES[inp]}"] = row[f"f1_{INPUT_NAMES[inp]}_ci"] = None
                    continue
                s = score_classification(
                    reference=[p.gold for p in preds],
                    hypothesis=[p.predicted for p in preds],
                    labels=BINARY,
                    clusters=[samples[p.item_id].article_id for p in preds],
                )
                row[f"f1_{INPUT_NAMES[inp]}"], row[f"f1_{INPUT_NAMES[inp]}_ci"] = s.macro_f1, s.macro_f1_ci
            rows.append(row)
    tests = pairwise_tests(
        {
            lang: [
                (samples[t.item_id].article_id, wer_counts(samples[t.item_id].text, t))
                for t in transcripts.values()
                if t.item_id in samples and t.language == lang
            ]
            for lang in langs
        },
        "WER",
        ratio_stat,
        detector=None,
        input=None,
    )
    for (det, inp), preds in sorted(binary.items()):
        by_lang: dict[str, list] = {}
        for p in preds.values():
            v = samples[p.item_id]
            by_lang.setdefault(v.language, []).append((v.article_id, [float(p.predicted == p.gold), 1.0]))
        tests += pairwise_tests(by_lang, "accuracy", ratio_stat, detector=det, input=INPUT_NAMES[inp])
        f1_items = {
            lang: [
                (c, f1_counts(samples_gold, pred))
                for c, samples_gold, pred in (
                    (samples[p.item_id].article_id, gold(samples[p.item_id], "binary"), p.predicted)
                    for p in preds.values()
                    if samples[p.item_id].language == lang
                )
            ]
            for lang in by_lang
        }
        tests += pairwise_tests(f1_items, "macro-F1", macro_f1_stat, detector=det, input=INPUT_NAMES[inp])
    for t, adj in zip(tests, holm([t["p"] for t in tests])):
        t["p_holm"], t["significant"] = adj, adj is not None and adj < 0.05
    return rows, tests


def _judge_alpha(store: Store, build: object) -> dict[str, float]:
    from halluscope.analysis.reliability import alpha_rows

    out: dict[str, list[float]] = {}
    for r in alpha_rows(store, build):
        if r["benchmark"] == "Lost in Speech" and r["alpha"] is not None:
            out.setdefault(r["slice"], []).append(r["alpha"])
    return {k: float(np.mean(v)) for k, v in out.items()}


def _mishap_all(store: Store) -> dict:
    from halluscope.analysis.reliability import human_reference, mishap_humans, mishap_votes
    from halluscope.metrics.agreement import cohen_kappa

    votes = mishap_votes(store)
    vs = [v for per in votes.values() for v in per.values() if v is not None]
    ref = human_reference(mishap_humans(store))
    pairs = [(per[i], ref[i]) for per in votes.values() for i in ref if per.get(i) is not None]
    kappa = (
        cohen_kappa([a for a, _ in pairs], [b for _, b in pairs], labels=("grounded", "hallucinated"))
        if len(pairs) > 1
        else None
    )
    return {"mishap_rate": sum(v == "hallucinated" for v in vs) / len(vs) if vs else None, "judge_human_kappa": kappa}


def parity_plot(rows: list[dict]) -> bytes | None:
    rows = [r for r in rows if r["language"] != "all"]
    if not rows:
        return None
    import matplotlib.pyplot as plt

    from halluscope.report.plots import png

    langs = list(dict.fromkeys(r["language"] for r in rows))
    first = {lang: next(r for r in rows if r["language"] == lang) for lang in langs}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8.4, 3.2))
    xs = np.arange(len(langs))
    a1.bar(xs - 0.18, [first[lang]["wer_raw"] or 0 for lang in langs], width=0.34, label="raw", color="#a0aec0")
    a1.bar(xs + 0.18, [first[lang]["wer"] or 0 for lang in langs], width=0.34, label="A.4 cleaned", color="#805ad5")
    a1.set_xticks(xs, langs)
    a1.set_ylabel("corpus WER")
    a1.legend(fontsize=7)
    keys = [k for k in ("O", "T", "audio") if any(r[f"f1_{k}"] is not None for r in rows)]
    det = rows[0]["detector"]
    sub = {r["language"]: r for r in rows if r["detector"] == det}
    for j, k in enumerate(keys):
        vals = [sub[lang][f"f1_{k}"] or 0 for lang in langs]
        cis = [sub[lang][f"f1_{k}_ci"] for lang in langs]
        err = [[v - c[0] if c else 0 for v, c in zip(vals, cis)], [c[1] - v if c else 0 for v, c in zip(vals, cis)]]
        a2.bar(xs + (j - (len(keys) - 1) / 2) * 0.3, vals, width=0.28, yerr=err, capsize=3, label=k)
    a2.set_xticks(xs, langs)
    a2.set_ylim(0, 1)
    a2.set_ylabel(f"binary macro-F1, {det}")
    if keys:
        a2.legend(fontsize=7)
    return png(fig)


COLS = [
    ("language", "Lang"),
    ("detector", "Detector"),
    ("wer_raw", "WER raw"),
    ("wer", "WER cleaned"),
    ("normaliser_effect", "normaliser effect"),
    ("intelligible", "intelligible"),
    ("excluded", "excluded"),
    ("f1_O", "F1 O"),
    ("f1_O_ci", "O 95% CI"),
    ("f1_T", "F1 T"),
    ("f1_T_ci", "T 95% CI"),
    ("f1_audio", "F1 audio"),
    ("f1_audio_ci", "audio 95% CI"),
    ("judge_alpha", "judges α"),
    ("judge_human_kappa", "judge-human κ"),
    ("mishap_rate", "MISHAP rate"),
]
TEST_COLS = [
    ("metric", "Metric"),
    ("detector", "Detector"),
    ("input", "Input"),
    ("lang_a", "A"),
    ("lang_b", "B"),
    ("value_a", "A value"),
    ("value_b", "B value"),
    ("difference", "A - B"),
    ("p", "p"),
    ("p_holm", "p (Holm)"),
    ("significant", "Holm < 0.05"),
]


@register_section
def parity_section(store: Store) -> Section | None:
    from halluscope.spoken.build import load_build_or_none

    build = load_build_or_none(store)
    if build is None:
        return None
    rows, tests = parity_tables(store, build)
    if not rows:
        return None
    return Section(
        "Language parity (Lost in Speech, 000)",
        [
            "Normaliser effect: corpus WER on the raw ASR text minus WER after App. A.4's cleaning. Intelligible / "
            "excluded: listeners' latest ratings in the viewer. F1: binary macro-F1 on original text (O), ASR "
            "transcript (T) and audio, CI over source articles. Judges α: mean Krippendorff alpha over the spoken "
            "judge dimensions; judge-human κ and MISHAP rate: MISHAP-Bench (001), all languages.",
            Table("language_parity", COLS, rows, title="Per-language parity"),
            Table(
                "language_parity_tests",
                TEST_COLS,
                tests,
                title="Pairwise language tests (Holm-corrected)",
                notes=(
                    "Permutation tests reassigning whole source articles between the two languages (2000 rounds, "
                    "two-sided); Holm's step-down correction over every row.",
                ),
            ),
            Figure(parity_plot(rows), "WER and detector F1 by language", file="language_parity.png"),
        ],
    )
