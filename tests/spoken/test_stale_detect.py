"""Provenance by content on a spoken run (core/provenance.py), through the user's commands: rebuilding Russian with
another TTS voice changes the Russian audio and so its transcripts; the report then keeps the detect runs that read
the original texts (O rows, still what the build holds), leaves out the transcript run (T rows, scored on the old
transcripts) and lists it as stale with the exact command that refreshes it; running that command brings the T rows
back, equal to the same rows of a fresh run built directly with the new voice.

Real espeak-ng speech; the ASR is a stand-in that writes what it heard as a digest of the samples (so a changed clip
is a changed transcript), registered in this process like tests/support/fakes.py's."""

import json
import shlex
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from halluscope.backends.speech import ASR_BACKENDS
from halluscope.cli.main import app
from halluscope.core.hashing import sha256_hex
from halluscope.core.store import Store
from halluscope.current import select
from support import fakes

pytestmark = pytest.mark.skipif(not shutil.which("espeak-ng"), reason="needs espeak-ng")

BEFORE = "en=espeak/en-us,ru=espeak/ru"
AFTER = "en=espeak/en-us,ru=espeak/ru+f3"


class HeardAsr:
    """Writes a word per 0.1 s of audio and the first hex digits of the samples' digest: different audio, different
    transcript; the same audio, the same transcript."""

    spec = "test-heard"

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        words = " ".join("word" for _ in range(max(1, len(samples) // 1600)))
        return f"{words} {sha256_hex(samples.tobytes(), 6)}"


def _register() -> None:
    if "test-heard" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("test-heard")(lambda model, **o: HeardAsr())


def _ok(args: list[str]) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def _build(run, corpus, tts: str) -> None:
    _ok(
        ["build", "spoken", str(run), "--corpus", str(corpus), "--tts", tts, "--asr", "test-heard", "--langs", "en,ru"]
        + ["--rewrites-per-article", "1", "--seed", "5"]
    )  # seed 5: every rule rewrite succeeds


def _report(run) -> dict:
    out = _ok(["report", str(run), "--json"])
    return json.loads(out[out.index("{") :])


def _rows(doc: dict, input_: str) -> list[dict]:
    return [r for r in doc["tables"]["detection_long"]["rows"] if r["input"] == input_]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    _register()
    root = tmp_path_factory.mktemp("stale-detect")
    corpus = fakes.write_corpus(root / "corpus.jsonl")
    run = root / "run"
    _build(run, corpus, BEFORE)
    _ok(["detect", str(run), "--detector", "tfidf", "--task", "binary", "--input", "all"])
    with Store(run) as store:  # both runs read the build as it is
        assert {r.config.input for r in select(store, "detect")["detect"].current.values()} == {"text", "transcript"}
    _build(run, corpus, AFTER)  # another Russian voice: new Russian audio, new Russian transcripts
    after = _report(run)
    fresh = root / "fresh"
    _build(fresh, corpus, AFTER)
    _ok(["detect", str(fresh), "--detector", "tfidf", "--task", "binary", "--input", "all"])
    return run, after, _report(fresh)


def test_a_rebuild_leaves_the_runs_on_old_transcripts_out_and_lists_them_with_their_command(runs):
    run, after, fresh = runs
    assert _rows(fresh, "transcript") and _rows(fresh, "text")
    assert not _rows(after, "transcript")  # never scored on the transcripts the build no longer holds
    assert _rows(after, "text") == _rows(fresh, "text")  # the texts did not change: the O rows stand
    stale = after["tables"]["stale"]["rows"]
    assert [(r["table"], r["kind"]) for r in stale] == [("detect", "changed")]
    assert "transcripts read" in stale[0]["why"] and "input=transcript" in stale[0]["record"]
    assert stale[0]["command"].startswith(f"halluscope detect {run} --detector tfidf --task binary --input transcript")
    assert "stale" not in fresh["tables"]  # nothing stale on a fresh run: no section at all
    from halluscope.view.data import load_view

    view = load_view(run).meta()  # the viewer lists it too, and offers no row of it
    assert view["stale"] == stale and {r["input"] for r in view["runs"]} == {"text"}


def test_the_listed_command_refreshes_the_table_to_what_a_fresh_run_shows(runs):
    run, after, fresh = runs
    command = after["tables"]["stale"]["rows"][0]["command"]
    _ok(shlex.split(command)[1:])  # as printed, without the program name
    refreshed = _report(run)
    assert "stale" not in refreshed["tables"]
    assert _rows(refreshed, "transcript") == _rows(fresh, "transcript")
    with Store(run) as store:
        chosen = select(store, "detect")["detect"]
        assert {r.config.input for r in chosen.current.values()} == {"text", "transcript"} and not chosen.stale
