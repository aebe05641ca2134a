"""The offline MISHAP quickstart ('halluscope quickstart mishap'): every step of seed 001 on real models, no network.

Clips are made on this machine, so their descriptions are exact: espeak-ng speech (the description is the text it
spoke) and numpy-made music and sounds (a chord, a metronome, a tone, noise, a sweep; the description states the
synthesis parameters). Questions, rubrics and verdicts come from SmolLM2-135M-Instruct (``hf/smollm2-135m-instruct``,
the smollm extra); answers from the cascade ``cascade/whisper/base+hf/smollm2-135m-instruct`` (Whisper base hears
the clip, the same LLM answers from the transcript). A 135M model fails much of the protocol: ``protocol_summary``
counts, per step, what was accepted, what failed (with its reason), what could not be parsed and what was a
refusal, with examples, and the quickstart writes it beside the MISHAP report. Every step resumes from the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.mishap.quickstart_clips import (  # re-exported: the clips are part of the quickstart's surface
    CLIPS as CLIPS,
    DEFAULT_CLIPS as DEFAULT_CLIPS,
    RATE as RATE,
    SPEECH as SPEECH,
    SynthClip as SynthClip,
    _facts as _facts,
    chord as chord,
    metronome as metronome,
    noise as noise,
    speech as speech,
    sweep as sweep,
    write_clips as write_clips,
)

LLM = "hf/smollm2-135m-instruct"
CASCADE = f"cascade/whisper/base+{LLM}?language=en"
DEFAULT_DIR = Path("runs/quickstart-mishap")
# -- how the real model kept the protocol -----------------------------------------------------------------------------
STEPS = (  # (step, call-tag prefix, what a readable reply holds); longer prefixes first
    ("question check", "mishap.questions.check:", "an 'adheres' verdict"),
    ("questions", "mishap.questions:", "a JSON question list"),
    ("rubrics", "mishap.rubrics:", "'Hallucinated if ... Grounded if ...'"),
    ("answers", "mishap.answers:", "any text"),
    ("judge", "mishap.judge:", "a grounded/hallucinated verdict"),
)
EXAMPLES = 2


def _readable(step: str, text: str) -> bool:
    from halluscope.mishap.judge import parse_verdict
    from halluscope.mishap.rubrics import check_form
    from halluscope.reply import last_json, read_check

    if step == "question check":
        return read_check(text, "adheres")[0] is not None
    if step == "questions":
        return last_json(text, list) is not None or last_json(text, dict) is not None
    if step == "rubrics":
        return check_form(text) is not None
    if step == "judge":
        return parse_verdict(text)[0] is not None
    return bool(text.strip())


def _snippet(text: str, n: int = 140) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= n else one[: n - 3] + "..."


def _reply(stored: dict) -> tuple[str, str | None]:
    """(text, finish_reason) of a stored reply: a local model's dict, an OpenAI-compatible server's body, or a
    cascade's, which keeps the text LLM's reply under 'llm'."""
    if "transcripts" in stored:
        stored = stored.get("llm") or {}
    if "body" in stored:
        try:
            choice = json.loads(stored["body"])["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            return str(stored.get("body") or ""), None
        message = choice.get("message") or {}
        return message.get("content") or message.get("refusal") or "", choice.get("finish_reason")
    return stored.get("text") or "", stored.get("finish_reason")


def protocol_summary(run_dir: str | Path) -> list[dict]:
    """Per step, from the store: the model calls (readable, unparsable, refusals, cut at the token limit, failed)
    and the items (accepted, failed or unscored), each count with up to two examples (a reply or a reason)."""
    from halluscope.core.records import MishapQuestion, MishapRubric
    from halluscope.core.store import Store
    from halluscope.mishap._common import upstream
    from halluscope.mishap.answers import answer_failures, load_answers
    from halluscope.mishap.judge import load_judgements
    from halluscope.mishap.questions import STAGE as QUESTIONS
    from halluscope.mishap.rubrics import STAGE as RUBRICS
    from halluscope.reply import find_refusal

    rows = {
        s: {
            "step": s,
            "calls": 0,
            "readable": 0,
            "unparsable": 0,
            "refusals": 0,
            "truncated": 0,
            "call_errors": 0,
            "accepted": None,
            "failed": None,
            "examples": {},
        }
        for s, _, _ in STEPS
    }

    def example(row: dict, kind: str, text: str) -> None:
        row["examples"].setdefault(kind, [])
        if len(row["examples"][kind]) < EXAMPLES:
            row["examples"][kind].append(_snippet(text))

    with Store(run_dir) as store:
        for call in store.calls():
            tag = json.loads(call["request"]).get("tag") or ""
            step = next((s for s, prefix, _ in STEPS if tag.startswith(prefix)), None)
            if step is None:
                continue
            row = rows[step]
            row["calls"] += 1
            if call["status"] != "ok":
                row["call_errors"] += 1
                example(row, "call_errors", f"{call['status']}: {call['response'] or ''}")
                continue
            text, finish = _reply(json.loads(call["response"] or "{}"))
            if finish == "length":
                row["truncated"] += 1
                example(row, "truncated", text)
            if find_refusal(text):
                row["refusals"] += 1
                example(row, "refusals", text)
            elif _readable(step, text):
                row["readable"] += 1
            else:
                row["unparsable"] += 1
                example(row, "unparsable", text)
        stages = {}
        for step in ("questions", "rubrics"):
            try:
                stages[step] = upstream(store, step)[step]
            except HalluscopeError:
                continue
        for step, stage, cls in (("questions", QUESTIONS, MishapQuestion), ("rubrics", RUBRICS, MishapRubric)):
            if step in stages:
                row = rows[step]
                failed = store.failures(stage, stages[step])
                row["accepted"], row["failed"] = len(store.results(stage, stages[step], cls)), len(failed)
                for reason in list(failed.values())[:EXAMPLES]:
                    example(row, "failed", reason)
        if "questions" in stages:
            answers, failed = load_answers(store), answer_failures(store)
            row = rows["answers"]
            row["accepted"] = sum(a.status == "ok" and not find_refusal(a.text) for a in answers.values())
            row["failed"] = len(failed) + sum(a.status not in ("ok", "refusal") for a in answers.values())
            for reason in list(failed.values())[:EXAMPLES]:
                example(row, "failed", reason)
            from halluscope.mishap.rules import judge_runs

            # the model judge's calls are counted above: its own verdicts, not the template judge's beside it
            judged = next(
                (v for k, v in judge_runs(store).items() if not k.startswith("rules/")), load_judgements(store)
            )
            row = rows["judge"]
            row["accepted"] = sum(j.status == "ok" for j in judged.values())
            row["failed"] = sum(j.status != "ok" for j in judged.values())
            for j in [j for j in judged.values() if j.status != "ok"][:EXAMPLES]:
                example(row, "failed", j.unscored_reason or "unscored")
    return [r for r in rows.values() if r["calls"] or r["accepted"] is not None]


COLUMNS = (
    ("step", "Step"),
    ("calls", "Model calls"),
    ("readable", "Readable"),
    ("unparsable", "Unparsable"),
    ("refusals", "Refusals"),
    ("truncated", "Cut at max tokens"),
    ("call_errors", "Call errors"),
    ("accepted", "Items accepted"),
    ("failed", "Items failed / unscored"),
)
KINDS = {
    "unparsable": "unparsable reply",
    "refusals": "refusal",
    "truncated": "cut at the token limit",
    "call_errors": "call error",
    "failed": "item failed",
}
EXAMPLE_COLUMNS = (("step", "Step"), ("kind", "What"), ("example", "Example (reply or reason)"))


def stalled(rows: list[dict]) -> str:
    """The sentence that says where the chain stopped: the first step with items offered and none accepted."""
    for r in rows:
        if r["accepted"] == 0 and r["failed"]:
            later = [x["step"] for x in rows[rows.index(r) + 1 :]]
            then = f", so {', '.join(later)} had nothing to do" if later else ""
            return f" The chain stopped at {r['step']}: none of its {r['failed']} items was accepted{then}."
    return ""


def protocol_section(run_dir: str | Path, model: str = LLM):
    """The protocol counts and their examples as a report section (two tables: protocol.csv, protocol_examples.csv)."""
    from halluscope.report.sections import Section
    from halluscope.report.table import Table

    rows = protocol_summary(run_dir)
    examples = [
        {"step": r["step"], "kind": KINDS[kind], "example": t}
        for r in rows
        for kind, texts in r["examples"].items()
        for t in texts
    ]
    return Section(
        f"How the real model kept the protocol ({model})",
        [
            "Each model call's reply is readable (it holds what its step asks: "
            + "; ".join(f"{s}: {what}" for s, _, what in STEPS)
            + "), unparsable or a refusal; 'cut at max tokens' "
            "counts replies that hit the token limit (each is also one of the three). Items are the step's records: "
            "questions and rubrics accepted or failed after their retries, answers, and verdicts scored or unscored."
            + stalled(rows),
            Table(
                "protocol",
                list(COLUMNS),
                [{k: r[k] for k, _ in COLUMNS} for r in rows],
                title="Calls and items per step",
            ),
            Table(
                "protocol_examples", list(EXAMPLE_COLUMNS), examples, title="Examples", empty="no failure of any kind"
            ),
        ],
    )


# -- the whole chain -------------------------------------------------------------------------------------------------
# Token budgets per step (the configured max_new_tokens of each step's hf backend, so in its fingerprint): the
# spec's budgets (questions 800, rubrics 300) take a 135M model minutes per call on 2 cores; these keep the
# quickstart to minutes and let truncation show up as a protocol failure of its own.
BUDGETS = {"questions": 160, "rubrics": 96, "answers": 64, "judge": 96}


@dataclass
class QuickstartResult:
    run: Path
    report: Path
    protocol: list[dict]
    seconds: float
    timings: dict[str, tuple[float, float]]  # step -> (wall s, this process's CPU s)


def _config(step: str, batch_size: int, base=None):
    """The step's token budget as the configured decoding parameter of both local (hf) and server (openai) LLMs."""
    from halluscope.backends.llm import LLMConfig

    base = base if base is not None else LLMConfig()
    # prefix_cache: the judge's instructions and six examples (~80% of its prompt) run through the model once
    hf = {"device": "cpu", "batch_size": batch_size, "prefix_cache": True, **base.hf}
    openai = dict(base.openai)
    return base.model_copy(
        update={
            "hf": {**hf, "params": {**hf.get("params", {}), "max_new_tokens": BUDGETS[step]}},
            "openai": {**openai, "params": {**openai.get("params", {}), "max_tokens": BUDGETS[step]}},
        }
    )


