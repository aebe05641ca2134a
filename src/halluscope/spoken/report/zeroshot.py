"""Report section in the layout of seed 000's Table 3: zero-shot decoders on audio (A), transcripts (T) and text (O).

One row per model x decoding (W/O, or a mitigation: AAD, VCD, MTI, DoLa, as the row labels of seed 001's
Tables 2 and 12) x language x task x input x prompting, with the coverage n of the cell, accuracy and
macro-F1 over exactly those items (unparsable, refusal, error and 'none' answers count as errors), the
majority baseline on the same items, the rates of each non-answer, and for audio how many items were
truncated, chunked or skipped, how much audio was sent and heard, and how often it reached the model.
Skipped items are outside n (nothing was asked) and counted in 'skipped'.
"""

from __future__ import annotations

from collections import Counter

from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table
from halluscope.spoken.build import BuildResult, load_build_or_none

INPUT_CODE = {"audio": "A", "transcript": "T", "text": "O"}
TASK_CODE = {"binary": "B", "type": "T", "severity": "L"}
COLUMNS = [
    ("model", "model"),
    ("mitigation", "method"),
    ("language", "lang"),
    ("task", "task"),
    ("input", "input"),
    ("prompting", "prompting"),
    ("n", "n"),
    ("accuracy", "Acc"),
    ("macro_f1", "F1"),
    ("majority_accuracy", "maj. Acc"),
    ("majority_macro_f1", "maj. F1"),
    ("unparsable_rate", "unparsable"),
    ("refusal_rate", "refusal"),
    ("error_rate", "error"),
    ("none_rate", "none"),
    ("skipped", "skipped"),
    ("truncated", "truncated"),
    ("chunked", "chunked"),
    ("delivered_rate", "audio delivered"),
    ("sent_s_mean", "sent s (mean)"),
    ("heard_s_mean", "heard s (mean)"),
]


def zero_shot_rows(store: Store, build: BuildResult) -> list[dict]:
    from halluscope.core.records import LANGUAGES
    from halluscope.metrics.classification import (
        majority_baseline,
        score_classification,
    )
    from halluscope.spoken.detect.run import LABELS
    from halluscope.spoken.detect.runs import detect_runs

    # every distinct run (core/runs.py latest_runs): runs differing in any option are separate rows, the model's
    # label naming what differs ('--system', '--audio-policy', '-o subset', ...); method and prompting have columns
    latest = {(d.label, d.method, d.task, d.input, d.prompting): d.predictions for d in detect_runs(store)}
    rows = []
    for (detector, method, task, input_, prompting), all_preds in sorted(latest.items(), key=_order):
        preds = [p for p in all_preds.values() if p.zero_shot]
        if not preds:
            continue
        langs = [lang for lang in LANGUAGES if any(build.samples[p.item_id].language == lang for p in preds)]
        for lang in [*langs, "all"]:
            cell = [p for p in preds if lang == "all" or build.samples[p.item_id].language == lang]
            asked = [p for p in cell if not (p.audio and p.audio.action == "skipped")]
            row: dict = {
                "model": detector,
                "mitigation": method,
                "language": lang,
                "task": task,
                "input": INPUT_CODE[input_],
                "prompting": prompting,
                "n": len(asked),
                "skipped": len(cell) - len(asked),
            }
            if asked:
                labels = LABELS[task]
                gold = [p.gold for p in asked]
                score = score_classification(
                    reference=gold,
                    hypothesis=[p.predicted for p in asked],
                    labels=labels,
                    bootstrap=200,
                    clusters=[build.samples[p.item_id].article_id for p in asked],
                )
                base = majority_baseline(train=gold, test=gold, labels=labels)
                status = Counter(p.status for p in asked)
                row.update(
                    accuracy=score.accuracy,
                    macro_f1=score.macro_f1,
                    accuracy_ci=score.accuracy_ci,
                    macro_f1_ci=score.macro_f1_ci,
                    majority_accuracy=base.accuracy,
                    majority_macro_f1=base.macro_f1,
                    **{f"{s}_rate": status[s] / len(asked) for s in ("ok", "unparsable", "refusal", "error")},
                    none_rate=sum(p.status == "ok" and p.answer == "none" for p in asked) / len(asked),
                )
            audio = [p.audio for p in cell if p.audio is not None]
            if input_ == "audio":
                sent = [a for a in audio if a.action != "skipped"]
                known = [a for a in sent if a.delivered is not None]
                heard = [a.heard_s for a in sent if a.heard_s is not None]
                row.update(
                    truncated=sum(a.action == "truncated" for a in audio),
                    chunked=sum(a.action == "chunked" for a in audio),
                    delivered_rate=(sum(bool(a.delivered) for a in known) / len(known)) if known else None,
                    duration_s_mean=(sum(a.duration_s for a in audio) / len(audio)) if audio else None,
                    sent_s_mean=(sum(a.sent_s for a in sent) / len(sent)) if sent else None,
                    heard_s_mean=(sum(heard) / len(heard)) if heard else None,
                    window_s=audio[0].window_s if audio else None,
                    audio_policy=audio[0].audio_policy if audio else None,
                )
            rows.append(row)
    return rows


