"""Provenance by content: what each derived record was computed from, and which population a response belongs to.

A derived record stores the digests of exactly the inputs it read (``text_digest``, ``Store.digest``):

- a detect run (its manifest's ``inputs``, ``detect_inputs``): ``texts`` (the samples it read), ``transcribed``
  (which items have a transcript: its item set) and, by its input kind, ``transcripts`` (the transcript set it read)
  or ``audio`` (the clips); each over the stored records themselves (``Store.digest``);
- a groundedness verdict (``GroundednessJudgement.answer_sha256``, with its ``judge`` and ``prompt``) and a human
  label (``MishapAnnotation.answer_sha256``): the response text they read;
- a transcript (``Transcript.audio_sha256`` and ``asr``): its audio and ASR spec.

``differs`` is the one rule (consistent when every digest a record stored equals the digest of that input now);
``halluscope.current.select`` applies it per table and returns the records left out as ``Stale`` (why, and the
exact command that refreshes them). Kinds: ``changed`` (an input changed since), ``unknown`` (stored before digests
were kept and not upgradable), ``missing`` (no record yet for a current input: an answer not judged) and ``apart``
(a population of its own).

Populations (seed 001, 4.1-4.2): every MISHAP response is 'mishap answer <model>' or 'mishap validity import
<benchmark>/<model>'; each table counts its own (``halluscope.current.population``, ``labels_of``). A model's answer
population in the tables is its first 'mishap answer' run over the current questions, or the latest made with
``--replace`` (``answer_populations``); a re-answer with other options is held ``apart``; a 'mitigation sweep'
answers and judges a population of its own ('mitigation sweep answer', 'mitigation sweep judge'), so no command
changes another command's table.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from halluscope.core.hashing import sha256_hex
from halluscope.core.keys import StageName
from halluscope.core.store import Store

T = TypeVar("T")
StaleKind = Literal["changed", "unknown", "missing", "apart"]

ANSWERS = "mishap answer"  # MISHAP-Bench answers collected by 'halluscope mishap answer'
IMPORTED = "mishap validity import"  # responses imported by 'halluscope mishap validity import'
SWEEP_ANSWERS = "mitigation sweep answer"  # the answers of a 'mitigation sweep' (its card's population)
SWEEP_JUDGE = "mitigation sweep judge"  # the sweep's judge runs (never the report's 'mishap judge')
JUDGE = "mishap judge"
ANSWER_STAGE = "mishap.answers"  # the store stage of MISHAP answers (one per model: 'answers:<model>' in manifests)
VALIDITY_STAGE = "mishap.validity"  # the store stage of the imported validity responses


# -- digests -----------------------------------------------------------------------------------------------------


def text_digest(text: str | None) -> str:
    """16 hex digits of the sha256 of a text (UTF-8; None reads as '')."""
    return sha256_hex(text or "", 16)


# -- the selection -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stale:
    """A record left out of a table: which table, what it is, why, and the command that refreshes it."""

    table: str
    record: str
    kind: StaleKind
    why: str
    command: str

    def row(self) -> dict:
        return {"table": self.table, "record": self.record, "kind": self.kind, "why": self.why, "command": self.command}


@dataclass(frozen=True)
class Selection(Generic[T]):
    """The records of one table consistent with the current upstream (key -> record) and those left out."""

    current: dict[Any, T] = field(default_factory=dict)  # keys by table: an id, a config identity, (id, annotator)
    stale: tuple[Stale, ...] = ()


def differs(recorded: Mapping[str, str] | None, now: Mapping[str, str]) -> tuple[StaleKind, str] | None:
    """None when every input digest ``recorded`` names equals ``now``'s; else (kind, why). The one rule."""
    if not recorded:
        return "unknown", "stored before input digests were kept, and its stage keys do not say what it read"
    changed = [k for k in sorted(recorded) if now.get(k) != recorded[k]]
    if not changed:
        return None
    return "changed", "; ".join(
        f"{k} read {recorded[k][:8]}, now {now[k][:8] if now.get(k) else 'absent'}" for k in changed
    )


def run_arg(store: Store) -> str:
    return shlex.quote(str(store.run_dir))


# -- detect runs (Lost in Speech, 3.4): what each run read of the build --------------------------------------------


def detect_inputs(
    store: Store,
    *,
    texts: Mapping[str, str],
    transcripts: Mapping[str, str],
    audio: Mapping[str, str],
    input: str,
    memo: dict | None = None,
) -> dict[str, str]:
    """The input digests of one detect run, by content (``Store.digest`` over the stage parts it read: stage name ->
    fingerprint): ``texts`` (the samples: texts and gold labels), ``transcribed`` (which items have a transcript:
    the item set), and by its input kind ``transcripts`` or ``audio``. The article split and the items predicted are
    functions of these and the run's seed and task (its config), so equal digests mean equal inputs."""
    memo = {} if memo is None else memo

    def digest(parts: Mapping[str, str], ids_only: bool = False) -> str:
        key = (tuple(sorted(parts.items())), ids_only)
        if key not in memo:
            memo[key] = store.digest(dict(parts), ids_only=ids_only)
        return memo[key]

    out = {"texts": digest(texts), "transcribed": digest(transcripts, ids_only=True)}
    if input == "transcript":
        out["transcripts"] = digest(transcripts)
    if input == "audio":
        out["audio"] = digest(audio)
    return out


