"""The old spellings still work for one release, each with one deprecation line on stderr."""

from __future__ import annotations

import json
import os

import pytest
import typer
from typer.testing import CliRunner

from halluscope.cli import compat
from halluscope.cli.main import app
from halluscope.cli.options import flag_options, mitigation_options, model_with
from support.chat_server import ChatServer, Reply

ROOT = typer.main.get_command(app)


def command(path: str):
    cmd = ROOT
    for name in path.split():
        cmd = cmd.commands[name]
    return cmd


def rewritten(path: str, *args: str, capsys=None) -> list[str]:
    return compat.rewrite(command(path), list(args), f"halluscope {path}")


def test_out_dir_becomes_the_positional_run(capsys):
    assert rewritten("build spoken", "--corpus", "demo", "--out", "runs/x", "--langs", "en") == [
        "runs/x",
        "--corpus",
        "demo",
        "--langs",
        "en",
    ]
    assert rewritten("build spoken", "--out=runs/x", "--corpus", "demo") == ["runs/x", "--corpus", "demo"]
    err = capsys.readouterr().err
    assert err.count("deprecated: '--out DIR' on 'halluscope build spoken'") == 2
    assert rewritten("build spoken", "runs/x", "--corpus", "demo") == ["runs/x", "--corpus", "demo"]
    assert capsys.readouterr().err == ""  # the current spelling says nothing


def test_store_dir_becomes_the_run_of_score_asr(capsys):
    assert rewritten("score asr", "--store", "calls", "pairs.jsonl", "--json") == ["pairs.jsonl", "calls", "--json"]
    assert "deprecated: '--store DIR'" in capsys.readouterr().err


def test_run_closedform_old_call_keeps_its_store(tmp_path, capsys):
    inputs = tmp_path / "q.jsonl"
    inputs.write_text("{}\n")
    out = tmp_path / "preds.jsonl"
    # no RUN, no --store: the run was the store beside the predictions file
    assert rewritten("run closedform", str(inputs), "--model", "m", "--out", str(out), "--json") == [
        str(out) + ".store",
        str(inputs),
        "--model",
        "m",
        "--out",
        str(out),
        "--json",
    ]
    # --store DIR named it
    assert rewritten("run closedform", str(inputs), "--store", "s", "--out", str(out)) == [
        "s",
        str(inputs),
        "--out",
        str(out),
    ]
    err = capsys.readouterr().err
    assert "without RUN" in err and "'--store DIR'" in err
    # a current call (RUN first) is left alone
    assert rewritten("run closedform", str(tmp_path / "run"), str(inputs), "--out", str(out)) == [
        str(tmp_path / "run"),
        str(inputs),
        "--out",
        str(out),
    ]


@pytest.mark.parametrize(
    "path,old,new",
    [
        ("run closedform", ["--max-new-tokens", "4"], ["--max-tokens", "4"]),
        ("mishap answer", ["--policy", "chunk"], ["--audio-policy", "chunk"]),
        ("mishap all", ["--policy=skip"], ["--audio-policy", "skip"]),
        ("mishap questions", ["--max-attempts", "4"], ["--retries", "3"]),
        ("mishap rubrics", ["--llm", "openai/m"], ["--generator", "openai/m"]),
        ("corpus dedup", ["--output", "d.jsonl"], ["--out", "d.jsonl"]),
    ],
)
def test_renamed_flags(path, old, new, capsys):
    assert rewritten(path, "RUN", *old) == ["RUN", *new]
    assert f"deprecated: {old[0].split('=')[0]} on 'halluscope {path}' is now {new[0]}" in capsys.readouterr().err


