"""Judge reliability (Krippendorff's alpha, error correlation, effective judges, panel) and the mitigation card on
hand-built records with known answers."""

import pytest
from synth import answer, human, manifest, mishap_judge, original, rewrite, spoken_judge, store_build

from halluscope.analysis.cards import cards_section
from halluscope.analysis.reliability import alpha, effective_judges, majority, reliability_section
from halluscope.core.store import Store
from halluscope.report.page import write_folder


def test_alpha_by_hand():
    # two raters, four items: coincidences o_hh 2, o_gg 4, o_hg = o_gh 1; alpha = 1 - (n-1) * 2 / (2 n_h n_g) = 8/15
    two = {"A": dict(zip("abcd", "hhgg")), "B": dict(zip("abcd", "hggg"))}
    assert alpha(two, level="nominal", domain="gh") == pytest.approx(8 / 15)
    # a third rater missing item d: n = 11, n_h = 5, n_g = 6, disagreeing pairs 2: 1 - 10 * 2 / 60 = 2/3
    three = {**two, "C": dict(zip("abc", "hhg"))}
    assert alpha(three, level="nominal", domain="gh") == pytest.approx(2 / 3)
    assert alpha({"A": {"a": 3, "b": 5}, "B": {"a": 3, "b": 5}}, level="ordinal", domain=range(1, 6)) == pytest.approx(
        1.0
    )
    assert alpha({"A": {"a": 3}, "B": {"a": 3}}, level="ordinal", domain=range(1, 6)) is None  # one value: undefined
    assert alpha({"A": {"a": 3}}, level="ordinal", domain=range(1, 6)) is None


def test_effective_judges_and_majority():
    assert effective_judges(4, 0.5) == pytest.approx(1.6) and effective_judges(3, 1.0) == 1.0
    assert effective_judges(3, 0.0) == 3.0 and effective_judges(3, -0.4) == 3.0 and effective_judges(2, None) is None
    assert majority(["h", "h", None], 3) == "h" and majority(["h", None, "g"], 3) is None
    assert majority(["h", None], 2) is None  # an unscored vote counts against: 1 of 2 is no majority


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("rel")
    lab = {"h": "hallucinated", "g": "grounded", None: None}
    A, B, C = "hhggghh", "hgggghN", "hhhgNgg"  # seven answers; N = unscored; q7 has no human label
    samples = [
        original("a0"),
        rewrite("a0", "fabrication", "mild"),
        original("a1", "ru"),
        rewrite("a1", "fabrication", "mild", "ru"),
    ]
    with Store(run) as store:
        # the answers the verdicts and labels read: one model's population over the questions
        manifest(store, "mishap questions", {}, {"questions": "qs"})
        texts = {
            answer(store, "ans-m", f"q{i}", "openai/m", None, f"reply {i}", f"k{i}").id: f"reply {i}"
            for i in range(1, 8)
        }
        manifest(store, "mishap answer", {"model": "openai/m"}, {"questions": "qs", "answers:openai/m": "ans-m"})
        ids = sorted(texts)
        ref = dict(zip(ids[:6], "hhhggg"))
        for name, votes in (("openai/a", A), ("openai/b", B), ("openai/c", C)):
            mishap_judge(store, name, {aid: lab[None if v == "N" else v] for aid, v in zip(ids, votes)}, texts)
        for who in ("ann", "bob"):
            for aid, v in ref.items():
                human(store, aid, who, lab[v], texts[aid])
        # spoken judges: perfect agreement in English, one disagreement of 4 points in Russian
        spoken_judge(
            store,
            "openai/j1",
            {"a0~fabrication~mild": {"FA": 2}, "a0": {"FA": 5}, "a1": {"FA": 4}, "a1~fabrication~mild": {"FA": 1}},
        )
        spoken_judge(
            store,
            "openai/j2",
            {"a0~fabrication~mild": {"FA": 2}, "a0": {"FA": 5}, "a1": {"FA": 4}, "a1~fabrication~mild": None},
        )
        store_build(store, samples)
        section = reliability_section(store)
    return run, section


