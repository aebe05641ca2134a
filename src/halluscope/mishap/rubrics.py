"""Step 3: one reference rubric per question, "Hallucinated if ... Grounded if ...", generated then editable.

Generated rubrics are version 1. An edit (exported to JSONL, changed by a person, imported) is appended
as the next version with its author; nothing is overwritten, and the judge uses the latest version of each.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from halluscope.backends.llm import LLM_BACKENDS, Caller, ChatBackend, LLMConfig, load_llm_config
from halluscope.backends.runner import CallSummary, ask_until_parsed, run_calls
from halluscope.core.errors import HalluscopeError, InputError, Problems
from halluscope.core.hashing import json_sha256
from halluscope.core.inputs import Field, read_rows, read_text
from halluscope.core.manifest import record_manifest
from halluscope.core.records import ChatMessage, MishapClip, MishapQuestion, MishapRubric
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap._common import COMMANDS, VERSION, check_step, prompt, prompts_hash, strategy_texts, upstream
from halluscope.mishap.clips import kept_clips
from halluscope.mishap.questions import load_questions

EDIT_FIELDS = (Field("question_id"), Field("rubric"), Field("note", required=False))
STAGE = "mishap.rubrics"
EDITS = "mishap.rubric_edits"
PARAMS = {"temperature": 0, "max_tokens": 300}
FORM = re.compile(r"(Hallucinated if\b.+?[.!]?)\s*(Grounded if\b.+)", re.S | re.I)


def check_form(text: str) -> str | None:
    """The rubric normalised to one line if it has the "Hallucinated if ... Grounded if ..." form, else None."""
    m = FORM.search(text or "")
    if m is None:
        return None
    hall, grounded = (" ".join(x.split()).strip().strip('"') for x in m.groups())
    hall = hall if hall.endswith((".", "!")) else hall + "."
    grounded = grounded if grounded.endswith((".", "!")) else grounded + "."
    return f"{hall[0].upper()}{hall[1:]} {grounded[0].upper()}{grounded[1:]}"


def rubric_messages(question: MishapQuestion, clip: MishapClip) -> list[ChatMessage]:
    return [
        ChatMessage(
            role="user",
            content=prompt("rubric").render(
                {
                    "DOMAIN": clip.domain,
                    "DESCRIPTION": clip.description,
                    "CATEGORY": question.category,
                    "STRATEGY DEFINITION": strategy_texts()["strategies"][question.strategy],
                    "QUESTION": question.text,
                }
            ),
        )
    ]


def parse_rubric(resp) -> tuple[str | None, str | None]:
    text = check_form(resp.text or "")
    return (
        (text, None)
        if text is not None
        else (None, f"not of the form 'Hallucinated if ... Grounded if ...': {(resp.text or '')[:120]!r}")
    )


async def _write(
    caller: Caller, backend: ChatBackend, q: MishapQuestion, clip: MishapClip, retries: int
) -> MishapRubric | str:
    """A rubric, or why there is none (a rubric record has no unscored state: an unreadable one fails the item)."""
    asked = await ask_until_parsed(
        caller, backend.request(rubric_messages(q, clip), tag=f"{STAGE}:{q.id}", params=PARAMS), parse_rubric, retries
    )
    if asked.status == "failed":
        return asked.failure
    if not asked.ok:
        return asked.reason
    return MishapRubric(question_id=q.id, version=1, text=asked.value, author=f"llm:{backend.spec}")


def make_rubrics(
    run_dir: str | Path,
    generator: str,
    *,
    retries: int = 2,
    config: LLMConfig | None = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
) -> CallSummary[MishapRubric]:
    """A rubric per question; ``allow_partial`` (None: off) applies the outcome rule before the step is recorded."""
    backend = LLM_BACKENDS.create(generator, config=config if config is not None else load_llm_config())
    with Store(run_dir) as store:
        up = upstream(store, "questions")
        questions, clips = load_questions(store), kept_clips(store)
        stage = Stage(
            STAGE,
            {"version": VERSION, **backend.identity(), "params": PARAMS, "retries": retries, "prompts": prompts_hash()},
            (up["questions"],),
        )

        async def fn(caller: Caller, q: MishapQuestion) -> MishapRubric | str:
            return await _write(caller, backend, q, clips[q.clip_id], retries)

        res = run_calls(
            store,
            stage,
            [(q.id, q) for q in questions.values()],
            backend,
            fn,
            MishapRubric,
            description="rubrics",
            quiet=quiet,
        )
        check_step(res, command=COMMANDS["rubrics"], step="rubrics", allow_partial=allow_partial)
        record_manifest(
            store,
            command=COMMANDS["rubrics"],
            config={"generator": generator, "retries": retries},
            seeds={},
            stages={**up, "rubrics": stage.fingerprint},
        )
        return res


# seed 001, 3.3 / E.3 (Table 9): named rubric formulations, each regenerating every rubric as its next version
FORMULATIONS = ("v1", "v2", "v3")  # v3: the packaged rubric.txt; v1, v2: prompts/mishap/rubric_formulations/
FORMULATION_STAGE = "mishap.rubric_formulation"
_SLOTS = {"DOMAIN", "DESCRIPTION", "CATEGORY", "STRATEGY DEFINITION", "QUESTION"}


def formulation_template(name: str | Path):
    """A rubric formulation: a packaged name (v1, v2, v3) or a template file with rubric.txt's slots."""
    from halluscope.prompts import Template

    if str(name) == "v3":
        return prompt("rubric")
    if str(name) in FORMULATIONS:
        return prompt(f"rubric_formulations/{name}")
    path = Path(name)
    text = read_text(
        path,
        what="rubric formulation template",
        fix=f"give one of {', '.join(FORMULATIONS)} or a text file with rubric.txt's slots",
    )
    t = Template(str(path), text)
    if t.slots - _SLOTS:
        raise InputError(
            f"unknown slots {sorted(t.slots - _SLOTS)}; expected some of {sorted(_SLOTS)}",
            file=str(path),
            fix="write the slots as prompts/mishap/rubric.txt does",
        )
    return t


