"""'halluscope canary RUN --model M': does the model hear? (halluscope.canary), and the ``--canary N`` of zero-shot
audio 'detect', 'run closedform' and 'mishap answer': the same check at the end of the command that asked the model.

The probes (request without audio, clip, gold) are built here from each pipeline's own request builder, so the
canary's real-audio calls have the keys the command's calls had and are answered from the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import (
    AllowPartial,
    AudioPolicy,
    Json,
    LlmConfig,
    MaxTokens,
    Options,
    Run,
    System,
    flag_options,
)
from halluscope.core.errors import HalluscopeError
from halluscope.core.stages import console

app = App()
CANARY_HELP = (
    "Audio-reliance check: ask a seeded sample of N items again with silence, noise at the clip's "
    "loudness and another item's clip, and report how many answers stay the same (0: off)."
)
CLOSEDFORM_MANIFEST = "run closedform"
ANY_RUN = Run("Run directory of a spoken build, a MISHAP run or a 'run closedform' run.")


def show(results: list, json_out: bool = False) -> None:
    """The canary's last lines (or a JSON list on stdout)."""
    if json_out:
        print(
            json.dumps(
                [
                    {
                        "model": r.model,
                        "source": r.source,
                        "verdict": r.verdict,
                        "flagged": r.flagged,
                        "rows": r.rows,
                        "divergence": r.divergence,
                    }
                    for r in results
                ],
                indent=2,
                default=str,
            )
        )
        return
    for r in results:
        for i, line in enumerate(r.lines()):
            style = "bold red" if r.flagged and (i == 0 or "WARNING" in line) else None
            console.print(line, style=style, soft_wrap=True, highlight=False, markup=False)


# -- zero-shot detection on audio (seed 000, App. A.3 prompts) ---------------------------------------------------


def canary_detect(
    run: Path,
    detector: str,
    task: str,
    options: dict,
    *,
    n: int,
    seed: int = 0,
    ids: set[str] | None = None,
    quiet: bool = False,
    allow_partial: bool | None = None,
    command: str = "canary",
):
    """The canary of a zero-shot audio detector: the detect request of each sampled item (same key: its real call
    comes from the store), its gold label, the App. A.3 reply reader for the answer."""
    from halluscope.backends.audio_lm import audio_window_s
    from halluscope.backends.speech.audio import load_verified
    from halluscope.canary import run_canary
    from halluscope.canary.core import normalized
    from halluscope.core.fs import safe_join
    from halluscope.core.store import Store
    from halluscope.spoken.build import load_build
    from halluscope.spoken.detect.run import gold
    from halluscope.spoken.detect.zeroshot import (
        label_of,
        make_backend,
        messages,
        split_options,
    )
    from halluscope.spoken.detect.zeroshot_parse import parse_reply

    own, backend_opts = split_options(options)
    backend = make_backend(detector, "audio", backend_opts, own["llm_config"])
    window = audio_window_s(backend)
    msgs = messages(task, medium="audio", prompting=own["prompting"], system=own["system"], text=None)

    def read(resp):
        parsed = parse_reply(resp.text, task)
        answer = parsed.answer if parsed.status == "ok" else f"{parsed.status}: {normalized(resp.text)}"
        return answer, label_of(task, parsed.answer)

    with Store(run, create=False) as store:
        build = load_build(store)
        probes = []
        for k, v in sorted(build.samples.items()):
            ref = build.audio.get(k)
            if ref is None or k not in build.transcripts or (task != "binary" and v.label != 1):
                continue
            if ids is not None and k not in ids:
                continue
            req = backend.request(
                msgs, tag=f"detect:{task}:{k}", params={"max_tokens": int(own["max_tokens"]), "temperature": 0}
            )
            probes.append(
                _LazyProbe(
                    k, req, lambda ref=ref: load_verified(safe_join(build.run_dir, ref.path), ref.sha256), gold(v, task)
                )
            )
        return run_canary(
            store,
            backend,
            _load(probes, n, seed, f"detect:{task}"),
            source=f"detect:{task}",
            n=n,
            seed=seed,
            audio_policy=own["audio_policy"],
            window=window,
            read=read,
            upstream=(build.stages["generate"],),
            quiet=quiet,
            allow_partial=allow_partial,
            command=command,
        )


class _LazyProbe:
    """A probe whose clip is read only when it is sampled."""

    def __init__(self, id: str, request: Any, clip: Any, gold: str | None = None) -> None:
        self.id, self.request, self.clip_of, self.gold = id, request, clip, gold


