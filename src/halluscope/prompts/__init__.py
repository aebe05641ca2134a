"""Prompt templates in their own files, with named slots such as ``{ARTICLE TEXT}`` (seed 000, App. A).

A slot is an upper-case name in single braces, exactly as the spec's appendix writes them; any other
text, including ``{`` and ``}`` around a slot (``{{DIMENSION KEYS}}`` renders as ``{<keys>}``), is sent
verbatim. Rendering checks that every slot is filled and no unknown slot is given.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import named_files_sha256

_SLOT = re.compile(r"\{([A-Z][A-Z0-9 _]*[A-Z0-9])\}")
_FILES = ("generate", "judge")

__all__ = ["Template", "prompt_hash", "severity_texts", "template"]


@dataclass(frozen=True)
class Template:
    """A prompt file and the slots it declares."""

    name: str
    text: str

    @property
    def slots(self) -> frozenset[str]:
        return frozenset(_SLOT.findall(self.text))

    def render(self, values: dict[str, str]) -> str:
        missing = self.slots - set(values)
        unknown = set(values) - self.slots
        if missing or unknown:
            raise HalluscopeError(
                f"prompt '{self.name}' has slots {sorted(self.slots)}; missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        return _SLOT.sub(lambda m: values[m.group(1)], self.text)


def _root():
    return resources.files("halluscope") / "prompts"


@lru_cache(maxsize=None)
def template(name: str) -> Template:
    """Load 'generate/fabrication.en' or 'judge/quality' (the .txt suffix is implied)."""
    ref = _root().joinpath(*f"{name}.txt".split("/"))
    if not ref.is_file():
        raise HalluscopeError(f"no prompt template '{name}' in halluscope/prompts; expected {name}.txt")
    return Template(name, ref.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def severity_texts() -> dict:
    """The {SEVERITY LEVEL DESCRIPTION} (generation) and {SEVERITY LEVEL DEFINITION} (judge) texts."""
    return json.loads((_root() / "severity.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def prompt_hash() -> str:
    """sha256 over every template and fragment file: part of each stage fingerprint that sends prompts."""
    return named_files_sha256([_root() / "severity.json", *(ref for sub in _FILES for ref in prompt_files(sub))])


def prompt_files(folder: str, suffixes: tuple[str, ...] = (".txt",)) -> list:
    """The files of one prompt folder ('detect', 'mishap', ...) with those suffixes, by name: what a prompt hash
    covers (halluscope.core.hashing.named_files_sha256 over them)."""
    return sorted((p for p in (_root() / folder).iterdir() if p.name.endswith(suffixes)), key=lambda p: p.name)
