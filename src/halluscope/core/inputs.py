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
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from halluscope.core.errors import InputError, Problems

Format = Literal["jsonl", "csv", "tsv", "parquet"]
FieldType = Literal["text", "bool", "scalar"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "tsv", "parquet")
SUFFIXES: dict[str, Format] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
                               ".parquet": "parquet", ".pq": "parquet"}
FIELD_ENV, FILE_ENV = "HALLUSCOPE_MAX_FIELD_BYTES", "HALLUSCOPE_MAX_FILE_BYTES"
DEFAULT_FIELD_BYTES = 1_000_000
DEFAULT_FILE_BYTES = 1_000_000_000
BOM = b"\xef\xbb\xbf"
TRUE = frozenset({"1", "true", "yes", "y", "t"})
FALSE = frozenset({"0", "false", "no", "n", "f"})
# legacy encodings a file of en/ru/kk text is likely to be in, for the guess in the "not UTF-8" message
LIKELY_ENCODINGS = ("cp1252", "cp1251", "koi8_r", "kz1048", "mac_cyrillic", "utf_16")
_ENCODING_NAMES = {"cp1252": "cp1252 (Windows Latin-1, Western European)", "cp1251": "cp1251 (Windows Cyrillic)",
                   "koi8_r": "KOI8-R (Russian)", "kz1048": "KZ-1048 (Windows Kazakh)",
                   "mac_cyrillic": "Mac Cyrillic", "utf_16": "UTF-16"}
_MAGIC = ((b"PAR1", "a parquet file; name it .parquet"), (b"PK\x03\x04", "a zip archive (an .xlsx or .docx is one); "
          "export the sheet as CSV (UTF-8)"), (b"\x1f\x8b", "gzip-compressed; decompress it first"),
          (b"BZh", "bzip2-compressed; decompress it first"), (b"\xfd7zXZ", "xz-compressed; decompress it first"),
          (b"\x28\xb5\x2f\xfd", "zstd-compressed; decompress it first"), (b"RIFF", "a RIFF (WAV) audio file"),
          (b"fLaC", "a FLAC audio file"), (b"OggS", "an Ogg audio file"), (b"ID3", "an MP3 audio file"),
          (b"%PDF", "a PDF document"), (b"SQLite format 3\x00", "an SQLite database"), (b"\x89PNG", "a PNG image"),
          (b"\xd0\xcf\x11\xe0", "an old Office document (.xls/.doc); export it as CSV (UTF-8)"))
_SNIFF = 8192


def _parse_size(text: str, name: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*(b|k|kb|m|mb|g|gb|kib|mib|gib)?\s*", text, re.I)
    if not m:
        raise InputError(f"{name}={text!r} is not a size", field=name,
                         fix=f"give bytes or a size with a unit, e.g. {name}=50MB or {name}=2GiB")
    unit = (m.group(2) or "b").lower()
    scale = {"b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
             "kib": 2**10, "mib": 2**20, "gib": 2**30}[unit]
    return int(m.group(1)) * scale


@dataclass(frozen=True)
class Limits:
    """Size limits; ``from_env`` reads the overrides from HALLUSCOPE_MAX_FIELD_BYTES / HALLUSCOPE_MAX_FILE_BYTES."""

    field_bytes: int = DEFAULT_FIELD_BYTES
    file_bytes: int = DEFAULT_FILE_BYTES

    @classmethod
    def from_env(cls) -> Limits:
        def get(name: str, default: int) -> int:
            value = os.environ.get(name, "").strip()
            return _parse_size(value, name) if value else default

        return cls(get(FIELD_ENV, DEFAULT_FIELD_BYTES), get(FILE_ENV, DEFAULT_FILE_BYTES))


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
        return f"write the value as a JSON string in quotes, e.g. \"{json.dumps(value)}\""
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
        return None, (f"not valid Unicode: a lone surrogate \\u{ord(value[exc.start]):04x} at character "
                      f"{exc.start + 1}"), "write the character as a proper surrogate pair, or remove it"
    if "\x00" in value:
        return None, f"contains a NUL character at character {value.index(chr(0)) + 1}", "remove the NUL characters"
    if size > limits.field_bytes:
        return None, (f"is {size:,} bytes, over the per-field limit of {limits.field_bytes:,} bytes"), (
            f"shorten it, or raise the limit with {FIELD_ENV}=<bytes>, e.g. {FIELD_ENV}=64MB")
    return value, None, None


def check_record(obj: Any, fields: Sequence[Field], problems: Problems, *, row: int | None, limits: Limits | None = None,
                 prefix: str = "", file: str | None = None) -> dict[str, Any] | None:
    """The checked declared fields of one record, or None after adding its problems (every field is checked)."""
    limits = limits or Limits.from_env()
    if not isinstance(obj, dict):
        names = ", ".join(f.name for f in fields if f.required) or "the declared fields"
        problems.add(f"expected an object with {names}, got {describe(obj)}", row=row, field=prefix.rstrip(".") or None,
                     fix="write one JSON object per record, e.g. {" + ", ".join(f'"{f.name}": "..."' for f in fields
                                                                       if f.required) + "}", file=file)
        return None
    out: dict[str, Any] = {}
    ok = True
    for f in fields:
        value = obj.get(f.name)
        blank = value is None or (isinstance(value, str) and not value.strip())
        if blank and not (f.empty_ok and isinstance(value, str)):
            if f.required:
                problems.add("missing (required)" if f.empty_ok else "missing or empty (required)", row=row,
                             field=prefix + f.name, file=file)
                ok = False
            continue
        checked, problem, fix = check_value(value, f, limits)
        if problem:
            problems.add(problem, row=row, field=prefix + f.name, fix=fix, file=file)
            ok = False
        else:
            out[f.name] = checked
    return out if ok else None


# -- files -------------------------------------------------------------------------------------------------

def check_file(path: str | Path, *, what: str, fix: str | None = None, limits: Limits | None = None) -> Path:
    """A readable regular file within the per-file limit, else InputError."""
    p = Path(path)
    fix = fix or f"pass the path of the {what}"
    try:
        if not p.exists():
            raise InputError("file not found", file=str(p), fix=fix)
        if p.is_dir():
            raise InputError("is a directory, expected a file", file=str(p), fix=f"name a file inside it; {fix}")
        if not p.is_file():
            raise InputError("is not a regular file", file=str(p), fix=fix)
        size = p.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(p), fix=fix) from None
    limits = limits or Limits.from_env()
    if size > limits.file_bytes:
        raise InputError(f"is {size:,} bytes, over the per-file limit of {limits.file_bytes:,} bytes", file=str(p),
                         fix=f"split the file, or raise the limit with {FILE_ENV}=<bytes>, e.g. {FILE_ENV}=4GB")
    return p


