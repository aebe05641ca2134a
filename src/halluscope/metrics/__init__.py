"""Every metric of halluscope, by kind (pure functions over plain values, frozen results with the counts):

* ``asr``: WER/CER with the spec's normalisation (``asr_clean``: the optional LLM cleaner; ``scoring``: a pairs file)
* ``classification``: accuracy, macro-F1, majority baseline, yes/no precision/recall/F1
* ``agreement``: Cohen's kappa (binary, quadratic-weighted), agreement rate, Spearman's rho
* ``rates``: k-of-n rates with Wilson intervals (MISHAP), flag rates (provenance), HalluAudio and AHa-Bench rates
* ``bootstrap``: the one seeded percentile bootstrap, resampling items or whole source articles (clusters)
* ``paired``: exact McNemar, paired approximate randomization, paired bootstrap of a difference

Submodules load on first use: an ASR worker needs jiwer, not scikit-learn (about 1 s of import).
"""

from importlib import import_module

_WHERE = {
    "AsrScore": "asr",
    "normalize_for_wer": "asr",
    "score_asr": "asr",
    "ClassificationScore": "classification",
    "score_classification": "classification",
    "majority_baseline": "classification",
    "macro_f1": "classification",
    "yesno_scores": "classification",
    "binary_agreement": "agreement",
    "cohen_kappa": "agreement",
    "rating_agreement": "agreement",
    "rate": "rates",
    "hallucination_rates": "rates",
    "stance_rates": "rates",
    "flag_rates": "rates",
    "halluaudio_scores": "rates",
    "aha_scores": "rates",
    "count_probe_scores": "rates",
    "percentile_ci": "bootstrap",
    "ratio_ci": "bootstrap",
    "resample_weights": "bootstrap",
    "mcnemar": "paired",
    "paired_randomization": "paired",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'halluscope.metrics' has no attribute {name!r}")
    return getattr(import_module(f"halluscope.metrics.{_WHERE[name]}"), name)
