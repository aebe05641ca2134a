"""Start-up: 'halluscope --help' imports no pipeline, and no command's --help imports the heavy libraries.

One subprocess walks the whole command tree asking every command for its --help (each command module imported
only as the lazy top-level group loads it), then lists the heavy modules it ended with."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("sklearn", "scipy", "matplotlib", "torch", "transformers")

WALK = r"""
import json, sys
from typer.core import TyperGroup
import halluscope.cli.main as m

top = m._lazy_group()
try:
    top.main(["--help"], prog_name="halluscope", standalone_mode=False)
except SystemExit:
    pass
after_top = sorted(k for k in sys.modules if k.startswith("halluscope."))

paths = []
def walk(cmd, path):
    paths.append(path)
    if hasattr(cmd, 'list_commands'):
        ctx = cmd.make_context(cmd.name, ['--help'], resilient_parsing=True)
        for name in cmd.list_commands(ctx):
            walk(cmd.get_command(ctx, name), path + [name])

ctx = top.make_context('halluscope', ['--help'], resilient_parsing=True)
for name in top.list_commands(ctx):
    walk(top.get_command(ctx, name), [name])
for path in paths:
    try:
        m._lazy_group().main([*path, "--help"], prog_name="halluscope", standalone_mode=False)
    except SystemExit:
        pass
heavy = sorted({k.split(".")[0] for k in sys.modules} & set(sys.argv[1:]))
print(json.dumps({"top": after_top, "paths": [" ".join(p) for p in paths], "heavy": heavy}))
"""


def test_help_of_every_command_imports_no_heavy_library():
    out = subprocess.run(
        [sys.executable, "-c", WALK, *HEAVY],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "COLUMNS": "100"},
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # the top-level --help lists the commands from cli/main.py's table: only the cli package itself is loaded
    assert all(k.startswith(("halluscope.cli", "halluscope.core.errors")) for k in got["top"]), got["top"]
    assert len(got["paths"]) > 30 and "mishap answer" in got["paths"] and "quickstart mishap" in got["paths"]
    assert got["heavy"] == [], f"--help imported {got['heavy']}"


def test_top_level_summaries_match_each_command():
    """The lazy listing's summaries (cli/main.py COMMANDS) say what each command's own help says first."""
    import typer

    from halluscope.cli.main import COMMANDS, _parent

    group = typer.main.get_command(_parent(COMMANDS))
    ctx = group.make_context("halluscope", ["--help"], resilient_parsing=True)
    assert group.list_commands(ctx) == sorted(COMMANDS) or set(group.list_commands(ctx)) == set(COMMANDS)
    for name, (_, _, summary) in COMMANDS.items():
        real = " ".join((group.get_command(ctx, name).help or "").split())
        # the summary may shorten the command's own help, never say something else: its first words are the same
        assert real.split()[:3] == summary.split()[:3], (name, summary, real[:200])
