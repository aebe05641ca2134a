"""The performance page (docs/benchmarks.md), regenerated from the benches' own output: no figure is hand-copied.

    .venv/bin/python scripts/bench_table.py run bench_llm_backend            # its command below, output saved
    .venv/bin/python scripts/bench_table.py run bench_ray --items 6 --repeats 1   # other arguments
    .venv/bin/python scripts/bench_table.py run --all                        # every bench in benchmarks/
    .venv/bin/python scripts/bench_table.py render                           # docs/benchmarks.md from the saved output

``run`` executes benchmarks/<name>.py, prints its output as it comes, and keeps it in benchmarks/results/<name>.txt
headed by the command, the date and the machine. ``render`` reads every saved output and writes one table row per
'ratio:' line (benchmarks/_ratios.py's format): the figure, its goal and verdict, the command and the date beside it.
A bench never run has a row saying so.
"""

from __future__ import annotations

import ast
import datetime as dt
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
sys.path.insert(0, str(ROOT / "benchmarks"))
from _ratios import parse  # noqa: E402

# the arguments a bench is run with by 'run --all' and 'run NAME' without arguments (others: its defaults)
COMMANDS = {
    "bench_llm_backend": [],
    "bench_bootstrap": [],
    "bench_report": [],
    "bench_ray": ["--items", "6", "--repeats", "1"],
    "bench_speech": ["--articles-per-language", "1", "--repeats", "1"],
    "bench_mitigation": ["--lengths", "32", "64", "--repeats", "3", "--min-tokens", "64"],
}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"{os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}, load average {load} at the start"


def run(name: str, args: list[str]) -> int:
    script = ROOT / "benchmarks" / f"{name}.py"
    if not script.is_file():
        raise SystemExit(f"no such bench: {script}")
    cmd = [".venv/bin/python", f"benchmarks/{name}.py", *args]
    head = [
        f"# command: {shlex.join(cmd)}",
        f"# date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"# machine: {machine()}",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env=env,
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    rc = proc.wait()
    head.append(f"# exit: {rc}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.txt").write_text("\n".join(head) + "\n" + "".join(lines), encoding="utf-8")
    return rc


def render() -> str:
    benches = sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
    out = [
        "# Performance",
        "",
        "Every figure below is a `ratio:` line a bench printed, copied by `scripts/bench_table.py render` from "
        "its saved output (`benchmarks/results/`); the command that produced it and the date are beside it. "
        "To measure again: `.venv/bin/python scripts/bench_table.py run <bench> [args]`, then `render`. The test "
        "suite runs every bench with `--smoke` (tests/benchmarks), which checks that it still runs and prints "
        "these lines, never its speed.",
        "",
        f"Regenerated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC.",
        "",
    ]
    for name in benches:
        saved = RESULTS / f"{name}.txt"
        doc = ast.get_docstring(ast.parse((ROOT / "benchmarks" / f"{name}.py").read_text(encoding="utf-8"))) or ""
        out += [f"## {name}", "", doc.split("\n\n")[0].replace("\n", " "), ""]
        if not saved.is_file():
            out += [f"Not measured yet: `.venv/bin/python scripts/bench_table.py run {name}`.", ""]
            continue
        text = saved.read_text(encoding="utf-8")
        meta = {
            k.strip(): v.strip()
            for k, _, v in (line[2:].partition(":") for line in text.splitlines() if line.startswith("# "))
        }
        out += [
            f"Command: `{meta.get('command', '?')}`  ",
            f"Date: {meta.get('date', '?')}; machine: {meta.get('machine', '?')}; exit status {meta.get('exit', '?')}",
            "",
        ]
        rows = parse(text)
        if not rows:
            out += ["(no ratio line in the saved output)", ""]
            continue
        out += ["| figure | value | goal | verdict |", "|---|---|---|---|"]
        for r in rows:
            goal = f"{r['goal'][0]} {r['goal'][1]:g}" if r["goal"] else ""
            verdict = ""
            if r["goal"]:
                op, bound = r["goal"]
                verdict = "met" if (r["value"] >= bound if op == ">=" else r["value"] <= bound) else "**not met**"
            unit = "s" if r["rest"].startswith("s") else ""
            out.append(f"| {r['name']} | {r['value']:.3f}{' ' + unit if unit else ''} | {goal} | {verdict} |")
        out.append("")
    return "\n".join(out) + "\n"


def main() -> None:
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("run", "render"):
        raise SystemExit(__doc__)
    if argv[0] == "run":
        every = sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
        names = every if argv[1:2] == ["--all"] else argv[1:2]
        if not names:
            raise SystemExit("run: name a bench (e.g. bench_llm_backend) or --all")
        extra = argv[2:]
        worst = 0
        for name in names:
            worst = max(worst, run(name, extra or COMMANDS.get(name, [])))
        if worst:
            raise SystemExit(worst)
        return
    DOC.write_text(render(), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
