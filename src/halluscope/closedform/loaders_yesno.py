"""The yes/no object-hallucination loader (Kuan et al.'s question and prediction files); ``loaders`` re-exports it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from halluscope.closedform._loading import _loaded, _not_utf8, _problems
from halluscope.closedform.records import (
    SAMPLINGS,
    Loaded,
    YesNoItem,
)
from halluscope.core.errors import InputError
from halluscope.core.inputs import BOM, Field, Rows, read_rows

# A sampling-strategy column: 'sampling' in the Kuan et al. question files, 'sampling_method' in prediction files
# written over a merged question file (e.g. the SAKURA_Reasoning Qwen2.5-Omni replies).
SAMPLING_COLUMNS = ("sampling", "sampling_method")


QUESTION_FIELDS = (
    Field("entry_id"),
    Field("audio_index"),
    Field("prompt_text"),
    Field("object"),
    Field("attribute", required=False),
    Field("label"),
    *(Field(c, required=False) for c in SAMPLING_COLUMNS),
)
PREDICTION_FIELDS = (
    Field("entry_id"),
    Field("response", empty_ok=True),
    Field("audio_index", required=False),
    Field("label", required=False),
    *(Field(c, required=False) for c in SAMPLING_COLUMNS),
)


def _sampling_column(table: Rows) -> str | None:
    return next((c for c in SAMPLING_COLUMNS if c in table.columns), None)


def _preamble(path: Path) -> int:
    """The '#' comment and blank lines before the header, which read_rows(comments=True) skips (for the notes)."""
    with path.open("rb") as fh:
        for n, line in enumerate(fh):
            line = line.removeprefix(BOM) if n == 0 else line
            if line.strip(b"\r\n") and not line.lstrip().startswith(b"#"):
                return n
    return 0


def _lines(lines: Sequence[int], n: int = 5) -> str:
    return ", ".join(map(str, lines[:n])) + (f" and {len(lines) - n} more" if len(lines) > n else "")


def load_yesno(questions: str | Path, predictions: str | Path, *, sampling: str | None = None) -> Loaded[YesNoItem]:
    """Kuan et al. question file (TSV: entry_id, audio_index, prompt_text, object[, attribute], label, sampling;
    released with a '#' comment header) joined with a predictions CSV (entry_id, response[, audio_index, label,
    sampling|sampling_method]). Entry ids are unique only within a sampling strategy, so an item is keyed by
    (sampling, entry_id). ``sampling`` fills the strategy of a file without a sampling column. Without one in the
    predictions, a reply is joined on entry_id alone where that names one question (else on entry_id and
    audio_index); a reply it still cannot place is a problem, never a guess."""
    qpath, ppath = Path(questions), Path(predictions)
    if sampling is not None and sampling not in SAMPLINGS:
        raise InputError(f"unknown sampling '{sampling}'", field="sampling", fix=f"use one of {', '.join(SAMPLINGS)}")
    problems = _problems()
    _not_utf8(qpath, "questions TSV")
    qt = read_rows(qpath, QUESTION_FIELDS, what="questions TSV", format="tsv", comments=True, problems=problems)
    qcolumn = _sampling_column(qt)
    if qcolumn is None and sampling is None:
        raise InputError(
            "missing column sampling",
            file=str(qpath),
            field="sampling",
            fix="add a sampling column (random|popular|adversarial) or give the sampling of the whole file",
        )
    _not_utf8(ppath, "predictions CSV")
    pt = read_rows(ppath, PREDICTION_FIELDS, what="predictions CSV", format="csv", comments=True, problems=problems)
    pcolumn = _sampling_column(pt)
    notes: list[str] = []

    def problem(path: Path, line: int, field: str, message: str, fix: str | None = None) -> None:
        problems.add(message, file=str(path), row=line, field=field, fix=fix)

    def strategy(path: Path, line: int, r: dict[str, str], column: str | None) -> str | None:
        samp = ((r.get(column) if column else "") or sampling or "").strip().lower()
        if samp not in SAMPLINGS:
            problem(
                path, line, column or "sampling", f"unknown sampling '{samp}'", f"use one of {', '.join(SAMPLINGS)}"
            )
            return None
        return samp

    def name(key: tuple[str, str]) -> str:
        return f"(sampling '{key[0]}', entry_id '{key[1]}')"

    questions_by_key: dict[tuple[str, str], tuple[int, dict[str, str]]] = {}
    keys_by_id: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for line, r in ((x.number, x.values) for x in qt.rows):
        eid = r["entry_id"].strip()
        label = r["label"].strip().lower()
        if label not in {"yes", "no"}:
            problem(qpath, line, "label", f"expected Yes or No, got '{r['label']}'")
            continue
        samp = strategy(qpath, line, r, qcolumn)
        if samp is None:
            continue
        key = (samp, eid)
        if key in questions_by_key:
            problem(
                qpath,
                line,
                "entry_id",
                f"duplicate question {name(key)} (first at line {questions_by_key[key][0]})",
                "an entry_id may repeat only under different sampling strategies",
            )
            continue
        questions_by_key[key] = (line, {**r, "label": label, "sampling": samp})
        keys_by_id[eid].append(key)

    preds: dict[tuple[str, str], tuple[int, dict[str, str]]] = {}
    by_audio = 0
    for line, r in ((x.number, x.values) for x in pt.rows):
        eid = r["entry_id"].strip()
        if pcolumn is not None or sampling is not None:
            samp = strategy(ppath, line, r, pcolumn)
            if samp is None:
                continue
            key = (samp, eid)
        else:
            candidates = keys_by_id.get(eid, [])
            audio = (r.get("audio_index") or "").strip()
            if len(candidates) > 1 and audio:
                same_audio = [k for k in candidates if questions_by_key[k][1]["audio_index"].strip() == audio]
                by_audio += len(same_audio) == 1
                candidates = same_audio if len(same_audio) == 1 else candidates
            if len(candidates) > 1:
                problem(
                    ppath,
                    line,
                    "entry_id",
                    f"entry_id '{eid}' is under {len(candidates)} sampling strategies in the questions "
                    f"({', '.join(k[0] for k in candidates)}) and this file has no sampling column",
                    "add a sampling_method column, pass --sampling, or score against one strategy's questions file",
                )
                continue
            key = candidates[0] if candidates else ("?", eid)
        if key in preds:
            problem(
                ppath,
                line,
                "entry_id",
                f"duplicate prediction for {name(key)} (first at line {preds[key][0]}); this one is ignored",
                "keep one response per question",
            )
            continue
        preds[key] = (line, r)
    if pcolumn is None and sampling is None and by_audio:
        notes.append(
            f"{ppath.name} has no sampling column: {by_audio} reply(ies) whose entry_id repeats across "
            "strategies were placed by their audio_index"
        )

    items: list[YesNoItem] = []
    in_questions = {k[0] for k in questions_by_key}
    elsewhere: dict[str, list[int]] = defaultdict(list)  # replies to a strategy the questions file does not have
    for key, (pline, r) in preds.items():
        if key[0] not in in_questions and key[0] != "?":
            elsewhere[key[0]].append(pline)
            continue
        if key not in questions_by_key:
            where = f"entry_id '{key[1]}'" if key[0] == "?" else name(key)
            problem(
                ppath,
                pline,
                "entry_id",
                f"prediction for {where} has no matching question",
                "check that the predictions were made on this questions file",
            )
            continue
        qline, q = questions_by_key[key]
        given = {f: (r.get(f) or "").strip() for f in ("label", "audio_index")}
        mismatch = (
            "label"
            if given["label"] and given["label"].lower() != q["label"]
            else "audio_index"
            if given["audio_index"] and given["audio_index"] != q["audio_index"].strip()
            else None
        )
        if mismatch:
            problem(
                ppath,
                pline,
                mismatch,
                f"{mismatch} '{r[mismatch].strip()}' disagrees with the question's '{q[mismatch].strip()}' "
                f"(questions line {qline}, {name(key)})",
                "the predictions belong to a different version of the questions",
            )
            continue
        items.append(
            YesNoItem(
                entry_id=key[1],
                audio_index=q["audio_index"],
                prompt_text=q["prompt_text"],
                object=q["object"],
                attribute=q.get("attribute") or None,
                label=q["label"],
                sampling=q["sampling"],
                response=r["response"],
                question_row=qline,
                prediction_row=pline,
            )
        )
    for samp, lines in sorted(elsewhere.items()):
        problem(
            ppath,
            lines[0],
            pcolumn or "sampling",
            f"{len(lines)} prediction(s) for sampling '{samp}' (lines {_lines(lines)}), which the questions file has none of",
            "score them against that strategy's questions file, or the merged file",
        )
    for key, (qline, _) in questions_by_key.items():
        if key not in preds:
            problem(
                qpath,
                qline,
                "entry_id",
                f"question {name(key)} has no prediction",
                "run the model on every question; this one is not scored",
            )
    for path, table in ((qpath, qt), (ppath, pt)):
        skipped = _preamble(path)
        if skipped:
            notes.append(f"{path.name}: skipped {skipped} '#' comment / blank line(s) before the header")
        ignored = [c for c in table.unknown if c]
        if ignored:
            notes.append(f"{path.name}: ignored column(s) {', '.join(ignored)}")
    fix = {
        str(qpath): f"every row of the questions TSV needs {', '.join(f.name for f in QUESTION_FIELDS if f.required)}",
        str(ppath): 'every row of the predictions CSV needs an entry_id and a response ("" for an empty reply)',
    }
    return _loaded(items, problems, notes, (qpath, ppath), fix)
