"""Parquet input for read_rows: the whole table through pyarrow, a missing column or a bad file one InputError."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from halluscope.core.errors import InputError

if TYPE_CHECKING:
    from halluscope.core.inputs import Field


def _parquet(p: Path, fields: Sequence[Field], what: str) -> tuple[list[str], list[tuple[int, Any]]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(p)
        columns = list(table.column_names)
        missing = [f.name for f in fields if f.required and f.name not in columns]
        if missing:
            raise InputError(
                f"missing column(s) {', '.join(missing)}; the file has {', '.join(columns) or 'none'}",
                file=str(p),
                field=missing[0],
                fix=f"the {what} needs the columns {', '.join(f.name for f in fields if f.required)}",
            )
        return columns, list(enumerate(table.to_pylist(), start=1))
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad or truncated file
        raise InputError(
            f"cannot read parquet ({type(exc).__name__}: {exc})",
            file=str(p),
            fix="check that the file is a complete parquet file",
        ) from None
