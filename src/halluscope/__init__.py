"""halluscope: build, run and score hallucination benchmarks for speech and audio language models."""

from halluscope.build import BuildConfig, build_spoken, load_build
from halluscope.corpus import load_articles
from halluscope.errors import HalluscopeError, InputError, ItemError
from halluscope.records import Article, AudioRef, Change, Prediction, RunManifest, Transcript, Variant
from halluscope.stages import Stage, run_stage
from halluscope.store import Store

__version__ = "0.1.0"

__all__ = [
    "Article", "AudioRef", "BuildConfig", "Change", "HalluscopeError", "InputError", "ItemError", "Prediction",
    "RunManifest", "Stage", "Store", "Transcript", "Variant", "__version__", "build_spoken", "load_articles",
    "load_build", "run_stage",
]
