"""The encoder detector: Trainer loop on tiny local models, best dev checkpoint, identical O/T ids."""

from pathlib import Path

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import EncoderTraining
from halluscope.core.store import Store
from halluscope.metrics.classification import macro_f1
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect import detect
from halluscope.spoken.detect.encoder import TRAIN_STAGE_SUFFIX, EncoderOptions
from halluscope.spoken.report import collect

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

FAST = {"epochs": 3, "lr": 5e-3, "batch_size": 8, "max_length": 64, "warmup_ratio": 0.0}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from support.tiny_encoder import build_tiny_encoder, register_text_speech

    register_text_speech()
    tmp = tmp_path_factory.mktemp("enc")
    cfg = BuildConfig(
        corpus="demo",
        langs=("en", "ru"),
        tts="test-bytes",
        asr="test-bytes",
        seed=3,
        rewrites_per_article=1,
        articles_per_language=8,
    )
    result = build_spoken(tmp / "run", cfg, quiet=True)
    model = build_tiny_encoder(tmp / "tiny-xlmr", [v.text for v in result.samples.values()])
    return tmp / "run", model, result


def _training(run_dir, stage_fp):
    with Store(run_dir) as store:
        return store.results("detect" + TRAIN_STAGE_SUFFIX, stage_fp, EncoderTraining)


def test_trains_per_language_keeps_best_dev_checkpoint_and_predicts_dev_and_test(run):
    run_dir, model, build = run
    o = detect(run_dir, detector=f"encoder/{model}", task="binary", input="text", options=FAST)
    t = detect(run_dir, detector=f"encoder/{model}", task="binary", input="transcript", options=FAST)
    # identical ids and splits on O and T; every dev and test item predicted, nothing from train
    assert {k: p.split for k, p in o.predictions.items()} == {k: p.split for k, p in t.predictions.items()}
    assert {p.split for p in o.predictions.values()} == {"dev", "test"}
    assert all(p.predicted in ("original", "hallucinated") for p in o.predictions.values())
    logs = _training(run_dir, o.stage_fingerprint)
    assert set(logs) == {"en", "ru"}  # one model per language by default
    for lang, log in logs.items():
        assert len(log.dev_macro_f1) == 3  # evaluated after every epoch
        assert log.best_dev_macro_f1 == pytest.approx(max(log.dev_macro_f1))
        assert log.best_checkpoint and log.best_checkpoint.startswith("checkpoint-")
        dev = [p for p in o.predictions.values() if p.split == "dev" and build.samples[p.item_id].language == lang]
        assert len(dev) == log.n_dev
        # the kept model is the best one: its dev predictions reproduce the best dev macro-F1
        got = macro_f1(
            reference=[p.gold for p in dev], hypothesis=[p.predicted for p in dev], labels=("original", "hallucinated")
        )
        assert got == pytest.approx(log.best_dev_macro_f1, abs=1e-6)
        assert (run_dir / log.saved_to / "config.json").exists()
        assert not (run_dir / log.saved_to).parent.joinpath("checkpoints").exists()  # checkpoints cleaned up
    # rerun: nothing retrained, same predictions
    again = detect(run_dir, detector=f"encoder/{model}", task="binary", input="text", options=FAST)
    assert again.predictions == o.predictions
    # the core Table 2 picks the encoder up for O and T
    from halluscope.core.spec import display_name

    rows = [r for r in collect(run_dir).detection if r["detector"] == display_name(f"encoder/{model}")]
    assert str(model) not in {r["detector"] for r in rows} and rows[0]["detector"] == f"encoder/{Path(model).name}"
    assert {(r["language"], r["split"]) for r in rows} >= {("en", "O"), ("en", "T"), ("ru", "O"), ("ru", "T")}


def test_multilingual_scope_and_type_task(run, tmp_path):
    run_dir, model, _ = run
    res = detect(
        run_dir,
        detector=f"encoder/{model}",
        task="type",
        input="text",
        options={**FAST, "epochs": 1, "scope": "multilingual", "keep_model": False},
    )
    logs = _training(run_dir, res.stage_fingerprint)
    assert set(logs) == {"all"} and logs["all"].labels == ("fabrication", "contradiction", "context_inconsistency")
    assert logs["all"].saved_to is None
    assert {p.gold for p in res.predictions.values()} <= set(logs["all"].labels)


def test_deberta_architecture_trains_too(run, tmp_path):
    from support.tiny_encoder import build_tiny_encoder

    run_dir, _, build = run
    model = build_tiny_encoder(tmp_path / "tiny-deberta", [v.text for v in build.samples.values()], kind="deberta")
    res = detect(
        run_dir,
        detector=f"encoder/{model}",
        task="binary",
        input="transcript",
        options={**FAST, "epochs": 1, "keep_model": False},
    )
    assert res.predictions and {p.split for p in res.predictions.values()} == {"dev", "test"}


def test_options_are_validated_before_any_work(run):
    run_dir, model, _ = run
    with pytest.raises(HalluscopeError, match="unknown encoder option"):
        detect(run_dir, detector=f"encoder/{model}", options={"epoch": 3})
    with pytest.raises(HalluscopeError, match="expected one of language, multilingual"):
        EncoderOptions.from_options({"scope": "both"})
    with pytest.raises(HalluscopeError, match="expected a float"):
        EncoderOptions.from_options({"lr": "fast"})
    with pytest.raises(HalluscopeError, match="needs a model"):
        detect(run_dir, detector="encoder")
    with pytest.raises(HalluscopeError, match="reads text, transcript"):
        detect(run_dir, detector=f"encoder/{model}", input="audio")
    assert EncoderOptions.from_options({"epochs": "2", "keep_model": "false"}) == EncoderOptions(
        epochs=2.0, keep_model=False
    )
