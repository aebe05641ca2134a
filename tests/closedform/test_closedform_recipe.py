"""HalluAudio's scoring recipe (seed 002, compute_metrics) in compat: Unrelated ratio 0 with no binary error, FRR over
the recipe's exact refusal set, accuracy in percent; strict keeps null and its broader abstentions, and says so."""

from __future__ import annotations

from pathlib import Path

from halluscope.closedform.loaders import load_halluaudio
from halluscope.closedform.report import headline_rows, recipe_rows
from halluscope.closedform.score import score_halluaudio


def _file(tmp_path: Path, write_jsonl, preds: list[tuple[str, str]]) -> Path:
    return write_jsonl(
        tmp_path / "b.jsonl",
        [
            {
                "audio": f"{i}.wav",
                "prompt": "Is there a dog barking?",
                "reference": ref,
                "subset": "fsd_binary",
                "domain": "sound",
                "pred": pred,
            }
            for i, (ref, pred) in enumerate(preds)
        ],
    )


def test_unrelated_ratio_is_zero_without_errors_in_the_recipe_and_null_in_strict(tmp_path: Path, write_jsonl) -> None:
    r = score_halluaudio(load_halluaudio([_file(tmp_path, write_jsonl, [("yes", "Yes."), ("no", "No.")])]), bootstrap=0)
    assert r.compat["all"]["recipe"]["unrelated_ratio"] == 0.0
    assert r.strict["all"]["unrelated_ratio"] is None
    assert any("null when there is no binary error" in n for n in r.notes)


def test_recipe_frr_is_the_exact_refusal_set(tmp_path: Path, write_jsonl) -> None:
    preds = [
        ("yes", "refuse"),
        ("no", "I dont know"),
        ("yes", "Cannot answer"),
        ("no", "I cannot answer that."),
        ("yes", "I'm not sure."),
        ("no", "No."),
    ]
    r = score_halluaudio(load_halluaudio([_file(tmp_path, write_jsonl, preds)]), bootstrap=0)
    rec = r.compat["all"]["recipe"]
    assert rec["frr"] == 3 / 6  # 'refuse', 'I dont know', 'Cannot answer' only (p.lower() in the set)
    assert r.strict["all"]["false_refusal_rate"] > rec["frr"]  # strict counts every abstention it reads
    assert rec["accuracy_percent"] == 100 * sum(i.compat_correct for i in r.items) / 6


def test_tables_print_accuracy_in_percent(tmp_path: Path, write_jsonl) -> None:
    r = score_halluaudio(
        load_halluaudio([_file(tmp_path, write_jsonl, [("yes", "Yes."), ("no", "Yes.")])]), bootstrap=0
    )
    row = next(x for x in headline_rows(r, "strict") if x["domain"] == "all")
    assert row["accuracy_percent"] == 50.0 and row["accuracy"] == 0.5
    assert recipe_rows(r)[-1]["accuracy_percent"] == 50.0 and recipe_rows(r)[-1]["unrelated_ratio"] == 1.0
