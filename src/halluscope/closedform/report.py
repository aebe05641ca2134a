"""Write a closed-form report directory: Markdown + CSV tables, summary JSON and a self-contained HTML page."""

from __future__ import annotations

import base64
import csv
import html
import json
from pathlib import Path

from halluscope.closedform.plots import grouped_bars, yes_ratio_scatter
from halluscope.closedform.score import ScoreResult
from halluscope.core.fs import atomic_write

# (key, title) of the headline columns per benchmark and mode
COLUMNS: dict[tuple[str, str], list[tuple[str, str]]] = {
    ("halluaudio", "strict"): [("n", "n"), ("accuracy", "Accuracy"), ("yes_p_ratio", "Yes-p ratio"),
                               ("unrelated_ratio", "Unrelated ratio"), ("conditional_accuracy", "Cond. acc"),
                               ("false_refusal_rate", "FRR"), ("n_abstain", "abstain"),
                               ("unanswerable_abstain_rate", "invalid-audio abstain")],
    ("halluaudio", "compat"): [("n", "n"), ("accuracy", "Accuracy"), ("false_refusal_rate", "Refusal rate"),
                               ("n_refusal", "refusals")],
    ("aha", "strict"): [("n_items", "n"), ("accuracy", "Accuracy"), ("bias", "Bias FNR-FPR"),
                        ("consistency_true", "Cons. all right"), ("consistency_wrong", "Cons. all wrong")],
    ("yesno", "strict"): [("n", "n"), ("accuracy", "Accuracy"), ("precision", "Precision"), ("recall", "Recall"),
                          ("f1", "F1"), ("yes_rate", "Yes rate"), ("n_answered", "answered")],
    # the authors' evaluation.py prints percentages rounded to 2 decimals, F1 from the rounded precision and recall
    ("yesno", "compat"): [("n", "n"), ("accuracy_percent", "Accuracy %"), ("precision_percent", "Precision % (no+)"),
                          ("recall_percent", "Recall % (no+)"), ("f1_percent", "F1 % (no+)"), ("yes_rate_percent", "Yes rate %")],
}
COLUMNS[("aha", "compat")] = COLUMNS[("aha", "strict")]
SCATTER_NOTE = {
    "halluaudio": "Strict points: domains and binary subsets (yes-p ratio, conditional accuracy) and count probes; "
                  "official points: count probes (yes-pred ratio, conditional accuracy).",
    "aha": "One point per task: share of 'yes' answers and accuracy.",
    "yesno": "One point per sampling strategy: yes rate and accuracy.",
}
DIFF_COLS = [("id", "Item"), ("group", "Group"), ("reference", "Ref"), ("reply", "Reply"), ("strict", "Strict"),
             ("compat", "Official"), ("reason", "Why")]


def fmt(x: object) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def headline_rows(result: ScoreResult, mode: str) -> list[dict]:
    """One row per group (and 'all') of the given mode's metrics."""
    metrics = result.strict if mode == "strict" else result.compat
    return [{result.group_name: g, **{k: v for k, v in m.items() if not isinstance(v, dict)},
             **{f"{k}_percent": v for k, v in m.get("as_published_percent", {}).items()}} for g, m in metrics.items()]