from halluscope.mitigation import METHOD_ORDER  # noqa: E402 - seed 001, Table 2


def _order(item: tuple) -> tuple:
    (detector, method, *rest), _ = item
    head = method.split(" ")[0]
    return (detector, METHOD_ORDER.index(head) if head in METHOD_ORDER else len(METHOD_ORDER), method, *rest)


def table3(rows: list[dict]) -> list[dict]:
    """The compact layout: model x language rows, one 'Acc/F1 (n)' cell per task x input, each beside the
    majority baseline of its own items ('B-A-maj'): the audio subsets can be skewed unlike the transcripts."""
    cells: dict[tuple, dict] = {}
    for r in rows:
        if r["language"] == "all":
            continue
        key = (r["model"], r.get("mitigation", "W/O"), r["prompting"], r["language"])
        out = cells.setdefault(
            key,
            {
                "model": r["model"],
                "mitigation": r.get("mitigation", "W/O"),
                "prompting": r["prompting"],
                "language": r["language"],
            },
        )
        if r.get("accuracy") is not None:
            out[f"{TASK_CODE[r['task']]}-{r['input']}"] = f"{r['accuracy']:.3f}/{r['macro_f1']:.3f} (n={r['n']})"
            out[f"{TASK_CODE[r['task']]}-{r['input']}-maj"] = (
                f"{r['majority_accuracy']:.3f}/{r['majority_macro_f1']:.3f}"
            )
    return list(cells.values())


CAPTION = (
    "Zero-shot decoders: A = direct audio, T = ASR transcript, O = original text; B/T/L = binary/type/severity. "
    "Acc and macro-F1 use the same n items; unparsable, refusal, error and 'none' answers count as errors. "
    "Majority baseline: the most frequent gold label of the same items (Table 3 layout: B-A-maj is the "
    "baseline of the B-A cell, and so on per input). Cells with different n are not "
    "comparable. Audio: items truncated / chunked / skipped (skipped items are outside n) under the run's "
    "policy, mean seconds sent and heard, and the share of calls where audio reached the model. method: W/O = "
    "plain decoding, else the decoding-time mitigation (AAD, VCD, MTI, DoLa; non-default settings in brackets)."
)


@register_section
def zero_shot_section(store: Store) -> Section | None:
    build = load_build_or_none(store)
    rows = zero_shot_rows(store, build) if build is not None else []
    if not rows:
        return None
    compact = table3(rows)
    keys = sorted({k for r in compact for k in r} - {"model", "mitigation", "prompting", "language"})
    ccols = [
        ("model", "model"),
        ("mitigation", "method"),
        ("prompting", "prompting"),
        ("language", "lang"),
        *[(k, k) for k in keys],
    ]
    return Section(
        title="Zero-shot decoders on audio and transcripts (Lost in Speech Table 3)",
        blocks=[
            CAPTION,
            Table("zeroshot_table3", ccols, compact, title="Table 3 layout (Acc/F1 (n))"),
            Table("zeroshot_cells", COLUMNS, rows, title="Per cell"),
        ],
    )
