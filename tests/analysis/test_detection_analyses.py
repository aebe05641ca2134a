"""Severity-resolved detection, fidelity strata and language parity on hand-built records with known answers."""

import math

import pytest
from synth import detect_run, original, rewrite, store_build, transcript

from halluscope.analysis._common import holm
from halluscope.analysis.fidelity import fidelity_section
from halluscope.analysis.parity import parity_section
from halluscope.analysis.severity import minimum_detectable, severity_section
from halluscope.core.store import Store
from halluscope.report.page import write_folder

SEVS = ("mild", "moderate", "severe")


def test_holm_step_down():
    got = holm([0.01, 0.04, 0.03, None])
    assert got[:3] == pytest.approx([0.03, 0.06, 0.06]) and got[3] is None
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


@pytest.fixture(scope="module")
def severity_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("sev")
    arts = [f"a{i}" for i in range(4)]
    samples = [original(a) for a in arts] + [rewrite(a, "fabrication", s) for a in arts for s in SEVS]
    O = {"a0": "hallucinated"}  # one false positive among the four originals
    O.update({"a0~fabrication~mild": "hallucinated", "a3~fabrication~mild": None})  # mild 1/4, one unparsable
    O.update({f"a{i}~fabrication~moderate": "hallucinated" for i in (0, 1)})  # moderate 2/4
    O.update({f"{a}~fabrication~severe": "hallucinated" for a in arts})  # severe 4/4
    T = {f"a{i}~fabrication~moderate": "hallucinated" for i in (0,)}  # T: 0/4, 1/4, 2/4
    T.update({f"a{i}~fabrication~severe": "hallucinated" for i in (0, 1)})
    with Store(run) as store:
        for inp, got in (("text", O), ("transcript", T)):
            detect_run(
                store,
                "tfidf",
                "binary",
                inp,
                {v.id: ("hallucinated" if v.label else "original", got.get(v.id, "original")) for v in samples},
            )
        store_build(store, samples)
        section = severity_section(store)
    return run, section


def test_severity_rates_f1_and_minimum_detectable_severity(severity_run):
    run, s = severity_run
    rows = {(r["input"], r["language"], r["type"], r["severity"]): r for r in s.rows("severity_detection")}
    o = {sev: rows[("O", "en", "all", sev)] for sev in SEVS}
    assert [o[x]["rate"] for x in SEVS] == [0.25, 0.5, 1.0]
    assert o["mild"]["detected"] == 1 and o["mild"]["n"] == 4 and o["mild"]["negatives"] == 4
    # hallucinated-class F1 = 2TP / (2TP + FP + FN), the one false positive shared by every cell
    assert o["mild"]["f1"] == pytest.approx(2 / 6) and o["moderate"]["f1"] == pytest.approx(4 / 7)
    assert o["severe"]["f1"] == pytest.approx(8 / 9) and o["severe"]["rate_ci"] == (1.0, 1.0)
    lo, hi = o["moderate"]["rate_ci"]
    assert 0.0 <= lo < 0.5 < hi <= 1.0  # four articles: a wide interval over articles
    assert [rows[("T", "en", "fabrication", x)]["rate"] for x in SEVS] == [0.0, 0.25, 0.5]
    mds = {(r["input"], r["type"]): r for r in s.rows("minimum_detectable_severity") if r["language"] == "en"}
    assert mds[("O", "all")]["mds"] == "moderate" and mds[("O", "all")]["mds_confident"] == "severe"
    assert mds[("T", "fabrication")]["mds"] == "severe" and mds[("T", "fabrication")]["mds_confident"] is None
    # a severity the cell has no rewrite of is no evidence either way: moderate alone at rate 1 is detectable
    only = [
        {
            "detector": "d",
            "input": "O",
            "language": "en",
            "type": "fabrication",
            "severity": "moderate",
            "rate": 1.0,
            "rate_ci": None,
        }
    ]
    assert minimum_detectable(only)[0]["mds"] == "moderate" and minimum_detectable(only)[0]["mds_confident"] is None
    write_folder(run / "out", [s], title="t")  # Markdown, HTML, CSV, JSON through the one renderer
    assert (run / "out" / "severity_en.png").stat().st_size > 1000
    assert "Minimum detectable severity" in (run / "out" / "tables.md").read_text()
    from halluscope.analysis.export import write_analysis_latex

    tex = {p.name: p.read_text() for p in write_analysis_latex(run / "out" / "analysis", [s])}
    assert set(tex) == {"severity_detection.tex", "minimum_detectable_severity.tex"}
    assert (
        "\\label{tab:severity_detection}" in tex["severity_detection.tex"]
        and "\\toprule" in tex["severity_detection.tex"]
    )


@pytest.fixture(scope="module")
def fidelity_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("fid")
    arts = [f"a{i}" for i in range(6)]
    samples = [original(a) for a in arts] + [rewrite(a, "fabrication", "severe") for a in arts]
    wer = {v.id: (0.05 if int(v.article_id[1]) < 3 else 0.6) for v in samples}
    trs = [transcript(v, "x", wer[v.id]) for v in samples]
    gold = {v.id: "hallucinated" if v.label else "original" for v in samples}
    flip = {"original": "hallucinated", "hallucinated": "original"}
    with Store(run) as store:
        detect_run(store, "tfidf", "binary", "text", {i: (g, g) for i, g in gold.items()})
        detect_run(
            store, "tfidf", "binary", "transcript", {i: (g, g if wer[i] < 0.5 else flip[g]) for i, g in gold.items()}
        )
        for n, (item, who, lab) in enumerate(
            [("a0", "ann", "fully"), ("a0", "bob", "fully"), ("a3", "ann", "poorly"), ("a3", "bob", "unintelligible")]
        ):
            store.save_quality(
                {
                    "item_id": item,
                    "annotator": who,
                    "intelligibility": lab,
                    "fidelity": "faithful",
                    "excluded": False,
                    "note": "",
                    "created": 1.0,
                },
                f"save-{n:06d}",
            )
        store_build(store, samples, trs)
        section = fidelity_section(store)
    return section


