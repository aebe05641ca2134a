"""Decoding time per token of AAD, VCD, MTI and DoLa as a ratio to plain decoding, same model and inputs, one run.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py                 # tiny random Qwen2-Audio
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py --model DIR --lengths 32 256 --device cuda

Per-token time = wall time after the prefills / N (best of --repeats); EOS is ignored so every run makes
exactly N tokens. Printed at two lengths: the cached two-branch methods (AAD,
VCD) should cost about 2x plain at both, and 'aad-recompute' (the audio-free branch recomputed from scratch
every step, as the public AAD code does) shows the growth with length that the second cache avoids.
MTI's cost depends on how many steps exceed tau (printed); DoLa adds one norm + LM head per candidate layer.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "audio_lm"))

from halluscope.audio_lm import clip_of, load_adapter
from halluscope.mitigation import contrast, decode, parse_mitigation
from halluscope.mitigation._audio import branches
from halluscope.records import ChatMessage

MSG = [ChatMessage(role="user", content="hello is there audio in the text")]


def recompute_aad(model, main: dict, neg: dict, n: int) -> float:
    """AAD with the audio-free branch recomputed from scratch each step (the baseline this module avoids)."""
    from halluscope.mitigation import Branch

    branch = Branch(model, main)
    out = branch.prefill()
    t0 = time.perf_counter()
    tokens: list[int] = []
    for _ in range(n):
        ids = torch.cat([neg["input_ids"], torch.tensor([tokens], dtype=torch.long)], dim=1)
        with torch.inference_mode():
            z_neg = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).logits[0, -1]
        tokens.append(int(torch.argmax(contrast(out.logits[0, -1], z_neg, alpha=1.0))))
        if len(tokens) == n:
            break
        out = branch.step([tokens[-1]])
    return time.perf_counter() - t0


def timed(fn, repeats: int) -> float:
    """Best decode-phase seconds over ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        out = fn()
        best = min(best, out if isinstance(out, float) else out.decode_s)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="hf-audio model directory (default: a tiny random Qwen2-Audio built here)")
    ap.add_argument("--lengths", type=int, nargs=2, default=[16, 128])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--tau", type=float, default=1.0, help="MTI entropy threshold")
    args = ap.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    path = args.model
    if path is None:
        from tiny_audio_lm import build_qwen2_audio

        path = str(build_qwen2_audio(Path(tempfile.mkdtemp())))
    ad = load_adapter(path, device=args.device)
    from tiny_audio_lm import espeak

    clip = clip_of(espeak("The national bank raised the base rate because of inflation."))
    methods = {"plain": None, "aad": parse_mitigation("aad"), "vcd": parse_mitigation("vcd"),
               "mti": parse_mitigation("mti", tau=args.tau), "dola": parse_mitigation("dola")}
    prepared = {m: branches(ad, MSG, [clip], cfg) for m, cfg in methods.items()}

    def run(m: str, n: int):
        if m == "aad-recompute":
            main_in, neg, _ = prepared["aad"]
            return lambda: recompute_aad(ad.model, dict(main_in.tensors), neg, n)
        main_in, neg, instr = prepared[m]
        return lambda: decode(ad.model, dict(main_in.tensors), methods[m], max_new_tokens=n, eos=[],
                              contrast_inputs=neg, instruction=instr)

    names = [*methods, "aad-recompute"]
    per_token: dict[tuple[str, int], float] = {}
    for n in args.lengths:
        for m in names:
            run(m, 2)()  # warm-up
            per_token[(m, n)] = timed(run(m, n), args.repeats) / n
    mti = decode(ad.model, dict(prepared["mti"][0].tensors), methods["mti"], max_new_tokens=args.lengths[1], eos=[],
                 instruction=prepared["mti"][2])
    print(f"model {path} on {args.device}; prompt {prepared['plain'][0].tensors['input_ids'].shape[1]} tokens "
          f"({prepared['plain'][0].audio_tokens} audio); MTI contrasted {mti.summary(methods['mti'])['contrast_steps']}"
          f"/{args.lengths[1]} steps at tau={args.tau}")
    a, b = args.lengths
    print(f"| method | ms/token @{a} | x plain @{a} | ms/token @{b} | x plain @{b} |")
    print("|---|---|---|---|---|")
    for m in names:
        pa, pb = per_token[(m, a)], per_token[(m, b)]
        print(f"| {m} | {pa * 1e3:.2f} | {pa / per_token[('plain', a)]:.2f} | {pb * 1e3:.2f} | "
              f"{pb / per_token[('plain', b)]:.2f} |")


if __name__ == "__main__":
    main()
