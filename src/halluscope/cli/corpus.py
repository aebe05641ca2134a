"""'halluscope corpus check' and 'halluscope models': what goes in (corpora) and what can be run (Table 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import AllowPartial, Json, LlmConfig, Options, model_with
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
        print(
            json.dumps(
                {
                    "articles": len(arts),
                    "by_language_topic": [{"language": lang, "topic": topic, "n": n} for (lang, topic), n in counts],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
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


# ---- the data pipeline (Lost in Speech 000, 3.1-3.2 and its release terms): spoken/collect/ -------------------


def _report(path: Optional[Path], default: Path, doc: dict) -> Path:
    from halluscope.core.fs import atomic_write

    target = path or default
    atomic_write(target, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return target


@app.command("collect")
def corpus_collect(
    pages: Path = typer.Argument(
        ...,
        help="A folder of saved .html pages, or a .jsonl/.csv list with 'page' (the saved file) and optional url, id, language, topic, outlet.",
    ),
    out: Path = typer.Option(..., "--out", help="Corpus file to write (.jsonl)."),
    langs: str = typer.Option("en,ru,kk", help="Languages to keep."),
    json_out: Json = False,
) -> None:
    """Extract articles from saved news pages with trafilatura (text, outlet, date, language, topic); each row keeps
    its page's file name and sha256 for 'corpus release'. Lost in Speech (000) collected Kazakhstani news this way.

    Example: halluscope corpus collect pages/ --out corpus.jsonl
    """
    from halluscope.spoken.collect.pages import collect_pages, read_page_list, write_jsonl

    rows, skipped = collect_pages(read_page_list(pages), langs=tuple(x.strip() for x in langs.split(",") if x.strip()))
    write_jsonl(out, rows)
    summary = {"corpus": str(out), "articles": len(rows), "skipped": skipped}
    if json_out:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    for s in skipped:
        console.print(f"[yellow]skipped[/] {s['page']}: {s['reason']}")
    console.print(f"[green]collected[/] {len(rows)} articles into {out}")


@app.command("dedup")
def corpus_dedup(
    corpus: Path = typer.Argument(..., help="Corpus .jsonl (from 'corpus collect')."),
    out: Path = typer.Option(..., "--out", help="Corpus without near-duplicates (.jsonl)."),
    threshold: float = typer.Option(
        0.8, help="Jaccard similarity over word shingles at which two texts are duplicates."
    ),
    shingle: int = typer.Option(3, help="Words per shingle."),
    num_perm: int = typer.Option(128, help="MinHash permutations."),
    report: Optional[Path] = typer.Option(None, help="Report file (default: OUTPUT with .dedup.json)."),
    json_out: Json = False,
) -> None:
    """Remove near-duplicate articles per language (MinHash LSH, datasketch; exact Jaccard confirms each pair); the
    report records the settings and every removed pair."""
    from halluscope.spoken.collect.dedup import dedup
    from halluscope.spoken.collect.pages import read_jsonl, write_jsonl

    kept, doc = dedup(read_jsonl(corpus), threshold=threshold, shingle=shingle, num_perm=num_perm)
    write_jsonl(out, kept)
    path = _report(report, out.with_suffix(".dedup.json"), doc)
    if json_out:
        print(json.dumps({**doc, "report": str(path)}, indent=2, ensure_ascii=False))
        return
    for p in doc["pairs"]:
        console.print(f"  removed {p['removed']} (duplicate of {p['kept']}, Jaccard {p['jaccard_exact']:.3f})")
    console.print(f"[green]kept[/] {doc['kept']} of {doc['input']} articles (threshold {threshold}); report: {path}")


@app.command("translate")
def corpus_translate(
    corpus: Path = typer.Argument(..., help="Corpus .jsonl."),
    out: Path = typer.Option(..., "--out", help="The corpus plus the translations (.jsonl)."),
    source: str = typer.Option(..., "--from", help="Language to translate from (en, ru, kk)."),
    to: str = typer.Option(..., "--to", help="Language to translate into."),
    model: str = typer.Option(
        ..., help="Chat backend spec, e.g. openai/<model> (any OpenAI-compatible server) or hf/<dir>."
    ),
    min_back: float = typer.Option(0.5, help="Lowest back-translation similarity (character 3-gram F) counted valid."),
    report: Optional[Path] = typer.Option(None, help="Validation report (default: OUTPUT with .translate.json)."),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - typer reads the default; options of the --model
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Translate one language's articles into another with any chat backend, validated by back-translation, length
    ratio and language id (Lost in Speech (000) translated every fake into the other language). Translations are
    added as rows '<id>~<to>' with translated_from and valid. Every model call is kept in the store OUTPUT.store/ (the
    same command again is answered from it, no call); when translations fail beyond the share --allow-partial
    names, nothing is written (exit 2)."""
    from halluscope.core.outcome import StepOutcome, check_outcomes
    from halluscope.core.store import Store
    from halluscope.spoken.collect.pages import read_jsonl, write_jsonl
    from halluscope.spoken.collect.translate import translate_rows

    rows = read_jsonl(corpus)
    config = None
    if llm_config is not None:
        from halluscope.backends.llm import load_llm_config

        config = load_llm_config(llm_config)
    spec = model_with(model, option) or model
    with Store(out.with_name(out.name + ".store")) as calls:
        new, doc = translate_rows(
            rows, backend_spec=spec, source=source, target=to, min_back=min_back, config=config, store=calls
        )
    failed = {c["id"]: c["failed"] for c in doc["items"] if "failed" in c}
    outcome = StepOutcome(
        "translate",
        doc["asked"],
        doc["translated"],
        failed,
        fix=f"check the model {spec} (its server and replies), then run the same command again; nothing was "
        f"written to {out}",
    )
    kept = f"in {calls.path} (a rerun makes no call for them)"
    notes = check_outcomes([outcome], command="corpus translate", allow_partial=allow_partial, kept=kept)
    for note in notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    write_jsonl(out, [*rows, *new])
    path = _report(report, out.with_suffix(".translate.json"), doc)
    if json_out:
        print(json.dumps({**{k: v for k, v in doc.items() if k != "items"}, "report": str(path)}, indent=2))
        return
    console.print(
        f"[green]translated[/] {doc['translated']} of {doc['asked']} ({doc['valid']} valid, "
        f"{doc['failed']} failed; {doc['calls']} model calls, {doc['from_store']} from the store); report: {path}"
    )


