"""Writes reference/slow-tests.md from the test files (mkdocs-gen-files runs it at every `mkdocs build`): every test
or test module marked `slow` (left out of the default run), with the reason its comment or docstring gives, so the
list cannot go stale."""

from __future__ import annotations

import ast
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[2]


def _is_slow(node: ast.AST) -> bool:
    return "mark.slow" in ast.unparse(node)


def _why(lines: list[str], lineno: int, doc: str | None) -> str:
    line = lines[lineno - 1]
    if "#" in line:
        return line.split("#", 1)[1].strip()
    text = (doc or "").strip().split("\n\n")[0].replace("\n", " ")
    return text if len(text) <= 200 else text[:197].rsplit(" ", 1)[0] + " ..."


rows = []
for path in sorted((ROOT / "tests").rglob("test_*.py")):
    text = path.read_text(encoding="utf-8")
    if "mark.slow" not in text:
        continue
    tree, lines, rel = ast.parse(text), text.splitlines(), path.relative_to(ROOT).as_posix()
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
            and _is_slow(node.value)
        ):
            rows.append((rel, "(the whole file)", _why(lines, node.lineno, ast.get_docstring(tree))))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if _is_slow(deco):
                    params = " (some parameters)" if "parametrize" in ast.unparse(deco) else ""
                    rows.append((rel, f"`{node.name}`{params}", _why(lines, deco.lineno, ast.get_docstring(node))))
                    break

out = [
    "# Slow tests\n",
    "Generated from the test files at every documentation build (`docs/gen/slow_tests.py`). These tests are marked "
    "`slow` and left out of the default run (`bash scripts/test.sh`); run them with `bash scripts/test.sh -m slow`, "
    "or one file with `bash scripts/test.sh -m slow tests/<file>`. The llama.cpp server tests are marked "
    "`llama_server` instead (`pytest -m llama_server tests/backends/llm/test_llama_server.py`, after "
    "`scripts/build_llama_server.sh`).\n",
    "| file | test | why it is slow |",
    "|---|---|---|",
]
out += [f"| `{f}` | {t} | {w.replace('|', '/')} |" for f, t, w in rows]
with mkdocs_gen_files.open("reference/slow-tests.md", "w") as fh:
    fh.write("\n".join(out) + "\n")
