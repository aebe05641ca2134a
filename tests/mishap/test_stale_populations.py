"""Populations that never leak and verdicts on the texts they read (core/provenance.py), through the user's commands
on a scripted MISHAP run (tests/support/scripted.py; its audio model honours --max-tokens by cutting its reply to that
many words, so a re-answer with other options writes other texts under the same answer ids):

- a re-answer with --max-tokens 3 is a population of its own: Table 1, the verdict count and the labels stay as they
  were, and the report lists the new answers with the command that makes them the tables' (--replace);
- after that command, the verdicts and labels on the old texts are stale (never mixed in), each listed with the
  command that refreshes it; judging again gives Table 1 on the new texts, nothing stale;
- a model answered after judging appears as not judged, with the judge command, never silently absent."""

import json
import shlex

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.provenance import text_digest
from halluscope.core.store import Store
from halluscope.current import select
from halluscope.mishap.annotate import Annotations, annotation_items
from support import scripted
from support.chat_server import ChatServer, Reply


def _script(state):
    base = scripted.make_script(state)

    def script(req, n):
        reply = base(req, n)
        if req["model"].startswith("alm") and (req.get("max_tokens") or 512) < 16:  # the audio model, cut short
            return Reply(content=" ".join((reply.content or "").split()[: req["max_tokens"]]))
        return reply

    return script


@pytest.fixture(scope="module")
def server():
    with ChatServer(_script({})) as srv:
        yield srv


@pytest.fixture
def run(tmp_path, monkeypatch, server):
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    run = scripted.build_run(tmp_path, monkeypatch, seeds=(), per_category=1)  # greedy answers of openai/alm, judged
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # the commands below ask this test's server
    return run


def _ok(*args: str) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def _report(run) -> dict:
    out = _ok("report", run, "--json")
    return json.loads(out[out.index("{") :])


def _stale(doc: dict) -> list[dict]:
    return doc["tables"]["stale"]["rows"] if "stale" in doc["tables"] else []


def _label_all(run, who: str) -> int:
    items, _ = annotation_items(run)
    ann = Annotations(run)
    for it in items:
        ann.add(answer_id=it["id"], annotator=who, label="grounded" if "cannot" in it["response"] else "hallucinated")
    ann.close()
    return len(items)


def _texts(run) -> dict[str, str]:
    return {it["id"]: it["response"] for it in annotation_items(run)[0]}


def test_a_re_answer_with_other_options_is_its_own_population_until_replaced(run):
    n = _label_all(run, "ann1")
    before = _report(run)
    table1 = before["tables"]["mishap_table1"]["rows"]
    assert table1 and not _stale(before)
    counts = before["tables"]["mishap_counts"]["rows"][0]
    assert counts["judged"] + counts["unscored"] == n and counts["human_labels"] == n

    said = _ok("mishap", "answer", run, "--model", "openai/alm", "--max-tokens", "3")  # other options, no --replace
    assert "a population of their own" in said and "--max-tokens 3 --replace" in said
    apart = _report(run)
    assert apart["tables"]["mishap_table1"]["rows"] == table1  # the tables keep the first population
    assert apart["tables"]["mishap_counts"]["rows"][0]["human_labels"] == n
    [row] = _stale(apart)
    assert (row["table"], row["kind"]) == ("answers", "apart")
    assert "--max-tokens 3" in row["command"] and row["command"].endswith("--replace")

    old_texts = _texts(run)
    _ok(*shlex.split(row["command"])[1:])  # the listed command, as printed: makes the new answers the tables'
    changed = {k for k, t in _texts(run).items() if t != old_texts[k]}
    assert 0 < len(changed) < n  # most replies lost words; a reply of three words or fewer reads the same
    replaced = _report(run)
    stale = {(r["table"], r["kind"]): r for r in _stale(replaced)}
    assert set(stale) == {("verdicts", "changed"), ("labels", "changed"), ("answers", "apart")}
    assert stale[("verdicts", "changed")]["record"] == f"openai/alm: {len(changed)}"  # verdicts on an old text
    assert stale[("labels", "changed")]["record"] == f"ann1: {len(changed)}"
    assert (
        stale[("answers", "apart")]["command"].endswith("--replace")
        and "--max-tokens" in (stale[("answers", "apart")]["command"])
    )  # the first population, now the one apart, with the command that brings it back
    counts = replaced["tables"]["mishap_counts"]["rows"][0]  # verdicts and labels on unchanged texts still count
    assert counts["judged"] + counts["unscored"] == counts["human_labels"] == n - len(changed)
    assert counts["not_judged"] == len(changed)

    _ok(*shlex.split(stale[("verdicts", "changed")]["command"])[1:])  # 'halluscope mishap judge RUN --judge ...'
    judged = _report(run)
    assert {(r["table"], r["kind"]) for r in _stale(judged)} == {("labels", "changed"), ("answers", "apart")}
    assert judged["tables"]["mishap_table1"]["rows"] and judged["tables"]["mishap_table1"]["rows"] != table1
    with Store(run) as store:
        chosen = select(store, "verdicts")["verdicts"].current
        texts = _texts(run)
    assert set(chosen) == set(texts) and all(j.answer_sha256 == text_digest(texts[k]) for k, j in chosen.items())
    assert all(len((t or "").split()) <= 3 for t in texts.values())  # the answers the tables read are the new ones