def test_reliability_tables(judged_run):
    run, s = judged_run
    alphas = {(r["benchmark"], r["dimension"], r["slice"]): r for r in s.rows("judge_alpha")}
    en = alphas[("Lost in Speech", "FA", "en")]
    assert en["alpha"] == pytest.approx(1.0) and en["items"] == 2 and en["judges"] == 2
    assert alphas[("Lost in Speech", "FA", "ru")]["alpha"] is None  # one pairable item with one value: undefined
    m = alphas[("MISHAP-Bench", "groundedness", "all")]
    assert (m["judges"], m["humans"], m["items"], m["unscored"]) == (3, 2, 7, 2)
    assert (
        alphas[("Lost in Speech", "FA", "ru")]["unscored"] == 1
        and alphas[("Lost in Speech", "FA", "en")]["unscored"] == 0
    )
    corr = {(r["judge_a"], r["judge_b"]): r for r in s.rows("judge_error_correlation")}
    # errors against the humans: A 001001, B 011001, C 000010 (unscored = wrong)
    assert corr[("openai/a", "openai/b")]["error_r"] == pytest.approx(2**-0.5)
    assert corr[("openai/a", "openai/c")]["error_r"] == pytest.approx(-(10**-0.5))
    assert corr[("openai/b", "openai/c")]["error_r"] == pytest.approx(-(5**-0.5))
    assert corr[("openai/a", "openai/b")]["both_wrong"] == 2
    assert "independent judges" in s.table("judge_error_correlation").notes[0]
    assert "3.00 of 3" in s.table("judge_error_correlation").notes[0]  # mean r below 0: clipped to k
    panel = {r["judge"]: r for r in s.rows("judge_panel")}
    assert panel["openai/a"]["accuracy"] == pytest.approx(4 / 6) and panel["openai/b"]["accuracy"] == pytest.approx(
        3 / 6
    )
    assert panel["openai/c"]["accuracy"] == pytest.approx(5 / 6) and panel["openai/c"]["unscored"] == 1
    p = panel["panel (majority of 3)"]
    assert (p["answers"], p["unscored"], p["rate"], p["accuracy"]) == (7, 1, 0.5, pytest.approx(4 / 6))
    assert panel["openai/a"]["rate"] == pytest.approx(4 / 7)
    sp = {(r["dimension"], r["judge"]): r for r in s.rows("judge_panel_spoken")}
    assert (sp[("FA", "openai/j1")]["unscored"], sp[("FA", "openai/j1")]["mean"]) == (0, 3.0)
    # ru's rewrite: 1 from j1, unscored by j2: no majority of 2
    got = sp[("FA", "panel (majority of 2)")]
    assert (got["items"], got["unscored"], got["mean"]) == (4, 1, pytest.approx(11 / 3))
    write_folder(run / "out", [s], title="t")
    assert (run / "out" / "judge_alpha.png").stat().st_size > 1000 and (run / "out" / "judge_panel.csv").is_file()


