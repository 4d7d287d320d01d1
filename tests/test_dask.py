"""Dask input: fits from one pass over the chunks equal the NumPy fits; X is never gathered in the client."""


import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, PredefinedSplit

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from _dask_problems import (  # noqa: E402
    CHUNKS,
    _assert_same_fit,
    _data,
    _Guard,
    _hash_cv,
)

from sparse_estimators import (  # noqa: E402
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSRegressor,
    RegularizedIHTRegressor,
)
from sparse_estimators.model_selection import SparsityCV, SparsityIC, sparsity_path  # noqa: E402


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("cls", [IHTRegressor, AcceleratedIHTRegressor, RegularizedIHTRegressor, IOBSRegressor])
@pytest.mark.parametrize("params", [{"k": 3}, {"k": None}, {"k": 3, "positive": True},
                                   {"k": 3, "fit_intercept": False}, {"k": 2, "groups": np.arange(20) // 2},
                                   {"k": 3, "always_select": [0]}],
                         ids=["k3", "auto_k", "positive", "no_intercept", "groups", "always_select"])
@pytest.mark.parametrize("weights", [False, True], ids=["unweighted", "weighted"])
def test_one_pass_fit_equals_numpy_fit(cls, params, weights):
    X, y, sw, Xd, yd, swd = _data(weights=weights)
    expected = cls(**params).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = cls(**params).fit(Xd, yd, sample_weight=swd)
    _assert_same_fit(expected, got)
    assert got.n_passes_ == 1 and guard.calls == 1
    assert got.n_features_in_ == 20
    assert not hasattr(expected, "n_passes_")


def test_multi_target_and_numpy_targets():
    X, Y, _, Xd, Yd, _ = _data(targets=2)
    expected = IHTRegressor(k=3).fit(X, Y)
    with dask.config.set(scheduler=_Guard(Xd)):
        got = IHTRegressor(k=3).fit(Xd, Yd)
        got_np_y = IHTRegressor(k=3).fit(Xd, Y)  # (y in memory: chunked like X's rows)
    _assert_same_fit(expected, got)
    _assert_same_fit(expected, got_np_y)


def test_large_means_and_constant_column():
    # columns whose mean is 1e4 times their spread, and a constant column: blocks centred at their own means
    X, y, _, _, _, _ = _data()
    X = X * 1e-3 + 10.0
    X[:, 5] = 7.0
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    yd = da.from_array(y, chunks=(CHUNKS,))
    expected = IHTRegressor(k=3).fit(X, y)
    with dask.config.set(scheduler=_Guard(Xd)):
        got = IHTRegressor(k=3).fit(Xd, yd)
    _assert_same_fit(expected, got)
    assert 5 not in got.support_


def test_extreme_scale_is_rescaled_as_numpy():
    X, y, _, _, _, _ = _data()
    X, y = X * 1e-30, y * 1e30
    Xd, yd = da.from_array(X, chunks=(CHUNKS, 20)), da.from_array(y, chunks=(CHUNKS,))
    expected = IHTRegressor(k=3).fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        got = IHTRegressor(k=3).fit(Xd, yd)
    _assert_same_fit(expected, got)


def test_path_and_ic_from_one_pass():
    X, y, _, Xd, yd, _ = _data()
    expected = sparsity_path(IHTRegressor(), X, y, k_grid=[1, 2, 3, 4, 5])
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = sparsity_path(IHTRegressor(), Xd, yd, k_grid=[1, 2, 3, 4, 5])
    assert guard.calls == 1
    assert [s.tolist() for s in got.supports] == [s.tolist() for s in expected.supports]
    np.testing.assert_allclose(got.coefs, expected.coefs, rtol=0, atol=1e-8 * np.abs(expected.coefs).max())

    ic = SparsityIC(IHTRegressor()).fit(X, y)
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        ic_dask = SparsityIC(IHTRegressor()).fit(Xd, yd)
    assert guard.calls == 1 and ic_dask.n_passes_ == 1
    assert ic_dask.k_ == ic.k_ == 3
    # the criteria differ by the rounding of RSS from the Gram statistics (1e-16 of ||y||^2 / RSS)
    np.testing.assert_allclose(ic_dask.criterion_, ic.criterion_, rtol=1e-9)
    _assert_same_fit(ic.best_estimator_, ic_dask.best_estimator_)


def test_predictions_are_lazy():
    X, y, _, Xd, yd, _ = _data()
    with dask.config.set(scheduler="synchronous"):
        est = IHTRegressor(k=3).fit(Xd, yd)
        guard = _Guard(Xd)
        with dask.config.set(scheduler=guard):
            pred = est.predict(Xd)
            assert isinstance(pred, da.Array) and guard.calls == 0  # (nothing computed yet)
            assert pred.chunks == (CHUNKS,)
            np.testing.assert_allclose(pred.compute(), est.predict(X), rtol=1e-12)
            score = est.score(Xd, yd)
        assert guard.calls == 2  # (the predictions, then the score's one pass)
        assert score == pytest.approx(est.score(X, y), rel=1e-10)
        # column-chunked X for prediction: rechunked lazily
        wide = da.from_array(X, chunks=(CHUNKS, 7))
        np.testing.assert_allclose(est.predict(wide).compute(), est.predict(X), rtol=1e-12)


def test_classifier_predictions_are_lazy():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((300, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + 0.3 * rng.standard_normal((300, 3)), axis=1)]
    clf = IHTClassifier(k=3).fit(X, y)
    Xd = da.from_array(X, chunks=((100, 50, 150), 6))
    yd = da.from_array(y, chunks=((100, 50, 150),))
    with dask.config.set(scheduler="synchronous"):
        for method in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
            lazy = getattr(clf, method)(Xd)
            assert isinstance(lazy, da.Array), method
            np.testing.assert_array_equal(lazy.compute(), getattr(clf, method)(X))
        assert clf.score(Xd, yd) == pytest.approx(clf.score(X, y), rel=1e-12)


def test_dask_dataframe_through_to_dask_array():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _, _, _, _ = _data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(20)])
    ddf = dd.from_pandas(frame, npartitions=4)
    ys = dd.from_pandas(pd.Series(y), npartitions=4)
    with dask.config.set(scheduler="synchronous"):
        got = IHTRegressor(k=3).fit(ddf, ys)
        pred = got.predict(ddf)
        assert isinstance(pred, da.Array)
        np.testing.assert_allclose(pred.compute(), got.predict(frame), rtol=1e-12)
    expected = IHTRegressor(k=3).fit(frame, y)
    _assert_same_fit(expected, got)
    np.testing.assert_array_equal(got.feature_names_in_, frame.columns)