def md_table(rows: list[dict], cols: list[tuple[str, str]]) -> str:
    if not rows:
        return "_none_"
    head = "| " + " | ".join(t for _, t in cols) + " |"
    sep = "|" + "|".join("---" for _ in cols) + "|"
    body = ["| " + " | ".join(fmt(r.get(k)).replace("|", "\\|").replace("\n", " ") for k, _ in cols) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def html_table(rows: list[dict], cols: list[tuple[str, str]]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{html.escape(t)}</th>" for _, t in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(fmt(r.get(k)))}</td>" for k, _ in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_csv(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        if keys:
            w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v for k, v in r.items()})


def img(png: bytes | None, alt: str) -> str:
    if png is None:
        return f"<p><em>{html.escape(alt)}: not enough data to plot.</em></p>"
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def scatter_points(result: ScoreResult) -> list[dict]:
    """Yes ratio and accuracy per group (and per binary subset / count probe) in both modes."""
    pts: list[dict] = []
    for mode in ("strict", "compat"):
        metrics = result.strict if mode == "strict" else result.compat
        for g, m in metrics.items():
            if result.benchmark == "halluaudio":
                if mode == "strict":
                    pts.append({"name": g, "mode": mode, "yes_ratio": m.get("yes_p_ratio"), "accuracy": m.get("conditional_accuracy")})
                if g != "all":
                    for subset, p in m.get("count_probes", {}).items():
                        pts.append({"name": subset, "mode": mode, "yes_ratio": p["yes_pred_ratio"], "accuracy": p["conditional_accuracy"]})
            elif result.benchmark == "aha":
                n = sum(m.get("classes", {}).values())
                yes = m.get("classes", {}).get("yes", 0)
                if n and g != "all" and "asr" not in g.lower():
                    pts.append({"name": g, "mode": mode, "yes_ratio": yes / n, "accuracy": m.get("accuracy")})
            else:
                pts.append({"name": g, "mode": mode, "yes_ratio": m.get("yes_rate"), "accuracy": m.get("accuracy")})
    if result.benchmark == "halluaudio":
        for row in result.tables.get("subsets", []):
            if row["kind"] == "binary":
                pts.append({"name": row["subset"], "mode": "strict", "yes_ratio": row["yes_ratio_strict"], "accuracy": row["accuracy_strict"]})
    return pts


def accuracy_bars(result: ScoreResult) -> bytes | None:
    groups = list(result.strict)
    series = {"strict": [result.strict[g].get("accuracy") for g in groups],
              "compat": [result.compat.get(g, {}).get("accuracy") for g in groups]}
    errors = None
    if result.benchmark in ("halluaudio", "yesno"):
        errors = {"strict": [tuple(result.strict[g]["ci95"]["accuracy"]) if result.strict[g]["ci95"]["accuracy"] else None for g in groups]}
    return grouped_bars(groups, series, ylabel="accuracy (strict: 95% bootstrap CI)", errors=errors)


def markdown(result: ScoreResult) -> str:
    d = result.as_dict(max_diff_rows=200)
    cmp_ = d["comparison"]
    parts = [f"# halluscope closed-form report: {result.benchmark}", f"Files: {', '.join(d['files'])}. Items: {d['n_items']}.",
             "## Strict mode (word-level extraction, spec metrics)",
             md_table(headline_rows(result, "strict"), [(result.group_name, result.group_name)] + COLUMNS[(result.benchmark, "strict")]),
             "## Compatibility mode (official scorer rules)",
             md_table(headline_rows(result, "compat"), [(result.group_name, result.group_name)] + COLUMNS[(result.benchmark, "compat")]),
             "## Extraction classes (strict)",
             md_table([{"class": k, "n": v} for k, v in d["extraction"]["classes"].items()], [("class", "class"), ("n", "n")]),
             f"## Strict vs compatible: {cmp_['n_differ']} of {cmp_['n_scored_in_both']} items scored differently",
             md_table([{"reason": k, "n": v} for k, v in cmp_["by_reason"].items()], [("reason", "reason"), ("n", "n")]),
             md_table(cmp_["rows"], DIFF_COLS),
             "\n".join(f"- {r}" for r in cmp_["rules"]) or "",
             f"## Problems in the input: {d['problems']['count']}",
             "\n".join(f"- {p}" for p in d["problems"]["items"][:500]) or "None.",
             "## Notes", "\n".join(f"- {n}" for n in d["notes"]) or "None."]
    if result.tables.get("subsets"):
        parts[6:6] = ["## Per subset", md_table(result.tables["subsets"], [("domain", "domain"), ("subset", "subset"), ("kind", "kind"),
                                                                             ("n", "n"), ("accuracy_strict", "acc strict"),
                                                                             ("accuracy_compat", "acc official"),
                                                                             ("yes_ratio_strict", "yes ratio"), ("abstain_strict", "abstain")])]
    return "\n\n".join(parts) + "\n"


def html_page(result: ScoreResult) -> str:
    d = result.as_dict(max_diff_rows=500)
    cmp_ = d["comparison"]
    g = result.group_name
    subsets = ""
    if result.tables.get("subsets"):
        subsets = "<h2>Per subset</h2>" + html_table(result.tables["subsets"], [
            ("domain", "domain"), ("subset", "subset"), ("kind", "kind"), ("n", "n"), ("accuracy_strict", "acc strict"),
            ("accuracy_compat", "acc official"), ("yes_ratio_strict", "yes ratio"), ("abstain_strict", "abstain")])
    problems = "".join(f"<li>{html.escape(p)}</li>" for p in d["problems"]["items"][:1000])
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in d["notes"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>halluscope {html.escape(result.benchmark)} report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1a202c; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.85rem; }}
th, td {{ border: 1px solid #cbd5e0; padding: 0.25rem 0.5rem; text-align: right; vertical-align: top; }}
th {{ background: #edf2f7; }} td:first-child, th:first-child {{ text-align: left; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>halluscope closed-form report: {html.escape(result.benchmark)}</h1>
<p>Files: <code>{html.escape(", ".join(d["files"]))}</code>; {d["n_items"]} items; headline mode: <b>{result.mode}</b>.</p>
<h2>Strict mode</h2>
<p>Word-level answer extraction; refusals, uncertainty, ambiguous and unrelated replies are counted apart and never read as yes or no.</p>
{html_table(headline_rows(result, "strict"), [(g, g)] + COLUMNS[(result.benchmark, "strict")])}
<h2>Compatibility mode</h2>
<p>The official scorers' substring rules and denominators, to compare with published numbers.</p>
{html_table(headline_rows(result, "compat"), [(g, g)] + COLUMNS[(result.benchmark, "compat")])}
<h2>Accuracy per {html.escape(g)}</h2>
{img(accuracy_bars(result), "accuracy per group, strict vs compat")}
<h2>Yes ratio against accuracy</h2>
<p>A high yes ratio is a bias, not skill. {html.escape(SCATTER_NOTE.get(result.benchmark, ""))}
Dashed line: accuracy equal to the yes ratio.</p>
{img(yes_ratio_scatter(scatter_points(result)), "yes ratio vs accuracy")}
{subsets}
<h2>Extraction classes (strict)</h2>
{html_table([{"class": k, "n": v} for k, v in d["extraction"]["classes"].items()], [("class", "class"), ("n", "n")])}
<h2>Strict vs compatible: {cmp_["n_differ"]} of {cmp_["n_scored_in_both"]} items scored differently</h2>
{html_table([{"reason": k, "n": v} for k, v in cmp_["by_reason"].items()], [("reason", "reason"), ("n", "n")])}
{html_table(cmp_["rows"], DIFF_COLS)}
{"<p>The figures also differ by definition:</p><ul>" + "".join(f"<li>{html.escape(r)}</li>" for r in cmp_["rules"]) + "</ul>" if cmp_["rules"] else ""}
<h2>Problems in the input: {d["problems"]["count"]}</h2>
<ul>{problems or "<li>None.</li>"}</ul>
<h2>Notes</h2>
<ul>{notes}</ul>
</body></html>
"""


def write_report(result: ScoreResult, out_dir: str | Path) -> Path:
    """Write tables.md, metrics_strict.csv, metrics_compat.csv, items.csv, diff.csv, problems.csv, summary.json
    and report.html into ``out_dir``; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables.md").write_text(markdown(result), encoding="utf-8")
    write_csv(out / "metrics_strict.csv", headline_rows(result, "strict"))
    write_csv(out / "metrics_compat.csv", headline_rows(result, "compat"))
    write_csv(out / "items.csv", [i.as_row() for i in result.items])
    write_csv(out / "diff.csv", [{**i.as_row(), "reason": i.category} for i in result.items if i.differs])
    write_csv(out / "problems.csv", [p.model_dump() for p in result.loaded.problems])
    if result.tables.get("subsets"):
        write_csv(out / "subsets.csv", result.tables["subsets"])
    (out / "summary.json").write_text(json.dumps(result.as_dict(max_diff_rows=1000), indent=2, ensure_ascii=False), encoding="utf-8")
    atomic_write(out / "report.html", html_page(result))  # unique temp name: two writers never collide
    return out / "report.html"