WRITERS = ("rules", "llm")


def run_quickstart(
    run_dir: str | Path = DEFAULT_DIR,
    *,
    clips: int = DEFAULT_CLIPS,
    llm: str = LLM,
    model: str = CASCADE,
    batch_size: int = 4,
    config=None,
    quiet: bool = False,
    writer: str = "rules",
    llm_judge: bool = True,
) -> QuickstartResult:
    """Clips -> questions -> rubrics -> answers -> judge -> the MISHAP report with the protocol section; resumes
    whatever is done (a rerun makes no model call).

    ``writer`` 'rules' (default): the deterministic templates of mishap/rules.py write two questions per category
    per clip (strategies by the seeded quota) and their rubrics from each clip's exact facts; the cascade answers;
    the template-fact judge gives the report's verdicts, with ``llm`` judging the same answers beside it
    (``llm_judge``). 'llm': ``llm`` writes one question per category per clip (checked by itself), the rubrics and
    the verdicts. ``llm``/``model`` may be any text LLM / audio LM spec (an 'openai/<name>' LLM takes its server
    from ``config``, an LLMConfig); each step's token budget (BUDGETS) is set on top of ``config``."""
    import time

    from halluscope.mishap.answers import collect_answers
    from halluscope.mishap.clips import import_clips
    from halluscope.mishap.judge import run_judge
    from halluscope.mishap.questions import make_questions
    from halluscope.mishap.rubrics import make_rubrics
    from halluscope.mishap.rules import make_rule_questions, run_rules_judge

    if writer not in WRITERS:
        raise HalluscopeError(f"--writer must be one of {', '.join(WRITERS)}, got {writer!r}")
    t0, timings = time.perf_counter(), {}
    run_dir = Path(run_dir)

    def timed(step: str, fn, *args, **kwargs) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        fn(run_dir, *args, quiet=quiet, **kwargs)
        timings[step] = (time.perf_counter() - wall, time.process_time() - cpu)

    manifest = write_clips(run_dir / "clips", clips)
    timed("clips", import_clips, manifest)  # no informativeness filter: the descriptions are exact by construction
    if writer == "rules":
        timed("questions", make_rule_questions, _facts(), per_category=2)
    else:
        timed(
            "questions",
            make_questions,
            llm,
            checker="same",
            per_category=1,
            retries=1,
            config=_config("questions", batch_size, config),
        )
        timed("rubrics", make_rubrics, llm, retries=1, config=_config("rubrics", batch_size, config))
    timed(
        "answers", collect_answers, model, max_tokens=BUDGETS["answers"], config=_config("answers", batch_size, config)
    )
    if writer == "llm":
        timed("judge", run_judge, llm, retries=1, config=_config("judge", batch_size, config))
    elif llm_judge:  # beside the template judge: one ask per answer (without the six examples SmolLM2-135M gave
        # no readable verdict on any of 12 answers; with them and a retry it took 290 CPU s, this about 200)
        timed("judge", run_judge, llm, retries=0, config=_config("judge", batch_size, config))
    if writer == "rules":  # last, so the report's rates are the template-fact judge's
        timed("template judge", run_rules_judge)
    report = write_quickstart_report(run_dir, llm)
    return QuickstartResult(run_dir, report, protocol_summary(run_dir), time.perf_counter() - t0, timings)


