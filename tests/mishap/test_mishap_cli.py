"""'halluscope mishap all' end to end on the scripted server, then report, rubric export, label export; and
answers from a tiny random-weight hf-audio model."""

import json

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.store import Store
from halluscope.mishap.annotate import Annotations
from support import scripted
from support.chat_server import ChatServer


def test_all_then_report(tmp_path, monkeypatch):
    manifest = scripted.write_clips(tmp_path / "data")
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    run = tmp_path / "run"
    runner = CliRunner()
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        res = runner.invoke(
            app,
            [
                "mishap",
                "all",
                str(run),
                "--manifest",
                str(manifest),
                "--llm",
                "openai/writer",
                "--model",
                "openai/alm-a",
                "--model",
                "openai/alm-b",
                "--judge",
                "openai/judge",
            ],
        )
        assert res.exit_code == 0, res.output
        calls = srv.count
        res = runner.invoke(
            app,
            [
                "mishap",
                "all",
                str(run),
                "--manifest",
                str(manifest),
                "--llm",
                "openai/writer",
                "--model",
                "openai/alm-a",
                "--model",
                "openai/alm-b",
                "--judge",
                "openai/judge",
            ],
        )
        assert res.exit_code == 0 and srv.count == calls  # everything resumed from the store
    ann = Annotations(run)
    ann.add(
        answer_id=next(
            iter(
                Store(run).results(
                    "mishap.judge",
                    Store(run).latest_manifest("mishap judge").stages["judge"],
                    __import__("halluscope.core.records", fromlist=["x"]).GroundednessJudgement,
                )
            )
        ),
        annotator="x",
        label="hallucinated",
    )
    ann.close()
    res = runner.invoke(app, ["mishap", "report", str(run)])
    assert res.exit_code == 0, res.output
    out = run / "report" / "mishap"
    md = (out / "mishap.md").read_text()
    assert "Table 1" in md and "Table 11" in md and "openai/alm-a" in md and "openai/alm-b" in md
    assert "judge vs x" in md and (out / "stance.png").read_bytes()[:4] == b"\x89PNG"
    t1 = (out / "table1.csv").read_text().splitlines()
    assert t1[0].startswith("model,method,music_context,music_knowledge,music_all")
    assert all(",W/O," in line for line in t1[1:])  # no mitigation in this run: every row is plain decoding
    html = (out / "mishap.html").read_text()
    assert "<script>" not in html and "data:image/png;base64" in html
    assert runner.invoke(app, ["mishap", "rubrics", str(run), "--export", str(tmp_path / "r.jsonl")]).exit_code == 0
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 24
    assert runner.invoke(app, ["mishap", "annotate", str(run), "--export", str(tmp_path / "l.csv")]).exit_code == 0
    assert len((tmp_path / "l.csv").read_text().splitlines()) == 2

    # the judge's fixed in-context set drawn from annotations: unanimous labels only
    from halluscope.mishap.annotate import annotation_items
    from halluscope.mishap.judge import load_examples

    items, _ = annotation_items(run)
    ann = Annotations(run)
    already = {a for a, _ in ann.latest()}  # the one labelled by 'x' above
    contested = None
    for cat in ("context", "knowledge"):
        ids = [it["id"] for it in items if it["category"] == cat and it["id"] not in already]
        for i, answer_id in enumerate(ids[:6]):
            label = "grounded" if i < 3 else "hallucinated"
            ann.add(answer_id=answer_id, annotator="a1", label=label)
            ann.add(answer_id=answer_id, annotator="a2", label=label)
        contested = ids[6]
        ann.add(answer_id=contested, annotator="a1", label="grounded")
        ann.add(answer_id=contested, annotator="a2", label="hallucinated")
    ann.close()
    res = runner.invoke(app, ["mishap", "examples", str(run), "--out", str(tmp_path / "ex.json")])
    assert res.exit_code == 0, res.output
    drawn = json.loads((tmp_path / "ex.json").read_text())
    assert contested not in drawn["_answer_ids"] and len(drawn["_answer_ids"]) == 12
    examples = load_examples(tmp_path / "ex.json")  # the judge accepts it: 3 + 3 per category
    assert {r["verdict"] for r in examples["context"]} == {"grounded", "hallucinated"}
    # each example shows the stance the judge read for that response (human labels carry none), not 'asserts'
    from halluscope.mishap.judge import load_judgements

    with Store(run) as store:
        read = load_judgements(store)
    shown = [(r["answer_id"], r["stance"]) for rows in examples.values() for r in rows]
    assert sorted(a for a, _ in shown) == sorted(drawn["_answer_ids"])
    assert all(stance == read[a].stance for a, stance in shown)
    assert {s for _, s in shown} >= {"abstains", "asserts"}

    # judged with those examples: the twelve example answers leave judge-human agreement, and the report says so
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        res = runner.invoke(
            app, ["mishap", "judge", str(run), "--judge", "openai/judge", "--examples", str(tmp_path / "ex.json")]
        )
        assert res.exit_code == 0, res.output
    assert Store(run).latest_manifest("mishap judge").config["example_answer_ids"] == sorted(drawn["_answer_ids"])
    assert runner.invoke(app, ["mishap", "report", str(run)]).exit_code == 0
    from halluscope.mishap.report import collect

    agreement = {r["pair"]: r for r in collect(run)["agreement"]}
    assert (
        agreement["judge vs a1"]["examples_left_out"] == 12 and agreement["judge vs a1"]["n"] == 2
    )  # the contested two
    assert agreement["judge vs humans (pooled)"]["examples_left_out"] == 24
    assert "12 answers of this run were the judge's in-context examples" in (out / "mishap.md").read_text()
    # the main report's MISHAP section: every table it shows is in 'report --json' too
    from halluscope.mishap.section import mishap_section

    with Store(run) as store:
        tables = {t.id: t.rows for t in mishap_section(store).tables}
    assert set(tables) >= {
        "mishap_counts",
        "mishap_balance",
        "mishap_table1",
        "mishap_table11",
        "mishap_stance",
        "mishap_agreement",
    }
    assert tables["mishap_agreement"] == collect(run)["agreement"] and len(tables["mishap_table1"]) == 2


