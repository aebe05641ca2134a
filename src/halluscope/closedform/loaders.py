"""Loaders for the published prediction formats; every bad row becomes a LoadProblem, never a silent score.

Files are read by halluscope.core.inputs (read_rows: UTF-8 with or without BOM, CRLF, typed fields, size limits). A
missing, binary or non-UTF-8 file or a missing column is fatal (InputError); a bad row is left out and reported
with file, row (the file line, header = line 1), field and fix, so one typo does not hide the rest of a large file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from halluscope.closedform._loading import _loaded, _not_utf8, _problems
from halluscope.closedform.compat import AHA_SKIPPED
from halluscope.closedform.extract import extract_yesno
from halluscope.closedform.loaders_yesno import load_yesno as load_yesno  # the yes/no loader, its own module
from halluscope.closedform.records import (
    DOMAINS,
    KINDS,
    AhaItem,
    HalluAudioItem,
    Kind,
    Loaded,
)
from halluscope.core.errors import InputError
from halluscope.core.inputs import Field, read_rows

# Subsets named in the official HalluAudio scripts, with the domain of the results folder each script reads.
# Binary subsets are not named there: give their rows a 'domain' field or pass a default domain.
HALLUAUDIO_SUBSETS: dict[str, tuple[str, Kind]] = {
    "commonvoice_invalid_gender": ("speech", "unanswerable"),
    "invalid_noise": ("speech", "unanswerable"),
    "commonvoice_word_count": ("speech", "count"),
    "speech_commands_comparsion_loudness": ("speech", "choice"),  # sic: the official spelling
    "speech_commands_comparsion_speed": ("speech", "choice"),
    "single_music_count": ("music", "count"),
    "multiple_music_count": ("music", "count"),
    "tonic_count": ("music", "count"),
    "stroke_count": ("music", "count"),
    "speech_music_classification": ("music", "label"),
    "comparison_loudness": ("sound", "label"),
}
DOMAIN_ALIASES = {
    "speech": "speech",
    "sound": "sound",
    "audio": "sound",
    "environmental": "sound",
    "environmental sound": "sound",
    "environmental_sound": "sound",
    "music": "music",
}
# AHa-Bench question types and their index prefixes (process_parquet.py in the official repository)
AHA_TYPES: dict[str, int] = {
    "source_number": 0,
    "distance": 10,
    "duration": 20,
    "repetition": 30,
    "inferred sound": 40,
    "temporal sequence": 50,
    "existence": 60,
    "Authenticity": 70,
    "homophone_en-en": 80,
    "homophone_zh-en": 90,
    "homophone_zh-zh": 100,
    "inferredsound_en": 110,
    "inferredsound_zh": 120,
    "knowledge_en": 130,
    "knowledge_zh": 140,
    "overreliance_en": 150,
    "overreliance_zh": 160,
    "polysemy_en": 170,
    "polysemy_zh": 180,
    "prosodic_en": 190,
    "prosodic_zh": 200,
    "asr_zh": 210,
    "asr_en": 220,
}
_AHA_TYPES_CI = {k.lower(): k for k in AHA_TYPES}


def _infer_kind(reference: str) -> Kind:
    ref = reference.strip().lower()
    if ref in {"yes", "no"}:
        return "binary"
    if re.fullmatch(r"\d+", ref):
        return "count"
    if ref in {"first", "second"} or re.fullmatch(r"(?:the )?(?:first|second)(?: one| audio| clip| sound)?", ref):
        return "choice"
    if ref in {"", "none", "null", "n/a"}:
        return "unanswerable"
    return "label"


def _check_reference(kind: Kind, reference: str) -> str | None:
    ref = reference.strip().lower()
    if kind == "binary" and ref not in {"yes", "no"}:
        return f"a binary prompt needs reference 'yes' or 'no', got '{reference}'"
    if kind == "count" and not re.fullmatch(r"\d+", ref):
        return f"a count prompt needs an integer reference, got '{reference}'"
    if kind == "choice" and ("first" in ref) == ("second" in ref):
        return f"a comparison prompt needs a reference naming 'first' or 'second', got '{reference}'"
    if kind == "label" and not ref:
        return "a label prompt needs a non-empty reference"
    return None


# published HalluAudio rows: numbers are accepted where the released files have them (seed 002)
HALLUAUDIO_FIELDS = (
    Field("audio", "scalar"),
    Field("prompt", "scalar", empty_ok=True),
    Field("subset", "scalar"),
    Field("pred", "scalar", empty_ok=True),
    Field("reference", "scalar", required=False, empty_ok=True),
    Field("domain", required=False),
    Field("task", required=False),
    Field("id", "scalar", required=False),
)
_HALLUAUDIO_NAMES = frozenset(f.name for f in HALLUAUDIO_FIELDS)


def load_halluaudio(paths: Sequence[str | Path], *, domain: str | None = None) -> Loaded[HalluAudioItem]:
    """HalluAudio prediction JSONL(s). ``domain`` is the default for subsets not in HALLUAUDIO_SUBSETS; the kind of
    such a subset is inferred once from all its references (majority), and rows that do not fit it are problems."""
    if domain is not None and DOMAIN_ALIASES.get(domain.lower()) is None:
        raise InputError(f"unknown domain '{domain}'", field="domain", fix=f"use one of {', '.join(DOMAINS)}")
    default_domain = DOMAIN_ALIASES.get(domain.lower()) if domain else None
    problems = _problems()
    extra: Counter[str] = Counter()
    fix = 'each line needs "audio", "prompt", "reference", "subset" and the model reply "pred" (use "" for an empty reply)'
    what = "HalluAudio predictions JSONL"
    rows: list[tuple[Path, int, dict, str, str, object]] = []
    for p in map(Path, paths):
        _not_utf8(p, what)
        for r in read_rows(p, HALLUAUDIO_FIELDS, what=what, format="jsonl", problems=problems).rows:
            row, fields = r.number, r.values
            extra.update(k for k in r.raw if k not in _HALLUAUDIO_NAMES)
            subset = fields["subset"].strip()
            row_domain = fields.get("domain")
            if row_domain is not None and DOMAIN_ALIASES.get(row_domain.lower()) is None:
                problems.add(
                    f"unknown domain '{row_domain}'",
                    file=str(p),
                    row=row,
                    field="domain",
                    fix=f"use one of {', '.join(DOMAINS)}",
                )
                continue
            known = HALLUAUDIO_SUBSETS.get(subset)
            dom = (
                DOMAIN_ALIASES.get(row_domain.lower())
                if row_domain is not None
                else (known[0] if known else default_domain)
            )
            if dom is None:
                problems.add(
                    f"unknown subset '{subset}': its domain is not known (known subsets: {', '.join(sorted(HALLUAUDIO_SUBSETS))})",
                    file=str(p),
                    row=row,
                    field="subset",
                    fix="check the subset name, add a 'domain' field (speech|sound|music) to the row, or give the domain of the whole file",
                )
                continue
            if "reference" not in r.raw:
                problems.add(
                    "missing (required; null for a prompt without one)",
                    file=str(p),
                    row=row,
                    field="reference",
                    fix=fix,
                )
                continue
            if fields.get("task") is not None and fields["task"] not in KINDS:
                problems.add(
                    f"unknown task kind '{fields['task']}'",
                    file=str(p),
                    row=row,
                    field="task",
                    fix=f"use one of {', '.join(KINDS)}",
                )
                continue
            rows.append(
                (p, row, fields, subset, dom, fields.get("reference"))
            )  # None: a null reference (invalid audio)
    # the kind of a subset the scorer does not know: the majority kind of its non-null references
    votes: dict[str, Counter[Kind]] = {}
    for _, _, fields, subset, _, ref in rows:
        if subset not in HALLUAUDIO_SUBSETS and fields.get("task") is None and ref is not None:
            votes.setdefault(subset, Counter())[_infer_kind(str(ref))] += 1
    inferred = {s: c.most_common(1)[0][0] for s, c in votes.items()}
    items: list[HalluAudioItem] = []
    seen: dict[tuple[str, str, str], tuple[str, int]] = {}
    seen_ids: dict[str, tuple[str, int]] = {}
    for p, row, fields, subset, dom, raw_ref in rows:
        if fields.get("task") is not None:
            kind, source = fields["task"], "row field"
        elif subset in HALLUAUDIO_SUBSETS:
            kind, source = HALLUAUDIO_SUBSETS[subset][1], "known subset"
        else:
            kind, source = inferred.get(subset, "unanswerable"), "inferred from reference"
        reference = "none" if raw_ref is None else str(raw_ref)
        if raw_ref is None and kind != "unanswerable":
            problems.add(
                f"null reference for a {kind} prompt",
                file=str(p),
                row=row,
                field="reference",
                fix="give the ground truth, or mark the row 'task': 'unanswerable'",
            )
            continue
        bad = _check_reference(kind, reference)
        if bad:
            problems.add(
                bad + f" (subset '{subset}' is {kind}, {source})",
                file=str(p),
                row=row,
                field="reference",
                fix="fix the reference, or give the row a 'task' field",
            )
            continue
        key = (fields["audio"], fields["prompt"], subset)
        item_id = fields.get("id") or f"{p.name}:{row}"
        if key in seen or item_id in seen_ids:
            first = seen.get(key) or seen_ids[item_id]
            problems.add(
                f"duplicate of {first[0]} row {first[1]} (same id, or same audio, prompt and subset)",
                file=str(p),
                row=row,
                fix="remove the duplicate row",
            )
            continue
        seen[key] = seen_ids[item_id] = (str(p), row)
        items.append(
            HalluAudioItem(
                id=item_id,
                file=str(p),
                row=row,
                audio=fields["audio"],
                prompt=fields["prompt"],
                reference=reference,
                subset=subset,
                domain=dom,
                kind=kind,
                kind_source=source,
                pred=fields["pred"],
            )
        )
    notes = []
    if extra:
        notes.append("ignored fields: " + ", ".join(f"{k} ({n})" for k, n in sorted(extra.items())))
    for subset, kind in sorted(inferred.items()):
        notes.append(
            f"subset '{subset}' is not one the official scripts name: scored as {kind} "
            f"(inferred from {sum(votes[subset].values())} reference(s))"
        )
    return _loaded(items, problems, notes, paths, fix)


_AHA_INDEX = re.compile(r"^(\d+)_(\d+)_(\d+)$")


# published AHa-Bench rows (process_parquet.py); an empty question or reply is kept, as the official scorer does
AHA_FIELDS = (
    Field("index", "scalar"),
    Field("type", "scalar"),
    Field("question", "scalar", empty_ok=True),
    Field("answer", "scalar"),
    Field("prediction", "scalar", empty_ok=True),
    Field("prediction_match", required=False, empty_ok=True),
)


def load_aha(paths: Sequence[str | Path]) -> Loaded[AhaItem]:
    """AHa-Bench prediction JSONLs, one per run of the same model; index sets are compared across runs."""
    problems = _problems()
    items: list[AhaItem] = []
    stems = Counter(Path(p).stem for p in paths)
    runs: dict[str, set[str]] = {}
    run_file: dict[str, str] = {}
    fix = 'each line needs "index", "type", "question", "answer" and the model reply "prediction"'
    what = "AHa-Bench predictions JSONL"
    for p in map(Path, paths):
        _not_utf8(p, what)
        run = p.stem if stems[p.stem] == 1 else str(p)
        run_file[run] = str(p)
        indices: dict[str, int] = {}
        for r in read_rows(p, AHA_FIELDS, what=what, format="jsonl", problems=problems).rows:
            row, fields = r.number, r.values
            typ = _AHA_TYPES_CI.get(fields["type"].strip().lower())
            if typ is None:
                problems.add(
                    f"unknown AHa-Bench type '{fields['type']}'",
                    file=str(p),
                    row=row,
                    field="type",
                    fix=f"use one of {', '.join(AHA_TYPES)}",
                )
                continue
            index = fields["index"].strip()
            m = _AHA_INDEX.match(index)
            if not m:
                problems.add(
                    f"index '{index}' is not '<type id>_<audio id>_<n>'",
                    file=str(p),
                    row=row,
                    field="index",
                    fix="keep the index written by the official process_parquet.py",
                )
                continue
            if int(m.group(1)) != AHA_TYPES[typ]:
                problems.add(
                    f"index prefix {m.group(1)} does not match type '{typ}' (id {AHA_TYPES[typ]})",
                    file=str(p),
                    row=row,
                    field="index",
                    fix="check that the row's type and index belong together",
                )
                continue
            if index in indices:
                problems.add(
                    f"duplicate index '{index}' (first at row {indices[index]})",
                    file=str(p),
                    row=row,
                    field="index",
                    fix="each question appears once per run file",
                )
                continue
            is_asr = "asr" in typ.lower()
            if not is_asr and not extract_yesno(fields["answer"]).is_answer:
                problems.add(
                    f"expected a Yes/No answer, got '{fields['answer']}'",
                    file=str(p),
                    row=row,
                    field="answer",
                    fix="answers of non-ASR types are Yes or No",
                )
                continue
            indices[index] = row
            items.append(
                AhaItem(
                    run=run,
                    file=str(p),
                    row=row,
                    index=index,
                    type=typ,
                    task=typ.split("_")[0],
                    audio_key=f"{m.group(1)}_{m.group(2)}",
                    question=fields["question"],
                    answer=fields["answer"],
                    prediction=fields["prediction"],
                    prediction_match=fields.get("prediction_match"),
                )
            )
        runs[run] = set(indices)
    union = set().union(*runs.values()) if runs else set()
    for run, idx in runs.items():
        for missing in sorted(union - idx):
            problems.add(
                f"index '{missing}' is in another run but not in this one",
                file=run_file[run],
                field="index",
                fix="score runs over the same questions; this run is scored on the questions it has",
            )
    notes = []
    skipped = sorted(AHA_SKIPPED & union)
    if skipped:
        notes.append(
            f"the official scorer skips items {', '.join(skipped)}; compatibility mode skips them too, strict mode keeps them"
        )
    if items and all(i.prediction_match is None for i in items):
        notes.append(
            "no 'prediction_match' (judge) field: compatibility mode applies the official normaliser to the raw prediction"
        )
    return _loaded(items, problems, notes, paths, fix)
