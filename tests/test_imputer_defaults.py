"""LowRankImputer with its defaults in ordinary use, and its parity with scikit-learn's imputers (issue 31, item 3).

References: ``SimpleImputer``'s scores, output shapes, feature names and
in-place behaviour on the same input; tracemalloc for memory.
"""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_diabetes, load_linnerud, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import _policy
from sparse_estimators.impute import LowRankImputer, complete_matrix


def _hide(X, share, seed):
    X = np.array(X, dtype=float)
    mask = np.random.default_rng(seed).uniform(size=X.shape) < share
    X[mask] = np.nan
    return X, mask


def _low_rank(m, n, r, seed, noise=0.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) + noise * rng.standard_normal((m, n))


def _pipeline_scores(name, seed, **params):
    """5-fold scores of LowRankImputer(**params) and SimpleImputer() in a pipeline, 20 % of X hidden
    (compare_imputers.py)."""
    if name in ("diabetes", "linnerud"):
        X, y = load_diabetes(return_X_y=True) if name == "diabetes" else load_linnerud(return_X_y=True)
        y = y if y.ndim == 1 else y[:, 0]
        model, cv = RidgeCV(), KFold(5, shuffle=True, random_state=0)
    else:
        X, y = (load_wine if name == "wine" else load_breast_cancer)(return_X_y=True)
        model, cv = LogisticRegression(max_iter=5000), StratifiedKFold(5, shuffle=True, random_state=0)
    X_missing = _hide(X, 0.2, seed)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning in ordinary use
        low_rank = cross_val_score(make_pipeline(LowRankImputer(**params), StandardScaler(), model), X_missing, y,
                                   cv=cv)
    simple = cross_val_score(make_pipeline(SimpleImputer(), StandardScaler(), model), X_missing, y, cv=cv)
    return low_rank.mean(), simple.mean()


@pytest.mark.parametrize("name", ["diabetes", "wine", "breast_cancer"])
def test_default_pipeline_is_not_worse_than_simple_imputer_and_does_not_warn(name):
    """diabetes: R² -1.9 (rank=10, least-squares transform) against SimpleImputer's 0.43 before.

    breast_cancer: the final fit at the chosen hard rank (4 to 7) did not
    converge in 300 iterations at ``tol=1e-5`` (a ConvergenceWarning in
    every seed of compare_imputers.py) before the defaults ``tol=1e-3``,
    ``max_iter=1000``.
    """
    low_rank, simple = _pipeline_scores(name, 0)
    assert low_rank >= simple, (low_rank, simple)


def test_hard_rank_pipeline_on_a_tiny_table_is_not_worse_than_simple_imputer():
    """linnerud (20 x 3): rank 1 forced whenever validable, else a warning: -0.125 R² against SimpleImputer before.

    Rank 0 is a validated candidate, kept unless a rank beats it by more than one standard error, and the
    fallback when too few entries validate any rank, silently. With one split (4 held-out entries of a 16 x 3
    training fold) that choice was a coin flip: over missingness seeds 0 to 8 (seed 9 hides a whole row, which
    warns) the difference of the scores was 0 on 5 seeds, -0.063 at worst, -0.007 in the mean. The held-out errors
    are now pooled over 10 folds covering every observed entry: 0 on 7 seeds, -0.015 at worst, -0.002 in the mean.
    Since rank 1 is validated on a 16 x 3 fold (its 18 free parameters and 3 offsets at most the entries fit on,
    not half of them): 0 on 5 seeds, -0.015 at worst, +0.0002 in the mean.
    """
    scores = np.array([_pipeline_scores("linnerud", seed, solver="accelerated") for seed in range(9)])
    diff = scores[:, 0] - scores[:, 1]
    assert np.sum(np.abs(diff) < 1e-9) >= 5, diff  # (rank 0: SimpleImputer's fill, the same pipeline)
    assert diff.min() >= -0.03 and diff.mean() >= -0.005, diff


