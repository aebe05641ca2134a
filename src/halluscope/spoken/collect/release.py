"""'corpus release' and 'corpus rehydrate' (seed 000, Ethical Considerations: the original texts are not
redistributed; the release holds source URLs and metadata, our own translations and rewrites).

A released original keeps id, language, url, outlet, date, topic, the page's sha256 and file name, the
extractor, the character offsets of the text in the page's extracted text and the text's sha256, never the
text. Rows the pipeline wrote itself (translations) keep their text. 'rehydrate' finds each page (a folder of
saved pages, matched by sha256 or file name), re-extracts, cuts the offsets and verifies the sha256."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import sha256_hex
from halluscope.spoken.collect.pages import extractor_version, page_text

FORMAT = "halluscope-release/1"
META = ("id", "language", "url", "outlet", "date", "topic")


def _pages(folder: Path) -> dict[str, Path]:
    """sha256 -> file, and name -> file, of every file in ``folder``."""
    out: dict[str, Path] = {}
    for p in sorted(folder.iterdir()) if folder.is_dir() else []:
        if p.is_file():
            out[sha256_hex(p.read_bytes())] = p
            out.setdefault(p.name, p)
    return out


def release(rows: Sequence[dict], pages: Path) -> list[dict]:
    """Release rows: originals as references into their pages, own translations with their text."""
    found = _pages(pages)
    out = []
    for r in rows:
        if r.get("translated_from"):
            out.append(
                {
                    **{k: r.get(k) for k in META},
                    "kind": "translation",
                    "text": r["text"],
                    "translated_from": r["translated_from"],
                    "translator": r.get("translator"),
                    "valid": r.get("valid"),
                    "text_sha256": sha256_hex(r["text"]),
                }
            )
            continue
        page = found.get(r.get("page_sha256") or "") or found.get(r.get("page") or "")
        if page is None:
            raise HalluscopeError(
                f"article '{r['id']}': its page ({r.get('page')}, sha256 {r.get('page_sha256')}) is "
                f"not in {pages}; a release needs every original's page. Fix: pass --pages with the "
                "folder 'corpus collect' read"
            )
        extracted = page_text(page.read_text(encoding="utf-8", errors="replace"))
        start = extracted.find(r["text"])
        if start < 0:
            raise HalluscopeError(
                f"article '{r['id']}': its text is not in the extraction of {page.name} (edited "
                "after collect?). Fix: collect again, or release the page's text as collected"
            )
        out.append(
            {
                **{k: r.get(k) for k in META},
                "kind": "original",
                "page": page.name,
                "page_sha256": sha256_hex(page.read_bytes()),
                "extractor": extractor_version(),
                "offsets": [start, start + len(r["text"])],
                "text_sha256": sha256_hex(r["text"]),
            }
        )
    return [{"format": FORMAT, **r} for r in out]


def rehydrate(released: Sequence[dict], pages: Path) -> tuple[list[dict], list[dict]]:
    """Corpus rows rebuilt from the pages (hash-verified) and the problems (missing page, changed text)."""
    found = _pages(pages)
    rows, problems = [], []
    for r in released:
        if r.get("format") != FORMAT:
            raise HalluscopeError(
                f"row '{r.get('id')}' is not a {FORMAT} release row; pass a file 'corpus release' wrote"
            )
        meta = {k: r[k] for k in META if r.get(k) is not None}
        if r["kind"] == "translation":
            text = r["text"]
        else:
            page = found.get(r["page_sha256"]) or found.get(r["page"])
            if page is None:
                problems.append({"id": r["id"], "problem": f"page {r['page']} not found in {pages}"})
                continue
            start, end = r["offsets"]
            text = page_text(page.read_text(encoding="utf-8", errors="replace"))[start:end]
        if sha256_hex(text) != r["text_sha256"]:
            where = "its text" if r["kind"] == "translation" else f"page {r['page']}"
            problems.append(
                {
                    "id": r["id"],
                    "problem": f"text sha256 differs ({where} changed, or another extractor "
                    f"version; released with {r.get('extractor', '-')}, here {extractor_version()})",
                }
            )
            continue
        # the rows as 'collect' / 'translate' wrote them, key for key: the round trip is byte-identical
        head = {k: meta[k] for k in ("id", "language")}
        tail = {k: meta[k] for k in ("url", "outlet", "date", "topic") if k in meta}
        if r["kind"] == "translation":
            extra = {k: r[k] for k in ("translated_from", "translator", "valid") if r.get(k) is not None}
        else:
            extra = {"page": r["page"], "page_sha256": r["page_sha256"], "text_sha256": r["text_sha256"]}
        rows.append({**head, "text": text, **tail, **extra})
    return rows, problems
