"""'build judge': a stratified sample of a built run rated by any number of LLM judges (seed 000, 3.4, App. A.2).

One stage per judge, keyed by (judge identity, parse retries, prompts) over the generate stage; each
judgement is committed as it arrives, so a killed run resumes, and a finished one makes no call.
A reply that stays unreadable after the retries is stored as *unscored* with its raw text and the
reason; an item the backend could not answer at all is stored as failed and retried on the next run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from halluscope.backends.llm import (
    LLM_BACKENDS,
    Caller,
    CallStats,
    ChatBackend,
    LLMConfig,
    StageOutage,
    load_llm_config,
)
from halluscope.backends.runner import arun_calls, ask_until_parsed
from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import StageName
from halluscope.core.manifest import record_manifest
from halluscope.core.records import LANGUAGES, Judgement, RewriteLog, Variant
from halluscope.core.stages import Stage, progress
from halluscope.core.store import Store
from halluscope.metrics.agreement import rating_agreement_rows
from halluscope.prompts import prompt_hash
from halluscope.prompts.protocol import DIMENSION_ORDER
from halluscope.spoken.build import load_build
from halluscope.spoken.generate.llm import LOG_STAGE
from halluscope.spoken.generate.perlang import is_per_language
from halluscope.spoken.judge.prompt import JUDGE_PARAMS, judge_messages, parse_judgement
from halluscope.spoken.judge.sample import Sample, stratified_sample
from halluscope.spoken.judge.tables import mean_rows, write_tables

VERSION = 1


@dataclass
class JudgeResult:
    run_dir: Path
    sample: Sample
    judgements: dict[str, dict[str, Judgement]]
    failed: dict[str, dict[str, str]]
    stats: dict[str, CallStats]
    agreement: list[dict]
    quality: dict[str, list[dict]]
    files: list[Path] = field(default_factory=list)
    notes: tuple[str, ...] = ()  # the outcome rule's notes: judges that failed on some items

    def summary(self) -> list[dict]:
        return [
            {
                "judge": j,
                "scored": sum(x.status == "ok" for x in js.values()),
                "unscored": sum(x.status == "unscored" for x in js.values()),
                "failed": len(self.failed[j]),
                "calls": self.stats[j].calls,
                "from_store": self.stats[j].from_store,
            }
            for j, js in self.judgements.items()
        ]


def judge_stage(backend: ChatBackend, *, retries: int, generate_fp: str) -> Stage:
    return Stage(
        "judge",
        {
            "version": VERSION,
            **backend.identity(),
            "params": JUDGE_PARAMS,
            "retries": retries,
            "prompts": prompt_hash(),
        },
        (generate_fp,),
    )


async def _judge_one(caller: Caller, backend: ChatBackend, v: Variant, original: str, retries: int) -> Judgement | str:
    """A Judgement (scored or unscored), or the reason the backend gave no reply at all."""
    messages = judge_messages(original=original, rewritten=v.text, type=v.type, severity=v.severity)  # type: ignore[arg-type]

    def parse(resp):
        scores, why = parse_judgement(resp.text or "", v.type)  # type: ignore[arg-type]
        return scores, why

    # App. A.2: up to three retries on parse failure
    asked = await ask_until_parsed(
        caller, backend.request(messages, tag=f"judge:{v.id}", params=JUDGE_PARAMS), parse, retries
    )
    if asked.status == "failed":  # no reply after the backend's own retries: failed, retried next run
        return f"{backend.spec}: {asked.error}"
    if asked.ok:
        return Judgement(
            item_id=v.id,
            judge=backend.spec,
            status="ok",
            scores=asked.value,
            raw_text=asked.raw_text,
            attempts=len(asked.keys),
            call_keys=asked.keys,
        )
    return Judgement(
        item_id=v.id,
        judge=backend.spec,
        status="unscored",
        raw_text=asked.raw_text,
        unscored_reason=asked.reason,
        attempts=len(asked.keys),
        call_keys=asked.keys,
    )


async def _judge_all(
    store: Store,
    work: list[tuple[ChatBackend, Stage, list[Variant]]],
    samples: dict[str, Variant],
    retries: int,
    quiet: bool,
) -> tuple[dict[str, CallStats], list[StageOutage]]:
    """Every judge's stage at once on the one runner; a judge whose every call failed is returned as its
    StageOutage (raised after the report)."""
    outages: list[StageOutage] = []
    stats: dict[str, CallStats] = {}
    total = sum(len(t) for _, _, t in work)
    pacing = lambda: " · ".join(x for b, _, _ in work if (x := getattr(b, "pacing_status", str)()))  # noqa: E731
    with progress("judge calls", total, quiet=quiet, status=pacing) as advance:

        async def one_judge(backend: ChatBackend, stage: Stage, todo: list[Variant]) -> None:
            async def fn(caller: Caller, v: Variant) -> Judgement | str:
                return await _judge_one(caller, backend, v, samples[v.article_id].text, retries)

            try:
                res = await arun_calls(
                    store,
                    stage,
                    [(v.id, v) for v in todo],
                    backend,
                    fn,
                    None,
                    description="judge calls",
                    advance=advance,
                )
                stats[backend.spec] = res.stats
            except StageOutage as exc:
                stats[backend.spec] = exc.summary.stats  # type: ignore[attr-defined]
                outages.append(exc)

        await asyncio.gather(*(one_judge(b, s, t) for b, s, t in work))
    return stats, outages


def judge_routes(judge: str, langs: Sequence[str]) -> dict[str, str]:
    """language -> backend spec of one --judge: the one model for every language, or 'en=...,ru=...' (seed 000,
    3.4: each language's items rated by the model named for it), every judged language named once."""
    if not is_per_language(judge):
        return {lang: judge for lang in langs}
    from halluscope.backends.speech.route import resolve

    return resolve(judge, kind="judge", langs=langs, option="--judge")


def _check_judges(
    run_dir: Path, judgements: dict[str, dict], failed: dict[str, dict[str, str]], allow_partial: bool | None
) -> tuple[str, ...]:
    """The one rule of core/outcome.py per judge (nothing when ``allow_partial`` is None)."""
    if allow_partial is None:
        return ()
    from halluscope.core.outcome import StepOutcome, check_outcomes

    outcomes = [
        StepOutcome(
            f"judge {j}",
            len(set(js) | set(failed.get(j, {}))),
            len(js),
            failed.get(j, {}),
            fix=f"check the judge {j} (its server and key), then run the same command again",
        )
        for j, js in judgements.items()
    ]
    kept = f"in {run_dir} (a rerun makes no call for the items judged); no table was written"
    return tuple(check_outcomes(outcomes, command="build judge", allow_partial=allow_partial, kept=kept))


def build_judge(
    run_dir: str | Path,
    judges: Sequence[str],
    *,
    per_cell: int = 8,
    seed: int = 0,
    retries: int = 3,
    config: LLMConfig | None = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
) -> JudgeResult:
    """Sample, judge (resuming), and write Table 9 / Table 10 / heatmaps into RUN/report/judge/.

    ``allow_partial``: None writes the tables whatever was judged; False / True applies the one rule of
    core/outcome.py per judge before any table is written (a judge failing on more than the share fails the
    command unless True; one that judged nothing always does)."""
    if not judges:
        raise HalluscopeError("no judge given: name one such as openai/<model> (two or more for agreement tables)")
    if len(set(judges)) != len(judges):
        twice = sorted({j for j in judges if judges.count(j) > 1})
        raise HalluscopeError(
            f"each judge may be named once, got {', '.join(twice)} twice. To use one model as two judges, give it a "
            f'second name in the LLM config: [models."{twice[0]}-b"] with model = "<the server\'s model name>" '
            '(openai/...) or path = "<checkpoint>" (hf/...), and pass --judge under both names'
        )
    if per_cell < 1 or retries < 0:
        raise HalluscopeError(f"per_cell must be >= 1 and retries >= 0, got {per_cell} and {retries}")
    config = config if config is not None else load_llm_config()
    run_dir = Path(run_dir)
    with Store(run_dir) as store:
        build = load_build(store)
        sample = stratified_sample(build.samples.values(), per_cell=per_cell, seed=seed)
        if not sample.ids:
            raise HalluscopeError(
                f"{run_dir} has no hallucinated rewrites to judge; build with rewrites_per_article >= 1"
            )
        langs = [lang for lang in LANGUAGES if any(build.samples[i].language == lang for i in sample.ids)]
        routes = {j: judge_routes(j, langs) for j in judges}  # judge name -> language -> backend spec
        backends = {
            spec: LLM_BACKENDS.create(spec, config=config)
            for spec in dict.fromkeys(s for r in routes.values() for s in r.values())
        }
        stages = {
            spec: judge_stage(b, retries=retries, generate_fp=build.stages["generate"]) for spec, b in backends.items()
        }
        wanted = {
            spec: [i for i in sample.ids if any(r[build.samples[i].language] == spec for r in routes.values())]
            for spec in backends
        }  # each backend's items, once however many judges share it
        work = []
        for spec, b in backends.items():
            done = store.done_ids("judge", stages[spec].fingerprint)
            work.append((b, stages[spec], [build.samples[i] for i in wanted[spec] if i not in done]))
        calls, outages = asyncio.run(_judge_all(store, work, build.samples, retries, quiet))
        got, lost = {}, {}
        for spec, st in stages.items():
            got[spec] = store.results(st.name, st.fingerprint, Judgement)
            lost[spec] = store.failures(st.name, st.fingerprint)
        judgements: dict[str, dict[str, Judgement]] = {}
        failed: dict[str, dict[str, str]] = {}
        stats: dict[str, CallStats] = {}
        for name, route in routes.items():  # each item by its language's backend; Judgement.judge names it
            j = name if is_per_language(name) else backends[name].spec
            by = {i: route[build.samples[i].language] for i in sample.ids}
            judgements[j] = {i: got[s][i] for i, s in by.items() if i in got[s]}
            failed[j] = {i: lost[s][i] for i, s in by.items() if i in lost[s]}
            stats[j] = CallStats()
            for spec in dict.fromkeys(route.values()):
                stats[j].add(calls.get(backends[spec].spec, CallStats()))
        notes = _check_judges(run_dir, judgements, failed, allow_partial)  # before any table is written
        # recorded after the rule: a judge run that failed is not recorded as complete
        record_manifest(
            store,
            command="build judge",
            config={
                "judges": list(judges),
                "per_cell": per_cell,
                "seed": seed,
                "retries": retries,
                "judge_params": JUDGE_PARAMS,
                "prompts": prompt_hash(),
                **(
                    {
                        "per_language": {j: r for j, r in routes.items() if is_per_language(j)},
                        "single": [backends[j].spec for j in judges if not is_per_language(j)],
                    }
                    if any(map(is_per_language, judges))
                    else {}
                ),
            },
            seeds={"sample": seed},
            stages={
                str(StageName("judge", subject=backends[spec].spec)): st.fingerprint for spec, st in stages.items()
            },
        )
        logs = store.results(LOG_STAGE, build.stages["generate"], RewriteLog)
        agreement = rating_agreement_rows(
            {j: {k: v.scores for k, v in js.items() if v.status == "ok"} for j, js in judgements.items()},
            DIMENSION_ORDER,
        )
        result = JudgeResult(run_dir, sample, judgements, failed, stats, agreement, {}, notes=notes)
        for spec, js in judgements.items():
            result.quality[spec] = mean_rows(
                (build.samples[k].type, build.samples[k].severity, build.samples[k].language, j.scores)
                for k, j in js.items()
                if j.status == "ok"
            )
        self_rows = mean_rows(
            (v.type, v.severity, v.language, lg.self_assessment.ratings)
            for k, lg in logs.items()
            if lg.accepted and lg.self_assessment and (v := build.samples.get(k)) is not None
        )
        unscored = [
            {"judge": j, "item_id": k, "reason": x.unscored_reason}
            for j, js in judgements.items()
            for k, x in sorted(js.items())
            if x.status == "unscored"
        ] + [{"judge": j, "item_id": k, "reason": r} for j, fs in failed.items() for k, r in sorted(fs.items())]
        summary = {
            "sampled": len(sample.ids),
            "per_cell": per_cell,
            "judges": result.summary(),
            "short_cells": [
                f"{t}/{s}/{lang} ({taken} of {per_cell})" for (t, s, lang), (_, taken) in sample.short_cells.items()
            ],
        }
        out = run_dir / "report" / "judge"
        result.files = write_tables(
            out,
            agreement=result.agreement,
            quality=result.quality,
            self_assessment=self_rows,
            summary=summary,
            unscored=unscored,
        )
        (out / "summary.json").write_text(
            json.dumps(
                {**summary, "agreement": result.agreement, "calls": {j: s.as_dict() for j, s in stats.items()}},
                indent=2,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        result.files.append(out / "summary.json")
        if outages:  # after the report, so the other judges' tables are there
            raise outages[0]
        return result


def stored_judgements(
    store: Store, lang_of: Mapping[str, str], *, latest_run: bool = False
) -> dict[str, dict[str, Judgement]]:
    """judge -> item -> Judgement over every 'build judge' run (or the latest only), each model's latest stage: a
    per-language judge gathers each item (``lang_of``: item -> language) from its language's model; every other
    judge is one stage."""
    latest: dict[str, str] = {}  # model spec -> its latest judge stage
    names: dict[str, dict[str, str] | None] = {}  # judge -> its routes (None: one model)
    if latest_run:
        manifests = [m] if (m := store.latest_manifest("build judge")) is not None else []
    else:
        manifests = [m for m in store.manifests() if m.command == "build judge"]
    for m in manifests:
        stages = {
            n.subject: fp
            for k, fp in m.stages.items()
            if (n := StageName.parse(k)) is not None and n.kind == "judge" and n.subject is not None
        }
        latest.update(stages)
        per = m.config.get("per_language") or {}
        names.update({spec: None for spec in (m.config.get("single", []) if per else stages)})
        names.update(per)
    got = {spec: store.results("judge", fp, Judgement) for spec, fp in latest.items()}
    out: dict[str, dict[str, Judgement]] = {}
    for name, route in sorted(names.items()):
        if route is None:
            out[name] = got.get(name, {})
        else:
            out[name] = {
                i: r[i] for i, lang in lang_of.items() if lang in route and i in (r := got.get(route[lang], {}))
            }
    return out
