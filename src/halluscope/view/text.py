"""What the viewer shows of a text: a reply's readable text and a transcript's word alignment with its marks."""

from __future__ import annotations

import json
from collections.abc import Sequence

import jiwer

from halluscope.metrics.asr import normalize_for_wer


def _mark(text: str, spans: Sequence[tuple[int, str]]) -> tuple[list[list], list[int]]:
    """``text`` cut into [piece, edit index or None] segments marking each (edit, span); edits not found listed."""
    taken: list[tuple[int, int, int]] = []
    missing = []
    for i, span in spans:
        if not span:
            continue
        start = 0
        while (at := text.find(span, start)) >= 0 and any(a < at + len(span) and at < b for a, b, _ in taken):
            start = at + 1
        if at < 0:
            missing.append(i)
        else:
            taken.append((at, at + len(span), i))
    out: list[list] = []
    pos = 0
    for a, b, i in sorted(taken):
        if a > pos:
            out.append([text[pos:a], None])
        out.append([text[a:b], i])
        pos = b
    if pos < len(text):
        out.append([text[pos:], None])
    return out, missing


def alignment(reference: str, hypothesis: str) -> dict | None:
    """Word alignment of the normalised texts as jiwer computes it: chunks of equal/substitute/insert/delete."""
    ref, hyp = normalize_for_wer(reference), normalize_for_wer(hypothesis)
    if not ref:
        return None
    out = jiwer.process_words(ref, hyp)
    rw, hw = out.references[0], out.hypotheses[0]
    chunks = [
        {"op": c.type, "ref": rw[c.ref_start_idx : c.ref_end_idx], "hyp": hw[c.hyp_start_idx : c.hyp_end_idx]}
        for c in out.alignments[0]
    ]
    return {
        "chunks": chunks,
        "hits": out.hits,
        "substitutions": out.substitutions,
        "deletions": out.deletions,
        "insertions": out.insertions,
        "wer": out.wer,
    }


def reply_text(response: object) -> str | None:
    """The text of a stored reply: a chat completion's message content, or the stored body as JSON."""
    if response is None:
        return None
    if isinstance(response, dict):
        for path in (("choices", 0, "message", "content"), ("text",), ("content",)):
            cur: object = response
            try:
                for p in path:
                    cur = cur[p]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                continue
            if isinstance(cur, str):
                return cur
    return json.dumps(response, ensure_ascii=False, indent=1)
