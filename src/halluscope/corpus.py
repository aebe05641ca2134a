"""Load source articles from JSONL, CSV or parquet, or the embedded demo corpus.

Schema (one article per row): id (str, unique), language (en | ru | kk; 'kz' is read as 'kk'),
text (non-empty), and optional url, outlet, date (ISO 8601), topic. Other columns are reported and ignored.
"""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path
from typing import Any

from halluscope.errors import InputError
from halluscope.records import LANGUAGES, Article

DEMO = "demo"
REQUIRED = ("id", "language", "text")
OPTIONAL = ("url", "outlet", "date", "topic")
LANGUAGE_ALIASES = {"kz": "kk", "eng": "en", "rus": "ru", "kaz": "kk"}
MAX_REPORTED = 20


def demo_path() -> Path:
    return Path(str(resources.files("halluscope") / "data" / "demo_corpus.jsonl"))


def _rows(path: Path) -> list[tuple[int, Any]]:
    """Raw rows with 1-based row numbers as a user would count them in the file."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows: list[tuple[int, Any]] = []
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rows.append((lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"malformed JSON ({exc.msg} at column {exc.colno})",
                        file=str(path), row=lineno,
                        fix="each line must be one JSON object, e.g. {\"id\": \"a1\", \"language\": \"en\", \"text\": \"...\"}",
                    ) from None
        return rows
    if suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None:
                raise InputError("empty CSV: no header row", file=str(path), row=1,
                                 fix="the first row must name the columns: id,language,text[,url,outlet,date,topic]")
            # row 1 is the header, so data rows start at 2
            return [(n, row) for n, row in enumerate(reader, start=2)]
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise InputError(f"cannot read parquet ({exc})", file=str(path),
                             fix="check that the file is a complete parquet file") from None
        return [(n, row) for n, row in enumerate(table.to_pylist(), start=1)]
    raise InputError(
        f"unsupported corpus format '{suffix or '(no extension)'}'", file=str(path),
        fix="use .jsonl, .csv or .parquet (see 'halluscope build spoken --help' for the schema)",
    )


def load_articles(path: str | Path, *, languages: tuple[str, ...] | None = None) -> list[Article]:
    """Validate every row and return articles; all problems are reported together, nothing is half-loaded."""
    path = demo_path() if str(path) == DEMO else Path(path)
    if not path.exists():
        raise InputError("file not found", file=str(path), fix="pass an existing .jsonl/.csv/.parquet file or 'demo'")
    problems: list[str] = []
    articles: list[Article] = []
    seen: dict[str, int] = {}
    unknown: set[str] = set()

    def problem(row: int, field: str | None, msg: str) -> None:
        problems.append(str(InputError(msg, row=row, field=field)))

    for row, raw in _rows(path):
        if not isinstance(raw, dict):
            problem(row, None, f"expected an object with fields {REQUIRED}, got {type(raw).__name__}")
            continue
        unknown |= set(raw) - set(REQUIRED) - set(OPTIONAL)
        values: dict[str, Any] = {}
        ok = True
        for field in REQUIRED:
            value = raw.get(field)
            if value is None or (isinstance(value, str) and not value.strip()):
                problem(row, field, "missing or empty (required)")
                ok = False
                continue
            values[field] = str(value).strip()
        if "language" in values:
            lang = LANGUAGE_ALIASES.get(values["language"].lower(), values["language"].lower())
            if lang not in LANGUAGES:
                problem(row, "language", f"unsupported language code '{values['language']}'; expected one of {', '.join(LANGUAGES)}")
                ok = False
            values["language"] = lang
        if "id" in values:
            if values["id"] in seen:
                problem(row, "id", f"duplicate id '{values['id']}' (first seen at row {seen[values['id']]})")
                ok = False
            else:
                seen[values["id"]] = row
        if not ok:
            continue
        for field in OPTIONAL:
            value = raw.get(field)
            if value is not None and str(value).strip():
                values[field] = str(value).strip()
        articles.append(Article(**values))
    if problems:
        shown = problems[:MAX_REPORTED]
        more = f"\n... and {len(problems) - MAX_REPORTED} more" if len(problems) > MAX_REPORTED else ""
        raise InputError(
            f"{len(problems)} problem(s) in the corpus:\n  " + "\n  ".join(shown) + more,
            file=str(path),
            fix="required fields are id, language (en|ru|kk), text; see the README section 'Corpus schema'",
        )
    if not articles:
        raise InputError("the corpus has no articles", file=str(path), fix="add at least one row")
    if unknown:
        from halluscope.stages import console

        console.print(f"[yellow]note:[/] {path}: ignoring unknown column(s) {sorted(unknown)}")
    if languages is not None:
        articles = [a for a in articles if a.language in languages]
    return articles
