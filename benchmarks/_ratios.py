"""The one line format every bench prints its figures in, so tests/benchmarks and scripts/bench_table.py can read them.

    ratio: <what is compared> = <value>[x| s]  [(goal >= 0.9: met)]  [<note>]

A value is a number, or 'inf' for something never reached within the run (a time to a rate, say).

A bench imports ``ratio`` (benchmarks/ is the script's own folder, so ``from _ratios import ratio`` works) or prints
the same shape itself. Under ``--smoke`` the goal is shown but not judged: a handful of items says nothing about speed.
"""

from __future__ import annotations

import re

LINE = re.compile(r"^ratio: (?P<name>.+?) = (?P<value>-?\d+(?:\.\d+)?(?:e-?\d+)?|inf)x?(?P<rest>.*)$")
GOAL = re.compile(r"goal (?P<op>>=|<=) (?P<bound>\d+(?:\.\d+)?)")


def ratio(
    name: str, value: float, goal: str | None = None, note: str = "", *, smoke: bool = False, unit: str = "x"
) -> bool | None:
    """Print one ratio line; ``goal`` like '>= 0.9'. Returns whether the goal was met (None: no goal, or smoke)."""
    met = None
    tail = ""
    if goal:
        op, bound = goal.split()
        met = value >= float(bound) if op == ">=" else value <= float(bound)
        tail = f"  (goal {goal}: {'not judged, smoke size' if smoke else 'met' if met else 'NOT MET'})"
    print(f"ratio: {name} = {value:.3f}{unit}{tail}{'  ' + note if note else ''}", flush=True)
    return None if smoke else met


def parse(text: str) -> list[dict]:
    """The ratio lines of a bench's output: name, value, goal (op, bound) and the rest of the line."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            g = GOAL.search(m["rest"])
            out.append(
                {
                    "name": m["name"],
                    "value": float(m["value"]),
                    "rest": m["rest"].strip(),
                    "goal": (g["op"], float(g["bound"])) if g else None,
                }
            )
    return out
