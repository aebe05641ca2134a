"""Renamed roles: one name per role from the flag to the function argument to the config field, and the one place
an old spelling is mapped to the current one.

A role renamed after run stores were written keeps its old key inside the *hashed* stage configs (``STORED_KEYS``
lists them, for the record), so an unchanged config keeps its fingerprint and a store written before the rename
resumes with no new model call (tests/core/test_names.py). Everywhere else the new name is used; an old spelling a
user typed (a config-file key, a ``-o`` key, a keyword argument) still works for one release, with one
deprecation line on stderr (a ``RenamedWarning``, shown plainly by the CLI).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from halluscope.core.errors import HalluscopeError

# current name -> (the key stage configs keep hashing, how the value was stored)
STORED_KEYS: dict[str, tuple[str, str]] = {
    "retries": ("max_attempts", "retries + 1 (calls in all)"),
    "max_tokens": ("max_new_tokens", "the same value (zero-shot detect's own options)"),
    "audio_policy": ("policy", "the same value (answers, canary and closed-form stage keys)"),
}
# a stored key -> the current name, where a stored config is read back (a manifest's options, an old record)
STORED_AS: dict[str, str] = {"max_new_tokens": "max_tokens", "policy": "audio_policy"}


class RenamedWarning(FutureWarning):
    """An old spelling was used; it still works for this release (the CLI shows it as one plain line on stderr)."""


def deprecation_line(old: str, new: str) -> str:
    return f"deprecated: {old} is now {new}; the old spelling is removed in the next release"


def deprecated(old: str, new: str) -> None:
    """Warn (``RenamedWarning``) that ``old`` is now ``new``: the library never prints; the CLI shows the line."""
    warnings.warn(deprecation_line(old, new), RenamedWarning, stacklevel=3)


def renamed(
    data: Mapping[str, Any], renames: Mapping[str, tuple[str, Callable[[Any], Any] | None]], *, where: str
) -> dict[str, Any]:
    """``data`` with each old key of ``renames`` (old -> (new, value conversion)) under its new name, one deprecation
    line per old key found (``where``: what the user typed it in, e.g. "the LLM config's [generate]"). Both
    spellings at once is an error: they name the same setting."""
    out = dict(data)
    for old, (new, convert) in renames.items():
        if old not in out:
            continue
        if new in out:
            raise HalluscopeError(f"{where}: '{old}' and '{new}' name the same setting; give '{new}' only")
        value = out.pop(old)
        if convert is not None and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        out[new] = convert(value) if convert is not None and isinstance(value, int) else value
        deprecated(
            f"'{old}' in {where}",
            f"'{new}'" + (" (one less: retries after the first try)" if convert is not None else ""),
        )
    return out
