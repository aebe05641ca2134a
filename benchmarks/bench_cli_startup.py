"""Start-up time of the command line: the median wall time of `halluscope --help` and of three common commands'
--help, each beside a bare `python -c pass` measured in the same rounds (issue 24: --help under 0.5 s median).

    python benchmarks/bench_cli_startup.py [--rounds 15] [--smoke]

Each round runs every command once, in turn, so a busy spell of the machine hits all of them alike; the ratio
lines are each command's median over the bare interpreter's median, and the absolute medians are printed too.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _ratios import ratio  # noqa: E402

COMMANDS = {
    "halluscope --help": ["--help"],
    "halluscope build --help": ["build", "--help"],
    "halluscope detect --help": ["detect", "--help"],
    "halluscope mishap answer --help": ["mishap", "answer", "--help"],
}


def wall(argv: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15, help="rounds (each runs every command once)")
    ap.add_argument("--smoke", action="store_true", help="one round: checks the code path, says nothing of speed")
    args = ap.parse_args()
    rounds = 1 if args.smoke else args.rounds
    entry = [sys.executable, "-m", "halluscope"]
    bare = [sys.executable, "-c", "pass"]
    times: dict[str, list[float]] = {"python -c pass": [], **{name: [] for name in COMMANDS}}
    for _ in range(rounds):
        times["python -c pass"].append(wall(bare))
        for name, argv in COMMANDS.items():
            times[name].append(wall([*entry, *argv]))
    base = statistics.median(times["python -c pass"])
    for name, ts in times.items():
        print(f"{name}: median {statistics.median(ts):.3f} s over {len(ts)} runs")
    top = statistics.median(times["halluscope --help"])
    ratio("halluscope --help median (s)", top, "<= 0.5", smoke=args.smoke, unit=" s")
    for name, ts in times.items():
        if name != "python -c pass":
            ratio(f"{name} / python -c pass", statistics.median(ts) / base, smoke=args.smoke)


if __name__ == "__main__":
    main()
