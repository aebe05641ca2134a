"""Load source articles from JSONL, CSV, TSV or parquet, or the embedded demo corpus.

Schema (one article per row): id (str, unique), language (en | ru | kk; 'kz' is read as 'kk'),
text (non-empty), and optional url, outlet, date (ISO 8601), topic, every one a string. Other columns are
reported and ignored. Encodings, size limits and the problem policy: halluscope.core.inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from halluscope.core.errors import InputError, Problems
from halluscope.core.inputs import Field, read_rows
from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES, Article, language_code

DEMO = "demo"
REQUIRED = ("id", "language", "text")
OPTIONAL = ("url", "outlet", "date", "topic")
FIELDS = (*(Field(f) for f in REQUIRED), *(Field(f, required=False) for f in OPTIONAL))
FIX = (
    "required fields are id, language (en|ru|kk), text, all strings; see 'Bring your own: corpora' in the "
    "documentation (docs/byo/corpus.md)"
)


def demo_path() -> Path:
    return Path(str(resources.files("halluscope") / "data" / "demo_corpus.jsonl"))


@dataclass(frozen=True)
class Corpus:
    """A loaded corpus: its articles and notes for the CLI to show (columns that were ignored)."""

    articles: list[Article]
    notes: tuple[str, ...] = field(default=())


def load_articles(path: str | Path, *, langs: tuple[str, ...] | None = None) -> list[Article]:
    """The articles of ``load_corpus`` (its notes dropped)."""
    return load_corpus(path, langs=langs).articles


def load_corpus(path: str | Path, *, langs: tuple[str, ...] | None = None) -> Corpus:
    """Validate every row and return articles; all problems are reported together, nothing is half-loaded
    (the reading rules: halluscope.core.inputs)."""
    path = demo_path() if str(path) == DEMO else Path(path)
    problems = Problems(str(path))
    table = read_rows(path, FIELDS, what="corpus", problems=problems)
    articles: list[Article] = []
    seen: dict[str, int] = {}
    for row in table.rows:
        values = {k: v.strip() for k, v in row.values.items()}
        ok = True
        lang = language_code(values["language"])
        if lang not in LANGUAGES:
            problems.add(
                f"unsupported language code '{values['language']}'; expected one of {', '.join(LANGUAGES)}",
                row=row.number,
                field="language",
            )
            ok = False
        values["language"] = lang
        if values["id"] in seen:
            problems.add(
                f"duplicate id '{values['id']}' (first seen at row {seen[values['id']]})", row=row.number, field="id"
            )
            ok = False
        else:
            seen[values["id"]] = row.number
        if ok:
            articles.append(Article(**values))
    _derived_collisions(articles, seen, problems)
    problems.raise_if_any("corpus", fix=FIX)
    if not articles:
        raise InputError("the corpus has no articles", file=str(path), fix="add at least one row")
    notes = (f"{path}: ignoring unknown column(s) {sorted(table.unknown)}",) if table.unknown else ()
    if langs is not None:
        articles = [a for a in articles if a.language in langs]
    return Corpus(articles, notes)


def _derived_collisions(articles: list[Article], rows: dict[str, int], problems: Problems) -> None:
    """Refuse an article id that equals the id a rewrite of another article gets (seed 000, 3.1: every article has
    type x severity rewrites): the build would store one under the other's id and lose an article."""
    from halluscope.spoken.generate.base import variant_id

    for a in articles:
        for t in TYPES:
            for sev in SEVERITIES:
                vid = variant_id(a.id, t, sev)
                if vid in rows:
                    problems.add(
                        f"id '{vid}' is also the id of the {t}/{sev} rewrite of article '{a.id}' (row "
                        f"{rows[a.id]}): the build would store one under the other's id and lose an article",
                        row=rows[vid],
                        field="id",
                        fix=f"rename one of the two (e.g. '{vid.replace('~', '-')}'); article ids must not "
                        "be another article's id followed by ~<type>~<severity>",
                    )
