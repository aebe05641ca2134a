"""The scorers' --reader option: 'rules' or an LLM that reads every yes/no reply a second time; its lines in the
console and its viewer beside a --report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from halluscope.core.stages import console

READER_HELP = (
    "'rules' (strict mode's reader only) or 'llm:<spec>' (any chat backend, e.g. llm:openai/gpt-4o-mini or "
    "llm:hf/smollm2-135m-instruct) to read every yes/no reply a second time given its question and add the "
    "reader-sensitivity table; its calls are kept in --reader-store and answered from there on a rerun."
)
Reader = Annotated[str, typer.Option("--reader", help=READER_HELP)]
ReaderStore = Annotated[
    Optional[Path],
    typer.Option(
        "--reader-store",
        help="Run directory that keeps the LLM reader's calls (default: <first file>.reader/ beside it).",
    ),
]


def llm_reader(reader: str, store: Optional[Path], first: Path):
    """The LLM reader a --reader value names, or None for 'rules'."""
    if reader == "rules":
        return None
    if not reader.startswith("llm:") or len(reader) <= 4:
        from halluscope.core.errors import InputError

        raise InputError(
            f"got --reader {reader!r}",
            field="--reader",
            fix="use --reader rules, or --reader llm:<spec> such as llm:openai/gpt-4o-mini",
        )
    from halluscope.closedform.llmreader import LLMReader

    return LLMReader(reader[4:], store or first.with_name(first.name + ".reader"))


def print_reader(tables: dict) -> None:
    """The LLM reader's lines: what it read, how its output was shaped, and both readers' figures."""
    for s in tables.get("reader_summary", []):
        console.print(
            f"reader sensitivity: rules vs {s['reader']} agree on {s['agree']} of {s['n']} yes/no replies; "
            f"the LLM reader read {s['read']} of {s['n']} (structured output: {s['structured']}; "
            + ", ".join(f"{n} {how}" for how, n in s["by_shape"].items())
            + f"); calls kept in {s['store']}",
            highlight=False,
            markup=False,
        )
        for row in tables["reader_sensitivity"]:
            console.print(
                "  "
                + "  ".join(
                    f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={'-' if v is None else v}" for k, v in row.items()
                ),
                highlight=False,
                markup=False,
            )


def reader_report(result, reader, report: Path) -> Optional[str]:
    """With an LLM reader, the scored file's viewer exported beside the report (the items the two readers read
    apart link to their pages); its path relative to the report, or None without a reader."""
    if reader is None or "reader_disagreements" not in result.tables:
        return None
    # the file as it was scored here (--domain, --sampling and every file of the command), over the reader's store
    from halluscope.view.closedform import scored
    from halluscope.view.server import export_view

    export_view(reader.store_dir, report / "view", closedform=[scored(result)])  # type: ignore[list-item]
    return "view/index.html"