@pytest.fixture(scope="module")
def card_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("card")
    M = "hf-audio/tiny"
    arms = [
        ("plain greedy", M, None, None),
        ("plain sampled", M, None, [0, 1]),
        ("aad alpha=0", f"{M}?mitigation=aad&alpha=0.0", 0.0, [0, 1]),
        ("aad alpha=1", f"{M}?mitigation=aad&alpha=1.0", 1.0, [0, 1]),
    ]
    plain = {"q1": "h", "q2": "h", "q3": "g", "q4": "g"}
    verdicts: dict[str, str | None] = {}
    lab = {"h": "hallucinated", "g": "grounded"}
    with Store(run) as store:
        cfg_arms = []
        for name, model, strength, seeds in arms:
            fp = f"ans-{name}"
            cost = {"plain greedy": 0.05, "plain sampled": 0.1, "aad alpha=0": 0.1, "aad alpha=1": 0.2}[name]
            for q in plain:
                for seed in seeds or [None]:
                    v = plain[q]
                    text = f"plain {q} {seed}"
                    if name == "plain greedy":
                        v = "h" if q == "q1" else "g"
                        text = f"greedy {q}"
                    if name == "aad alpha=1" and (q == "q1" or (q, seed) == ("q2", 0)):
                        v, text = "g", "mitigated"
                    key = f"k-{name}-{q}-{seed}"
                    a = answer(store, fp, q, model, seed, text, key)
                    verdicts[a.id] = None if (name, q, seed) == ("aad alpha=1", "q4", 1) else lab[v]
                    store.log_call(
                        key=key,
                        backend=model,
                        request={},
                        response={"completion_tokens": 10},
                        status="ok",
                        latency_s=cost,
                    )
            cfg_arms.append({"arm": name, "model": model, "strength": strength, "seeds": seeds, "answers": fp})
        jfp = mishap_judge(store, "openai/judge", verdicts)
        manifest(
            store,
            "mitigation sweep",
            {
                "model": M,
                "method": "aad",
                "strengths": [0.0, 1.0],
                "seeds": [0, 1],
                "temperature": 0.7,
                "judge": "openai/judge",
                "arms": cfg_arms,
                "judge_stages": [jfp],
            },
            {},
        )
        sections = cards_section(store)
    return run, sections


def test_mitigation_card(card_run):
    run, sections = card_run
    assert len(sections) == 1
    rows = {r["arm"]: r for r in sections[0].rows("mitigation_card_aad")}
    base = rows["plain sampled"]
    assert (base["answers"], base["rate"], base["ms_per_token"], base["rate_change"]) == (
        8,
        0.5,
        pytest.approx(10.0),
        None,
    )
    zero = rows["aad alpha=0"]
    assert (zero["rate_change"], zero["agreement"], zero["cost_ratio"], zero["rate_change_ci"]) == (
        0.0,
        1.0,
        pytest.approx(1.0),
        (0.0, 0.0),
    )
    one = rows["aad alpha=1"]
    assert one["unscored"] == 1 and one["rate"] == pytest.approx(1 / 7)  # the unscored answer is not a rate's item
    assert (
        one["pairs"] == 8 and one["rate_change"] == pytest.approx(-3 / 7) and one["agreement"] == pytest.approx(5 / 8)
    )
    lo, hi = one["rate_change_ci"]
    assert -1.0 <= lo <= -3 / 7 <= hi <= 0.0
    assert one["cost_ratio"] == pytest.approx(2.0) and one["ms_per_token"] == pytest.approx(20.0)
    greedy = rows["plain greedy"]
    assert (greedy["rate"], greedy["pairs"], greedy["rate_change"], greedy["agreement"]) == (0.25, 8, -0.25, 0.0)
    assert greedy["cost_ratio"] == pytest.approx(0.5)
    write_folder(run / "out", sections, title="t")
    assert (run / "out" / "mitigation_card_aad.png").stat().st_size > 1000
    assert "change vs sampled" in (run / "out" / "tables.md").read_text()


def test_sweep_refuses_bad_input_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from halluscope.cli.main import app

    Store(tmp_path / "run").close()
    base = ["mitigation", "sweep", str(tmp_path / "run"), "--model", "hf-audio/none"]
    res = CliRunner().invoke(app, [*base, "--strength", "0,x"])
    assert res.exit_code == 2 and "comma-separated strengths" in res.output
    res = CliRunner().invoke(app, [*base, "--method", "nope"])
    assert "unknown mitigation 'nope'" in str(res.exception)
    res = CliRunner().invoke(
        app, ["mitigation", "sweep", str(tmp_path / "run"), "--model", "hf-audio/x?mitigation=aad"]
    )
    assert "already names a mitigation" in str(res.exception)
    res = CliRunner().invoke(app, [*base, "--temperature", "0"])
    assert "--temperature > 0" in str(res.exception)