def _load(probes: list, n: int, seed: int, source: str) -> list:
    """The sampled probes with their clips read (the canary draws the same sample again from these)."""
    from halluscope.canary import Probe
    from halluscope.canary.core import sample_probes

    picked = sample_probes([Probe(p.id, p.request, (None, 0), p.gold) for p in probes], n, seed, source)  # type: ignore[arg-type]
    by_id = {p.id: p for p in probes}
    return [Probe(p.id, p.request, by_id[p.id].clip_of(), p.gold) for p in picked]


# -- closed-form sets (HalluAudio 002, AHa-Bench, yes/no) ---------------------------------------------------------


def record_closedform(run: Path, config: dict) -> None:
    """What 'run closedform' asked, so 'halluscope canary RUN' can ask it again."""
    from halluscope.core.manifest import record_manifest
    from halluscope.core.store import Store

    with Store(run) as store:
        record_manifest(store, command=CLOSEDFORM_MANIFEST, config=config, seeds={}, stages={})


def canary_closedform(
    run: Path,
    model: str,
    *,
    fmt: str,
    inputs: list,
    audio_root: str | None,
    audio_policy: str,
    system: str | None,
    max_tokens: int,
    options: dict,
    llm_config: str | None = None,
    n: int,
    seed: int = 0,
    quiet: bool = False,
    allow_partial: bool | None = None,
    command: str = "canary",
):
    from halluscope.backends.audio_lm import audio_window_s, create_audio_backend
    from halluscope.backends.llm import load_llm_config
    from halluscope.backends.speech.audio import read_audio
    from halluscope.canary import run_canary
    from halluscope.closedform.run import load_rows
    from halluscope.core.records import ChatMessage
    from halluscope.core.store import Store

    rows = load_rows(fmt, [Path(p) for p in inputs], Path(audio_root) if audio_root else None)
    backend = create_audio_backend(model, config=load_llm_config(llm_config), **options)
    probes = []
    for i, row in enumerate(rows):
        msgs = ([ChatMessage(role="system", content=system)] if system else []) + [
            ChatMessage(role="user", content=row.prompt)
        ]
        req = backend.request(
            msgs, tag=f"closedform:{fmt}:{row.id}", params={"max_tokens": max_tokens, "temperature": 0}
        )
        probes.append(_LazyProbe(f"{i:06d}:{row.id}", req, lambda row=row: read_audio(row.audio)))
    with Store(run) as store:
        return run_canary(
            store,
            backend,
            _load(probes, n, seed, f"closedform:{fmt}"),
            source=f"closedform:{fmt}",
            n=n,
            seed=seed,
            audio_policy=audio_policy,
            window=audio_window_s(backend),
            quiet=quiet,
            allow_partial=allow_partial,
            command=command,
        )


# -- MISHAP-Bench answers (001) -----------------------------------------------------------------------------------


def canary_mishap(
    run: Path,
    model: str,
    *,
    max_tokens: int | None = None,
    audio_policy: str | None = None,
    system: str | None = None,
    options: dict,
    llm_config: str | None = None,
    n: int,
    seed: int = 0,
    quiet: bool = False,
    allow_partial: bool | None = None,
    command: str = "canary",
):
    """Greedy answers only (sampled ones differ without any ablation); the decoding not given (max tokens, the
    card's repetition penalty, audio policy, system) is the latest 'mishap answer' run's of ``model``, so the real-audio
    requests are the ones it sent."""
    from halluscope.backends.audio_lm import audio_window_s, create_audio_backend
    from halluscope.backends.llm import load_llm_config
    from halluscope.canary import run_canary
    from halluscope.core.records import ChatMessage
    from halluscope.core.runs import AnswerConfig, latest_run
    from halluscope.core.store import Store
    from halluscope.mishap._common import upstream
    from halluscope.mishap.answers import STAGE, answer_id, decoding_params
    from halluscope.mishap.clips import kept_clips, read_audio
    from halluscope.mishap.questions import load_questions

    backend = create_audio_backend(model, config=load_llm_config(llm_config), **options)
    with Store(run, create=False) as store:
        last = latest_run(store, "mishap answer", model=model)
        prev = last.config if last else AnswerConfig(model=model)
        max_tokens = int(max_tokens or prev.max_tokens or 512)
        audio_policy = str(audio_policy or prev.audio_policy or "truncate")
        system = system if system is not None else prev.system
        params = decoding_params(
            seed=None, temperature=0.0, top_p=None, max_tokens=max_tokens, repetition_penalty=prev.repetition_penalty
        )
        questions, clips = load_questions(store), kept_clips(store)
        probes = []
        for q in sorted(questions.values(), key=lambda q: q.id):
            if q.clip_id not in clips:
                continue
            msgs = ([ChatMessage(role="system", content=system)] if system else []) + [
                ChatMessage(role="user", content=q.text)
            ]
            req = backend.request(msgs, tag=f"{STAGE}:{answer_id(q.id, model, None)}", params=params)
            probes.append(_LazyProbe(q.id, req, lambda c=clips[q.clip_id]: read_audio(c.audio)))
        return run_canary(
            store,
            backend,
            _load(probes, n, seed, "mishap"),
            source="mishap",
            n=n,
            seed=seed,
            audio_policy=audio_policy,
            window=audio_window_s(backend),
            upstream=(upstream(store, "questions")["questions"],),
            quiet=quiet,
            allow_partial=allow_partial,
            command=command,
        )


