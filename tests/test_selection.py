"""The selected features through scikit-learn's feature selection API (issue 32, items 12 and 13).

``SelectFromModel`` with its default arguments keeps exactly the model's
support, and ``get_support`` has scikit-learn's semantics (a boolean mask, or
indices with ``indices=True``), on every exact-``k`` estimator and on the
searches.
"""

import numpy as np
import pytest
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectFromModel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators.model_selection import SparsityIC

PARAMETRIZE_OVER_PUBLIC_ESTIMATORS = True  # see conftest.py


def _unbalanced(Estimator, n_classes=2, seed=0):
    """Three relevant features, one with a coefficient far below the mean magnitude over all 20 features.

    The mean |coef| is about (3 + 2 + 0.2) / 20 = 0.26, above feature 11's
    0.2: ``SelectFromModel``'s mean threshold would drop it.
    """
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((400, 20))
    z = 3 * X[:, 2] - 2 * X[:, 7] + 0.2 * X[:, 11]
    if not is_classifier(Estimator()):
        return X, z + 0.05 * rng.standard_normal(400)
    if n_classes == 2:
        return X, (z + 0.05 * rng.standard_normal(400) > 0).astype(int)
    return X, np.digitize(z + 0.05 * rng.standard_normal(400), np.quantile(z, [1 / 3, 2 / 3]))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_selectfrommodel_defaults_keep_exactly_the_support(Estimator, n_classes):
    """issue 32 item 12: ``SelectFromModel(Est(k=3))`` kept 2 of the 3 selected features (mean threshold)."""
    if n_classes == 3 and not is_classifier(Estimator()):
        pytest.skip("one regression target")
    X, y = _unbalanced(Estimator, n_classes)
    est = Estimator(k=3).fit(X, y)
    assert est.support_.size == 3
    selector = SelectFromModel(Estimator(k=3)).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(selector.get_support()), est.support_)
    np.testing.assert_array_equal(selector.transform(X), X[:, est.support_])
    if not is_classifier(Estimator()):
        np.testing.assert_array_equal(est.support_, [2, 7, 11])
    # the coefficient far below the mean magnitude is kept: the threshold is not the mean
    magnitudes = np.abs(np.atleast_2d(est.coef_)).sum(axis=0)
    assert magnitudes[est.support_].min() < magnitudes.mean()
    # inside a pipeline, and through a search (its best estimator's support)
    pipe = make_pipeline(StandardScaler(), SelectFromModel(Estimator(k=3))).fit(X, y)
    np.testing.assert_array_equal(pipe[-1].get_support(indices=True), est.support_)
    search = SelectFromModel(SparsityIC(Estimator(), k_grid=[3])).fit(X, y)
    np.testing.assert_array_equal(search.get_support(indices=True), search.estimator_.get_support(indices=True))
    assert search.get_support().sum() == 3


def test_selectfrommodel_defaults_keep_whole_groups(Estimator):
    """With ``groups`` the default keeps every feature of the selected groups (k counts groups)."""
    rng = np.random.RandomState(1)
    X = rng.standard_normal((400, 20))
    groups = np.arange(20) // 4  # five groups of four features
    z = 3 * X[:, 1] - 2 * X[:, 2] + X[:, 9] + 0.2 * X[:, 17]  # groups 0, 2 and 4
    if is_classifier(Estimator()):
        y = (z + 0.3 * rng.standard_normal(400) > 0).astype(int)
    else:
        y = z + 0.3 * rng.standard_normal(400)
    est = Estimator(k=3, groups=groups).fit(X, y)
    selector = SelectFromModel(Estimator(k=3, groups=groups)).fit(X, y)
    assert est.support_.size == 12
    np.testing.assert_array_equal(selector.get_support(), est.get_support())
    np.testing.assert_array_equal(np.unique(groups[selector.get_support()]), est.groups_support_)


def test_get_support_has_sklearn_semantics(Estimator):
    """issue 32 item 13: ``support_`` holds indices; ``get_support`` is scikit-learn's mask (or indices)."""
    X, y = _unbalanced(Estimator)
    est = Estimator(k=3)
    with pytest.raises(NotFittedError):
        est.get_support()
    est.fit(X, y)
    mask = est.get_support()
    assert mask.dtype == bool and mask.shape == (X.shape[1],) == (est.n_features_in_,)
    np.testing.assert_array_equal(np.flatnonzero(mask), est.support_)
    indices = est.get_support(indices=True)
    np.testing.assert_array_equal(indices, est.support_)
    assert np.issubdtype(indices.dtype, np.integer)
    indices[:] = -1  # a copy: the fitted support is not changed through it
    assert est.support_.min() >= 0
    # the same selection as scikit-learn's own selector reports it
    np.testing.assert_array_equal(mask, SelectFromModel(est, prefit=True).get_support())
    # the searches report their best estimator's
    search = SparsityIC(Estimator(), k_grid=[2, 3]).fit(X, y)
    np.testing.assert_array_equal(search.get_support(), search.best_estimator_.get_support())
    np.testing.assert_array_equal(search.get_support(indices=True), search.best_estimator_.support_)
