"""The audio-reliance check on tiny random Qwen2-Audio models built here: one wired deaf (its audio projector
zeroed: every clip embeds to zeros) is flagged in the command's last lines and in the report; one wired to depend
on its audio (projector gain 30) is not. Real espeak-ng clips from the small spoken build; every call is stored."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

from halluscope.canary import ABLATIONS, CanaryAnswer, ablate
from halluscope.canary.core import STAGE, summarize
from halluscope.core.store import Store
from support import fakes
from support.hostile_helpers import flat, run_cli
from support.tiny_wired import wired

OPTS = ["--max-tokens", "4", "-o", "audio_window_s=30"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("canary")
    (root / "spoken").mkdir()
    run = fakes.spoken_run(root / "spoken")
    return run, wired(tmp_path_factory, 0.0), wired(tmp_path_factory, 30.0)


def test_ablations_keep_the_length_and_are_seeded():
    rng = np.random.default_rng(1)
    clip = (0.2 * rng.standard_normal(8000)).astype(np.float32)
    donor = np.linspace(-0.5, 0.5, 3000, dtype=np.float32)
    silence, noise, swap = (ablate(k, clip, seed=7, donor=donor) for k in ABLATIONS)
    assert len(silence) == len(noise) == len(swap) == len(clip)
    assert not silence.any()
    assert np.sqrt(np.mean(noise**2)) == pytest.approx(np.sqrt(np.mean(clip**2)), rel=0.05)
    assert np.array_equal(noise, ablate("noise", clip, seed=7)) and not np.array_equal(
        noise, ablate("noise", clip, seed=8)
    )
    assert np.array_equal(swap[:3000], donor) and np.array_equal(swap[3000:6000], donor)  # looped to the length


def test_statistics_flag_unchanged_answers_and_test_correctness():
    def answers(changed: int, n: int = 10) -> dict:
        out = {}
        for i in range(n):
            out[f"{i}#real"] = CanaryAnswer(
                item_id=str(i), ablation="real", status="ok", answer="yes", label="yes", gold="yes"
            )
            for k in ABLATIONS:
                ans = "no" if i < changed else "yes"
                out[f"{i}#{k}"] = CanaryAnswer(
                    item_id=str(i), ablation=k, status="ok", answer=ans, label=ans, gold="yes"
                )
        return out

    deaf = summarize("m", "s", answers(0), {})
    assert deaf.flagged and all(r["unchanged"] == 1.0 and r["p_changed"] == 1.0 for r in deaf.rows)
    hears = summarize("m", "s", answers(8), {})
    assert not hears.flagged and hears.verdict == "depends on the audio"
    row = hears.rows[0]
    assert row["unchanged"] == pytest.approx(0.2) and row["p_changed"] < 1e-5
    # McNemar: 8 items right with the real audio only, none the other way: exact p = 2 * 0.5**8
    assert (row["acc_real"], row["acc_ablated"]) == (1.0, 0.2) and row["mcnemar_p"] == pytest.approx(2 * 0.5**8)


def test_deaf_model_is_flagged_in_the_last_lines_and_the_report(setup, capsys, monkeypatch):
    run, deaf, _ = setup
    code, out = run_cli(capsys, monkeypatch, "canary", run, "--model", f"hf-audio/{deaf}", "--n", "4", *OPTS)
    assert code == 0, out
    last = flat(out).split("canary hf-audio/")[-1]
    assert "FLAGGED" in last and "WARNING" in last and "KL" in last
    with Store(run) as store:
        stored = store.results(STAGE, store.latest_manifest("canary").stages[STAGE], CanaryAnswer)
        tags = [c for c in store.calls() if "canary:silence:" in str(c.get("tag") or c.get("request"))]
    assert len(stored) == 16 and {a.ablation for a in stored.values()} == {"real", *ABLATIONS}
    assert all(a.audio.delivered for a in stored.values())  # the audio did reach the model: it ignores it
    assert tags  # the ablated calls are logged like any other
    from halluscope.spoken.report import collect

    section = next(s for s in collect(run).sections if s.title.startswith("Does the model hear"))
    assert "WARNING" in section.markdown
    rows = section.rows("canary_audio_reliance")
    assert {r["ablation"] for r in rows} == set(ABLATIONS) and all(r["unchanged"] == 1.0 for r in rows)


def test_audio_dependent_model_is_not_flagged_through_detect_canary(setup, capsys, monkeypatch):
    run, _, hears = setup
    code, out = run_cli(
        capsys,
        monkeypatch,
        "detect",
        run,
        "--detector",
        f"hf-audio/{hears}",
        "--input",
        "audio",
        "--canary",
        "4",
        *OPTS,
    )
    assert code == 0, out
    text = flat(out)
    assert "depends on the audio" in text and "WARNING" not in text and "FLAGGED" not in text
    with Store(run) as store:
        m = [m for m in store.manifests() if m.command == "canary" and str(hears) in m.config["model"]][-1]
        stored = store.results(STAGE, m.stages[STAGE], CanaryAnswer)
    silence = [a.answer for a in stored.values() if a.ablation == "silence"]
    real = {a.item_id: a.answer for a in stored.values() if a.ablation == "real"}
    assert sum(a.answer != real[a.item_id] for a in stored.values() if a.ablation == "silence") >= 2, silence
