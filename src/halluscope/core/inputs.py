"""One reader for every file halluscope takes: rows (JSONL, CSV, TSV, parquet), a JSON document, or plain text.

- Encoding: UTF-8 with or without a byte-order mark, LF or CRLF line ends. Anything else is refused with the file,
  line, byte offset and the likely encoding (charset-normalizer's guess among the legacy encodings of en/ru/kk text).
- Binary files (NUL bytes, or the signature of a known binary format) are refused before parsing.
- Types: every declared field is checked. A text field takes a string only: 42, true, a list or an object is a
  problem naming file, row, field, what was expected and what came. CSV/TSV cells are always text.
- Limits: ``HALLUSCOPE_MAX_FIELD_BYTES`` (default 1 MB of UTF-8 per text field) and ``HALLUSCOPE_MAX_FILE_BYTES``
  (default 1 GB per file); both take a plain number of bytes or K/M/G (x1000) and KiB/MiB/GiB (x1024) suffixes.
- Problem policy: a problem with the whole file (not found, a directory, binary, unsupported format, too large,
  a missing column, a headerless CSV, unreadable parquet or JSON document) raises InputError at once; row and field
  problems are collected into a ``Problems`` and raised together (``InputProblems``: the first 20 listed, the rest
  counted). A caller that passes its own ``Problems`` gets only the clean rows back and decides (the corpus loaders
  add their own checks and raise; nothing from a file with problems is loaded).
- Row numbers: JSONL: the line; CSV/TSV: the line the record starts on (the header is line 1); parquet: the data
  row counted from 1.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from halluscope.core.errors import InputError, Problems
from halluscope.core.textfile import (  # noqa: F401 - re-exported: one import path for every reader
    BOM,
    DEFAULT_FIELD_BYTES,
    DEFAULT_FILE_BYTES,
    FIELD_ENV,
    FILE_ENV,
    LINES_ENV,
    SNIFF_BYTES,
    Limits,
    Lines,
    check_file,
    guess_encoding,
    open_bytes,
    parse_json,
    read_json,
    read_text,
    sniff,
)

Format = Literal["jsonl", "csv", "tsv", "parquet"]
FieldType = Literal["text", "bool", "scalar"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "tsv", "parquet")
SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
TRUE = frozenset({"1", "true", "yes", "y", "t"})
FALSE = frozenset({"0", "false", "no", "n", "f"})


@dataclass(frozen=True)
class Field:
    """A declared field. ``text``: a string; ``scalar``: a string or a number (read as text); ``bool``: true/false
    (JSON booleans, 0/1, or the words true/false/yes/no in a cell). An absent, null or blank optional field is left
    out of ``Row.values``; ``empty_ok`` lets a required text be "" (an empty ASR hypothesis)."""

    name: str
    type: FieldType = "text"
    required: bool = True
    empty_ok: bool = False


@dataclass(frozen=True)
class Row:
    number: int
    values: dict[str, Any]  # the declared fields present in the row, checked
    raw: dict[str, Any]  # the record as read (JSON types kept; CSV cells are strings)


@dataclass(frozen=True)
class Rows:
    file: str
    format: Format
    rows: list[Row]
    columns: tuple[str, ...]  # header / parquet columns, or the JSONL keys in first-seen order
    unknown: tuple[str, ...]  # columns that no declared field names


def describe(value: Any) -> str:
    """What a JSON value is, for 'expected ..., got ...' messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, (int, float)):
        text = repr(value)
        return f"a number ({text if len(text) <= 30 else text[:27] + '...'})"
    if isinstance(value, str):
        return f"text ({_short(value)})"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        return f"an object with key(s) {', '.join(map(repr, list(value)[:5]))}" if value else "an empty object"
    if isinstance(value, (bytes, bytearray)):
        return f"binary data ({len(value)} bytes)"
    return f"a {type(value).__name__}"


def _short(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[: n - 3] + "...")


def _type_fix(value: Any) -> str:
    if isinstance(value, (bool, int, float)) and value is not None:
        return f'write the value as a JSON string in quotes, e.g. "{json.dumps(value)}"'
    if isinstance(value, (list, dict)):
        return "give one string, not a list or an object"
    return "give a string"


