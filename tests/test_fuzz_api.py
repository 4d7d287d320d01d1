"""scikit-learn citizenship of the estimators, the k selectors, the compose wrapper and the plots.

Each test holds a contract a user meets through scikit-learn's own tools,
checked against an independent reference: numpy's ``matrix_rank`` (the
reduced-rank models' ``rank_`` in the precision of ``coef_``), a fresh fit's
attributes (a refit keeps none of an earlier fit's), ``GridSearchCV`` and
scikit-learn's metrics (``SparsityCV.score`` is the metric that chose
``k``), the sorted grid (the plots).
"""

import warnings

import matplotlib
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.metrics import log_loss, mean_absolute_error, mean_squared_error
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler

from sparse_estimators import IHTClassifier, IHTRegressor, ReducedRankClassifier, ReducedRankRegressor
from sparse_estimators.compose import GroupsFromTransformer
from sparse_estimators.model_selection import SparsityCV, SparsityIC
from sparse_estimators.plotting import SparsityPathDisplay

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _regression(n=100, p=10, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = X[:, 1] - 2 * X[:, 5] + 1.5 * X[:, 8] + 0.5 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("solver", ["iht", "accelerated", "regularized"])
def test_reduced_rank_regressor_on_float32_keeps_its_rank(solver):
    # a rank-1 coefficient matrix rounded to float32 has singular values of about 1e-8 relative beyond the first:
    # rank_ counted them at float64's tolerance (rank_ 5, transform with 4 noise columns)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 8))
    Y = X @ rng.standard_normal((8, 1)) @ rng.standard_normal((1, 5)) + 0.01 * rng.standard_normal((200, 5))
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    model = ReducedRankRegressor(rank=1, solver=solver).fit(X32, Y32)
    assert model.coef_.dtype == np.float32
    assert model.rank_ == np.linalg.matrix_rank(model.coef_) == 1
    scores = model.transform(X32)
    assert scores.shape == (200, 1)
    assert model.get_feature_names_out().shape == (1,)
    assert_allclose(scores @ model.y_loadings_.T + model.intercept_, model.predict(X32), rtol=1e-4, atol=1e-4)


def test_reduced_rank_classifier_on_float32_keeps_its_rank():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 8))
    centers = rng.standard_normal((6, 1)) @ rng.standard_normal((1, 8))
    y = np.argmax(X @ centers.T * 3 + rng.gumbel(size=(300, 6)), axis=1)
    model = ReducedRankClassifier(rank=1).fit(X.astype(np.float32), y)
    assert model.rank_ == np.linalg.matrix_rank(model.coef_) == 1
    assert model.transform(X.astype(np.float32)).shape == (300, 1)


def _public_attributes(estimator):
    return {name for name in vars(estimator) if name.endswith("_") and not name.startswith("_")}


@pytest.mark.parametrize("make", [
    lambda est: SparsityCV(est, k_grid=[1, 2, 3], cv=3),
    lambda est: SparsityIC(est, k_grid=[1, 2, 3]),
    lambda est: GroupsFromTransformer(StandardScaler(), est.set_params(k=2)),
], ids=["SparsityCV", "SparsityIC", "GroupsFromTransformer"])
def test_a_regressor_refitted_after_a_classifier_has_no_classes(make):
    X, y = _regression()
    model = make(IHTClassifier()).fit(X, y > 0)
    assert_array_equal(model.classes_, [False, True])
    model.set_params(estimator=make(IHTRegressor()).estimator).fit(X, y)
    fresh = clone(model).fit(X, y)
    assert not hasattr(model, "classes_")
    assert _public_attributes(model) == _public_attributes(fresh)


@pytest.mark.parametrize("search", [
    lambda: SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3),
    lambda: SparsityIC(IHTRegressor(), k_grid=[1, 2, 3]),
], ids=["SparsityCV", "SparsityIC"])
def test_a_numpy_refit_after_a_dask_fit_has_no_passes(search):
    da = pytest.importorskip("dask.array")
    X, y = _regression(120)
    model = search().fit(da.from_array(X, chunks=(40, 10)), y)
    assert model.n_passes_ >= 1
    model.fit(X, y)
    assert not hasattr(model, "n_passes_")
    assert _public_attributes(model) == _public_attributes(search().fit(X, y))


def test_sparsity_cv_best_score_is_not_an_earlier_fits():
    # documented: no best_score_ when refit is a callable over several metrics (no metric chose k)
    X, y = _regression()
    search = SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3).fit(X, y)
    assert hasattr(search, "best_score_")
    search.set_params(scoring=["r2", "neg_mean_squared_error"], refit=lambda results: 0).fit(X, y)
    assert search.k_ == 1
    assert not hasattr(search, "best_score_")


