"""``LowRankImputer(center=False)`` on columns far from zero, and constant columns with ``standardize``.

References: the hidden truth and scikit-learn's ``SimpleImputer`` (the column means); the column scales by
``np.std``. Without offsets the rank-r product carries the columns' offsets: the fit's stopping rule, relative to
the product, stopped 1e3 column deviations from its limit on offsets of 1e6 deviations, and its start (the
zero-filled entries) made the trailing components fit the offsets of the hidden entries: hidden entries were
filled 1e5 to 1e6 column deviations off. A constant column's rounding (1e-17 for a column of 0.1) was taken
for its spread and divided by.
"""

import warnings

import numpy as np
import pytest
from sklearn.impute import SimpleImputer

from sparse_estimators.impute import LowRankImputer


def _offset_table(seed, shape=(12, 8)):
    """Rank 1 plus column offsets of up to 1e6 (about 1e6 column deviations), 30 % hidden, no empty row."""
    rng = np.random.default_rng(seed)
    m, n = shape
    truth = rng.standard_normal((m, 1)) @ rng.standard_normal((1, n)) + rng.uniform(-1e6, 1e6, n)
    hidden = rng.random((m, n)) < 0.3
    hidden[0] = False
    hidden[np.arange(m), rng.integers(0, n, m)] = False
    X = truth.copy()
    X[hidden] = np.nan
    return truth, X, hidden


def _error(filled, truth, X, hidden):
    """RMSE over the hidden entries in units of each column's observed spread."""
    return float(np.sqrt(np.mean(((filled - truth) / np.nanstd(X, axis=0))[hidden] ** 2)))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("rank", [1, 2])
def test_no_centering_large_offsets_near_the_column_means(seed, rank):
    # (ccbff54: 1e5 to 7e6 times the column means' error; now at most 1.1 times, rank 2 (the offsets and the
    # rank-1 part) at most 0.98)
    truth, X, hidden = _offset_table(seed)
    means = _error(SimpleImputer().fit_transform(X), truth, X, hidden)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filled = LowRankImputer(rank=rank, center=False).fit_transform(X)
    assert _error(filled, truth, X, hidden) < 2 * means


def test_no_centering_large_offsets_brief_table():
    # a wide 6 x 13 table: hidden entries were 4.5e5 column deviations off, the column means 6.3
    rng = np.random.default_rng(0)
    truth = rng.standard_normal((6, 1)) @ rng.standard_normal((1, 13)) + rng.uniform(-1e6, 1e6, 13)
    hidden = rng.random((6, 13)) < 0.3
    X = truth.copy()
    X[hidden] = np.nan
    means = _error(SimpleImputer().fit_transform(X), truth, X, hidden)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filled = LowRankImputer(rank=1, center=False).fit_transform(X)
    assert _error(filled, truth, X, hidden) < 2 * means


def _fuzz_table(seed):
    """A small table of rank ``k`` plus column offsets of up to ``10^e``, some entries hidden (none of its rows
    or columns empty), as drawn by the fuzz of the changelog."""
    rng = np.random.default_rng(seed)
    m, n = rng.integers(5, 31), rng.integers(4, 21)
    k, e = rng.integers(1, 4), rng.integers(0, 7)
    truth = rng.standard_normal((m, k)) @ rng.standard_normal((k, n)) + rng.uniform(-10.0**e, 10.0**e, n)
    truth += 0.05 * rng.standard_normal((m, n)) * (seed % 2)
    hidden = rng.random((m, n)) < rng.uniform(0.1, 0.5)
    hidden[0] = False
    hidden[np.arange(m), rng.integers(0, n, m)] = False
    X = truth.copy()
    X[hidden] = np.nan
    return truth, X, hidden


@pytest.mark.parametrize(("seed", "rank", "factor"), [
    (1153, 2, 2),  # 5 x 7, rank 2 and offsets of 1e5: 241 times the column means' error, now 1.03
    (1229, 2, 2),  # 14 x 8, the same: 20 times, now 0.83
    (1005, 2, 10),  # 16 x 5, rank 3 and offsets fit at rank 2 (one rank short): 686 times, now 6.8
    (1075, "auto", 2),  # 500 times, now 1.05
])
def test_no_centering_sweeps_do_not_grow_the_fit(seed, rank, factor):
    # the final exact sweeps with the noise ridge (of the deviations' scale, too weak to hold the product whose
    # top component is the offsets) ran to max_iter and grew a trailing component to 1e5 deviations
    truth, X, hidden = _fuzz_table(seed)
    means = _error(SimpleImputer().fit_transform(X), truth, X, hidden)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filled = LowRankImputer(rank=rank, center=False).fit_transform(X)
    assert _error(filled, truth, X, hidden) < factor * means


def _constant_columns_table():
    """11 x 3, rank 2: two constant columns (1/3 and 0.1: not binary fractions, their computed means are off by a
    rounding, and so their spread), a varying one; 8 entries hidden."""
    rng = np.random.default_rng(102)
    m, n = rng.integers(5, 20), rng.integers(3, 9)
    X = rng.standard_normal((m, 2)) @ rng.standard_normal((2, n)) + rng.uniform(-3, 3, n) * rng.integers(0, 2)
    for c in rng.choice(n, rng.integers(1, 3), replace=False):
        X[:, c] = [0.1, 1 / 3, 0.7, 5.0, 1e3 / 7, 0.0][rng.integers(0, 6)]
    X[rng.random(X.shape) < 0.25] = np.nan
    return X


@pytest.mark.parametrize("rank", [1, "auto"])
@pytest.mark.parametrize("center", [False, True])
def test_constant_columns_are_not_divided_by_their_rounding(center, rank):
    # ccbff54 took the rounding (1e-17) for the constant columns' spread, and the median of the three spreads
    # was one of them: the scales 1e-17, noise_variance_ 1.8e28 (center=False, rank 1)
    X = _constant_columns_table()
    assert np.nanstd(X[:, 0]) < 1e-15 and np.nanstd(X[:, 1]) < 1e-15 and np.nanstd(X[:, 2]) > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = LowRankImputer(rank=rank, center=center).fit(X)
    varying = np.nanstd(X[:, 2])
    # the constant columns take the floor, a tenth of the median spread (that of the one varying column)
    np.testing.assert_allclose(imp.scale_, [0.1 * varying, 0.1 * varying, varying], rtol=1e-12)
    # the standardized entries are at most 10 / 3 / varying (1/3 over the floor) in size: the noise is below it
    assert imp.noise_variance_ < (1 / 3 / (0.1 * varying)) ** 2


@pytest.mark.parametrize("seed", [
    2137,  # 16 x 10, rank 2 and offsets of 1e6: 734 times the column means' error, now 1.3
    1022,  # 27 x 4, the same: 170 times, now 0.80
])
def test_no_centering_auto_ridges_of_the_deviations_scale(seed):
    # rank='auto' without offsets: the ridge path was scaled by the top singular value of the table, the offsets',
    # and its smallest ridge (4.7e3 on 2137) shrank the deviations (of size 1) away; the validation fits stopped
    # at tol of the product, i.e. of the offsets
    truth, X, hidden = _fuzz_table(seed)
    means = _error(SimpleImputer().fit_transform(X), truth, X, hidden)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp = LowRankImputer(rank="auto", center=False).fit(X)
    assert _error(imp.transform(X), truth, X, hidden) < 2 * means
    # the ridge chosen is of the deviations' scale (the column spreads, by np.std, about 1 here), not the offsets'
    assert imp.rank_validation_.best_alpha < 10 * np.mean(np.nanstd(X, axis=0))
