"""Every example in README.md runs, as written, in the order written (tests/support/readme.py says how): the fast
ones (corpus check, scoring published files) in the default run, all of them (the quickstarts, a build, detection
with real and tiny random-weight models, MISHAP, mitigation) in the slow suite. A README line this test does not
know how to run fails the default run."""

from __future__ import annotations

import re
import time

import pytest

from support import readme
from support.chat_server import ChatServer
from support.scripted import make_script


def test_every_readme_line_is_known_and_the_list_of_lines_not_run_is_current():
    steps = readme.steps()  # raises on a line of unknown shape or a command path missing from KINDS
    assert {s.kind for s in steps} >= {"fast", "slow", "server", "not-run", "export"}
    codes = {s.line.split("  #")[0].strip() for s in steps if s.kind == "not-run"}
    assert codes == set(readme.NOT_RUN), "NOT_RUN names lines the README no longer has"
    runnable = [s for s in steps if s.kind in {"fast", "slow", "server"}]
    assert len(runnable) >= 15


def test_a_line_of_unknown_shape_is_refused():
    with pytest.raises(ValueError, match="neither halluscope"):
        readme.classify("curl https://example.org | sh")
    with pytest.raises(ValueError, match="not in KINDS"):
        readme.classify("halluscope canary runs/news --model hf-audio/qwen2-audio")
    with pytest.raises(ValueError, match="only"):
        readme.classify("export HF_TOKEN=abc")
    assert readme.readme_lines("```bash\nbash scripts/install.sh && .venv/bin/halluscope quickstart\n```\n") == [
        "bash scripts/install.sh",
        ".venv/bin/halluscope quickstart",
    ]
    assert readme.classify(".venv/bin/halluscope quickstart").kind == "slow"  # the group's default: quickstart spoken


def _run_all(work, kinds: set[str], env: dict[str, str]) -> dict[str, str]:
    ran = {}
    for step in readme.steps():
        if step.kind == "export":
            continue  # the documented server variables already point at the scripted server
        if step.kind not in kinds:
            continue
        start = time.perf_counter()
        proc = readme.run(step, work, env, timeout=1800)
        print(f"{time.perf_counter() - start:7.1f} s  {step.line}")  # pytest -s shows where the time goes
        assert proc.returncode == 0, f"README example failed: {step.line}\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
        ran[step.line] = proc.stdout + proc.stderr
    return ran


def test_the_fast_readme_examples_run(tmp_path):
    env = readme.workdir(tmp_path)
    ran = _run_all(tmp_path, {"fast"}, env)
    assert any("corpus check" in line for line in ran) and any("score aha" in line for line in ran)
    from support import REALDATA

    if (REALDATA / "kuan_object_hallucination").is_dir():  # the real files: the README's figures are what it prints
        said = re.search(
            r"`--compat` gives accuracy\s+([\d.]+) / ([\d.]+) / ([\d.]+)", readme.README.read_text("utf-8")
        )
        assert said, "the README's figures on Kuan et al.'s questions"
        printed = next(out for line, out in ran.items() if "score yesno" in line)
        for group, figure in zip(("random", "popular", "adversar"), said.groups()):
            assert re.search(rf"{group}\S*\s+│\s+957\s+│\s+{float(figure):.3f}", printed), (group, figure, printed)


@pytest.mark.slow
def test_every_readme_example_runs(tmp_path):
    """Both quickstarts, a spoken build with Whisper base, detection by TF-IDF, a scripted API, a tiny random-weight
    Qwen2-Audio and the Whisper base + SmolLM2 cascade, MISHAP, mitigation: 16 minutes on 2 shared cores."""
    env = readme.workdir(tmp_path)
    with ChatServer(make_script({})) as server:  # a paid API's place: scripted, the real openai client on top
        env |= {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "EMPTY"}
        ran = _run_all(tmp_path, {"fast", "slow", "server"}, env)
        assert server.count > 0
    assert len(ran) == len([s for s in readme.steps() if s.kind in {"fast", "slow", "server"}])
    # what the README says each pipeline leaves behind
    for path in (
        "runs/quickstart/report/report.html",
        "runs/news/report/report.html",
        "runs/quickstart-mishap/report/mishap",
        "runs/mishap/report/mishap",
        "out",
        "qwen2-audio.jsonl",
    ):
        assert (tmp_path / path).exists(), path