def test_input_errors_are_clear():
    X, y, sw, Xd, yd, _ = _data(weights=True)
    with pytest.raises(ValueError, match="chunked by rows only"):
        IHTRegressor(k=3).fit(da.from_array(X, chunks=(CHUNKS, 7)), yd)
    with pytest.raises(ValueError, match="y must be chunked by rows like X"):
        IHTRegressor(k=3).fit(Xd, da.from_array(y, chunks=100))
    with pytest.raises(ValueError, match="sample_weight must be chunked by rows like X"):
        IHTRegressor(k=3).fit(Xd, yd, sample_weight=da.from_array(sw, chunks=100))
    unknown = Xd[da.from_array(y, chunks=(CHUNKS,)) > -np.inf]  # (a boolean mask: NaN chunk sizes)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        IHTRegressor(k=3).fit(unknown, yd)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        IHTRegressor(k=3).fit(Xd, y[:-1])
    bad = X.copy()
    bad[400, 3] = np.nan
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="Input X contains NaN"):
        IHTRegressor(k=3).fit(da.from_array(bad, chunks=(CHUNKS, 20)), yd)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="Negative values"):
        IHTRegressor(k=3).fit(Xd, yd, sample_weight=da.from_array(-sw, chunks=(CHUNKS,)))
    est = IHTRegressor(k=3).fit(X, y)
    with pytest.raises(ValueError, match="X has 19 features"):
        est.predict(Xd[:, :19])


@pytest.mark.parametrize("params", [{"k": 3}, {"k": None}, {"k": 3, "positive": True},
                                    {"k": 3, "fit_intercept": False}, {"k": 3, "precompute": False}],
                         ids=["k3", "auto_k", "positive", "no_intercept", "precompute_false"])
