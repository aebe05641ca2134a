"""'halluscope build judge' end to end: an LLM-built run, two judges on a loopback server, tables, resume."""

import csv
import json
import re

import pytest
from typer.testing import CliRunner

from halluscope.backends.llm import LLM_BACKENDS, LLMConfig, StageOutage  # noqa: E402
from halluscope.cli.main import app  # noqa: E402
from halluscope.core.records import Judgement  # noqa: E402
from halluscope.core.store import Store  # noqa: E402
from halluscope.metrics.agreement import rating_agreement as agreement  # noqa: E402
from halluscope.spoken.build import (  # noqa: E402
    BuildConfig,
    build_spoken,
    load_build,  # noqa: E402
)
from halluscope.spoken.judge import build_judge  # noqa: E402
from halluscope.spoken.judge.run import judge_stage  # noqa: E402
from support.chat_server import ChatServer, Reply, a1_reply, article_of, good_rewrite, type_of  # noqa: E402

WORDS = ["Very Low", "Low", "Medium", "High", "Very High"]
BROKEN = "Fluency is fine overall, I would say high."  # no JSON object, ever


def judge_reply(prompt: str, model: str) -> str:
    """Judge A rates by severity; judge B one point lower on Fluency; one item is never readable by B."""
    keys = json.loads("[" + re.search(r"exact keys:\n\{(.*)\}", prompt).group(1) + "]")
    severity = re.search(r"SEVERITY: (\w+)", prompt).group(1)
    base = {"mild": 2, "moderate": 3, "severe": 5}[severity]
    ratings = {k: base for k in keys}
    if model == "judge-b":
        ratings["Fluency"] = max(1, base - 1)
    return json.dumps({k: WORDS[v - 1] for k, v in ratings.items()})


def script(req, n):
    prompt = req["messages"][0]["content"]
    if prompt.startswith("You are a professional news-quality evaluator"):
        if req["model"] == "judge-down":
            return Reply(status=503, body="overloaded")
        if req["model"].startswith("judge-half") and ("Kazatomprom" in prompt or "Bank" in prompt):  # two articles
            return Reply(status=503, body="overloaded")
        if req["model"] == "judge-b" and "Kazatomprom" in prompt:
            return Reply(content=BROKEN)
        return Reply(content="```json\n" + judge_reply(prompt, req["model"]) + "\n```")
    t, lang = type_of(prompt)
    return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from support import fakes

    fakes.register()
    tmp = tmp_path_factory.mktemp("judge")
    corpus = fakes.write_corpus(tmp / "corpus.jsonl")
    with ChatServer(script) as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_BASE_URL", srv.url)
        mp.setenv("OPENAI_API_KEY", "k")
        cfg = BuildConfig(
            corpus=str(corpus),
            generator="openai/gen",
            tts="test-silence",
            asr="test-fixed",
            rewrites_per_article=3,
            seed=1,
        )
        build_spoken(tmp / "run", cfg, quiet=True)
        yield tmp / "run", srv


