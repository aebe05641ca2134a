"""'whitebox/<hf-audio dir>': a detector that reads a local audio LM's internals, not only its text.

One teacher-forced pass of the audio LM per item and input (stage 'whitebox_features', shared by every task):
the item's clip and the instruction to repeat what is said, then the text (O: the original text, T: the ASR
transcript) forced as the answer; the same pass without the clip (the AAD branch pair of the adapter). Features
over the forced tokens: mean and max token entropy, mean and max negative log-likelihood of the forced token,
mean and max KL(p_audio || p_no_audio), the mean NLL gain from hearing (NLL without minus with audio), and the
mean and max attention mass on the audio positions (families whose attention implementation returns weights;
0 and counted otherwise). A balanced logistic regression on standardised features is fitted per language on
the train split, C chosen on dev macro-F1, and predicts dev and test (train/dev/test by article, like tf-idf and
the encoders, so it sits beside them in Table 2). Options: -o device=auto|cpu|cuda, -o audio_window_s=S,
-o max_text_tokens=256.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ChatMessage, Prediction, Record, Variant
from halluscope.core.stages import Stage, run_stage
from halluscope.spoken.detect.run import DetectContext, DetectorKind, register_detector

VERSION = 1
FEATURE_STAGE = "whitebox_features"
INSTRUCTION = "Listen to the audio and repeat exactly what is said."
FEATURES = (
    "entropy_mean",
    "entropy_max",
    "nll_mean",
    "nll_max",
    "kl_mean",
    "kl_max",
    "audio_gain_mean",
    "attn_audio_mean",
    "attn_audio_max",
)
C_GRID = (0.01, 0.1, 1.0, 10.0)
DEFAULTS = {"device": "auto", "audio_window_s": None, "max_text_tokens": 256}


class WhiteboxFeatures(Record):
    """One item's features from one teacher-forced pass (with and without its audio)."""

    item_id: str
    values: tuple[float, ...] = Field(description="In the order of whitebox.FEATURES.")
    tokens: int = Field(description="Forced text tokens read.")
    audio_tokens: int
    attentions: bool = Field(description="The family returned attention weights (else the attention features are 0).")


def _options(options: dict) -> dict:
    unknown = sorted(set(options) - set(DEFAULTS) - {"seed"})
    if unknown:
        raise HalluscopeError(
            f"detector 'whitebox' does not take -o {', '.join(unknown)}; its options: "
            f"{', '.join(DEFAULTS)}. Fix: drop the option or check its spelling"
        )
    return {k: options.get(k, v) for k, v in DEFAULTS.items()}


def _config(model: str, options: dict) -> dict:
    from halluscope.spoken.detect.encoder import model_identity

    if not model:
        raise HalluscopeError("detector 'whitebox' needs a local audio LM: 'whitebox/<hf-audio directory>'")
    own = _options(options)
    return {
        "detector": "whitebox",
        "version": VERSION,
        "model": model_identity(model),
        "c_grid": list(C_GRID),
        "seed": options.get("seed", 0),
        "features": list(FEATURES),
        "instruction": INSTRUCTION,
        "audio_window_s": own["audio_window_s"],
        "max_text_tokens": own["max_text_tokens"],
    }


def eager_text_attention(model: Any) -> bool:
    """Attention weights need the eager implementation (sdpa and flash return none): the decoder's only, when the
    config names it (the audio encoder keeps its faster kernel), else the whole model; False when neither works."""
    text = "text_config" if getattr(model.config, "text_config", None) is not None else None
    for impl in ([{text: "eager"}] if text else []) + ["eager"]:
        try:
            model.set_attn_implementation(impl)
            return True
        except (AttributeError, ValueError, ImportError, KeyError, TypeError):
            continue
    return False


def _audio_token_id(adapter: Any) -> int | None:
    for owner in (adapter, adapter.processor, adapter.model.config):
        for name in ("audio_token_id", "audio_token_index"):
            v = getattr(owner, name, None) if owner is not None else None
            if isinstance(v, int):
                return v
    return None


def forced_pass(adapter: Any, messages: list[ChatMessage], clips: tuple, text: str, max_tokens: int) -> dict:
    """Features of ``text`` forced after the prompt, with ``clips`` and without them (see the module docstring)."""
    import torch

    ids = adapter.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"][:, :max_tokens]
    if ids.shape[1] == 0:
        raise HalluscopeError("whitebox: the text has no tokens")
    ids = ids.to(adapter.device)

    def run(with_clips: tuple) -> tuple[Any, Any, int]:
        inputs = adapter.inputs(messages, with_clips)
        t = dict(inputs.tensors)
        n_prompt = t["input_ids"].shape[1]
        t["input_ids"] = torch.cat([t["input_ids"], ids], 1)
        t["attention_mask"] = torch.cat([t["attention_mask"], torch.ones_like(ids)], 1)
        with torch.inference_mode():
            try:
                out = adapter.model(**t, output_attentions=True, return_dict=True)
            except (TypeError, ValueError, RuntimeError):
                out = adapter.model(**t, return_dict=True)
        logits = out.logits[0, n_prompt - 1 : -1].float()  # the positions that predict the forced tokens
        attn = getattr(out, "attentions", None)
        mass = None
        if attn and all(a is not None for a in attn) and with_clips:
            audio_id = _audio_token_id(adapter)
            audio_pos = (t["input_ids"][0] == audio_id) if audio_id is not None else None
            if audio_pos is not None and bool(audio_pos.any()):
                # mean over layers and heads of the weight each forced-token query puts on audio keys
                stacked = torch.stack([a[0, :, n_prompt - 1 : -1, :].float() for a in attn])  # layer, head, q, k
                mass = stacked[..., audio_pos].sum(-1).mean((0, 1))
        return logits, mass, int(inputs.audio_tokens)

    la, mass, audio_tokens = run(clips)
    lb, _, _ = run(())
    pa, pb = torch.log_softmax(la, -1), torch.log_softmax(lb, -1)
    target = ids[0]
    entropy = -(pa.exp() * pa).sum(-1)
    nll_a = -pa.gather(1, target[:, None])[:, 0]
    nll_b = -pb.gather(1, target[:, None])[:, 0]
    kl = (pa.exp() * (pa - pb)).sum(-1).clamp_min(0)
    m = mass if mass is not None else torch.zeros_like(entropy)
    values = (
        entropy.mean(),
        entropy.max(),
        nll_a.mean(),
        nll_a.max(),
        kl.mean(),
        kl.max(),
        (nll_b - nll_a).mean(),
        m.mean(),
        m.max(),
    )
    return {
        "values": tuple(round(float(v), 6) for v in values),
        "tokens": int(ids.shape[1]),
        "audio_tokens": audio_tokens,
        "attentions": mass is not None,
    }


