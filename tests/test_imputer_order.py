"""LowRankImputer(rank='auto') does not depend on the order of the rows and columns; what an empty row gets.

References: the same table with its rows or columns permuted (a
``ColumnTransformer`` reorders columns, a shuffled ``DataFrame`` rows) must
hold out the same entries, so choose the same rank and impute the same
values; the fitted ``mean_`` is what a row with no observed entry receives.
"""

import warnings

import numpy as np
import pytest

from sparse_estimators.impute import LowRankImputer, choose_rank
from sparse_estimators.impute._rank_choice import holdout_folds, holdout_split


def _table(seed=8, m=60, n=12):
    """A noisy table of four components of decreasing strength: the held-out error of ranks 1 to 3 is close."""
    rng = np.random.default_rng(seed)
    M = (rng.standard_normal((m, 4)) * [3, 2, 1, 0.5]) @ rng.standard_normal((4, n)) + 0.6 * rng.standard_normal((m, n))
    return np.where(rng.uniform(size=M.shape) < 0.2, np.nan, M)


def _entries(X):
    rows, cols = np.nonzero(~np.isnan(X))
    return rows, cols, X[rows, cols]


def _held_out(X, seed, pr=None, pc=None):
    """The held-out (row, column) pairs of ``X``, in the original labels when ``X`` was permuted by ``pr``, ``pc``."""
    rows, cols, values = _entries(X)
    out = holdout_split(rows, cols, values, X.shape, 50, seed)[0]
    r, c = rows[out], cols[out]
    if pr is not None:
        r, c = pr[r], pc[c]
    return set(zip(r.tolist(), c.tolist(), strict=True))


def test_the_held_out_entries_follow_the_rows_and_columns_and_the_units():
    X = _table()
    rng = np.random.default_rng(1)
    pr, pc = rng.permutation(X.shape[0]), rng.permutation(X.shape[1])
    reference = _held_out(X, 7)
    assert len(reference) == 50
    assert _held_out(X[pr][:, pc], 7, pr, pc) == reference
    # increasing maps of a column (units, offsets) keep the ranks within it, hence the split
    units = rng.uniform(0.01, 100.0, X.shape[1])
    assert _held_out(X * units - 3.0 * units, 7) == reference
    # another seed: another draw
    assert len(_held_out(X, 8) & reference) < 25


def test_the_split_is_a_partition_and_spreads_over_rows_and_columns():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 40))
    rows, cols, values = _entries(X)
    out, keep = holdout_split(rows, cols, values, X.shape, 1200, 3)
    np.testing.assert_array_equal(np.sort(np.r_[out, keep]), np.arange(values.size))
    # 10 % of each column's 300 entries (binomial sd 5.2) and of each row's 40 (sd 1.9), not clumped by position
    per_column = np.bincount(cols[out], minlength=40)
    per_row = np.bincount(rows[out], minlength=300)
    assert 10 <= per_column.min() and per_column.max() <= 50
    assert per_row.max() <= 13 and 0.5 < per_row.var() / 3.6 < 2.0


def test_the_folds_partition_the_entries_and_follow_the_rows_and_columns():
    X = _table(m=30, n=5)
    rows, cols, values = _entries(X)
    folds = holdout_folds(rows, cols, values, X.shape, 10, 4)
    outs = [out for out, _ in folds]
    np.testing.assert_array_equal(np.sort(np.concatenate(outs)), np.arange(values.size))
    assert all(np.array_equal(np.sort(np.r_[out, keep]), np.arange(values.size)) for out, keep in folds)
    assert np.ptp([out.size for out in outs]) <= 1
    rng = np.random.default_rng(6)
    pr, pc = rng.permutation(X.shape[0]), rng.permutation(X.shape[1])
    moved_rows, moved_cols, moved_values = _entries(X[pr][:, pc])
    moved = holdout_folds(moved_rows, moved_cols, moved_values, X.shape, 10, 4)
    for (out, _), (moved_out, _) in zip(folds, moved, strict=True):
        assert set(zip(pr[moved_rows[moved_out]].tolist(), pc[moved_cols[moved_out]].tolist(), strict=True)) == \
            set(zip(rows[out].tolist(), cols[out].tolist(), strict=True))


def test_identical_rows_are_held_out_alike():
    X = np.random.default_rng(4).standard_normal((100, 10))
    X[50] = X[10]
    rows, cols, values = _entries(X)
    out = holdout_split(rows, cols, values, X.shape, 100, 0)[0]
    held = np.zeros(X.shape, dtype=bool)
    held[rows[out], cols[out]] = True
    np.testing.assert_array_equal(held[50], held[10])


