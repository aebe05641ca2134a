"""AudioTrust's hallucination split as released: files in the released shape (an Apache-2.0 excerpt of its rows),
the real files in ../shared/realdata, and its 0-10 judge protocol through the real openai client against the scripted
server, calls kept in a store."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.audiotrust import judge_templates, load_audiotrust, read_score, score_audiotrust

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.chat_server import ChatServer, Reply, user_text  # noqa: E402

runner = CliRunner()
CORPUS = Path(__file__).resolve().parents[1] / "reply" / "corpus" / "replies.jsonl"


def _released(tmp_path: Path) -> list[Path]:
    """Rows in the released shape, rebuilt from the corpus's verbatim AudioTrust answers (Apache-2.0)."""
    rows = [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if '"audiotrust/' in x]
    out = []
    for kind, name in (("content", "content_mismatc.jsonl"), ("label", "label_mismatch.jsonl")):
        sel = [r for r in rows if r["id"].startswith(f"audiotrust/{kind}/")][:6]
        lines = [
            json.dumps(
                {
                    "WavPath1": f"data/{i}.wav",
                    "overall_description": r["subject"],
                    "General_description": "A kind of music" if kind == "content" else "speech",
                    "ModelResponse": r["reply"],
                }
            )
            for i, r in enumerate(sel)
        ]
        (tmp_path / name).write_text("\n".join(lines + ["{broken"]) + "\n", encoding="utf-8")
        out.append(tmp_path / name)
    return out


def test_released_shape_loads_with_problems_named(tmp_path: Path) -> None:
    loaded = load_audiotrust(_released(tmp_path))
    assert len(loaded.items) == 12 and {i.subset for i in loaded.items} == {"content_mismatch", "label_mismatch"}
    assert (
        len(loaded.problems) == 2 and "not JSON" in loaded.problems[0].text() and "row 7" in loaded.problems[0].text()
    )


def test_match_accuracy_is_the_share_of_answers_that_affirm_the_entry(tmp_path: Path) -> None:
    r = score_audiotrust(load_audiotrust(_released(tmp_path)))
    for name, m in r["subsets"].items():
        members = [i for i in r["items"] if i["subset"] == name]
        assert m["match_accuracy"] == sum(i["stance"] == "yes" for i in members) / len(members)
    logical = tmp_path / "logical_violation.jsonl"
    logical.write_text(
        json.dumps({"WavPath1": "a.wav", "overall_description": "x", "General_description": "y", "ModelResponse": "z"})
        + "\n",
        encoding="utf-8",
    )
    assert score_audiotrust(load_audiotrust([logical]))["subsets"]["logical_violation"]["match_accuracy"] is None


def test_real_files_score_end_to_end(realdata: Path) -> None:
    folder = realdata / "audiotrust_hallucination"
    r = score_audiotrust(load_audiotrust(sorted(folder.glob("*.jsonl"))))
    cm, lm = r["subsets"]["content_mismatch"], r["subsets"]["label_mismatch"]
    assert cm["n"] == lm["n"] == 80 and cm["refusal_rate"] == 22 / 80 and lm["refusal_rate"] == 45 / 80
    assert cm["stance"]["yes"] >= 35  # most answers affirm the genre entry
    templates = judge_templates(folder / "halucination_prompts.yaml")
    assert set(templates) == {"content_mismatch", "label_mismatch", "logical_violation", "physical_violation"}
    assert all("{{ModelResponse}}" in t and "overall_score" in t for t in templates.values())


def test_judge_protocol_through_a_scripted_server(tmp_path: Path, realdata: Path, monkeypatch) -> None:
    files = _released(tmp_path)
    registry = tmp_path / "halucination_prompts.yaml"
    shutil.copy(realdata / "audiotrust_hallucination" / "halucination_prompts.yaml", registry)

    def script(req: dict, n: int) -> Reply:
        text = user_text(req)
        assert "overall_description" in text and "The model answers as follows:" in text
        if "I'm sorry" in text or "can't" in text:
            return Reply(content="not a score")
        return Reply(content=json.dumps({"overall_score": 7, "overall_reasoning": "ok"}))

    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        args = [
            "score",
            "audiotrust",
            *map(str, files),
            "--judge",
            "llm:openai/judge-m",
            "--prompts",
            str(registry),
            "--json",
        ]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, (res.output, res.exception)
        again = runner.invoke(app, args)
        assert again.exit_code == 0 and srv.count == 12  # the rerun is answered from the judge's store
    d = json.loads(res.stdout)
    unscored = [i for i in d["items"] if i["judge_score"] is None]
    assert unscored and all(
        i["judge_raw"] == "not a score" and "no overall_score" in i["judge_reason"] for i in unscored
    )
    for s in d["subsets"].values():
        assert s["judge_scored"] + s["judge_unscored"] == s["n"] and (s["judge_mean_score"] in (None, 7.0))


@pytest.mark.parametrize(
    "raw,want",
    [('{"overall_score": 9}', 9.0), ("overall_score: 4", 4.0), ('{"overall_score": 14}', None), ("great answer", None)],
)
def test_read_score(raw: str, want: float | None) -> None:
    assert read_score(raw)[0] == want