def test_two_judges_agreement_tables_and_resume(built):
    run, srv = built
    before = srv.count
    result = build_judge(run, ["openai/judge-a", "openai/judge-b"], per_cell=1, seed=0, quiet=True)
    n = len(result.sample.ids)
    assert n == 27  # one per type x severity x language cell
    a, b = result.judgements["openai/judge-a"], result.judgements["openai/judge-b"]
    assert all(j.status == "ok" for j in a.values())
    unscored = [j for j in b.values() if j.status == "unscored"]
    kaz = [k for k in result.sample.ids if k.startswith("en-2~")]
    assert len(unscored) == len(kaz) >= 1
    assert unscored[0].raw_text == BROKEN and unscored[0].attempts == 4  # App. A.2: three retries
    assert unscored[0].unscored_reason.count("no JSON object") == 4
    assert srv.count - before == 2 * n + 3 * len(kaz)
    # Table 9 equals the statistics recomputed from the stored judgements
    both = sorted(k for k in a if b[k].status == "ok")
    fl = next(r for r in result.agreement if r["dimension"] == "Fl")
    ref = agreement(a=[a[k].scores["Fl"] for k in both], b=[b[k].scores["Fl"] for k in both])
    assert fl["n"] == len(both) and fl["kappa_quadratic"] == pytest.approx(ref.kappa_quadratic)
    assert fl["within_one"] == 1.0 and fl["exact"] == 0.0
    fa = next(r for r in result.agreement if r["dimension"] == "FA")
    assert fa["kappa_quadratic"] == pytest.approx(1.0) and fa["n"] == len([k for k in both if "context" not in k])
    # Table 10: means by type x severity x language
    q = {(r["type"], r["severity"], r["language"]): r for r in result.quality["openai/judge-a"]}
    assert q[("fabrication", "severe", "ru")]["FA"] == 5 and q[("fabrication", "severe", "ru")]["IC"] is None
    assert q[("context_inconsistency", "mild", "kk")]["IC"] == 2
    out = run / "report" / "judge"
    for name in (
        "judge.md",
        "judge.html",
        "table9_agreement.csv",
        "table9_agreement.tex",
        "summary.json",
        "table10_openai_judge-a.tex",
        "heatmap_openai_judge-b.png",
        "self_assessment.csv",
        "unscored.csv",
    ):
        assert (out / name).stat().st_size > 0, name
    assert (out / "heatmap_openai_judge-a.png").read_bytes()[:4] == b"\x89PNG"
    assert "\\toprule" in (out / "table9_agreement.tex").read_text()
    rows = list(csv.DictReader((out / "unscored.csv").open(encoding="utf-8")))
    assert [r["judge"] for r in rows] == ["openai/judge-b"] * len(kaz)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judges"][1]["unscored"] == len(kaz) and summary["sampled"] == n

    calls = srv.count
    again = build_judge(run, ["openai/judge-a", "openai/judge-b"], per_cell=1, seed=0, quiet=True)
    assert srv.count == calls and again.agreement == result.agreement
    with Store(run) as store:
        stages = store.latest_manifest("build judge").stages
        assert set(stages) == {"judge:openai/judge-a", "judge:openai/judge-b"}
        stored = store.results("judge", stages["judge:openai/judge-b"], Judgement)
        assert stored == b


def test_cli_build_judge(built):
    run, srv = built
    res = CliRunner().invoke(
        app, ["build", "judge", str(run), "--judge", "openai/judge-c", "--judge", "openai/judge-b", "--per-cell", "2"]
    )
    assert res.exit_code == 0, res.output
    assert "judged 27 items" in " ".join(res.output.split())  # every cell holds one rewrite: 27, not 54
    md = (run / "report" / "judge" / "judge.md").read_text(encoding="utf-8")
    assert "## Table 9: cross-judge agreement" in md and "## Table 10: mean ratings by openai/judge-c" in md
    assert "## Generator self-assessment" in md
    # the main report embeds the judge tables
    res = CliRunner().invoke(app, ["report", str(run)])
    assert res.exit_code == 0, res.output
    main_md = (run / "report" / "tables.md").read_text(encoding="utf-8")
    assert "## LLM judges" in main_md and "Table 9: cross-judge agreement" in main_md
    assert "Table 9: cross-judge agreement" in (run / "report" / "report.html").read_text(encoding="utf-8")


