"""How a scorer's result is shown: its table or JSON on the console and its --report folder (closed-form results,
and the published-set scorers' metric dicts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from halluscope.cli.score_reader import print_reader, reader_report
from halluscope.core.stages import console


def emit(result, *, json_out: bool, report: Optional[Path], max_diff_rows: int, reader=None) -> None:
    from halluscope.closedform.report import COLUMNS, headline_rows, write_score_report

    if report is not None:
        view_page = reader_report(result, reader, report)
        path = write_score_report(result, report, view_page=view_page)
        console.print(f"report: {path}")
    data = result.as_dict(max_diff_rows=max_diff_rows)
    if data["problems"]["count"]:
        console.print(f"[yellow]{data['problems']['count']} input problem(s)[/]; those rows are not scored:")
        for p in data["problems"]["items"][:10]:
            console.print(f"  {p}", highlight=False, markup=False)
        if data["problems"]["count"] > 10:
            console.print(f"  ... and {data['problems']['count'] - 10} more (see --json or --report)")
    if json_out:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    cols = COLUMNS[(result.benchmark, result.mode)]
    table = Table(result.group_name, *[t for _, t in cols], title=f"{result.benchmark} ({result.mode} mode)")
    for row in headline_rows(result, result.mode):
        table.add_row(
            str(row[result.group_name]),
            *[
                f"{row.get(k):.3f}"
                if isinstance(row.get(k), float)
                else ("-" if row.get(k) is None else str(row.get(k)))
                for k, _ in cols
            ],
        )
    console.print(table)
    cmp_ = data["comparison"]
    console.print(data["reply_reader"]["line"], highlight=False, markup=False)  # its version, what it could not read
    console.print(f"strict vs compatible: {cmp_['n_differ']} of {cmp_['n_scored_in_both']} items scored differently")
    for reason, n in cmp_["by_reason"].items():
        console.print(f"  {n:5d}  {reason}", highlight=False, markup=False)
    print_reader(result.tables)
    if cmp_["rules"]:
        console.print("the figures also differ by definition:")
        for rule in cmp_["rules"]:
            console.print(f"  - {rule}", highlight=False, markup=False)


def metrics_report(result: dict, report: Optional[Path], groups: str) -> None:
    """--report DIR of a published-set scorer (AudioTrust, AVHBench): figures, reader tables, problems, items."""
    if report is not None:
        from halluscope.closedform.report import write_metrics_report

        console.print(f"report: {write_metrics_report(result, report, groups=groups)}")


def print_metrics(result: dict, key: str, json_out: bool) -> None:
    """A published-set scorer's result: JSON, or its first problems and one line per task/prompt of ``key``."""
    if json_out:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    problems = result["problems"]
    if problems:
        console.print(f"{len(problems)} input problem(s); those rows are not scored:", highlight=False, markup=False)
        for kind, n in result.get("problem_totals", {}).items():
            console.print(f"  {n:6d}  {kind}", highlight=False, markup=False)
        for p in problems[:10]:
            console.print(f"  {p}", highlight=False, markup=False)
        if len(problems) > 10:
            console.print(f"  ... and {len(problems) - 10} more (see --json)", highlight=False, markup=False)
    if "reply_reader" in result:  # the strict reader's version and the replies it could not read
        console.print(result["reply_reader"]["line"], highlight=False, markup=False)
    for name, m in result[key].items():
        console.print(
            f"{name}: " + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in m.items()),
            highlight=False,
            markup=False,
        )
