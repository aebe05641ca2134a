"""Step 2: adversarial questions, seven strategies in two categories (seed 001, section 3.2 and App. A.2).

One generation call per clip and category writes its N questions (one per assigned strategy); every
question slot then passes its own checks (open-ended, strategy adherence by an LLM, and for false
authority an invented source that appears in the question and collides with no name in a given list),
and a slot that fails is regenerated alone, up to ``retries`` more generations (--retries).
"""

from __future__ import annotations

import difflib
import random
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from halluscope.backends.llm import LLM_BACKENDS, Caller, ChatBackend, LLMConfig, load_llm_config
from halluscope.backends.runner import CallSummary, ask_until_parsed, run_calls
from halluscope.core.errors import HalluscopeError
from halluscope.core.inputs import read_text
from halluscope.core.manifest import record_manifest
from halluscope.core.records import (
    MISHAP_CATEGORIES,
    MISHAP_STRATEGIES,
    ChatMessage,
    MishapCategory,
    MishapClip,
    MishapQuestion,
    MishapStrategy,
    ModelRequest,
)
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap._common import COMMANDS, VERSION, check_step, prompt, prompts_hash, strategy_texts, upstream
from halluscope.mishap.clips import kept_clips, read_audio
from halluscope.reply import last_json, read_check

STAGE = "mishap.questions"
GEN_PARAMS = {"temperature": 0.7, "max_tokens": 800}
CHECK_PARAMS = {"temperature": 0, "max_tokens": 200}


def assign_strategies(clip_id: str, category: MishapCategory, n: int, *, seed: int) -> list[MishapStrategy]:
    """``n`` strategies of the category for one clip drawn alone (distinct while n allows, reproducible). Runs use
    ``quota_strategies``, which balances the strategies over every clip of the run."""
    pool = list(MISHAP_STRATEGIES[category])
    rng = random.Random(f"{seed}:{clip_id}:{category}")
    out: list[MishapStrategy] = []
    while len(out) < n:
        out += rng.sample(pool, min(len(pool), n - len(out)))
    return out


ASSIGNMENT = "quota-v1"  # recorded in the questions stage config and manifest


def quota_strategies(
    clip_ids: Sequence[str], category: MishapCategory, n: int, *, seed: int
) -> dict[str, tuple[MishapStrategy, ...]]:
    """``n`` strategies per clip by a seeded quota (seed 001, 3.2: two questions per category per clip, the
    strategies covered evenly): one seeded order of the category's strategies is dealt out in turn over the clips
    (sorted by id), so over the run each strategy is used equally often, +-1, and a clip's n are distinct while
    n <= the category's strategies."""
    pool = list(MISHAP_STRATEGIES[category])
    random.Random(f"{seed}:{category}").shuffle(pool)
    out: dict[str, tuple[MishapStrategy, ...]] = {}
    k = 0
    for cid in sorted(clip_ids):
        out[cid] = tuple(pool[(k + i) % len(pool)] for i in range(n))
        k += n
    return out


def strategy_counts(questions) -> dict[str, int]:
    """Questions per strategy (every strategy listed, 0 where unused): what 'questions' records and reports."""
    from collections import Counter

    got = Counter(q.strategy for q in questions)
    return {s: got.get(s, 0) for c in MISHAP_CATEGORIES for s in MISHAP_STRATEGIES[c]}


def _norm(name: str) -> str:
    name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    name = re.sub(r"[^a-z0-9 ]+", " ", name)
    return " ".join(w for w in name.split() if w not in ("the", "a", "an"))


def name_collision(invented: str, real_names: Sequence[str], *, threshold: float = 0.9) -> str | None:
    """The real name an invented source collides with (equal after normalising, near-equal, or contained), if any."""
    a = _norm(invented)
    if not a:
        return None
    for real in real_names:
        b = _norm(real)
        if not b:
            continue
        if a == b or difflib.SequenceMatcher(None, a, b).ratio() >= threshold:
            return real
        if min(len(a), len(b)) >= 8 and (f" {a} " in f" {b} " or f" {b} " in f" {a} "):
            return real
    return None


def load_names(path: str | Path | None) -> tuple[str, ...]:
    """Real source names, one per line (# comments allowed)."""
    if path is None:
        return ()
    text = read_text(
        path,
        what="list of real source names (--real-sources)",
        fix="pass a UTF-8 text file with one real source name per line",
    )
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


