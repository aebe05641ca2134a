"""'corpus collect': saved news pages -> corpus rows (trafilatura extraction; outlet, date, language, topic)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from halluscope.core.errors import HalluscopeError, InputError, MissingExtraError
from halluscope.core.hashing import sha256_hex

LANGS = ("en", "ru", "kk")
EXTRACT_OPTIONS = {"include_comments": False, "include_tables": False, "favor_precision": True}


def _trafilatura() -> Any:
    try:
        import trafilatura
    except ImportError:
        raise MissingExtraError("trafilatura", "collect") from None
    return trafilatura


def extractor_version() -> str:
    return f"trafilatura {_trafilatura().__version__}"


def page_text(html: str) -> str:
    """The article text of a page, as every step extracts it (collect, release and rehydrate must agree)."""
    text = _trafilatura().extract(html, **EXTRACT_OPTIONS)
    return (text or "").strip()


def page_metadata(html: str, url: str | None) -> dict:
    meta = _trafilatura().extract_metadata(html, default_url=url)
    if meta is None:
        return {}
    d = meta.as_dict()
    return {k: d.get(k) for k in ("title", "date", "sitename", "hostname", "categories", "tags", "url")}


@dataclass(frozen=True)
class PageRef:
    page: Path
    url: str | None = None
    id: str | None = None
    language: str | None = None
    topic: str | None = None
    outlet: str | None = None


def read_page_list(source: Path) -> list[PageRef]:
    """A folder of .html pages, or a .jsonl/.csv list with 'page' (a saved file, relative to the list) and optional
    url, id, language, topic, outlet."""
    if source.is_dir():
        return [PageRef(p) for p in sorted(source.glob("*.htm*"))]
    if not source.is_file():
        raise InputError(
            "no such page list or folder",
            file=str(source),
            fix="pass a folder of saved .html pages or a .jsonl/.csv list with a 'page' column",
        )
    if source.suffix == ".jsonl":
        rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        import csv

        rows = list(csv.DictReader(source.open(encoding="utf-8", newline="")))
    refs = []
    for i, r in enumerate(rows, 1):
        if not r.get("page"):
            raise InputError(
                "missing 'page'",
                file=str(source),
                row=i,
                field="page",
                fix="name the saved HTML file of every row (fetch pages first: halluscope does not crawl)",
            )
        refs.append(
            PageRef(
                source.parent / r["page"],
                r.get("url") or None,
                r.get("id") or None,
                r.get("language") or None,
                r.get("topic") or None,
                r.get("outlet") or None,
            )
        )
    return refs


def _language(declared: str | None, html: str, text: str) -> str:
    import re

    from halluscope.spoken.corpus import language_code

    if declared:
        return language_code(declared)
    m = re.search(r"<html[^>]*\blang=[\"']?([A-Za-z]{2})", html)
    if m and language_code(m.group(1)) in LANGS:
        return language_code(m.group(1))
    from halluscope.spoken.generate.llm import language_of

    return language_of(text, LANGS)


def collect_pages(refs: Sequence[PageRef], *, langs: Sequence[str] = LANGS) -> tuple[list[dict], list[dict]]:
    """Corpus rows (id, language, text, url, outlet, date, topic, page, page_sha256, text_sha256) and the skipped
    pages with the reason (no text, a language not asked for, a repeated id)."""
    rows: list[dict] = []
    skipped: list[dict] = []
    seen: set[str] = set()
    for ref in refs:
        if not ref.page.is_file():
            raise InputError("saved page not found", file=str(ref.page), fix="check the 'page' column or the folder")
        raw = ref.page.read_bytes()
        html = raw.decode("utf-8", "replace")
        text = page_text(html)
        if not text:
            skipped.append({"page": ref.page.name, "reason": "trafilatura found no article text"})
            continue
        meta = page_metadata(html, ref.url)
        url = ref.url or meta.get("url")
        lang = _language(ref.language, html, text)
        if lang not in langs:
            skipped.append({"page": ref.page.name, "reason": f"language '{lang}' not asked for"})
            continue
        outlet = ref.outlet or meta.get("sitename") or meta.get("hostname") or (urlparse(url).hostname if url else None)
        topic = ref.topic or next(iter(meta.get("categories") or meta.get("tags") or []), None)
        page_sha = sha256_hex(raw)
        rid = ref.id or f"{lang}-{page_sha[:12]}"
        if rid in seen:
            skipped.append({"page": ref.page.name, "reason": f"id '{rid}' repeats an earlier page"})
            continue
        seen.add(rid)
        rows.append(
            {
                "id": rid,
                "language": lang,
                "text": text,
                "url": url,
                "outlet": outlet,
                "date": meta.get("date"),
                "topic": topic,
                "page": ref.page.name,
                "page_sha256": page_sha,
                "text_sha256": sha256_hex(text),
            }
        )
    if not rows:
        raise HalluscopeError(
            "no article text in any page; nothing collected. Fix: check the pages are article pages "
            "(trafilatura extracts the main text)"
        )
    return rows, skipped


def write_jsonl(path: Path, rows: Sequence[dict]) -> Path:
    from halluscope.core.fs import atomic_write

    return atomic_write(
        path,
        "".join(json.dumps({k: v for k, v in r.items() if v is not None}, ensure_ascii=False) + "\n" for r in rows),
    )


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise InputError("file not found", file=str(path), fix="pass the output of the previous 'corpus' step")
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"not JSON ({exc.msg})",
                    file=str(path),
                    row=i,
                    fix="pass a .jsonl file written by 'halluscope corpus'",
                ) from None
    return out