@pytest.mark.parametrize("cls", [IHTRegressor, IOBSRegressor])
def test_wide_dask_X_is_read_at_every_iteration(monkeypatch, cls, params):
    # above DASK_GRAM_MAX_FEATURES (here 10 of 20 features) least squares reads X at every iteration, as the GLM
    # losses do, instead of refusing to fit (before: a ValueError pointing at precompute=True)
    from sparse_estimators import _policy

    monkeypatch.setattr(_policy, "DASK_GRAM_MAX_FEATURES", 10)
    X, y, sw, Xd, yd, swd = _data(weights=True, p=60)  # (refits copy a few columns into memory)
    expected = cls(**params).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = cls(**params).fit(Xd, yd, sample_weight=swd)
    _assert_same_fit(expected, got)
    assert got.n_passes_ == guard.reads > 2


def test_wide_dask_X_with_precompute_true_takes_one_pass(monkeypatch):
    from sparse_estimators import _policy

    monkeypatch.setattr(_policy, "DASK_GRAM_MAX_FEATURES", 10)
    X, y, _, Xd, yd, _ = _data()
    with dask.config.set(scheduler="synchronous"):
        got = IHTRegressor(k=3, precompute=True).fit(Xd, yd)
    _assert_same_fit(IHTRegressor(k=3).fit(X, y), got)
    assert got.n_passes_ == 1


