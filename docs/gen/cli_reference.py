"""Writes reference/cli.md from the command tree itself (mkdocs-gen-files runs it at every `mkdocs build`): every
command's usage, help and options as `halluscope <command> --help` prints them, so the page cannot go stale."""

from __future__ import annotations

import mkdocs_gen_files
import typer

from halluscope.cli.main import COMMANDS, HELP, _parent


def _walk(cmd, path: list[str], out: list[str]) -> None:
    ctx = cmd.make_context(" ".join(["halluscope", *path]), ["--help"], resilient_parsing=True)
    level = "#" * min(2 + len(path) - 1, 6) if path else "##"
    if path:
        out.append(f"{level} `halluscope {' '.join(path)}`\n")
    # click's plain formatter: the text is what --help prints without colours
    cmd.rich_markup_mode = None
    out.append("```text\n" + cmd.get_help(ctx).rstrip() + "\n```\n")
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            _walk(cmd.get_command(ctx, name), [*path, name], out)


group = typer.main.get_command(_parent(COMMANDS))
lines = ["# Command-line reference\n", "Generated from the command tree at every documentation build "
         "(`docs/gen/cli_reference.py`); each block is what `--help` prints.\n", HELP.replace("\n\n", "\n\n") + "\n"]
ctx = group.make_context("halluscope", ["--help"], resilient_parsing=True)
for name in group.list_commands(ctx):
    _walk(group.get_command(ctx, name), [name], lines)
with mkdocs_gen_files.open("reference/cli.md", "w") as fh:
    fh.write("\n".join(lines))