def test_auto_rank_and_imputation_do_not_depend_on_the_order_of_rows_and_columns():
    """Before: the held-out entries were drawn by position; here rank 3, and rank 1 with the columns permuted."""
    X = _table()
    imputer = LowRankImputer().fit(X)
    out = imputer.transform(X)
    spread = np.nanstd(X, axis=0)
    rng = np.random.default_rng(50)
    pc, pr = rng.permutation(X.shape[1]), rng.permutation(X.shape[0])
    by_columns = LowRankImputer().fit(X[:, pc])
    assert by_columns.rank_ == imputer.rank_
    # (the completions start from random directions drawn per column position: equal to their tolerance)
    np.testing.assert_allclose(by_columns.transform(X[:, pc]) / spread[pc], out[:, pc] / spread[pc], atol=0.02)
    by_rows = LowRankImputer().fit(X[pr])
    assert (by_rows.rank_, by_rows.alpha_) == (imputer.rank_, pytest.approx(imputer.alpha_, rel=1e-8))
    # (the same fits from the same start, their rounding grown by iterations stopped at a relative change of 1e-3:
    # the held-out errors agree to 3e-4 of their value, the imputation to 5e-5 of a column's spread)
    np.testing.assert_allclose(by_rows.rank_validation_.mean_errors, imputer.rank_validation_.mean_errors,
                               rtol=5e-3)
    np.testing.assert_allclose(by_rows.transform(X[pr]) / spread, out[pr] / spread, atol=2e-3)


def test_auto_rank_and_ridge_of_als_do_not_depend_on_the_order_of_the_rows():
    X = _table(m=80)
    imputer = LowRankImputer(solver="als").fit(X)
    pr = np.random.default_rng(51).permutation(X.shape[0])
    by_rows = LowRankImputer(solver="als").fit(X[pr])
    assert (by_rows.rank_, by_rows.alpha_) == (imputer.rank_, pytest.approx(imputer.alpha_, rel=1e-8))
    # (to the validation fits' tolerance: 1.3e-3 of their value at most here, at rank caps 6 to 8)
    np.testing.assert_allclose(by_rows.rank_validation_.mean_errors, imputer.rank_validation_.mean_errors,
                               rtol=5e-3)


def test_choose_rank_does_not_depend_on_the_order_of_rows_and_columns():
    """Before: the held-out entries were a permutation of the positions; with the rows and columns permuted, the
    repeats of this table held out other entries: all nine errors differed, by up to 15 %."""
    rng = np.random.default_rng(3)
    M = rng.standard_normal((90, 3)) @ rng.standard_normal((3, 40)) + 0.3 * rng.standard_normal((90, 40))
    rows, cols = np.nonzero(rng.uniform(size=M.shape) < 0.5)
    pr, pc = rng.permutation(M.shape[0]), rng.permutation(M.shape[1])  # (row i of the permuted table: row pr[i])
    inv_r, inv_c = np.argsort(pr), np.argsort(pc)
    ranks = [1, 2, 3]  # (up to the true rank: each fit has one optimum, whatever the random start)
    ref = choose_rank((rows, cols, M[rows, cols]), ranks, shape=M.shape, n_repeats=3, random_state=5)
    moved = choose_rank((inv_r[rows], inv_c[cols], M[rows, cols]), ranks, shape=M.shape, n_repeats=3,
                        random_state=5)
    assert ref.best_rank == moved.best_rank == 3
    np.testing.assert_allclose(moved.errors, ref.errors, rtol=1e-5)
    # (the repeats hold out different entries)
    assert np.ptp(ref.errors[2]) > 1e-3 * ref.errors[2].mean()


@pytest.mark.parametrize("center", [True, False])
def test_an_empty_row_gets_mean_and_the_warning_says_what_that_is(center):
    """Before: the warning said "the column means"; the fill is the fitted offsets, and zeros without centering."""
    X = _table() + 5.0
    imputer = LowRankImputer(rank=2, center=center).fit(X)
    if center:  # (fitted jointly with the low-rank part: not the observed entries' column means)
        assert np.abs(imputer.mean_ - np.nanmean(X, axis=0)).max() > 1e-3
    else:
        np.testing.assert_array_equal(imputer.mean_, 0.0)
    new = X[:3].copy()
    new[1] = np.nan
    with pytest.warns(UserWarning, match="mean_ \\(the fitted column offsets\\)" if center else "imputed with 0"):
        out = imputer.transform(new)
    np.testing.assert_array_equal(out[1], imputer.mean_)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LowRankImputer(rank=2, center=center).fit(np.r_[X, np.full((1, X.shape[1]), np.nan)])
    assert all("column means" not in str(w.message) for w in caught)
    assert any(("mean_" if center else "imputed with 0") in str(w.message) for w in caught)
