"""SparsityCV and SparsityIC as scikit-learn searches (issue 25): column-vector y, check_estimator, other
packages' estimators, multi-metric scoring, refit, error_score, metadata routing."""

import functools
import warnings
from unittest import mock

import numpy as np
import pytest
import sklearn
from _search_problems import _classification, _regression, _separated
from sklearn.exceptions import DataConversionWarning, FitFailedWarning, UnsetMetadataPassedError
from sklearn.linear_model import OrthogonalMatchingPursuit
from sklearn.metrics import make_scorer, r2_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.metadata_routing import MetadataRouter

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.model_selection import SparsityCV, SparsityIC, one_standard_error


# -- issue 25: column-vector y, check_estimator, other estimators, multi-metric scoring, refit ------
@pytest.mark.parametrize("kind", ["array", "frame"])
def test_column_vector_y_of_a_classifier_is_raveled_and_scored(kind):
    # issue 25 defect 1: (n,) against (n, 1) broadcast to n x n in the default scorer: k_ = 1, scores 0.5
    pd = pytest.importorskip("pandas")
    X, y, support = _classification(n=300)
    Y = y.reshape(-1, 1) if kind == "array" else pd.DataFrame({"label": y})
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    flat = SparsityCV(IHTClassifier(), k_grid=range(1, 7), cv=cv).fit(X, y)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = SparsityCV(IHTClassifier(), k_grid=range(1, 7), cv=cv).fit(X, Y)
    assert column.k_ == flat.k_
    np.testing.assert_array_equal(column.cv_results_["mean_test_score"], flat.cv_results_["mean_test_score"])
    assert column.best_score_ > 0.9  # (0.5 with the broadcast comparison)
    with pytest.warns(DataConversionWarning):
        ic = SparsityIC(IHTClassifier(), k_grid=range(1, 7)).fit(X, Y)
    assert ic.k_ == SparsityIC(IHTClassifier(), k_grid=range(1, 7)).fit(X, y).k_


def test_column_vector_y_of_a_regressor_is_one_target():
    X, y, support = _regression(noise=0.5)
    cv = KFold(3, shuffle=True, random_state=0)
    flat = SparsityCV(IHTRegressor(), k_grid=range(1, 8), cv=cv).fit(X, y)
    column = SparsityCV(IHTRegressor(), k_grid=range(1, 8), cv=cv).fit(X, y.reshape(-1, 1))
    assert column.k_ == flat.k_ == len(support)
    np.testing.assert_allclose(column.cv_results_["mean_test_score"], flat.cv_results_["mean_test_score"])
    assert column.predict(X[:3]).shape == (3, 1)  # as the estimator's own fit with a (n, 1) y


SEARCHES = [SparsityCV(IHTRegressor()), SparsityCV(IHTClassifier()), SparsityIC(IHTRegressor()),
            SparsityIC(IHTClassifier())]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(SEARCHES)  # issue 25 defect 2: default parameters, list input, 1-D X, y=None, weights
def test_searches_pass_check_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("search", [SparsityCV, SparsityIC])
def test_an_estimator_of_another_package_is_refused_clearly(search):
    # issue 25 defect 3: AttributeError '_setup' before
    X, y, _ = _regression(n=60, p=10)
    with pytest.raises(TypeError, match="estimator of sparse_estimators.*OrthogonalMatchingPursuit.*GridSearchCV"):
        search(OrthogonalMatchingPursuit()).fit(X, y)
    with pytest.raises(TypeError, match="got Pipeline"):
        search(make_pipeline(StandardScaler(), IHTRegressor())).fit(X, y)


def test_multimetric_scoring_matches_gridsearchcv():
    """issue 25 defect 4 (a TypeError before) and refit by name: same k, same scores as GridSearchCV."""
    X, y, support = _classification(n=400)
    grid = [1, 2, 3]  # k <= k*: each path point is the cold fit
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    auc = make_scorer(roc_auc_score, response_method="decision_function")
    for scoring in (["accuracy", "roc_auc"], {"accuracy": "accuracy", "roc_auc": auc}):
        ours = SparsityCV(IHTClassifier(), k_grid=grid, cv=cv, scoring=scoring, refit="roc_auc",
                          return_train_score=True).fit(X, y)
        ref = GridSearchCV(IHTClassifier(), {"k": grid}, cv=cv, scoring=scoring, refit="roc_auc",
                           return_train_score=True).fit(X, y)
        assert ours.multimetric_ and ours.k_ == ref.best_params_["k"] == 3
        assert ours.best_params_ == ref.best_params_ and ours.best_index_ == ref.best_index_
        assert ours.best_score_ == pytest.approx(ref.best_score_, rel=1e-10)
        for key in [f"{stat}_{kind}_{metric}" for stat in ("mean", "std", "split0", "split3")
                    for kind in ("test", "train") for metric in ("accuracy", "roc_auc")]:
            np.testing.assert_allclose(ours.cv_results_[key], ref.cv_results_[key], rtol=1e-10, err_msg=key)
        np.testing.assert_array_equal(ours.cv_results_["rank_test_accuracy"], ref.cv_results_["rank_test_accuracy"])
    np.testing.assert_allclose(ours.predict_log_proba(X[:5]), ref.best_estimator_.predict_log_proba(X[:5]),
                               rtol=1e-8)
    with pytest.raises(ValueError, match="metric name of \\['accuracy', 'roc_auc'\\]"):
        SparsityCV(IHTClassifier(), k_grid=grid, cv=cv, scoring=["accuracy", "roc_auc"]).fit(X, y)