def html_tables(page: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows of cell texts) of every <table> of an HTML page."""
    from html.parser import HTMLParser

    tables: list = []

    class P(HTMLParser):
        cell: list | None = None

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                tables.append(([], []))
            elif tag == "tr":
                tables[-1][1].append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag):
            if tag in ("td", "th") and self.cell is not None:
                (tables[-1][0] if tag == "th" else tables[-1][1][-1]).append("".join(self.cell))
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)

    P().feed(page)
    return [(head, [r for r in rows if r]) for head, rows in tables]


def row_lists(obj) -> list[list[dict]]:
    """Every list of row dicts anywhere in a JSON document."""
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in row_lists(v)]
    if isinstance(obj, list):
        if obj and all(isinstance(r, dict) for r in obj):
            return [obj, *[x for r in obj for x in row_lists(r)]]
        return [x for v in obj for x in row_lists(v)]
    return []


def test_report_json_holds_every_table_of_the_html_page(built):
    from halluscope.report.table import fmt

    run, _ = built
    build_judge(run, ["openai/judge-a", "openai/judge-b"], per_cell=1, seed=0, quiet=True)
    res = CliRunner().invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    judges = doc["tables"]
    assert {"FA", "Fl", "AT"} <= {r["dimension"] for r in judges["table9_agreement"]["rows"]}  # Table 9
    assert {k for k in judges if k.startswith("table10_")} == {"table10_openai_judge-a", "table10_openai_judge-b"}
    assert len(judges["table10_openai_judge-a"]["rows"]) == 27

    def found(rows: list[list[str]], candidates: list[list[dict]]) -> bool:
        # some JSON table has these rows, each HTML cell being one of its row's values as printed
        return any(
            len(c) == len(rows)
            and all(
                all(cell == "-" or cell in {fmt(v) for v in jr.values()} | {str(v) for v in jr.values()} for cell in hr)
                for hr, jr in zip(rows, c)
            )
            for c in candidates
        )

    tables = html_tables((run / "report" / "report.html").read_text(encoding="utf-8"))
    assert len(tables) >= 8
    for head, rows in tables:
        assert found(rows, row_lists(doc)), f"HTML table {head} is not in report --json"
    # the check can fail: without the judge section's tables, Tables 9 and 10 are nowhere in the JSON
    judge_ids = next(s["tables"] for s in doc["sections"] if s["title"].startswith("LLM judges"))
    others = row_lists({k: v for k, v in doc["tables"].items() if k not in judge_ids})
    missing = [head for head, rows in tables if not found(rows, others)]
    assert len(missing) >= 4 and any("κ (quadratic)" in h for h in missing)


def test_one_judge_gives_quality_tables_only_and_bad_args_are_explained(built):
    run, _ = built
    result = build_judge(run, ["openai/judge-d"], per_cell=1, quiet=True)
    assert result.agreement == [] and len(result.quality["openai/judge-d"]) == 27
    res = CliRunner().invoke(
        app, ["build", "judge", str(run), "--judge", "openai/judge-d", "--judge", "openai/judge-d"]
    )
    assert res.exit_code != 0 and "each judge may be named once" in str(res.exception)


def test_cli_build_judge_failing_on_too_many_items_exits_2_unless_allow_partial(built):
    run, srv = built
    args = ["build", "judge", str(run), "--per-cell", "1", "-o", "max_retries=0"]
    res = CliRunner().invoke(app, [*args, "--judge", "openai/judge-half"])
    # two articles' items have no judgement: more than the share, one line with the cause and the fix
    assert "build judge: step 'judge openai/judge-half?max_retries=0' failed on" in str(res.exception), res.output
    assert "Fix: check the judge openai/judge-half" in str(res.exception)
    tables = run / "report" / "judge" / "judge.md"
    with Store(run) as store:  # checked before the tables and the run's record: neither names the failed judge
        m = store.latest_manifest("build judge")
        assert m is None or "openai/judge-half?max_retries=0" not in m.config["judges"]
    assert not tables.exists() or "judge-half" not in tables.read_text(encoding="utf-8")
    res = CliRunner().invoke(app, [*args, "--judge", "openai/judge-half-2", "--allow-partial"])
    assert res.exit_code == 0, res.output
    assert "judge-half-2" in tables.read_text(encoding="utf-8")  # what succeeded, in the tables
    assert "step 'judge openai/judge-half-2?max_retries=0':" in " ".join(res.output.split())  # said, not fatal


def test_unanswered_items_are_failed_counted_and_retried_next_run(built):
    run, srv = built
    config = LLMConfig(openai={"max_retries": 1, "backoff_base_s": 0.01})
    before = srv.count
    # every call failed: the command stops (exit 2) with one line naming the URL, the count and the reasons file,
    # after writing the report
    with pytest.raises(
        StageOutage,
        match=r"every call to http://127\.0\.0\.1:\d+/v1/chat/completions failed: "
        r"27 of 27 calls failed; reasons in \S+failed-calls-openai_judge-down\.jsonl",
    ):
        build_judge(run, ["openai/judge-down"], per_cell=1, config=config, quiet=True)
    reasons = (run / "logs" / "failed-calls-openai_judge-down.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(reasons) == 27 and all("HTTP 503: overloaded (gave up after 2 attempts)" in r for r in reasons)
    with Store(run) as store:
        st = judge_stage(
            LLM_BACKENDS.create("openai/judge-down", config=config),
            retries=3,
            generate_fp=load_build(store).stages["generate"],
        )
        failed = store.failures(st.name, st.fingerprint)
    assert len(failed) == 27 and "HTTP 503: overloaded (gave up after 2 attempts)" in next(iter(failed.values()))
    assert srv.count - before == 27 * 2
    rows = list(csv.DictReader((run / "report" / "judge" / "unscored.csv").open(encoding="utf-8")))
    assert [r["judge"] for r in rows] == ["openai/judge-down"] * 27
    with pytest.raises(StageOutage):
        build_judge(run, ["openai/judge-down"], per_cell=1, config=config, quiet=True)
    assert srv.count - before == 27 * 4  # failures are never served from the store


def test_per_language_judge_rates_each_language_with_its_model_and_records_it(built):
    """--judge en=...,ru=...,kk=... (issue 29, item 3): each item goes to its language's model, the Judgement names
    that model, and a model shared with another judge rates each item once."""
    from halluscope.core.errors import HalluscopeError

    run, srv = built
    mixed = "en=openai/judge-pl,ru=openai/judge-b,kk=openai/judge-pl"
    before = srv.count
    result = build_judge(run, [mixed, "openai/judge-pl"], per_cell=1, seed=0, quiet=True)
    judged = [r for r in srv.requests[before:] if r["messages"][0]["content"].startswith("You are a professional")]
    assert sum(r["model"] == "judge-pl" for r in judged) == len(result.sample.ids) == 27  # once per item, not twice
    mine = result.judgements[mixed]
    lang = {k: k.split("-")[0] for k in mine}  # fakes' article ids start with their language
    assert {lang[k] for k in mine} == {"en", "ru", "kk"}
    assert all(j.judge == ("openai/judge-b" if lang[k] == "ru" else "openai/judge-pl") for k, j in mine.items())
    # judge-b cannot read the English Kazatomprom items; here English went to judge-pl, so all are scored
    assert all(j.status == "ok" for j in mine.values())
    # judge-b rates Fluency one point lower: the two judges differ exactly on the Russian items
    same = result.judgements["openai/judge-pl"]
    differ = sorted(k for k in mine if mine[k].scores["Fl"] != same[k].scores["Fl"])
    assert differ and all(lang[k] == "ru" for k in differ)
    assert len(differ) == sum(lang[k] == "ru" and same[k].scores["Fl"] > 1 for k in mine)
    fl = next(r for r in result.agreement if r["dimension"] == "Fl")
    assert fl["judge_a"] == mixed and fl["within_one"] == 1.0 and fl["exact"] == pytest.approx(1 - len(differ) / 27)
    with Store(run) as store:
        m = store.latest_manifest("build judge")
    assert m.config["per_language"] == {
        mixed: {"en": "openai/judge-pl", "ru": "openai/judge-b", "kk": "openai/judge-pl"}
    }
    assert set(m.stages) == {"judge:openai/judge-pl", "judge:openai/judge-b"}
    # the viewer and the reliability analyses read the per-language judge back whole, not as its two models
    from halluscope.analysis.reliability import spoken_judgements
    from halluscope.spoken.judge.run import stored_judgements

    with Store(run) as store:
        latest = stored_judgements(store, lang, latest_run=True)
        every = spoken_judgements(store, load_build(store))
    assert latest == {mixed: mine, "openai/judge-pl": same}
    assert every[mixed] == mine
    from halluscope.view.data import load_view

    view = load_view(run)
    ru = next(k for k in mine if lang[k] == "ru")
    assert mixed in view.judges
    assert sorted(j["judge"] for j in view.detail_of(ru)["judges"]) == ["openai/judge-b", "openai/judge-pl"]
    assert (run / "report" / "judge" / "table10_en_openai_judge-pl_ru_openai_judge-b_kk_openai_judge-pl.csv").is_file()
    # the command line: options apply to every language's model; a finished run makes no call
    calls = srv.count
    res = CliRunner().invoke(
        app, ["build", "judge", str(run), "--judge", mixed, "--judge", "openai/judge-pl", "--per-cell", "1", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert srv.count == calls and json.loads(res.stdout)["judges"][0]["judge"] == mixed
    with pytest.raises(
        HalluscopeError,
        match=r"--judge 'en=openai/judge-pl,ru=openai/judge-b' has no engine for kk "
        r"\(to judge en, ru, kk\)\. Fix: add kk=<spec>$",
    ):
        build_judge(run, ["en=openai/judge-pl,ru=openai/judge-b"], per_cell=1, quiet=True)
