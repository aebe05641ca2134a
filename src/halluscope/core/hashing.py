"""Every hash halluscope computes: sha256 of bytes, text, files and JSON; short ids; derived seeds.

Stage fingerprints, call keys, clip checksums and cache keys are built from these, so their values are part of
every stored run: a change here would make existing runs recompute. tests/core/test_hashing.py pins each one
against the formula it replaced.

- ``sha256_hex(data, n)``: hex digest of bytes or UTF-8 text, the first ``n`` hex digits when given (a short id).
- ``file_sha256(path, n)``: the same over a file's bytes.
- ``json_sha256(obj, n)``: over ``json.dumps(obj, sort_keys=True, ensure_ascii=False)`` (stable across dict order).
- ``chunks_sha256(chunks, n)``: over several pieces in order, as one stream (records, documents).
- ``named_files_sha256(refs, n)``: over each file's name and bytes in the given order (prompt folders).
- ``seed_from(data, nbytes)``: an integer seed from the first ``nbytes`` of the digest (big-endian).
- ``derived_seed(*parts)``: ``seed_from`` over the parts joined by U+001F: one seed per (run seed, item, ...).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

TORCH_SEED_MAX = 2**63  # torch.manual_seed takes a signed 64-bit integer


class _Readable(Protocol):  # a Path or an importlib.resources Traversable
    name: str

    def read_bytes(self) -> bytes: ...


def _bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _cut(digest: str, n: int | None) -> str:
    return digest if n is None else digest[:n]


def sha256_hex(data: bytes | str, n: int | None = None) -> str:
    """The sha256 hex digest of ``data`` (text is UTF-8), cut to ``n`` hex digits when given."""
    return _cut(hashlib.sha256(_bytes(data)).hexdigest(), n)


def file_sha256(path: str | Path | _Readable, n: int | None = None) -> str:
    """The sha256 of a file's bytes (hex, cut to ``n`` when given)."""
    ref = Path(path) if isinstance(path, str) else path
    return sha256_hex(ref.read_bytes(), n)


def json_sha256(
    obj: Any,
    n: int | None = None,
    *,
    sort_keys: bool = True,
    ensure_ascii: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """The sha256 of ``obj`` as JSON: keys sorted and non-ASCII kept by default, so equal objects hash alike;
    ``default`` as in json.dumps (``str`` turns paths and other values into text)."""
    return sha256_hex(json.dumps(obj, sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=default), n)


def chunks_sha256(chunks: Iterable[bytes | str], n: int | None = None) -> str:
    """One sha256 over ``chunks`` fed in order (no separator: callers give self-delimiting pieces)."""
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(_bytes(chunk))
    return _cut(h.hexdigest(), n)


def named_files_sha256(refs: Iterable[_Readable], n: int | None = 16) -> str:
    """One sha256 over each file's name then its bytes, in the order given (a renamed file changes it too)."""
    return chunks_sha256((piece for ref in refs for piece in (ref.name, ref.read_bytes())), n)


def seed_from(data: bytes | str, nbytes: int = 8) -> int:
    """A non-negative integer from the first ``nbytes`` bytes of the sha256 of ``data`` (big-endian)."""
    return int.from_bytes(hashlib.sha256(_bytes(data)).digest()[:nbytes], "big")


def derived_seed(*parts: object) -> int:
    """A 64-bit seed from a run seed and names (item id, stage, ...): independent of item order and of the process."""
    return seed_from("\x1f".join(map(str, parts)))