def check_value(value: Any, f: Field, limits: Limits) -> tuple[Any, str | None, str | None]:
    """(checked value, problem, fix) for one present, non-blank value."""
    if f.type == "bool":
        if isinstance(value, bool):
            return value, None, None
        if isinstance(value, int) and value in (0, 1):
            return bool(value), None, None
        if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
            return value.strip().lower() in TRUE, None, None
        return None, f"expected true or false, got {describe(value)}", "write true or false (or 1/0, yes/no)"
    if f.type == "scalar" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        expected = "text or a number" if f.type == "scalar" else "text (a string)"
        return None, f"expected {expected}, got {describe(value)}", _type_fix(value)
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        return (
            None,
            (f"not valid Unicode: a lone surrogate \\u{ord(value[exc.start]):04x} at character {exc.start + 1}"),
            "write the character as a proper surrogate pair, or remove it",
        )
    if "\x00" in value:
        return None, f"contains a NUL character at character {value.index(chr(0)) + 1}", "remove the NUL characters"
    if size > limits.field_bytes:
        return (
            None,
            (f"is {size:,} bytes, over the per-field limit of {limits.field_bytes:,} bytes"),
            (f"shorten it, or raise the limit with {FIELD_ENV}=<bytes>, e.g. {FIELD_ENV}=64MB"),
        )
    return value, None, None


def check_record(
    obj: Any,
    fields: Sequence[Field],
    problems: Problems,
    *,
    row: int | None,
    limits: Limits | None = None,
    prefix: str = "",
    file: str | None = None,
) -> dict[str, Any] | None:
    """The checked declared fields of one record, or None after adding its problems (every field is checked)."""
    limits = limits or Limits.from_env()
    if not isinstance(obj, dict):
        names = ", ".join(f.name for f in fields if f.required) or "the declared fields"
        problems.add(
            f"expected an object with {names}, got {describe(obj)}",
            row=row,
            field=prefix.rstrip(".") or None,
            fix="write one JSON object per record, e.g. {"
            + ", ".join(f'"{f.name}": "..."' for f in fields if f.required)
            + "}",
            file=file,
        )
        return None
    out: dict[str, Any] = {}
    ok = True
    for f in fields:
        value = obj.get(f.name)
        blank = value is None or (isinstance(value, str) and not value.strip())
        if blank and not (f.empty_ok and isinstance(value, str)):
            if f.required:
                problems.add(
                    "missing (required)" if f.empty_ok else "missing or empty (required)",
                    row=row,
                    field=prefix + f.name,
                    file=file,
                )
                ok = False
            continue
        checked, problem, fix = check_value(value, f, limits)
        if problem:
            problems.add(problem, row=row, field=prefix + f.name, fix=fix, file=file)
            ok = False
        else:
            out[f.name] = checked
    return out if ok else None


def _format_of(p: Path, format: Format | None, formats: Sequence[Format], what: str) -> Format:
    fmt = format or SUFFIXES.get(p.suffix.lower())
    if fmt is None or fmt not in formats:
        exts = ", ".join(s for s, f in SUFFIXES.items() if f in formats)
        raise InputError(
            f"unsupported {what} format '{p.suffix or '(no extension)'}'", file=str(p), fix=f"use one of {exts}"
        )
    return fmt