def test_option_spellings_of_flags(capsys):
    assert flag_options(["max_new_tokens=8", "alpha=0.5"], max_tokens=None) == {"max_tokens": 8, "alpha": 0.5}
    assert capsys.readouterr().err.count("deprecated: -o max_new_tokens= is now --max-tokens") == 1
    assert flag_options(["max_tokens=8"], max_tokens=None) == {"max_tokens": 8}
    assert "deprecated: -o max_tokens= is now --max-tokens" in capsys.readouterr().err
    assert flag_options([], max_tokens=8, audio_policy=None) == {"max_tokens": 8}
    with pytest.raises(typer.BadParameter, match="give it once"):
        flag_options(["max_new_tokens=8"], max_tokens=4)
    with pytest.raises(typer.BadParameter, match="give it once"):
        flag_options(["audio_policy=skip"], audio_policy="chunk")
    options: dict = {}
    assert mitigation_options("aad&alpha=0.5", options) == "aad" and options == {"alpha": 0.5}
    assert "--mitigation aad -o alpha=0.5" in capsys.readouterr().err
    assert mitigation_options("vcd", options) == "vcd"


def test_old_spellings_run_end_to_end(tmp_path):
    runner = CliRunner()
    res = runner.invoke(
        app, ["build", "spoken", "--corpus", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "r")]
    )
    assert "deprecated: '--out DIR'" in res.stderr
    assert "file not found" in str(res.exception)  # parsed: the corpus is the next thing it checked
    res = runner.invoke(app, ["mishap", "questions", str(tmp_path / "nope"), "--llm", "x", "--max-attempts", "4"])
    assert "--max-attempts" in res.stderr and "no run at" in str(res.exception)


def test_quickstart_without_a_subcommand_is_the_spoken_one(tmp_path):
    runner = CliRunner()
    for args in (
        ["quickstart", "--articles-per-language", "2"],
        ["quickstart", str(tmp_path / "q"), "--articles-per-language", "2"],
        ["quickstart", "spoken", str(tmp_path / "q"), "--articles-per-language", "2"],
        ["quickstart", "--out", str(tmp_path / "q"), "--articles-per-language", "2"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "expected at least 3 articles per language" in res.output, (args, res.output)
    assert not (tmp_path / "q").exists()  # checked before anything is written
    assert "spoken" in runner.invoke(app, ["quickstart", "--help"]).output


def test_llm_config_reaches_the_backend_for_one_command(tmp_path, monkeypatch):
    monkeypatch.delenv("HALLUSCOPE_LLM_CONFIG", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"reference": "The cat sat.", "hypothesis": "the cat sat", "language": "en"}) + "\n")

    def script(req, n):
        return Reply(content=json.dumps({"cleaned": ["the cat sat"]}))

    with ChatServer(script) as srv:
        cfg = tmp_path / "llm.json"
        cfg.write_text(json.dumps({"openai": {"base_url": srv.url, "timeout_s": 5.0, "max_retries": 0}}))
        res = CliRunner().invoke(
            app,
            [
                "score",
                "asr",
                str(pairs),
                str(tmp_path / "calls"),
                "--cleaner",
                "llm",
                "--model",
                "openai/cleaner",
                "--llm-config",
                str(cfg),
                "--json",
            ],
        )
        assert srv.count >= 1, res.output  # the server named only in the config file was asked
    assert "HALLUSCOPE_LLM_CONFIG" not in os.environ  # scoped to the command
    res = CliRunner().invoke(app, ["score", "asr", str(pairs), "--llm-config", str(tmp_path / "none.toml")])
    assert res.exit_code != 0 and "no such file" in str(res.exception)


def test_options_reach_the_model_they_are_given_to(tmp_path):
    assert model_with("hf-audio/m", ["alpha=0.5", "mitigation=aad"]) == "hf-audio/m?mitigation=aad&alpha=0.5"
    assert model_with("openai/x", []) == "openai/x" and model_with(None, ["a=1"]) is None
    # the generator's backend checks them before anything is written
    res = CliRunner().invoke(
        app,
        [
            "build",
            "spoken",
            str(tmp_path / "r"),
            "--corpus",
            "demo",
            "--langs",
            "en",
            "--generator",
            "openai/x",
            "-o",
            "bogus_key=1",
        ],
    )
    assert res.exit_code != 0 and "bogus_key" in str(res.exception) and "base_url" in str(res.exception)
    assert not (tmp_path / "r").exists()