def test_float32_dask_input_keeps_float32_coefficients():
    # as on NumPy data, float32 X gives float32 coef_ and intercept_ (the classifiers gave float64 on dask before);
    # the statistics are float64 on both, the dask blocks' products too: the fit is the float64 fit, rounded
    X, y, _, _, _, _ = _data()
    X32 = X.astype(np.float32)
    X32d = da.from_array(X32, chunks=(CHUNKS, 20))
    yd = da.from_array(y, chunks=(CHUNKS,))
    labels = y > np.median(y)
    with dask.config.set(scheduler="synchronous"):
        cases = [(IHTRegressor(k=3), y, yd), (IHTClassifier(k=3), labels, da.from_array(labels, chunks=(CHUNKS,))),
                 (SparsityCV(IHTRegressor(), k_grid=[2, 3, 4]), y, yd)]
        for est, target, target_d in cases:
            numpy32 = clone(est).fit(X32, target)
            got = clone(est).fit(X32d, target_d)
            float64 = clone(est).fit(X32.astype(np.float64), target)
            assert numpy32.coef_.dtype == got.coef_.dtype == np.float32
            assert np.asarray(numpy32.intercept_).dtype == np.asarray(got.intercept_).dtype == np.float32
            np.testing.assert_array_equal(np.flatnonzero(got.coef_), np.flatnonzero(numpy32.coef_))
            np.testing.assert_allclose(got.coef_, float64.coef_, rtol=2.4e-7)  # (two float32 roundings at most)
            np.testing.assert_allclose(got.coef_, numpy32.coef_, rtol=1e-4)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("cls, params, search, cv_dask, cv_numpy, weights, targets", [
    (IHTRegressor, {}, {}, 5, 5, False, 1),
    (IHTRegressor, {}, {"return_train_score": True}, KFold(4), KFold(4), True, 1),
    (IHTRegressor, {"fit_intercept": False}, {}, KFold(4, shuffle=True, random_state=3), "hash", False, 1),
    (IHTRegressor, {"positive": True}, {"scoring": "neg_mean_squared_error"}, 3, 3, True, 1),
    (IOBSRegressor, {"groups": np.arange(20) // 2}, {"k_grid": [1, 2, 3]}, 4, 4, False, 1),
    (AcceleratedIHTRegressor, {"always_select": [0]}, {"scoring": "neg_root_mean_squared_error"}, 5, 5, True, 1),
    (IHTRegressor, {}, {"return_train_score": True}, "predefined", "predefined", True, 2),
], ids=["kfold", "weighted_train_score", "hash_no_intercept", "positive_mse", "groups", "always_select_rmse",
        "predefined_two_targets"])
def test_sparsity_cv_from_one_pass_equals_numpy_cv(cls, params, search, cv_dask, cv_numpy, weights, targets):
    # the folds' Gram statistics from one pass, the train losses merged from the other folds' and the validation
    # scores from the fold's own: the same choice, scores and refit as the NumPy search on the same folds
    X, y, sw, Xd, yd, swd = _data(weights=weights, targets=targets)
    if cv_dask == "predefined":  # (rows labelled -1 are in every training fold, no test fold)
        labels = np.random.RandomState(5).randint(-1, 3, 503)
        cv_dask = cv_numpy = PredefinedSplit(labels)
    if cv_numpy == "hash":  # (the folds of KFold(shuffle=True) on a dask X: a seeded hash of the row index)
        cv_numpy = _hash_cv(cv_dask.n_splits, cv_dask.random_state)
    search = {"k_grid": range(1, 8), **search}
    expected = SparsityCV(cls(**params), cv=cv_numpy, **search).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = SparsityCV(cls(**params), cv=cv_dask, **search).fit(Xd, yd, sample_weight=swd)
    assert guard.calls == 1 and got.n_passes_ == 1 and got.best_estimator_.n_passes_ == 1
    assert got.k_ == expected.k_ and got.n_splits_ == expected.n_splits_
    _assert_same_fit(expected.best_estimator_, got.best_estimator_)
    for key, value in expected.cv_results_.items():
        if key.startswith(("split", "mean_t", "std_t")):  # (scores: quadratic forms against residuals)
            np.testing.assert_allclose(got.cv_results_[key], value, rtol=0, atol=1e-9 * max(1, np.abs(value).max()))
        elif key in ("rank_test_score", "full_search"):
            np.testing.assert_array_equal(got.cv_results_[key], value)
    assert ("mean_train_score" in got.cv_results_) == bool(search.get("return_train_score"))


def test_sparsity_cv_folds_do_not_depend_on_the_chunks():
    # the folds come from the rows' indices, not from the blocks: other chunks, the same search
    X, y, _, Xd, yd, _ = _data()
    searches = []
    for chunks in (CHUNKS, (250, 253), (503,)):
        Xc, yc = da.from_array(X, chunks=(chunks, 20)), da.from_array(y, chunks=(chunks,))
        with dask.config.set(scheduler="synchronous"):
            searches.append(SparsityCV(IHTRegressor(), k_grid=range(1, 8), cv=KFold(5, shuffle=True,
                                                                                      random_state=0)).fit(Xc, yc))
    for other in searches[1:]:
        assert other.k_ == searches[0].k_
        np.testing.assert_allclose(other.cv_results_["mean_test_score"], searches[0].cv_results_["mean_test_score"],
                                   rtol=1e-12)
    from sparse_estimators.model_selection._dask_cv import hash_folds

    sizes = np.bincount(hash_folds(100_000, 5, 0), minlength=5)
    assert np.all(np.abs(sizes - 20_000) < 600)  # (about 4.2 standard deviations of a binomial count)
    assert not np.array_equal(hash_folds(50, 5, 0), hash_folds(50, 5, 1))


def test_sparsity_cv_on_dask_scores_nan_where_the_metric_is_undefined():
    # a test fold of zero weight has no R^2 (NaN on NumPy data, so every mean score is NaN); a one-row fold has no
    # R^2 but a mean squared error (the dask search gave 1.0 for the former)
    X, y, sw, Xd, yd, _ = _data(weights=True)
    sw[:101] = 0.0  # (the first of 5 contiguous folds)
    for data, weights in (((X, y), sw), ((Xd, yd), da.from_array(sw, chunks=(CHUNKS,)))):
        with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="Every cross-validated score"):
            SparsityCV(IHTRegressor(), k_grid=[2, 3]).fit(*data, sample_weight=weights)
    labels = np.repeat([0, 1, 2], [200, 200, 103])
    labels[300] = 3  # (a one-row test fold)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="Every cross-validated score"):
        SparsityCV(IHTRegressor(), k_grid=[2, 3], cv=PredefinedSplit(labels)).fit(Xd, yd)
    search = SparsityCV(IHTRegressor(), k_grid=[2, 3], cv=PredefinedSplit(labels), scoring="neg_mean_squared_error")
    expected = clone(search).fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        got = clone(search).fit(Xd, yd)
    assert got.k_ == expected.k_
    np.testing.assert_allclose(got.cv_results_["split3_test_score"], expected.cv_results_["split3_test_score"],
                               rtol=1e-9)


def test_sparsity_cv_on_dask_refuses_what_one_pass_cannot_do(monkeypatch):
    X, y, _, Xd, yd, _ = _data()
    # (classifiers and the GLM losses are searched with their folds in lockstep: tests/test_dask_cv_glm.py)
    with pytest.raises(ValueError, match="scoring must be None or 'accuracy', got 'roc_auc'"):
        SparsityCV(IHTClassifier(), scoring="roc_auc").fit(Xd, da.from_array(y > 4, chunks=(CHUNKS,)))
    with pytest.raises(ValueError, match=r"own score \(D\^2 \(power 1\)\): scoring must be None, got 'r2'"):
        SparsityCV(IHTRegressor(loss="poisson"), scoring="r2").fit(Xd, yd)
    with pytest.raises(ValueError, match="scoring must be one of"):
        SparsityCV(IHTRegressor(), scoring="explained_variance").fit(Xd, yd)
    with pytest.raises(ValueError, match="PredefinedSplit has 10 labels"):
        SparsityCV(IHTRegressor(), cv=PredefinedSplit(np.arange(10) % 2)).fit(Xd, yd)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match=r"test folds \[2\] hold no rows"):
        SparsityCV(IHTRegressor(), k_grid=[1], cv=KFold(3, shuffle=True, random_state=0)).fit(Xd[:3], yd[:3])
    from sparse_estimators import _policy

    # (above the Gram path's limit least squares is searched in lockstep: tests/test_dask_cv_glm.py)
    monkeypatch.setattr(_policy, "DASK_GRAM_MAX_FEATURES", 10)
    with dask.config.set(scheduler="synchronous"):
        got = SparsityCV(IHTRegressor(precompute=True), k_grid=range(1, 6)).fit(Xd, yd)
    assert got.k_ == SparsityCV(IHTRegressor(), k_grid=range(1, 6)).fit(X, y).k_


