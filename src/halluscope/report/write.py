"""Write the report directory: Markdown + CSV tables, headline JSON and a self-contained HTML page."""

from __future__ import annotations

import base64
import csv
import html
import json
from pathlib import Path

from halluscope.core.fs import atomic_path, atomic_write
from halluscope.report.plots import asr_vs_degradation_plot, o_vs_t_plot, wer_cer_plot
from halluscope.report.speech import AUDIO_COLS, AUDIO_NOTE, TABLE7_COLS, TABLE7_NOTE
from halluscope.report.tables import TYPE_ABBR, ReportData, o_vs_t
from halluscope.view.links import asr_link, dataset_link, table2_link


def fmt(x: object, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    if isinstance(x, (list, tuple)) and len(x) == 2 and all(isinstance(v, float) for v in x):
        return f"[{x[0]:.2f}, {x[1]:.2f}]"
    return str(x)


def md_table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    head = "| " + " | ".join(title for _, title in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(fmt(r.get(key)) for key, _ in columns) + " |" for r in rows]
    return "\n".join([head, sep, *body])


DATASET_COLS = [("language", "Lang"), ("original", "Orig"), ("hallucinated", "Halluc"),
                *[(abbr, abbr) for abbr in TYPE_ABBR.values()], ("mild", "Mild"), ("moderate", "Moderate"),
                ("severe", "Severe"), ("total", "Total"), ("audio_minutes", "Audio min"), ("transcripts", "Transcripts")]
ASR_COLS = [("language", "Lang"), ("wer", "WER"), ("cer", "CER"), ("n", "n"), ("ref_words", "ref words"),
            ("rtf", "ASR time / audio time"), ("cleaner", "cleaner")]
ASR_NOTE = ("Corpus-level WER/CER after App. A.4's cleaning, identical across languages: lowercase; punctuation, quotes "
            "and brackets removed as characters (bracketed words are kept); noise tags ([music], <unk>) and timestamps "
            "removed; hyphens to spaces; digits removed (section 3.3). 'cleaner' names what cleaned each figure's text: "
            "rules = the rule-based cleaner.")
TABLE2_COLS = [("detector", "Detector"), ("language", "Lang"), ("task", "Task"), ("n_test", "n test"),
               ("O_acc", "O Acc"), ("O_f1", "O F1"), ("O_f1_ci", "O F1 95% CI"), ("T_acc", "T Acc"), ("T_f1", "T F1"),
               ("T_f1_ci", "T F1 95% CI"), ("majority_acc", "Maj Acc"), ("majority_f1", "Maj F1"), ("delta_f1", "F1 O-T")]


def write_csv(path: Path, rows: list[dict], columns: list[str] | None = None) -> None:
    """One CSV, written atomically (a unique temp name, then rename); with ``columns``, a header even when empty."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
        if not rows and not columns:
            return
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else list(columns or []))
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()})


def markdown(data: ReportData) -> str:
    table2 = o_vs_t(data.detection)
    parts = [
        f"# halluscope report: {data.run_dir}",
        "## Table 1: dataset summary",
        "Type: C = contradiction, F = fabrication, I = context inconsistency.",
        md_table(data.dataset, DATASET_COLS),
        "## ASR error (corpus level, seed 000 section 3.3 / App. A.4 normalisation)",
        ASR_NOTE,
        md_table(data.asr, ASR_COLS),
        *(["## Table 7: ASR systems on the same audio", TABLE7_NOTE, md_table(data.table7, TABLE7_COLS)]
          if len({r["asr"] for r in data.table7}) > 1 else []),
        "## Audio durations", AUDIO_NOTE, md_table(data.audio, AUDIO_COLS),
        "## Table 2: detection, original text (O) vs ASR transcripts (T)",
        "Accuracy and macro-F1 on the test split (split by source article); unparsable predictions count as errors. "
        "Maj = majority-class baseline from the training split. CI = percentile bootstrap over test items.",
        md_table(table2, TABLE2_COLS) if table2 else "_no detection runs yet: run `halluscope detect`_",
        "## Failures",
        (f"{len(data.failures)} item(s) failed; {data.excluded} sample(s) have no transcript and are excluded "
         "from O and T alike.") if data.failures or data.excluded else "No item failed.",
    ]
    if data.failures:
        parts.append(md_table(data.failures[:200], [("stage", "Stage"), ("item_id", "Item"), ("reason", "Reason")]))
    for section in data.sections:
        parts += [f"## {section.title}", section.markdown]
    return "\n\n".join(parts) + "\n"


def img(png: bytes | None, alt: str) -> str:
    if png is None:
        return f"<p><em>{html.escape(alt)}: not enough data to plot.</em></p>"
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def html_table(rows: list[dict], columns: list[tuple[str, str]], link=None) -> str:  # type: ignore[no-untyped-def]
    """``link(row, key)``: the href of a cell (the viewer's items behind it, halluscope.view.links) or None."""
    head = "".join(f"<th>{html.escape(t)}</th>" for _, t in columns)

    def cell(r: dict, k: str) -> str:
        text = html.escape(fmt(r.get(k)))
        href = link(r, k) if link is not None else None
        return f'<td><a href="{html.escape(href)}">{text}</a></td>' if href else f"<td>{text}</td>"

    body = "".join("<tr>" + "".join(cell(r, k) for k, _ in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(data: ReportData) -> str:
    table2 = o_vs_t(data.detection)
    langs = data.languages
    manifest = html.escape(json.dumps(data.manifest, indent=2, ensure_ascii=False))
    failures = (html_table(data.failures[:500], [("stage", "Stage"), ("item_id", "Item"), ("reason", "Reason")])
                if data.failures else "<p>No item failed.</p>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>halluscope report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1a202c; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }}
th, td {{ border: 1px solid #cbd5e0; padding: 0.25rem 0.5rem; text-align: right; }}
th {{ background: #edf2f7; }} td:first-child, th:first-child {{ text-align: left; }}
img {{ max-width: 100%; }} pre {{ background: #f7fafc; padding: 1rem; overflow-x: auto; font-size: 0.8rem; }}
</style></head><body>
<h1>halluscope report</h1>
<p>Run directory: <code>{html.escape(str(data.run_dir))}</code></p>
<h2>Table 1: dataset summary</h2>
<p>Type: C = contradiction, F = fabrication, I = context inconsistency. Table cells link to the items behind them
in the viewer exported beside this report (<code>halluscope view RUN --export RUN/view</code>).</p>
{html_table(data.dataset, DATASET_COLS, dataset_link)}
<h2>ASR error</h2>
<p>{html.escape(ASR_NOTE)}</p>
{html_table(data.asr, ASR_COLS, asr_link)}
{img(wer_cer_plot(data.asr), "WER and CER by language")}
{(f"<h2>Table 7: ASR systems on the same audio</h2><p>{html.escape(TABLE7_NOTE)}</p>" + html_table(data.table7, TABLE7_COLS, asr_link)) if len({r["asr"] for r in data.table7}) > 1 else ""}
<h2>Audio durations</h2>
<p>{html.escape(AUDIO_NOTE)}</p>
{html_table(data.audio, AUDIO_COLS)}
<h2>Table 2: detection on original text (O) vs transcripts (T)</h2>
<p>Test split by source article; macro-F1 with 95% bootstrap intervals; dashed lines: majority-class baseline.</p>
{html_table(table2, TABLE2_COLS, table2_link) if table2 else "<p>No detection runs yet.</p>"}
{img(o_vs_t_plot(table2, langs), "O vs T macro-F1 by language and task")}
<h2>ASR error against O&rarr;T degradation</h2>
{img(asr_vs_degradation_plot(data.asr, table2, langs), "WER vs O-T macro-F1 drop")}
<h2>Failures</h2>
<p>{len(data.failures)} failed item(s); {data.excluded} sample(s) without transcript, excluded from O and T alike.</p>
{failures}
{"".join(f"<h2>{html.escape(s.title)}</h2>{s.html}" for s in data.sections)}
<h2>Manifest</h2>
<pre>{manifest}</pre>
</body></html>
"""


def write_report(data: ReportData) -> Path:
    out = data.run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "tables.md", markdown(data))
    write_csv(out / "table1_dataset.csv", data.dataset)
    write_csv(out / "asr_wer_cer.csv", data.asr)
    write_csv(out / "table7_asr_systems.csv", data.table7)
    write_csv(out / "audio_durations.csv", data.audio)
    write_csv(out / "table2_detection.csv", o_vs_t(data.detection))
    write_csv(out / "detection_long.csv", data.detection)
    write_csv(out / "failures.csv", data.failures)
    for section in data.sections:
        for name, rows in section.csvs.items():
            write_csv(out / name, rows)
    atomic_write(out / "headline.json", json.dumps(data.headline(), indent=2, ensure_ascii=False))
    return atomic_write(out / "report.html", html_page(data))
