"""SparsityCV on a dask X for classifiers and the GLM losses: the folds in lockstep equal the NumPy search."""

import numpy as np
import pytest
from sklearn.model_selection import KFold, PredefinedSplit

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from test_dask import CHUNKS, _assert_same_fit, _glm_targets, _Guard, _hash_cv  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor, IOBSClassifier  # noqa: E402
from sparse_estimators.model_selection import SparsityCV  # noqa: E402

P = 60  # (columns: X's bytes bound what one computation may return in the guard; 3 folds' X W stay well below)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("est, family, search, cv_dask, cv_numpy, weights", [
    (IOBSClassifier(), "logistic", {}, 3, 3, True),
    (IHTClassifier(), "multinomial", {"return_train_score": True}, KFold(3), KFold(3), False),
    (IHTRegressor(loss="poisson"), "poisson", {}, KFold(3, shuffle=True, random_state=2), "hash", True),
    (IHTRegressor(loss="gamma"), "gamma", {"return_train_score": True}, "predefined", "predefined", False),
    (IHTRegressor(loss="huber"), "huber", {"scoring": "r2"}, 3, 3, True),
], ids=["logistic_stratified", "multinomial_train_score", "poisson_hash", "gamma_predefined", "huber"])
def test_sparsity_cv_in_lockstep_equals_numpy_cv(est, family, search, cv_dask, cv_numpy, weights):
    # every fold's path is the estimator's own dask fit on its training rows, the folds advancing in the same
    # passes; the levels scored block by block (accuracy, D^2, R^2): the NumPy search's choice, scores and refit
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
    assert got.k_ == expected.k_ and got.n_splits_ == expected.n_splits_
    _assert_same_fit(expected.best_estimator_, got.best_estimator_)
    for key, value in expected.cv_results_.items():
        if key.startswith(("split", "mean_t", "std_t")):
            np.testing.assert_allclose(got.cv_results_[key], value, rtol=0, atol=1e-9)
        elif key in ("rank_test_score", "full_search"):
            np.testing.assert_array_equal(got.cv_results_[key], value)
    assert ("mean_train_score" in got.cv_results_) == bool(search.get("return_train_score"))
    # the passes: the guard's computations that read X (not those on the predictors persisted on the workers,
    # nor Huber's targets and weights, computed into memory); the folds' share
    # of them at least the most any fold needs (each pass serves a fold once) and well below their sum
    assert got.n_passes_ == guard.reads
    lockstep = got.n_passes_ - got.best_estimator_.n_passes_
    alone = got._n_passes_alone
    assert max(alone) <= lockstep <= 0.6 * sum(alone)


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
