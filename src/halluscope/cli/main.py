"""The 'halluscope' command line: one ``app`` per command module (one registration style), loaded lazily, and
``main``, the entry point that turns every error into one unwrapped line.

``COMMANDS`` is the one place a command is added: its name, the module and typer app that hold it, whether that
app is the command's group (``halluscope build ...``) or holds it among flat commands (``halluscope detect``), and
the one-line summary the top-level --help lists. A command's module is imported only when it runs or its own
--help is asked for, so 'halluscope --help' imports none of the pipelines (tests/cli/test_startup.py).
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import sys
from typing import Any

HELP = (
    "Build, run and score hallucination benchmarks for speech and audio language models.\n\n"
    "Start with 'halluscope quickstart': it builds a small trilingual spoken benchmark offline "
    "(rules rewrites -> the 'offline-best' speech preset: RHVoice for English and Russian, espeak-ng for Kazakh -> "
    "Whisper base), trains TF-IDF detectors on original text (O) and "
    "transcripts (T), and writes an HTML report. Every command takes its run directory as the positional RUN."
)

# name -> ("module:app", the app is the command's group, summary for the top-level --help); in --help order
COMMANDS: dict[str, tuple[str, bool, str]] = {
    "build": ("halluscope.cli.build:app", True, "Build a benchmark into a run directory."),
    "detect": (
        "halluscope.cli.detect:app",
        False,
        "Run a detector on a built benchmark for a task and input; "
        "predictions are stored and the report picks them up.",
    ),
    "report": (
        "halluscope.cli.report:app",
        False,
        "Write report/ (tables.md, a CSV per table, report.html with plots) with every section the run has.",
    ),
    "project": (
        "halluscope.cli.report:app",
        False,
        "Project wall time (and cost) of each stage to a paper-sized corpus from a run's stored timings.",
    ),
    "view": (
        "halluscope.cli.view:app",
        False,
        "Browse every item of a run: texts, clip, transcript, judges, "
        "detectors' predictions and raw replies; rate speech quality.",
    ),
    "score": ("halluscope.cli.score:app", True, "Score predictions or transcripts on their own."),
    "run": ("halluscope.cli.run:app", True, "Run a model on a benchmark set and write its predictions."),
    "corpus": ("halluscope.cli.corpus:app", True, "Inspect and validate corpora."),
    "models": (
        "halluscope.cli.corpus:models_app",
        False,
        "Table 8: the audio-language models halluscope runs, how (local or server), window, mitigations, commands.",
    ),
    "canary": (
        "halluscope.cli.canary:app",
        False,
        "Does the model hear? Ask a sample again with silence, noise "
        "and another clip; report how many answers stay the same.",
    ),
    "mishap": (
        "halluscope.cli.mishap:app",
        True,
        "MISHAP-Bench: adversarial open-ended questions over audio clips, "
        "a groundedness judge, rates, stance and human agreement.",
    ),
    "mitigation": (
        "halluscope.cli.mitigation:app",
        True,
        "Decoding-time mitigation sweeps: one method over "
        "strengths and seeds beside plain greedy and sampled decoding (the report's mitigation card).",
    ),
    # quickstart_mishap adds 'quickstart mishap' to quickstart.app
    "quickstart": (
        "halluscope.cli.quickstart_mishap:app",
        True,
        "The whole chain offline on the embedded demo corpus ('quickstart spoken', 'quickstart mishap').",
    ),
}


def _typer_app(name: str) -> Any:
    module, attr = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(module), attr)


def _parent(names: Any) -> Any:
    """A typer app holding the commands ``names`` exactly as the eager tree registers them."""
    from halluscope.cli.compat import App

    parent = App(help=HELP)
    added: set[int] = set()
    for name in names:
        sub = _typer_app(name)
        if COMMANDS[name][1]:
            parent.add_typer(sub, name=name)
        elif id(sub) not in added:  # a flat app holding several commands ('report' and 'project') is added once
            parent.add_typer(sub)
        added.add(id(sub))
    return parent


def _lazy_group() -> Any:
    import typer
    from typer.core import TyperCommand

    from halluscope.cli.compat import Group

    class LazyGroup(Group):
        """The top-level group: lists ``COMMANDS`` from their summaries, imports a command's module on use."""

        listing = False

        def list_commands(self, ctx: Any) -> list[str]:
            return list(COMMANDS)

        def get_command(self, ctx: Any, name: str) -> Any:
            if name not in COMMANDS:
                return None
            if self.listing:  # the top-level --help: the summary, nothing imported
                return TyperCommand(name, help=COMMANDS[name][2], short_help=COMMANDS[name][2])
            group = typer.main.get_command(_parent([name]))
            return group.get_command(ctx, name)

        def format_help(self, ctx: Any, formatter: Any) -> None:
            self.listing = True
            try:
                super().format_help(ctx, formatter)
            finally:
                self.listing = False

    # plain click help at the top (typer's rich renderer costs a third of a second to import)
    return LazyGroup(name="halluscope", help=HELP, no_args_is_help=True, rich_markup_mode=None)


def __getattr__(name: str) -> Any:
    # 'from halluscope.cli.main import app': the whole typer tree, every command module imported (tests, docs)
    if name == "app":
        return _parent(COMMANDS)
    raise AttributeError(f"module 'halluscope.cli.main' has no attribute '{name}'")


def _is_validation_error(exc: BaseException) -> bool:
    # pydantic's ValidationError, without importing pydantic when nothing has (a --help never does)
    core = sys.modules.get("pydantic_core")
    return core is not None and isinstance(exc, core.ValidationError)


def main() -> None:
    from halluscope.core.errors import HalluscopeError

    try:
        _lazy_group().main(prog_name="halluscope")
    except HalluscopeError as exc:
        from rich.markup import escape

        from halluscope.core.stages import console

        # soft_wrap: a path or message is never broken across lines; escape: '[music]' in a message is not markup
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - sorted below
        _fail(exc)


def _fail(exc: Exception) -> None:
    """Exit 2 with one line for invalid options and the machine's refusals; exit 1 with a traceback file for a bug."""
    if _is_validation_error(exc):
        # option values checked by the pydantic config models: one line per problem, named by option
        from halluscope.core.stages import console

        lines = [
            f"--{'-'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        ]
        console.print("[red]error:[/] invalid options:\n  " + "\n  ".join(lines), highlight=False, soft_wrap=True)
        sys.exit(2)
    if isinstance(exc, (OSError, sqlite3.Error)):
        # the machine said no (disk full, permission denied, a folder where a file should be, a locked store)
        from rich.markup import escape

        from halluscope.core.stages import console

        console.print(
            f"[red]error:[/] {escape(f'{type(exc).__name__}: {exc}')}. Fix: check the path, its "
            "permissions and free disk space, then run the command again (finished work is kept)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)
    # a bug: one line here, the traceback in a file
    import tempfile
    import traceback

    fd, log = tempfile.mkstemp(prefix="halluscope-traceback-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        from halluscope.core.fs import redacted_argv

        fh.write(" ".join(redacted_argv(sys.argv)) + "\n\n" + traceback.format_exc())
    first = (str(exc).splitlines() or [""])[0][:500]
    print(f"internal error: {type(exc).__name__}: {first} (full traceback: {log}; please report it)", file=sys.stderr)
    sys.exit(1)
