"""``LowRankImputer`` on wide tables (few rows, many columns): exact low-rank tables are recovered.

The reference is the hidden truth of tables of exact low rank with column offsets. Only the *determined* hidden
entries are scored: in a column with at least ``r + 1`` observed entries (its ``r`` loadings and its offset) and a
row with at least ``r`` (its scores); no method recovers the others from the observations.
"""

import warnings

import numpy as np
import pytest

from sparse_estimators.impute import LowRankImputer


def _table(m, n, r, share, seed, noise=0.0):
    """A rank-``r`` table plus column offsets (and noise), ``share`` of it hidden: the noiseless truth and ``X``."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) + 3.0 * rng.standard_normal(n)
    X = truth + noise * rng.standard_normal((m, n))
    X[rng.uniform(size=(m, n)) < share] = np.nan
    return truth, X


def _determined_error(filled, truth, X, r):
    """RMSE of the determined hidden entries in units of the column spread (the column means score about 1)."""
    observed = ~np.isnan(X)
    hidden = ~observed & (observed.sum(axis=0) >= r + 1)[None, :] & (observed.sum(axis=1) >= r)[:, None]
    return float(np.sqrt(np.mean((filled - truth)[hidden] ** 2) / np.mean(truth.var(axis=0))))


@pytest.mark.parametrize("m, n, r, share, seed", [(10, 500, 2, 0.3, 0), (10, 500, 2, 0.3, 1), (10, 500, 1, 0.1, 1)])
def test_default_imputer_recovers_a_wide_exact_low_rank_table(m, n, r, share, seed):
    # 10 rows, so each column has about 7 observed entries for its r loadings and its offset. softImpute-ALS's
    # column step regresses the filled-in column (an EM step): on such columns it contracts slowly, and its
    # stopping rule (a relative change of 1e-3 of the whole product) stopped it with errors of 1e-2 to 6e-2 of
    # the column spread on these exact tables (500 x 10 tables: 3e-4). The final fit without a
    # ridge now converges by exact least-squares sweeps, stopped on the estimated distance to the limit.
    truth, X = _table(m, n, r, share, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a column with too few entries)
        imputer = LowRankImputer()
        filled = imputer.fit_transform(X)
    assert imputer.rank_ == r and imputer.alpha_ == 0.0
    assert _determined_error(filled, truth, X, r) < 5e-3
    # each exact sweep counts as an iteration, and none raises the objective
    assert imputer.loss_curve_.size == imputer.n_iter_ <= imputer.max_iter
    assert np.all(np.diff(imputer.loss_curve_) <= 1e-9 * imputer.loss_curve_[0])


@pytest.mark.parametrize("m, n, r, share", [(10, 500, 2, 0.1), (30, 1000, 2, 0.5)])
def test_fixed_rank_imputer_recovers_a_wide_exact_low_rank_table(m, n, r, share):
    # rank given: 1.4e-2 and 1.2e-2 of the column spread before (softImpute-ALS stopped at tol=1e-3)
    truth, X = _table(m, n, r, share, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filled = LowRankImputer(rank=r).fit_transform(X)
    assert _determined_error(filled, truth, X, r) < 1e-3


def test_wide_and_tall_tables_are_recovered_alike():
    # the control: a tall exact table (the transform's rows are solved exactly, the columns have hundreds of
    # entries) was recovered before as now; the wide one now to the same order
    errors = []
    for m, n in ((10, 500), (500, 10)):
        truth, X = _table(m, n, 2, 0.3, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errors.append(_determined_error(LowRankImputer().fit_transform(X), truth, X, 2))
    assert max(errors) < 5e-3


def test_undetermined_columns_stay_bounded():
    # a column with at most r observed entries cannot be fitted (r loadings and an offset): the exact sweeps
    # leave its undetermined directions where the iteration put them instead of extrapolating
    truth, X = _table(10, 500, 2, 0.5, seed=0)
    observed = ~np.isnan(X)
    few = observed.sum(axis=0) <= 2
    assert few.any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filled = LowRankImputer(rank=2).fit_transform(X)
    assert np.isfinite(filled).all()
    hidden = ~observed & few[None, :]
    spread = truth.std(axis=0)[few]
    error = np.sqrt(np.mean(((filled - truth)[:, few][hidden[:, few]]) ** 2) / np.mean(spread ** 2))
    assert error < 3.0


def test_noisy_wide_table_keeps_its_ridge():
    # a guard (it passes before too): the no-ridge candidate of the rank search is validated converged, as the
    # final fit without a ridge now is; validated stopped early (an implicit shrinkage), it won on this noisy
    # table, and the converged fit imputed with 1.13 column spreads of error, the ridge's 0.25
    truth, X = _table(10, 500, 4, 0.3, seed=2, noise=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imputer = LowRankImputer()
        filled = imputer.fit_transform(X)
    means = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
    assert _determined_error(filled, truth, X, 4) < 0.5 * _determined_error(means, truth, X, 4)


@pytest.mark.parametrize("seed", [14, 230, 267])
def test_sweeps_that_do_not_settle_leave_the_als_fit(seed):
    # a small exact rank-3 table with 60 % hidden and too few entries per parameter: the exact sweeps without a
    # ridge ran to max_iter while the completed matrix grew (hidden entries 42 to 167 column deviations off, the
    # column means 1.2 to 1.5); the fit now keeps the ALS iterate its own rule stopped at, as before the sweeps
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(12, 30)), int(rng.integers(12, 30))
    X = rng.standard_normal((m, 3)) @ rng.standard_normal((3, n)) + rng.standard_normal(n)
    hidden = rng.random((m, n)) < 0.6
    hidden[0] = False
    observed = np.where(hidden, np.nan, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imputer = LowRankImputer()
        filled = imputer.fit_transform(observed)
    spread = np.nanstd(observed, axis=0)
    error = np.sqrt(np.mean(((filled - X) / spread)[hidden] ** 2))
    means = np.sqrt(np.mean(((np.nanmean(observed, axis=0) - X) / spread)[hidden] ** 2))
    assert error < 2 * means  # (the ALS fit: at most 1.2 times the means' error; the sweeps': 33 to 137 times)
    assert imputer.n_iter_ < imputer.max_iter
