"""One table type for every report: columns, rows, title, notes and number formats, rendered from one object to
Markdown, CSV, LaTeX (booktabs) and HTML, and to JSON rows ('report --json').

A ``Table`` is data plus presentation: ``rows`` are plain dicts (the CSV and JSON keep every key of every row,
the Markdown/HTML/LaTeX views show the declared ``columns``). ``id`` names the table across a report: the CSV
file stem, the JSON key and the HTML element id. A ``Figure`` is a PNG with its alt text; ``None`` bytes say
"not enough data to plot".
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from halluscope.core.fs import atomic_write

Link = Callable[[dict, str], "str | None"]  # (row, key) -> href of the cell (the viewer's items behind it) or None


def fmt(x: object, digits: int = 3) -> str:
    """The one cell format: None '-', bool yes/no, floats to ``digits``, a (low, high) interval as '[a, b]'."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    if isinstance(x, (list, tuple)) and len(x) == 2 and all(isinstance(v, float) for v in x):
        return f"[{x[0]:.2f}, {x[1]:.2f}]"
    return str(x)


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    digits: int = 3  # decimals of a float cell

    def text(self, row: dict) -> str:
        return fmt(row.get(self.key), self.digits)


def _column(c: Column | tuple) -> Column:
    return c if isinstance(c, Column) else Column(*c)


