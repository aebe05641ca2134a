"""Error types that carry enough context to fix the problem."""

from __future__ import annotations

from dataclasses import dataclass


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


@dataclass(frozen=True)
class Problem:
    """One bad row or field of an input file (see Problems)."""

    message: str
    file: str | None = None
    row: int | None = None
    field: str | None = None
    fix: str | None = None

    def text(self, *, with_file: bool = True) -> str:
        return str(
            InputError(
                self.message, file=self.file if with_file else None, row=self.row, field=self.field, fix=self.fix
            )
        )


class InputProblems(InputError):
    """Every problem found in one input: the first ``SHOWN`` are listed, the rest counted (exit 2 like any InputError)."""

    SHOWN = 20

    def __init__(
        self,
        problems: list[Problem],
        *,
        what: str,
        file: str | None = None,
        fix: str | None = None,
        total: int | None = None,
    ) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file or "", p.row or 0))
        total = max(total or 0, len(self.problems))
        lines = [p.text(with_file=p.file != file) for p in self.problems[: self.SHOWN]]
        more = f"\n  ... and {total - len(lines)} more" if total > len(lines) else ""
        text = f"{total} problem(s) in the {what}:\n  " + "\n  ".join(lines) + more
        # the fix for the whole file on its own line, after each problem's own fix
        HalluscopeError.__init__(self, (f"file {file}: " if file else "") + text + (f"\nFix: {fix}" if fix else ""))
        self.file, self.row, self.field, self.fix = file, None, None, fix


class Problems:
    """The one problem policy for input files: collect every problem, then raise them all together (nothing from a
    file with problems is used). At most ``keep`` are held in memory; the rest are only counted."""

    def __init__(self, file: str | None = None, *, keep: int = 10_000) -> None:
        self.file, self.keep = file, keep
        self.items: list[Problem] = []
        self.count = 0

    def add(
        self,
        message: str,
        *,
        row: int | None = None,
        field: str | None = None,
        fix: str | None = None,
        file: str | None = None,
    ) -> None:
        self.count += 1
        if len(self.items) < self.keep:
            self.items.append(Problem(message, file=file or self.file, row=row, field=field, fix=fix))

    def __bool__(self) -> bool:
        return self.count > 0

    def __len__(self) -> int:
        return self.count

    def raise_if_any(self, what: str, *, fix: str | None = None) -> None:
        if self.count:
            raise InputProblems(self.items, what=what, file=self.file, fix=fix, total=self.count)


class ItemError(HalluscopeError):
    """One item of a stage failed; it is recorded as failed and reported, the stage goes on."""


class MissingExtraError(HalluscopeError):
    """An optional dependency is missing; names the pip extra that provides it."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"'{package}' is not installed. Install it with: pip install 'halluscope[{extra}]'")
