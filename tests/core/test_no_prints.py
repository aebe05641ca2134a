"""Library code returns summaries and the CLI renders them: no module outside halluscope/cli/ prints, neither
through print(...) nor through ``console.print(...)`` / ``console.log(...)`` (progress bars through
core.stages.progress are the one display the library keeps)."""

from __future__ import annotations

import ast
from pathlib import Path

import halluscope

PACKAGE = Path(halluscope.__file__).parent
CONSOLE_METHODS = {"print", "log"}


def print_calls(source: str) -> list[tuple[int, str]]:
    """(line, what) of every print(...) call and every console.print / console.log call in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print":
            found.append((node.lineno, "print(...)"))
        elif (
            isinstance(f, ast.Attribute)
            and f.attr in CONSOLE_METHODS
            and isinstance(f.value, ast.Name)
            and f.value.id == "console"
        ):
            found.append((node.lineno, f"console.{f.attr}(...)"))
    return found


def library_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "cli")


def test_the_check_finds_each_kind_of_print():
    source = (
        "import sys\nprint('x')\nconsole.print('y')\nconsole.log('z')\n"
        "console.rule('not a print')\nself.console.print('held elsewhere')\nfingerprint('a')\n"
    )
    assert print_calls(source) == [(2, "print(...)"), (3, "console.print(...)"), (4, "console.log(...)")]


def test_library_modules_do_not_print():
    modules = library_modules()
    assert PACKAGE / "core" / "stages.py" in modules
    assert not any(p.relative_to(PACKAGE).parts[0] == "cli" for p in modules)
    offenders = [
        f"{p.relative_to(PACKAGE.parent)}:{line}: {what}"
        for p in modules
        for line, what in print_calls(p.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "library code prints; return the text as data and render it in halluscope/cli/:\n" + "\n".join(offenders)
    )
