"""Error types that carry enough context to fix the problem."""

from __future__ import annotations


class HalluscopeError(Exception):
    """Base class: every message says what was expected, what was received and how to fix it."""


class InputError(HalluscopeError):
    """Bad user input: names the file, row and field."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.file, self.row, self.field, self.fix = file, row, field, fix
        where = ", ".join(
            part
            for part in (
                f"file {file}" if file else "",
                f"row {row}" if row is not None else "",
                f"field '{field}'" if field else "",
            )
            if part
        )
        text = f"{where}: {message}" if where else message
        if fix:
            text += f" Fix: {fix}"
        super().__init__(text)


class ItemError(HalluscopeError):
    """One item of a stage failed; it is recorded as failed and reported, the stage goes on."""


class MissingExtraError(HalluscopeError):
    """An optional dependency is missing; names the pip extra that provides it."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"'{package}' is not installed. Install it with: pip install 'halluscope[{extra}]'"
        )