def _open(p: Path) -> IO[bytes]:
    try:
        return p.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(p), fix="check the file's permissions") from None


def guess_encoding(sample: bytes) -> str | None:
    """The most likely legacy encoding of bytes that are not UTF-8 (a guess, for the message only)."""
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(sample, cp_isolation=list(LIKELY_ENCODINGS)).best()
    except Exception:  # noqa: BLE001 - only a guess for a message: a failure must not hide the real problem
        return None
    return None if best is None else _ENCODING_NAMES.get(best.encoding, best.encoding)


def _sniff(head: bytes, p: Path, what: str) -> None:
    """Refuse binary files (a known signature, or NUL bytes) and UTF-16 before any parsing."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            raise InputError(f"not a text file: it is {kind}", file=str(p),
                             fix=f"pass the {what} as UTF-8 text (JSONL, CSV or TSV) or as .parquet")
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(head) >= 4 and max(head[0::2].count(0), head[1::2].count(0)) >= len(head) // 4 and _decodes_utf16(head))
    if utf16:
        raise InputError("the file is UTF-16, expected UTF-8", file=str(p),
                         fix=f"re-save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8 {p.name} > {p.stem}.utf8{p.suffix})")
    if b"\x00" in head:
        raise InputError(f"a binary file (a NUL byte at byte offset {head.index(0)}), not text", file=str(p),
                         fix=f"pass the {what} as UTF-8 text (JSONL, CSV or TSV) or as .parquet")


def _decodes_utf16(head: bytes) -> bool:
    head = head[: len(head) // 2 * 2]
    for codec in ("utf-16-le", "utf-16-be"):
        try:
            text = head.decode(codec)
        except UnicodeDecodeError:
            continue
        if text.isprintable() or all(c.isprintable() or c in "\r\n\t" for c in text[:-1]):
            return True
    return False


class _Lines:
    """Binary lines -> (line number, text, decoded ok); bad lines are decoded with replacement and remembered."""

    def __init__(self, fh: IO[bytes], p: Path) -> None:
        self.fh, self.p = fh, p
        self.first: tuple[int, int, int, int] | None = None  # line, byte offset, byte, column
        self.bad = 0
        self.sample = b""

    def __iter__(self) -> Iterator[tuple[int, str, bool]]:
        offset = 0
        for number, raw in enumerate(self.fh, start=1):
            start = offset
            offset += len(raw)
            if number == 1 and raw.startswith(BOM):
                raw, start = raw[len(BOM):], start + len(BOM)
            try:
                yield number, raw.decode("utf-8"), True
            except UnicodeDecodeError as exc:
                self.bad += 1
                if self.first is None:
                    column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
                    self.first = (number, start + exc.start, raw[exc.start], column)
                if len(self.sample) < 65536:
                    self.sample += raw[:8192]
                yield number, raw.decode("utf-8", "replace"), False

    def problem(self) -> tuple[str, str] | None:
        if self.first is None:
            return None
        line, offset, byte, column = self.first
        guess = guess_encoding(self.sample)
        more = f"; {self.bad - 1} more line(s) are not UTF-8 either" if self.bad > 1 else ""
        likely = f"; it looks like {guess}" if guess else "; it does not look like text in any common encoding"
        src = guess.split(" ")[0] if guess else "<encoding>"
        return (f"not UTF-8: byte 0x{byte:02x} at byte offset {offset} (line {line}, column {column}) cannot be "
                f"decoded{more}{likely}",
                f"re-save the file as UTF-8, e.g. iconv -f {src} -t UTF-8 {self.p.name} > {self.p.stem}.utf8{self.p.suffix}")


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def parse_json(text: str) -> tuple[Any, str | None]:
    """(value, None) or (None, why the text is not one JSON value)."""
    try:
        return json.loads(text, object_pairs_hook=_pairs), None
    except json.JSONDecodeError as exc:
        return None, f"malformed JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    except _DuplicateKey as exc:
        return None, f"the key '{exc}' appears twice in one object"
    except RecursionError:
        return None, "malformed JSON (nested too deeply)"
    except ValueError as exc:  # an integer with more digits than Python converts
        return None, f"malformed JSON ({str(exc).split(':')[0]})"


def _format_of(p: Path, format: Format | None, formats: Sequence[Format], what: str) -> Format:
    fmt = format or SUFFIXES.get(p.suffix.lower())
    if fmt is None or fmt not in formats:
        exts = ", ".join(s for s, f in SUFFIXES.items() if f in formats)
        raise InputError(f"unsupported {what} format '{p.suffix or '(no extension)'}'", file=str(p),
                         fix=f"use one of {exts}")
    return fmt


def read_rows(path: str | Path, fields: Sequence[Field], *, what: str, fix: str | None = None,
              format: Format | None = None, formats: Sequence[Format] = FORMATS, problems: Problems | None = None,
              limits: Limits | None = None, comments: bool = False) -> Rows:
    """Every record of a JSONL/CSV/TSV/parquet file, each declared field checked (see the module docstring).
    ``format`` overrides the file's suffix; ``comments`` skips '#' lines before a CSV/TSV header (Kuan et al.'s
    question files open with such a block).

    Without ``problems`` any row problem raises InputProblems here; with it, problems are added there and only the
    clean rows come back (the caller raises, or reports and leaves the bad rows out)."""
    limits = limits or Limits.from_env()
    p = check_file(path, what=what, limits=limits,
                   fix=f"pass the {what} as {', '.join(s for s, f in SUFFIXES.items() if f in formats)}")
    fmt = _format_of(p, format, formats, what)
    own = problems is None
    problems = Problems(str(p)) if problems is None else problems
    file = None if problems.file == str(p) else str(p)
    names = [f.name for f in fields]
    if fmt == "parquet":
        columns, records = _parquet(p, fields, what)
    else:
        with _open(p) as fh:
            _sniff(fh.read(_SNIFF), p, what)
            fh.seek(0)
            lines = _Lines(fh, p)
            if fmt == "jsonl":
                columns, records = _jsonl(lines, problems, file)
            else:
                columns, records = _table(lines, p, fields, "\t" if fmt == "tsv" else ",", what, problems, file, limits,
                                          comments)
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


def _jsonl(lines: _Lines, problems: Problems, file: str | None) -> tuple[list[str], list[tuple[int, Any]]]:
    columns: dict[str, None] = {}
    records: list[tuple[int, Any]] = []
    for number, text, ok in lines:
        if not ok or not text.strip():
            continue
        obj, why = parse_json(text.rstrip("\r\n"))
        if why:
            problems.add(why.replace(" at line 1,", " at"), row=number, file=file,
                         fix='write one JSON object per line, e.g. {"id": "a1", "text": "..."}')
            continue
        if isinstance(obj, dict):
            columns.update(dict.fromkeys(obj))
        records.append((number, obj))
    return list(columns), records


def _table(lines: _Lines, p: Path, fields: Sequence[Field], delimiter: str, what: str, problems: Problems,
           file: str | None, limits: Limits, comments: bool) -> tuple[list[str], list[tuple[int, Any]]]:
    csv.field_size_limit(max(csv.field_size_limit(), limits.field_bytes + 1))
    bad: set[int] = set()
    header: list[str] | None = None
    skipped = 0  # '#' comment lines before the header (``comments``): physical line = reader.line_num + skipped

    def feed() -> Iterator[str]:
        nonlocal skipped
        for number, text, ok in lines:
            if comments and header is None and text.lstrip().startswith("#"):
                skipped += 1
                continue
            if not ok:
                bad.add(number)
            yield text

    reader = csv.reader(feed(), delimiter=delimiter)
    records: list[tuple[int, Any]] = []
    last = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            start = last + 1 + skipped  # after the read: comment lines it skipped are counted
            problems.add(f"unreadable {'TSV' if delimiter == chr(9) else 'CSV'} ({exc})", row=start, file=file,
                         fix="quote cells that contain the delimiter, quotes or line breaks")
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
                raise InputError(enc[0] if enc else "the header is not UTF-8", file=str(p), row=start,
                                 fix=enc[1] if enc else None)
            header = _check_header(cells, p, fields, delimiter, what, start)
            continue
        if bad & set(range(start, end + 1)):
            continue  # the encoding problem covers it
        if len(cells) != len(header):
            problems.add(f"has {len(cells)} cell(s), the header has {len(header)}", row=start, file=file,
                         fix="quote cells that contain the delimiter; give every row one cell per column")
            continue
        records.append((start, dict(zip(header, cells))))
    if header is None:
        raise InputError(f"empty {'TSV' if delimiter == chr(9) else 'CSV'}: no header row", file=str(p), row=1,
                         fix=f"the first line must name the columns: {', '.join(f.name for f in fields)}")
    return header, records


def _check_header(cells: list[str], p: Path, fields: Sequence[Field], delimiter: str, what: str,
                  line: int = 1) -> list[str]:
    header = [c.strip() for c in cells]
    required = [f.name for f in fields if f.required]
    optional = [f.name for f in fields if not f.required]
    expected = ", ".join(required) + (f" (optional: {', '.join(optional)})" if optional else "")
    sep = "tab" if delimiter == "\t" else "comma"
    dupes = sorted({h for h in header if h and header.count(h) > 1})
    if dupes:
        raise InputError(f"column(s) {', '.join(dupes)} appear more than once in the header", file=str(p), row=line,
                         fix="give every column one name")
    missing = [c for c in required if c not in header]
    if not missing:
        return header
    other = "," if delimiter == "\t" else "\t"
    if len(header) == 1 and all(c in [h.strip() for h in header[0].split(other)] for c in required):
        raise InputError(f"the header is {'comma' if other == ',' else 'tab'}-separated, expected {sep}-separated",
                         file=str(p), row=line, fix=f"name the file .{'csv' if other == ',' else 'tsv'}")
    if not set(header) & {f.name for f in fields}:
        got = ", ".join(_short(c, 30) for c in cells[:6]) + (", ..." if len(cells) > 6 else "")
        raise InputError(f"the first row is not a header: expected columns {expected}, got {got}", file=str(p), row=line,
                         fix=f"add a {sep}-separated header line naming the columns, e.g. {delimiter.join(required)}")
    raise InputError(f"missing column(s) {', '.join(missing)}; the header has {', '.join(header)}", file=str(p),
                     row=line, field=missing[0], fix=f"the {what} needs the columns {expected}")


def _parquet(p: Path, fields: Sequence[Field], what: str) -> tuple[list[str], list[tuple[int, Any]]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(p)
        columns = list(table.column_names)
        missing = [f.name for f in fields if f.required and f.name not in columns]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}; the file has {', '.join(columns) or 'none'}",
                             file=str(p), field=missing[0],
                             fix=f"the {what} needs the columns {', '.join(f.name for f in fields if f.required)}")
        return columns, list(enumerate(table.to_pylist(), start=1))
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad or truncated file
        raise InputError(f"cannot read parquet ({type(exc).__name__}: {exc})", file=str(p),
                         fix="check that the file is a complete parquet file") from None


def _decode_whole(p: Path, what: str, limits: Limits) -> str:
    with _open(p) as fh:
        _sniff(fh.read(_SNIFF), p, what)
        fh.seek(0)
        lines = _Lines(fh, p)
        text = "".join(t for _, t, _ in lines)
    enc = lines.problem()
    if enc:
        raise InputError(enc[0], file=str(p), row=lines.first[0] if lines.first else None, fix=enc[1])
    return text


def read_text(path: str | Path, *, what: str, fix: str | None = None, limits: Limits | None = None) -> str:
    """A whole UTF-8 text file (BOM dropped, line ends kept), after the file, binary and encoding checks."""
    limits = limits or Limits.from_env()
    return _decode_whole(check_file(path, what=what, fix=fix, limits=limits), what, limits)


def read_json(path: str | Path, *, what: str, fix: str | None = None, limits: Limits | None = None) -> Any:
    """One JSON document (a .json file), after the file, binary and encoding checks."""
    limits = limits or Limits.from_env()
    p = check_file(path, what=what, fix=fix, limits=limits)
    value, why = parse_json(_decode_whole(p, what, limits))
    if why:
        raise InputError(why, file=str(p), fix=fix or f"write the {what} as one JSON document")
    return value
