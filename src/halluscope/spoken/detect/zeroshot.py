"""Zero-shot detection with decoders (seed 000, section 4.2 and App. A.3): 'openai/<model>', 'hf/<path>' on
text or transcripts, and 'hf-audio/<path>' (or 'openai/<model>' with --input audio) on the clips themselves.

Binary, type and severity are separate calls; direct or chain-of-thought prompting; optional system prompt;
greedy decoding with 256 new tokens. Every item of every split is predicted (nothing is trained); each
prediction carries the reply's status, the parsed answer and, for audio, what the model was sent and heard.
A request the backend could not answer at all (transport error) is stored as failed, not as a prediction, so
the next run asks again; when every request of a run fails, the run stops with the cause (exit 2).
Options (``-o KEY=VALUE``): prompting=direct|cot, system=qwen-omni|<text>, audio_policy=truncate|chunk|skip,
max_tokens=256 (--max-tokens), llm_config=<file>, subset=N and subset_max_audio_s=S (a stored, seeded balanced subset of N
items per language and label, clips of at most S seconds: halluscope.spoken.detect.subset); any other key is a backend option (base_url, audio_window_s, device, ...),
among them a decoding-time mitigation of the local backends: mitigation=aad|vcd|mti|dola (hf: dola) with its
hyperparameters (alpha=, beta=, tau=, ...; see halluscope.mitigation), stored in the fingerprint, resolved.
"""

from __future__ import annotations

from typing import Any

from halluscope.core.errors import HalluscopeError, ItemError
from halluscope.core.executors import place
from halluscope.core.hashing import named_files_sha256
from halluscope.core.records import (
    AudioDelivery,
    ChatMessage,
    ModelRequest,
    ModelResponse,
    Prediction,
    Variant,
)
from halluscope.prompts import prompt_files, template
from halluscope.spoken.detect.run import DetectContext, DetectorKind, register_detector
from halluscope.spoken.detect.subset import OPTIONS as SUBSET_OPTIONS
from halluscope.spoken.detect.zeroshot_parse import parse_reply

ZERO_SHOT_PROVIDERS = ("openai", "hf", "hf-audio", "cascade")
OWN_OPTIONS = {
    "prompting": "direct",
    "system": None,
    "audio_policy": "truncate",
    "max_tokens": 256,
    "llm_config": None,
    "subset": None,
    "subset_max_audio_s": None,
}  # subset: halluscope.spoken.detect.subset
SYSTEM_PROMPTS = {"qwen-omni": "detect/system.qwen_omni"}
# own options whose stage-config key is their old name (core.names.STORED_KEYS): stored fingerprints unchanged
STORED = {"max_tokens": "max_new_tokens"}
STORED_OLD = {v: k for k, v in STORED.items()}


def prompt_files_hash() -> str:
    """sha256 over the App. A.3 prompt files: part of the detect fingerprint."""
    return named_files_sha256(prompt_files("detect"))


def split_options(options: dict) -> tuple[dict, dict]:
    """(zero-shot options with defaults, backend options)."""
    options = {STORED_OLD.get(k, k): v for k, v in options.items()}  # a stored run's 'max_new_tokens' reads as such
    own = {k: options.get(k, v) for k, v in OWN_OPTIONS.items()}
    if own["prompting"] not in ("direct", "cot"):
        raise HalluscopeError(f"prompting must be 'direct' or 'cot', got '{own['prompting']}'")
    from halluscope.backends.audio_lm import check_policy

    check_policy(own["audio_policy"])
    n, cap = own["subset"], own["subset_max_audio_s"]
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise HalluscopeError(f"-o subset: expected a positive whole number of items per language and label, got {n!r}")
    if cap is not None and (n is None or isinstance(cap, bool) or not isinstance(cap, (int, float)) or cap <= 0):
        raise HalluscopeError(
            f"-o subset_max_audio_s: expected a positive number of seconds with -o subset=N, got "
            f"{cap!r}{'' if n is not None else ' without -o subset'}"
        )
    backend = {k: v for k, v in options.items() if k not in OWN_OPTIONS and k != "seed"}
    return own, backend


