"""Lost in Speech (seed 000) Tables 1-5 and 7-10 in the paper's layouts, through the one renderer (report/table.py).

Each table is built from the rows the report already holds (the long forms stay in their own CSVs: table1_dataset,
detection_long, zeroshot_cells, table4_realworld, table5_provenance, table7_asr_systems, table9_agreement,
table10_*), re-laid out with the paper's row and column order and, where the paper bolds a best cell, that cell
marked. ``write_paper_tables`` writes every one as Markdown, CSV, LaTeX (booktabs), HTML and JSON to
RUN/report/paper/. A table whose data the run does not have says which command fills it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.report.sections import Section
from halluscope.report.table import Table

LANG_ORDER = ("en", "ru", "kk")  # seed 000 Table 1: by resource level, high to low
LANG_NAME = {"en": "EN", "ru": "RU", "kk": "KZ"}  # the paper writes Kazakh as KZ
RESOURCE = {"en": "H", "ru": "M", "kk": "L"}
TASKS = (("binary", "B"), ("type", "T"), ("severity", "L"))  # seed 000 Table 2/3: B, T, L in this order
SPLITS = (("O", "O"), ("T", "T"))
INPUTS3 = (("A", "A"), ("T", "T"))  # Table 3: direct audio, then transcripts
TYPES = (("C", "C"), ("F", "F"), ("I", "I"))
DIMS = ("AT", "Fl", "Co", "LC", "IC", "Cr", "FA", "Re", "Sa")  # seed 000, 3.4: the order the dimensions are named
SECTION_TITLE = "Lost in Speech (000) tables as printed: Tables 1-5 and 7-10"


def _name(lang: str) -> str:
    return LANG_NAME.get(lang, lang.upper())


def _langs(present: Sequence[str]) -> list[str]:
    return [lang for lang in LANG_ORDER if lang in present] + sorted(set(present) - set(LANG_ORDER) - {"all"})


def _best(row: dict, keys: Sequence[str], *, low: bool = False) -> list[str]:
    """The keys of ``row`` holding the best value among ``keys`` (ties all marked); none when fewer than two."""
    vals = {k: row[k] for k in keys if isinstance(row.get(k), (int, float))}
    if len(vals) < 2:
        return []
    best = (min if low else max)(vals.values())
    return [k for k, v in vals.items() if v == best]


def _rows(sections: Sequence[Section], table_id: str) -> list[dict]:
    for s in sections:
        for t in s.tables:
            if t.id == table_id:
                return t.rows
    return []


def table1(dataset: list[dict], split: list[dict]) -> Table:
    """Lang, Res, Orig, Halluc, C/F/I, Mild/Moderate/Severe, Total; then the 'real' rows of section 3.2."""
    by = {r["language"]: r for r in dataset}
    rows = []
    for lang in _langs(list(by)):
        r = by[lang]
        rows.append(
            {
                "language": _name(lang),
                "res": RESOURCE.get(lang),
                "orig": r["original"],
                "halluc": r["hallucinated"],
                **{k: r.get(k) for k, _ in TYPES},
                "mild": r.get("mild"),
                "moderate": r.get("moderate"),
                "severe": r.get("severe"),
                "total": r["total"],
            }
        )
    if "all" in by:
        r = by["all"]
        rows.append(
            {
                "language": "Total",
                "res": None,
                "orig": r["original"],
                "halluc": r["hallucinated"],
                **{k: r.get(k) for k, _ in TYPES},
                "mild": r.get("mild"),
                "moderate": r.get("moderate"),
                "severe": r.get("severe"),
                "total": r["total"],
            }
        )
    for r in split:  # the real-world rows: binary labels only
        rows.append(
            {
                "language": f"{_name(r['language'])} (real)\u2020",
                "res": RESOURCE.get(r["language"]),
                "orig": r["negatives"],
                "halluc": r["fakes"],
                "total": r["negatives"] + r["fakes"],
            }
        )
    cols = [
        ("language", "Lang"),
        ("res", "Res"),
        ("orig", "Orig"),
        ("halluc", "Halluc"),
        *TYPES,
        ("mild", "Mild"),
        ("moderate", "Moderate"),
        ("severe", "Severe"),
        ("total", "Total"),
    ]
    note = (
        "Res = resource level (H/M/L). Type: C = contradiction, F = fabrication, I = inconsistency. Rows marked "
        "'real' are the real-world split (section 3.2); \u2020 natively collected fakes plus translations of the "
        "other language's; their truthful items are original articles above, not extra data."
    )
    return Table("paper_table1", cols, rows, title="Table 1: Dataset summary across languages", notes=(note,))


def table2(detection: list[dict]) -> Table:
    """Rows Lang x Task (B, T, L) x Split (O, T); a column pair (Acc, F1) per trained detector; best F1 bold."""
    dets = list(dict.fromkeys(r["detector"] for r in detection))
    cells = {(r["language"], r["task"], r["split"], r["detector"]): r for r in detection}
    rows = []
    for lang in _langs(list({r["language"] for r in detection})):
        for task, tcode in TASKS:
            for split, scode in SPLITS:
                row: dict = {"language": _name(lang), "task": tcode, "split": scode}
                for i, d in enumerate(dets):
                    c = cells.get((lang, task, split, d))
                    row[f"acc{i}"], row[f"f1{i}"] = (c["accuracy"], c["macro_f1"]) if c else (None, None)
                if any(row[f"f1{i}"] is not None for i in range(len(dets))):
                    row["best"] = _best(row, [f"f1{i}" for i in range(len(dets))])
                    rows.append(row)
    cols = [("language", "Lang"), ("task", "Task"), ("split", "Split")]
    for i, d in enumerate(dets):
        cols += [(f"acc{i}", f"{d} Acc"), (f"f1{i}", f"{d} F1")]
    note = (
        "Fine-tuned detector performance (Acc/F1) on the test split. Task: B = Binary, T = Type, L = Level; Split: "
        "O = original text, T = ASR-transcribed text. Bold: the best F1 within each row."
    )
    return Table(
        "paper_table2",
        cols,
        rows,
        title="Table 2: Fine-tuned detector performance (Acc/F1)",
        notes=(note,),
        bold="best",
        empty="no trained detector runs yet: run `halluscope detect RUN --detector tfidf "
        "--task all --input all` (or encoder/<dir>)",
    )


def table3(cells: list[dict]) -> Table:
    """Rows Lang x Input (A, T) x model; Acc/F1 per task in the order B, T, L with n; best F1 per column and group."""
    cells = [
        c
        for c in cells
        if c.get("language") != "all"
        and c.get("input") in ("A", "T")
        and c.get("mitigation", "W/O") == "W/O"
        and c.get("prompting") in (None, "direct")
    ]
    models = list(dict.fromkeys(c["model"] for c in cells))
    by = {(c["language"], c["input"], c["model"], c["task"]): c for c in cells}
    rows = []
    for lang in _langs(list({c["language"] for c in cells})):
        for inp, icode in INPUTS3:
            group = []
            for m in models:
                row: dict = {"language": _name(lang), "input": icode, "model": m}
                for task, tcode in TASKS:
                    c = by.get((lang, inp, m, task))
                    row[f"{tcode}_acc"] = c.get("accuracy") if c else None
                    row[f"{tcode}_f1"] = c.get("macro_f1") if c else None
                    row[f"{tcode}_n"] = c.get("n") if c else None
                if any(row[f"{t}_n"] for _, t in TASKS):
                    group.append(row)
            for _, tcode in TASKS:  # bold: the best model of the group in each task (seed 000: among comparable cells)
                vals = [r[f"{tcode}_f1"] for r in group if r[f"{tcode}_f1"] is not None]
                for r in group:
                    if len(vals) > 1 and r[f"{tcode}_f1"] == max(vals):
                        r.setdefault("best", []).append(f"{tcode}_f1")
            rows += group
    cols = [("language", "Lang"), ("input", "Input"), ("model", "M")]
    for _, tcode in TASKS:
        cols += [(f"{tcode}_acc", f"{tcode} Acc"), (f"{tcode}_f1", f"{tcode} F1"), (f"{tcode}_n", f"{tcode} n")]
    note = (
        "Zero-shot decoders on direct audio (A) and ASR transcripts (T), direct prompting. Acc and macro-F1 use the "
        "same n items; unparsable and none responses count as errors; cells with different n are not comparable. "
        "Bold: the best F1 among the models of a language and input. Per-cell detail: zeroshot_cells.csv."
    )
    return Table(
        "paper_table3",
        cols,
        rows,
        title="Table 3: Decoder performance on direct audio (A) and ASR transcripts (T)",
        notes=(note,),
        bold="best",
        empty="no zero-shot runs yet: run `halluscope detect "
        "RUN --detector openai/<model> --task all --input all` (or hf-audio/<dir> --input audio)",
    )


def table4(t4: list[dict]) -> Table:
    """Rows Lang x Data (Synth (test), Real); macro-F1 O and T per detector; best F1 per row and input bold."""
    dets = list(dict.fromkeys(r["detector"] for r in t4))
    by = {(r["language"], r["data"], r["detector"]): r for r in t4}
    rows = []
    for lang in [x for x in ("ru", "kk") if any(r["language"] == x for r in t4)]:
        for data in ("Synth (test)", "Real"):
            row: dict = {"language": _name(lang), "data": data}
            for i, d in enumerate(dets):
                r = by.get((lang, data, d), {})
                row[f"O{i}"], row[f"T{i}"] = r.get("O_f1"), r.get("T_f1")
            row["best"] = _best(row, [f"O{i}" for i in range(len(dets))]) + _best(
                row, [f"T{i}" for i in range(len(dets))]
            )
            rows.append(row)
    cols = [("language", "Lang"), ("data", "Data")]
    cols += [(f"O{i}", f"{d} O") for i, d in enumerate(dets)] + [(f"T{i}", f"{d} T") for i, d in enumerate(dets)]
    note = (
        "Binary macro-F1 on the synthetic test split vs the real-world split, for original text (O) and ASR "
        "transcripts (T), from the dedicated run whose train/dev pool excludes the truthful negatives. Bold: the "
        "best detector of a row, per input. Counts and intervals: table4_realworld.csv."
    )
    return Table(
        "paper_table4",
        cols,
        rows,
        title="Table 4: Synthetic test vs real-world split (binary macro-F1)",
        notes=(note,),
        bold="best",
        empty="no real-world runs yet: run `halluscope build realworld RUN "
        "--fakes FILE` then `halluscope detect RUN --detector ... --input all -o realworld=true`",
    )


def table5(t5: list[dict]) -> Table:
    """The 2 x 2 provenance x veracity matrix per detector (Russian original text first): rows Human and LLM,
    columns Truthful and False, each the share flagged 'hallucinated'."""
    rows = []
    order = sorted(t5, key=lambda r: (r["language"] != "ru", r["input"] != "text", r["language"], r["input"]))
    for r in order:
        for prov in ("human", "llm"):
            rows.append(
                {
                    "detector": r["detector"],
                    "language": _name(r["language"]),
                    "input": "O" if r["input"] == "text" else "T",
                    "provenance": "Human" if prov == "human" else "LLM",
                    "truthful": r.get(f"{prov}/truthful"),
                    "false": r.get(f"{prov}/false"),
                    "n_truthful": r.get(f"{prov}/truthful_n"),
                    "n_false": r.get(f"{prov}/false_n"),
                }
            )
    cols = [
        ("detector", "Detector"),
        ("language", "Lang"),
        ("input", "Input"),
        ("provenance", "Provenance"),
        ("truthful", "Truthful"),
        ("false", "False"),
        ("n_truthful", "n Truthful"),
        ("n_false", "n False"),
    ]
    note = (
        "Fraction of items predicted 'hallucinated'. Human/Truthful = truthful negatives of the real-world split; "
        "Human/False = fact-checked fakes; LLM/Truthful = faithful LLM rewrites of the same articles; LLM/False = "
        "synthetic hallucinations (test split)."
    )
    return Table(
        "paper_table5",
        cols,
        rows,
        title="Table 5: Provenance x veracity",
        notes=(note,),
        empty="no real-world runs yet (Table 4 says how); LLM/Truthful needs 'build realworld --faithful "
        "openai/<model>'",
    )


def table7(t7: list[dict]) -> Table:
    """Rows ASR system; WER and CER per language; the lowest WER of each language bold (seed 000 Table 7)."""
    systems = list(dict.fromkeys(r["asr"] for r in t7))
    langs = _langs(list({r["language"] for r in t7}))
    by = {(r["asr"], r["language"]): r for r in t7}
    rows = []
    for s in systems:
        row: dict = {"asr": s}
        for lang in langs:
            r = by.get((s, lang), {})
            row[f"{lang}_wer"], row[f"{lang}_cer"] = r.get("wer"), r.get("cer")
        rows.append(row)
    for lang in langs:
        vals = [r[f"{lang}_wer"] for r in rows if r[f"{lang}_wer"] is not None]
        for r in rows:
            if len(vals) > 1 and r[f"{lang}_wer"] == min(vals):
                r.setdefault("best", []).append(f"{lang}_wer")
    cols = [("asr", "ASR system")]
    for lang in langs:
        cols += [(f"{lang}_wer", f"{_name(lang)} WER"), (f"{lang}_cer", f"{_name(lang)} CER")]
    note = (
        "Corpus-level WER/CER on identical audio after App. A.4 normalisation. Bold: the lowest WER per language. "
        "Add systems with 'build spoken ... --compare-asr SPEC'."
    )
    return Table("paper_table7", cols, rows, title="Table 7: ASR systems on the same audio", notes=(note,), bold="best")


def table8(detection: list[dict], cells: list[dict]) -> Table:
    """Models and the inputs each was evaluated on in this run (seed 000 Table 8's modality support)."""
    seen: dict[str, dict] = {}
    for r in detection:
        m = seen.setdefault(
            r["detector"],
            {"model": r["detector"], "family": "fine-tuned / trained", "O": False, "T": False, "A": False},
        )
        m[r["split"]] = True
    for c in cells:
        m = seen.setdefault(
            c["model"], {"model": c["model"], "family": "zero-shot decoder", "O": False, "T": False, "A": False}
        )
        if c.get("input") in m:
            m[c["input"]] = True
    cols = [("model", "Model"), ("family", "Family"), ("O", "Text (O)"), ("T", "Transcript (T)"), ("A", "Audio (A)")]
    return Table(
        "paper_table8",
        cols,
        list(seen.values()),
        title="Table 8: Models and the inputs evaluated",
        empty="no detector runs yet",
    )


def table9(agreement: list[dict]) -> Table:
    rows = [
        {
            "judges": f"{r['judge_a']} / {r['judge_b']}",
            "dimension": r["dimension"],
            "kappa": r.get("kappa_quadratic"),
            "rho": r.get("spearman_rho"),
            "within_one": r.get("within_one"),
            "n": r.get("n"),
        }
        for r in agreement
    ]
    rows.sort(key=lambda r: (r["judges"], DIMS.index(r["dimension"]) if r["dimension"] in DIMS else len(DIMS)))
    cols = [
        ("judges", "Judges"),
        ("dimension", "Dim"),
        ("kappa", "\u03ba (quadratic)"),
        ("rho", "Spearman \u03c1"),
        ("within_one", "Within 1"),
        ("n", "n"),
    ]
    return Table(
        "paper_table9",
        cols,
        rows,
        title="Table 9: Cross-judge agreement per dimension",
        empty="no judges yet: run `halluscope build judge RUN --judge A --judge B`",
    )


def table10(judge: str, quality: list[dict]) -> Table:
    tord = {"contradiction": 0, "fabrication": 1, "context_inconsistency": 2}
    sord = {"mild": 0, "moderate": 1, "severe": 2}
    rows = sorted(
        (dict(r) for r in quality),
        key=lambda r: (
            tord.get(r.get("type"), 9),
            sord.get(r.get("severity"), 9),
            LANG_ORDER.index(r["language"]) if r.get("language") in LANG_ORDER else 9,
        ),
    )
    for r in rows:
        r["language"] = _name(str(r.get("language")))
    cols = [("type", "Type"), ("severity", "Severity"), ("language", "Lang"), *[(d, d) for d in DIMS], ("n", "n")]
    return Table(
        "paper_table10",
        cols,
        rows,
        title=f"Table 10: Mean {judge} scores by type, severity and language",
        notes=(
            "Five-point ordinal scale, Very Low (1) to Very High (5); a dimension a type does not rate is "
            "'-'. Means are descriptive only.",
        ),
    )


def paper_tables(data: object, sections: Sequence[Section]) -> list[Table]:
    """Tables 1-5 always (an empty one names the command that fills it), 7-10 where the run has their data."""
    cells = _rows(sections, "zeroshot_cells")
    out = [
        table1(data.dataset, _rows(sections, "realworld_split")),  # type: ignore[attr-defined]
        table2(data.detection),  # type: ignore[attr-defined]
        table3(cells),
        table4(_rows(sections, "table4_realworld")),
        table5(_rows(sections, "table5_provenance")),
    ]
    if data.table7:  # type: ignore[attr-defined]
        out.append(table7(data.table7))  # type: ignore[attr-defined]
    if data.detection or cells:  # type: ignore[attr-defined]
        out.append(table8(data.detection, cells))  # type: ignore[attr-defined]
    if agreement := _rows(sections, "table9_agreement"):
        out.append(table9(agreement))
    for s in sections:  # the first judge's Table 10 (the paper reports Claude's)
        t10 = next((t for t in s.tables if t.id.startswith("table10_")), None)
        if t10 is not None and t10.rows:
            out.append(table10(t10.title.removeprefix("Table 10: mean ratings by "), t10.rows))
            break
    return out


def paper_section(data: object, sections: Sequence[Section]) -> Section:
    tables = paper_tables(data, sections)
    intro = (
        "The paper's tables in its layouts (row and column order, best cells bold), also as LaTeX, HTML, CSV and "
        "JSON in report/paper/; the long forms above stay in their CSVs."
    )
    return Section(SECTION_TITLE, [intro, *tables])


def paper_sections(sections: Sequence[Section]) -> list[Section]:
    """The finisher of every report (report/sections.py FINISHERS): the paper's tables from the spoken core
    section's own tables and the others'; none for a run without a spoken build."""
    from types import SimpleNamespace

    from halluscope.spoken.report.spoken import TITLE

    core = next((s for s in sections if s.title == TITLE), None)
    if core is None:
        return []
    data = SimpleNamespace(
        dataset=core.rows("table1_dataset"),
        detection=core.rows("detection_long"),
        table7=core.rows("table7_asr_systems"),
    )
    return [paper_section(data, sections)]


def write_paper_tables(out: Path, sections: Sequence[Section]) -> list[Path]:
    """Every paper table of the report as ID.md, ID.csv, ID.tex, ID.html and ID.json in ``out``."""
    tables = [t for s in sections if s.title == SECTION_TITLE for t in s.tables]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for t in tables:
        written += [
            atomic_write(out / f"{t.id}.md", t.markdown() + "\n"),
            t.write_csv(out / f"{t.id}.csv"),
            atomic_write(out / f"{t.id}.tex", t.latex()),
            atomic_write(out / f"{t.id}.html", t.html() + "\n"),
            atomic_write(out / f"{t.id}.json", json.dumps(t.to_json(), indent=2, ensure_ascii=False)),
        ]
    return written
