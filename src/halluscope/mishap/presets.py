"""Named per-model decoding presets (seed 001, B.2 / Table 5): each model answers with the decoding its model card
or published evaluation code gives: temperature, top_p, top_k, repetition penalty, max new tokens and seeds.

The shipped file (mishap/data/decoding_presets.json) names a source for every value; a value of null says no
value is recorded (the card gives none, or, where its source says so, the card could not be read when the file
was written offline). A user file of the same shape adds presets or replaces them (``--preset-file``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from halluscope.core.errors import InputError

KEYS = ("temperature", "top_p", "top_k", "repetition_penalty", "max_tokens", "seeds")
UNREAD = "not recorded: the model card could not be read when this file was written offline; fill it with --preset-file"


@dataclass(frozen=True)
class Preset:
    name: str
    model: str
    values: dict = field(default_factory=dict)  # key -> value (None: none recorded)
    sources: dict = field(default_factory=dict)  # key -> where the value comes from, or why there is none

    def given(self) -> dict:
        """The recorded values only."""
        return {k: v for k, v in self.values.items() if v is not None}


def _read(data: object, src: str) -> dict[str, Preset]:
    fix = "write presets as {NAME: {'model': ..., KEY: {'value': ..., 'source': ...}}} (keys: " + ", ".join(KEYS) + ")"
    if not isinstance(data, dict):
        raise InputError("expected a JSON object of presets", file=src, fix=fix)
    out = {}
    for name, entry in data.items():
        if name.startswith("_"):
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("model"), str):
            raise InputError(f"preset {name!r}: expected an object with a 'model' string", file=src, fix=fix)
        values, sources = {}, {}
        for k in KEYS:
            item = entry.get(k)
            if item is None:
                values[k], sources[k] = None, UNREAD if entry.get("_unread") else "the card gives none"
                continue
            if not isinstance(item, dict) or "value" not in item or not str(item.get("source") or "").strip():
                raise InputError(
                    f"preset {name!r}, {k}: expected {{'value': ..., 'source': '...'}} (every value names its source)",
                    file=src,
                    fix=fix,
                )
            values[k], sources[k] = item["value"], str(item["source"])
        bad = sorted(set(entry) - set(KEYS) - {"model", "_unread"})
        if bad:
            raise InputError(f"preset {name!r}: unknown keys {bad}", file=src, fix=fix)
        out[name] = Preset(name, entry["model"], values, sources)
    return out


def load_presets(path: str | Path | None = None) -> dict[str, Preset]:
    """The shipped presets, then those of ``path`` (same shape) over them."""
    text = (resources.files("halluscope") / "mishap" / "data" / "decoding_presets.json").read_text(encoding="utf-8")
    presets = _read(json.loads(text), "the shipped decoding_presets.json")
    if path is not None:
        from halluscope.core.inputs import read_json

        presets.update(
            _read(read_json(path, what="decoding presets file", fix="see mishap/data/decoding_presets.json"), str(path))
        )
    return presets


def preset(name: str, path: str | Path | None = None) -> Preset:
    presets = load_presets(path)
    if name not in presets:
        raise InputError(
            f"unknown decoding preset {name!r}; expected one of {', '.join(sorted(presets))}",
            file=str(path) if path else None,
            fix="pick a listed preset or add one with --preset-file",
        )
    return presets[name]


def presets_rows(path: str | Path | None = None) -> list[dict]:
    """One row per preset and key: value and source (what 'mishap presets' prints)."""
    return [
        {"preset": p.name, "model": p.model, "key": k, "value": p.values[k], "source": p.sources[k]}
        for p in load_presets(path).values()
        for k in KEYS
    ]
