"""Named judge configurations run on the same answers (seed 001, E.2 ablation / Figure 13, E.3 sensitivity /
Tables 9 and 10), and their judge-human agreement.

A configuration (halluscope.mishap.judge.JudgeConfig) says whether the prompt carries the reference rubric, the
in-context examples and the evidence search, which prompt version it uses and which rubric version. Each one is
its own stage over the run's store (resumable; a finished configuration makes no call) and is recorded by name
in the step's manifest, so the tables are read from the store with no model call.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Literal

from halluscope.backends.llm import LLM_BACKENDS, Caller, LLMConfig, load_llm_config
from halluscope.core.errors import HalluscopeError, InputError
from halluscope.core.manifest import record_manifest
from halluscope.core.outcome import StepOutcome, check_outcomes
from halluscope.core.records import GroundednessJudgement, MishapCategory
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap.judge import FULL, GroundednessJudge, JudgeConfig, load_examples

STAGE = "mishap.judge_config"
COMMANDS = {"ablation": "mishap ablation", "validity": "mishap validity judge"}
FULL_NAME = FULL.name
Items = Literal["ablation", "validity"]

# seed 001, E.2 / Figure 13: the cumulative ladder, each step adding one component to the one before
LADDER = (
    JudgeConfig("A: base judge", rubric=False, examples=False, evidence=False, prompt="v1"),
    JudgeConfig("B: + reference rubric", examples=False, evidence=False, prompt="v1"),
    JudgeConfig("C: + human-annotated examples", evidence=False, prompt="v1"),
    JudgeConfig("D: + evidence search", prompt="v1"),
    JudgeConfig("E: + refined judge prompt (full)"),
)
PRESETS = {
    "fig13": LADDER,
    "rubrics": tuple(JudgeConfig(f"rubric v{v}", rubric_version=v) for v in (1, 2, 3)),  # E.3, Table 9
    "prompts": tuple(JudgeConfig(f"prompt v{v}", prompt=f"v{v}") for v in (1, 2, 3)),
}  # E.3, Table 10


@dataclass(frozen=True)
class ConfigRun:
    """One configuration's judgements, its failures and the items it left out (no rubric of its version)."""

    config: JudgeConfig
    judgements: dict[str, GroundednessJudgement]
    failed: int = 0
    missing: int = 0


def load_configs(spec: str) -> tuple[JudgeConfig, ...]:
    """A preset name (fig13, rubrics, prompts) or a JSON file {name: {rubric, examples, evidence, prompt,
    rubric_version}} (missing keys take the full judge's value; a relative prompt folder is read from the file's)."""
    if spec in PRESETS:
        return PRESETS[spec]
    from halluscope.core.inputs import describe, read_json

    fix = (
        f"give a preset ({', '.join(PRESETS)}) or a JSON object of named configurations, e.g. "
        '{"no rubric": {"rubric": false}}'
    )
    data = read_json(spec, what="judge configurations file", fix=fix)
    if not isinstance(data, dict) or not data:
        raise InputError(
            f"expected a non-empty object of named configurations, got {describe(data)}", file=spec, fix=fix
        )
    known = {f.name: f.type for f in fields(JudgeConfig) if f.name != "name"}
    out = []
    for name, body in data.items():
        if not isinstance(body, dict):
            raise InputError(f"expected an object of settings, got {describe(body)}", file=spec, field=name, fix=fix)
        unknown = sorted(set(body) - set(known))
        if unknown:
            raise InputError(
                f"unknown setting(s) {unknown}; expected some of {sorted(known)}", file=spec, field=name, fix=fix
            )
        for key in ("rubric", "examples", "evidence"):
            if key in body and not isinstance(body[key], bool):
                raise InputError(f"expected true or false, got {body[key]!r}", file=spec, field=f"{name}.{key}")
        rv = body.get("rubric_version")
        if rv is not None and (not isinstance(rv, int) or isinstance(rv, bool) or rv < 1):
            raise InputError(
                f"expected a version number >= 1 or null, got {rv!r}", file=spec, field=f"{name}.rubric_version"
            )
        p = body.get("prompt", "v3")
        if not isinstance(p, str):
            raise InputError(f"expected a prompt version or folder, got {p!r}", file=spec, field=f"{name}.prompt")
        if p not in ("v1", "v3") and not Path(p).is_absolute():
            body = {**body, "prompt": str(Path(spec).parent / p)}
        cfg = JudgeConfig(name, **body)
        cfg.template("context"), cfg.template("knowledge")  # a bad prompt folder stops here, before any call
        out.append(cfg)
    return tuple(out)


