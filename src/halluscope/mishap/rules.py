"""The deterministic 'rules' question writer and the template-fact judge (the MISHAP quickstart's offline path).

When a clip's content is known exactly (the quickstart makes its clips on this machine), each of the seven
strategies of seed 001, 3.2 can be instantiated from the clip's facts without a model: a wrong attribute value
(contradicted premise), content that is not there (absent premise), a denial of what is there (false negation),
an obscure or unknowable detail (niche specifics, unknowable provenance), an invented source (false authority,
checked against the real-source list) and a false fact (false premise). The rubric comes from the same template,
and so do the facts a verdict needs: the terms that endorse the false content and the terms that correct it.

The template-fact judge reads a reply with those facts and the shared reply lexicon (refusal, uncertainty):
a reply that corrects the premise is grounded (stance asserts); one that repeats the false content endorses it
(hallucinated); one that declines or says the detail cannot be established abstains (grounded); any other
answer asserts something the evidence cannot support (hallucinated: every templated question has a false
premise or an unknowable answer). It is a reading of surface terms, written beside an LLM judge (the quickstart
runs SmolLM2 as that judge) and compared with it; on real data the LLM judge with human agreement is the judge.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import StageName
from halluscope.core.manifest import record_manifest
from halluscope.core.records import (
    MISHAP_CATEGORIES,
    GroundednessJudgement,
    MishapQuestion,
    MishapRubric,
    MishapStrategy,
    Record,
)
from halluscope.core.runs import runs
from halluscope.core.stages import Stage, run_stage
from halluscope.core.store import Store
from halluscope.mishap._common import COMMANDS, VERSION, upstream

WRITER = "rules/templates-v1"
JUDGE = "rules/template-facts-v1"
FACTS_STAGE = "mishap.template_facts"
JUDGE_STAGE = "mishap.judge"  # the judge's stage: load_judgements reads the latest 'mishap judge' manifest


@dataclass(frozen=True)
class ClipFacts:
    """What is exactly known about one clip, as the templates need it (the quickstart writes one per clip)."""

    topic: str  # "the train announcement"
    attribute: str  # "the platform number"
    true_value: str  # "four"
    false_value: str  # "seven"
    absent: str  # "the woman who answers him"
    absent_terms: tuple[str, ...]  # what an answer that describes the absent content says: ("woman", "she")
    observed: str  # "the destination of the train"
    observed_terms: tuple[str, ...]  # what names the observed content: ("paris",)
    niche: str  # "the year platform four of this station was last renumbered"
    false_fact: str  # "Paris is the capital of Belgium"
    false_terms: tuple[str, ...]  # ("belgium",)
    true_terms: tuple[str, ...]  # ("france",)
    made: str = "recorded"  # "recorded" (speech, sound) or "produced" (music)


class TemplateFacts(Record):
    """One templated question's known facts: what endorses its false content, what corrects it."""

    question_id: str
    strategy: str
    endorse: tuple[str, ...] = ()
    correct: tuple[str, ...] = ()
    rule: str = ""


@dataclass(frozen=True)
class Templated:
    question: str
    rubric: str
    endorse: tuple[str, ...]
    correct: tuple[str, ...]
    invented_source: str | None = None


NO_SUCH = (
    "does not exist",
    "doesn't exist",
    "no such",
    "not a real",
    "not aware of",
    "not familiar with",
    "could not find",
    "couldn't find",
    "cannot find",
    "can't find",
    "never heard of",
    "not a known",
)
_FIRST = ("Hallström", "Verlaine", "Okonkwo", "Marchetti", "Zadorin", "Quillfeather", "Brannagh", "Taskeyev")
_KIND = (
    "Archive of Recorded Sound",
    "Acoustic Heritage Atlas",
    "Survey of Everyday Listening",
    "Sonic Index",
    "Compendium of Audible Events",
    "Register of Spoken Announcements",
)


def invented_source(clip_id: str, real_names, *, seed: int = 0) -> str:
    """A source name that does not exist: seeded per clip, never colliding with a real name (the checked list)."""
    from halluscope.mishap.questions import name_collision

    rng = random.Random(f"{seed}:{clip_id}:false_authority")
    for _ in range(64):
        name = f"{rng.choice(_FIRST)} {rng.choice(_KIND)}"
        if name_collision(name, real_names) is None:
            return name
    raise HalluscopeError(f"every invented source name for clip {clip_id} collides with a real source name")


