"""Text files as halluscope reads them: size limits, binary and UTF-16 refusal, UTF-8 decoding with the likely
encoding named when it fails, one text or JSON document (halluscope.core.inputs reads rows on top of this)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from halluscope.core.errors import InputError

FIELD_ENV, FILE_ENV = "HALLUSCOPE_MAX_FIELD_BYTES", "HALLUSCOPE_MAX_FILE_BYTES"
LINES_ENV = "HALLUSCOPE_MAX_FIELD_LINES"  # physical lines one CSV/TSV record may span
DEFAULT_FIELD_BYTES = 1_000_000
DEFAULT_FIELD_LINES = 1_000
DEFAULT_FILE_BYTES = 1_000_000_000
BOM = b"\xef\xbb\xbf"

# legacy encodings a file of en/ru/kk text is likely to be in, for the guess in the "not UTF-8" message
LIKELY_ENCODINGS = ("cp1252", "cp1251", "koi8_r", "kz1048", "mac_cyrillic", "utf_16")
_ENCODING_NAMES = {
    "cp1252": "cp1252 (Windows Latin-1, Western European)",
    "cp1251": "cp1251 (Windows Cyrillic)",
    "koi8_r": "KOI8-R (Russian)",
    "kz1048": "KZ-1048 (Windows Kazakh)",
    "mac_cyrillic": "Mac Cyrillic",
    "utf_16": "UTF-16",
}
_MAGIC = (
    (b"PAR1", "a parquet file; name it .parquet"),
    (b"PK\x03\x04", "a zip archive (an .xlsx or .docx is one); export the sheet as CSV (UTF-8)"),
    (b"\x1f\x8b", "gzip-compressed; decompress it first"),
    (b"BZh", "bzip2-compressed; decompress it first"),
    (b"\xfd7zXZ", "xz-compressed; decompress it first"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed; decompress it first"),
    (b"RIFF", "a RIFF (WAV) audio file"),
    (b"fLaC", "a FLAC audio file"),
    (b"OggS", "an Ogg audio file"),
    (b"ID3", "an MP3 audio file"),
    (b"%PDF", "a PDF document"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x89PNG", "a PNG image"),
    (b"\xd0\xcf\x11\xe0", "an old Office document (.xls/.doc); export it as CSV (UTF-8)"),
)
SNIFF_BYTES = 8192


def _parse_size(text: str, name: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*(b|k|kb|m|mb|g|gb|kib|mib|gib)?\s*", text, re.I)
    if not m:
        raise InputError(
            f"{name}={text!r} is not a size",
            field=name,
            fix=f"give bytes or a size with a unit, e.g. {name}=50MB or {name}=2GiB",
        )
    unit = (m.group(2) or "b").lower()
    scale = {
        "b": 1,
        "k": 10**3,
        "kb": 10**3,
        "m": 10**6,
        "mb": 10**6,
        "g": 10**9,
        "gb": 10**9,
        "kib": 2**10,
        "mib": 2**20,
        "gib": 2**30,
    }[unit]
    return int(m.group(1)) * scale


@dataclass(frozen=True)
class Limits:
    """Size limits; ``from_env`` reads the overrides from HALLUSCOPE_MAX_FIELD_BYTES / HALLUSCOPE_MAX_FILE_BYTES."""

    field_bytes: int = DEFAULT_FIELD_BYTES
    file_bytes: int = DEFAULT_FILE_BYTES
    field_lines: int = DEFAULT_FIELD_LINES

    @classmethod
    def from_env(cls) -> Limits:
        def get(name: str, default: int) -> int:
            value = os.environ.get(name, "").strip()
            return _parse_size(value, name) if value else default

        lines = os.environ.get(LINES_ENV, "").strip()
        if lines and not lines.isdigit():
            raise InputError(
                f"{LINES_ENV}={lines!r} is not a number of lines",
                field=LINES_ENV,
                fix=f"give a whole number, e.g. {LINES_ENV}=5000",
            )
        return cls(
            get(FIELD_ENV, DEFAULT_FIELD_BYTES),
            get(FILE_ENV, DEFAULT_FILE_BYTES),
            int(lines) if lines else DEFAULT_FIELD_LINES,
        )


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
        raise InputError(
            f"is {size:,} bytes, over the per-file limit of {limits.file_bytes:,} bytes",
            file=str(p),
            fix=f"split the file, or raise the limit with {FILE_ENV}=<bytes>, e.g. {FILE_ENV}=4GB",
        )
    return p


def open_bytes(p: Path) -> IO[bytes]:
    try:
        return p.open("rb")
    except OSError as exc:
        raise InputError(
            f"cannot read ({exc.strerror or exc})", file=str(p), fix="check the file's permissions"
        ) from None


def guess_encoding(sample: bytes) -> str | None:
    """The most likely legacy encoding of bytes that are not UTF-8 (a guess, for the message only)."""
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(sample, cp_isolation=list(LIKELY_ENCODINGS)).best()
    except Exception:  # noqa: BLE001 - only a guess for a message: a failure must not hide the real problem
        return None
    return None if best is None else _ENCODING_NAMES.get(best.encoding, best.encoding)


def sniff(head: bytes, p: Path, what: str) -> None:
    """Refuse binary files (a known signature, or NUL bytes) and UTF-16 before any parsing."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            raise InputError(
                f"not a text file: it is {kind}",
                file=str(p),
                fix=f"pass the {what} as UTF-8 text (JSONL, CSV or TSV) or as .parquet",
            )
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(head) >= 4 and max(head[0::2].count(0), head[1::2].count(0)) >= len(head) // 4 and _decodes_utf16(head)
    )
    if utf16:
        raise InputError(
            "the file is UTF-16, expected UTF-8",
            file=str(p),
            fix=f"re-save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8 {p.name} > {p.stem}.utf8{p.suffix})",
        )
    if b"\x00" in head:
        raise InputError(
            f"a binary file (a NUL byte at byte offset {head.index(0)}), not text",
            file=str(p),
            fix=f"pass the {what} as UTF-8 text (JSONL, CSV or TSV) or as .parquet",
        )


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


class Lines:
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
                raw, start = raw[len(BOM) :], start + len(BOM)
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
        return (
            f"not UTF-8: byte 0x{byte:02x} at byte offset {offset} (line {line}, column {column}) cannot be "
            f"decoded{more}{likely}",
            f"re-save the file as UTF-8, e.g. iconv -f {src} -t UTF-8 {self.p.name} > {self.p.stem}.utf8{self.p.suffix}",
        )


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


def _decode_whole(p: Path, what: str, limits: Limits) -> str:
    with open_bytes(p) as fh:
        sniff(fh.read(SNIFF_BYTES), p, what)
        fh.seek(0)
        lines = Lines(fh, p)
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
