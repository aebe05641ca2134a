"""Regenerate the README's analysis figures (issue 31) into docs/img/.

    .venv/bin/python scripts/analysis_figures.py runs/quickstart WORKDIR

Severity, fidelity and language parity come from the quickstart run's own report. Judge reliability: a copy of the
run judged by two scripted judges on a loopback chat-completions server (tests/support, the real openai client on
top): judge A rates every dimension by the rewrite's severity, judge B the same moved by one point on a third of
the items (chosen by a hash of the prompt). Mitigation card: 'mitigation sweep' of the tiny random-weight
Qwen2-Audio (tests/support/tiny_audio_lm) over a scripted MISHAP run, judged by the scripted groundedness judge.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

WORDS = ["Very Low", "Low", "Medium", "High", "Very High"]


def judge_script(req: dict, n: int):  # type: ignore[no-untyped-def]
    from support.chat_server import Reply

    prompt = req["messages"][0]["content"]
    keys = json.loads("[" + re.search(r"exact keys:\n\{(.*)\}", prompt).group(1) + "]")
    base = {"mild": 2, "moderate": 3, "severe": 5}[re.search(r"SEVERITY: (\w+)", prompt).group(1)]
    ratings = {}
    for k in keys:
        h = int(hashlib.sha256((prompt + k).encode()).hexdigest(), 16)
        ratings[k] = min(5, max(1, base + (h % 3 - 1))) if req["model"] == "judge-b" and h % 3 else base
    return Reply(content="```json\n" + json.dumps({k: WORDS[v - 1] for k, v in ratings.items()}) + "\n```")


def main(quickstart: Path, work: Path) -> None:
    from halluscope.analysis.sweep import run_sweep
    from halluscope.backends.llm import LLMConfig
    from halluscope.report import write_report
    from halluscope.spoken.judge import build_judge
    from support import scripted
    from support.chat_server import ChatServer
    from support.tiny_audio_lm import build_qwen2_audio

    out = ROOT / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    write_report(quickstart)
    for name in ("severity_en.png", "fidelity_gap.png", "language_parity.png"):
        shutil.copy(quickstart / "report" / name, out / f"analysis_{name}")
    cfg = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
    judged = work / "judged"
    shutil.rmtree(judged, ignore_errors=True)
    shutil.copytree(quickstart, judged, ignore=shutil.ignore_patterns("report", ".lock"))
    import os

    with ChatServer(judge_script) as srv:
        os.environ.update(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="k")
        build_judge(judged, ["openai/judge-a", "openai/judge-b"], per_cell=2, seed=0, config=cfg, quiet=True)
    write_report(judged)
    shutil.copy(judged / "report" / "judge_alpha.png", out / "analysis_judge_alpha.png")
    mishap = work / "mishap"
    shutil.rmtree(mishap, ignore_errors=True)
    run = scripted.build_run(mishap, judge=False, seeds=(0,), per_category=1)
    model = build_qwen2_audio(work / "tiny-qwen2-audio")
    with ChatServer(scripted.make_script({})) as srv:
        os.environ.update(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="k")
        run_sweep(
            run,
            f"hf-audio/{model}",
            method="aad",
            strengths=[0, 0.5, 1],
            seeds=[0, 1],
            judge="openai/judge",
            max_tokens=8,
            config=cfg,
            quiet=True,
        )
    write_report(run)
    shutil.copy(run / "report" / "mitigation_card_aad.png", out / "analysis_mitigation_card.png")
    print(
        json.dumps(
            {"figures": sorted(p.name for p in out.glob("analysis_*.png")), "judged": str(judged), "mishap": str(run)}
        )
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
