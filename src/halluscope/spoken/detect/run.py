"""'halluscope detect': run any registered detector on a built benchmark, one task and input at a time.

A detector kind registers a *runner* under its provider name ('tfidf', 'encoder', 'openai', ...). The
runner gets a DetectContext (items, splits, gold labels, the store and the detect stage) and stores
one Prediction per evaluated item; this module owns everything that is common: identical item ids for
O and T, the article-level split, the stage fingerprint and the manifest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.core.errors import HalluscopeError
from halluscope.core.executors import LOCAL, Executor
from halluscope.core.manifest import record_manifest
from halluscope.core.names import renamed
from halluscope.core.outcome import StepOutcome, check_outcomes
from halluscope.core.provenance import detect_inputs
from halluscope.core.records import SEVERITIES, TYPES, Prediction, Task, Variant
from halluscope.core.registry import Registry
from halluscope.core.spec import ModelSpec
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.current import read_parts
from halluscope.spoken.build import BuildResult, load_build
from halluscope.spoken.detect.splits import guard_splits, split_by_article
from halluscope.spoken.detect.tfidf import TfidfDetector

LABELS: dict[str, tuple[str, ...]] = {"binary": ("original", "hallucinated"), "type": TYPES, "severity": SEVERITIES}
INPUTS = ("text", "transcript", "audio")


def gold(v: Variant, task: Task) -> str:
    if task == "binary":
        return "hallucinated" if v.label == 1 else "original"
    return str(v.type if task == "type" else v.severity)


@dataclass
class DetectContext:
    """Everything a runner needs; ``put`` stores a prediction under the detect stage's key."""

    store: Store
    build: BuildResult
    stage: Stage
    spec: str
    model: str
    task: Task
    input: str
    seed: int
    items: list[Variant]
    splits: dict[str, str]
    options: dict[str, Any] = field(default_factory=dict)
    executor: Executor = LOCAL  # where heavy work runs: encoder training, hf/hf-audio generation

    @property
    def labels(self) -> tuple[str, ...]:
        return LABELS[self.task]

    def split_of(self, v: Variant) -> str:
        return self.splits[v.article_id]

    def gold(self, v: Variant) -> str:
        return gold(v, self.task)

    def x_of(self, v: Variant) -> str:
        """The text input of an item (original text or its transcript)."""
        if self.input == "text":
            return v.text
        if self.input == "transcript":
            return self.build.transcripts[v.id].text
        raise HalluscopeError(f"detector '{self.spec}' reads text; input '{self.input}' has no text form")

    def done(self) -> set[str]:
        return self.store.done_ids(self.stage.name, self.stage.fingerprint)

    def put(self, prediction: Prediction) -> None:
        self.store.put(self.stage.name, self.stage.fingerprint, prediction.item_id, prediction)


Runner = Callable[[DetectContext], None]


@dataclass(frozen=True)
class DetectorKind:
    """A registered detector kind: how to run it, what it reads, and its config for the fingerprint."""

    run: Runner
    inputs: tuple[str, ...] = ("text", "transcript")
    config: Callable[[str, dict], dict] = lambda model, options: {"model": model, **options}
    options: tuple[str, ...] | None = None  # the -o keys it takes (checked up front); None: it checks them itself
    trains: bool = False  # fits on the train split (needs train/dev/test articles); zero-shot kinds predict every item


# detector kinds by provider name; plug-ins add DetectorKind objects through the entry-point group 'halluscope.detectors'
DETECTORS: Registry[DetectorKind] = Registry("detector kind", "halluscope.detectors")


def register_detector(provider: str, kind: DetectorKind) -> None:
    DETECTORS.register(provider, kind)


def _run_tfidf(ctx: DetectContext) -> None:
    """Fit per language on train (C chosen on dev macro-F1), predict dev and test."""
    det = TfidfDetector(seed=ctx.seed)
    done = ctx.done()
    for lang in sorted({v.language for v in ctx.items}):
        group = [v for v in ctx.items if v.language == lang]
        if all(v.id in done for v in group if ctx.split_of(v) != "train"):
            continue
        part = {s: [v for v in group if ctx.split_of(v) == s] for s in ("train", "dev", "test")}
        model = det.fit(
            [ctx.x_of(v) for v in part["train"]],
            [ctx.gold(v) for v in part["train"]],
            [ctx.x_of(v) for v in part["dev"]],
            [ctx.gold(v) for v in part["dev"]],
            ctx.labels,
        )
        for split in ("dev", "test"):
            for v, p in zip(part[split], model.predict([ctx.x_of(v) for v in part[split]])):
                ctx.put(
                    Prediction(
                        item_id=v.id,
                        detector=ctx.spec,
                        task=ctx.task,
                        input=ctx.input,  # type: ignore[arg-type]
                        split=split,
                        gold=ctx.gold(v),
                        predicted=p,
                    )
                )  # type: ignore[arg-type]


