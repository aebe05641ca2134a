"""Run README.md's examples as a user would: every shell line of its code blocks, in order, verbatim through bash, in
one working directory, with the files a reader brings (their corpus, clip manifest, published prediction files, a
model folder) made here under the names the README gives them.

What is not a verbatim run, and why, is all in this module: NOT_RUN (lines that set up this machine or are the test
suite itself), the two documented variables of an OpenAI-compatible server (pointed at a scripted loopback server;
an `export` of them keeps that address), and BROUGHT (the reader's own files). A line of any other shape, or a
halluscope command path missing from KINDS, is an error: a new example is either runnable here or named here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)

# lines that are not run here, with the reason (each must still be in the README: a stale entry fails)
NOT_RUN = {
    "bash scripts/install.sh": "sets up the machine: system packages and .venv, which this test runs in",
    "bash scripts/test.sh": "the test suite this test is part of",
}
# how each halluscope command path of the README is run: fast (default run), slow, or server (slow; started, its
# printed URL fetched, then stopped). A path not here fails the default run: name it when adding an example.
KINDS = {
    ("corpus", "check"): "fast",
    ("score", "yesno"): "fast",
    ("score", "halluaudio"): "fast",
    ("score", "aha"): "fast",
    ("quickstart", "spoken"): "slow",
    ("quickstart", "mishap"): "slow",
    ("build", "spoken"): "slow",
    ("detect",): "slow",
    ("report",): "slow",
    ("run", "closedform"): "slow",
    ("mishap", "all"): "slow",
    ("mishap", "answer"): "slow",
    ("mishap", "report"): "slow",
    ("mitigation", "sweep"): "slow",
    ("mishap", "annotate"): "server",
}
SERVER_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY")  # the documented variables of an OpenAI-compatible server


def _corpus(work: Path) -> None:
    """The reader's corpus: six English articles of the demo corpus (a small build)."""
    rows = [
        json.loads(line) for line in (ROOT / "src/halluscope/data/demo_corpus.jsonl").read_text("utf-8").splitlines()
    ]
    en = [r for r in rows if r["language"] == "en"][:6]
    (work / "corpus.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in en), "utf-8")


def _clips(work: Path) -> None:
    from support.scripted import write_clips

    write_clips(work)  # clips.jsonl + audio/: six clips of three domains and an uninformative one


def _kuan(work: Path) -> None:
    """Kuan et al.'s questions and a model's predictions: the real files when the real-data folder is here."""
    from support import REALDATA
    from support.closedform_files import write_yesno

    real = REALDATA / "kuan_object_hallucination"
    if real.is_dir():
        shutil.copy(real / "balanced_merged_test_2871.txt", work / "balanced_merged_test_2871.txt")
        shutil.copy(next(real.glob("qwen25omni_predictions_balanced_merged_2871*.csv")), work / "predictions.csv")
    else:
        write_yesno(work / "balanced_merged_test_2871.txt", work / "predictions.csv")


def _halluaudio(work: Path) -> None:
    from support.closedform_files import write_halluaudio

    write_halluaudio(work / "preds.jsonl", broken_line=False)


def _aha(work: Path) -> None:
    from support.closedform_files import write_aha

    write_aha(work / "run_0.jsonl", work / "run_1.jsonl")


def _set(work: Path) -> None:
    """A HalluAudio-format set of the reader's own clips (espeak speech under clips/)."""
    from halluscope.backends.speech.audio import encode_wav
    from support.closedform_files import HALLUAUDIO_ROWS
    from support.tiny_audio_lm import espeak

    (work / "clips").mkdir(exist_ok=True)
    rows = [{k: v for k, v in r.items() if k != "pred"} for r in HALLUAUDIO_ROWS[:4]]
    for r in rows:
        (work / "clips" / r["audio"]).write_bytes(encode_wav(espeak(r["prompt"])))
    (work / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


def _model(work: Path) -> None:
    """The reader's audio LM folder: a tiny random-weight Qwen2-Audio (real transformers classes, CPU)."""
    from support.tiny_audio_lm import build_qwen2_audio

    build_qwen2_audio(work / "qwen2-audio")


# the reader's own files, by the name the README gives them, and what makes one here
BROUGHT: dict[str, Callable[[Path], None]] = {
    "corpus.jsonl": _corpus,
    "clips.jsonl": _clips,
    "balanced_merged_test_2871.txt": _kuan,
    "predictions.csv": _kuan,
    "preds.jsonl": _halluaudio,
    "run_0.jsonl": _aha,
    "run_1.jsonl": _aha,
    "set.jsonl": _set,
    "clips/": _set,
    "hf-audio/qwen2-audio": _model,
}


@dataclass
class Step:
    line: str  # as written (continuations joined)
    kind: str  # fast | slow | server | not-run | export
    words: list[str]


def readme_lines(text: str | None = None) -> list[str]:
    """The shell lines of README.md's code blocks, in order; '&&' splits a line into its commands."""
    text = README.read_text("utf-8") if text is None else text
    out = []
    for lang, body in FENCE.findall(text):
        if lang not in {"", "bash", "sh", "shell"}:
            continue
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            out += [part.strip() for part in line.split("&&") if part.strip()]
    return out


def _command_path(args: list[str]) -> tuple[str, ...]:
    """The halluscope command path of an argument list, resolved on the real command tree (group defaults too)."""
    import typer

    from halluscope.cli.main import COMMANDS, _parent

    cmd, path, rest = typer.main.get_command(_parent(COMMANDS)), [], list(args)
    while hasattr(cmd, "list_commands"):
        ctx = cmd.make_context("halluscope", [], resilient_parsing=True)
        name = rest[0] if rest and not rest[0].startswith("-") else None
        sub = cmd.get_command(ctx, name) if name else None
        if sub is None and getattr(cmd, "default", None):
            sub, name = cmd.get_command(ctx, cmd.default), cmd.default
        else:
            rest.pop(0) if sub is not None else None
        if sub is None:
            return (*path, "?")
        cmd, path = sub, [*path, name]
    return tuple(path)


def classify(line: str) -> Step:
    """What a README line is and how it runs; ValueError for a line this module does not know how to run."""
    code = line.split("  #")[0].strip()
    if code in NOT_RUN:
        return Step(line, "not-run", [])
    words = shlex.split(code, comments=True)
    if words[0] == "export":
        names = [w.split("=")[0] for w in words[1:]]
        if not names or set(names) - set(SERVER_VARS):
            raise ValueError(f"an export of {names}: only {SERVER_VARS} are known here")
        return Step(line, "export", words[1:])
    if words[0] not in {"halluscope", ".venv/bin/halluscope"}:
        raise ValueError(f"'{words[0]}' is neither halluscope nor a line named in NOT_RUN")
    if "--help" in words:
        return Step(line, "fast", words)
    path = _command_path(words[1:])
    kind = next((KINDS[path[:n]] for n in (2, 1) if path[:n] in KINDS), None)
    if kind is None:
        raise ValueError(f"command 'halluscope {' '.join(path)}' is not in KINDS (fast, slow or server)")
    return Step(line, kind, words)


def steps() -> list[Step]:
    return [classify(line) for line in readme_lines()]


def workdir(work: Path) -> dict[str, str]:
    """The reader's working directory (.venv as scripts/install.sh leaves it) and the environment of every line."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "halluscope").exists():
        raise FileNotFoundError(f"no halluscope console script in {venv}/bin: run the tests from the project's .venv")
    (work / ".venv").symlink_to(venv, target_is_directory=True)
    return {
        **os.environ,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT / "src"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "NO_COLOR": "1",
        "COLUMNS": "160",
    }


def bring(step: Step, work: Path) -> None:
    """Make the reader's own files this line names (once)."""
    for word in step.words:
        name = word if word in BROUGHT else word.split("=")[-1]
        if name in BROUGHT and not (work / name.removeprefix("hf-audio/")).exists():
            BROUGHT[name](work)


def run(step: Step, work: Path, env: dict[str, str], timeout: int) -> subprocess.CompletedProcess:
    """The line verbatim through bash; a server line is started, its printed URL fetched, then it is stopped."""
    bring(step, work)
    if step.kind != "server":
        return subprocess.run(
            ["bash", "-c", step.line], cwd=work, env=env, capture_output=True, text=True, timeout=timeout
        )
    proc = subprocess.Popen(
        ["bash", "-c", step.line],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen = []
    try:
        for out in proc.stdout:  # type: ignore[union-attr]
            seen.append(out)
            url = re.search(r"http://127\.0\.0\.1:\d+/\S*", out)
            if url:
                with urllib.request.urlopen(url.group(0).rstrip(".,)"), timeout=30) as page:
                    body = page.read().decode("utf-8", "replace")
                return subprocess.CompletedProcess(
                    step.line, 0 if page.status == 200 else 1, "".join(seen) + body[:200], ""
                )
        return subprocess.CompletedProcess(step.line, proc.wait(), "".join(seen), "no URL printed")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