def test_refit_accuracy_matches_gridsearchcv_beyond_the_true_k():
    """A grid past k* = 3: the same k as GridSearchCV with refit='accuracy', the same scores up to k*.

    Beyond k*, a classifier's path point can fill the extra slots with other
    noise features than a cold fit (class docstring): scores there differ by
    a few test samples.
    """
    X, y, support = _classification(n=400)
    grid = list(range(1, 7))
    cv = StratifiedKFold(4, shuffle=True, random_state=1)
    ours = SparsityCV(IHTClassifier(), k_grid=grid, cv=cv, scoring=["accuracy", "roc_auc"],
                      refit="accuracy").fit(X, y)
    ref = GridSearchCV(IHTClassifier(), {"k": grid}, cv=cv, scoring=["accuracy", "roc_auc"],
                       refit="accuracy").fit(X, y)
    assert ours.k_ == ref.best_params_["k"] == len(support)
    for key in ("mean_test_accuracy", "mean_test_roc_auc", "split1_test_accuracy"):
        np.testing.assert_allclose(ours.cv_results_[key][:3], ref.cv_results_[key][:3], rtol=1e-10)
    np.testing.assert_allclose(ours.cv_results_["mean_test_accuracy"], ref.cv_results_["mean_test_accuracy"],
                               atol=0.02)


def test_multimetric_regression_refit_by_name_matches_gridsearchcv():
    X, y, _ = _separated(2, noise=0.3)
    grid = list(range(1, 9))
    cv = KFold(5, shuffle=True, random_state=0)
    scoring = ["r2", "neg_mean_absolute_error"]
    ours = SparsityCV(IHTRegressor(), k_grid=grid, cv=cv, scoring=scoring, refit="neg_mean_absolute_error").fit(X, y)
    ref = GridSearchCV(IHTRegressor(), {"k": grid}, cv=cv, scoring=scoring, refit="neg_mean_absolute_error").fit(X, y)
    assert ours.k_ == ref.best_params_["k"] == 4
    for key in ("mean_test_r2", "mean_test_neg_mean_absolute_error", "split3_test_r2"):  # k <= k*: cold fits
        np.testing.assert_allclose(ours.cv_results_[key][:4], ref.cv_results_[key][:4], rtol=1e-10)


def test_one_standard_error_refit():
    X, y, support = _separated(1, noise=1.0)
    grid = list(range(1, 9))
    cv = KFold(5, shuffle=True, random_state=0)
    ours = SparsityCV(IHTRegressor(), k_grid=grid, cv=cv, refit=one_standard_error).fit(X, y)
    best = SparsityCV(IHTRegressor(), k_grid=grid, cv=cv).fit(X, y)
    ref = GridSearchCV(IHTRegressor(), {"k": grid}, cv=cv, refit=one_standard_error).fit(X, y)
    assert ours.k_ == ref.best_params_["k"] <= best.k_
    # the rule by hand on our own results: the smallest k within one standard error of the best
    mean, std = ours.cv_results_["mean_test_score"], ours.cv_results_["std_test_score"]
    top = int(np.argmax(mean))
    assert ours.k_ == min(k for k, m in zip(grid, mean, strict=True) if m >= mean[top] - std[top] / np.sqrt(5))
    assert ours.cv_results_["full_search"][ours.best_index_]
    assert ours.best_score_ == mean[ours.best_index_]
    # with several metrics, a partial names the metric
    multi = SparsityCV(IHTRegressor(), k_grid=grid, cv=cv, scoring=["r2", "neg_mean_squared_error"],
                       refit=functools.partial(one_standard_error, metric="r2")).fit(X, y)
    assert multi.k_ == ours.k_ and not hasattr(multi, "best_score_")