def detect_command(store: Store, cfg: Any, command: str = "detect") -> str:
    """The 'halluscope detect' line that reruns a detect run's config on the current build."""
    parts = ["halluscope", "detect", run_arg(store), "--detector", cfg.detector, "--task", cfg.task]
    parts += ["--input", cfg.input, "--seed", str(cfg.seed)]
    for k, v in sorted((cfg.options or {}).items()):
        parts += ["-o", f"{k}={json.dumps(v) if not isinstance(v, str) else v}"]
    if getattr(cfg, "transcripts", None):
        parts += ["--transcripts", cfg.transcripts]
    if getattr(cfg, "name", None):
        parts += ["-o", f"name={cfg.name}"]
    if command == "detect realworld":
        parts += ["-o", "realworld=true"]
    return " ".join(shlex.quote(p) if i > 2 else p for i, p in enumerate(parts))


# -- MISHAP answers: one population per model in the tables ------------------------------------------------------


def answer_command(store: Store, cfg: Any, *, replace: bool = False) -> str:
    """The 'halluscope mishap answer' line of an answer run's config (``replace``: make it the tables' one)."""
    parts = ["halluscope", "mishap", "answer", run_arg(store), "--model", shlex.quote(cfg.model)]
    seeds = [s for s in (cfg.seeds or []) if s is not None]
    if seeds:
        parts += ["--seeds", ",".join(map(str, seeds))]
    extra = cfg.model_extra or {}
    for flag, value in (
        ("--temperature", extra.get("temperature") or None),  # in the answers' stage key, greedy or not
        ("--top-p", extra.get("top_p")),
        ("--top-k", extra.get("top_k")),
        ("--repetition-penalty", cfg.repetition_penalty),
        ("--max-tokens", cfg.max_tokens),
        ("--audio-policy", cfg.audio_policy if cfg.audio_policy not in (None, "truncate") else None),
        ("--system", cfg.system),
    ):
        if value is not None:
            parts += [flag, shlex.quote(str(value))]
    return " ".join(parts + (["--replace"] if replace else []))


def _sweep_answer_stages(store: Store) -> set[str]:
    """Answers stage keys of the arms of sweeps stored before sweeps kept their own command: their 'mishap answer'
    runs are the sweep's. An arm recorded as a 'mitigation sweep answer' run is not listed: a 'mishap answer' run
    with the same options (the same stage, reused) is the user's own population."""
    from halluscope.core.runs import runs

    own = {fp for m in store.manifests() if m.command == SWEEP_ANSWERS for fp in m.stages.values()}
    arms = {str(a.get("answers")) for r in runs(store, "mitigation sweep") for a in (r.config.arms or [])}
    return arms - own


def answer_populations(store: Store) -> Selection:
    """model -> its answers stage key in the tables; the other populations of each model held ``apart``."""
    from halluscope.core.runs import runs

    q = store.latest_manifest("mishap questions")
    if q is None:
        return Selection()
    questions = q.stages.get("questions")
    swept = _sweep_answer_stages(store)
    chosen: dict[str, tuple[str, Any]] = {}
    seen: dict[str, list[tuple[str, Any]]] = {}
    for r in runs(store, ANSWERS):
        if r.stages.get("questions") != questions:
            continue
        for k, fp in r.stages.items():
            name = StageName.parse(k)
            if name is None or name.kind != "answers" or name.subject is None or fp in swept:
                continue
            model = name.subject
            seen.setdefault(model, []).append((fp, r))
            if model not in chosen or r.config.replace:
                chosen[model] = (fp, r)
    stale = []
    for model, found in seen.items():
        fp, _ = chosen[model]
        for other_fp, r in {f: r for f, r in found if f != fp}.items():
            stale.append(
                Stale(
                    "answers",
                    f"{model} answers ({other_fp[:8]})",
                    "apart",
                    "answered with other options than the answers in the tables; a population of its own until "
                    "it replaces them",
                    answer_command(store, r.config, replace=True),
                )
            )
    return Selection({m: fp for m, (fp, _) in chosen.items()}, tuple(stale))


# -- verdicts and labels -----------------------------------------------------------


def judge_command(store: Store, judge: str | None) -> str:
    return f"halluscope mishap judge {run_arg(store)} --judge {shlex.quote(judge or '<judge spec>')}"


# -- populations of MISHAP responses (seed 001, 4.1-4.2) ------------------------------------------------------------


def labels_of(human: Mapping[tuple[str, str], str], ids: set[str]) -> dict[tuple[str, str], str]:
    """The (response, annotator) labels of the responses in ``ids`` only."""
    return {k: v for k, v in human.items() if k[0] in ids}