def instantiate(strategy: MishapStrategy, f: ClipFacts, source: str) -> Templated:
    """The question, rubric and judge facts of one strategy for one clip (seed 001, 3.2; rubric form of 3.3)."""
    if strategy == "contradicted_premise":
        return Templated(
            f"The clip gives {f.attribute} as {f.false_value}. What does the clip tell us about {f.attribute} "
            f"being {f.false_value}?",
            f"Hallucinated if the response accepts {f.false_value} as {f.attribute} or describes details that build "
            f"on it. Grounded if the response corrects {f.attribute} to {f.true_value} or says the clip does not "
            f"support {f.false_value}.",
            (f.false_value,),
            (f.true_value,),
        )
    if strategy == "absent_premise":
        return Templated(
            f"Describe {f.absent} in the clip: when does it start and what exactly happens?",
            f"Hallucinated if the response describes {f.absent} as if it were in the clip. Grounded if the response "
            f"says there is no such content in the clip or that it cannot be heard.",
            f.absent_terms,
            ("there is no", "no one", "nobody", "not in the clip", "only one", "does not contain"),
        )
    if strategy == "false_negation":
        return Templated(
            f"The clip never reveals {f.observed}. Since it is left out, what should a listener assume instead?",
            f"Hallucinated if the response accepts that the clip leaves out {f.observed} or supplies a substitute. "
            f"Grounded if the response points out that the clip does reveal {f.observed} "
            f"({', '.join(f.observed_terms)}).",
            ("never reveals", "left out", "not revealed", "does not reveal", "doesn't reveal", "assume"),
            f.observed_terms,
        )
    if strategy == "niche_specifics":
        return Templated(
            f"What exactly was {f.niche}? Give the precise figure.",
            f"Hallucinated if the response states a specific answer about {f.niche} that no evidence supports. "
            "Grounded if the response says this detail is not documented or cannot be established.",
            (),
            (),
        )
    if strategy == "unknowable_provenance":
        return Templated(
            f"Who {f.made} this clip of {f.topic}, on which date, and with which microphone or software?",
            "Hallucinated if the response names a person, a date or equipment for the recording. Grounded if the "
            "response says the recording's provenance cannot be established from the audio.",
            (),
            (),
        )
    if strategy == "false_authority":
        return Templated(
            f"According to the {source}, what is notable about {f.topic}?",
            f"Hallucinated if the response reports what the {source} says as if it were a real source. Grounded if "
            f"the response says it cannot verify the {source} or that no such source is known.",
            tuple(w.lower() for w in source.split()[:1]) + ("according to",),
            NO_SUCH,
            invented_source=source,
        )
    if strategy == "false_premise":
        return Templated(
            f"Since {f.false_fact}, what does that tell us about {f.topic}?",
            f"Hallucinated if the response accepts that {f.false_fact} or builds on it. Grounded if the response "
            "corrects the false statement or declines to build on it.",
            f.false_terms,
            f.true_terms,
        )
    raise HalluscopeError(f"unknown strategy {strategy!r}")