def messages(task: str, *, medium: str, prompting: str, system: str | None, text: str | None) -> list[ChatMessage]:
    """The App. A.3 conversation: optional system turn, then the task prompt (plus 'Text to analyze: ...')."""
    body = template(f"detect/{task}.{prompting}").render({"MEDIUM": medium}).rstrip("\n")
    if text is not None:
        body += "\n\n" + template("detect/text_input").render({"INPUT TEXT": text}).rstrip("\n")
    out = []
    if system:
        sys_text = template(SYSTEM_PROMPTS[system]).text.strip() if system in SYSTEM_PROMPTS else system
        out.append(ChatMessage(role="system", content=sys_text))
    out.append(ChatMessage(role="user", content=body))
    return out


def label_of(task: str, answer: str | None) -> str | None:
    """The task label of a parsed answer; None for 'none' (which counts as an error)."""
    if answer is None or answer == "none":
        return None
    if task == "binary":
        return {"yes": "hallucinated", "no": "original"}.get(answer)
    return answer


def make_backend(spec: str, input_: str, backend_options: dict, llm_config: str | None) -> Any:
    """The chat backend of ``spec`` (text and audio LMs share one registry; ``input_`` is checked by the kind)."""
    from halluscope.backends.llm import create_chat_backend, load_llm_config

    return create_chat_backend(spec, config=load_llm_config(llm_config), **backend_options)


def mitigation_of(options: dict, provider: str):
    """The run's decoding-time mitigation (None: plain decoding), validated before any work."""
    from halluscope.backends.llm import CHAT_BACKENDS
    from halluscope.mitigation import split_mitigation

    _, backend_opts = split_options(options)
    _, cfg = split_mitigation(backend_opts)
    if cfg is not None and "exposes_logits" not in CHAT_BACKENDS.capabilities(provider):
        raise HalluscopeError(
            f"mitigation={cfg.method} needs logits of a local model: use hf-audio/<dir> "
            f"(aad, vcd, mti, dola) or hf/<dir> (dola), not {provider}/<model>"
        )
    return cfg


def _config(spec_provider: str):
    def config(model: str, options: dict) -> dict:
        own, backend_opts = split_options(options)
        out = {
            "model": f"{spec_provider}/{model}",
            **{
                STORED.get(k, k): v
                for k, v in own.items()
                if k != "llm_config" and not (k in SUBSET_OPTIONS and v is None)
            },
            "backend_options": backend_opts,
            "decoding": {"max_tokens": own["max_tokens"], "temperature": 0},
            "prompts": prompt_files_hash(),
        }
        cfg = mitigation_of(options, spec_provider)
        if cfg is not None:  # only when on: unmitigated fingerprints stay what they were
            out["mitigation"] = cfg.key()
        return out

    return config


def _prediction(
    ctx: DetectContext,
    v: Variant,
    response: ModelResponse | None,
    delivery: AudioDelivery | None,
    request: ModelRequest | None,
    error: str | None = None,
) -> Prediction:
    base = {
        "item_id": v.id,
        "detector": ctx.spec,
        "task": ctx.task,
        "input": ctx.input,
        "split": ctx.split_of(v),
        "gold": ctx.gold(v),
        "zero_shot": True,
        "call_key": request.key() if request else None,
    }
    if response is None:  # skipped under the audio policy, or the clip could not be read: nothing was sent
        reason = "audio longer than the window; skipped by policy" if delivery is not None else "no readable audio clip"
        return Prediction(**base, predicted=None, status="error", reason=error or reason, audio=delivery)
    if response.status != "ok":
        return Prediction(**base, predicted=None, status=response.status, reason=response.error, audio=delivery)
    parsed = parse_reply(response.text, ctx.task)
    reason = parsed.reason if parsed.answer != "none" else "answered 'none'"
    if parsed.status != "ok" and response.finish_reason == "length":  # a cut reply is a truncation, said so
        reason = f"{reason or 'no answer'} (reply cut at the token limit, finish_reason=length)"
    return Prediction(
        **base,  # type: ignore[arg-type]
        predicted=label_of(ctx.task, parsed.answer),
        status=parsed.status,  # type: ignore[arg-type]
        answer=parsed.answer,
        reason=reason,
        audio=delivery,
    )