def test_refit_callable_and_bad_refit():
    X, y, _ = _regression(n=80, p=10)
    search = SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3, refit=lambda results: 1).fit(X, y)
    assert search.k_ == 2 and search.best_params_ == {"k": 2}
    for refit, error in ((False, ValueError), ("accuracy", ValueError), (lambda r: 7, IndexError),
                         (lambda r: 1.0, TypeError)):
        with pytest.raises(error, match="refit"):
            SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3, refit=refit).fit(X, y)


def test_error_score_as_gridsearchcv():
    """A fold whose training part has one class fails its fit: it scores error_score, with a FitFailedWarning."""
    X, y, _ = _classification(n=120)
    order = np.argsort(y, kind="stable")
    first = order[:40]  # one class only: the fit on it fails
    cv = [(first, order[40:80]), (order[40:], order[:40]), (np.r_[order[:40], order[80:]], order[40:80])]
    ours = SparsityCV(IHTClassifier(), k_grid=[1, 2, 3], cv=cv, error_score=0.0)
    with pytest.warns(FitFailedWarning, match="1 of the 3 fold paths failed"):
        ours.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GridSearchCV(IHTClassifier(), {"k": [1, 2, 3]}, cv=cv, error_score=0.0).fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    assert ours.k_ == ref.best_params_["k"]
    with pytest.raises(ValueError, match="at least 2 classes"):
        SparsityCV(IHTClassifier(), k_grid=[1, 2], cv=cv, error_score="raise").fit(X, y)
    with pytest.raises(ValueError, match="All the 1 fold paths"):
        SparsityCV(IHTClassifier(), k_grid=[1, 2], cv=cv[:1]).fit(X, y)


# -- issue 25: metadata routing --------------------------------------------------------------------
def _weights(n, seed=0):
    return np.random.RandomState(seed).randint(1, 4, n).astype(float)


def test_selectors_are_routers():
    for search in (SparsityCV(IHTRegressor()), SparsityIC(IHTRegressor())):
        router = search.get_metadata_routing()
        assert isinstance(router, MetadataRouter)
        assert "estimator" in str(router)
    assert "splitter" in str(SparsityCV(IHTRegressor(), cv=GroupKFold(3)).get_metadata_routing())


def test_routing_honours_the_estimators_sample_weight_request():
    X, y, _ = _separated(0, noise=1.0)
    w = _weights(len(y))
    cv = KFold(4, shuffle=True, random_state=0)
    grid = [1, 2, 3, 4]
    weighted = SparsityCV(IHTRegressor(), k_grid=grid, cv=cv).fit(X, y, sample_weight=w)  # no routing
    with sklearn.config_context(enable_metadata_routing=True):
        # fits unweighted, weighted scores: the scores of the unweighted fits, weighted by hand
        est = IHTRegressor().set_fit_request(sample_weight=False).set_score_request(sample_weight=True)
        ignored = SparsityCV(est, k_grid=grid, cv=cv).fit(X, y, sample_weight=w)
        np.testing.assert_array_equal(ignored.best_estimator_.coef_,
                                      IHTRegressor(k=ignored.k_).fit(X, y).coef_)
        for i, (train, test) in enumerate(cv.split(X)):
            for j, k in enumerate(grid):
                model = IHTRegressor(k=k).fit(X[train], y[train])
                assert ignored.cv_results_[f"split{i}_test_score"][j] == pytest.approx(
                    r2_score(y[test], model.predict(X[test]), sample_weight=w[test]), rel=1e-10)
        with pytest.raises(TypeError, match="not routed to any object"):  # requested by nobody, as GridSearchCV
            SparsityCV(IHTRegressor().set_fit_request(sample_weight=False).set_score_request(sample_weight=False),
                       k_grid=grid, cv=cv).fit(X, y, sample_weight=w)
        # requested by the fit and the estimator's score: both weighted, as without routing (GridSearchCV's rule)
        est = IHTRegressor().set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        routed = SparsityCV(est, k_grid=grid, cv=cv).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(routed.cv_results_["mean_test_score"], weighted.cv_results_["mean_test_score"])
        ref = GridSearchCV(est, {"k": grid}, cv=cv).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(routed.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"],
                                   rtol=1e-10)
        with pytest.raises(UnsetMetadataPassedError):  # a request never set: scikit-learn's error
            SparsityCV(IHTRegressor(), k_grid=grid, cv=cv).fit(X, y, sample_weight=w)
        with pytest.raises(TypeError, match="not routed to any object"):  # the estimator declines the weights
            SparsityIC(IHTRegressor().set_fit_request(sample_weight=False), k_grid=grid).fit(X, y, sample_weight=w)
        ic_used = SparsityIC(IHTRegressor().set_fit_request(sample_weight=True), k_grid=grid).fit(
            X, y, sample_weight=w)
    np.testing.assert_array_equal(ic_used.criterion_,
                                  SparsityIC(IHTRegressor(), k_grid=grid).fit(X, y, sample_weight=w).criterion_)