def _plain(v: object) -> object:
    """A JSON value: tuples become lists, recursively."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


LATEX_SPECIAL = re.compile(r"([&%$#_{}])")
LATEX_WORDS = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex(text: str) -> str:
    text = "".join(LATEX_WORDS.get(ch, ch) for ch in text)
    return LATEX_SPECIAL.sub(r"\\\1", text)


@dataclass
class Table:
    """``columns``: (key, title) pairs or Columns; ``empty``: what the views print when there is no row (the CSV
    still gets its header); ``shown``: False for data-only tables (CSV and JSON, not on the page); ``limit``: the
    Markdown and HTML views show at most this many rows and say where the rest are (the CSV and JSON hold all)."""

    id: str
    columns: list
    rows: list[dict]
    title: str = ""
    notes: tuple[str, ...] | list[str] = ()
    empty: str = "none"
    link: Link | None = None
    shown: bool = True
    limit: int | None = None
    bold: str | None = None  # a row key holding the column keys shown bold in that row (e.g. the best F1 of a row)
    cols: list[Column] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.cols = [_column(c) for c in self.columns]
        self.notes = tuple(n for n in self.notes if n)

    # -- data views
    def fields(self) -> list[str]:
        """Every key of every row in first-seen order; the declared columns when there is no row."""
        if not self.rows:
            return [c.key for c in self.cols]
        return list(dict.fromkeys(k for r in self.rows for k in r))

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "notes": list(self.notes),
            "columns": [{"key": c.key, "title": c.title} for c in self.cols],
            "rows": _plain(self.rows),
        }

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.fields(), lineterminator="\r\n")
        w.writeheader()
        for r in self.rows:
            w.writerow(
                {
                    k: json.dumps(_plain(v), ensure_ascii=False) if isinstance(v, (list, tuple, dict)) else v
                    for k, v in r.items()
                }
            )
        return buf.getvalue()

    def write_csv(self, path: Path) -> Path:
        return atomic_write(path, self.csv())

    # -- presentation views
    def _bold(self, row: dict, col: Column) -> bool:
        return self.bold is not None and row.get(col.key) is not None and col.key in (row.get(self.bold) or ())

    def _view(self) -> tuple[list[dict], list[str]]:
        """The rows the views show, and the notes (with one saying what was left out)."""
        if self.limit is None or len(self.rows) <= self.limit:
            return self.rows, list(self.notes)
        return self.rows[: self.limit], [
            *self.notes,
            f"First {self.limit} of {len(self.rows)} rows; all in {self.id}.csv.",
        ]

    def markdown(self, heading: str | None = "###") -> str:
        """Title as a heading of the given level (None: none), notes as paragraphs, then the table."""
        rows, notes = self._view()
        parts = [f"{heading} {self.title}"] if heading and self.title else []
        parts += notes
        if not rows:
            parts.append(f"_{self.empty}_")
        else:

            def cell(c: Column, r: dict) -> str:
                text = c.text(r).replace("|", "\\|").replace("\n", " ")
                return f"**{text}**" if self._bold(r, c) else text

            parts.append(
                "\n".join(
                    [
                        "| " + " | ".join(c.title for c in self.cols) + " |",
                        "|" + "|".join("---" for _ in self.cols) + "|",
                        *("| " + " | ".join(cell(c, r) for c in self.cols) + " |" for r in rows),
                    ]
                )
            )
        return "\n\n".join(parts)

    def html(self, heading: str | None = "h3") -> str:
        rows, notes = self._view()
        parts = [f"<{heading}>{html.escape(self.title)}</{heading}>"] if heading and self.title else []
        parts += [f"<p>{html.escape(n)}</p>" for n in notes]
        if not rows:
            parts.append(f'<p id="{html.escape(self.id)}"><em>{html.escape(self.empty)}</em></p>')
            return "".join(parts)

        def cell(r: dict, c: Column) -> str:
            text = html.escape(c.text(r))
            text = f"<strong>{text}</strong>" if self._bold(r, c) else text
            href = self.link(r, c.key) if self.link is not None else None
            return f'<td><a href="{html.escape(href)}">{text}</a></td>' if href else f"<td>{text}</td>"

        head = "".join(f"<th>{html.escape(c.title)}</th>" for c in self.cols)
        body = "".join("<tr>" + "".join(cell(r, c) for c in self.cols) + "</tr>" for r in rows)
        parts.append(f'<table id="{html.escape(self.id)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
        return "".join(parts)

    def latex(self) -> str:
        """A booktabs table: text columns left-aligned, number columns right; None prints as '--'; the caption
        is the title and the notes; the label is tab:ID."""

        def cell(c: Column, r: dict) -> str:
            text = "--" if r.get(c.key) is None else _latex(c.text(r))
            return f"\\textbf{{{text}}}" if self._bold(r, c) else text

        align = "".join(
            "l"
            if all(isinstance(r.get(c.key), str) or r.get(c.key) is None for r in self.rows)
            and any(isinstance(r.get(c.key), str) for r in self.rows)
            else "r"
            for c in self.cols
        )
        head = " & ".join(_latex(c.title) for c in self.cols)
        body = "".join(" & ".join(cell(c, r) for c in self.cols) + " \\\\\n" for r in self.rows)
        caption = " ".join([f"{self.title}." if self.title else "", *self.notes]).strip()
        return (
            f"\\begin{{table}}[t]\n\\centering\n\\small\n\\begin{{tabular}}{{{align}}}\n\\toprule\n{head} \\\\\n"
            f"\\midrule\n{body}\\bottomrule\n\\end{{tabular}}\n\\caption{{{_latex(caption)}}}\n"
            f"\\label{{tab:{self.id}}}\n\\end{{table}}\n"
        )


@dataclass
class Figure:
    """A plot of a section: PNG bytes (None: not enough data) with its alt text; ``file``: also saved as this PNG."""

    png: bytes | None
    alt: str
    file: str | None = None

    def markdown(self) -> str:
        if self.png is None:
            return f"_{self.alt}: not enough data to plot._"
        return f"![{self.alt}]({self.file})" if self.file else ""

    def html(self) -> str:
        if self.png is None:
            return f"<p><em>{html.escape(self.alt)}: not enough data to plot.</em></p>"
        return f'<img alt="{html.escape(self.alt)}" src="data:image/png;base64,{base64.b64encode(self.png).decode()}">'


def tables_of(blocks: Iterable[object]) -> list[Table]:
    return [b for b in blocks if isinstance(b, Table)]
