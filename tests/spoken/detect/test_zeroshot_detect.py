"""'halluscope detect' with zero-shot decoders on a tiny built run: hf-audio on real espeak audio, openai on text."""

import json
import sys

import pytest

from support.tiny_audio_lm import clip45, omni_dir, qwen2_audio_dir  # noqa: F401 - fixtures

pytest.importorskip("transformers")

from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.records import Prediction
from halluscope.core.store import Store
from halluscope.spoken.detect import detect
from halluscope.spoken.report import collect
from support import fakes
from support.chat_server import ChatServer, Reply


def n_items(run_dir):
    from halluscope.spoken.build import load_build

    with Store(run_dir) as store:
        return len(load_build(store).transcripts)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """3 articles per language (en, ru), one rewrite each, real espeak-ng audio; transcripts from a stand-in ASR."""
    return fakes.spoken_run(tmp_path_factory.mktemp("zs"), langs=("en", "ru"))


def test_hf_audio_detect_on_audio_then_report(run_dir, qwen2_audio_dir):
    runner = CliRunner()
    spec = f"hf-audio/{qwen2_audio_dir}"
    res = runner.invoke(
        app,
        [
            "detect",
            str(run_dir),
            "--detector",
            spec,
            "--task",
            "binary",
            "--input",
            "audio",
            "--max-tokens",
            "6",
            "-o",
            "audio_window_s=2.5",
            "--audio-policy",
            "truncate",
        ],
    )
    assert res.exit_code == 0, res.output
    with Store(run_dir) as store:
        fp = [m for m in store.manifests() if m.command == "detect"][-1].stages["detect"]
        preds = store.results("detect", fp, Prediction)
        n_calls = sum(1 for _ in store.calls())
    n = n_items(run_dir)
    assert len(preds) == n >= 10  # every item of every split: nothing is trained
    assert {p.split for p in preds.values()} == {"train", "dev", "test"} and all(p.zero_shot for p in preds.values())
    for p in preds.values():
        assert p.audio is not None and p.audio.delivered is True and p.audio.window_s == 2.5
        assert p.audio.heard_s == pytest.approx(min(p.audio.duration_s, 2.5), abs=0.02)
        assert p.audio.action == ("truncated" if p.audio.duration_s > 2.5 else "whole")
        assert p.status in ("ok", "unparsable", "refusal") and (p.predicted is None) == (
            p.status != "ok" or p.answer == "none"
        )
    assert any(p.audio.action == "truncated" for p in preds.values())
    # a rerun makes no calls: every reply comes from the store
    detect(
        run_dir,
        detector=spec,
        task="binary",
        input="audio",
        options={"max_tokens": 6, "audio_window_s": 2.5, "audio_policy": "truncate"},
    )
    with Store(run_dir) as store:
        assert sum(1 for _ in store.calls()) == n_calls
    res = runner.invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    data = collect(run_dir)
    assert not any(r["detector"] == spec for r in data.detection)  # Table 2 is O/T of trained detectors only
    section = next(s for s in data.sections if "Table 3" in s.title)
    cells = {(r["language"], r["input"]): r for r in section.rows("zeroshot_cells")}
    assert cells[("all", "A")]["n"] == n and cells[("en", "A")]["delivered_rate"] == 1.0
    assert cells[("all", "A")]["truncated"] >= 1 and cells[("all", "A")]["skipped"] == 0
    md = (run_dir / "report" / "tables.md").read_text(encoding="utf-8")
    assert "Table 3" in md and "audio delivered" in md
    assert (run_dir / "report" / "zeroshot_cells.csv").exists()


def test_skip_policy_keeps_skipped_items_out_of_n(run_dir, qwen2_audio_dir):
    spec = f"hf-audio/{qwen2_audio_dir}"
    res = detect(
        run_dir,
        detector=spec,
        task="type",
        input="audio",
        options={"max_tokens": 4, "audio_window_s": 2.5, "audio_policy": "skip"},
    )
    skipped = [p for p in res.predictions.values() if p.audio.action == "skipped"]
    assert skipped and all(p.status == "error" and p.predicted is None and p.audio.sent_s == 0 for p in skipped)
    with Store(run_dir) as store:
        from halluscope.spoken.build import load_build
        from halluscope.spoken.report.zeroshot import zero_shot_rows

        rows = zero_shot_rows(store, load_build(store))
    cell = next(r for r in rows if r["task"] == "type" and r["language"] == "all")
    assert cell["skipped"] == len(skipped) and cell["n"] == len(res.predictions) - len(skipped)