def read_rows(
    path: str | Path,
    fields: Sequence[Field],
    *,
    what: str,
    fix: str | None = None,
    format: Format | None = None,
    formats: Sequence[Format] = FORMATS,
    problems: Problems | None = None,
    limits: Limits | None = None,
    comments: bool = False,
) -> Rows:
    """Every record of a JSONL/CSV/TSV/parquet file, each declared field checked (see the module docstring).
    ``format`` overrides the file's suffix; ``comments`` skips '#' lines before a CSV/TSV header (Kuan et al.'s
    question files open with such a block).

    Without ``problems`` any row problem raises InputProblems here; with it, problems are added there and only the
    clean rows come back (the caller raises, or reports and leaves the bad rows out)."""
    limits = limits or Limits.from_env()
    p = check_file(
        path,
        what=what,
        limits=limits,
        fix=f"pass the {what} as {', '.join(s for s, f in SUFFIXES.items() if f in formats)}",
    )
    fmt = _format_of(p, format, formats, what)
    own = problems is None
    problems = Problems(str(p)) if problems is None else problems
    file = None if problems.file == str(p) else str(p)
    names = [f.name for f in fields]
    if fmt == "parquet":
        from halluscope.core.inputs_parquet import _parquet

        columns, records = _parquet(p, fields, what)
    else:
        with open_bytes(p) as fh:
            head = fh.read(SNIFF_BYTES)
            sniff(head, p, what)
            if b"\r" in head and b"\n" not in head and len(head.splitlines()) > 1:
                raise InputError(
                    "the line ends are CR only (classic Mac OS); expected LF or CRLF",
                    file=str(p),
                    fix=f"convert the line ends, e.g. tr '\\r' '\\n' < {p.name} > {p.stem}.lf{p.suffix}",
                )
            fh.seek(0)
            lines = Lines(fh, p)
            if fmt == "jsonl":
                columns, records = _jsonl(lines, problems, file)
            else:
                columns, records = _table(
                    lines, p, fields, "\t" if fmt == "tsv" else ",", what, problems, file, limits, comments
                )
            enc = lines.problem()
            if enc:
                problems.add(enc[0], row=lines.first[0] if lines.first else None, fix=enc[1], file=file)
    rows = []
    for number, obj in records:
        values = check_record(obj, fields, problems, row=number, limits=limits, file=file)
        if values is not None:
            rows.append(Row(number, values, obj))
    if own:
        problems.raise_if_any(what, fix=fix)
    return Rows(str(p), fmt, rows, tuple(columns), tuple(c for c in columns if c not in names))


def _jsonl(lines: Lines, problems: Problems, file: str | None) -> tuple[list[str], list[tuple[int, Any]]]:
    columns: dict[str, None] = {}
    records: list[tuple[int, Any]] = []
    for number, text, ok in lines:
        if not ok or not text.strip():
            continue
        obj, why = parse_json(text.rstrip("\r\n"))
        if why:
            problems.add(
                why.replace(" at line 1,", " at"),
                row=number,
                file=file,
                fix='write one JSON object per line, e.g. {"id": "a1", "text": "..."}',
            )
            continue
        if isinstance(obj, dict):
            columns.update(dict.fromkeys(obj))
        records.append((number, obj))
    return list(columns), records


def _table(
    lines: Lines,
    p: Path,
    fields: Sequence[Field],
    delimiter: str,
    what: str,
    problems: Problems,
    file: str | None,
    limits: Limits,
    comments: bool,
) -> tuple[list[str], list[tuple[int, Any]]]:
    """CSV/TSV records with the stdlib reader in strict mode: a quote that never closes is reported at the line it
    opens on (never a silent swallow of the rest of the file), and a record spanning many physical lines, or whose
    embedded lines look like rows of the file, is refused (a quote that closes far too late)."""
    csv.field_size_limit(max(csv.field_size_limit(), limits.field_bytes + 1))
    bad: set[int] = set()
    header: list[str] | None = None
    skipped = 0  # '#' comment lines before the header (``comments``): physical line = reader.line_num + skipped
    kind = "TSV" if delimiter == chr(9) else "CSV"
    pending: list[str] = []  # the physical lines of the record being read

    def feed() -> Iterator[str]:
        nonlocal skipped
        for number, text, ok in lines:
            if comments and header is None and text.lstrip().startswith("#"):
                skipped += 1
                continue
            if not ok:
                bad.add(number)
            pending.append(text)
            yield text

    reader = csv.reader(feed(), delimiter=delimiter, strict=True)
    records: list[tuple[int, Any]] = []
    last = 0
    while True:
        pending.clear()
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            start = last + 1 + skipped  # after the read: comment lines it skipped are counted
            if "unexpected end of data" in str(exc):
                problems.add(
                    f"unreadable {kind}: a quote opened on this line never closes (the reader reached "
                    f"line {reader.line_num + skipped}, the end of the file, inside it)",
                    row=start,
                    file=file,
                    fix='close the quote, or double a quote that is part of the text ("")',
                )
            elif reader.line_num - last > 1:
                problems.add(
                    f"unreadable {kind}: a quote opened on this line runs on to line {reader.line_num + skipped}"
                    f", where it closes with text after it ({_why(exc)})",
                    row=start,
                    file=file,
                    fix='close the quote on its own line, or double a quote that is part of the text ("")',
                )
            else:
                problems.add(
                    f"unreadable {kind} ({_why(exc)})",
                    row=start,
                    file=file,
                    fix="quote cells that contain the delimiter, quotes or line breaks; double a quote "
                    'inside a quoted cell ("")',
                )
            if reader.line_num == last:
                break  # the reader cannot get past it: the problem above already stops the file from loading
            last = reader.line_num
            continue
        start = last + 1 + skipped  # after the read: comment lines it skipped are counted
        end, last = reader.line_num + skipped, reader.line_num
        if not cells:
            continue
        if header is None:
            if bad & set(range(start, end + 1)):
                enc = lines.problem()
                raise InputError(
                    enc[0] if enc else "the header is not UTF-8", file=str(p), row=start, fix=enc[1] if enc else None
                )
            header = _check_header(cells, p, fields, delimiter, what, start)
            continue
        if bad & set(range(start, end + 1)):
            continue  # the encoding problem covers it
        if len(cells) != len(header):
            problems.add(
                f"has {len(cells)} cell(s), the header has {len(header)}",
                row=start,
                file=file,
                fix="quote cells that contain the delimiter; give every row one cell per column",
            )
            continue
        if end > start and (why := _spans(pending, header, delimiter, limits, end - start + 1)):
            problems.add(
                why,
                row=start,
                file=file,
                fix='check the quotes on this line: a quote that is part of the text must be doubled (""); '
                f"if the cell really is that long, raise {LINES_ENV}=<lines>",
            )
            continue
        records.append((start, dict(zip(header, cells))))
    if header is None:
        raise InputError(
            f"empty {kind}: no header row",
            file=str(p),
            row=1,
            fix=f"the first line must name the columns: {', '.join(f.name for f in fields)}",
        )
    return header, records


