"""``LowRankImputer(rank=r)`` with a rank the table does not determine degrades gracefully.

References: the hidden truth of tables of low rank with column offsets, and scikit-learn's ``SimpleImputer``
(the column means). Without a ridge, a given rank above what the observed entries support was fit by exact
least squares: a column with as many observed entries as its loadings and offset interpolates them, and an
ill-conditioned one took huge loadings that its hidden entries amplified.
"""

import warnings

import numpy as np
import pytest
from sklearn.impute import SimpleImputer

from sparse_estimators.impute import LowRankImputer


def _table(m, n, r, share, seed, noise):
    """A rank-``r`` table plus column offsets (and noise), ``share`` of it hidden: the truth, ``X``, the mask."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) + 3.0 * rng.standard_normal(n)
    X = truth + noise * np.sqrt(r) * rng.standard_normal((m, n))
    hidden = rng.uniform(size=(m, n)) < share
    X[hidden] = np.nan
    return truth, X, hidden


def _error(filled, truth, hidden):
    """RMSE over the hidden entries in units of the column spread."""
    return float(np.sqrt(np.mean((filled - truth)[hidden] ** 2) / np.mean(truth.var(axis=0))))


def _errors(X, truth, hidden, rank):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (columns with few entries; the fit's convergence)
        ours = _error(LowRankImputer(rank=rank, keep_empty_features=True).fit_transform(X), truth, hidden)
    means = _error(SimpleImputer(keep_empty_features=True).fit_transform(X), truth, hidden)
    return ours, means


@pytest.mark.parametrize("shape, share, noise, rank", [
    ((10, 500), 0.3, 0.05, 4),  # before: 30 times the column means' error (now 0.16)
    ((10, 500), 0.5, 0.05, 3),  # 65 times (now 0.29)
    ((10, 500), 0.5, 0.0, 4),  # exact: 5.4 times (now 0.56)
    ((500, 10), 0.5, 0.05, 4),  # tall: 1.06 times (now 0.18)
])
def test_a_rank_above_the_tables_is_no_worse_than_the_column_means(shape, share, noise, rank):
    truth, X, hidden = _table(*shape, 2, share, 0, noise)
    ours, means = _errors(X, truth, hidden, rank)
    assert ours < 0.8 * means


def test_the_true_rank_of_a_wide_noisy_table_does_not_amplify():
    # rank 1 given on a rank-1 table: 4.4 column spreads before (the column means: 1.25; now 0.49); columns with
    # 2 observed entries for a loading and an offset interpolate them
    truth, X, hidden = _table(10, 500, 1, 0.5, 1, 0.05)
    ours, means = _errors(X, truth, hidden, 1)
    assert ours < 0.6 * means


def test_the_true_rank_of_a_tall_exact_table_is_still_recovered():
    truth, X, hidden = _table(300, 30, 2, 0.3, 0, 0.0)
    ours, _ = _errors(X, truth, hidden, 2)
    assert ours < 1e-3
