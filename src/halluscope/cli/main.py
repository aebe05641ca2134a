"""The 'halluscope' command line: the app, made of one ``app`` per command module (one registration style), and
``main``, the entry point that turns every error into one unwrapped line."""

from __future__ import annotations

import os
import sqlite3
import sys

from halluscope.cli import build, corpus, detect, mishap, quickstart, report, run, score, view
from halluscope.cli import quickstart_mishap  # noqa: F401 - adds 'quickstart mishap' to quickstart.app
from halluscope.cli.compat import App
from halluscope.core.errors import HalluscopeError
from halluscope.core.stages import console

app = App(
    help="Build, run and score hallucination benchmarks for speech and audio language models.\n\n"
    "Start with 'halluscope quickstart': it builds a small trilingual spoken benchmark offline "
    "(rules rewrites -> the 'offline-best' speech preset: RHVoice for English and Russian, espeak-ng for Kazakh -> "
    "Whisper base), trains TF-IDF detectors on original text (O) and "
    "transcripts (T), and writes an HTML report. Every command takes its run directory as the positional RUN.",
)
app.add_typer(build.app, name="build")
app.add_typer(detect.app)
app.add_typer(report.app)  # 'report' and 'project'
app.add_typer(view.app)
app.add_typer(score.app, name="score")
app.add_typer(run.app, name="run")  # 'run closedform': an audio model on a closed-form set
app.add_typer(corpus.app, name="corpus")
app.add_typer(corpus.models_app)  # 'models': Table 8 from the adapter registry
app.add_typer(mishap.app, name="mishap")
app.add_typer(quickstart.app, name="quickstart")


def main() -> None:
    from pydantic import ValidationError

    try:
        app()
    except HalluscopeError as exc:
        from rich.markup import escape

        # soft_wrap: a path or message is never broken across lines; escape: '[music]' in a message is not markup
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except ValidationError as exc:
        # option values checked by the pydantic config models: one line per problem, named by option
        lines = [f"--{'-'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']} (got {e.get('input')!r})"
                 for e in exc.errors()]
        console.print("[red]error:[/] invalid options:\n  " + "\n  ".join(lines), highlight=False, soft_wrap=True)
        sys.exit(2)
    except (OSError, sqlite3.Error) as exc:
        # the machine said no (disk full, permission denied, a folder where a file should be, a locked store)
        from rich.markup import escape

        console.print(f"[red]error:[/] {escape(f'{type(exc).__name__}: {exc}')}. Fix: check the path, its "
                      "permissions and free disk space, then run the command again (finished work is kept)",
                      highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - a bug: one line here, the traceback in a file
        import tempfile
        import traceback

        fd, log = tempfile.mkstemp(prefix="halluscope-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(" ".join(sys.argv) + "\n\n" + traceback.format_exc())
        first = (str(exc).splitlines() or [""])[0][:500]
        print(f"internal error: {type(exc).__name__}: {first} (full traceback: {log}; please report it)",
              file=sys.stderr)
        sys.exit(1)
