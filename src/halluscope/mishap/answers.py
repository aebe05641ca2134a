"""Step 4: answers from any registered audio-language model (halluscope.backends.audio_lm), greedy once or sampled per seed.

Each question goes to the model with its clip, cut to the model's window by the run's policy
(truncate, chunk, skip); every answer keeps the raw text, the call key and what audio was sent and heard.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from halluscope.backends.llm import Caller, LLMConfig, load_llm_config
from halluscope.backends.runner import CallSummary, run_calls
from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import AnswerKey, StageName
from halluscope.core.manifest import record_manifest
from halluscope.core.provenance import ANSWER_STAGE
from halluscope.core.records import ChatMessage, MishapAnswer, MishapClip, MishapQuestion
from halluscope.core.spec import ModelSpec
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap._common import COMMANDS, VERSION, check_step, upstream
from halluscope.mishap.clips import kept_clips, read_audio
from halluscope.mishap.questions import load_questions

STAGE = ANSWER_STAGE


def judgeable(answer: MishapAnswer) -> bool:
    """Answers with text are judged (a refusal is a response too); skipped and empty ones are reported apart."""
    return answer.judgeable


def answer_id(question_id: str, model: str | ModelSpec, seed: int | None) -> str:
    """The answer's stored id (core/keys.py ``AnswerKey``: '<question id>~<model>~greedy' or '...~s<seed>'); a
    ModelSpec is written as its canonical string."""
    return AnswerKey(question_id, str(model), seed).encode()


def decoding_params(
    *,
    seed: int | None,
    temperature: float,
    top_p: float | None,
    max_tokens: int,
    top_k: int | None = None,
    repetition_penalty: float | None = None,
) -> dict:
    """Greedy (temperature 0, no seed) or sampled with the model card's temperature/top_p/top_k and this seed; the
    card's repetition penalty either way (seed 001, Table 5). Unset controls are not sent (a request's key keeps)."""
    extra = {} if repetition_penalty in (None, 1, 1.0) else {"repetition_penalty": float(repetition_penalty)}
    if repetition_penalty is not None and repetition_penalty <= 0:
        raise HalluscopeError(f"the repetition penalty must be > 0, got {repetition_penalty}")
    if seed is None:
        return {"temperature": 0, "max_tokens": max_tokens, **extra}
    if temperature <= 0:
        raise HalluscopeError(
            "sampling over seeds needs a temperature > 0 (the model card's value); for greedy decoding give no seeds"
        )
    params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, **extra}
    if top_p is not None:
        params["top_p"] = top_p
    if top_k:
        if top_k < 0:
            raise HalluscopeError(f"top_k must be >= 0 (0: off), got {top_k}")
        params["top_k"] = int(top_k)
    return params


def apply_preset(name: str | None, path=None, **given) -> tuple[dict, dict]:
    """The decoding settings: each one the caller gave (not None) wins, else the preset's recorded value; returns
    (settings, what the preset supplied with its sources) for the manifest."""
    if name is None:
        return given, {}
    from halluscope.mishap.presets import preset

    p = preset(name, path)
    out, used = dict(given), {}
    for k, v in p.given().items():
        if out.get(k) is None:
            out[k], used[k] = v, {"value": v, "source": p.sources[k]}
    return out, {"preset": name, "model": p.model, "used": used}


def collect_answers(
    run_dir: str | Path,
    model: ModelSpec | str,
    *,
    seeds: Sequence[int] | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    top_k: int | None = None,
    repetition_penalty: float | None = None,
    preset: str | None = None,
    preset_file: str | Path | None = None,
    audio_policy: str = "truncate",
    system: str | None = None,
    config: LLMConfig | None = None,
    backend_options: dict | None = None,
    quiet: bool = False,
    executor: Any = None,
    replace: bool = False,
    command: str = COMMANDS["answer"],
    allow_partial: bool | None = None,
) -> CallSummary[MishapAnswer]:
    """Ask ``model`` every question with its clip; seeds None = greedy once, else one sampled answer per seed.

    Populations (core/provenance.py): the tables read a model's first answers over the current questions; answers
    re-made with other options are a population of their own until a run with ``replace`` makes them the tables'
    (the verdicts and labels on the old texts are then stale, listed with the command that refreshes them).
    ``command``: the manifest recorded ('mitigation sweep answer' for a sweep's arms, never the tables').

    Decoding controls (temperature, top_p, top_k, repetition_penalty, max_tokens, seeds) reach every local and
    server path; ``preset`` names a per-model preset (mishap/presets.py) whose recorded values fill the ones not
    given. ``executor`` (e.g. a RayExecutor) runs an hf-audio model's generation on its workers; same answers."""
    from halluscope.backends.audio_lm import ask_audio, audio_window_s, check_policy, create_audio_backend

    spec = ModelSpec.parse(model)  # parsed once; the records carry it, stored as the name as written
    model = spec.text

    settings, from_preset = apply_preset(
        preset,
        preset_file,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        repetition_penalty=repetition_penalty,
        max_tokens=max_tokens,
        seeds=list(seeds) if seeds else None,
    )
    temperature, top_p, top_k = settings["temperature"] or 0.0, settings["top_p"], settings["top_k"]
    repetition_penalty, max_tokens = settings["repetition_penalty"], int(settings["max_tokens"] or 512)
    seeds = settings["seeds"]
    check_policy(audio_policy)
    seed_list: list[int | None] = [None] if not seeds else list(dict.fromkeys(int(s) for s in seeds))
    for s in seed_list:  # validate before any work
        decoding_params(
            seed=s,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            top_k=top_k,
            repetition_penalty=repetition_penalty,
        )
    from halluscope.core.executors import place

    backend = place(
        create_audio_backend(
            spec, config=config if config is not None else load_llm_config(), **(backend_options or {})
        ),
        executor,
    )
    window = audio_window_s(backend)
    with Store(run_dir) as store:
        up = upstream(store, "questions")
        questions, clips = load_questions(store), kept_clips(store)
        stage = Stage(
            STAGE,
            {
                "version": VERSION,
                **backend.identity(),
                "seeds": seed_list,
                "temperature": temperature,
                # "policy": the stored key of --audio-policy (core.names.STORED_KEYS)
                "top_p": top_p,
                "max_tokens": max_tokens,
                "policy": audio_policy,
                "window_s": window,
                "system": system,
            }
            | ({"top_k": top_k} if top_k else {})
            | ({"repetition_penalty": repetition_penalty} if repetition_penalty not in (None, 1.0) else {}),
            (up["questions"],),
        )

        @lru_cache(maxsize=64)
        def audio_of(clip_id: str) -> tuple:
            return read_audio(clips[clip_id].audio)

        async def fn(caller: Caller, item: tuple[MishapQuestion, int | None]) -> MishapAnswer | str:
            q, seed = item
            aid = answer_id(q.id, model, seed)
            clip: MishapClip = clips[q.clip_id]
            msgs = ([ChatMessage(role="system", content=system)] if system else []) + [
                ChatMessage(role="user", content=q.text)
            ]
            params = decoding_params(
                seed=seed,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_tokens,
                top_k=top_k,
                repetition_penalty=repetition_penalty,
            )
            got = await ask_audio(
                caller,
                backend.request(msgs, tag=f"{STAGE}:{aid}", params=params),
                audio_of(clip.id),
                audio_policy,
                window,
            )
            if got.skipped:
                return MishapAnswer(
                    id=aid,
                    question_id=q.id,
                    model=spec.text,
                    seed=seed,
                    status="skipped",
                    error=f"clip of {got.delivery.duration_s:g} s is longer than the {window:g} s window "
                    "and the policy is skip",
                    audio=got.delivery,
                )
            resp = got.response
            assert resp is not None  # not skipped: the request was sent and answered
            if resp.status == "error":
                return f"{model}: {resp.error}"
            return MishapAnswer(
                id=aid,
                question_id=q.id,
                model=spec.text,
                seed=seed,
                status=resp.status,
                text=resp.text,
                error=resp.error,
                call_key=resp.key,
                audio=got.delivery,
            )

        items = [
            (answer_id(q.id, model, s), (q, s)) for q in questions.values() if q.clip_id in clips for s in seed_list
        ]
        res = run_calls(store, stage, items, backend, fn, MishapAnswer, description=f"answers {model}", quiet=quiet)
        check_step(res, command=command, step=f"answers of {model}", allow_partial=allow_partial)
        manifest = record_manifest(
            store,
            command=command,
            config={
                "model": model,
                "seeds": seed_list,
                "temperature": temperature,
                "top_p": top_p,
                "top_k": top_k,
                "repetition_penalty": repetition_penalty,
                "max_tokens": max_tokens,
                "audio_policy": audio_policy,
                "window_s": window,
                "system": system,
                "preset": from_preset or None,
                **({"replace": True} if replace else {}),
            },
            seeds={f"answer:{s}": s for s in seed_list if s is not None},
            stages={**up, str(StageName("answers", subject=model)): stage.fingerprint},
        )
        if command == COMMANDS["answer"] and not replace:
            from halluscope.core.provenance import answer_command, answer_populations
            from halluscope.core.runs import config_of

            if answer_populations(store).current.get(model) != stage.fingerprint:
                res.notes.append(
                    f"{model} was answered before with other options: the tables keep those answers, and these are "
                    "a population of their own (the report lists them). To make these the tables' answers: "
                    + answer_command(store, config_of(manifest), replace=True)
                )
        return res


def answer_sets(store: Store) -> dict[str, str]:
    """model -> answers-stage fingerprint of the population the tables read (over the current questions): its first
    'mishap answer' run, or the latest made with --replace (core/provenance.py ``answer_populations``)."""
    from halluscope.core.provenance import answer_populations

    upstream(store, "questions")  # a clear error when the run has no questions
    return dict(answer_populations(store).current)


def load_answers(store: Store) -> dict[str, MishapAnswer]:
    """The answers of the tables' populations (halluscope/current.py ``answers_now``); a clear error before any
    questions."""
    from halluscope.current import answers_now

    upstream(store, "questions")
    return answers_now(store)


def answer_failures(store: Store) -> dict[str, str]:
    out: dict[str, str] = {}
    for fp in answer_sets(store).values():
        out.update(store.failures(STAGE, fp))
    return out