SHIPPED_NAMES = "real_sources.tsv"  # mishap/data/: name, source, licence per row; how it was built in its header


def shipped_sources() -> list[dict[str, str]]:
    """The shipped real names with their provenance: one {name, source, licence} per row."""
    import csv
    from importlib import resources

    text = (resources.files("halluscope") / "mishap" / "data" / SHIPPED_NAMES).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


def real_source_names(path: str | Path | None = None, *, shipped: bool = True) -> tuple[str, ...]:
    """The False Authority check's real names: the shipped list (mishap/data/real_sources.tsv) unless
    ``shipped`` is False, extended by ``path`` (one name per line)."""
    base = tuple(row["name"] for row in shipped_sources()) if shipped else ()
    return tuple(dict.fromkeys(base + load_names(path)))


def generation_messages(
    clip: MishapClip, category: MishapCategory, strategies: Sequence[MishapStrategy], *, with_audio: bool
) -> list[ChatMessage]:
    texts = strategy_texts()
    listing = "\n".join(f"{i}. {s}: {texts['strategies'][s]}" for i, s in enumerate(strategies, 1))
    note = "The audio clip itself is attached; use both the audio and the description.\n" if with_audio else ""
    return [
        ChatMessage(
            role="user",
            content=prompt("questions").render(
                {
                    "DOMAIN": clip.domain,
                    "DESCRIPTION KIND": clip.description_kind,
                    "DESCRIPTION": clip.description,
                    "AUDIO NOTE": note,
                    "CATEGORY": category,
                    "CATEGORY DEFINITION": texts["categories"][category],
                    "COUNT": str(len(strategies)),
                    "STRATEGY LIST": listing,
                }
            ),
        )
    ]


def adherence_messages(clip: MishapClip, strategy: MishapStrategy, question: str) -> list[ChatMessage]:
    return [
        ChatMessage(
            role="user",
            content=prompt("adherence").render(
                {
                    "DOMAIN": clip.domain,
                    "DESCRIPTION": clip.description,
                    "STRATEGY DEFINITION": strategy_texts()["strategies"][strategy],
                    "QUESTION": question,
                }
            ),
        )
    ]


def parse_questions(text: str | None, strategies: Sequence[MishapStrategy]) -> list[dict | None]:
    """One {question, invented_source} per requested strategy (by name, else by position); None where missing."""
    arr = last_json(text, list)
    if not isinstance(arr, list):
        obj = last_json(text)
        arr = [obj] if isinstance(obj, dict) else []
    items = [x for x in arr if isinstance(x, dict) and isinstance(x.get("question"), str) and x["question"].strip()]
    out: list[dict | None] = []
    used: set[int] = set()
    for pos, s in enumerate(strategies):
        pick = next(
            (
                i
                for i, x in enumerate(items)
                if i not in used and str(x.get("strategy", "")).strip().lower().replace(" ", "_") == s
            ),
            None,
        )
        if (
            pick is None
            and pos < len(items)
            and pos not in used
            and not items[pos].get("strategy") in MISHAP_STRATEGIES["context"] + MISHAP_STRATEGIES["knowledge"]
        ):
            pick = pos
        if pick is None:
            out.append(None)
            continue
        used.add(pick)
        src = items[pick].get("invented_source")
        out.append(
            {
                "question": items[pick]["question"].strip(),
                "invented_source": src.strip()
                if isinstance(src, str) and src.strip() and src.strip().lower() != "null"
                else None,
            }
        )
    return out


def static_checks(item: dict | None, strategy: MishapStrategy, real_names: Sequence[str]) -> str | None:
    """Why a generated question is rejected before any LLM check, or None."""
    if item is None:
        return "the reply has no question for this strategy"
    q = item["question"]
    if len(q.split()) < 4:
        return f"question too short: {q!r}"
    if strategy == "false_authority":
        src = item.get("invented_source")
        if not src:
            quoted = re.findall(r"[\"“'‘]([^\"”'’]{4,})[\"”'’]", q)
            src = item["invented_source"] = quoted[0] if quoted else None
        if not src:
            return "false authority without an invented source name"
        if _norm(src) not in _norm(q):
            return f"the invented source {src!r} does not appear in the question"
        if (real := name_collision(src, real_names)) is not None:
            return f"invented source {src!r} collides with the real source {real!r}"
    return None