def regenerate_rubrics(
    run_dir: str | Path,
    generator: str,
    formulation: str | Path,
    *,
    retries: int = 2,
    config: LLMConfig | None = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
) -> CallSummary[MishapRubric]:
    """Regenerate every rubric of the run from one formulation; each becomes that question's next version
    (author 'llm:<spec>', note 'formulation <name> <hash>'), so 'mishap ablation --preset rubrics' compares the
    formulations on the same answers (rubric v1, v2, v3 when the run's versions 1-3 are v1-v3's). Resumable: a
    formulation already appended is not appended again."""
    from halluscope.core.hashing import sha256_hex

    t = formulation_template(formulation)
    name, tid = (
        Path(str(formulation)).stem if str(formulation) not in FORMULATIONS else str(formulation),
        sha256_hex(t.text, 12),
    )
    note = f"formulation {name} {tid}"
    backend = LLM_BACKENDS.create(generator, config=config if config is not None else load_llm_config())
    with Store(run_dir) as store:
        up = upstream(store, "rubrics")
        questions, clips = load_questions(store), kept_clips(store)
        stage = Stage(
            FORMULATION_STAGE,
            {
                "version": VERSION,
                **backend.identity(),
                "params": PARAMS,
                "retries": retries,
                "formulation": name,
                "template": tid,
            },
            (up["rubrics"],),
        )

        def messages(q: MishapQuestion, clip: MishapClip) -> list[ChatMessage]:
            values = {
                "DOMAIN": clip.domain,
                "DESCRIPTION": clip.description,
                "CATEGORY": q.category,
                "STRATEGY DEFINITION": strategy_texts()["strategies"][q.strategy],
                "QUESTION": q.text,
            }
            return [ChatMessage(role="user", content=t.render({k: v for k, v in values.items() if k in t.slots}))]

        async def fn(caller: Caller, q: MishapQuestion) -> MishapRubric | str:
            asked = await ask_until_parsed(
                caller,
                backend.request(messages(q, clips[q.clip_id]), tag=f"{FORMULATION_STAGE}:{name}:{q.id}", params=PARAMS),
                parse_rubric,
                retries,
            )
            if asked.status == "failed":
                return asked.failure
            if not asked.ok:
                return asked.reason
            return MishapRubric(question_id=q.id, version=1, text=asked.value, author=f"llm:{backend.spec}", note=note)

        res = run_calls(
            store,
            stage,
            [(q.id, q) for q in questions.values()],
            backend,
            fn,
            MishapRubric,
            description=f"rubrics ({name})",
            quiet=quiet,
        )
        # before any version is appended: a failed formulation leaves the rubrics as they were
        check_step(res, command=COMMANDS["rubrics"], step=f"rubrics ({formulation})", allow_partial=allow_partial)
        history = rubric_history(store)
        appended = {}
        for qid, r in sorted(res.results.items()):
            versions = history.get(qid, [])
            if any(v.note == note for v in versions):
                continue
            n = (versions[-1].version if versions else 0) + 1
            store.put(EDITS, up["rubrics"], f"{qid}#v{n:04d}", r.model_copy(update={"version": n}))
            appended[qid] = n
        record_manifest(
            store,
            command="mishap rubrics formulation",
            config={"generator": generator, "formulation": name, "template": tid, "appended": appended},
            seeds={},
            stages={"rubrics": up["rubrics"], "formulation": stage.fingerprint},
        )
        return res