@app.command("release")
def corpus_release(
    corpus: Path = typer.Argument(..., help="Corpus .jsonl (collected, deduplicated, translated)."),
    out: Path = typer.Option(..., "--out", help="Release file (.jsonl): no original text."),
    pages: Path = typer.Option(..., help="Folder of the saved pages 'corpus collect' read."),
    json_out: Json = False,
) -> None:
    """Write a release without the original texts (Lost in Speech (000) release terms): URL, outlet, date, topic, the
    page's sha256, extraction offsets and the text's sha256; own translations keep their text."""
    from halluscope.spoken.collect.pages import read_jsonl, write_jsonl
    from halluscope.spoken.collect.release import release

    rows = release(read_jsonl(corpus), pages)
    write_jsonl(out, rows)
    n = sum(r["kind"] == "original" for r in rows)
    if json_out:
        print(json.dumps({"release": str(out), "originals": n, "translations": len(rows) - n}, indent=2))
        return
    console.print(f"[green]released[/] {len(rows)} rows ({n} originals as references, no text) into {out}")


@app.command("rehydrate")
def corpus_rehydrate(
    release_file: Path = typer.Argument(..., help="Release .jsonl ('corpus release')."),
    out: Path = typer.Option(..., "--out", help="Rebuilt corpus (.jsonl), ready for 'build spoken --corpus'."),
    pages: Path = typer.Option(..., help="Folder of saved pages (matched by sha256 or file name)."),
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Rebuild the corpus texts from the pages and verify each text's sha256. An item that does not match (a page
    missing or changed) fails the command (exit 2) and nothing is written: a corpus is rebuilt whole. With
    --allow-partial the items that match are written and the others listed."""
    from halluscope.core.outcome import StepOutcome, check_outcomes
    from halluscope.spoken.collect.pages import read_jsonl, write_jsonl
    from halluscope.spoken.collect.release import rehydrate

    released = read_jsonl(release_file)
    rows, problems = rehydrate(released, pages)
    failed = {p["id"]: p["problem"] for p in problems}
    outcome = StepOutcome(
        "rehydrate",
        len(released),
        len(rows),
        failed,
        fix=f"pass --pages with the pages the release was made from (a page saved again later may differ); "
        f"nothing was written to {out}",
    )
    # a rebuilt corpus is whole or not written: any item that does not match fails the command (share 0)
    notes = check_outcomes([outcome], command="corpus rehydrate", allow_partial=allow_partial, max_failed=0.0)
    write_jsonl(out, rows)
    if json_out:
        print(json.dumps({"corpus": str(out), "rows": len(rows), "problems": problems}, indent=2, ensure_ascii=False))
        return
    for p in problems:
        console.print(f"  left out '{p['id']}': {p['problem']}", highlight=False, soft_wrap=True)
    for note in notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    console.print(f"[green]rehydrated[/] {len(rows)} rows into {out}")
