"""SparsityCV on a dask X for classifiers and the GLM losses: the folds in lockstep equal the NumPy search."""

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold, KFold, PredefinedSplit, ShuffleSplit, StratifiedKFold

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from _dask_problems import CHUNKS, _assert_same_fit, _data, _glm_targets, _Guard, _hash_cv  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor, IOBSClassifier, IOBSRegressor  # noqa: E402
from sparse_estimators.model_selection import SparsityCV  # noqa: E402

P = 60  # (columns: X's bytes bound what one computation may return in the guard; 3 folds' X W stay well below)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("est, family, search, cv_dask, cv_numpy, weights", [
    (IOBSClassifier(), "logistic", {}, 3, 3, True),
    (IHTClassifier(), "multinomial", {"return_train_score": True}, KFold(3), KFold(3), False),
    (IHTRegressor(loss="poisson"), "poisson", {}, KFold(3, shuffle=True, random_state=2), "hash", True),
    (IHTRegressor(loss="gamma"), "gamma", {"return_train_score": True}, "predefined", "predefined", False),
    (IHTRegressor(loss="huber"), "huber", {"scoring": "r2"}, 3, 3, True),
    (IHTRegressor(loss="huber"), "huber", {"return_train_score": True}, 3, 3, True),
], ids=["logistic_stratified", "multinomial_train_score", "poisson_hash", "gamma_predefined", "huber_r2",
        "huber_own_score"])
def test_sparsity_cv_in_lockstep_equals_numpy_cv(est, family, search, cv_dask, cv_numpy, weights):
    # every fold's path is the estimator's own dask fit on its training rows, the folds advancing in the same
    # passes; the levels scored block by block (accuracy, D^2, R^2; Huber's own D^2 from the gathered predictions):
    # the NumPy search's choice, scores and refit
    X, targets, sw = _glm_targets(p=P)
    y = targets[family]
    sw = sw if weights else None
    if cv_dask == "predefined":  # (rows labelled -1 are in every training fold, no test fold)
        cv_dask = cv_numpy = PredefinedSplit(np.random.RandomState(5).randint(-1, 3, 503))
    if cv_numpy == "hash":  # (the folds of KFold(shuffle=True) on a dask X: a seeded hash of the row index)
        cv_numpy = _hash_cv(cv_dask.n_splits, cv_dask.random_state)
    search = {"k_grid": [2, 3], **search}
    expected = SparsityCV(est, cv=cv_numpy, **search).fit(X, y, sample_weight=sw)
    Xd = da.from_array(X, chunks=(CHUNKS, P))
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = SparsityCV(est, cv=cv_dask, **search).fit(
            Xd, da.from_array(y, chunks=(CHUNKS,)), sample_weight=None if sw is None else da.from_array(sw, CHUNKS))
    # the passes: the guard's computations that read X (not those on the predictors persisted on the workers,
    # nor Huber's targets and weights, computed into memory), shared by the folds
    _assert_same_search(expected, got, guard)
    assert ("mean_train_score" in got.cv_results_) == bool(search.get("return_train_score"))


