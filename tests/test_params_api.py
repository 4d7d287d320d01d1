"""Scikit-learn citizenship of the parameters: ``always_select`` by column name or mask, the thresholding
operators' nested parameters (``thresholding__c``), and ``SparsityPathDisplay`` of a ``k=None`` fit."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.impute import LowRankImputer
from sparse_estimators.model_selection import SparsityCV, SparsityIC
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft

PARAMETRIZE_OVER_PUBLIC_ESTIMATORS = True  # see conftest.py


def _frame(Estimator, n=150, p=12, seed=0):
    """A DataFrame with columns c0..c11 and a target of the estimator's kind on features 0 and 1 (0 stronger)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    eta = 3 * X[:, 0] - 1.5 * X[:, 1]
    if Estimator in (IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis):
        t = rng.exponential(np.exp(-eta))
        y = np.array(list(zip(np.ones(n, bool), t, strict=True)), dtype=[("event", bool), ("time", float)])
    elif is_classifier(Estimator()):
        y = (eta + 0.5 * rng.standard_normal(n) > 0).astype(int)
    else:
        y = eta + 0.1 * rng.standard_normal(n)
    return pd.DataFrame(X, columns=[f"c{j}" for j in range(p)]), y


# -- always_select: column names and boolean masks ---------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_always_select_by_name_or_mask_is_the_fit_by_index(Estimator):
    """Names resolve against feature_names_in_ and a mask to its True entries: the same fit as the indices."""
    X, y = _frame(Estimator)
    by_index = Estimator(k=3, always_select=[9, 7]).fit(X, y)
    np.testing.assert_array_equal(by_index.support_, [0, 7, 9])  # (the forced pair and one of the two true features)
    mask = np.zeros(12, dtype=bool)
    mask[[7, 9]] = True
    for spec in (["c9", "c7"], pd.Index(["c7", "c9"]), mask, mask.tolist(), pd.Series(mask, index=X.columns)):
        other = Estimator(k=3, always_select=spec).fit(X, y)
        np.testing.assert_array_equal(other.support_, by_index.support_)
        np.testing.assert_array_equal(other.coef_, by_index.coef_)


