"""Release hygiene: the wheel holds every file the package reads at run time (prompts, static pages, the demo
corpus, lexicons, data lists), and, in the slow suite, installs in a clean venv and runs."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PKG = ROOT / "src" / "halluscope"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (whl,) = out.glob("halluscope-*.whl")
    return whl


def _tracked_data_files() -> set[str]:
    """Every file git tracks under src/halluscope that is not Python source: what the code reads beside itself."""
    files = subprocess.run(
        ["git", "ls-files", "src/halluscope"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {f.removeprefix("src/") for f in files if not f.endswith(".py")}


def test_wheel_holds_every_package_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = _tracked_data_files()
    assert "halluscope/data/demo_corpus.jsonl" in data
    missing = sorted(data - names)
    assert not missing, f"package data missing from the wheel (pyproject [tool.setuptools.package-data]): {missing}"


@pytest.mark.slow
def test_wheel_installs_in_a_clean_venv_and_its_quickstart_runs(wheel, tmp_path):
    """A clean venv (no system site packages, not this checkout on the path) gets the wheel with the extras the
    quickstart and an API detector need, from the package index; then, offline: --help, the embedded demo corpus, the
    quickstart (a smaller demo: 3 articles per language), the static viewer, and a detector whose prompts are read
    from the installed package, against a scripted loopback server."""
    from support.chat_server import ChatServer, Reply

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # not this checkout's src/ on the path (pip would take its egg-info for an installed halluscope)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{wheel}[asr,llm]"],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        cwd=tmp_path,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "160"}
    work = tmp_path / "work"
    work.mkdir()

    def halluscope(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
        out = subprocess.run(
            [str(venv / "bin" / "halluscope"), *args],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=timeout,
        )
        assert out.returncode == 0, f"halluscope {' '.join(args)}\n{out.stdout[-3000:]}\n{out.stderr[-4000:]}"
        return out

    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import halluscope; print(halluscope.__file__)"],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=60,
    )
    assert str(venv) in where.stdout, where  # the installed package, not this checkout
    assert "quickstart" in halluscope("--help").stdout
    assert "en" in halluscope("corpus", "check", "demo", "--json").stdout  # the demo corpus from the package
    quick = halluscope("quickstart", "--articles-per-language", "3", timeout=1800)
    report = work / "runs" / "quickstart" / "report" / "report.html"
    assert report.is_file() and "report/report.html" in quick.stdout + quick.stderr, quick.stderr[-2000:]
    halluscope("view", "runs/quickstart", "--export", "runs/quickstart/view")  # the viewer's static files
    assert any((work / "runs" / "quickstart" / "view").rglob("*.html"))
    with ChatServer(lambda req, n: Reply(content='The text reads as written.\n{"binary": "no"}')) as server:
        env |= {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "EMPTY"}
        halluscope(
            "detect",
            "runs/quickstart",
            "--detector",
            "openai/gpt-4o-mini",
            "--task",
            "binary",
            "--input",
            "transcript",
            "--prompting",
            "cot",
            timeout=600,
        )
    # the App. A.3 prompt, read from the installed package's prompts/ folder
    text = (PKG / "prompts" / "detect" / "binary.cot.txt").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if len(line) > 20 and "{" not in line)  # no placeholder in it
    assert server.count > 0 and all(line in r["messages"][-1]["content"] for r in server.requests), line