def judges_section(run_dir: str | Path):
    """The judges that ran on this run's answers, side by side (the template-fact judge and the LLM judge)."""
    from halluscope.mishap.rules import judge_comparison
    from halluscope.report.sections import Section
    from halluscope.report.table import Table

    cols = [
        ("judge_a", "Judge A"),
        ("judge_b", "Judge B"),
        ("n", "Both scored"),
        ("n_agree", "Agree"),
        ("agreement_rate", "AGR"),
        ("kappa", "Cohen's kappa"),
        ("unscored_a", "Unscored A"),
        ("unscored_b", "Unscored B"),
    ]
    return Section(
        "Judges side by side",
        [
            "The rates above use the latest judge run; every judge run over the same answers is compared here "
            "(the template-fact judge reads each reply with its question's known facts, mishap/rules.py).",
            Table(
                "judges",
                cols,
                judge_comparison(run_dir),
                title="Verdict agreement between judges",
                empty="one judge only",
            ),
        ],
    )


def write_quickstart_report(run_dir: str | Path, llm: str = LLM) -> Path:
    """The run's report (halluscope.report.write_report: RUN/report/, the page every run gets), then the MISHAP
    folder (RUN/report/mishap/) with the protocol and judge sections after it; returns the MISHAP HTML path."""
    from halluscope.mishap.report import write_mishap_report
    from halluscope.report import write_report

    write_report(run_dir)
    return write_mishap_report(run_dir, (protocol_section(run_dir, llm), judges_section(run_dir)))
