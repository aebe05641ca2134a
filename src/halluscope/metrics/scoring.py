"""Standalone scoring of ASR pairs: 'halluscope score asr PAIRS.jsonl'."""

from __future__ import annotations

from pathlib import Path

from halluscope.core.errors import InputError, Problems
from halluscope.core.inputs import Field, read_rows
from halluscope.core.records import LANGUAGES, language_code
from halluscope.metrics.asr import Cleaner, score_asr

PAIR_FIELDS = (Field("reference", empty_ok=True), Field("hypothesis", empty_ok=True), Field("language"))


def score_asr_file(path: str | Path, *, cleaner: Cleaner | None = None) -> dict:
    """Per-language and overall corpus-level WER/CER of a JSONL (or CSV/TSV/parquet) of {reference, hypothesis,
    language}; reading rules: halluscope.core.inputs. Each figure names its cleaner (rule-based unless ``cleaner``
    is given, e.g. a spoken.asr_clean.LLMCleaner)."""
    problems = Problems(str(path))
    table = read_rows(path, PAIR_FIELDS, what="ASR pairs file", problems=problems)
    refs: dict[str, list[str]] = {}
    hyps: dict[str, list[str]] = {}
    for row in table.rows:
        lang = language_code(row.values["language"])
        if lang not in LANGUAGES:
            problems.add(
                f"unsupported language '{row.values['language']}'; expected one of {', '.join(LANGUAGES)}",
                row=row.number,
                field="language",
            )
            continue
        refs.setdefault(lang, []).append(row.values["reference"])
        hyps.setdefault(lang, []).append(row.values["hypothesis"])
    problems.raise_if_any(
        "ASR pairs file",
        fix='each row looks like {"reference": "...", "hypothesis": "...", '
        '"language": "en"}, all strings; use "" for an empty hypothesis',
    )
    if not refs:
        raise InputError("no pairs found", file=str(path), fix="add at least one line")
    if cleaner is not None:  # every text cleaned in one pass; the per-language figures reuse it
        cleaner.clean([t for lang in refs for t in (*refs[lang], *hyps[lang])])
    out = {
        lang: score_asr(reference=refs[lang], hypothesis=hyps[lang], cleaner=cleaner).as_dict()
        for lang in LANGUAGES
        if lang in refs
    }
    out["overall"] = score_asr(
        reference=[r for l in refs for r in refs[l]], hypothesis=[h for l in refs for h in hyps[l]], cleaner=cleaner
    ).as_dict()
    return out