def test_routing_sends_sample_weight_to_the_scorers_that_request_it():
    X, y, _ = _separated(1, noise=1.0)
    w = _weights(len(y), seed=1)
    cv = KFold(4, shuffle=True, random_state=0)
    grid = [1, 2, 3, 4]
    with sklearn.config_context(enable_metadata_routing=True):
        est = IHTRegressor().set_fit_request(sample_weight=False)
        scoring = {"w": make_scorer(r2_score).set_score_request(sample_weight=True),
                   "r2": make_scorer(r2_score).set_score_request(sample_weight=False)}
        ours = SparsityCV(est, k_grid=grid, cv=cv, scoring=scoring, refit="w").fit(X, y, sample_weight=w)
        ref = GridSearchCV(est, {"k": grid}, cv=cv, scoring=scoring, refit="w").fit(X, y, sample_weight=w)
    for key in ("mean_test_w", "mean_test_r2", "split2_test_w"):
        np.testing.assert_allclose(ours.cv_results_[key], ref.cv_results_[key], rtol=1e-10)
    assert not np.allclose(ours.cv_results_["mean_test_w"], ours.cv_results_["mean_test_r2"])  # weights used
    # by hand: the weighted R^2 of the first fold's k = 2 model
    train, test = next(cv.split(X))
    model = IHTRegressor(k=2).fit(X[train], y[train])
    assert ours.cv_results_["split0_test_w"][1] == pytest.approx(
        r2_score(y[test], model.predict(X[test]), sample_weight=w[test]), rel=1e-10)


@pytest.mark.parametrize("routing", [False, True])
def test_groups_reach_a_group_aware_splitter(routing):
    X, y, _ = _separated(2, noise=1.0)
    groups = np.repeat(np.arange(20), 10)
    grid = [1, 2, 3, 4]
    with sklearn.config_context(enable_metadata_routing=routing):
        ours = SparsityCV(IHTRegressor(), k_grid=grid, cv=GroupKFold(4)).fit(X, y, groups=groups)
        ref = GridSearchCV(IHTRegressor(), {"k": grid}, cv=GroupKFold(4)).fit(X, y, groups=groups)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], rtol=1e-10)
    assert ours.k_ == ref.best_params_["k"]
    # every test fold holds whole groups: one group's rows scored in one fold only
    if not routing:
        with pytest.raises(ValueError, match="groups"):
            SparsityCV(IHTRegressor(), k_grid=grid, cv=GroupKFold(4)).fit(X, y)
        with pytest.raises(TypeError, match="unexpected parameters \\['foo'\\]"):
            SparsityCV(IHTRegressor(), k_grid=grid).fit(X, y, foo=1)
        with pytest.raises(TypeError, match="unexpected parameters \\['groups'\\]"):
            SparsityIC(IHTRegressor(), k_grid=grid).fit(X, y, groups=groups)


def test_display_of_a_multimetric_search_draws_the_refit_metric():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sparse_estimators.plotting import SparsityPathDisplay

    X, y, _ = _regression(n=120, p=20, support=(1, 5), noise=0.5)
    search = SparsityCV(IHTRegressor(), k_grid=range(1, 6), cv=3, scoring=["r2", "neg_mean_squared_error"],
                        refit="neg_mean_squared_error").fit(X, y)
    display = SparsityPathDisplay.from_estimator(search)
    np.testing.assert_allclose(display.ax_[0].get_lines()[0].get_ydata(),
                               search.cv_results_["mean_test_neg_mean_squared_error"])
    plt.close("all")


def test_sparsity_cv_scores_a_failed_full_fit_as_error_score():
    """A full fit that fails on one fold scores error_score with a FitFailedWarning (it raised a KeyError)."""
    from sparse_estimators.model_selection import _cv

    X, y, _ = _regression(n=120, p=20)
    calls = []
    original = _cv._fold_rescore

    def failing_on_the_first_fold(*args):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("full fit failed")
        return original(*args)

    with mock.patch.object(_cv, "_fold_rescore", side_effect=failing_on_the_first_fold):
        with pytest.warns(FitFailedWarning, match="A full fit on fold 0 failed"):
            search = SparsityCV(IHTRegressor(), k_grid=range(1, 6), cv=3).fit(X, y)
    assert np.isnan(search.cv_results_["split0_test_score"]).any()  # (the levels of the failed round)
    assert np.all(np.isfinite(search.cv_results_["split1_test_score"]))