@pytest.mark.parametrize("scoring, refit, metric", [
    ("neg_mean_squared_error", True, lambda y, p, w: -mean_squared_error(y, p, sample_weight=w)),
    (["r2", "neg_mean_absolute_error"], "neg_mean_absolute_error",
     lambda y, p, w: -mean_absolute_error(y, p, sample_weight=w)),
])
def test_sparsity_cv_score_is_the_metric_that_chose_k(scoring, refit, metric):
    # as GridSearchCV's score: the scoring (refit's metric), not the estimator's R^2; nested CV depends on it
    X, y = _regression()
    rng = np.random.RandomState(1)
    X_test, _ = _regression(40, seed=2)
    y_test = X_test[:, 1] - 2 * X_test[:, 5] + 1.5 * X_test[:, 8] + rng.standard_normal(40)
    weights = rng.randint(0, 4, 40)
    folds = KFold(5)
    search = SparsityCV(IHTRegressor(), k_grid=[1, 2, 3, 4], cv=folds, scoring=scoring, refit=refit).fit(X, y)
    grid = GridSearchCV(IHTRegressor(), {"k": [1, 2, 3, 4]}, cv=folds, scoring=scoring, refit=refit).fit(X, y)
    assert search.k_ == grid.best_params_["k"]
    predicted = search.predict(X_test)
    assert_allclose(search.score(X_test, y_test), metric(y_test, predicted, None), rtol=1e-12)
    assert_allclose(search.score(X_test, y_test), grid.score(X_test, y_test), rtol=1e-6)
    assert_allclose(search.score(X_test, y_test, sample_weight=weights), metric(y_test, predicted, weights),
                    rtol=1e-12)


def test_sparsity_cv_score_of_a_classifier_and_its_fallbacks():
    X, y = _regression()
    labels = np.where(y + np.random.RandomState(3).standard_normal(100) > 0, "yes", "no")
    search = SparsityCV(IHTClassifier(), k_grid=[1, 2, 3], cv=StratifiedKFold(3), scoring="neg_log_loss")
    search.fit(X, labels)
    assert_allclose(search.score(X, labels), -log_loss(labels, search.predict_proba(X)), rtol=1e-12)
    # scoring=None, and a callable refit over several metrics: the estimator's own score (accuracy, R^2)
    search.set_params(scoring=None).fit(X, labels)
    assert search.score(X, labels) == search.best_estimator_.score(X, labels)
    several = SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3, scoring=["r2", "neg_mean_squared_error"],
                         refit=lambda results: 2).fit(X, y)
    assert several.score(X, y) == several.best_estimator_.score(X, y)


@pytest.mark.parametrize("search", [
    lambda: SparsityCV(IHTRegressor(), k_grid=[4, 1, 3, 2], cv=3),
    lambda: SparsityIC(IHTRegressor(), k_grid=[4, 1, 3, 2]),
], ids=["SparsityCV", "SparsityIC"])
def test_the_plot_of_an_unsorted_grid_is_drawn_in_increasing_k(search):
    import matplotlib.pyplot as plt

    X, y = _regression()
    fitted = search().fit(X, y)
    display = SparsityPathDisplay.from_estimator(fitted, X, y)
    score_line = display.ax_[0].lines[0]
    order = np.argsort(display.k_grid)
    assert_array_equal(score_line.get_xdata(), [1, 2, 3, 4])
    assert_array_equal(score_line.get_ydata(), display.scores[order])
    # the paths too, and the legend ranks the features by their coefficient at the largest k
    paths = display.ax_[1].lines
    assert all(np.array_equal(line.get_xdata(), [1, 2, 3, 4]) for line in paths if line.get_label()[0] != "_")
    at_largest = display.coefs[np.argmax(display.k_grid)]
    first = display.ax_[1].get_legend().get_texts()[0].get_text()
    assert first == f"x{np.argmax(np.abs(at_largest))}"
    plt.close(display.figure_)


@pytest.mark.parametrize("search", [
    lambda grid: SparsityCV(IHTRegressor(), k_grid=grid, cv=3),
    lambda grid: SparsityIC(IHTRegressor(), k_grid=grid),
], ids=["SparsityCV", "SparsityIC"])
def test_a_boolean_in_k_grid_is_refused_as_k_true_is(search):
    # np.asarray([True, 2]) is [1, 2]: the search fitted k=1 for True, where IHTRegressor(k=True) is refused
    X, y = _regression()
    with pytest.raises(ValueError, match="must be an integer"):
        IHTRegressor(k=True).fit(X, y)
    for grid in ([True, 2], [np.True_, 3]):
        with pytest.raises(ValueError, match="k_grid.*not booleans"):
            search(grid).fit(X, y)
    assert search(np.array([1, 2], dtype=np.uint8)).fit(X, y).k_ in (1, 2)


@pytest.mark.parametrize("problem", ["multi-output", "three classes"])
def test_the_display_draws_a_path_of_several_outputs_as_norms(problem):
    # SparsityPathDisplay(k_grid, scores, coefs=sparsity_path(...).coefs) raised an IndexError from inside the plot
    # for a (n_k, n_outputs, n_features) path; from_estimator alone took the norm
    import matplotlib.pyplot as plt

    from sparse_estimators.model_selection import sparsity_path

    X, y = _regression()
    if problem == "multi-output":
        estimator, target = IHTRegressor(), np.column_stack([y, X[:, 2] - y])
    else:
        estimator, target = IHTClassifier(), np.digitize(y, [-1.0, 1.0])
    path = sparsity_path(estimator, X, target, [1, 2, 3])
    assert path.coefs.ndim == 3
    display = SparsityPathDisplay(path.k_grid, path.objectives, coefs=path.coefs).plot()
    curves = {int(line.get_label()[1:]): line.get_ydata() for line in display.ax_[1].lines
              if line.get_label().startswith("x")}
    assert curves
    for feature, curve in curves.items():
        assert_allclose(curve, np.sqrt((path.coefs[:, :, feature] ** 2).sum(axis=1)), rtol=1e-12)
    plt.close(display.figure_)
    with pytest.raises(ValueError, match="coefs must have shape"):
        SparsityPathDisplay(path.k_grid, path.objectives, coefs=path.coefs[:2])
