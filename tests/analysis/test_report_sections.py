"""The analyses in 'halluscope report' of a real (small) spoken build: rules rewrites, stand-in speech, TF-IDF on O
and T; every detection analysis section, its tables and its LaTeX are there; the judge and mitigation ones are not."""

import json

from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect.run import detect
from support import fakes


def test_report_of_a_spoken_build_has_the_detection_analyses(tmp_path):
    fakes.register()
    corpus = fakes.write_corpus(tmp_path / "corpus.jsonl")
    run = tmp_path / "run"
    build_spoken(
        run,
        BuildConfig(
            corpus=str(corpus), langs=("en", "ru"), tts="test-silence", asr="test-fixed", rewrites_per_article=3, seed=1
        ),
        quiet=True,
    )
    for inp in ("text", "transcript"):
        detect(run, task="binary", input=inp)
    res = CliRunner().invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{") :])
    titles = [s["title"] for s in doc["sections"]]
    for head in ("Severity-resolved detection", "Fidelity strata", "Language parity"):
        assert any(t.startswith(head) for t in titles), (head, titles)
    sev = doc["tables"]["severity_detection"]["rows"]
    assert {r["input"] for r in sev} == {"O", "T"} and {r["language"] for r in sev} == {"en", "ru", "all"}
    # the stand-in ASR writes 'transcript' for every clip: item WER 1, every item in the top bin
    strata = doc["tables"]["fidelity_strata"]["rows"]
    assert [(r["stratum"], r["n"]) for r in strata] == [(">= 0.5", strata[0]["n"])] and strata[0]["n"] > 0
    parity = {r["language"]: r for r in doc["tables"]["language_parity"]["rows"]}
    assert parity["en"]["wer"] == 1.0 and parity["en"]["f1_O"] is not None
    assert {(t["lang_a"], t["lang_b"]) for t in doc["tables"]["language_parity_tests"]["rows"]} == {("en", "ru")}
    assert not any(t.startswith(("Judge reliability", "Mitigation")) for t in titles)  # no judges, no sweep
    assert (run / "report" / "analysis" / "language_parity_tests.tex").is_file()
    assert (run / "report" / "severity_en.png").is_file() and (run / "report" / "fidelity_gap.png").is_file()
