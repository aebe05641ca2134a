from halluscope.spoken.detect.splits import split_by_article
from halluscope.spoken.detect.tfidf import TfidfDetector
from halluscope.core.records import Variant


def _samples(n_articles: int, lang: str = "en") -> list[Variant]:
    out = []
    for i in range(n_articles):
        out.append(Variant(id=f"{lang}{i}", article_id=f"{lang}{i}", language=lang, text="t", label=0, generator="original"))
        for t in ("fabrication", "contradiction"):
            out.append(Variant(id=f"{lang}{i}~{t}~mild", article_id=f"{lang}{i}", language=lang, text="t", label=1,
                               type=t, severity="mild", generator="rules"))
    return out


def test_split_keeps_all_variants_of_an_article_together_and_covers_every_split():
    samples = _samples(20) + _samples(10, "kk")
    splits = split_by_article(samples, seed=3)
    by_split = {}
    for v in samples:
        by_split.setdefault(splits[v.article_id], set()).add(v.article_id)
    assert set(by_split) == {"train", "dev", "test"}
    assert not (by_split["train"] & by_split["test"]) and not (by_split["dev"] & by_split["test"])
    assert not (by_split["train"] & by_split["dev"])
    en_test = [a for a in by_split["test"] if a.startswith("en")]
    assert len(en_test) == 4  # 20% of 20 articles
    assert split_by_article(samples, seed=3) == splits
    assert split_by_article(samples, seed=4) != splits


def test_tfidf_learns_a_separable_signal_and_picks_c_on_dev():
    train_x = [f"calm report {i}" for i in range(20)] + [f"shocking fabricated claim {i}" for i in range(20)]
    train_y = ["original"] * 20 + ["hallucinated"] * 20
    det = TfidfDetector(seed=0).fit(train_x, train_y, ["calm report x", "shocking claim y"], ["original", "hallucinated"],
                                    ["original", "hallucinated"])
    assert det.chosen_c in det.c_grid
    assert det.predict(["a calm report", "a shocking fabricated claim"]) == ["original", "hallucinated"]


def test_vectorised_bootstrap_f1_equals_sklearn_on_every_resample():
    import numpy as np
    from sklearn.metrics import accuracy_score, f1_score

    from halluscope.metrics.classification import INVALID, bootstrap_acc_f1

    rng = np.random.default_rng(0)
    labels = ["fabrication", "contradiction", "context_inconsistency"]
    ref = list(rng.choice(labels, 40))
    hyp = list(rng.choice(labels + [INVALID], 40))
    idx = rng.integers(0, 40, (50, 40))
    accs, f1s = bootstrap_acc_f1(ref, hyp, labels, idx)
    for row, a, f in zip(idx, accs, f1s):
        r, h = [ref[i] for i in row], [hyp[i] for i in row]
        assert a == accuracy_score(r, h)
        assert abs(f - f1_score(r, h, labels=labels, average="macro", zero_division=0)) < 1e-12


def test_score_classification_counts_invalid_as_errors():
    from halluscope.metrics.classification import score_classification

    # 4 items, one prediction missing: accuracy 2/4; class a: tp 1, fn 2 (the None and the b), fp 0
    # -> F1 2/4; class b: tp 1, fp 1, fn 0 -> F1 2/3; macro (1/2 + 2/3) / 2 = 7/12
    s = score_classification(reference=["a", "a", "b", "a"], hypothesis=["a", None, "b", "b"], labels=["a", "b"])
    assert s.accuracy == 0.5 and abs(s.macro_f1 - 7 / 12) < 1e-12 and s.invalid == 1
    assert s.macro_f1_ci[0] <= s.macro_f1 <= s.macro_f1_ci[1]