def _features(ctx: DetectContext, own: dict) -> dict[str, WhiteboxFeatures]:
    from halluscope.backends.audio_lm import load_adapter, plan_audio
    from halluscope.backends.speech.audio import load_verified
    from halluscope.core.fs import safe_join
    from halluscope.spoken.detect.encoder import model_identity

    stage = Stage(
        FEATURE_STAGE,
        {
            "version": VERSION,
            "model": model_identity(ctx.model),
            "input": ctx.input,
            "instruction": INSTRUCTION,
            "audio_window_s": own["audio_window_s"],
            "max_text_tokens": own["max_text_tokens"],
        },
        ctx.stage.upstream,
    )
    state: dict[str, Any] = {}

    def adapter() -> Any:
        if "a" not in state:
            import torch

            device = own["device"] if own["device"] != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
            state["a"] = load_adapter(ctx.model, device=device, dtype="float32", window_s=own["audio_window_s"])
            eager_text_attention(state["a"].model)
        return state["a"]

    def one(v: Variant) -> WhiteboxFeatures:
        ref = ctx.build.audio.get(v.id)
        if ref is None:
            raise HalluscopeError(f"{v.id}: no audio clip in the build")
        a = adapter()
        samples, rate = load_verified(safe_join(ctx.build.run_dir, ref.path), ref.sha256)
        plan = plan_audio(samples, rate, window_s=a.window_s, audio_policy="truncate")
        got = forced_pass(
            a, [ChatMessage(role="user", content=INSTRUCTION)], plan.clips, ctx.x_of(v), int(own["max_text_tokens"])
        )
        return WhiteboxFeatures(item_id=v.id, **got)

    out = run_stage(
        ctx.store,
        stage,
        [(v.id, v) for v in ctx.items],
        one,
        WhiteboxFeatures,
        description=f"whitebox features {ctx.input}",
        executor=None,
    )
    state.clear()
    return out.results


def _fit_predict(
    train_x: np.ndarray, train_y: list[str], dev_x: np.ndarray, dev_y: list[str], labels: tuple, seed: int
) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from halluscope.metrics.classification import macro_f1

    if len(set(train_y)) < 2:
        return None
    best = (-1.0, C_GRID[0])
    for c in C_GRID if len(dev_y) else ():
        model = make_pipeline(
            StandardScaler(), LogisticRegression(C=c, class_weight="balanced", max_iter=2000, random_state=seed)
        ).fit(train_x, train_y)
        f1 = macro_f1(reference=dev_y, hypothesis=list(model.predict(dev_x)), labels=labels)
        if f1 > best[0]:
            best = (f1, c)
    return make_pipeline(
        StandardScaler(), LogisticRegression(C=best[1], class_weight="balanced", max_iter=2000, random_state=seed)
    ).fit(train_x, train_y)


def _run_whitebox(ctx: DetectContext) -> None:
    own = _options(ctx.options)
    feats = _features(ctx, own)
    done = ctx.done()
    for lang in sorted({v.language for v in ctx.items}):
        group = [v for v in ctx.items if v.language == lang and v.id in feats]
        if all(v.id in done for v in group if ctx.split_of(v) != "train"):
            continue
        part = {s: [v for v in group if ctx.split_of(v) == s] for s in ("train", "dev", "test")}
        x = {
            s: np.array([feats[v.id].values for v in part[s]], dtype=np.float64).reshape(len(part[s]), len(FEATURES))
            for s in part
        }
        y = {s: [ctx.gold(v) for v in part[s]] for s in part}
        model = _fit_predict(x["train"], y["train"], x["dev"], y["dev"], ctx.labels, ctx.seed)
        for split in ("dev", "test"):
            if not part[split]:
                continue
            predicted = (
                [str(p) for p in model.predict(x[split])] if model is not None else [y["train"][0]] * len(part[split])
            )
            for v, p in zip(part[split], predicted):
                ctx.put(
                    Prediction(
                        item_id=v.id,
                        detector=ctx.spec,
                        task=ctx.task,
                        input=ctx.input,  # type: ignore[arg-type]
                        split=split,
                        gold=ctx.gold(v),
                        predicted=p,  # type: ignore[arg-type]
                        reason=None if model is not None else "one class in train: predicts it",
                    )
                )


register_detector(
    "whitebox", DetectorKind(run=_run_whitebox, inputs=("text", "transcript"), config=_config, trains=True)
)
