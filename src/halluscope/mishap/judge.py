"""Step 5: the groundedness judge (seed 001, section 3.3 and App. A.3).

A category-specific prompt (context / knowledge) carries the question, the response, the audio
description and the question's current rubric, tells the judge to examine every claim, and shows a
fixed set of three grounded and three hallucinated annotated examples. On knowledge questions an
optional evidence tool may be called repeatedly (``SEARCH: <query>``). A verdict is grounded or
hallucinated, with the stance and the raw judge text; a reply that stays unreadable is *unscored*.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from halluscope.backends.llm import LLM_BACKENDS, Caller, ChatBackend, LLMConfig, load_llm_config
from halluscope.backends.runner import CallSummary, ask_until_parsed, run_calls
from halluscope.core.errors import HalluscopeError, InputError
from halluscope.core.hashing import json_sha256, sha256_hex
from halluscope.core.keys import StageName
from halluscope.core.manifest import record_manifest
from halluscope.core.provenance import text_digest
from halluscope.core.records import (
    ChatMessage,
    EvidenceSearch,
    GroundednessJudgement,
    MishapAnswer,
    MishapCategory,
    MishapClip,
    MishapQuestion,
    MishapRubric,
)
from halluscope.core.spec import ModelSpec
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap._common import COMMANDS, VERSION, check_step, prompt, prompts_hash, upstream
from halluscope.mishap.answers import answer_sets, judgeable, load_answers  # noqa: F401 - judgeable: re-exported
from halluscope.mishap.clips import kept_clips
from halluscope.mishap.evidence import EvidenceTool
from halluscope.mishap.questions import load_questions
from halluscope.mishap.rubrics import current_rubrics, rubric_set_hash
from halluscope.prompts import Template
from halluscope.reply import STANCE, VERDICT, read_key

STAGE = "mishap.judge"
PARAMS = {"temperature": 0, "max_tokens": 600}
_SEARCH = re.compile(r"^\s*SEARCH:\s*(.+?)\s*$", re.M)


def load_examples(path: str | Path | None = None) -> dict[str, list[dict]]:
    """Three grounded and three hallucinated examples per category (default: the packaged set); every problem of
    the file is reported together (reading rules: halluscope.core.inputs)."""
    from halluscope.core.errors import Problems
    from halluscope.core.inputs import Field, check_record, describe, read_json

    fix = "pass a JSON file shaped like prompts/mishap/examples.json"
    if path is None:
        data = json.loads(
            (resources.files("halluscope") / "prompts" / "mishap" / "examples.json").read_text(encoding="utf-8")
        )
        src = "the packaged examples.json"
    else:
        data, src = read_json(path, what="judge examples file", fix=fix), str(path)
    if not isinstance(data, dict):
        raise InputError(f"expected an object with 'context' and 'knowledge', got {describe(data)}", file=src, fix=fix)
    fields = (
        *(Field(k) for k in ("question", "response", "description", "rubric", "verdict")),
        Field("stance", required=False),
        Field("explanation", required=False),
    )
    problems = Problems(src)
    out = {}
    for cat in ("context", "knowledge"):
        rows = data.get(cat)
        if not isinstance(rows, list):
            problems.add(f"expected a list of six example objects, got {describe(rows)}", field=cat)
            continue
        checked = [check_record(r, fields, problems, row=None, prefix=f"{cat}[{i}].") for i, r in enumerate(rows)]
        if any(c is None for c in checked):
            continue
        for i, c in enumerate(checked):
            if c["verdict"] not in ("grounded", "hallucinated"):  # type: ignore[index]
                problems.add(
                    f"expected 'grounded' or 'hallucinated', got {c['verdict']!r}",  # type: ignore[index]
                    field=f"{cat}[{i}].verdict",
                )
        counts = [sum(r["verdict"] == v for r in rows) for v in ("grounded", "hallucinated")]
        if counts != [3, 3] or len(rows) != 6:
            problems.add(f"needs exactly three grounded and three hallucinated examples, got {counts}", field=cat)
        out[cat] = rows
    problems.raise_if_any("judge examples file", fix=fix)
    return out


def format_examples(rows: list[dict], *, rubric: bool = True) -> str:
    parts = []
    for n, r in enumerate(rows, 1):
        verdict = {
            "verdict": r["verdict"],
            "stance": r.get("stance", "asserts"),
            "explanation": r.get("explanation", ""),
        }
        ref = f"\nReference rubric: {r['rubric']}" if rubric else ""
        parts.append(
            f"Example {n}\nQuestion: {r['question']}\nResponse: {r['response']}\nAudio description: "
            f"{r['description']}{ref}\nJudgement: {json.dumps(verdict, ensure_ascii=False)}"
        )
    return "\n\n".join(parts)


# seed 001, E.2 / E.3: what a judge configuration can leave out of the prompt, as the prompt files write it
_EXAMPLES_BLOCK = "Examples annotated by humans:\n{EXAMPLES}\n\n"
_RUBRIC_CUTS = ("Reference rubric: {RUBRIC}\n", " Apply the reference rubric written for this question.")
# packaged judge-prompt versions, each a folder of files: v3 the refined prompt (default), v1 the initial one, v2
# between them (seed 001, E.3 / Table 10)
PROMPT_VERSIONS = {"v3": "", "v1": "judge_v1/", "v2": "judge_v2/"}
_SLOTS = {
    "context": {"EXAMPLES", "QUESTION", "RESPONSE", "DESCRIPTION", "RUBRIC"},
    "knowledge": {"EXAMPLES", "QUESTION", "RESPONSE", "DESCRIPTION", "RUBRIC", "SEARCH INSTRUCTIONS"},
}


@dataclass(frozen=True)
class JudgeConfig:
    """One named judge configuration (seed 001, E.2 ablation / E.3 sensitivity): which inputs the prompt carries,
    the prompt version ('v3' packaged default, 'v1' the packaged initial prompt, or a folder holding
    judge.context.txt and judge.knowledge.txt) and the rubric version (None: each question's latest)."""

    name: str
    rubric: bool = True
    examples: bool = True
    evidence: bool = True
    prompt: str = "v3"
    rubric_version: int | None = None

    def template(self, category: MishapCategory) -> Template:
        """The judge prompt of this configuration, with the left-out inputs cut from it."""
        if self.prompt in PROMPT_VERSIONS:
            base = prompt(f"{PROMPT_VERSIONS[self.prompt]}judge.{category}")
        else:
            path = Path(self.prompt) / f"judge.{category}.txt"
            if not path.is_file():
                raise InputError(
                    f"judge configuration '{self.name}': no prompt file {path}",
                    file=str(path),
                    fix=f"give prompt as one of {sorted(PROMPT_VERSIONS)} or a folder with "
                    "judge.context.txt and judge.knowledge.txt",
                )
            base = Template(str(path), path.read_text(encoding="utf-8"))
            if base.slots != _SLOTS[category]:
                raise InputError(
                    f"expected the slots {sorted(_SLOTS[category])}, got {sorted(base.slots)}",
                    file=str(path),
                    fix="write the slots as the packaged judge prompts do",
                )
        cuts = ([] if self.examples else [_EXAMPLES_BLOCK]) + ([] if self.rubric else list(_RUBRIC_CUTS))
        text = base.text
        for cut in cuts:
            if cut not in text:
                raise InputError(
                    f"judge configuration '{self.name}' leaves out text the prompt does not have: expected {cut!r}",
                    file=base.name,
                    fix="keep the examples block and the rubric lines as the packaged prompts write them",
                )
            text = text.replace(cut, "")
        return Template(base.name, text)

    def identity(self) -> dict:
        """What makes two configurations judge differently (the name is a label, not part of it)."""
        texts = {c: sha256_hex(self.template(c).text, 16) for c in ("context", "knowledge")}
        return {k: v for k, v in asdict(self).items() if k != "name"} | {"templates": texts}


FULL = JudgeConfig("full")


def judge_messages(
    *,
    category: MishapCategory,
    question: str,
    response: str,
    description: str,
    rubric: str,
    examples: dict[str, list[dict]],
    max_searches: int = 0,
    config: JudgeConfig = FULL,
) -> list[ChatMessage]:
    t = config.template(category)
    values = {
        "EXAMPLES": format_examples(examples[category], rubric=config.rubric) if config.examples else "",
        "QUESTION": question,
        "RESPONSE": response,
        "DESCRIPTION": description,
        "RUBRIC": rubric,
    }
    if category == "knowledge":
        values["SEARCH INSTRUCTIONS"] = (
            prompt("search").render({"MAX SEARCHES": str(max_searches)}) if max_searches > 0 else ""
        )
    return [ChatMessage(role="user", content=t.render({k: v for k, v in values.items() if k in t.slots}))]


def parse_verdict(text: str | None) -> tuple[str | None, str | None, str | None]:
    """(verdict, stance or None, why unreadable): the last verdict the reply gives, in a JSON object or on a
    'Verdict: ...' line (a judge that drafts one verdict and concludes another is scored by its conclusion)."""
    verdict = read_key(text, "verdict", VERDICT)
    if not verdict.is_answer:
        return None, None, f"no verdict (grounded/hallucinated) in the reply: {verdict.reason}"
    stance = read_key(text, "stance", STANCE)
    return str(verdict.value), str(stance.value) if stance.is_answer else None, None


class GroundednessJudge:
    """One judge backend, its fixed examples and an optional evidence tool."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        examples: dict[str, list[dict]],
        tool: EvidenceTool | None = None,
        max_searches: int = 3,
        retries: int = 2,
        k: int = 3,
        config: JudgeConfig = FULL,
    ) -> None:
        self.config = config
        self.backend, self.examples = backend, examples
        self.tool = tool if config.evidence else None
        self.max_searches = max_searches if self.tool is not None else 0
        self.retries, self.k = retries, k

    def identity(self) -> dict:
        ex = json_sha256(self.examples, 16)
        out = {
            "version": VERSION,
            **self.backend.identity(),
            "params": PARAMS,
            "retries": self.retries,
            "examples": ex,
            "tool": self.tool.identity() if self.tool else None,
            "max_searches": self.max_searches,
            "k": self.k,
            "prompts": prompts_hash(),
        }
        return (
            out if self.config == FULL else out | {"config": self.config.identity()}
        )  # the default keeps its fingerprint

    async def judge(
        self, caller: Caller, answer: MishapAnswer, q: MishapQuestion, clip: MishapClip, rubric: MishapRubric
    ) -> GroundednessJudgement | str:
        return await self.judge_text(
            caller,
            answer_id=answer.id,
            category=q.category,
            question=q.text,
            response=answer.text or "",
            description=clip.description,
            rubric=rubric.text,
        )

    async def judge_text(
        self,
        caller: Caller,
        *,
        answer_id: str,
        category: MishapCategory,
        question: str,
        response: str,
        description: str,
        rubric: str,
    ) -> GroundednessJudgement | str:
        """Judge one response given as text (MISHAP answers and imported closed-form responses alike)."""
        base = judge_messages(
            category=category,
            question=question,
            response=response,
            description=description,
            rubric=rubric,
            examples=self.examples,
            config=self.config,
            max_searches=self.max_searches if category == "knowledge" else 0,
        )
        searches: list[EvidenceSearch] = []  # the searches of the current attempt
        turn = {"nonce": 0}

        def parse(resp):
            verdict, stance, why = parse_verdict(resp.text)
            if verdict is not None:
                return (verdict, stance), None
            return None, why + (" (search limit reached)" if _SEARCH.search(resp.text or "") else "")

        def follow(resp, req):  # 'SEARCH: <query>' on a knowledge question: the evidence, then the same attempt goes on
            if req.nonce != turn["nonce"]:
                turn["nonce"] = req.nonce
                searches.clear()
            m = _SEARCH.search(resp.text or "")
            if not m or self.tool is None or category != "knowledge" or len(searches) >= self.max_searches:
                return None
            query = m.group(1)
            hits = self.tool.search(query, self.k)
            searches.append(EvidenceSearch(query=query, results=tuple(h.doc_id for h in hits)))
            listing = "\n".join(f"[{h.doc_id}] {h.title}: {h.snippet}" for h in hits) or "(no documents found)"
            messages = [
                *req.messages,
                ChatMessage(role="assistant", content=resp.text or ""),
                ChatMessage(role="user", content=prompt("evidence").render({"QUERY": query, "RESULTS": listing})),
            ]
            return self.backend.request(messages, nonce=req.nonce, tag=req.tag, params=PARAMS)

        def request(nonce: int):
            if nonce != turn["nonce"]:
                turn["nonce"] = nonce
                searches.clear()
            return self.backend.request(base, nonce=nonce, tag=f"{STAGE}:{answer_id}", params=PARAMS)

        asked = await ask_until_parsed(caller, request, parse, self.retries, follow=follow)
        if asked.status == "failed":
            return f"{self.backend.spec}: {asked.error}"
        # what the verdict read: the response text, the judge and its prompt (core/provenance.py)
        read: dict[str, Any] = {
            "answer_id": answer_id,
            "judge": self.backend.spec,
            "raw_text": asked.raw_text,
            "searches": tuple(searches),
            "call_keys": asked.keys,
            "answer_sha256": text_digest(response),
            "prompt": f"{self.config.prompt}@{prompts_hash()[:12]}",
        }
        if asked.ok:
            verdict, stance = asked.value
            return GroundednessJudgement(status="ok", verdict=verdict, stance=stance, **read)
        return GroundednessJudgement(status="unscored", unscored_reason=asked.reason, **read)


def run_judge(
    run_dir: str | Path,
    judge: ModelSpec | str,
    *,
    examples: str | Path | None = None,
    evidence: str | Path | None = None,
    max_searches: int = 3,
    retries: int = 2,
    config: LLMConfig | None = None,
    quiet: bool = False,
    judge_config: JudgeConfig = FULL,
    answers: dict[str, str] | None = None,
    command: str = COMMANDS["judge"],
    allow_partial: bool | None = None,
) -> CallSummary[GroundednessJudgement]:
    """Judge every answer of every model answered so far against the current rubrics (``judge_config``: which
    inputs the prompt carries and its version; the default is the full judge).

    ``answers`` (name -> answers stage key) judges that population instead of the tables' (a sweep's arms) and
    ``command`` names the manifest it records: a sweep's judge runs are its own, never the report's judge."""
    judge = ModelSpec.parse(judge)  # parsed once at the entry (the verdicts carry its backend's name, as before)
    backend = LLM_BACKENDS.create(judge, config=config if config is not None else load_llm_config())
    tool = None
    if evidence is not None:
        from halluscope.mishap.evidence import FtsEvidence

        tool = FtsEvidence(evidence)
    gj = GroundednessJudge(
        backend,
        examples=load_examples(examples),
        tool=tool,
        max_searches=max_searches,
        retries=retries,
        config=judge_config,
    )
    from halluscope.mishap.answers import STAGE as ANSWER_STAGE

    with Store(run_dir) as store:
        sets = answer_sets(store) if answers is None else dict(answers)
        if not sets:
            raise HalluscopeError(
                f"{run_dir} has no answers yet; run 'halluscope mishap answer {run_dir} --model ...' first"
            )
        questions, clips, rubrics = load_questions(store), kept_clips(store), current_rubrics(store)
        asked = (
            load_answers(store)
            if answers is None
            else {k: a for fp in sets.values() for k, a in store.results(ANSWER_STAGE, fp, MishapAnswer).items()}
        )
        todo = {k: a for k, a in asked.items() if judgeable(a) and a.question_id in rubrics}
        up = upstream(store, "rubrics")
        stage = Stage(
            STAGE, {**gj.identity(), "rubrics": rubric_set_hash(rubrics)}, (up["rubrics"], *sorted(sets.values()))
        )

        async def fn(caller: Caller, a: MishapAnswer) -> GroundednessJudgement | str:
            q = questions[a.question_id]
            return await gj.judge(caller, a, q, clips[q.clip_id], rubrics[q.id])

        res = run_calls(
            store,
            stage,
            sorted(todo.items()),
            backend,
            fn,
            GroundednessJudgement,
            description="groundedness judge",
            quiet=quiet,
        )
        check_step(res, command=command, step="judgements", allow_partial=allow_partial)
        record_manifest(
            store,
            command=command,
            config={
                "judge": judge.text,
                "examples": str(examples) if examples else "packaged",
                "evidence": str(evidence) if evidence else None,
                "max_searches": max_searches,
                "retries": retries,
                "rubrics": rubric_set_hash(rubrics),
                # answers shown as in-context examples: left out of judge-human agreement
                "example_answer_ids": sorted(
                    r["answer_id"] for rs in gj.examples.values() for r in rs if r.get("answer_id")
                ),
            },
            seeds={},
            stages={
                **up,
                **{str(StageName("answers", subject=m)): fp for m, fp in sets.items()},
                "judge": stage.fingerprint,
            },
        )
        return res


def load_judgements(store: Store) -> dict[str, GroundednessJudgement]:
    """The latest judge run's verdicts on the current answer texts, by answer id (empty before any judge run).
    A verdict on a text since re-made is left out, as is an answer never judged: ``select(store, "verdicts")``
    (halluscope/current.py) lists both, with the command that judges them."""
    from halluscope.current import select

    return dict(select(store, "verdicts")["verdicts"].current)


def examples_from_annotations(run_dir: str | Path, *, seed: int = 0) -> tuple[dict[str, list[dict]], list[str]]:
    """Draw the judge's fixed in-context set from human labels: per category, three responses annotated
    grounded and three annotated hallucinated, seeded; only responses whose annotators all agree are
    eligible. Human labels carry no stance, so each example shows the stance the latest judge run read
    for that response; responses without one are not eligible (never shown as a guessed 'asserts').
    Returns the examples (load_examples' schema, each with its 'answer_id') and the answer ids used:
    'mishap judge' records them and the report leaves them out of judge-human agreement."""
    import random

    from halluscope.mishap.labels import annotation_items, human_labels

    items, _ = annotation_items(run_dir)
    by_id = {it["id"]: it for it in items}
    with Store(run_dir) as store:
        stances = {k: j.stance for k, j in load_judgements(store).items() if j.status == "ok" and j.stance}
    votes: dict[str, set[str]] = {}
    for (answer_id, _annotator), label in human_labels(run_dir).items():
        votes.setdefault(answer_id, set()).add(label)
    rng = random.Random(seed)
    out: dict[str, list[dict]] = {}
    used: list[str] = []
    for cat in ("context", "knowledge"):
        chosen = []
        for verdict in ("grounded", "hallucinated"):
            unanimous = sorted(
                a
                for a, v in votes.items()
                if v == {verdict} and a in by_id and by_id[a]["category"] == cat and by_id[a]["rubric"]
            )
            pool = [a for a in unanimous if a in stances]
            if len(pool) < 3:
                no_stance = len(unanimous) - len(pool)
                raise InputError(
                    f"only {len(pool)} {cat} response(s) unanimously annotated {verdict} with a stance read by the "
                    f"judge ({no_stance} more have no judge stance); three are needed",
                    file=str(Path(run_dir) / "halluscope.sqlite"),
                    fix="annotate more responses with 'halluscope mishap annotate' (after 'mishap judge'), "
                    "or pass --examples FILE",
                )
            for answer_id in rng.sample(pool, 3):
                it = by_id[answer_id]
                chosen.append(
                    {k: it[k] for k in ("question", "description", "rubric", "response")}
                    | {"verdict": verdict, "stance": stances[answer_id], "answer_id": answer_id}
                )
                used.append(answer_id)
        out[cat] = chosen
    return out, used
