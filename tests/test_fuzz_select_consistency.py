"""Fuzz round 8: model selection agrees with the computations a user writes by hand (or says where it does not)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.model_selection import SparsityCV, SparsityIC
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis


def _problem(kind, seed, n=60, p=8):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    eta = X[:, 0] - 0.8 * X[:, 3]
    if kind == "ls":
        return X, eta + rng.standard_normal(n), IHTRegressor()
    if kind == "huber":
        return X, eta + rng.standard_t(2, n), IHTRegressor(loss="huber")
    if kind == "poisson":
        return X, rng.poisson(np.exp(0.5 * eta)).astype(float), IHTRegressor(loss="poisson")
    if kind == "gamma":
        return X, rng.gamma(2.0, np.exp(0.3 * eta) / 2.0), IHTRegressor(loss="gamma")
    if kind == "logistic":
        return X, (eta + rng.logistic(size=n) > 0).astype(int), IHTClassifier()
    if kind == "multinomial":
        return X, np.digitize(eta + rng.standard_normal(n), [-0.5, 0.5]), IHTClassifier()
    from sksurv.util import Surv

    t, c = rng.exponential(np.exp(-eta)), rng.exponential(2.0, n)
    return X, Surv.from_arrays(t <= c, np.minimum(t, c)), IHTCoxPHSurvivalAnalysis()


KINDS = ["ls", "huber", "poisson", "gamma", "logistic", "multinomial", "cox"]


def test_sparsity_ic_and_k_none_differ_by_the_documented_margin():
    # n=40, p=10, one strong feature and a weak one: the EBIC at k=2 is lower than at k=1 by about 0.6 (< 4)
    rng = np.random.RandomState(7)
    X = rng.standard_normal((40, 10))
    y = 1.2 * X[:, 2] + 0.35 * X[:, 7] + rng.standard_normal(40)
    auto = IHTRegressor().fit(X, y)
    ic = SparsityIC(IHTRegressor(), k_grid=auto.k_path_).fit(X, y)
    np.testing.assert_allclose(ic.criterion_, auto.criterion_path_, rtol=1e-9)  # the same fits here
    minimum = ic.criterion_.min()
    assert ic.k_ == ic.k_grid_[np.argmin(ic.criterion_)]
    assert auto.k_ == ic.k_grid_[np.flatnonzero(ic.criterion_ <= minimum + 4.0)[0]]
    assert auto.k_ < ic.k_  # (the case the docstring warns of)
    assert "Not the estimators' k=None" in SparsityIC.__doc__ and "within 4" in SparsityIC.__doc__


@pytest.mark.parametrize("kind", KINDS)
def test_weighted_cv_scores_equal_a_hand_written_loop_at_full_support(kind):
    # at k = n_features every fit has one support, whatever its start: the scores must be the folds' fits' scores
    X, y, est = _problem(kind, 3, p=4)
    sw = np.random.RandomState(0).randint(1, 4, X.shape[0]).astype(float)
    search = SparsityCV(est, k_grid=[4], cv=KFold(3)).fit(X, y, sample_weight=sw)
    hand = [clone(est).set_params(k=4).fit(X[tr], y[tr], sample_weight=sw[tr])
            .score(X[te], y[te], sample_weight=sw[te]) for tr, te in KFold(3).split(X)]
    unweighted = [clone(est).set_params(k=4).fit(X[tr], y[tr], sample_weight=sw[tr]).score(X[te], y[te])
                  for tr, te in KFold(3).split(X)]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"][0], np.mean(hand), rtol=1e-6, atol=1e-9)
    assert abs(np.mean(hand) - np.mean(unweighted)) > 1e-6  # (the weights do change the score)
    grid = GridSearchCV(est, {"k": [4]}, cv=KFold(3)).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"],
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kind", ["ls", "logistic", "cox"])
def test_cv_results_format_best_estimator_and_n_jobs(kind):
    X, y, est = _problem(kind, 1)
    grid = [1, 2, 3, 4]
    one = SparsityCV(est, k_grid=grid, cv=KFold(5)).fit(X, y)
    two = SparsityCV(est, k_grid=grid, cv=KFold(5), n_jobs=2).fit(X, y)
    assert one.k_ == two.k_
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])
    results = one.cv_results_
    splits = np.array([results[f"split{i}_test_score"] for i in range(5)])
    np.testing.assert_allclose(results["mean_test_score"], splits.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(results["std_test_score"], splits.std(axis=0), rtol=1e-12, atol=1e-15)
    best = results["mean_test_score"].max()
    assert results["rank_test_score"][one.best_index_] == 1 and one.best_score_ == best
    assert one.k_ == grid[np.flatnonzero(results["mean_test_score"] == best)[0]]  # (ties: the first k)
    refit = clone(est).set_params(k=one.k_).fit(X, y)
    np.testing.assert_allclose(one.best_estimator_.coef_, refit.coef_, rtol=1e-10, atol=1e-12)


def test_param_k_has_grid_search_cvs_integer_dtype():
    X, y, est = _problem("ls", 0)
    search = SparsityCV(est, k_grid=[1, 3, 2], cv=KFold(3)).fit(X, y)
    grid = GridSearchCV(est, {"k": [1, 3, 2]}, cv=KFold(3)).fit(X, y)
    for results in (search.cv_results_, grid.cv_results_):
        assert isinstance(results["param_k"], np.ma.MaskedArray)
        assert np.issubdtype(results["param_k"].dtype, np.integer)
    np.testing.assert_array_equal(search.cv_results_["param_k"], grid.cv_results_["param_k"])


def test_path_display_draws_the_fitted_attributes():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sparse_estimators.plotting import SparsityPathDisplay

    X, y, est = _problem("ls", 2)
    search = SparsityCV(est, k_grid=[1, 2, 3], cv=KFold(3)).fit(X, y)
    ic = SparsityIC(est, k_grid=[1, 2, 3]).fit(X, y)
    auto = clone(est).fit(X, y)
    for fitted, scores in ((search, search.cv_results_["mean_test_score"]), (ic, ic.criterion_),
                           (auto, auto.criterion_path_)):
        display = SparsityPathDisplay.from_estimator(fitted)
        np.testing.assert_array_equal(display.scores, scores)
        assert display.k_best == fitted.k_
    plt.close("all")


def test_path_display_draws_the_metric_a_partial_refit_chose_by():
    # refit=partial(one_standard_error, metric="neg_log_loss") chooses k by the log-loss: the display drew accuracy
    pytest.importorskip("matplotlib")
    import functools

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sparse_estimators.model_selection import one_standard_error
    from sparse_estimators.plotting import SparsityPathDisplay

    X, y, est = _problem("logistic", 4)
    refit = functools.partial(one_standard_error, metric="neg_log_loss")
    search = SparsityCV(est, k_grid=[1, 2, 3], cv=KFold(3), scoring=["accuracy", "neg_log_loss"],
                        refit=refit).fit(X, y)
    display = SparsityPathDisplay.from_estimator(search)
    np.testing.assert_array_equal(display.scores, search.cv_results_["mean_test_neg_log_loss"])
    np.testing.assert_array_equal(display.scores_std, search.cv_results_["std_test_neg_log_loss"])
    assert display.score_name == "mean CV neg_log_loss" and display.k_best == search.k_
    plt.close("all")