def test_openai_zero_shot_on_text_counts_every_non_answer(run_dir, monkeypatch):
    def script(req, n):
        text = req["messages"][-1]["content"]
        if "Kazatomprom" in text or "Казатомпром" in text:
            return Reply(content="I'm sorry, I cannot help with that.")
        if "Ministry" in text or "Министерство" in text:
            return Reply(content="Let me think. The figures look odd.")
        return Reply(content='Analysis... {"binary": "yes"}' if "~" in text or "Indeed" in text else '{"binary": "no"}')

    with ChatServer(script) as srv:
        res = detect(
            run_dir,
            detector="openai/zs-model",
            task="binary",
            input="text",
            options={"base_url": srv.url, "max_retries": 0, "prompting": "cot"},
        )
    preds = res.predictions.values()
    n = n_items(run_dir)
    assert len(preds) == n and srv.count == n
    assert all("think step-by-step" in r["messages"][-1]["content"] for r in srv.requests)
    assert all(r["max_tokens"] == 256 and r["temperature"] == 0 for r in srv.requests)
    status = {p.status for p in preds}
    assert status == {"ok", "refusal", "unparsable"}
    assert all(p.predicted is None for p in preds if p.status != "ok")
    with Store(run_dir) as store:
        from halluscope.spoken.build import load_build
        from halluscope.spoken.report.zeroshot import zero_shot_rows

        rows = [r for r in zero_shot_rows(store, load_build(store)) if r["model"] == "openai/zs-model"]
    cell = next(r for r in rows if r["language"] == "all")
    refused = sum(p.status == "refusal" for p in preds)
    unparsable = sum(p.status == "unparsable" for p in preds)
    assert refused >= 2 and unparsable >= 2
    assert cell["input"] == "O" and cell["prompting"] == "cot" and cell["n"] == n
    assert cell["refusal_rate"] == pytest.approx(refused / n) and cell["unparsable_rate"] == pytest.approx(
        unparsable / n
    )
    originals = sum(p.gold == "original" for p in preds)
    assert cell["majority_accuracy"] == pytest.approx(max(originals, n - originals) / n)
    assert json.dumps(cell)  # serialisable for the JSON headline
    # audio and text cells (different columns) in one report
    res = CliRunner().invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    header = (run_dir / "report" / "zeroshot_cells.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "delivered_rate" in header and "refusal_rate" in header


def test_cli_prompting_flag_reaches_the_prompt_and_is_refused_for_trained_detectors(run_dir):
    from typer.testing import CliRunner

    from halluscope.cli.main import app

    with ChatServer(lambda req, n: Reply(content='{"binary": "no"}')) as srv:
        res = CliRunner().invoke(
            app,
            [
                "detect",
                str(run_dir),
                "--detector",
                "openai/zs-cli",
                "--task",
                "binary",
                "--input",
                "text",
                "--prompting",
                "cot",
                "-o",
                f"base_url={srv.url}",
                "-o",
                "max_retries=0",
            ],
        )
        assert res.exit_code == 0, res.output
        assert srv.count == n_items(run_dir)
        assert all("think step-by-step" in r["messages"][-1]["content"] for r in srv.requests)
    res = CliRunner().invoke(app, ["detect", str(run_dir), "--detector", "tfidf", "--prompting", "cot"])
    assert res.exit_code != 0 and "zero-shot detectors" in res.output


def test_table3_shows_each_input_beside_its_own_majority_baseline():
    from halluscope.spoken.report.zeroshot import table3

    def row(input_, acc, maj):
        return {
            "model": "m",
            "mitigation": "W/O",
            "prompting": "direct",
            "language": "en",
            "task": "binary",
            "input": input_,
            "n": 10,
            "accuracy": acc,
            "macro_f1": acc,
            "majority_accuracy": maj,
            "majority_macro_f1": maj / 2,
        }

    # the audio subset is skewed (90% one class) unlike the transcripts (50%): each keeps its own baseline,
    # whatever order the rows come in
    for rows in ([row("A", 0.8, 0.9), row("T", 0.7, 0.5)], [row("T", 0.7, 0.5), row("A", 0.8, 0.9)]):
        (out,) = table3(rows)
        assert out["B-A"] == "0.800/0.800 (n=10)" and out["B-A-maj"] == "0.900/0.450"
        assert out["B-T"] == "0.700/0.700 (n=10)" and out["B-T-maj"] == "0.500/0.250"
        assert "B-maj" not in out


def test_a_server_outage_is_not_final_and_says_so(run_dir, monkeypatch, capsys):
    """Issue 18: with the server down, detect stored N error predictions, exited 0, and a rerun with the server up
    made 0 calls. Now the run stops (exit 2) with one line naming the URL and the reasons file, nothing is stored
    as a prediction, and the next run asks every item."""
    import socket

    from halluscope.cli.main import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    argv = [
        "halluscope",
        "detect",
        str(run_dir),
        "--detector",
        "openai/zs-outage",
        "--task",
        "binary",
        "--input",
        "text",
        "-o",
        "max_retries=0",
        "-o",
        "timeout_s=5",
    ]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setenv("OPENAI_BASE_URL", down)  # the URL is no part of the fingerprint: the rerun is the same stage
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    n = n_items(run_dir)
    assert exit_.value.code == 2
    assert f"server unreachable at {down}/chat/completions: {n} of {n} calls failed; reasons in " in " ".join(
        err.split()
    )
    assert (run_dir / "logs" / "failed-calls-openai_zs-outage.jsonl").exists()
    with Store(run_dir) as store:
        fp = [m for m in store.manifests() if m.command == "detect"][-1].stages["detect"]
        assert store.results("detect", fp, Prediction) == {} and len(store.failures("detect", fp)) == n
    with ChatServer(lambda req, n: Reply(content='{"binary": "no"}')) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        res = detect(
            run_dir,
            detector="openai/zs-outage",
            task="binary",
            input="text",
            options={"max_retries": 0, "timeout_s": 5},
        )
        assert srv.count == n  # every item asked again
    assert res.stage_fingerprint == fp
    assert len(res.predictions) == n and {p.status for p in res.predictions.values()} == {"ok"}
