"""Decoding time per token of AAD, VCD, MTI and DoLa as a ratio to plain decoding, same model and inputs, one run.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py                 # tiny random Qwen2-Audio
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py --smoke         # 4 and 8 tokens, one round
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py --model DIR --lengths 32 256 --device cuda
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py --family gemma3n --methods aad vcd dola --repeats 3
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_mitigation.py --shape qwen2-0.5b --lengths 8 32 --min-tokens 32 --repeats 3

Per-token time = the decoder's step() time summed over the N tokens / N (the prefills are not counted); EOS is
ignored so every run makes exactly N tokens. The time is this thread's CPU time on a CPU with one torch thread
(--clock cpu, the default there: every op runs on it, and time the machine gives to other jobs is not counted),
else wall time (--clock wall; the default on a GPU, synchronised after each step).

Robust to a shared machine, whose speed here drifts by a factor of 2 within seconds: each method is timed in
lockstep with plain decoding, one token of each in turn (mitigation.Decoder; ABBA order), so a slow spell hits
both alike; a round times every method so (in a shuffled order), each timing at least --min-tokens tokens, and a
ratio is the median over --repeats rounds of (method / plain of the same lockstep run). The spread (min-max of
the per-round ratios) is printed beside each median, and beside it the ratio of the fastest rounds (timeit's
estimator). Printed at two lengths (default 32 and 256): the cached two-branch methods (AAD, VCD) step both
branches in one batch-of-2 forward (mitigation._decode.BranchPair; goal <= 2.1x), DoLa one norm + LM head over
the candidate layers (goal <= 1.2x); 'aad-recompute' (the audio-free branch recomputed from scratch every step,
as the public AAD code does) shows the growth with length that the second cache avoids. MTI's cost depends on how
many steps exceed tau (printed). The last lines say, per goal, whether this run met it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch
from _ratios import ratio as ratio_line

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))  # the tests support package (tiny models)

from halluscope.backends.audio_lm import clip_of, load_adapter
from halluscope.core.records import ChatMessage
from halluscope.mitigation import Decoder, contrast, decode, parse_mitigation
from halluscope.mitigation._audio import branches

MSG = [ChatMessage(role="user", content="hello is there audio in the text")]


class RecomputeAAD:
    """AAD with the audio-free branch recomputed from scratch each step (the baseline the second cache avoids);
    the Decoder's prefill()/step() surface."""

    def __init__(self, model, main: dict, neg: dict, n: int) -> None:
        from halluscope.mitigation import Branch

        self.model, self.neg, self.n, self.branch, self.tokens = model, neg, n, Branch(model, main), []

    def prefill(self) -> None:
        self.out = self.branch.prefill()

    def step(self):
        if len(self.tokens) == self.n:
            return None
        ids = torch.cat(
            [self.neg["input_ids"], torch.tensor([self.tokens], dtype=torch.long, device=self.neg["input_ids"].device)],
            dim=1,
        )
        with torch.inference_mode():
            z_neg = self.model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).logits[0, -1]
        self.tokens.append(int(torch.argmax(contrast(self.out.logits[0, -1], z_neg, alpha=1.0))))
        if len(self.tokens) < self.n:
            self.out = self.branch.step([self.tokens[-1]])
        return self.tokens[-1]


FAMILIES = {  # --family -> the tests' tiny random model builder (tests/support/<module>.py)
    "qwen2-audio": ("tiny_audio_lm", "build_qwen2_audio"),
    "qwen2.5-omni": ("tiny_audio_lm", "build_qwen25_omni_thinker"),
    "qwen3-omni": ("tiny_qwen3_omni", "build_qwen3_omni_thinker"),
    "gemma3n": ("tiny_gemma3n", "build_gemma3n"),
    "granite-speech": ("tiny_granite", "build_granite_speech"),
    "nemotron-omni": ("tiny_nemotron", "build_nemotron_omni"),
    "voxtral": ("tiny_voxtral", "build_voxtral"),
    "audio-flamingo-3": ("tiny_af3", "build_af3"),
    "music-flamingo": ("tiny_musicflamingo", "build_musicflamingo"),
    "phi4-mm": ("tiny_phi4", "build_phi4"),
}
# --shape: the tiny decoder, or Qwen2-0.5B's (24 layers of 896, a 151936-token LM head: 0.5 B parameters, 2 GB
# in float32) for Qwen2-Audio, where the LM head and the layers' matmuls, not per-op overhead, set the cost
SHAPES = {
    "qwen2-0.5b": dict(
        text=dict(
            hidden_size=896,
            intermediate_size=4864,
            num_hidden_layers=24,
            num_attention_heads=14,
            num_key_value_heads=2,
            max_position_embeddings=8192,
        ),
        vocab_size=151936,
    )
}
GOALS = {"aad": 2.1, "vcd": 2.1, "dola": 1.2}  # per-token cost over plain decoding (issue 16)


CLOCK = {"clock": "cpu", "cuda": False}  # set from --clock / --device in main()