@pytest.mark.parametrize("Estimator", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
def test_survival_always_select_by_name(Estimator):
    X, y = _frame(Estimator)
    named = Estimator(k=3, always_select=["c5"]).fit(X, y)
    np.testing.assert_array_equal(named.support_, [0, 1, 5])
    np.testing.assert_array_equal(named.coef_, Estimator(k=3, always_select=[5]).fit(X, y).coef_)


def test_always_select_names_are_refused_clearly():
    X, y = _frame(IHTRegressor)
    est = IHTRegressor(k=3, always_select=["c7", "age"])
    with pytest.raises(ValueError, match=r"'always_select'.*not in X's columns.*\['age'\]"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(ValueError, match="'always_select'.*X has no feature names"):
        IHTRegressor(k=3, always_select=["c7"]).fit(X.to_numpy(), y)
    # a refit on an array forgets the DataFrame's names (no stale resolution)
    est = IHTRegressor(k=3, always_select=["c7"]).fit(X, y)
    with pytest.raises(ValueError, match="X has no feature names"):
        est.fit(X.to_numpy(), y)
    with pytest.raises(ValueError, match="'always_select'.*mask of 5 entries.*12"):
        IHTRegressor(k=3, always_select=np.ones(5, dtype=bool)).fit(X, y)
    for mixed, kinds in ((["c7", 3], "integers and strings"), ([True, 3], "booleans and integers"),
                         ([1.0, 2.0], "float")):
        with pytest.raises(ValueError, match=f"'always_select'.*got {kinds}"):
            IHTRegressor(k=3, always_select=mixed).fit(X, y)


def test_always_select_names_in_the_searches():
    """SparsityCV and SparsityIC resolve the names on X's columns: the grid starts at the forced feature."""
    X, y = _frame(IHTRegressor)
    for search in (SparsityCV(IHTRegressor(always_select=["c7"]), k_grid=range(1, 5), cv=3),
                   SparsityIC(IHTRegressor(always_select=["c7"]), k_grid=range(1, 5))):
        fitted = search.fit(X, y)
        np.testing.assert_array_equal(fitted.best_estimator_.support_, [0, 1, 7])
        reference = clone(search).set_params(estimator__always_select=[7]).fit(X, y)
        np.testing.assert_array_equal(fitted.best_estimator_.coef_, reference.best_estimator_.coef_)
    auto = IHTRegressor(always_select=["c7"]).fit(X, y)  # k=None: the path starts at the forced feature
    assert auto.k_path_[0] == 1 and auto.k_ == 3
    np.testing.assert_array_equal(auto.support_, [0, 1, 7])


@pytest.mark.parametrize("Estimator", [IHTRegressor, IHTClassifier])
def test_always_select_names_on_a_dask_dataframe_search(Estimator):
    """A dask DataFrame's names reach the search's grid and (classifiers: the folds in lockstep) its folds' paths."""
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    X, y = _frame(Estimator, n=200)
    Xd, yd = dd.from_pandas(X, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4)
    with dask.config.set(scheduler="synchronous"):
        search = SparsityCV(Estimator(always_select=["c7"]), k_grid=range(1, 5), cv=3).fit(Xd, yd)
        by_index = SparsityCV(Estimator(always_select=[7]), k_grid=range(1, 5), cv=3).fit(Xd, yd)
    assert {0, 1, 7} <= set(search.best_estimator_.support_.tolist())
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], by_index.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(search.best_estimator_.coef_, by_index.best_estimator_.coef_)


# -- thresholding operators as scikit-learn parameter objects ----------------------------------------------------

def test_operator_params_are_nested_estimator_params():
    est = IHTRegressor(k=3, thresholding=Reciprocal(c=0.25))
    params = est.get_params(deep=True)
    assert params["thresholding__c"] == 0.25
    assert "thresholding__q" not in params
    assert Lq(q=0.5).get_params() == {"q": 0.5} and Hard().get_params() == {} and Soft().get_params() == {}
    operator = est.thresholding
    assert est.set_params(thresholding__c=0.75) is est
    assert est.thresholding is operator and operator == Reciprocal(c=0.75)  # (in place, as scikit-learn's)
    # an invalid value raises (the class's own check) and leaves the operator as it was
    with pytest.raises(ValueError, match="0 <= c <= 1"):
        est.set_params(thresholding__c=1.5)
    with pytest.raises(ValueError, match="0 < q < 1"):
        Lq(q=0.5).set_params(q=1.0)
    assert operator.c == 0.75
    with pytest.raises(ValueError, match="Invalid parameter 'q'"):
        est.set_params(thresholding__q=0.5)
    # a name has no parameters: a ValueError saying to pass the object (not an AttributeError of str)
    with pytest.raises(ValueError, match="thresholding='reciprocal' is a name.*Reciprocal\\(\\)"):
        IHTRegressor(thresholding="reciprocal").set_params(thresholding__c=0.5)
    named = IHTRegressor(thresholding="hard").set_params(thresholding=Lq(), thresholding__q=0.4)
    assert named.thresholding == Lq(q=0.4)
    # through a Pipeline, a search and the imputer
    pipe = make_pipeline(StandardScaler(), IHTRegressor(thresholding=Lq()))
    assert pipe.set_params(ihtregressor__thresholding__q=0.3)[-1].thresholding == Lq(q=0.3)
    search = SparsityCV(IHTRegressor(thresholding=Reciprocal()))
    assert search.set_params(estimator__thresholding__c=0.5).estimator.thresholding == Reciprocal(c=0.5)
    assert LowRankImputer(thresholding=Reciprocal()).set_params(thresholding__c=0.5).thresholding.c == 0.5


def test_grid_search_over_an_operator_parameter_picks_and_refits():
    """Lq near hard (q=0.1) shrinks the kept coefficients less than near soft (q=0.9): without debiasing it wins."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 40))
    y = X[:, [1, 4, 9]] @ np.array([3.0, -2.0, 2.5]) + rng.standard_normal(80)
    est = IHTRegressor(k=3, thresholding=Lq(), debias=False)
    search = GridSearchCV(est, {"thresholding__q": [0.9, 0.1]}, cv=4).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert scores[1] > scores[0]
    assert search.best_params_ == {"thresholding__q": 0.1}
    assert est.thresholding == Lq()  # (the search changed clones, not the given operator)
    best = search.best_estimator_
    assert best.thresholding == Lq(q=0.1)
    direct = IHTRegressor(k=3, thresholding=Lq(q=0.1), debias=False).fit(X, y)
    np.testing.assert_array_equal(best.coef_, direct.coef_)
    np.testing.assert_array_equal(best.support_, [1, 4, 9])
    # pickling and cloning keep the operator's parameters
    restored = pickle.loads(pickle.dumps(best))
    assert restored.thresholding == Lq(q=0.1)
    np.testing.assert_array_equal(restored.predict(X), best.predict(X))
    copy = clone(best)
    assert copy.thresholding == best.thresholding and copy.thresholding is not best.thresholding
    assert copy.get_params(deep=True) == best.get_params(deep=True)
    copy.set_params(thresholding__q=0.5)
    assert best.thresholding == Lq(q=0.1)


def test_check_estimator_with_an_operator_object():
    check_estimator(IHTRegressor(thresholding=Reciprocal(c=0.5)))


# -- SparsityPathDisplay of a k=None fit ---------------------------------------------------------------------

def test_display_draws_the_path_a_k_none_fit_chose_on():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sparse_estimators.plotting import SparsityPathDisplay

    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 20))
    y = X[:, [0, 5, 9]] @ np.array([3.0, -2.0, 1.0]) + 0.5 * rng.standard_normal(150)
    est = IHTRegressor().fit(X, y)
    assert est.k_ == 3
    display = SparsityPathDisplay.from_estimator(est)
    line = display.ax_[0].get_lines()[0]
    np.testing.assert_array_equal(line.get_xdata(), est.k_path_)
    np.testing.assert_array_equal(line.get_ydata(), est.criterion_path_)
    assert display.k_best == est.k_ and display.score_name == "EBIC"
    assert any(np.array_equal(ln.get_xdata(), [3, 3]) for ln in display.ax_[0].get_lines())  # (the chosen k)
    # with the data: the coefficient paths over the same levels, the estimator's fit at the chosen level
    display = SparsityPathDisplay.from_estimator(est, X, y)
    assert display.coefs.shape == (est.k_path_.size, 20)
    np.testing.assert_array_equal(np.flatnonzero(display.coefs[list(est.k_path_).index(est.k_)]), est.support_)
    assert len(display.ax_[1].get_lines()) > 3
    # an integer k has no path: refused as before
    with pytest.raises(TypeError, match="SparsityCV"):
        SparsityPathDisplay.from_estimator(IHTRegressor(k=3).fit(X, y))
    plt.close("all")