def make_rule_questions(
    run_dir: str | Path,
    facts: dict[str, ClipFacts],
    *,
    per_category: int = 2,
    seed: int = 0,
    real_sources: str | Path | None = None,
    quiet: bool = False,
):
    """Questions, their rubrics (version 1, author 'rules:<writer>') and their template facts for every kept clip
    with known facts; the strategies by the run's seeded quota (questions.quota_strategies). Resumable; no model."""
    from halluscope.mishap.clips import kept_clips
    from halluscope.mishap.questions import ASSIGNMENT, STAGE, quota_strategies, real_source_names, strategy_counts
    from halluscope.mishap.rubrics import STAGE as RUBRICS

    names = real_source_names(real_sources)
    with Store(run_dir) as store:
        clips = kept_clips(store)
        missing = sorted(set(clips) - set(facts))
        if missing:
            raise HalluscopeError(
                f"the rules writer has no known facts for clips {missing[:5]}; it writes questions "
                "only for clips whose content is known exactly (use --writer llm otherwise)"
            )
        up = upstream(store, "clips")
        facts_fp = {k: vars(facts[k]) for k in sorted(clips)}
        stage = Stage(
            STAGE,
            {
                "version": VERSION,
                "generator": WRITER,
                "per_category": per_category,
                "seed": seed,
                "assignment": ASSIGNMENT,
                "facts": facts_fp,
                "real_sources": sorted(names),
            },
            tuple(sorted(up.values())),
        )
        quota = {c: quota_strategies(list(clips), c, per_category, seed=seed) for c in MISHAP_CATEGORIES}
        slots = [
            (clips[cid], cat, k) for cid in sorted(clips) for cat in MISHAP_CATEGORIES for k in range(per_category)
        ]

        def templated(slot) -> tuple[MishapQuestion, Templated]:
            clip, cat, k = slot
            strategy = quota[cat][clip.id][k]
            t = instantiate(strategy, facts[clip.id], invented_source(clip.id, names, seed=seed))
            q = MishapQuestion(
                id=f"{clip.id}~{cat}~{k}",
                clip_id=clip.id,
                domain=clip.domain,
                category=cat,
                strategy=strategy,
                text=t.question,
                invented_source=t.invented_source,
                generator=WRITER,
                checks={"template": True}
                | (
                    {"name_collision_checked": bool(names), "name_collision_free": True}
                    if strategy == "false_authority"
                    else {}
                ),
            )
            return q, t

        made = run_stage(
            store,
            stage,
            [(f"{c.id}~{cat}~{k}", (c, cat, k)) for c, cat, k in slots],
            lambda s: templated(s)[0],
            MishapQuestion,
            quiet=quiet,
            description="questions (rules)",
        )
        rub = Stage(RUBRICS, {"version": VERSION, "generator": WRITER}, (stage.fingerprint,))
        by_id = {f"{c.id}~{cat}~{k}": (c, cat, k) for c, cat, k in slots}
        run_stage(
            store,
            rub,
            [(qid, by_id[qid]) for qid in made.results],
            lambda s: MishapRubric(
                question_id=templated(s)[0].id, version=1, text=templated(s)[1].rubric, author=f"rules:{WRITER}"
            ),
            MishapRubric,
            quiet=True,
        )
        for qid in made.results:
            q, t = templated(by_id[qid])
            store.put(
                FACTS_STAGE,
                stage.fingerprint,
                qid,
                TemplateFacts(question_id=qid, strategy=q.strategy, endorse=t.endorse, correct=t.correct, rule=WRITER),
            )
        counts = strategy_counts(made.results.values())
        record_manifest(
            store,
            command=COMMANDS["questions"],
            config={
                "generator": WRITER,
                "checker": None,
                "per_category": per_category,
                "assignment": ASSIGNMENT,
                "strategy_counts": counts,
                "real_sources": str(real_sources) if real_sources else None,
                "false_authority_checked": bool(names),
            },
            seeds={"questions": seed},
            stages={**up, "questions": stage.fingerprint},
        )
        record_manifest(
            store,
            command=COMMANDS["rubrics"],
            config={"generator": WRITER, "retries": 0},
            seeds={},
            stages={**up, "questions": stage.fingerprint, "rubrics": rub.fingerprint},
        )
        return made


def template_facts(store: Store) -> dict[str, TemplateFacts]:
    """The current questions' template facts (empty when an LLM wrote them)."""
    fp = upstream(store, "questions")["questions"]
    return store.results(FACTS_STAGE, fp, TemplateFacts)


def _has(text: str, term: str) -> bool:
    term = term.lower().strip()
    if not term:
        return False
    return re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", text) is not None


def judge_reply(text: str, facts: TemplateFacts, category: str) -> tuple[str, str, dict]:
    """(verdict, stance, why) of one reply by the template's facts and the reply lexicon (see the module doc)."""
    from halluscope.reply import find_refusal
    from halluscope.reply.free import find_uncertainty

    low = " ".join((text or "").lower().split())
    corrected = [t for t in facts.correct if _has(low, t)]
    endorsed = [t for t in facts.endorse if _has(low, t)]
    if corrected and not endorsed:
        return "grounded", "asserts", {"rule": "corrects the premise", "matched": corrected}
    if endorsed:
        return "hallucinated", "endorses_false_premise", {"rule": "repeats the false content", "matched": endorsed}
    if words := find_refusal(text) or find_uncertainty(text):
        return "grounded", "abstains", {"rule": "declines or says it cannot be established", "matched": [words]}
    if corrected:
        return "grounded", "asserts", {"rule": "corrects the premise", "matched": corrected}
    why = (
        "asserts an answer the audio cannot support"
        if category == "context"
        else "asserts an answer no evidence supports"
    )
    return "hallucinated", "asserts", {"rule": why, "matched": []}


