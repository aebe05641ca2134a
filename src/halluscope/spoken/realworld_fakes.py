"""The real-world split's fact-checked fakes (seed 000, section 3.2): the fakes file read and checked, each fake as a
sample, and its truthful negative matched among the run's original articles (greedy TF-IDF cosine over topic and
time period, one to one per language)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from halluscope.core.errors import HalluscopeError, InputError, Problems
from halluscope.core.inputs import Field, read_rows
from halluscope.core.records import (
    Article,
    RealWorldFake,
    RealWorldMatch,
    Variant,
)

REAL_LANGUAGES = ("ru", "kk")
FAKE_PREFIX = "fake~"
FAKE_REQUIRED = ("id", "language", "text")
FAKE_OPTIONAL = ("native_language", "translated", "pair_id", "near_parallel", "url", "date", "topic")


def fake_id(row_id: str) -> str:
    return FAKE_PREFIX + row_id


FAKE_FIELDS = (
    *(Field(f) for f in FAKE_REQUIRED),
    *(Field(f, "bool" if f in ("translated", "near_parallel") else "text", required=False) for f in FAKE_OPTIONAL),
)


def load_fakes(path: str | Path, *, langs: Sequence[str] = REAL_LANGUAGES) -> list[RealWorldFake]:
    """Validate every row of a fakes file (.jsonl/.csv/.tsv/.parquet); all problems are reported together.

    Columns: id, language (ru | kk; 'kz' is read as 'kk'), text; optional native_language (default: the
    language, or the other one when translated is true), translated (bool; default: native_language differs),
    pair_id (the story shared by a ru and a kk row), near_parallel (bool), url, date (ISO 8601), topic.
    Reading rules (encodings, types, limits): halluscope.core.inputs.
    """
    from halluscope.spoken.corpus import language_code

    path = Path(path)
    problems = Problems(str(path))
    fakes: list[RealWorldFake] = []
    seen: dict[str, int] = {}
    for r in read_rows(path, FAKE_FIELDS, what="fakes file", problems=problems).rows:
        row = r.number
        values: dict[str, Any] = {k: v.strip() if isinstance(v, str) else v for k, v in r.values.items()}
        ok = True
        for f in ("language", "native_language"):
            if f in values:
                code = language_code(values[f])
                if code not in REAL_LANGUAGES:
                    problems.add(f"unsupported language '{values[f]}'; expected ru or kk (kz)", row=row, field=f)
                    ok = False
                values[f] = code
        if values["id"] in seen:
            problems.add(f"duplicate id '{values['id']}' (first seen at row {seen[values['id']]})", row=row, field="id")
            ok = False
        else:
            seen[values["id"]] = row
        if not ok:
            continue
        other = {"ru": "kk", "kk": "ru"}[values["language"]]
        if "native_language" not in values:
            values["native_language"] = other if values.get("translated") else values["language"]
        if values.get("translated") is None:
            values["translated"] = values["native_language"] != values["language"]
        elif values["translated"] == (values["native_language"] == values["language"]):
            problems.add(
                f"translated={values['translated']} but language={values['language']} and "
                f"native_language={values['native_language']}",
                row=row,
                field="translated",
            )
            continue
        values["near_parallel"] = bool(values.get("near_parallel"))
        fakes.append(RealWorldFake(**values))
    problems.raise_if_any(
        "fakes file",
        fix="required fields are id, language (ru|kk), text; see "
        "'halluscope build realworld --help' for the optional ones",
    )
    fakes = [f for f in fakes if f.language in langs]
    if not fakes:
        raise InputError(
            f"no fakes in {', '.join(langs)}",
            file=str(path),
            fix="check the language column and the languages asked for",
        )
    return fakes


# -- matching -----------------------------------------------------------------------------------------


def match_key(topic: str | None, date: str | None) -> str:
    """Tokens for topic and time period: the topic's words, the year and the year-month."""
    words = re.findall(r"\w+", (topic or "").lower())
    period = []
    if date and (m := re.match(r"(\d{4})(?:-(\d{1,2}))?", date.strip())):
        period.append(f"y{m.group(1)}")
        if m.group(2):
            period.append(f"m{m.group(1)}_{int(m.group(2)):02d}")
    return " ".join([*(f"t_{w}" for w in words), *period])


def _cosine(a: list[str], b: list[str], **tfidf: Any) -> Any:
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import linear_kernel

    if not any(s.strip() for s in a + b):
        return np.zeros((len(a), len(b)))
    try:
        vec = TfidfVectorizer(**tfidf).fit(a + b)
    except ValueError:  # empty vocabulary
        return np.zeros((len(a), len(b)))
    return linear_kernel(vec.transform(a), vec.transform(b))


def match_negatives(
    fakes: Sequence[RealWorldFake], articles: Sequence[Article], *, text_weight: float = 0.0
) -> list[RealWorldMatch]:
    """Greedy one-to-one matching per language by TF-IDF cosine over topic and period (section 3.2).

    All fake x article pairs of a language are ranked by similarity (ties: fake id, then article id) and
    taken in order when neither side is taken yet, so each fake gets one negative and no article serves
    twice. ``text_weight`` > 0 adds that multiple of the texts' word TF-IDF cosine (off by default).
    """
    out: list[RealWorldMatch] = []
    for lang in sorted({f.language for f in fakes}):
        fs = sorted((f for f in fakes if f.language == lang), key=lambda f: f.id)
        arts = sorted((a for a in articles if a.language == lang), key=lambda a: a.id)
        if len(arts) < len(fs):
            raise HalluscopeError(
                f"{len(fs)} {lang} fakes need as many truthful negatives, but the run has only "
                f"{len(arts)} {lang} original articles with transcripts; build the run with more "
                "articles or pass fewer fakes"
            )
        sim = _cosine(
            [match_key(f.topic, f.date) for f in fs], [match_key(a.topic, a.date) for a in arts], token_pattern=r"\S+"
        )
        if text_weight:
            sim = sim + text_weight * _cosine([f.text for f in fs], [a.text for a in arts], sublinear_tf=True)
        pairs = sorted(
            (-float(sim[i, j]), fs[i].id, arts[j].id, i, j) for i in range(len(fs)) for j in range(len(arts))
        )
        used_f: set[int] = set()
        used_a: set[int] = set()
        for neg, _, _, i, j in pairs:
            if i in used_f or j in used_a:
                continue
            used_f.add(i)
            used_a.add(j)
            out.append(
                RealWorldMatch(
                    fake_id=fake_id(fs[i].id),
                    article_id=arts[j].id,
                    language=lang,  # type: ignore[arg-type]
                    similarity=round(-neg, 6),
                    order=len(used_f) - 1,
                )
            )
            if len(used_f) == len(fs):
                break
    return out


def fake_variant(f: RealWorldFake) -> Variant:
    """A fake as a benchmark sample: its own 'article', label 1, no type or severity."""
    return Variant(
        id=fake_id(f.id), article_id=fake_id(f.id), language=f.language, text=f.text, label=1, generator="factcheck"
    )