def _items(ctx: DetectContext, own: dict) -> list[Variant]:
    """Every item, or the run's stored balanced subset (-o subset=N per language and label; seed 000, Table 3)."""
    if own["subset"] is None:
        return ctx.items
    from halluscope.spoken.detect.subset import subset_items

    dur = lambda v: ref.duration_s if (ref := ctx.build.audio.get(v.id)) else None
    return subset_items(
        ctx.store,
        ctx.items,
        ctx.gold,
        task=ctx.task,
        per_class=own["subset"],
        seed=ctx.seed,
        duration=dur,
        max_audio_s=own["subset_max_audio_s"],
    )


def _run_zero_shot(ctx: DetectContext) -> None:
    from halluscope.backends.llm import Caller
    from halluscope.backends.runner import run_calls
    from halluscope.core.records import Prediction

    own, backend_opts = split_options(ctx.options)
    backend = place(make_backend(ctx.spec, ctx.input, backend_opts, own["llm_config"]), ctx.executor)
    medium = "audio" if ctx.input == "audio" else "text"
    # predictions stored as transport errors by earlier versions (a request was sent, no reply came) are asked again
    stale = {
        k
        for k, p in ctx.store.results(ctx.stage.name, ctx.stage.fingerprint, Prediction).items()
        if p.status == "error" and p.call_key is not None
    }
    window = None
    if ctx.input == "audio":
        from halluscope.backends.audio_lm import audio_window_s

        window = audio_window_s(backend)

    async def predict(caller: Caller, v: Variant) -> Prediction | str:
        text = None if ctx.input == "audio" else ctx.x_of(v)
        msgs = messages(ctx.task, medium=medium, prompting=own["prompting"], system=own["system"], text=text)
        request = backend.request(
            msgs, tag=f"detect:{ctx.task}:{v.id}", params={"max_tokens": int(own["max_tokens"]), "temperature": 0}
        )
        delivery = None
        if ctx.input != "audio":
            response = await caller.complete(request)
        else:
            from halluscope.backends.audio_lm import ask_audio
            from halluscope.backends.speech.audio import load_verified
            from halluscope.core.fs import PathEscapeError, safe_join

            ref = ctx.build.audio.get(v.id)
            try:
                if ref is None:
                    raise ItemError(f"{v.id}: no audio clip in the build")
                clip = load_verified(safe_join(ctx.build.run_dir, ref.path), ref.sha256)
            except (ItemError, PathEscapeError) as exc:
                return _prediction(ctx, v, None, None, None, str(exc))
            got = await ask_audio(caller, request, clip, own["audio_policy"], window)
            request, response, delivery = got.request, got.response, got.delivery
        if response is not None and response.status == "error":
            # no reply after the backend's retries (server down, timeouts): not a prediction; failed, so the
            # next run asks again (only 'ok' items count as done)
            return f"{ctx.spec}: {response.error}"
        return _prediction(ctx, v, response, delivery, request)

    run_calls(
        ctx.store,
        ctx.stage,
        [(v.id, v) for v in _items(ctx, own)],
        backend,
        predict,
        None,
        description=f"detect {ctx.spec} {ctx.task}/{ctx.input}",
        redo=stale,
    )


register_detector(
    "openai", DetectorKind(run=_run_zero_shot, inputs=("text", "transcript", "audio"), config=_config("openai"))
)
register_detector("hf", DetectorKind(run=_run_zero_shot, inputs=("text", "transcript"), config=_config("hf")))
register_detector(
    "hf-audio", DetectorKind(run=_run_zero_shot, inputs=("text", "transcript", "audio"), config=_config("hf-audio"))
)
# 'cascade/<asr>+<llm>': the cascaded baseline (ASR, then the text LLM on the transcript); audio only
register_detector("cascade", DetectorKind(run=_run_zero_shot, inputs=("audio",), config=_config("cascade")))

from halluscope.spoken.report import zeroshot as _section  # noqa: F401 - registers the Table 3 report section