def test_answers_from_tiny_hf_audio_model(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from halluscope.backends.llm import LLMConfig
    from halluscope.mishap.answers import collect_answers
    from support.tiny_audio_lm import build_qwen2_audio

    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    model_dir = build_qwen2_audio(tmp_path / "qwen2-audio")
    spec = f"hf-audio/{model_dir}"
    res = collect_answers(
        run,
        spec,
        config=LLMConfig(),
        backend_options={"params": {"max_new_tokens": 3}, "device": "cpu"},
        audio_policy="chunk",
        quiet=True,
    )
    assert len(res.results) == 12 and not res.failed
    a = next(iter(res.results.values()))
    assert a.seed is None and a.status == "ok" and isinstance(a.text, str) and a.id.endswith("~greedy")
    assert a.audio.delivered and a.audio.heard_s == pytest.approx(a.audio.sent_s, abs=0.02)
    again = collect_answers(
        run,
        spec,
        config=LLMConfig(),
        backend_options={"params": {"max_new_tokens": 3}, "device": "cpu"},
        audio_policy="chunk",
        quiet=True,
    )
    assert again.stats.calls == 0 and again.results == res.results
    # the same model with audio-aware contrastive decoding: its own answers, its own row under the model
    aad = collect_answers(
        run,
        f"{spec}?mitigation=aad&alpha=0.5",
        config=LLMConfig(),
        backend_options={"params": {"max_new_tokens": 3}, "device": "cpu"},
        audio_policy="chunk",
        quiet=True,
    )
    assert len(aad.results) == 12 and not aad.failed and not set(aad.results) & set(res.results)
    from halluscope.mitigation import model_and_method, model_order as _model_order

    label = "hf-audio/" + spec.rstrip("/").rsplit("/", 1)[1]  # the display name: no temporary directory
    assert model_and_method(f"{spec}?mitigation=aad&alpha=0.5") == (label, "AAD (alpha=0.5)")
    assert model_and_method(spec) == (label, "W/O")
    assert model_and_method(f"{spec}?name=qwen2-tiny&mitigation=aad") == ("qwen2-tiny", "AAD")
    assert sorted([f"{spec}?mitigation=dola", f"{spec}?mitigation=aad", spec], key=_model_order) == [
        spec,
        f"{spec}?mitigation=aad",
        f"{spec}?mitigation=dola",
    ]