@dataclass(frozen=True)
class Slot:
    clip: MishapClip
    category: MishapCategory
    index: int
    strategies: tuple[MishapStrategy, ...]

    @property
    def id(self) -> str:
        return f"{self.clip.id}~{self.category}~{self.index}"

    @property
    def strategy(self) -> MishapStrategy:
        return self.strategies[self.index]


class QuestionWriter:
    """Generation, checks and regeneration for one slot; ``audio`` attaches the clip when the backend hears audio."""

    def __init__(
        self,
        generator: ChatBackend,
        checker: ChatBackend | None,
        *,
        real_names: Sequence[str],
        retries: int,
        with_audio: bool,
        seed: int,
    ) -> None:
        self.generator, self.checker = generator, checker
        self.real_names, self.retries, self.with_audio, self.seed = tuple(real_names), retries, with_audio, seed

    def _attach(self, request: ModelRequest, clip: MishapClip) -> ModelRequest:
        if not self.with_audio:
            return request
        from halluscope.backends.audio_lm import audio_request, audio_window_s

        sent, _ = audio_request(request, read_audio(clip.audio), "truncate", audio_window_s(self.generator))
        return sent  # truncate never skips

    async def write(self, gen: Caller, check: Caller | None, slot: Slot) -> MishapQuestion | str:
        params = {**GEN_PARAMS, "seed": self.seed}

        def strategies_of(attempt: int) -> tuple[MishapStrategy, ...]:
            # attempt 0 is the shared per-category call; a regeneration asks for this slot's strategy alone
            return slot.strategies if attempt == 0 else (slot.strategy,)

        current = {"attempt": 0}

        def request(attempt: int) -> ModelRequest:
            current["attempt"] = attempt
            msgs = generation_messages(slot.clip, slot.category, strategies_of(attempt), with_audio=self.with_audio)
            return self._attach(
                self.generator.request(msgs, nonce=attempt, tag=f"{STAGE}:{slot.id}", params=params), slot.clip
            )

        async def parse(resp) -> tuple[tuple[dict, dict] | None, str | None]:
            attempt = current["attempt"]
            strategies = strategies_of(attempt)
            items = parse_questions(resp.text, strategies) if resp.status == "ok" else [None] * len(strategies)
            item = items[slot.index if attempt == 0 else 0]
            why = static_checks(item, slot.strategy, self.real_names)
            checks: dict[str, bool] = {}
            if why is None and self.checker is not None:
                assert check is not None and item is not None
                why = await self._adherence(check, slot, item["question"])
                checks["adherence"] = why is None
            return (None, why) if why is not None else ((item, checks), None)

        asked = await ask_until_parsed(gen, request, parse, self.retries, parse_refusals=True)
        if asked.status == "failed":
            return f"{self.generator.spec}: {asked.error}"
        rejected = tuple(a.line() for a in asked.attempts if a.status != "ok")
        if not asked.ok:
            return f"no acceptable {slot.strategy} question after {self.retries + 1} generations: {'; '.join(rejected)}"
        item, checks = asked.value
        if slot.strategy == "false_authority":
            # checked only against a real-source list; without one the question says so (never a silent pass)
            checks["name_collision_checked"] = bool(self.real_names)
            if self.real_names:
                checks["name_collision_free"] = True
        return MishapQuestion(
            id=slot.id,
            clip_id=slot.clip.id,
            domain=slot.clip.domain,
            category=slot.category,
            strategy=slot.strategy,
            text=item["question"],
            invented_source=item.get("invented_source") if slot.strategy == "false_authority" else None,
            generator=self.generator.spec,
            attempts=len(asked.attempts),
            checks=checks,
            rejected=rejected,
        )

    async def _adherence(self, check: Caller, slot: Slot, question: str) -> str | None:
        assert self.checker is not None

        def parse(resp):
            ok, why = read_check(resp.text, "adheres")
            return (None, "unreadable") if ok is None else ((ok, why), None)

        asked = await ask_until_parsed(
            check,
            self.checker.request(
                adherence_messages(slot.clip, slot.strategy, question),
                tag=f"{STAGE}.check:{slot.id}",
                params=CHECK_PARAMS,
            ),
            parse,
            1,
            parse_refusals=True,
        )
        if asked.status == "failed":
            raise HalluscopeError(f"adherence check by {self.checker.spec} failed: {asked.error}")
        if not asked.ok:
            return "the adherence check gave no readable verdict"
        ok, why = asked.value
        return None if ok else f"does not adhere to {slot.strategy}: {why}"


