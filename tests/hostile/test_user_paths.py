"""The main commands as the README writes them (`halluscope build spoken RUN ...`, `detect RUN`, `report RUN`,
`view RUN [--export DIR]`), run from another working directory with a relative RUN, a '~/...' RUN that no shell
expanded (HOME is a temporary folder) and a RUN that is a symbolic link, as on clusters; the viewer serves every
clip over HTTP and exports them, and clips are checked against the resolved run folder."""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path

import pytest

from halluscope.view.server import ViewServer
from support.corpus_fixtures import write_jsonl
from support.hostile_helpers import EN, run_cli

TOKEN = "user-path-token-1"


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """home/, work/ (the cwd of the build), elsewhere/ (another cwd), scratch/x (a run) and home/linked -> it."""
    root = tmp_path_factory.mktemp("paths")
    for d in ("home", "work", "elsewhere", "scratch"):
        (root / d).mkdir()
    write_jsonl(
        root / "work" / "corpus.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN)]
    )
    return root


def cli(capsys, monkeypatch, cwd: Path, *args) -> str:
    monkeypatch.chdir(cwd)
    code, out = run_cli(capsys, monkeypatch, *args)
    assert code == 0, out
    return out


def clips_served(run: str) -> tuple[int, int]:
    """(clips the viewer lists, clips it serves with 200) for RUN given as typed, relative to the cwd."""
    with ViewServer(run, token=TOKEN) as srv:
        keys = [k for k in srv.view.audio]
        ok = 0
        for k in keys:
            conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10)
            conn.request("GET", f"/audio/{k}", headers={"X-Halluscope-Token": TOKEN})
            r = conn.getresponse()
            body = r.read()
            ok += r.status == 200 and body[:4] == b"RIFF"
            conn.close()
    return len(keys), ok


def exported(out: Path) -> int:
    return sum(1 for _ in (out / "audio").rglob("*.wav"))


@pytest.mark.slow  # two builds, detect and three reports (about 30 s on two busy cores); the cheap check is below
def test_the_readme_commands_with_relative_tilde_and_symlinked_runs(places, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(places / "home"))
    work, elsewhere = places / "work", places / "elsewhere"
    build = (
        "--corpus",
        "corpus.jsonl",
        "--langs",
        "en",
        "--tts",
        "hostile-tts",
        "--asr",
        "hostile-asr",
        "--rewrites-per-article",
        "1",
        "--allow-partial",  # the rules cannot make one of these short texts' rewrites
    )
    # relative: built from work/, read from work/ and from elsewhere/ as ../work/runs/x
    cli(capsys, monkeypatch, work, "build", "spoken", "runs/x", *build)
    cli(capsys, monkeypatch, work, "detect", "runs/x")
    cli(capsys, monkeypatch, elsewhere, "report", "../work/runs/x")
    assert (work / "runs" / "x" / "report").is_dir()
    monkeypatch.chdir(work)
    n, ok = clips_served("runs/x")
    assert n > 0 and ok == n
    cli(capsys, monkeypatch, elsewhere, "view", "../work/runs/x", "--export", "view-rel")
    assert exported(elsewhere / "view-rel") == n

    # '~' as typed in quotes (no shell expansion): the run goes under HOME, never into a folder named '~'
    cli(capsys, monkeypatch, work, "build", "spoken", "~/runs/y", "--corpus", str(work / "corpus.jsonl"), *build[2:])
    assert (places / "home" / "runs" / "y" / "halluscope.sqlite").is_file() and not (work / "~").exists()
    cli(capsys, monkeypatch, elsewhere, "report", "~/runs/y")
    cli(capsys, monkeypatch, elsewhere, "view", "~/runs/y", "--export", "view-home")
    assert exported(elsewhere / "view-home") == n and not (elsewhere / "~").exists()

    # a RUN that is a symbolic link (scratch space linked into home), given relative through the link
    os.replace(work / "runs" / "x", places / "scratch" / "x")
    (places / "home" / "linked").symlink_to(places / "scratch" / "x")
    cli(capsys, monkeypatch, places / "home", "report", "linked")
    monkeypatch.chdir(places / "home")
    assert clips_served("linked") == (n, n)
    assert clips_served("~/linked") == (n, n)
    cli(capsys, monkeypatch, places / "home", "view", "linked", "--export", "view-link")
    assert exported(places / "home" / "view-link") == n
    meta = json.loads(
        (places / "home" / "view-link" / "data" / "index.js")
        .read_text()
        .split("(", 1)[1]
        .rsplit(")", 1)[0]
        .replace("\\u003c", "<")
    )["meta"]
    assert meta["run"] == str((places / "scratch" / "x").resolve())  # resolved once, at open


def test_the_viewer_from_relative_tilde_and_symlinked_runs(tiny_runs, tmp_path, capsys, monkeypatch):
    """The cheap check of the default run: a built run copied to scratch/, linked into home/, served and exported
    from another cwd as a relative path, a '~/...' path and through the link."""
    import shutil

    home, scratch, elsewhere = tmp_path / "home", tmp_path / "scratch", tmp_path / "elsewhere"
    for d in (home, scratch, elsewhere):
        d.mkdir()
    shutil.copytree(tiny_runs["ok"], scratch / "x", ignore=shutil.ignore_patterns(".lock"))
    (home / "linked").symlink_to(scratch / "x")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    n = sum(1 for _ in (scratch / "x" / "audio").rglob("*.wav"))
    assert n > 0
    for run in ("../scratch/x", "~/linked", "../home/linked"):
        assert clips_served(run) == (n, n), run
        name = f"view-{len(list(elsewhere.iterdir()))}"
        cli(capsys, monkeypatch, elsewhere, "view", run, "--export", name)
        assert exported(elsewhere / name) == n, run


def test_a_symlink_inside_the_run_is_still_refused(tiny_runs, capsys, monkeypatch, tmp_path):
    """Resolving RUN once does not open the door to a clip swapped for a link out of the run."""
    import shutil

    from halluscope.core.webapp import read_verified

    run = tmp_path / "run"
    shutil.copytree(tiny_runs["ok"], run, ignore=shutil.ignore_patterns(".lock"))
    clip = next((run / "audio").rglob("*.wav"))
    secret = tmp_path / "secret.wav"
    secret.write_bytes(clip.read_bytes())
    clip.unlink()
    clip.symlink_to(secret)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception, match="symbolic link"):
        read_verified(Path("run") / clip.relative_to(run), "0" * 64, [Path("run")], redo="x")
