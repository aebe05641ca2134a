"""TF-IDF + logistic regression: the offline detector baseline (scikit-learn)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from halluscope.metrics.classification import macro_f1

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

C_GRID = (0.1, 1.0, 10.0, 100.0)


def _pipeline(c: float, seed: int) -> Pipeline:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import FeatureUnion, Pipeline

    features = FeatureUnion(
        [
            ("word", TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True, min_df=1)),
            ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=1)),
        ]
    )
    clf = LogisticRegression(C=c, max_iter=2000, class_weight="balanced", random_state=seed)
    return Pipeline([("features", features), ("clf", clf)])


@dataclass
class TfidfDetector:
    """Word + character n-gram TF-IDF, balanced logistic regression; C chosen on dev macro-F1."""

    seed: int = 0
    c_grid: tuple[float, ...] = C_GRID
    chosen_c: float | None = field(default=None, init=False)
    _model: Pipeline | None = field(default=None, init=False, repr=False)

    @property
    def spec(self) -> str:
        return "tfidf"

    def config(self) -> dict:
        return {"detector": "tfidf", "c_grid": list(self.c_grid), "seed": self.seed, "features": "word1-2+char_wb2-5"}

    def fit(
        self,
        train_x: Sequence[str],
        train_y: Sequence[str],
        dev_x: Sequence[str],
        dev_y: Sequence[str],
        labels: Sequence[str],
    ) -> TfidfDetector:
        best = (-1.0, self.c_grid[0])
        if len(set(train_y)) < 2:
            # one class only: logistic regression cannot be fit; predict it (reported as such by the caller)
            self._model, self.chosen_c = None, None
            self._constant = train_y[0] if train_y else labels[0]
            return self
        if dev_x:
            for c in self.c_grid:
                model = _pipeline(c, self.seed).fit(list(train_x), list(train_y))
                f1 = macro_f1(reference=list(dev_y), hypothesis=list(model.predict(list(dev_x))), labels=labels)
                if f1 > best[0]:
                    best = (f1, c)
        self.chosen_c = best[1]
        self._model = _pipeline(self.chosen_c, self.seed).fit(list(train_x), list(train_y))
        return self

    def predict(self, xs: Sequence[str]) -> list[str]:
        if self._model is None:
            return [self._constant] * len(xs)
        return [str(p) for p in self._model.predict(list(xs))]