register_detector(
    "tfidf",
    DetectorKind(
        run=_run_tfidf,
        trains=True,
        config=lambda model, options: TfidfDetector(seed=options.get("seed", 0)).config(),
        options=(),
    ),
)

MIN_ARTICLES = 3  # per language: one each for train, dev and test (seed 000, 3.5: the split is by source article)


def check_splits(items: list[Variant], splits: dict[str, str], run_dir: str | Path) -> None:
    """Every language needs articles in train, dev and test; otherwise nothing could be predicted (exit 2)."""
    for lang in sorted({v.language for v in items}):
        articles = {v.article_id for v in items if v.language == lang}
        missing = [s for s in ("train", "dev", "test") if not any(splits[a] == s for a in articles)]
        if missing:
            raise HalluscopeError(
                f"{run_dir}: language '{lang}' has {len(articles)} source article(s), too few for the article-level "
                f"train/dev/test split (no {', '.join(missing)} articles); expected at least {MIN_ARTICLES} per "
                "language. Fix: rebuild with more articles (e.g. 3 or more articles per language) or leave the "
                "language out of the build"
            )


def check_options(detector: str, kind: DetectorKind, options: dict[str, Any]) -> None:
    if kind.options is None:
        return
    unknown = sorted(set(options) - set(kind.options) - {"seed"})
    if unknown:
        known = ", ".join(kind.options) or "none"
        raise HalluscopeError(
            f"detector '{detector}' does not take -o {', '.join(unknown)}; its options: {known}. "
            "Fix: drop the option or check its spelling"
        )


def display_option(detector: ModelSpec | str, options: dict[str, Any]) -> tuple[str, str | None]:
    """(the detector spec without a display name, as its records and stage key store it; the name): '-o name=...'
    or a glued '?name=...' labels the model's rows in reports and the viewer; it is not a detector option and not
    part of the stage key. A ModelSpec carried from the command line is read here, once."""
    from halluscope.core.spec import NAME_KEY

    name = options.pop(NAME_KEY, None)
    spec = ModelSpec.parse(detector)
    text = spec.text
    if NAME_KEY in spec.options:
        name = name or spec.options[NAME_KEY]
        text = str(spec.without(NAME_KEY))
    return text, (str(name) if name is not None else None)


@dataclass
class DetectResult:
    stage_fingerprint: str
    predictions: dict[str, Prediction]
    excluded: dict[str, str]