@dataclass(frozen=True)
class JudgeItem:
    """One response as the judge sees it, with every version of its rubric (oldest first)."""

    id: str
    category: MishapCategory
    question: str
    response: str
    description: str
    rubrics: tuple[tuple[int, str], ...]

    def rubric(self, version: int | None) -> str | None:
        """The given version's text (None: the latest); None when the question has no such version."""
        if version is None:
            return self.rubrics[-1][1]
        return next((t for v, t in self.rubrics if v == version), None)


def mishap_items(store: Store, only: set[str] | None = None) -> list[JudgeItem]:
    from halluscope.mishap.answers import judgeable, load_answers
    from halluscope.mishap.clips import kept_clips
    from halluscope.mishap.questions import load_questions
    from halluscope.mishap.rubrics import rubric_history

    questions, clips, history = load_questions(store), kept_clips(store), rubric_history(store)
    out = []
    for aid, a in sorted(load_answers(store).items()):
        if (only is not None and aid not in only) or not judgeable(a) or a.question_id not in history:
            continue
        q = questions[a.question_id]
        out.append(
            JudgeItem(
                aid,
                q.category,
                q.text,
                a.text or "",
                clips[q.clip_id].description,
                tuple((r.version, r.text) for r in history[q.id]),
            )
        )
    return out


def validity_items(store: Store) -> list[JudgeItem]:
    from halluscope.mishap.validity_items import load_validity

    return [
        JudgeItem(v.id, "context", v.question, v.response, v.description, ((1, v.rubric),))
        for _, v in sorted(load_validity(store).items())
    ]


def run_configs(
    run_dir: str | Path,
    judge: str,
    configs: tuple[JudgeConfig, ...],
    *,
    items: Items = "ablation",
    all_answers: bool = False,
    examples: str | Path | None = None,
    evidence: str | Path | None = None,
    max_searches: int = 3,
    retries: int = 2,
    config: LLMConfig | None = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
) -> dict[str, ConfigRun]:
    """Judge the same responses under every configuration (name -> its run). ``items``: 'ablation' (MISHAP answers
    people labelled, or every answer with ``all_answers``) or 'validity' (the imported closed-form responses).

    ``allow_partial``: None records whatever was judged; False / True applies the one rule of core/outcome.py to
    every configuration before the run is recorded (one failing on more than the share fails the command unless
    True; one that judged nothing always does)."""
    from halluscope.backends.runner import run_calls
    from halluscope.mishap.evidence import FtsEvidence
    from halluscope.mishap.labels import human_labels

    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise InputError(f"configuration names must differ, got {names}", fix="name each configuration once")
    backend = LLM_BACKENDS.create(judge, config=config if config is not None else load_llm_config())
    tool = FtsEvidence(evidence) if evidence is not None else None
    shown = load_examples(examples)
    with Store(run_dir, create=False) as store:
        if items == "validity":
            todo = validity_items(store)
            if not todo:
                raise HalluscopeError(
                    f"{run_dir} has no imported closed-form responses. Fix: run 'halluscope mishap "
                    f"validity import {run_dir} --benchmark ... --model ... FILES' first"
                )
        else:
            labelled = None if all_answers else {a for a, _ in human_labels(run_dir)}  # of MISHAP answers only
            todo = mishap_items(store, labelled)
            if not todo:
                raise HalluscopeError(
                    f"{run_dir} has no {'judgeable' if all_answers else 'human-labelled'} MISHAP "
                    "answers to judge. Fix: label some with 'halluscope mishap annotate', or pass "
                    "--all-answers"
                )
        out: dict[str, ConfigRun] = {}
        stages: dict[str, str] = {}
        outcomes: list[StepOutcome] = []
        for cfg in configs:
            gj = GroundednessJudge(
                backend, examples=shown, tool=tool, max_searches=max_searches, retries=retries, config=cfg
            )
            chosen = [(it.id, it) for it in todo if it.rubric(cfg.rubric_version) is not None]
            # the purpose is part of the key: the ablation's full rung and the validity judge never share one
            stage = Stage(STAGE, {**gj.identity(), "config": cfg.identity(), "purpose": items})

            async def fn(caller: Caller, it: JudgeItem, gj: GroundednessJudge = gj, cfg: JudgeConfig = cfg):
                return await gj.judge_text(
                    caller,
                    answer_id=it.id,
                    category=it.category,
                    question=it.question,
                    response=it.response,
                    description=it.description,
                    rubric=it.rubric(cfg.rubric_version) or "",
                )

            res = run_calls(
                store, stage, chosen, backend, fn, GroundednessJudgement, description=f"judge: {cfg.name}", quiet=quiet
            )
            out[cfg.name] = ConfigRun(cfg, res.results, len(res.failed), len(todo) - len(chosen))
            stages[cfg.name] = stage.fingerprint
            fix = f"check the judge {judge} (its server, key and replies: 'halluscope view RUN'), then run again"
            outcomes.append(StepOutcome.of(res, step=f"judge: {cfg.name}", fix=fix))
        if allow_partial is not None:  # before the run is recorded: a failed one is not recorded as complete
            kept = f"in {run_dir}'s store (a rerun makes no call for the items judged)"
            check_outcomes(outcomes, command=COMMANDS[items], allow_partial=allow_partial, kept=kept)
        record_manifest(
            store,
            command=COMMANDS[items],
            config={
                "judge": judge,
                "configs": {c.name: asdict(c) for c in configs},
                "examples": str(examples) if examples else "packaged",
                "evidence": str(evidence) if evidence else None,
                "items": len(todo),
                "example_answer_ids": sorted(r["answer_id"] for rs in shown.values() for r in rs if r.get("answer_id")),
            },
            seeds={},
            stages={f"config:{k}": v for k, v in stages.items()},
        )
    return out


