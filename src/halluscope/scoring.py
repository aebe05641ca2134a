"""Standalone scoring of ASR pairs: 'halluscope score asr PAIRS.jsonl'."""

from __future__ import annotations

import json
from pathlib import Path

from halluscope.corpus import LANGUAGE_ALIASES
from halluscope.errors import InputError
from halluscope.metrics.asr import score_asr
from halluscope.records import LANGUAGES


def score_asr_file(path: str | Path) -> dict:
    """Per-language and overall corpus-level WER/CER of a JSONL of {reference, hypothesis, language}."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=str(path), fix="pass a JSONL file with reference, hypothesis, language")
    refs: dict[str, list[str]] = {}
    hyps: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as fh:
        for row, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"malformed JSON ({exc.msg})", file=str(path), row=row,
                                 fix='each line must look like {"reference": "...", "hypothesis": "...", "language": "en"}') from None
            if not isinstance(obj, dict):
                raise InputError("expected a JSON object", file=str(path), row=row)
            for field in ("reference", "hypothesis", "language"):
                if not isinstance(obj.get(field), str):
                    raise InputError(f"missing or not a string (got {type(obj.get(field)).__name__})",
                                     file=str(path), row=row, field=field,
                                     fix="use an empty string for an empty hypothesis")
            lang = LANGUAGE_ALIASES.get(obj["language"].lower(), obj["language"].lower())
            if lang not in LANGUAGES:
                raise InputError(f"unsupported language '{obj['language']}'; expected one of {', '.join(LANGUAGES)}",
                                 file=str(path), row=row, field="language")
            refs.setdefault(lang, []).append(obj["reference"])
            hyps.setdefault(lang, []).append(obj["hypothesis"])
    if not refs:
        raise InputError("no pairs found", file=str(path), fix="add at least one line")
    out = {lang: score_asr(reference=refs[lang], hypothesis=hyps[lang]).as_dict() for lang in LANGUAGES if lang in refs}
    out["overall"] = score_asr(reference=[r for l in refs for r in refs[l]], hypothesis=[h for l in refs for h in hyps[l]]).as_dict()
    return out
