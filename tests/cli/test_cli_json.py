"""--json prints one machine-readable summary on stdout; --llm-config and -o reach the model of a MISHAP step."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from halluscope.cli.main import app
from support import scripted
from support.chat_server import ChatServer


def test_mishap_judge_json_summary_with_the_config_of_the_command(tmp_path, monkeypatch):
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("HALLUSCOPE_LLM_CONFIG", raising=False)
    with ChatServer(scripted.make_script({})) as srv:
        cfg = tmp_path / "llm.json"  # the server is named only here
        cfg.write_text(json.dumps({"openai": {"base_url": srv.url, "max_retries": 0, "backoff_base_s": 0}}))
        args = ["mishap", "judge", str(run), "--judge", "openai/judge", "--llm-config", str(cfg), "--json"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        summary = json.loads(res.stdout)
        assert summary["step"] == "judgements" and summary["results"] == 12 and summary["failed"] == 0, summary
        assert summary["computed"] == 12 and srv.count >= 12
        again = json.loads(CliRunner().invoke(app, args).stdout)  # resumed: nothing asked again
        assert again["computed"] == 0 and again["reused"] == 12
        # -o options make another judge (its own stage): an unknown key is refused by the backend
        bad = CliRunner().invoke(app, [*args, "-o", "no_such_option=1"])
        assert bad.exit_code != 0 and "no_such_option" in str(bad.exception)