def test_default_solver_is_als():
    """The default became solver='als' (a ridge on the factors, chosen with the rank): it was 'accelerated'."""
    imputer = LowRankImputer()
    assert imputer.solver == "als" and imputer.rank == "auto" and imputer.alpha == 0.0
    X_missing = _hide(_low_rank(80, 8, 2, seed=30, noise=0.1) + 3.0, 0.2, 30)[0]
    imputer.fit(X_missing)
    # (the ridge chosen on held-out entries, not the 0 given; the rank cap at least the signal's 2 (5 here: the
    # ridge shrinks the others; this table's 80 x 8 entries identified ranks up to 2 with half of them as margin)
    assert imputer.rank_ >= 2 and imputer.alpha_ > 0
    assert imputer.rank_validation_.alphas is not None


def _hidden_errors(imputer, X, share, seed):
    """Errors of ``imputer.fit_transform`` on the hidden entries, in units of each column's standard deviation."""
    X_missing, mask = _hide(X, share, seed)
    return ((imputer.fit_transform(X_missing) - X) / X.std(axis=0))[mask]


@pytest.mark.parametrize("load", [load_wine, load_diabetes])
def test_default_imputes_a_real_table_better_than_simple_imputer(load):
    """The squared errors of the hidden entries are below SimpleImputer's by more than two standard errors of
    their paired differences (about ten here: RMSE 0.78 against 1.04 on wine, 0.77 against 0.99 on diabetes)."""
    X = load().data
    ours, means = _hidden_errors(LowRankImputer(), X, 0.2, 0), _hidden_errors(SimpleImputer(), X, 0.2, 0)
    diff = means**2 - ours**2
    assert diff.mean() > 2 * diff.std(ddof=1) / np.sqrt(diff.size), (diff.mean(), diff.std(ddof=1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_imputes_a_low_rank_table_near_its_noise(seed):
    """Rank 3 plus noise: the hidden entries' error is closer to the noise's own (the error of the noiseless
    matrix) than to the column means' by a factor of 3 (0.20 to 0.25 of the way in these seeds)."""
    rng = np.random.default_rng(seed)
    signal = rng.standard_normal((150, 3)) @ rng.standard_normal((3, 12)) + 5.0
    X = signal + 0.3 * rng.standard_normal(signal.shape)
    X_missing, mask = _hide(X, 0.3, seed)
    rmse = {}
    for name, fill in [("ours", LowRankImputer().fit_transform(X_missing)),
                       ("means", SimpleImputer().fit_transform(X_missing)), ("noise", signal)]:
        rmse[name] = float(np.sqrt(np.mean((fill - X)[mask] ** 2)))
    assert rmse["ours"] - rmse["noise"] < (rmse["means"] - rmse["noise"]) / 3, rmse


def test_default_pipeline_on_a_tiny_table_imputes_better_than_simple_imputer():
    """linnerud (20 x 3) in the pipeline's 5 folds, missingness seeds 0 to 8 (seed 9 hides a whole row): the test
    folds' hidden entries (96) are imputed with RMSE 1.05 against SimpleImputer's 1.10 (the hard rank: 1.10).

    The downstream R² is not asserted: over seeds 0 to 99 the default is +0.23 above SimpleImputer in the mean
    but below it on 27 seeds (4-row test folds whose R² has heavy tails; doc/changelog.rst).
    """
    X, _ = load_linnerud(return_X_y=True)
    X = X.astype(float)
    errors = {"ours": [], "means": []}
    for seed in range(9):
        X_missing, mask = _hide(X, 0.2, seed)
        for train, test in KFold(5, shuffle=True, random_state=0).split(X_missing):
            for name, imputer in [("ours", LowRankImputer()), ("means", SimpleImputer())]:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # no warning in ordinary use
                    filled = imputer.fit(X_missing[train]).transform(X_missing[test])
                errors[name].append(((filled - X[test]) / X.std(axis=0))[mask[test]])
    rmse = {name: float(np.sqrt(np.mean(np.concatenate(e) ** 2))) for name, e in errors.items()}
    assert rmse["ours"] < rmse["means"], rmse


def test_small_tables_pool_the_held_out_errors_of_several_folds():
    """16 x 3, rank 1 plus noise, 12 % hidden: one split of about 4 held-out entries kept the column means in 12
    (hard rank) and 9 (ALS) of these 20 tables; the errors pooled over 10 folds, in 6 and 2."""
    chosen = {"accelerated": 0, "als": 0}
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X = np.outer(rng.standard_normal(16), [1.0, 0.8, -0.6]) + 0.5 * rng.standard_normal((16, 3)) + [10, 20, 30]
        X[rng.uniform(size=X.shape) < 0.12] = np.nan
        assert (~np.isnan(X)).sum() < _policy.AUTO_FOLDS_BELOW
        for solver in chosen:
            imputer = LowRankImputer(solver=solver).fit(X)
            chosen[solver] += imputer.rank_ == 1
    assert chosen["accelerated"] >= 12 and chosen["als"] >= 16, chosen


def test_rank_zero_is_chosen_on_a_table_without_low_rank_structure():
    """Independent columns: the column means validate best; before, rank='auto' started at rank 1."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((200, 10)) + rng.uniform(-3, 3, 10)
    X_missing, mask = _hide(X, 0.2, 11)
    imputer = LowRankImputer(solver="accelerated").fit(X_missing)  # (the hard rank's grid; ALS: the next test)
    validation = imputer.rank_validation_
    assert imputer.rank_ == 0 and validation.best_rank == 0
    # (every rank the entries validate, up to 7 here: the grid's early stop waits for one that beats the column means)
    assert validation.ranks.tolist() == list(range(8))
    assert validation.mean_errors[0] < validation.mean_errors[1:].min()
    # rank 0 imputes what SimpleImputer does, to the last bit
    np.testing.assert_array_equal(imputer.transform(X_missing), SimpleImputer().fit(X_missing).transform(X_missing))


def test_als_search_chooses_rank_zero_on_a_table_without_low_rank_structure():
    """solver='als': independent columns, the column means validate best. Before, the ALS search had no rank-0
    candidate and chose rank 1 with alpha 10.1 here."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((200, 10)) + rng.uniform(-3, 3, 10)
    X_missing, mask = _hide(X, 0.2, 11)
    imputer = LowRankImputer(solver="als").fit(X_missing)
    validation = imputer.rank_validation_
    assert imputer.rank_ == 0 and imputer.alpha_ == 0 and validation.best_rank == 0
    assert validation.ranks[0] == 0 and validation.alphas[0] == 0 and (validation.ranks[1:] >= 1).all()
    np.testing.assert_array_equal(imputer.transform(X_missing), SimpleImputer().fit(X_missing).transform(X_missing))


def test_als_search_keeps_a_rank_that_beats_the_column_means():
    """The one-standard-error rule does not hide real structure: rank 3 plus noise, 30 % hidden."""
    X_missing, mask = _hide(_low_rank(150, 12, 3, seed=13, noise=0.1) + 5.0, 0.3, 13)
    imputer = LowRankImputer(solver="als").fit(X_missing)
    assert imputer.rank_ >= 3 and imputer.rank_validation_.best_rank == imputer.rank_


def test_default_rank_is_chosen_within_what_the_data_support():
    X_missing = _hide(load_diabetes().data, 0.2, 0)[0]
    imputer = LowRankImputer().fit(X_missing)
    assert imputer.rank == "auto" and 1 <= imputer.rank_ <= 8
    assert imputer.rank_validation_ is not None


def test_fit_then_transform_agrees_with_fit_transform():
    X_missing, mask = _hide(_low_rank(120, 15, 3, seed=1, noise=0.3) + 4.0, 0.3, 1)
    a = LowRankImputer(rank=3).fit_transform(X_missing)
    b = LowRankImputer(rank=3).fit(X_missing).transform(X_missing)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(a[~mask], X_missing[~mask])


def test_batched_and_per_pattern_posteriors_agree(monkeypatch):
    X_missing = _hide(_low_rank(200, 12, 3, seed=2, noise=0.2), 0.3, 2)[0]
    imputer = LowRankImputer(rank=3).fit(X_missing)
    batched = imputer.transform(X_missing)
    monkeypatch.setattr(_policy, "ROW_BLOCK_ENTRIES", 4)  # (below the outer-product table: a system per pattern)
    np.testing.assert_allclose(imputer.transform(X_missing), batched, rtol=1e-10, atol=1e-10)


def test_standardize_makes_the_imputation_independent_of_the_columns_units():
    X = _low_rank(150, 10, 2, seed=3, noise=0.1) + 1.0
    X_missing, mask = _hide(X, 0.25, 3)
    # (within the floor of the scales, a tenth of the median standard deviation)
    units = np.array([1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1e3, 1e3, 0.5, 1e4])
    plain = LowRankImputer(rank=2).fit_transform(X_missing)
    scaled = LowRankImputer(rank=2).fit_transform(X_missing * units)
    np.testing.assert_allclose(scaled / units, plain, rtol=1e-5, atol=1e-6)


def test_add_indicator_matches_simple_imputer():
    X_missing, mask = _hide(_low_rank(60, 6, 2, seed=4) + 2.0, 0.2, 4)
    X_missing[:, 3] = np.abs(X_missing[:, 3]) + 1.0  # (column 3 without missing entries: no indicator column)
    X_missing[:, 3] = np.nan_to_num(X_missing[:, 3], nan=1.0)
    ours = LowRankImputer(rank=2, add_indicator=True).fit(X_missing)
    theirs = SimpleImputer(add_indicator=True).fit(X_missing)
    out, ref = ours.transform(X_missing), theirs.transform(X_missing)
    assert out.shape == ref.shape == (60, 6 + 5)
    np.testing.assert_array_equal(out[:, 6:], ref[:, 6:])
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    np.testing.assert_array_equal(out[:, :6][~np.isnan(X_missing)], X_missing[~np.isnan(X_missing)])


@pytest.mark.parametrize("keep", [False, True])
def test_keep_empty_features_matches_simple_imputer(keep):
    X_missing = _hide(_low_rank(50, 6, 2, seed=5) + 2.0, 0.2, 5)[0]
    X_missing[:, 1] = np.nan
    df = pd.DataFrame(X_missing, columns=[f"f{j}" for j in range(6)])
    with pytest.warns(UserWarning, match="no observed entry"):
        ours = LowRankImputer(rank=2, keep_empty_features=keep).fit(df)
    theirs = SimpleImputer(keep_empty_features=keep).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (SimpleImputer warns in transform when it drops one)
        ref = theirs.transform(df)
    out = ours.transform(df)
    assert out.shape == ref.shape
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    if keep:
        np.testing.assert_array_equal(out[:, 1], ref[:, 1])  # (0, as SimpleImputer's mean strategy)
    # new data with an entry in the empty column: kept as it is, never used for the others
    new = X_missing.copy()
    new[0, 1] = 7.0
    if keep:
        assert ours.transform(new)[0, 1] == 7.0
    np.testing.assert_allclose(np.delete(ours.transform(new), 1, axis=1) if keep else ours.transform(new),
                               np.delete(out, 1, axis=1) if keep else out)


def test_copy_matches_simple_imputer():
    X_missing = _hide(_low_rank(40, 5, 2, seed=6) + 2.0, 0.2, 6)[0]
    for make in (lambda copy: LowRankImputer(rank=2, copy=copy), lambda copy: SimpleImputer(copy=copy)):
        original = X_missing.copy()
        X = X_missing.copy()
        out = make(True).fit(X).transform(X)
        np.testing.assert_array_equal(X, original)
        assert not np.shares_memory(out, X)
        out = make(False).fit(X).transform(X)
        assert np.shares_memory(out, X) and not np.isnan(X).any()
    X = X_missing.copy()
    LowRankImputer(rank=2, copy=False).fit(X)
    np.testing.assert_array_equal(X, X_missing)  # (fit never writes)
    # copy=False with add_indicator: X filled in place, the output a new array of X and the indicator columns
    for make in (lambda: LowRankImputer(rank=2, copy=False, add_indicator=True),
                 lambda: SimpleImputer(copy=False, add_indicator=True)):
        X = X_missing.copy()
        out = make().fit(X).transform(X)
        assert not np.isnan(X).any() and not np.shares_memory(out, X)
        np.testing.assert_array_equal(out[:, :5], X)
        np.testing.assert_array_equal(out[:, 5:], np.isnan(X_missing)[:, np.isnan(X_missing).any(axis=0)])


def test_get_feature_names_out_with_pandas_output():
    X_missing = _hide(_low_rank(40, 4, 2, seed=7) + 2.0, 0.25, 7)[0]
    df = pd.DataFrame(X_missing, columns=["a", "b", "c", "d"])
    imputer = LowRankImputer(rank=2, add_indicator=True).set_output(transform="pandas")
    out = imputer.fit_transform(df)
    reference = SimpleImputer(add_indicator=True).set_output(transform="pandas").fit_transform(df)
    assert list(out.columns) == list(reference.columns)


def test_sparse_input_is_refused_with_a_pointer_to_complete_matrix():
    X = sp.random(20, 10, density=0.3, format="csr", random_state=0)
    with pytest.raises(TypeError, match="complete_matrix"):
        LowRankImputer(rank=2).fit(X)


def test_fit_transform_memory_is_the_output_plus_the_completion():
    """On main, fit_transform formed the dense completion next to the output: peak 2.25x the input."""
    rng = np.random.default_rng(8)
    X = _low_rank(2000, 500, 3, seed=8, noise=0.1)
    X[rng.uniform(size=X.shape) >= 0.02] = np.nan  # (2 % observed, as in issue 31)
    rows, cols = np.nonzero(~np.isnan(X))
    values = X[rows, cols]
    peaks = []
    for run in (lambda: LowRankImputer(rank=3, standardize=False).fit_transform(X),
                lambda: complete_matrix((rows, cols, values), 3, shape=X.shape, center=True)):
        tracemalloc.start()
        try:
            run()
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    # the output, the missing mask (1/8 of it), the observed entries as complete_matrix holds them, and a margin
    # for the observed entries' coordinates (complete_matrix got them from the caller)
    assert peaks[0] < 1.125 * X.nbytes + 2.0 * peaks[1], (peaks[0] / X.nbytes, peaks[1] / X.nbytes)


def test_warnings_point_at_the_users_line():
    X_missing = _hide(_low_rank(40, 5, 2, seed=9) + 2.0, 0.2, 9)[0]
    X_missing[3] = np.nan
    for call in (lambda imp: imp.fit(X_missing), lambda imp: imp.fit_transform(X_missing),
                 lambda imp: make_pipeline(imp, StandardScaler()).fit(X_missing)):
        with pytest.warns(UserWarning, match="no observed entry") as record:
            call(LowRankImputer(rank=2, max_iter=2))  # (a ConvergenceWarning too)
        assert {w.category for w in record} == {UserWarning, ConvergenceWarning}
        assert {w.filename for w in record} == {__file__}
    imputer = LowRankImputer(rank=2).fit(np.delete(X_missing, 3, axis=0))
    with pytest.warns(UserWarning, match="no observed entry") as record:
        imputer.transform(X_missing)  # (through scikit-learn's set_output wrapper)
    assert {w.filename for w in record} == {__file__}


def test_transform_allocates_the_output_once():
    """Dropped empty feature and indicator columns: before, a copy of X, its column subset and np.hstack's result.

    The peak of ``transform`` (tracemalloc, the input excluded) was about 2x the output; it is now the output
    plus blocks of rows (about 1 MB each).
    """
    rng = np.random.default_rng(12)
    X = _low_rank(3000, 400, 3, seed=12, noise=0.1)
    X[rng.uniform(size=X.shape) >= 0.05] = np.nan
    X[:, 7] = np.nan  # (dropped by keep_empty_features=False)
    with pytest.warns(UserWarning, match="no observed entry"):
        imputer = LowRankImputer(rank=3, add_indicator=True).fit(X)
    tracemalloc.start()
    try:
        out = imputer.transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.shape == (3000, 399 + 400)
    np.testing.assert_array_equal(out[:, 399:], np.isnan(X))
    assert peak < 1.5 * out.nbytes, peak / out.nbytes


def test_empty_row_warning_of_a_pipeline_transform_points_at_the_users_line():
    X_missing = _hide(_low_rank(40, 5, 2, seed=13) + 2.0, 0.2, 13)[0]
    pipe = make_pipeline(LowRankImputer(rank=2), StandardScaler()).fit(X_missing)
    new = X_missing[:5].copy()
    new[2] = np.nan
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.transform(new)
    assert [str(w.message).split(":")[0] for w in record] == ["1 row(s) of X have no observed entry"]
    assert record[0].filename == __file__
