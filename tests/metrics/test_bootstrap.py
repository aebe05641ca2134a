"""The one bootstrap: seeded draws, whole clusters in or out together, the percentile interval."""

import numpy as np
import pytest

from halluscope.metrics.bootstrap import percentile_ci, ratio_ci, resample_weights, resampled_sums


def test_item_resamples_are_the_seeded_integer_draws():
    w = resample_weights(7, rounds=20, seed=4)
    draws = np.random.default_rng(4).integers(0, 7, (20, 7))
    assert w.shape == (20, 7) and (w.sum(axis=1) == 7).all()
    for row, d in zip(w, draws):
        assert list(row) == list(np.bincount(d, minlength=7))
    assert (resample_weights(7, rounds=20, seed=4) == w).all()
    assert not (resample_weights(7, rounds=20, seed=5) == w).all()


def test_cluster_resamples_take_an_articles_items_together():
    clusters = ["b", "a", "a", "c", "b", "b", "d"]  # sizes a 2, b 3, c 1, d 1
    w = resample_weights(len(clusters), rounds=200, seed=0, clusters=clusters)
    for row in w:
        for name in set(clusters):
            counts = {int(row[i]) for i, c in enumerate(clusters) if c == name}
            assert len(counts) == 1  # every item of the article drawn the same number of times (0: all out)
        per_cluster = {c: int(row[clusters.index(c)]) for c in set(clusters)}
        assert sum(per_cluster.values()) == 4  # four clusters drawn, with replacement
    # the draws are those of integers(0, 4, (rounds, 4)) over the sorted cluster names a, b, c, d
    d = np.random.default_rng(0).integers(0, 4, (200, 4))
    assert list(w[0][[1, 0, 3, 6]]) == list(np.bincount(d[0], minlength=4))
    assert set(np.unique(w[:, 1] == w[:, 2])) == {True}


def test_percentile_ci_is_numpys_2_5_and_97_5_percentiles():
    v = np.random.default_rng(1).normal(size=1001)
    assert percentile_ci(v) == (np.percentile(v, 2.5), np.percentile(v, 97.5))
    assert percentile_ci(v, 0.9) == (np.percentile(v, 5), np.percentile(v, 95))


def test_ratio_ci_with_clusters_sums_within_clusters():
    # each cluster's items summed first: the same as resampling the per-cluster totals
    num, den = [1, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]
    clusters = ["x", "x", "y", "y", "z", "z"]
    got = ratio_ci(numerator=num, denominator=den, clusters=clusters, bootstrap=300, seed=2)
    totals = ratio_ci(numerator=[1, 2, 0], denominator=[2, 2, 2], bootstrap=300, seed=2)
    assert got == pytest.approx(totals)
    assert ratio_ci(numerator=num, denominator=den, clusters=["x"] * 6) is None


@pytest.mark.parametrize("clusters", [None, "articles"])
@pytest.mark.parametrize("whole", [True, False])
def test_fast_paths_give_the_count_matrix_figures_exactly(clusters, whole):
    # ratio_ci and resampled_sums skip the (rounds, items) count matrix for whole numbers; the figures must be
    # bit-for-bit those of the matrix product over the same draws (fractions take the matrix path)
    rng = np.random.default_rng(7)
    n = 240
    cols = rng.integers(0, 3, (n, 3)).astype(float) + (0.0 if whole else 0.1)
    names = [f"a{i % 70}" for i in rng.permutation(n)] if clusters else None
    w = resample_weights(n, rounds=400, seed=5, clusters=names)
    assert np.array_equal(resampled_sums(cols, rounds=400, seed=5, clusters=names), w @ cols)
    num, den = cols[:, 0], cols[:, 1] + 1
    if names is None:
        nums, dens = w @ num, w @ den
        assert ratio_ci(numerator=num, denominator=den, bootstrap=400, seed=5) == percentile_ci(nums / dens)