def test_distributed_local_cluster():
    distributed = pytest.importorskip("distributed")
    X, y, sw, Xd, yd, swd = _data(weights=True)
    expected = IHTRegressor(k=None).fit(X, y, sample_weight=sw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") \
            as cluster, distributed.Client(cluster):
        got = IHTRegressor(k=None).fit(Xd, yd, sample_weight=swd)
        pred = got.predict(Xd).compute()
        search = SparsityCV(IHTRegressor(), k_grid=range(1, 6)).fit(Xd, yd, sample_weight=swd)
        # (the classifier's labels, weights and predictors persisted on the workers between the passes)
        labels = y > np.median(y)
        clf = IHTClassifier(k=3).fit(Xd, da.from_array(labels, chunks=(CHUNKS,)), sample_weight=swd)
    _assert_same_fit(IHTClassifier(k=3).fit(X, labels, sample_weight=sw), clf)
    assert search.n_passes_ == 1
    assert search.k_ == SparsityCV(IHTRegressor(), k_grid=range(1, 6)).fit(X, y, sample_weight=sw).k_
    _assert_same_fit(expected, got)
    assert got.n_passes_ == 1
    np.testing.assert_allclose(pred, expected.predict(X), rtol=1e-10)


def test_positive_refit_where_nnls_reaches_its_iteration_limit(monkeypatch):
    """scipy's ``nnls`` raising at its iteration limit: the one-pass positive fit takes BVLS's solution, as in memory.

    (scipy's reimplemented ``nnls`` raised out of in-memory fits on badly scaled columns; the dask loss solves
    its own NNLS from the Gram matrix.) Reference: scikit-learn's non-negative least squares on the support.
    """
    import scipy.optimize
    from sklearn.linear_model import LinearRegression

    X, y, sw, Xd, yd, swd = _data(weights=True)
    support = np.flatnonzero(IHTRegressor(k=3, positive=True).fit(X, y, sample_weight=sw).coef_)
    reference = LinearRegression(positive=True).fit(X[:, support], y, sample_weight=sw)

    def limit(*args, **kwargs):
        raise RuntimeError("Maximum number of iterations reached.")

    monkeypatch.setattr(scipy.optimize, "nnls", limit)
    with dask.config.set(scheduler="sync"):
        got = IHTRegressor(k=3, positive=True).fit(Xd, yd, sample_weight=swd)
    np.testing.assert_array_equal(np.flatnonzero(got.coef_), support)
    np.testing.assert_allclose(got.coef_[support], reference.coef_, rtol=1e-6)
    np.testing.assert_allclose(got.intercept_, reference.intercept_, rtol=1e-6)