def _recorded(store: Store, items: Items) -> dict[str, tuple[str, dict, list[str]]]:
    """name -> (fingerprint, settings, example answer ids) of the latest run of each configuration."""
    out: dict[str, tuple[str, dict, list[str]]] = {}
    from halluscope.core.runs import runs

    for r in runs(store, COMMANDS[items]):
        for name, body in r.config.configs.items():
            out[name] = (r.stages[f"config:{name}"], body, r.config.example_answer_ids)
    return out


def config_judgements(store: Store, items: Items = "ablation") -> dict[str, dict[str, GroundednessJudgement]]:
    return {
        name: store.results(STAGE, fp, GroundednessJudgement) for name, (fp, _, _) in _recorded(store, items).items()
    }


def _settings(body: dict) -> str:
    on = [k for k in ("rubric", "examples", "evidence") if body.get(k)]
    rv = body.get("rubric_version")
    return (
        f"prompt {body.get('prompt')}; "
        + (", ".join(on) or "no rubric, examples or evidence")
        + (f"; rubric v{rv}" if rv else "")
    )


def ablation_tables(run_dir: str | Path) -> dict[str, list[dict]]:
    """Judge-human agreement (pooled over annotators) per recorded configuration, with human-human agreement as
    the reference row: 'ablation' (every configuration, in the order run), 'rubric' (those differing only in the
    rubric version) and 'prompt' (those differing only in the prompt version)."""
    from halluscope.core.provenance import ANSWERS, labels_of
    from halluscope.current import population
    from halluscope.metrics.agreement import human_human_agreement, judge_human_agreement
    from halluscope.mishap.labels import human_labels

    with Store(run_dir, create=False) as store:
        recorded = _recorded(store, "ablation")
        answers = population(store, ANSWERS)  # every rung and human-human count MISHAP answers only
        results = {
            name: {a: j for a, j in store.results(STAGE, fp, GroundednessJudgement).items() if a in answers}
            for name, (fp, _, _) in recorded.items()
        }
    if not recorded:
        return {"ablation": [], "rubric": [], "prompt": []}
    human = labels_of(human_labels(run_dir), answers)
    rows = []
    for name, (_, body, example_ids) in recorded.items():
        res = results[name]
        scored = {a: j.verdict for a, j in res.items() if j.status == "ok" and j.verdict}
        pooled = judge_human_agreement(scored, human, exclude=example_ids if body.get("examples") else ())[-1]
        rows.append(
            {
                "config": name,
                "settings": _settings(body),
                "body": body,
                "n": pooled["n"],
                "agreement_rate": pooled["agreement_rate"],
                "kappa": pooled["kappa"],
                "unscored": sum(j.status == "unscored" for j in res.values()),
                "examples_left_out": pooled["examples_left_out"],
            }
        )
    hh = human_human_agreement(human)
    ref = (
        [
            {
                "config": "human-human",
                "settings": "annotator pairs (pooled)",
                "body": {},
                "n": hh[-1]["n"],
                "agreement_rate": hh[-1]["agreement_rate"],
                "kappa": hh[-1]["kappa"],
                "unscored": "",
                "examples_left_out": "",
            }
        ]
        if hh
        else []
    )

    def varying(key: str) -> list[dict]:
        base = {k: v for k, v in asdict(FULL).items() if k not in ("name", key)}
        return [r for r in rows if {k: r["body"].get(k) for k in base} == base]

    rubric = [r for r in varying("rubric_version") if r["body"].get("rubric_version")]
    prompt = varying("prompt") if len({r["body"].get("prompt") for r in varying("prompt")}) > 1 else []
    strip = lambda rs: [{k: v for k, v in r.items() if k != "body"} for r in rs]
    return {"ablation": strip(rows + ref), "rubric": strip(rubric), "prompt": strip(prompt)}