def _assert_same_search(expected, got, guard, shared=True):
    """The NumPy search's choice, scores and refit; the passes the guard counted, shared by the folds."""
    assert got.k_ == expected.k_ and got.n_splits_ == expected.n_splits_
    _assert_same_fit(expected.best_estimator_, got.best_estimator_)
    for key, value in expected.cv_results_.items():
        if key.startswith(("split", "mean_t", "std_t")):
            np.testing.assert_allclose(got.cv_results_[key], value, rtol=0, atol=1e-9)
        elif key in ("rank_test_score", "full_search"):
            np.testing.assert_array_equal(got.cv_results_[key], value)
    assert got.n_passes_ == guard.reads
    lockstep = got.n_passes_ - got.best_estimator_.n_passes_
    alone = got._n_passes_alone
    assert max(alone) <= lockstep <= (0.6 if shared else 1.0) * sum(alone)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("est, wide, search, cv, weights, targets", [
    (IHTRegressor(), True, {}, 3, True, 1),
    (IHTRegressor(precompute=False), False, {"scoring": "neg_mean_squared_error", "return_train_score": True},
     KFold(4), False, 1),
    (IOBSRegressor(groups=np.arange(P) // 2), True, {"scoring": "neg_root_mean_squared_error"}, 3, True, 1),
    (IHTRegressor(fit_intercept=False), True, {"return_train_score": True}, "predefined", True, 2),
], ids=["wide_auto", "precompute_false_mse_train", "iobs_groups_rmse", "two_targets_predefined"])
def test_wide_least_squares_cv_in_lockstep_equals_numpy_cv(monkeypatch, est, wide, search, cv, weights, targets):
    # least squares above DASK_GRAM_MAX_FEATURES (here 10 of 60) or with precompute=False reads X at every
    # iteration: its folds run in lockstep as the GLM losses' (before: a ValueError asking for precompute=True)
    from sparse_estimators import _policy

    if wide:
        monkeypatch.setattr(_policy, "DASK_GRAM_MAX_FEATURES", 10)
    X, y, sw, Xd, yd, swd = _data(weights=weights, p=P, targets=targets)
    if cv == "predefined":  # (rows labelled -1 are in every training fold, no test fold)
        cv = PredefinedSplit(np.random.RandomState(5).randint(-1, 3, 503))
    search = {"k_grid": [2, 3, 4], "cv": cv, **search}
    expected = SparsityCV(est, **search).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = SparsityCV(est, **search).fit(Xd, yd, sample_weight=swd)
    _assert_same_search(expected, got, guard)
    assert got.best_estimator_.n_passes_ > 2  # (read at every iteration, not from one Gram pass)
    assert ("mean_train_score" in got.cv_results_) == bool(search.get("return_train_score"))


def _groups():
    return np.random.RandomState(3).randint(0, 9, 503)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("est, family, cv, groups", [
    (IHTRegressor(), "least_squares", GroupKFold(3), "dask"),
    (IHTRegressor(), "least_squares", ShuffleSplit(3, test_size=0.25, random_state=0), None),
    (IHTRegressor(precompute=False), "least_squares", "iterable", None),
    (IHTClassifier(), "logistic", StratifiedKFold(3, shuffle=True, random_state=1), None),
    (IOBSClassifier(), "logistic", GroupKFold(3), "numpy"),
    (IHTRegressor(loss="poisson"), "poisson", ShuffleSplit(3, train_size=0.6, test_size=0.3, random_state=4), None),
], ids=["gram_group_kfold", "gram_shuffle_split", "wide_iterable", "stratified_shuffled", "classifier_group_kfold",
        "poisson_shuffle_split"])
def test_dask_cv_takes_scikit_learn_splitters(est, family, cv, groups):
    # any splitter scikit-learn's search takes: its splits computed as on NumPy data (from n, the targets and the
    # groups in memory), each fold a lazy view of its rows, the folds in lockstep (before: a ValueError for all
    # but int, KFold, PredefinedSplit and StratifiedKFold); least squares with Gram statistics by fold, one pass
    X, targets, sw = _glm_targets(p=P)
    y = X[:, :3] @ [1.0, -2.0, 0.5] + targets["huber"] if family == "least_squares" else targets[family]
    if cv == "iterable":  # (overlapping test sets, rows in no split)
        rng = np.random.RandomState(2)
        cv = [(np.sort(rng.choice(503, 300, replace=False)), rng.choice(503, 150, replace=False)) for _ in range(3)]
    params = {} if groups is None else {"groups": _groups()}
    expected = SparsityCV(est, k_grid=[2, 3], cv=cv).fit(X, y, sample_weight=sw, **params)
    Xd = da.from_array(X, chunks=(CHUNKS, P))
    if groups == "dask":
        params = {"groups": da.from_array(params["groups"], chunks=(CHUNKS,))}
    guard = _Guard(Xd)
    with dask.config.set(scheduler=guard):
        got = SparsityCV(est, k_grid=[2, 3], cv=cv).fit(Xd, da.from_array(y, chunks=(CHUNKS,)),
                                                        sample_weight=da.from_array(sw, chunks=(CHUNKS,)), **params)
    _assert_same_search(expected, got, guard, shared=family != "least_squares")
    if family == "least_squares" and est.precompute == "auto":  # (the folds' Gram pass, their scores, the refit's)
        assert got.n_passes_ <= 4 and got.best_estimator_.n_passes_ == 1


def test_dask_cv_refuses_splits_that_repeat_rows():
    X, y, _, Xd, yd, _ = _data()
    bootstrap = [(np.random.RandomState(0).randint(0, 503, 503), np.arange(50))]
    with pytest.raises(ValueError, match="training rows of split 0 of cv repeat some rows"):
        SparsityCV(IHTRegressor(), k_grid=[2], cv=bootstrap).fit(Xd, yd)
    with pytest.raises(ValueError, match="The test set of split 0 of cv holds no rows"):
        SparsityCV(IHTRegressor(), k_grid=[2], cv=[(np.arange(503), np.array([], dtype=int))]).fit(Xd, yd)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_sparsity_cv_in_lockstep_on_a_local_cluster():
    # the batches of the folds' graphs run on a distributed client's get as on the local schedulers
    distributed = pytest.importorskip("distributed")
    X, targets, sw = _glm_targets()
    y = targets["logistic"]
    search = SparsityCV(IHTClassifier(), k_grid=[3], cv=3)
    expected = search.fit(X, y, sample_weight=sw)
    expected = {"k": expected.k_, "scores": expected.cv_results_["mean_test_score"], "best": expected.best_estimator_}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") \
            as cluster, distributed.Client(cluster):
        got = SparsityCV(IHTClassifier(), k_grid=[3], cv=3).fit(
            da.from_array(X, chunks=(CHUNKS, 20)), da.from_array(y, chunks=(CHUNKS,)),
            sample_weight=da.from_array(sw, chunks=(CHUNKS,)))
    assert got.k_ == expected["k"]
    np.testing.assert_allclose(got.cv_results_["mean_test_score"], expected["scores"], rtol=0, atol=1e-9)
    _assert_same_fit(expected["best"], got.best_estimator_)
    assert max(got._n_passes_alone) <= got.n_passes_ - got.best_estimator_.n_passes_ < sum(got._n_passes_alone)


def test_lockstep_reads_each_block_once_per_round_and_isolates_failures():
    # two fits' computations in the same round are one scheduler call, in which each block of a generated X is
    # made once (not once per fit: no fusion of X's tasks into each fit's); a failing graph fails its fit alone
    from dask.local import get_sync

    from sparse_estimators.model_selection._lockstep import run_in_lockstep

    made, calls = [], []

    def block(block_id=None):
        made.append(block_id[0])
        return np.full((3, 2), float(block_id[0]))

    def counting(dsk, keys, **kwargs):
        calls.append(keys)
        return get_sync(dsk, keys, **kwargs)

    X = da.map_blocks(block, chunks=((3, 3, 3), (2,)), dtype=float, meta=np.empty((0, 0)))

    def fit(scale, rounds):
        return lambda: [float((X[:, :1] * scale + r).sum().compute()) for r in range(rounds)]

    def failing():
        def divide(b):
            return b * (1 // int(b[0, 0] - 2))  # (ZeroDivisionError on block 2)

        try:
            return float(X.map_blocks(divide, dtype=float, meta=np.empty((0, 0))).sum().compute())
        except ZeroDivisionError as error:
            return error

    with dask.config.set(scheduler=counting):
        results, scheduler = run_in_lockstep([fit(1.0, 3), fit(2.0, 2)], [X])
    assert results == [[9.0, 18.0, 27.0], [18.0, 27.0]]
    assert scheduler.n_passes == len(calls) == 3 and sorted(made) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    with dask.config.set(scheduler=counting):
        results, _ = run_in_lockstep([fit(1.0, 1), failing], [X])
    assert results[0] == [9.0] and isinstance(results[1], ZeroDivisionError)


def test_lockstep_runs_computations_without_X_first_so_fits_out_of_step_share_passes():
    # a fit that computes something without X (a persisted residual, a target's sum) before its next pass does
    # not make the others read X alone: the requests without X run first, and X is read when every fit asks for
    # it (before: one fit's pass and the other's computation without X shared a round, 3 passes for 2 each)
    from sparse_estimators.model_selection._lockstep import run_in_lockstep

    made = []

    def block(block_id=None):
        made.append(block_id[0])
        return np.full((3, 2), float(block_id[0]))

    X = da.map_blocks(block, chunks=((3, 3, 3), (2,)), dtype=float, meta=np.empty((0, 0)))

    def fit(steps):
        # (unoptimised graphs, as the fits' designs compute: X's blocks keep their keys)
        return lambda: [float(dask.compute(X.sum() if step == "X" else da.ones(4).sum(), optimize_graph=False)[0])
                        for step in steps]

    with dask.config.set(scheduler="synchronous"):
        results, scheduler = run_in_lockstep([fit(["X", "local", "X"]), fit(["local", "X", "X"])], [X], X.name)
    assert results == [[18.0, 4.0, 18.0], [4.0, 18.0, 18.0]]
    assert scheduler.n_passes == 2 and sorted(made) == [0, 0, 1, 1, 2, 2]
