from halluscope.core.records import Variant
from halluscope.spoken.detect.splits import split_by_article
from halluscope.spoken.detect.tfidf import TfidfDetector


def _samples(n_articles: int, lang: str = "en") -> list[Variant]:
    out = []
    for i in range(n_articles):
        out.append(
            Variant(id=f"{lang}{i}", article_id=f"{lang}{i}", language=lang, text="t", label=0, generator="original")
        )
        for t in ("fabrication", "contradiction"):
            out.append(
                Variant(
                    id=f"{lang}{i}~{t}~mild",
                    article_id=f"{lang}{i}",
                    language=lang,
                    text="t",
                    label=1,
                    type=t,
                    severity="mild",
                    generator="rules",
                )
            )
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
    det = TfidfDetector(seed=0).fit(
        train_x,
        train_y,
        ["calm report x", "shocking claim y"],
        ["original", "hallucinated"],
        ["original", "hallucinated"],
    )
    assert det.chosen_c in det.c_grid
    assert det.predict(["a calm report", "a shocking fabricated claim"]) == ["original", "hallucinated"]
