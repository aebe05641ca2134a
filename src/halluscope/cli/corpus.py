"""'halluscope corpus check' and 'halluscope models': what goes in (corpora) and what can be run (Table 8)."""

from __future__ import annotations

import json

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import Json
from halluscope.core.stages import console

app = App(help="Inspect and validate corpora.")
models_app = App()


@app.command("check")
def corpus_check(corpus: str = typer.Argument(..., help="Corpus file or 'demo'."), json_out: Json = False) -> None:
    """Validate a corpus file and print counts per language and topic."""
    from collections import Counter

    from halluscope.cli.build import show_notes
    from halluscope.spoken.corpus import load_corpus

    loaded = load_corpus(corpus)
    show_notes(loaded.notes)
    arts = loaded.articles
    counts = sorted(Counter((a.language, a.topic or "-") for a in arts).items())
    if json_out:
        print(json.dumps({"articles": len(arts), "by_language_topic": [
            {"language": lang, "topic": topic, "n": n} for (lang, topic), n in counts]}, indent=2, ensure_ascii=False))
        return
    console.print(f"[green]ok[/]: {len(arts)} articles")
    for (lang, topic), n in counts:
        console.print(f"  {lang} {topic}: {n}")


@models_app.command("models")
def models_cmd(json_out: Json = False) -> None:
    """Table 8: the audio-language models halluscope runs, how (local or server), window, mitigations, commands."""
    from halluscope.backends.audio_lm.table8 import markdown, table8

    rows = table8()
    print(json.dumps(rows, indent=2, ensure_ascii=False, default=str) if json_out else markdown(rows))