def make_questions(
    run_dir: str | Path,
    generator: str,
    *,
    checker: str | None = "same",
    per_category: int = 2,
    real_sources: str | Path | None = None,
    with_audio: bool | None = None,
    retries: int = 2,
    seed: int = 0,
    config: LLMConfig | None = None,
    quiet: bool = False,
    shipped_sources: bool = True,
    allow_partial: bool | None = None,
) -> CallSummary[MishapQuestion]:
    """Write ``per_category`` questions per category for every kept clip (the spec: 2, so 4 per clip).

    ``with_audio`` None: the writer hears the clip when its model can (an hf-audio/ writer; seed 001, 3.2 conditions
    the writer on the clip); an openai/ writer hears it only with True (the server must accept audio parts)."""
    if with_audio is None:
        with_audio = generator.startswith("hf-audio/")
    if per_category < 1 or retries < 0:
        raise HalluscopeError(f"per_category must be >= 1 and retries >= 0, got {per_category} and {retries}")
    config = config if config is not None else load_llm_config()

    def backend(spec: str) -> ChatBackend:
        if spec.startswith("hf-audio/") or with_audio:
            from halluscope.backends.audio_lm import create_audio_backend

            return create_audio_backend(spec, config=config)
        return LLM_BACKENDS.create(spec, config=config)

    gen = backend(generator)
    chk = None if checker in (None, "none") else (gen if checker == "same" else backend(checker))
    names = real_source_names(real_sources, shipped=shipped_sources)
    writer = QuestionWriter(gen, chk, real_names=names, retries=retries, with_audio=with_audio, seed=seed)
    with Store(run_dir) as store:
        clips = kept_clips(store)
        up = upstream(store, "clips")
        # the stage key keeps its stored name ('max_attempts' = retries + 1), so stored runs keep their fingerprint
        stage = Stage(
            STAGE,
            {
                "version": VERSION,
                "generator": gen.identity(),
                "checker": chk.identity() if chk else None,
                "per_category": per_category,
                "max_attempts": retries + 1,
                "with_audio": with_audio,
                "seed": seed,
                "assignment": ASSIGNMENT,
                "params": GEN_PARAMS,
                "real_sources": sorted(names),
                "prompts": prompts_hash(),
            },
            tuple(sorted(up.values())),
        )
        slots = []
        quota = {cat: quota_strategies(list(clips), cat, per_category, seed=seed) for cat in MISHAP_CATEGORIES}
        for clip in clips.values():
            for cat in MISHAP_CATEGORIES:
                slots += [Slot(clip, cat, k, quota[cat][clip.id]) for k in range(per_category)]

        extra = [chk] if chk is not None and chk is not gen else []

        async def fn(caller: Caller, slot: Slot, *others: Caller) -> MishapQuestion | str:
            check = None if chk is None else (others[0] if others else caller)
            return await writer.write(caller, check, slot)

        res = run_calls(
            store,
            stage,
            [(s.id, s) for s in slots],
            gen,
            fn,
            MishapQuestion,
            description="questions",
            quiet=quiet,
            extra=extra,
        )
        check_step(res, command=COMMANDS["questions"], step="questions", allow_partial=allow_partial)
        record_manifest(
            store,
            command=COMMANDS["questions"],
            config={
                "generator": generator,
                "checker": checker,
                "per_category": per_category,
                "with_audio": with_audio,
                "max_attempts": retries + 1,
                "real_sources": str(real_sources) if real_sources else None,
                "false_authority_checked": bool(names),
                "assignment": ASSIGNMENT,
                "shipped_sources": shipped_sources,
                "real_source_names": len(names),
                "strategy_counts": {s: sum(x.strategy == s for x in slots) for s in strategy_counts([])},
            },
            seeds={"questions": seed},
            stages={**up, "questions": stage.fingerprint},
        )
        if not names:
            res.notes.append(
                "no real-source list: invented False Authority names are not checked against real "
                "sources; recorded as false_authority_checked=false"
            )
        return res


def load_questions(store: Store) -> dict[str, MishapQuestion]:
    stages = upstream(store, "questions")
    return store.results(STAGE, stages["questions"], MishapQuestion)
