"""'halluscope detect RUN': a detector on a built benchmark (Lost in Speech, 3.4 and App. A.3)."""

from __future__ import annotations

import json
from typing import Optional

import typer

from halluscope.cli.build import BUILT
from halluscope.cli.canary import CANARY_HELP
from halluscope.cli.compat import App
from halluscope.cli.options import (
    AllowPartial,
    AudioPolicy,
    Json,
    LlmConfig,
    MaxTokens,
    Mitigation,
    Options,
    System,
    VllmServe,
    flag_options,
    mitigation_options,
    model_spec,
    with_executor,
)
from halluscope.core.executors import ExecutorOptions
from halluscope.core.records import TASKS
from halluscope.core.stages import console

app = App()
DETECTORS_TRAINED = frozenset({"tfidf", "encoder", "whitebox"})  # trained kinds take no prompt


@app.command()
@with_executor
def detect(
    run: BUILT,
    detector: str = typer.Option(
        "tfidf",
        help="Detector spec: 'tfidf' (offline TF-IDF + logistic regression); "
        "other kinds ('encoder/<path>', 'openai/<model>', 'hf/<path>', 'hf-audio/<path>') "
        "are available when their modules are installed.",
    ),
    task: str = typer.Option("binary", help="binary | type | severity | all"),
    input: str = typer.Option(
        "text",
        help="text (O: original text) | transcript (T: ASR transcript) | audio | all (all = text and transcript)",
    ),
    seed: int = typer.Option(0, help="Seed of the article-level train/dev/test split and the detector."),
    prompting: Optional[str] = typer.Option(None, help="Zero-shot detectors: direct | cot (Lost in Speech, App. A.3)."),
    max_tokens: MaxTokens = None,  # type: ignore[assignment]  # zero-shot detectors; None: theirs (256)
    audio_policy: AudioPolicy = None,  # type: ignore[assignment]  # None: the detector's (truncate)
    system: System = None,
    mitigation: Mitigation = None,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - typer reads the default
    json_out: Json = False,
    vllm_serve: VllmServe = None,
    executor: ExecutorOptions = ExecutorOptions(),
    transcripts: Optional[str] = typer.Option(
        None,
        help="Which ASR system's transcripts to read: a --compare-asr "
        "spec of the build (default: the build's own --asr).",
    ),
    canary: int = typer.Option(0, "--canary", help="Zero-shot detectors on --input audio: " + CANARY_HELP),
    allow_partial: AllowPartial = False,
) -> None:
    """Run a detector on a built benchmark for a task and input; predictions are stored and the report picks
    them up. Trainable detectors fit on the train split, choose hyper-parameters on dev and predict dev and
    test; all inputs use identical item ids. Zero-shot detectors take --max-tokens (default 256), --audio-policy
    (default truncate), --system and --mitigation; -o KEY=VALUE passes detector options (subset=N, alpha=0.5, ...);
    -o realworld=true makes the dedicated real-world run (after 'build realworld'): the matched truthful
    negatives move to test, fakes are predicted too. A run that predicts nothing, or fails on more than the share
    --allow-partial names (the real-world run too), exits 2; what it predicted is kept.

    Example: halluscope detect runs/quickstart --detector tfidf --task all --input all
    On Ray: halluscope detect RUN --detector encoder/<dir> --executor ray --ray-resources encoder:cpus=1
    """
    from halluscope.backends.vllm import serving
    from halluscope.spoken.detect import detect as run_detect

    spec = model_spec(detector)  # parsed once; the predictions carry it (-o KEY=VALUE are its options, below)
    options = flag_options(option, max_tokens=max_tokens, audio_policy=audio_policy, system=system)
    mitigation = mitigation_options(mitigation, options)
    if mitigation is not None:
        options["mitigation"] = mitigation
    if prompting is not None:
        if prompting not in ("direct", "cot"):
            raise typer.BadParameter(f"--prompting expects direct or cot, got '{prompting}'")
        if spec.provider in DETECTORS_TRAINED:
            raise typer.BadParameter(f"--prompting applies to zero-shot detectors, not '{detector}'")
        options["prompting"] = prompting
    tasks = list(TASKS) if task == "all" else [task]
    if options.pop("realworld", False) in (True, "true", "1", 1):
        # the dedicated real-world run (Lost in Speech, Table 4): matched negatives held out of train and dev
        from halluscope.spoken.realworld import detect_realworld as run_detect  # type: ignore[assignment]

        if transcripts:
            raise typer.BadParameter("the real-world run reads the build's own transcripts; drop --transcripts")

        tasks = ["binary"] if task == "all" else tasks
    inputs = ["text", "transcript"] if input == "all" else [input]
    rows = []
    asked: dict = {}
    with executor.create(run) as ex, serving(detector, vllm_serve):
        for t in tasks:
            for i in inputs:
                res = run_detect(
                    run,
                    detector=spec,
                    task=t,  # type: ignore[arg-type]
                    input=i,
                    seed=seed,
                    options=options,  # type: ignore[arg-type]
                    executor=ex,
                    allow_partial=allow_partial,  # the one outcome rule (core/outcome.py)
                    **({"transcripts": transcripts} if transcripts else {}),
                )
                n_test = sum(p.split == "test" for p in res.predictions.values())
                if i == "audio":
                    asked[t] = res.predictions
                rows.append(
                    {
                        "detector": detector,
                        "task": t,
                        "input": i,
                        "predictions": len(res.predictions),
                        "test": n_test,
                        "excluded": len(res.excluded),
                    }
                )
                if not json_out:
                    console.print(
                        f"detect {detector} task={t} input={i}: {len(res.predictions)} predictions "
                        f"({n_test} on the test split) stored"
                    )
    if canary and "audio" in inputs and spec.provider not in DETECTORS_TRAINED:
        from halluscope.cli.canary import canary_detect, show

        # on the items this run asked (not skipped by the audio policy); the real-audio calls come from the store
        show(
            [
                canary_detect(
                    run,
                    detector,
                    t,
                    options,
                    n=canary,
                    seed=seed,
                    quiet=json_out,
                    allow_partial=allow_partial,
                    command="detect",
                    ids={k for k, p in asked[t].items() if not (p.audio and p.audio.action == "skipped")},
                )
                for t in tasks
            ]
        )
    if json_out:
        print(json.dumps(rows, indent=2))
