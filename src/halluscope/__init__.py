"""halluscope: build, run and score hallucination benchmarks for speech and audio language models."""

from halluscope.spoken.build import BuildConfig, build_spoken, load_build
from halluscope.spoken.corpus import load_articles
from halluscope.core.errors import HalluscopeError, InputError, ItemError
from halluscope.core.records import Article, AudioRef, Change, Prediction, RunManifest, Transcript, Variant
from halluscope.core.stages import Stage, run_stage
from halluscope.core.store import Store

__version__ = "0.1.0"

__all__ = [
    "Article", "AudioRef", "BuildConfig", "Change", "HalluscopeError", "InputError", "ItemError", "Prediction",
    "RunManifest", "Stage", "Store", "Transcript", "Variant", "__version__", "build_spoken", "load_articles",
    "load_build", "run_stage",
]