def detect(
    run_dir: str | Path,
    *,
    detector: ModelSpec | str = "tfidf",
    task: Task = "binary",
    input: str = "text",
    seed: int = 0,
    options: dict[str, Any] | None = None,
    executor: Executor | None = None,
    transcripts: str | None = None,
    allow_partial: bool | None = None,
) -> DetectResult:
    """Run one detector on one task and input of a built benchmark; every prediction is stored.

    ``transcripts``: which ASR system's transcripts the detector reads (a '--compare-asr' spec of the build; None:
    the build's own); the item set is the items that system transcribed.

    ``allow_partial``: None fails only when nothing was predicted; False / True applies the whole outcome rule of
    core/outcome.py (too many failed items fail the command unless True).

    ``executor`` (default: this process) runs the heavy parts, e.g. a Ray executor for encoder training and
    hf/hf-audio generation; it is not part of the fingerprint: the predictions are the same either way.
    """
    options = renamed(dict(options or {}), {"max_new_tokens": ("max_tokens", None)}, where="detect's options")
    detector, name = display_option(detector, options)
    spec, model = ModelSpec.written(detector)  # the model part as written: the stage key holds it
    provider = spec.provider
    if provider not in DETECTORS:
        import difflib

        close = difflib.get_close_matches(provider, DETECTORS.names, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise HalluscopeError(
            f"unknown detector '{detector}': expected one of "
            f"{', '.join(k + ('' if k == 'tfidf' else '/...') for k in DETECTORS.providers)}.{hint}"
        )
    kind = DETECTORS[provider]
    if task not in LABELS:
        raise HalluscopeError(f"unknown task '{task}': expected binary, type or severity")
    if input not in kind.inputs:
        raise HalluscopeError(f"detector '{detector}' reads {', '.join(kind.inputs)}; got input '{input}'")
    check_options(detector, kind, options)
    with Store(run_dir, create=False) as store:
        build = load_build(store)
        asr_stage = build.stages["asr"]
        if transcripts is not None and transcripts not in ("build", build.asr_spec):
            from dataclasses import replace

            from halluscope.spoken.build import compare_stage_name

            build = replace(build, transcripts=build.transcripts_of(transcripts))  # every reader sees that system
            asr_stage = build.stages[compare_stage_name(transcripts)]
        else:
            transcripts = None
        # identical ids for every input: only samples with a transcript (and so with audio)
        excluded = {k: "no transcript (see the build's failures)" for k in build.samples if k not in build.transcripts}
        items = [v for k, v in sorted(build.samples.items()) if k in build.transcripts]
        if task != "binary":
            items = [v for v in items if v.label == 1]  # type and severity are defined on altered items only
        if not items:
            raise HalluscopeError(f"{run_dir}: no samples with transcripts to run '{task}' on")
        splits = split_by_article(build.samples.values(), seed=seed)
        if kind.trains:
            check_splits(items, splits, run_dir)
            guard_splits(
                items,
                splits,
                where=str(run_dir),
                change=f"the article-level split (seed {seed}, task {task})",
                fix="rebuild with more articles per language (--articles-per-language) or rewrites, or try "
                "another --seed",
            )
        stage = Stage(
            "detect",
            {
                "detector": detector,
                "config": kind.config(model, {**options, "seed": seed}),
                "task": task,
                "input": input,
                "seed": seed,
                **({"transcripts": transcripts} if transcripts else {}),
            },
            (build.stages["generate"], asr_stage),
        )
        record_manifest(
            store,
            command="detect",
            config={
                "detector": detector,
                "task": task,
                "input": input,
                "seed": seed,
                "options": options,
                **({"transcripts": transcripts} if transcripts else {}),
                **({"name": name} if name else {}),
            },
            seeds={"split": seed, "detector": seed},
            stages={"detect": stage.fingerprint, **build.stages},
            # what it read, by content: the report shows it only while the build still holds it (core/provenance.py)
            inputs=detect_inputs(store, **read_parts(build.stages, transcripts), input=input),
        )
        ctx = DetectContext(
            store=store,
            build=build,
            stage=stage,
            spec=detector,
            model=model,
            task=task,
            input=input,
            seed=seed,
            items=items,
            splits=splits,
            options=options,
            executor=executor or LOCAL,
        )
        kind.run(ctx)
        predictions = checked_predictions(
            store,
            stage,
            n_items=len(items),
            step=f"detect {detector} task={task} input={input}",
            run_dir=run_dir,
            allow_partial=allow_partial,
        )
        return DetectResult(stage.fingerprint, predictions, excluded)


def checked_predictions(
    store: Store, stage: Stage, *, n_items: int, step: str, run_dir: str | Path, allow_partial: bool | None
) -> dict[str, Prediction]:
    """A detect run's stored predictions after the one rule of core/outcome.py: no prediction at all always fails;
    too many failed items fail unless ``allow_partial`` (None: only the first check)."""
    predictions = store.results(stage.name, stage.fingerprint, Prediction)
    failed = {k: v for k, v in store.failures(stage.name, stage.fingerprint).items() if k not in predictions}
    # a zero-shot item whose backend gave no reply is stored with status 'error': failed, not predicted (one the
    # audio policy skipped is kept out of n by design, not a failure)
    no_reply = {
        k: p.reason or "no reply"
        for k, p in predictions.items()
        if p.status == "error" and not (p.audio is not None and p.audio.action == "skipped")
    }
    failed |= no_reply
    outcome = StepOutcome(
        step,
        len(set(predictions) | set(failed)) or n_items,
        len(predictions) - len(no_reply),
        failed,
        fix="see the failures in the report or 'halluscope view RUN', then run detect again",
    )
    if allow_partial is not None or not outcome.produced:
        kept = f"in {run_dir} (finished items are kept; a rerun retries the failed ones)"
        check_outcomes([outcome], command="detect", allow_partial=bool(allow_partial), kept=kept)
    return predictions