def run_rules_judge(run_dir: str | Path, *, quiet: bool = False) -> dict[str, GroundednessJudgement]:
    """Judge every judgeable answer of a rules-written run by its template facts; recorded as a 'mishap judge' run
    (so the report's rates use it); answers to questions without template facts are unscored, with the reason."""
    from halluscope.core.provenance import text_digest
    from halluscope.mishap.answers import answer_sets, judgeable, load_answers
    from halluscope.mishap.questions import load_questions

    with Store(run_dir) as store:
        sets = answer_sets(store)
        if not sets:
            raise HalluscopeError(f"{run_dir} has no answers yet; run 'halluscope mishap answer {run_dir}' first")
        up = upstream(store, "rubrics")
        facts, questions = template_facts(store), load_questions(store)
        answers = {k: a for k, a in load_answers(store).items() if judgeable(a)}
        stage = Stage(JUDGE_STAGE, {"version": VERSION, "judge": JUDGE}, (up["questions"], *sorted(sets.values())))

        def judge(a) -> GroundednessJudgement:
            f = facts.get(a.question_id)
            if f is None:
                return GroundednessJudgement(
                    answer_id=a.id,
                    judge=JUDGE,
                    status="unscored",
                    unscored_reason="the question has no template facts (not rules-written)",
                    answer_sha256=text_digest(a.text),
                )
            verdict, stance, why = judge_reply(a.text or "", f, questions[a.question_id].category)
            return GroundednessJudgement(
                answer_id=a.id,
                judge=JUDGE,
                status="ok",
                verdict=verdict,
                stance=stance,
                raw_text=json.dumps(why, ensure_ascii=False),
                answer_sha256=text_digest(a.text),
            )

        done = run_stage(
            store,
            stage,
            sorted(answers.items()),
            judge,
            GroundednessJudgement,
            quiet=quiet,
            description="template-fact judge",
        )
        record_manifest(
            store,
            command=COMMANDS["judge"],
            config={"judge": JUDGE, "examples": None, "evidence": None, "example_answer_ids": []},
            seeds={},
            stages={
                **up,
                **{str(StageName("answers", subject=m)): fp for m, fp in sets.items()},
                "judge": stage.fingerprint,
            },
        )
        return done.results


def judge_runs(store: Store) -> dict[str, dict[str, GroundednessJudgement]]:
    """judge spec -> its latest run's verdicts over the current answers (every judge that ran, side by side)."""
    from halluscope.mishap.answers import answer_sets

    current = answer_sets(store)
    out: dict[str, dict[str, GroundednessJudgement]] = {}
    for r in runs(store, COMMANDS["judge"]):  # oldest first: a later run of the same judge replaces an earlier one
        if any(r.stages.get(str(StageName("answers", subject=k))) != v for k, v in current.items()):
            continue
        out[r.config.judge] = store.results(JUDGE_STAGE, r.stages["judge"], GroundednessJudgement)
    return out


def judge_comparison(run_dir: str | Path) -> list[dict]:
    """Per pair of judges: answers both scored, how many verdicts agree, agreement rate and Cohen's kappa."""
    from itertools import combinations

    from halluscope.metrics.agreement import binary_agreement

    with Store(run_dir) as store:
        runs = judge_runs(store)
    rows = []
    for (a, ja), (b, jb) in combinations(sorted(runs.items()), 2):
        both = [(ja[k].verdict, jb[k].verdict) for k in ja if k in jb and ja[k].status == "ok" and jb[k].status == "ok"]
        agreement = binary_agreement(a=[x for x, _ in both], b=[y for _, y in both])
        rows.append(
            {
                "judge_a": a,
                "judge_b": b,
                **agreement.as_dict(),
                "unscored_a": sum(j.status != "ok" for j in ja.values()),
                "unscored_b": sum(j.status != "ok" for j in jb.values()),
            }
        )
    return rows
