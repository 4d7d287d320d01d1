"""``LowRankImputer(rank=r)`` with a rank the table does not determine degrades gracefully.

References: the hidden truth of tables of low rank with column offsets, and scikit-learn's ``SimpleImputer``
(the column means). Without a ridge, a given rank above what the observed entries support was fit by exact
least squares: a column with as many observed entries as its loadings and offset interpolates them, and an
ill-conditioned one took huge loadings that its hidden entries amplified.
"""

import warnings

import numpy as np
import pytest
from _benchmarks import load_benchmark
from sklearn.datasets import load_diabetes
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer

from sparse_estimators.impute import LowRankImputer

_table = load_benchmark("wide_imputer").table  # (the benchmark's tables: rank r plus column offsets)


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


@pytest.mark.parametrize("rank", [8, 9])
def test_a_rank_with_no_residual_degrees_of_freedom_keeps_a_noise_level(rank):
    # load_diabetes (10 columns), 20 % hidden, rank 8 or 9: the fit's free parameters exceed the observed entries,
    # it interpolates them, and the noise variance of its residuals collapsed with the posterior's ridge: new rows
    # were filled 14 and 29 column deviations off (the column means: 0.97); now from probabilistic PCA's estimate
    X = load_diabetes(return_X_y=True)[0]
    rng = np.random.default_rng(0)
    X_missing = X.copy()
    hidden = rng.random(X.shape) < 0.2
    X_missing[hidden] = np.nan
    order = rng.permutation(len(X))
    test, train = order[:len(X) // 5], order[len(X) // 5:]

    def error(imputer):
        filled = imputer.fit(X_missing[train]).transform(X_missing[test])
        return float(np.sqrt(np.mean((((filled - X[test]) / X.std(axis=0))[hidden[test]]) ** 2)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = error(LowRankImputer(rank=rank))
    assert ours < error(SimpleImputer())


def test_the_discarded_variance_is_probabilistic_pcas_on_a_complete_table():
    from sparse_estimators.impute._posterior import discarded_variance  # (new: the file still runs on older code)

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3)) @ rng.standard_normal((3, 8)) + 0.3 * rng.standard_normal((60, 8))
    for shape, data in [(X.shape, X), (X.T.shape, X.T)]:  # (the Gram matrix of either side)
        rows, cols = np.nonzero(np.ones_like(data))
        ours = discarded_variance(rows, cols, data[rows, cols], shape, 2)
        reference = PCA(n_components=2).fit(data).noise_variance_ * (shape[0] - 1) / shape[0]  # (ddof 1 -> 0)
        if shape[0] < shape[1]:  # (rows as the samples of the transposed table: its columns' covariance)
            reference = np.sort(np.linalg.svd(data - data.mean(axis=0), compute_uv=False) ** 2)[::-1][2:].sum()
            reference /= shape[0] * (shape[1] - 2)
        assert ours == pytest.approx(reference, rel=1e-10)


def test_the_final_sweeps_converge_within_max_iter(monkeypatch):
    # with the noise ridge the final exact sweeps contract slowly: stopped at a fixed 100 sweeps, this fit raised a
    # ConvergenceWarning (telling the user to raise max_iter, which changed nothing) 147 iterations into its 1000.
    # Accelerated, they take about 35 sweeps: a cap of 10 (the validation fits') would leave them unconverged
    from sklearn.datasets import load_wine
    from sklearn.exceptions import ConvergenceWarning

    from sparse_estimators import _policy

    monkeypatch.setattr(_policy, "ALS_FINISH_SWEEPS", 10)
    X, _ = load_wine(return_X_y=True)
    hidden = np.random.default_rng(0).random(X.shape) < 0.2
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        imputer = LowRankImputer(rank=5).fit(np.where(hidden, np.nan, X))
    assert imputer.n_iter_ < imputer.max_iter