# -- the command --------------------------------------------------------------------------------------------------


def _kind(run: Path) -> tuple[str, Any]:
    from halluscope.core.store import Store

    with Store(run, create=False) as store:
        for command in ("build spoken", "mishap questions", CLOSEDFORM_MANIFEST):
            m = store.latest_manifest(command)
            if m is not None:
                return command, m
    raise HalluscopeError(
        f"{run}: no spoken build, MISHAP questions or 'run closedform' in this run; expected a RUN "
        "made by 'build spoken', 'mishap questions' or 'run closedform'. Fix: run one of them first"
    )


@app.command("canary")
def canary_cmd(
    run: ANY_RUN,
    model: str = typer.Option(
        ..., "--model", help="Audio model: hf-audio/<dir>, openai/<model> or cascade/<asr>+<llm>."
    ),
    n: int = typer.Option(20, "--n", help="Items in the seeded sample."),
    seed: int = typer.Option(0, help="Seed of the sample and of the noise."),
    task: str = typer.Option("binary", help="Spoken runs: binary | type | severity (the detect prompt asked)."),
    prompting: str | None = typer.Option(None, help="Spoken runs: direct | cot (default: the latest detect run's)."),
    max_tokens: MaxTokens = None,  # type: ignore[assignment]
    audio_policy: AudioPolicy = None,  # type: ignore[assignment]
    system: System = None,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - typer reads the default
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Does the model hear? Ask a seeded sample again with silence of the same length, noise at the clip's loudness
    and another item's clip; report per ablation the share of answers unchanged, an exact binomial test on the
    changed answers (and McNemar on correctness where gold labels exist), and on hf-audio models the logit divergence
    with vs without audio. The same prompts as the run's own command: its real-audio calls come from the store.

    A canary whose calls produce nothing, or fail on more than the share --allow-partial names, exits 2 and is not
    recorded (the answers it got are kept: a rerun asks only the rest).

    Example: halluscope canary runs/quickstart --model hf-audio/models/qwen2-audio --n 20
    """
    from halluscope.core.runs import latest_run
    from halluscope.core.store import Store

    kind, manifest = _kind(run)
    given = flag_options(option, max_tokens=max_tokens, audio_policy=audio_policy, system=system)
    cfg = {"llm_config": str(llm_config)} if llm_config else {}
    if kind == "build spoken":
        options = dict(given)
        with Store(run, create=False) as store:  # the latest zero-shot audio detect run of this model, if any
            last = latest_run(store, "detect", detector=model, input="audio", task=task)  # DetectConfig
        if last and not given:
            options = dict(last.config.options)
        if prompting:
            options["prompting"] = prompting
        results = [
            canary_detect(
                run, model, task, {**options, **cfg}, n=n, seed=seed, quiet=json_out, allow_partial=allow_partial
            )
        ]
    elif kind == "mishap questions":
        results = [
            canary_mishap(
                run,
                model,
                max_tokens=given.pop("max_tokens", None),
                audio_policy=given.pop("audio_policy", None),
                system=given.pop("system", None),
                options=given,
                llm_config=str(llm_config) if llm_config else None,
                n=n,
                seed=seed,
                quiet=json_out,
                allow_partial=allow_partial,
            )
        ]
    else:
        c = manifest.config
        if c.get("model") != model:
            raise HalluscopeError(
                f"{run}: its closed-form run asked '{c.get('model')}', not '{model}'. Fix: give "
                f"--model {c.get('model')} or run 'run closedform {run} ... --model {model}' first"
            )
        results = [
            canary_closedform(
                run,
                model,
                fmt=c["format"],
                inputs=c["inputs"],
                audio_root=c.get("audio_root"),
                audio_policy=str(given.pop("audio_policy", c.get("audio_policy", c.get("policy")))),
                system=given.pop("system", c.get("system")),
                max_tokens=int(given.pop("max_tokens", c["max_tokens"])),
                options={**c.get("options", {}), **given},
                llm_config=str(llm_config) if llm_config else c.get("llm_config"),
                n=n,
                seed=seed,
                quiet=json_out,
                allow_partial=allow_partial,
            )
        ]
    show(results, json_out)