def _why(exc: csv.Error) -> str:
    return str(exc).replace("'\t'", "tab")


def _spans(pending: list[str], header: list[str], delimiter: str, limits: Limits, n: int) -> str | None:
    """Why a record over ``n`` physical lines looks like a quote that closed too late, or None."""
    if n > limits.field_lines:
        return (
            f"one record spans {n:,} physical lines (limit {limits.field_lines:,}): a quote opened on this "
            "line likely closes far too late, swallowing the rows after it"
        )
    inner = pending[1:]
    if len(header) < 2 or len(inner) < 2:
        return None
    rowlike = sum(1 for t in inner if t.rstrip("\r\n").count(delimiter) == len(header) - 1 and '"' not in t)
    if rowlike * 2 >= len(inner):
        return (
            f"one record spans {n} physical lines and {rowlike} of them look like rows of this file ({len(header)} "
            "cells each): a quote opened on this line closes too late, swallowing those rows"
        )
    return None


def _check_header(
    cells: list[str], p: Path, fields: Sequence[Field], delimiter: str, what: str, line: int = 1
) -> list[str]:
    header = [c.strip() for c in cells]
    required = [f.name for f in fields if f.required]
    optional = [f.name for f in fields if not f.required]
    expected = ", ".join(required) + (f" (optional: {', '.join(optional)})" if optional else "")
    sep = "tab" if delimiter == "\t" else "comma"
    counts = Counter(header)  # linear: a 100,000-column header is checked at once
    dupes = sorted(h for h, n in counts.items() if h and n > 1)
    if dupes:
        raise InputError(
            f"column(s) {', '.join(dupes)} appear more than once in the header",
            file=str(p),
            row=line,
            fix="give every column one name",
        )
    missing = [c for c in required if c not in header]
    if not missing:
        return header
    other = "," if delimiter == "\t" else "\t"
    if len(header) == 1 and all(c in [h.strip() for h in header[0].split(other)] for c in required):
        raise InputError(
            f"the header is {'comma' if other == ',' else 'tab'}-separated, expected {sep}-separated",
            file=str(p),
            row=line,
            fix=f"name the file .{'csv' if other == ',' else 'tsv'}",
        )
    if not set(header) & {f.name for f in fields}:
        got = ", ".join(_short(c, 30) for c in cells[:6]) + (", ..." if len(cells) > 6 else "")
        raise InputError(
            f"the first row is not a header: expected columns {expected}, got {got}",
            file=str(p),
            row=line,
            fix=f"add a {sep}-separated header line naming the columns, e.g. {delimiter.join(required)}",
        )
    raise InputError(
        f"missing column(s) {', '.join(missing)}; the header has {', '.join(header)}",
        file=str(p),
        row=line,
        field=missing[0],
        fix=f"the {what} needs the columns {expected}",
    )
