"""Release hygiene: the wheel holds every file the package reads at run time (prompts, static pages, the demo
corpus, lexicons, data lists), and, in the slow suite, installs in a clean venv and runs."""

from __future__ import annotations

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
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    (whl,) = out.glob("halluscope-*.whl")
    return whl


def _tracked_data_files() -> set[str]:
    """Every file git tracks under src/halluscope that is not Python source: what the code reads beside itself."""
    files = subprocess.run(["git", "ls-files", "src/halluscope"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return {f.removeprefix("src/") for f in files if not f.endswith(".py")}


def test_wheel_holds_every_package_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = _tracked_data_files()
    assert "halluscope/data/demo_corpus.jsonl" in data
    missing = sorted(data - names)
    assert not missing, f"package data missing from the wheel (pyproject [tool.setuptools.package-data]): {missing}"


@pytest.mark.slow
def test_wheel_installs_in_a_clean_venv_and_runs(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    help_ = subprocess.run([str(venv / "bin" / "halluscope"), "--help"], capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
    assert help_.returncode == 0 and "quickstart" in help_.stdout
    # the embedded demo corpus is read from the installed package, not from a checkout
    check = subprocess.run([str(venv / "bin" / "halluscope"), "corpus", "check", "--demo"], capture_output=True,
                           text=True, timeout=120, cwd=tmp_path)
    assert check.returncode in (0, 2), check.stderr