def now() -> float:
    """This thread's CPU time (default; a shared machine's other load does not count) or wall time (after the
    GPU's queued work)."""
    if CLOCK["clock"] == "cpu":
        return time.thread_time()
    if CLOCK["cuda"]:
        torch.cuda.synchronize()
    return time.perf_counter()


def lockstep(a, b, n: int) -> tuple[float, float]:
    """Prefill two decoders, then step them in turn (ABBA: a b, b a, ...) for n tokens each: their step seconds."""
    a.prefill()
    b.prefill()
    spent = {id(a): 0.0, id(b): 0.0}
    for i in range(n):
        for d in (a, b) if i % 2 == 0 else (b, a):
            t = now()
            d.step()
            spent[id(d)] += now() - t
    return spent[id(a)], spent[id(b)]


def rounds(
    make, methods: list[str], n: int, repeats: int, inner: int, seed: int = 0
) -> dict[str, list[tuple[float, float]]]:
    """Per method, ``repeats`` rounds of (plain seconds, method seconds) for n tokens, each summed over ``inner``
    lockstep runs; a round runs the methods in a shuffled order."""
    import random

    rng = random.Random(seed)
    out: dict[str, list[tuple[float, float]]] = {m: [] for m in methods}
    for _ in range(repeats):
        order = list(methods)
        rng.shuffle(order)
        for m in order:
            p = t = 0.0
            for _ in range(inner):
                dp, dt = lockstep(make("plain", n), make(m, n), n)
                p, t = p + dp, t + dt
            out[m].append((p / inner, t / inner))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="hf-audio model directory (default: a tiny random model of --family built here)")
    ap.add_argument(
        "--family",
        choices=sorted(FAMILIES),
        default="qwen2-audio",
        help="Which tiny random model to build without --model (each local adapter family has one).",
    )
    ap.add_argument(
        "--shape",
        choices=["tiny", *SHAPES],
        default="tiny",
        help="The random model's size: tiny (per-op overhead dominates), or qwen2-0.5b (--family "
        "qwen2-audio only: real-size matmuls; about 0.25 s per token on one CPU thread, so try "
        "--lengths 8 32 --min-tokens 32 --repeats 3).",
    )
    ap.add_argument(
        "--lengths",
        type=int,
        nargs=2,
        default=[32, 256],
        metavar=("SHORT", "LONG"),
        help="The two reply lengths in tokens at which the cost per token is measured (default 32 256).",
    )
    ap.add_argument("--repeats", type=int, default=7, help="Rounds (the median of the per-round ratios is reported).")
    ap.add_argument("--device", default="cpu", help="torch device of the model (cpu, cuda, cuda:1, ...).")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (1: a shared machine's other load "
        "slows plain and mitigated decoding alike; more threads oversubscribe the cores).",
    )
    ap.add_argument(
        "--min-tokens",
        type=int,
        default=256,
        help="Each timing decodes at least this many tokens (a "
        "32-token decode is repeated 8 times and averaged), so one slow spell weighs less.",
    )
    ap.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default=None,
        help="default: cpu on a CPU with --threads 1, else wall. "
        "cpu: this thread's CPU time (with "
        "--threads 1 every torch op runs on it, and time the machine gives to other jobs is not counted); "
        "wall: elapsed time (what a user waits; noisy on a shared machine).",
    )
    ap.add_argument("--tau", type=float, default=1.0, help="MTI entropy threshold")
    ap.add_argument(
        "--methods",
        nargs="+",
        default=["aad", "vcd", "mti", "dola", "aad-recompute"],
        help="Methods beside plain decoding (a loaded machine: e.g. --methods aad vcd dola).",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="4 and 8 tokens, one round, 8 tokens per timing (the test "
        "suite's run: the same code path, no figure worth reading)",
    )
    args = ap.parse_args()
    if args.smoke:
        args.lengths, args.repeats, args.min_tokens = [4, 8], 1, 8
    if args.clock is None:
        args.clock = "cpu" if args.device == "cpu" and args.threads == 1 else "wall"
    if args.clock == "cpu" and (args.threads != 1 or args.device != "cpu"):
        raise SystemExit("--clock cpu counts one thread's CPU time: use it on a CPU with --threads 1 (or --clock wall)")
    CLOCK["clock"], CLOCK["cuda"] = args.clock, args.device.startswith("cuda")
    torch.set_num_threads(args.threads)
    path = args.model
    if path is None:
        import importlib

        module, name = FAMILIES[args.family]
        if args.shape != "tiny" and args.family != "qwen2-audio":
            raise SystemExit(f"--shape {args.shape}: only for --family qwen2-audio")
        build = getattr(importlib.import_module(f"support.{module}"), name)
        scratch = tempfile.TemporaryDirectory(prefix="bench-mitigation-")  # removed at exit (qwen2-0.5b: 2.4 GB)
        path = str(build(Path(scratch.name), **SHAPES.get(args.shape, {})))
    ad = load_adapter(path, device=args.device)
    from support.tiny_audio_lm import espeak

    clip = clip_of(espeak("The national bank raised the base rate because of inflation."))
    methods = {
        "plain": None,
        "aad": parse_mitigation("aad"),
        "vcd": parse_mitigation("vcd"),
        "mti": parse_mitigation("mti", tau=args.tau),
        "dola": parse_mitigation("dola"),
    }
    prepared = {m: branches(ad, MSG, [clip], cfg) for m, cfg in methods.items()}
    exit_ = getattr(ad, "dola_exit", None)  # as mitigation._audio.generate: a family's own DoLa early exit

    def make(m: str, n: int):
        """A fresh decoder of method m for n tokens (EOS ignored)."""
        if m == "aad-recompute":
            main_in, neg, _ = prepared["aad"]
            return RecomputeAAD(ad.model, dict(main_in.tensors), neg, n)
        main_in, neg, instr = prepared[m]
        return Decoder(
            ad.model,
            dict(main_in.tensors),
            methods[m],
            max_tokens=n,
            eos=[],
            contrast_inputs=neg,
            instruction=instr,
            layer_exit=exit_ and exit_(ad.model),
        )

    import statistics

    unknown = sorted(set(args.methods) - {*methods, "aad-recompute"} - {"plain"})
    if unknown:
        raise SystemExit(f"--methods: unknown {unknown}; expected some of {[*methods, 'aad-recompute']}")
    names = ["plain", *[m for m in args.methods if m != "plain"]]
    per_token: dict[tuple[str, int], float] = {}
    ratio: dict[tuple[str, int], tuple[float, float, float]] = {}
    best: dict[tuple[str, int], float] = {}
    for n in args.lengths:
        for m in names:
            lockstep(make("plain", 2), make(m, 2), 2)  # warm-up
        times = rounds(make, names[1:], n, args.repeats, inner=max(1, args.min_tokens // n))
        plain = [p for m in names[1:] for p, _ in times[m]]
        per_token[("plain", n)] = statistics.median(plain) / n
        ratio[("plain", n)], best[("plain", n)] = (1.0, 1.0, 1.0), 1.0
        for m in names[1:]:
            per_token[(m, n)] = statistics.median(t for _, t in times[m]) / n
            rs = [t / p for p, t in times[m]]
            ratio[(m, n)] = (statistics.median(rs), min(rs), max(rs))
            best[(m, n)] = min(t for _, t in times[m]) / min(p for p, _ in times[m])  # timeit's estimator
            med, lo, hi = ratio[(m, n)]  # as it comes: a run stopped later keeps the shorter length
            print(
                f"  @{n}: {m} {per_token[(m, n)] * 1e3:.2f} ms/token, {med:.2f}x plain [{lo:.2f}-{hi:.2f}]", flush=True
            )
    mti_line = ""
    if "mti" in names:
        mti = decode(
            ad.model,
            dict(prepared["mti"][0].tensors),
            methods["mti"],
            max_tokens=args.lengths[1],
            eos=[],
            instruction=prepared["mti"][2],
        )
        mti_line = f"; MTI contrasted {mti.summary(methods['mti'])['contrast_steps']}/{args.lengths[1]} steps at tau={args.tau}"
    pair = make("aad", 2)
    pair.prefill()
    batched = (
        "AAD/VCD branches batched (one batch-of-2 forward per token)"
        if pair.pair is not None
        else "AAD/VCD branches stepped one after the other (this cache does not merge)"
    )
    print(f"{batched}; family {type(ad).__name__}")
    print(
        f"model {path} on {args.device}; prompt {prepared['plain'][0].tensors['input_ids'].shape[1]} tokens "
        f"({prepared['plain'][0].audio_tokens} audio){mti_line}"
    )
    a, b = args.lengths
    print(
        f"{args.repeats} rounds, each method in lockstep with plain decoding, {args.clock} time; ms/token: median; "
        "x plain: median of per-round ratios [min-max]"
    )
    print(f"| method | ms/token @{a} | x plain @{a} | best/best @{a} | ms/token @{b} | x plain @{b} | best/best @{b} |")
    print("|---|---|---|---|---|---|---|")
    for m in names:
        cells = []
        for n in (a, b):
            med, lo, hi = ratio[(m, n)]
            cells += [f"{per_token[(m, n)] * 1e3:.2f}", f"{med:.2f} [{lo:.2f}-{hi:.2f}]", f"{best[(m, n)]:.2f}"]
        print(f"| {m} | " + " | ".join(cells) + " |")
    for m in names[1:]:
        for n in (a, b):
            goal = GOALS.get(m)
            ratio_line(
                f"{m} / plain decoding, time per token @{n} tokens ({args.clock} time, median of rounds)",
                ratio[(m, n)][0],
                goal and f"<= {goal}",
                smoke=args.smoke,
            )
    for m, goal in ((m, g) for m, g in GOALS.items() if m in names):
        for how, got in (
            ("median of per-round ratios", [ratio[(m, n)][0] for n in (a, b)]),
            ("fastest round over fastest round", [best[(m, n)] for n in (a, b)]),
        ):
            verdict = "not judged (smoke size)" if args.smoke else "met" if all(x <= goal for x in got) else "NOT met"
            print(f"goal {m} <= {goal}x plain at {a} and {b} tokens, {how}: {verdict} ({got[0]:.2f}x, {got[1]:.2f}x)")


if __name__ == "__main__":
    main()
