"""Links from report cells to the viewer's filtered list of the items behind them.

The report lives in RUN/report/; the links point at an exported viewer in RUN/view/ ('halluscope view RUN
--export RUN/view'); the fragment is the viewer's permalink format (filters as URL parameters).
"""

from __future__ import annotations

from urllib.parse import urlencode

VIEW_PAGE = "../view/index.html"
_TYPES = {"C": "contradiction", "F": "fabrication", "I": "context_inconsistency"}


def href(**filters: object) -> str:
    return VIEW_PAGE + "#" + urlencode({k: v for k, v in filters.items() if v not in (None, "", "all")})


def closedform_item(benchmark: str, run: str | None, item_id: str) -> str:
    """The viewer's id of a closed-form item ('view --closedform FORMAT=FILE'): format, run (AHa files), item id."""
    return f"{benchmark}:{run + ':' if run else ''}{item_id}"


def item_href(item_id: str, page: str = VIEW_PAGE) -> str:
    """The viewer's page of one item (its permalink: the 'item' parameter opens it)."""
    return page + "#" + urlencode({"item": item_id})


def view_cell_link(row: dict, key: str) -> str | None:
    """The item column of a table whose rows carry their viewer page under 'view'."""
    return row.get("view") if key == "id" else None


def dataset_link(row: dict, key: str) -> str | None:
    """Table 1: a language row; a column picks originals, rewrites, a type or a severity."""
    lang = {"lang": row.get("language"), "kind": "spoken"}
    if key == "original":
        return href(**lang, label="original")
    if key == "hallucinated":
        return href(**lang, label="hallucinated")
    if key in _TYPES:
        return href(**lang, type=_TYPES[key])
    if key in ("mild", "moderate", "severe"):
        return href(**lang, severity=key)
    if key in ("language", "total", "audio_minutes", "transcripts"):
        return href(**lang)
    return None


def asr_link(row: dict, key: str) -> str | None:
    return href(lang=row.get("language"), kind="spoken")


def table2_link(row: dict, key: str) -> str | None:
    """Table 2: the test items of that language a detector run predicted; O cells the text run, T the transcript run."""
    inp = "text" if key.startswith("O_") else ("transcript" if key.startswith("T_") else None)
    if inp is None:
        return href(lang=row.get("language"), split="test", kind="spoken")
    from halluscope.core.keys import DetectRunKey

    return href(run=str(DetectRunKey(row["detector"], row["task"], inp)), lang=row.get("language"), split="test")
