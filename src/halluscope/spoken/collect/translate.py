"""'corpus translate': machine translation with any chat backend, validated (seed 000, 3.2: every fake translated
into the other language, translations validated). Each translation is checked three ways and the report lists
every check per item: back-translation similarity to the source (character 3-gram F-score after translating back),
the length ratio translation/source, and the language id of the translation. A translation failing a check is
kept but flagged (``valid`` false); a call that gives no text is a failure, never an empty row. Every call goes
through the store given (the command's: OUT.store/), so a rerun is answered from it and makes no call."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import sha256_hex

NAMES = {"en": "English", "ru": "Russian", "kk": "Kazakh"}
PROMPT = (
    "Translate the following news text from {SRC} into {DST}. Keep every name, number and date; keep the "
    "paragraphs. Return ONLY the translation.\n\n{TEXT}"
)
PROMPT_VERSION = sha256_hex(PROMPT, 12)


def char_f(a: str, b: str, n: int = 3) -> float:
    """Character n-gram F-score of two texts (chrF-like, one order), 0..1."""

    def grams(s: str) -> Counter:
        s = re.sub(r"\s+", " ", s.lower()).strip()
        return Counter(s[i : i + n] for i in range(max(len(s) - n + 1, 0)))

    ga, gb = grams(a), grams(b)
    common = sum((ga & gb).values())
    if not common:
        return 0.0
    p, r = common / sum(gb.values()), common / sum(ga.values())
    return 2 * p * r / (p + r)


def translate_rows(
    rows: Sequence[dict],
    *,
    backend_spec: str,
    source: str,
    target: str,
    min_back: float = 0.5,
    length: tuple[float, float] = (0.6, 1.6),
    config: object | None = None,
    store: object | None = None,
) -> tuple[list[dict], dict]:
    """Translations of the ``source``-language rows into ``target`` (ids '<id>~<target>') and the report.
    ``store``: a Store whose call log answers requests already made (the report counts them as ``from_store``)."""
    from halluscope.backends.llm import create_backend
    from halluscope.backends.runner import run_calls
    from halluscope.core.records import ChatMessage
    from halluscope.spoken.generate.llm import LANGID_CANDIDATES, language_of

    if source == target or source not in NAMES or target not in NAMES:
        raise HalluscopeError(
            f"--from/--to expect two different languages of {', '.join(NAMES)}; got {source}->{target}"
        )
    todo = [r for r in rows if r["language"] == source]
    if not todo:
        raise HalluscopeError(f"no {source} rows to translate; check --from")
    backend = create_backend(backend_spec, config=config)  # type: ignore[arg-type]

    def ask(text: str, src: str, dst: str, tag: str):  # noqa: ANN202
        prompt = PROMPT.format(SRC=NAMES[src], DST=NAMES[dst], TEXT=text)
        return backend.request([ChatMessage(role="user", content=prompt)], tag=tag)  # type: ignore[attr-defined]

    async def fn(caller, r: dict) -> dict | str:  # noqa: ANN001
        there = await caller.complete(ask(r["text"], source, target, f"translate:{r['id']}"))
        if there.status != "ok" or not (there.text or "").strip():
            return f"translation: {there.status} ({there.error or 'empty reply'})"
        back = await caller.complete(ask(there.text.strip(), target, source, f"back:{r['id']}"))
        if back.status != "ok" or not (back.text or "").strip():
            return f"back-translation: {back.status} ({back.error or 'empty reply'})"
        return {"translation": there.text.strip(), "back": back.text.strip()}

    summary = run_calls(
        store,  # type: ignore[arg-type]
        None,  # no stage: the output file is the result; the store's call log answers repeated requests
        [(r["id"], r) for r in todo],
        backend,
        fn,
        None,  # type: ignore[arg-type]
        description=f"translate {source}->{target} ({backend_spec})",
        quiet=True,
    )
    out, checks = [], []
    for r in todo:
        got = summary.results.get(r["id"])
        if got is None:
            checks.append({"id": r["id"], "failed": summary.failed.get(r["id"], "no result")})
            continue
        text = got["translation"]
        ratio = len(text) / max(len(r["text"]), 1)
        lang = language_of(text, LANGID_CANDIDATES)
        back = round(char_f(r["text"], got["back"]), 4)
        c = {
            "id": r["id"],
            "back_similarity": back,
            "length_ratio": round(ratio, 4),
            "language_id": lang,
            "back_ok": back >= min_back,
            "length_ok": length[0] <= ratio <= length[1],
            "language_ok": lang == target,
        }
        c["valid"] = c["back_ok"] and c["length_ok"] and c["language_ok"]
        checks.append(c)
        out.append(
            {
                "id": f"{r['id']}~{target}",
                "language": target,
                "text": text,
                "url": r.get("url"),
                "outlet": r.get("outlet"),
                "date": r.get("date"),
                "topic": r.get("topic"),
                "translated_from": r["id"],
                "translator": backend_spec,
                "valid": c["valid"],
            }
        )
    report = {
        "translator": backend_spec,
        "prompt": PROMPT_VERSION,
        "from": source,
        "to": target,
        "thresholds": {"back_similarity": min_back, "length_ratio": list(length), "language_id": target},
        "asked": len(todo),
        "translated": len(out),
        "failed": len(todo) - len(out),
        "valid": sum(c.get("valid", False) for c in checks),
        "calls": summary.stats.calls,
        "from_store": summary.stats.from_store,
        "items": checks,
    }
    return out, report