def test_a_model_answered_after_judging_is_listed_as_not_judged(run):
    _ok("mishap", "answer", run, "--model", "openai/alm-late")
    doc = _report(run)
    [row] = _stale(doc)
    assert (row["table"], row["kind"]) == ("verdicts", "missing") and row["record"].startswith("openai/alm-late: ")
    assert row["command"] == f"halluscope mishap judge {run} --judge openai/judge"
    assert {r["model"] for r in doc["tables"]["mishap_table1"]["rows"]} == {"openai/alm"}
    _ok(*shlex.split(row["command"])[1:])
    doc = _report(run)
    assert not _stale(doc)
    assert {r["model"] for r in doc["tables"]["mishap_table1"]["rows"]} == {"openai/alm", "openai/alm-late"}


HALLU = [  # HalluAudio-style responses for the validity study; the judge cannot read the one marked UNREADABLE
    {
        "audio": f"s{i}.wav",
        "prompt": "Is there a dog barking?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": ["Yes, a dog is barking.", "There are four cats.", "UNREADABLE reply"][i % 3],
    }
    for i in range(6)
]


def test_validity_imports_are_the_validity_studys_and_each_comparison_counts_one_population(run, tmp_path):
    from support.corpus_fixtures import write_jsonl

    hallu = write_jsonl(tmp_path / "halluaudio.jsonl", HALLU)
    _ok("mishap", "validity", "import", run, hallu, "--benchmark", "halluaudio", "--model", "alm-1")
    _ok("mishap", "validity", "judge", run, "--judge", "openai/judge")
    n = _label_all(run, "ann1")  # every MISHAP answer and every imported response
    out = _ok("mishap", "disagreements", run, "--json")
    summary = json.loads(out[out.index("{") :])["summary"]
    with Store(run) as store:
        verdicts = select(store, "verdicts")["verdicts"].current
    own = sum(j.status == "ok" for j in verdicts.values())  # MISHAP answers the judge scored, each labelled once
    assert own < n  # the imported responses are labelled too, but they are the validity study's
    assert sum(r["annotated_labels"] for r in summary) == own

    _ok("mishap", "validity", "report", run)
    doc = json.loads((run / "report" / "validity" / "summary.json").read_text())
    hallu_row = next(r for r in doc["rates"] if r["benchmark"] == "HalluAudio")
    assert hallu_row["human_labels"] == len(HALLU)
    # Fig. 5: the human, original and judge bars count the same labels (the unreadable replies have no verdict)
    assert hallu_row["human"]["n"] == hallu_row["judge"]["n"] == hallu_row["original"]["n"] == 4
    mishap_row = next(r for r in doc["rates"] if r["benchmark"] == "MISHAP-Bench")
    assert mishap_row["human"]["n"] == mishap_row["judge"]["n"] == own