def rubric_history(store: Store) -> dict[str, list[MishapRubric]]:
    """Every version of every rubric, oldest first."""
    fp = upstream(store, "rubrics")["rubrics"]
    out: dict[str, list[MishapRubric]] = {qid: [r] for qid, r in store.results(STAGE, fp, MishapRubric).items()}
    for r in store.results(EDITS, fp, MishapRubric).values():
        out.setdefault(r.question_id, []).append(r)
    return {k: sorted(v, key=lambda r: r.version) for k, v in out.items()}


def current_rubrics(store: Store) -> dict[str, MishapRubric]:
    """The latest version of each question's rubric: what the judge uses."""
    return {qid: versions[-1] for qid, versions in rubric_history(store).items()}


def export_rubrics(run_dir: str | Path, out: str | Path) -> int:
    """Write the current rubrics as JSONL for editing: change 'rubric' (and optionally 'note'), keep the rest."""
    with Store(run_dir) as store:
        questions, clips = load_questions(store), kept_clips(store)
        rows = []
        for qid, r in sorted(current_rubrics(store).items()):
            q = questions[qid]
            rows.append(
                {
                    "question_id": qid,
                    "version": r.version,
                    "rubric": r.text,
                    "note": r.note or "",
                    "author": r.author,
                    "category": q.category,
                    "strategy": q.strategy,
                    "question": q.text,
                    "description": clips[q.clip_id].description if q.clip_id in clips else None,
                }
            )
    Path(out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


def import_rubrics(run_dir: str | Path, path: str | Path, *, author: str) -> list[MishapRubric]:
    """Append a new version for every rubric whose text changed; the form is checked before anything is stored."""
    if not author.strip():
        raise HalluscopeError("an author is required: every rubric edit records who made it")
    p = Path(path)
    fix = "export first with 'halluscope mishap rubrics RUN --export FILE', then edit 'rubric' (and 'note')"
    problems = Problems(str(p))
    rows = read_rows(p, EDIT_FIELDS, what="rubric edits file", problems=problems, formats=("jsonl",)).rows
    with Store(run_dir) as store:
        fp = upstream(store, "rubrics")["rubrics"]
        current = current_rubrics(store)
        new: list[MishapRubric] = []
        for r in rows:
            qid, n = r.values["question_id"], r.number
            if qid not in current:
                problems.add(
                    f"unknown question_id {qid!r}",
                    row=n,
                    field="question_id",
                    fix="keep the question_id of the exported row",
                )
                continue
            text = check_form(r.values["rubric"])
            if text is None:
                problems.add("the rubric must read 'Hallucinated if <...>. Grounded if <...>.'", row=n, field="rubric")
                continue
            if text != current[qid].text:
                new.append(
                    MishapRubric(
                        question_id=qid,
                        version=current[qid].version + 1,
                        text=text,
                        author=author.strip(),
                        note=r.values.get("note", "").strip() or None,
                    )
                )
        problems.raise_if_any("rubric edits file", fix=fix)  # nothing is stored from a file with problems
        stamp = time.time()
        for r in new:
            store.put(EDITS, fp, f"{r.question_id}#v{r.version:04d}", r)
        if new:
            record_manifest(
                store,
                command="mishap rubrics import",
                config={
                    "file": str(p.resolve()),
                    "author": author,
                    "edited": [r.question_id for r in new],
                    "at": stamp,
                },
                seeds={},
                stages={"rubrics": fp},
            )
        return new


def rubric_set_hash(rubrics: dict[str, MishapRubric]) -> str:
    return json_sha256({k: [r.version, r.text] for k, r in sorted(rubrics.items())}, 16, sort_keys=False)