def test_fidelity_strata_gap_per_wer_bin_and_trend(fidelity_run):
    rows = {(r["by"], r["stratum"]): r for r in fidelity_run.rows("fidelity_strata")}
    low, high = rows[("WER", "[0, 0.1)")], rows[("WER", ">= 0.5")]
    assert (low["n"], low["O_acc"], low["T_acc"], low["gap"], low["gap_ci"]) == (6, 1.0, 1.0, 0.0, (0.0, 0.0))
    assert (high["n"], high["O_acc"], high["T_acc"], high["gap"], high["gap_ci"]) == (6, 1.0, 0.0, 1.0, (1.0, 1.0))
    assert ("WER", "[0.1, 0.25)") not in rows  # empty bins are left out
    # listeners: a0 rated fully twice; a3 poorly vs unintelligible: the tie goes to the worse label
    assert rows[("listeners", "fully")]["gap"] == 0.0 and rows[("listeners", "unintelligible")]["gap"] == 1.0
    trend = fidelity_run.rows("fidelity_trend")[0]
    assert trend["n"] == 12 and trend["slope"] == pytest.approx(1 / 0.55)
    assert trend["p_grows"] < 0.01  # only 1 of C(12, 6) = 924 splits separates the gaps as perfectly


@pytest.fixture(scope="module")
def parity_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("par")
    samples, trs, preds = [], [], {}
    for lang, ref, hyp in (("en", "Hello, world.", "hello world"), ("ru", "Привет, мир.", "привет мир мир")):
        for i in range(4):
            a = f"{lang}{i}"
            for v in (original(a, lang, ref), rewrite(a, "fabrication", "severe", lang)):
                v = v.model_copy(update={"text": ref})
                samples.append(v)
                trs.append(transcript(v, hyp))
                g = "hallucinated" if v.label else "original"
                preds[v.id] = (g, g if lang == "en" else {"original": "hallucinated", "hallucinated": "original"}[g])
    with Store(run) as store:
        detect_run(store, "tfidf", "binary", "text", preds)
        for n, (item, lab, out) in enumerate(
            [("en0", "fully", False), ("en1", "mostly", False), ("ru0", "poorly", True), ("ru1", "mostly", False)]
        ):
            store.save_quality(
                {
                    "item_id": item,
                    "annotator": "ann",
                    "intelligibility": lab,
                    "fidelity": "faithful",
                    "excluded": out,
                    "note": "",
                    "created": 1.0,
                },
                f"save-{n:06d}",
            )
        store_build(store, samples, trs)
        section = parity_section(store)
    return section


def test_language_parity_normaliser_effect_f1_and_holm_tests(parity_run):
    rows = {r["language"]: r for r in parity_run.rows("language_parity")}
    # en: 'Hello, world.' -> 'hello world': 0 after App. A.4's cleaning, 2 substitutions of 2 words raw
    assert (rows["en"]["wer"], rows["en"]["wer_raw"], rows["en"]["normaliser_effect"]) == (0.0, 1.0, 1.0)
    # ru: one inserted word of two cleaned; raw: two substitutions and the insertion
    assert rows["ru"]["wer"] == pytest.approx(0.5) and rows["ru"]["wer_raw"] == pytest.approx(1.5)
    assert rows["en"]["f1_O"] == 1.0 and rows["ru"]["f1_O"] == 0.0 and rows["en"]["f1_T"] is None
    assert rows["all"]["f1_O"] == pytest.approx(0.5)
    assert (rows["en"]["intelligible"], rows["en"]["excluded"]) == (1.0, 0.0)
    assert (rows["ru"]["intelligible"], rows["ru"]["excluded"], rows["all"]["intelligible"]) == (0.5, 0.5, 0.75)
    tests = {(t["metric"], t["input"]): t for t in parity_run.rows("language_parity_tests")}
    assert len(tests) == 3
    acc = tests[("accuracy", "O")]
    assert (acc["lang_a"], acc["lang_b"], acc["value_a"], acc["value_b"], acc["difference"]) == (
        "en",
        "ru",
        1.0,
        0.0,
        1.0,
    )
    # 8 articles, 4 per language: 2 of the C(8, 4) = 70 reassignments are as extreme (p about 2/70)
    assert 0.01 < acc["p"] < 0.06
    assert tests[("WER", None)]["difference"] == pytest.approx(-0.5)
    for t in tests.values():
        assert t["p_holm"] >= t["p"] and t["p_holm"] <= 1
    ps = sorted(t["p"] for t in tests.values())
    assert min(t["p_holm"] for t in tests.values()) == pytest.approx(min(1.0, 3 * ps[0]))
    assert not math.isnan(tests[("macro-F1", "O")]["difference"]) and tests[("macro-F1", "O")]["difference"] == 1.0
