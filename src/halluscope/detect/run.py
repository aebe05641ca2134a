"""'halluscope detect': train and test a detector on O (text) or T (transcript) over identical item ids."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from halluscope.build import load_build
from halluscope.detect.splits import split_by_article
from halluscope.detect.tfidf import TfidfDetector
from halluscope.errors import HalluscopeError
from halluscope.manifest import record_manifest
from halluscope.records import SEVERITIES, TYPES, InputKind, Prediction, Task, Variant
from halluscope.registry import Registry
from halluscope.stages import Stage
from halluscope.store import Store

DETECTORS: Registry[Callable[..., TfidfDetector]] = Registry("detector")
DETECTORS.register("tfidf")(lambda model, **kw: TfidfDetector(**kw))

LABELS: dict[str, tuple[str, ...]] = {"binary": ("original", "hallucinated"), "type": TYPES, "severity": SEVERITIES}


def gold(v: Variant, task: Task) -> str:
    if task == "binary":
        return "hallucinated" if v.label == 1 else "original"
    return str(v.type if task == "type" else v.severity)


@dataclass
class DetectResult:
    stage_fingerprint: str
    predictions: dict[str, Prediction]
    excluded: dict[str, str]
    chosen_c: dict[str, float | None]


def detect(run_dir: str | Path, *, detector: str = "tfidf", task: Task = "binary", input: InputKind = "text",
           seed: int = 0) -> DetectResult:
    """Fit per language on train (C chosen on dev), predict dev and test; store every prediction."""
    if task not in LABELS:
        raise HalluscopeError(f"unknown task '{task}': expected binary, type or severity")
    if input not in ("text", "transcript"):
        raise HalluscopeError(f"unknown input '{input}': expected text or transcript")
    with Store(run_dir) as store:
        build = load_build(store)
        # identical ids for O and T: only samples with a transcript; the rest are listed as excluded
        excluded = {k: "no transcript (see the build's failures)" for k in build.samples if k not in build.transcripts}
        items = [v for k, v in sorted(build.samples.items()) if k in build.transcripts]
        if task != "binary":
            items = [v for v in items if v.label == 1]  # type and severity are defined on altered items only
        if not items:
            raise HalluscopeError(f"{run_dir}: no samples with transcripts to run '{task}' on")
        splits = split_by_article(build.samples.values(), seed=seed)
        det = DETECTORS.create(detector, seed=seed)
        stage = Stage("detect", {"detector": det.config(), "task": task, "input": input, "seed": seed},
                      (build.stages["generate"], build.stages["asr"]))
        record_manifest(store, command="detect", config={"detector": detector, "task": task, "input": input, "seed": seed},
                        seeds={"split": seed, "detector": seed}, stages={"detect": stage.fingerprint, **build.stages})

        def x_of(v: Variant) -> str:
            return v.text if input == "text" else build.transcripts[v.id].text

        chosen: dict[str, float | None] = {}
        done = store.done_ids(stage.name, stage.fingerprint)
        for lang in sorted({v.language for v in items}):
            group = [v for v in items if v.language == lang]
            if all(v.id in done for v in group if splits[v.article_id] != "train"):
                continue
            part = {s: [v for v in group if splits[v.article_id] == s] for s in ("train", "dev", "test")}
            if not part["train"] or not part["test"]:
                raise HalluscopeError(f"language '{lang}' has too few articles to split (need at least 3)")
            model = det.fit([x_of(v) for v in part["train"]], [gold(v, task) for v in part["train"]],
                            [x_of(v) for v in part["dev"]], [gold(v, task) for v in part["dev"]], LABELS[task])
            chosen[lang] = det.chosen_c
            for split in ("dev", "test"):
                preds = model.predict([x_of(v) for v in part[split]])
                for v, p in zip(part[split], preds):
                    store.put(stage.name, stage.fingerprint, v.id, Prediction(
                        item_id=v.id, detector=det.spec, task=task, input=input, split=split,  # type: ignore[arg-type]
                        gold=gold(v, task), predicted=p))
        predictions = store.results(stage.name, stage.fingerprint, Prediction)
        return DetectResult(stage.fingerprint, predictions, excluded, chosen)
