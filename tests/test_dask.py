"""Dask input: fits from one pass over the chunks equal the NumPy fits; X is never gathered in the client."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, PredefinedSplit

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dask.core import flatten  # noqa: E402
from dask.local import get_sync  # noqa: E402

from sparse_estimators import (  # noqa: E402
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)
from sparse_estimators.model_selection import SparsityCV, SparsityIC, sparsity_path  # noqa: E402

CHUNKS = (100, 57, 200, 146)  # uneven row blocks of 503 rows


class _Guard:
    """A synchronous scheduler that counts its calls and fails when asked for ``X`` as a whole.

    It refuses any computation whose requested keys are blocks of ``X`` (as
    ``np.asarray(X)`` or ``X.compute()`` ask) and any whose results total
    more than half of ``X``'s bytes (``X`` gathered under another name).
    ``reads`` counts the computations whose graph holds ``X``'s blocks (the
    passes over ``X``). With ``optimise=True`` it builds the graph under
    dask's default optimisations, not the client's ``dask.config``, as a
    ``distributed`` scheduler does. With ``vectors=False`` it also refuses any result
    with more rows than a block of ``X`` (a vector of ``n`` rows gathered in
    the client: targets, weights, linear predictors; blocks persisted on the
    workers are returned block by block).
    """

    def __init__(self, X, vectors=True, optimise=False):
        self.name, self.limit, self.calls, self.reads = X.name, X.nbytes / 2, 0, 0
        self.rows = None if vectors else max(X.chunks[0])
        self.optimise = optimise

    def __call__(self, dsk, keys, **kwargs):
        for key in flatten(keys):
            name = key[0] if isinstance(key, tuple) else key
            assert name != self.name, "X was computed as a whole in the client"
        self.calls += 1
        if self.optimise and not isinstance(dsk, dict):  # (as a distributed scheduler: its own configuration)
            with dask.config.set({"optimization.fuse.active": True}):
                dsk = dsk.__dask_graph__()
        graph = dsk if isinstance(dsk, dict) else dsk.__dask_graph__()
        self.reads += any((key[0] if isinstance(key, tuple) else key) == self.name for key in graph.keys())
        result = get_sync(dsk, keys, **kwargs)
        arrays = list(flatten(result, container=(list, tuple)))
        size = sum(getattr(r, "nbytes", 0) for r in arrays)
        assert size <= self.limit, f"a computation returned {size} bytes (X has {2 * self.limit:g})"
        if self.rows is not None:
            tall = [np.shape(r) for r in arrays if np.ndim(r) and np.shape(r)[0] > self.rows]
            assert not tall, f"a computation returned arrays of shapes {tall} to the client (blocks of X: " \
                             f"at most {self.rows} rows)"
        return result


def _data(n=503, p=20, seed=0, weights=False, targets=1):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + 3.0
    coef = np.zeros((p, targets))
    coef[[1, 4, 9]] = rng.uniform(1.5, 3.0, (3, targets)) * np.array([[1], [-1], [1]])
    y = X @ coef + 0.5 * rng.standard_normal((n, targets)) + 1.0
    y = y[:, 0] if targets == 1 else y
    sw = rng.uniform(0.5, 2.0, n) if weights else None
    Xd = da.from_array(X, chunks=(CHUNKS, p))
    yd = da.from_array(y, chunks=(CHUNKS,) + y.shape[1:])
    swd = None if sw is None else da.from_array(sw, chunks=(CHUNKS,))
    return X, y, sw, Xd, yd, swd


def _assert_same_fit(a, b):
    np.testing.assert_array_equal(a.support_, b.support_)
    scale = np.abs(a.coef_).max()
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-8, atol=1e-8 * scale)


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
    from sparse_estimators.linear_model import _dask

    monkeypatch.setattr(_dask, "DASK_GRAM_MAX_FEATURES", 10)
    X, y, sw, Xd, yd, swd = _data(weights=True, p=60)  # (refits copy a few columns into memory)
    expected = cls(**params).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = cls(**params).fit(Xd, yd, sample_weight=swd)
    _assert_same_fit(expected, got)
    assert got.n_passes_ == guard.reads > 2


def test_wide_dask_X_with_precompute_true_takes_one_pass(monkeypatch):
    from sparse_estimators.linear_model import _dask

    monkeypatch.setattr(_dask, "DASK_GRAM_MAX_FEATURES", 10)
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


def _hash_cv(n_splits, seed):
    from sparse_estimators.model_selection._dask_cv import hash_folds

    return PredefinedSplit(hash_folds(503, n_splits, seed))


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
    from sparse_estimators.linear_model import _dask

    # (above the Gram path's limit least squares is searched in lockstep: tests/test_dask_cv_glm.py)
    monkeypatch.setattr(_dask, "DASK_GRAM_MAX_FEATURES", 10)
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


def _glm_targets(seed=0, n=503, p=20):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + 3.0
    coef = np.zeros(p)
    coef[[1, 4, 9]] = [1.0, -1.5, 0.8]
    eta = (X - 3.0) @ coef
    targets = {
        "logistic": np.array(["no", "yes"])[(rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)],
        "multinomial": np.argmax(np.column_stack([eta, -eta, 0.5 * eta]) + rng.gumbel(size=(n, 3)), axis=1),
        "poisson": rng.poisson(np.exp(0.3 * eta)).astype(float),
        "gamma": rng.gamma(2.0, np.exp(0.3 * eta) / 2.0),
        "huber": eta + rng.standard_t(2, n),
    }
    return X, targets, rng.uniform(0.5, 2.0, n)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("cls, family, params", [
    (IHTClassifier, "logistic", {"k": 3}), (IOBSClassifier, "logistic", {"k": 3}),
    (RegularizedIHTClassifier, "logistic", {"k": 3}), (IHTClassifier, "logistic", {"k": None}),
    (IHTClassifier, "logistic", {"k": 2, "groups": np.arange(20) // 2}),
    (IHTClassifier, "logistic", {"k": 3, "always_select": [0], "class_weight": "balanced"}),
    (IHTClassifier, "multinomial", {"k": 3}), (IOBSClassifier, "multinomial", {"k": 2}),
], ids=["iht", "iobs", "regularized", "auto_k", "groups", "always_select", "multinomial", "iobs_multinomial"])
def test_classifier_on_dask_equals_numpy_fit(cls, family, params):
    X, targets, sw = _glm_targets()
    y = targets[family]
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    expected = cls(**params).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd, vectors=False)  # (labels, weights and linear predictors stay in their blocks: issue 35)
    with dask.config.set(scheduler=guard):
        got = cls(**params).fit(Xd, da.from_array(y, chunks=(CHUNKS,)),
                                sample_weight=da.from_array(sw, chunks=(CHUNKS,)))
    _assert_same_fit(expected, got)
    np.testing.assert_array_equal(got.classes_, expected.classes_)
    assert got.n_passes_ == guard.reads


@pytest.mark.parametrize("loss", ["poisson", "gamma", "huber"])
@pytest.mark.parametrize("k", [3, None])
def test_glm_regressor_on_dask_equals_numpy_fit(loss, k):
    X, targets, sw = _glm_targets()
    y = targets[loss]
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    expected = IHTRegressor(k=k, loss=loss).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd, vectors=loss == "huber")  # (Huber's scale is a weighted median of the n residuals)
    with dask.config.set(scheduler=guard):
        got = IHTRegressor(k=k, loss=loss).fit(Xd, da.from_array(y, chunks=(CHUNKS,)), sample_weight=sw)
    _assert_same_fit(expected, got)
    assert got.n_passes_ == guard.reads


def test_y_computed_from_X_reads_each_block_once():
    # y built from X (as in a generated data set): the pass reads each block of X once, not once for X and once
    # for y (optimising X's and y's graphs apart fused X's tasks into y's, and every block was generated twice)
    generated = []

    def block(block_id=None):
        generated.append(block_id[0])
        return np.random.default_rng(block_id[0]).standard_normal((50, 6))

    X = da.map_blocks(block, chunks=((50,) * 4, (6,)), dtype=float, meta=np.empty((0, 0)))
    y = X @ np.array([1.0, 0, 0, -2.0, 0, 0]) + 0.1 * da.ones(200, chunks=50)
    with dask.config.set(scheduler="synchronous"):
        est = IHTRegressor(k=2).fit(X, y)
    assert sorted(generated) == [0, 1, 2, 3]
    assert est.n_passes_ == 1
    np.testing.assert_array_equal(est.support_, [0, 3])


def test_passes_count_the_reads_of_X_under_a_scheduler_that_optimises(monkeypatch):
    # a distributed scheduler optimises a computation's graph itself, under its own configuration: a point's X W
    # (persisted, an array) and its sums (a Delayed) were optimised apart, X W's graph took the block's task into
    # its own, and every block was read and its kernel run twice per point (on a LocalCluster the second read,
    # still running when the sums were in, served the next pass: n_passes_ 34 for 32.6 passes' reads at 10^6 rows)
    from sparse_estimators.losses import _dask_kernel

    X, targets, _ = _glm_targets(n=800)
    generated, kernels = [], []

    def block(block_id=None):
        generated.append(block_id[0])
        return X[100 * block_id[0]:100 * (block_id[0] + 1)]

    def kernel(*args, _f=_dask_kernel._point_block, **kwargs):
        kernels.append(1)
        return _f(*args, **kwargs)

    monkeypatch.setattr(_dask_kernel, "_point_block", kernel)
    Xd = da.map_blocks(block, chunks=((100,) * 8, (20,)), dtype=float, meta=np.empty((0, 0)))
    y = targets["logistic"]
    expected = IHTClassifier(k=3).fit(X, y)
    guard = _Guard(Xd, vectors=False, optimise=True)
    with dask.config.set(scheduler=guard):
        got = IHTClassifier(k=3).fit(Xd, da.from_array(y, chunks=100))
    _assert_same_fit(expected, got)
    assert len(generated) == 8 * got.n_passes_
    assert np.array_equal(np.bincount(generated), np.full(8, got.n_passes_))
    assert 0 < len(kernels) < 8 * got.n_passes_ and len(kernels) % 8 == 0


def test_newton_step_products_share_passes():
    # a Newton step on dask data asks for X W at the point it has just evaluated, and for X^T w with the
    # weights of its weighted Gram matrix (the intercept's column): each cost one more pass over X (a logistic
    # IHTClassifier(k=10) fit took 159 passes, 106 with both served from the pass that computed them)
    from sparse_estimators.losses._dask_design import DaskLinearDesign
    from sparse_estimators.losses._design import LinearDesign

    X, _, sw = _glm_targets()
    offset = X.mean(axis=0)
    constant = np.zeros(20, dtype=bool)
    constant[7] = True
    design = DaskLinearDesign(da.from_array(X, chunks=(CHUNKS, 20)), offset, constant)
    reference = LinearDesign(X, offset, constant)
    W = np.zeros((20, 1))
    W[[1, 4, 9], 0] = [1.0, -1.5, 0.8]
    guard = _Guard(design.dask)
    with dask.config.set(scheduler=guard):
        Z = design.matvec(W)
        Z[:] = 0.0  # (the caller's copy: the next answer is unchanged)
        np.testing.assert_allclose(design.matvec(W.copy()), reference.matvec(W), rtol=1e-12)
        assert design.n_passes == guard.calls == 1
        G = design.weighted_gram(sw)
        cross = design.rmatvec(sw[:, None].copy())
        assert design.n_passes == guard.calls == 2
        np.testing.assert_allclose(G, reference.weighted_gram(sw), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(cross, reference.rmatvec(sw[:, None]), rtol=1e-12, atol=1e-9)
        assert cross[7, 0] == 0.0
        # other points and other vectors: a pass each
        W[2, 0] = 0.5
        np.testing.assert_allclose(design.matvec(W), reference.matvec(W), rtol=1e-12)
        np.testing.assert_allclose(design.rmatvec(2 * sw[:, None]), reference.rmatvec(2 * sw[:, None]),
                                   rtol=1e-12, atol=1e-9)
        assert design.n_passes == guard.calls == 4


def test_classifier_labels_from_a_dataframe_and_class_weight_dict():
    # string labels of a dask Series and a class_weight dict: encoded and weighted block by block (issue 35)
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + 0.3 * rng.standard_normal((300, 3)), axis=1)]
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    weights = {"a": 2.0, "b": 1.0, "c": 0.5}
    Xd = dd.from_pandas(frame, npartitions=3)
    X_blocks = da.from_array(X, chunks=(100, 6))
    guard = _Guard(X_blocks, vectors=False)
    guard.limit = np.inf  # (X is 14 kB: the statistics of 3 classes weigh more than half of it)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (dask converts the string dtype to object)
        got = IHTClassifier(k=3, class_weight=weights).fit(Xd, dd.from_pandas(pd.Series(y), npartitions=3))
    with dask.config.set(scheduler=guard):
        got_arrays = IHTClassifier(k=3, class_weight=weights).fit(X_blocks, da.from_array(y, chunks=100))
    expected = IHTClassifier(k=3, class_weight=weights).fit(frame, y)
    _assert_same_fit(expected, got)
    _assert_same_fit(expected, got_arrays)
    np.testing.assert_array_equal(got.classes_, ["a", "b", "c"])


@pytest.mark.parametrize("family", ["logistic", "multinomial"])
def test_point_evaluated_in_one_pass(family):
    # a point's linear predictor, loss value and gradient (and, on a refit's columns, its Hessian) come from one
    # computation reading X once: X W had been persisted by one pass, its value computed by another computation
    # and the gradient and Hessian read X once more each (3 passes and 4 computations per Newton step of a refit)
    X, targets, sw = _glm_targets()
    y = targets[family]
    est = IHTClassifier(k=3)
    expected_loss, _ = est._setup(X, y, sw)
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    guard = _Guard(Xd, vectors=False)
    with dask.config.set(scheduler=guard):
        loss, _ = est._setup(Xd, da.from_array(y, chunks=(CHUNKS,)), da.from_array(sw, chunks=(CHUNKS,)))
    support, W, b, sub, expected_sub = _point_on_support(loss, expected_loss)
    with dask.config.set(scheduler=guard):
        for lo, ref, V in [(loss, expected_loss, W), (sub, expected_sub, W[support])]:
            calls, reads, passes = guard.calls, guard.reads, lo.design.n_passes
            f, gW, gb = lo.value_and_gradient(V, b)
            assert (guard.reads - reads, lo.design.n_passes - passes) == (1, 1)
            if lo is sub:  # (the Hessian came in the same pass)
                np.testing.assert_allclose(lo.hessian(V, b), ref.hessian(V, b), rtol=1e-10, atol=1e-12)
            # the predictor at that point and its value: no computation
            assert lo.value_from_z(lo.linear_predictor(V, b), V) == f
            assert guard.calls - calls <= 2 and guard.reads - reads == 1
            f_ref, gW_ref, gb_ref = ref.value_and_gradient(V, b)
            np.testing.assert_allclose(f, f_ref, rtol=1e-12)
            np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-12)
        if family == "logistic":
            # a refit's result is the last point its Newton steps evaluated: its X W and value are kept (no pass)
            W_r, b_r = loss.refit(support, W, b)
            reads = guard.reads
            f_r = loss.value_from_z(loss.linear_predictor(W_r, b_r), W_r)
            assert guard.reads == reads
            np.testing.assert_allclose(f_r, expected_loss.value(W_r, b_r), rtol=1e-12)


def _point_on_support(loss, expected_loss):
    """A point on the support (1, 4, 9) of the 20 features, and both losses restricted to that support."""
    m = loss.n_outputs
    support = np.array([1, 4, 9])
    W = np.zeros((20, m))
    W[support] = np.linspace(-0.3, 0.4, 3 * m).reshape(3, m)
    b = np.linspace(0.1, -0.2, m)
    return support, W, b, loss.restrict(support), expected_loss.restrict(support)


class _Graphs:
    """A synchronous scheduler that keeps the graph (as a dict of tasks) of each computation."""

    def __init__(self):
        self.graphs = []

    def __call__(self, dsk, keys, **kwargs):
        from dask.utils import ensure_dict

        self.graphs.append(ensure_dict(dsk if isinstance(dsk, dict) else dsk.__dask_graph__()))
        return get_sync(dsk, keys, **kwargs)


@pytest.mark.parametrize("family", ["logistic", "multinomial"])
def test_point_pass_is_one_task_per_block(family):
    # a point's pass is one task per block of X (its product, loss, gradient and support Hessian, in tiles of the
    # block), one picking the block's X W out and a tree summing the small results: built from dask array
    # operations it had been about 20 tasks per block (30 with the Hessian), each charged the scheduler's overhead
    X, targets, sw = _glm_targets(n=1600)
    y = targets[family]
    expected_loss, _ = IHTClassifier(k=3)._setup(X, y, sw)
    chunks = 100  # (16 blocks)
    with dask.config.set(scheduler="sync"):
        loss, _ = IHTClassifier(k=3)._setup(da.from_array(X, chunks=(chunks, 20)), da.from_array(y, chunks=chunks),
                                            da.from_array(sw, chunks=chunks))
    n_blocks = X.shape[0] // chunks
    inputs = set()
    for array in (loss.design.dask, loss.Y, loss.sample_weight):
        inputs |= set(array.__dask_graph__())
    support, W, b, sub, expected_sub = _point_on_support(loss, expected_loss)
    for lo, ref, V, evaluate in [(loss, expected_loss, W, "value_and_gradient"),
                                 (loss, expected_loss, 0.5 * W, "trial"),
                                 (sub, expected_sub, W[support], "value_and_gradient")]:
        graphs = _Graphs()
        with dask.config.set(scheduler=graphs):
            passes = lo.design.n_passes
            if evaluate == "trial":  # (a trial step's point: its gradient comes in its pass, asked for next)
                Z = lo.linear_predictor(V, b)
                f, (gW, gb) = lo.value_from_z(Z, V), lo.gradient_from_z(Z, V)
            else:
                f, gW, gb = lo.value_and_gradient(V, b)
            assert lo.design.n_passes - passes == 1
        tasks = [key for graph in graphs.graphs for key in graph if key not in inputs]
        # one per block, one picking its X W out, the sum tree (fewer than a task per block)
        assert len(tasks) < 3 * n_blocks, (evaluate, len(tasks))
        f_ref, gW_ref, gb_ref = ref.value_and_gradient(V, b)
        np.testing.assert_allclose(f, f_ref, rtol=1e-12)
        np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-12)
        if lo is sub:  # (the Hessian came in the same pass)
            np.testing.assert_allclose(lo.hessian(V, b), ref.hessian(V, b), rtol=1e-10, atol=1e-12)
    # a refit's result: the whole loss's value and gradient there come from the refit's last pass (no pass)
    with dask.config.set(scheduler="sync"):
        W_r, b_r = loss.refit(support, W, b)
        passes = loss.design.n_passes
        Z = loss.linear_predictor(W_r, b_r)
        f, (gW, gb) = loss.value_from_z(Z, W_r), loss.gradient_from_z(Z, W_r)
        assert loss.design.n_passes == passes
    f_ref, gW_ref, gb_ref = expected_loss.value_and_gradient(W_r, b_r)
    np.testing.assert_allclose(f, f_ref, rtol=1e-12)
    np.testing.assert_allclose(gW, gW_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-9, atol=1e-12)


def _readers(graphs, X):
    """The tasks of the computations ``graphs`` that take a block of ``X`` as input (its direct readers)."""
    from dask._task_spec import convert_legacy_graph

    blocks = set(X.__dask_keys__()[i][0] for i in range(X.numblocks[0]))
    readers = []
    for graph in graphs:
        for key, task in convert_legacy_graph(graph).items():
            if blocks & set(task.dependencies):
                readers.append(key)
    return readers


@pytest.mark.parametrize("family", ["logistic", "multinomial", "poisson", "gamma"])
def test_set_up_pass_is_one_task_per_block_and_gives_the_curvatures_and_first_gradient(family):
    # the set-up's pass reads each block of X in one task (finite values, extremes, weighted sums, the centred
    # columns' second moments and X^T (s Y)); the coordinate curvatures and the gradient at W = 0 come from it
    # (no pass, nor any computation): each had been a pass of its own, and the set-up read X in 4 tasks per block
    X, targets, sw = _glm_targets(n=1600)
    y = targets[family]
    est = IHTClassifier(k=3) if family in ("logistic", "multinomial") else IHTRegressor(k=3, loss=family)
    expected_loss, _ = est._setup(X, y, sw)
    Xd = da.from_array(X, chunks=(100, 20))  # (16 blocks)
    graphs = _Graphs()
    with dask.config.set(scheduler=graphs):
        loss, _ = est._setup(Xd, da.from_array(y, chunks=100), da.from_array(sw, chunks=100))
    assert loss.design.n_passes == 1
    assert len(_readers(graphs.graphs, Xd)) == Xd.numblocks[0], len(_readers(graphs.graphs, Xd))
    guard = _Guard(Xd, vectors=False)
    with dask.config.set(scheduler=guard):
        curvatures = loss.coordinate_curvatures()
        W = np.zeros((20, loss.n_outputs))
        b = loss.initial_intercept()
        f, gW, gb = loss.value_and_gradient(W, b)
        W_sub = np.zeros((3, loss.n_outputs))
        sub = loss.restrict([1, 4, 9])
        sub_gW, sub_gb = sub.gradient_from_z(sub.linear_predictor(W_sub, b), W_sub)
    # (nothing computed: the value at W = 0 from the weighted label sums, as the gradient)
    assert guard.calls == 0 and loss.design.n_passes == 1
    np.testing.assert_allclose(curvatures, expected_loss.coordinate_curvatures(), rtol=1e-10)
    f_ref, gW_ref, gb_ref = expected_loss.value_and_gradient(W, b)
    np.testing.assert_allclose(f, f_ref, rtol=1e-12)
    np.testing.assert_allclose(gW, gW_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sub_gW, gW_ref[[1, 4, 9]], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sub_gb, gb_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("family", ["logistic", "multinomial"])
def test_hessian_and_gram_products_are_one_task_per_block(family):
    # a Hessian-vector product (IOBS's curvature steps) and a product with the weighted Gram matrix (the Lanczos
    # iterations of lipschitz()) are one pass each, one task per block of X computing X V in its tiles (and a
    # tree summing the small results): built from dask array operations they had been about 20 tasks per block
    X, targets, sw = _glm_targets(n=1600)
    y = targets[family]
    expected_loss, _ = IHTClassifier(k=3)._setup(X, y, sw)
    with dask.config.set(scheduler="sync"):
        loss, _ = IHTClassifier(k=3)._setup(da.from_array(X, chunks=(100, 20)), da.from_array(y, chunks=100),
                                            da.from_array(sw, chunks=100))
    n_blocks = 16
    support, W, b, _, _ = _point_on_support(loss, expected_loss)
    rng = np.random.RandomState(1)
    V, c, v = rng.standard_normal(W.shape), rng.standard_normal(W.shape[1]), rng.standard_normal(21)
    V[[0, 5]] = 0.0  # (the product reads the non-zero rows of V)
    with dask.config.set(scheduler="sync"):
        Z = loss.linear_predictor(W, b)  # (the point's predictor, persisted: its pass not counted below)
    inputs = set()
    for array in (loss.design.dask, loss.Y, loss.sample_weight, Z):
        inputs |= set(array.__dask_graph__())
    for name, product, reference in [
        ("hessp", lambda: loss.hessp(W, b, V, c), expected_loss.hessp(W, b, V, c)),
        ("gram", lambda: (loss._gram_apply(v),), (expected_loss._gram_apply(v),)),
    ]:
        graphs = _Graphs()
        passes = loss.design.n_passes
        with dask.config.set(scheduler=graphs):
            got = product()
        assert loss.design.n_passes - passes == 1 and len(graphs.graphs) == 1
        tasks = [key for key in graphs.graphs[0] if key not in inputs]
        assert len(tasks) < 2 * n_blocks, (name, len(tasks))
        for a, r in zip(got, reference, strict=True):
            np.testing.assert_allclose(a, r, rtol=1e-10, atol=1e-12)
