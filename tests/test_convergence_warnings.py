"""No ConvergenceWarning in ordinary use (issue 32 item 14).

Near-separable logistic fits on standardised scikit-learn data sets used to
end at ``max_iter`` with a warning: regularized IHT left plain IHT about the
last 30 % of its iterations to converge on the unweighted support (it now
jumps to the minimiser on it, as IHT does), and the shrinking operators kept
their step at its early value once the support was stable, hundreds of times
below what the curvature along the late steps allows (it now grows until a
step is rejected twice on that support).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import AcceleratedIHTClassifier, IHTClassifier, RegularizedIHTClassifier
from sparse_estimators.losses import LogisticLoss
from sparse_estimators.solvers import regularized_iht
from sparse_estimators.solvers._base import StepGrowthLatch
from sparse_estimators.thresholding import Hard


def _no_warning_cross_validation(estimator, X, y, cv):
    """Cross-validate standardised data and a scaler-estimator pipeline with ConvergenceWarning as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cross_validate(estimator, StandardScaler().fit_transform(X), y, cv=cv, error_score="raise")
        cross_validate(make_pipeline(StandardScaler(), estimator), X, y, cv=cv, error_score="raise")


@pytest.mark.parametrize("k", [None, 2, 3])
@pytest.mark.parametrize("load", [load_iris, load_wine], ids=["iris", "wine"])
def test_regularized_iht_classifier_converges_on_iris_and_wine(load, k):
    X, y = load(return_X_y=True)
    _no_warning_cross_validation(RegularizedIHTClassifier(k=k), X, y, 3)


@pytest.mark.parametrize("k", [None, 3, 5])
@pytest.mark.parametrize("thresholding", ["soft", "reciprocal", "lq"])
@pytest.mark.parametrize("Estimator", [IHTClassifier, AcceleratedIHTClassifier])
def test_shrinking_operators_converge_on_breast_cancer(Estimator, thresholding, k):
    X, y = load_breast_cancer(return_X_y=True)
    _no_warning_cross_validation(Estimator(k=k, thresholding=thresholding), X, y, 5)


def test_step_growth_latch_closes_on_a_repeated_rejection_only():
    latch = StepGrowthLatch()
    S, T = np.array([1, 4]), np.array([1, 5])
    latch.update(S, 1.0, 1.0)
    assert latch.open
    latch.update(S, 4.0, 2.0)  # a first rejection of 4 on S: still open (the curvature may fall later)
    assert latch.open
    latch.update(S, 8.0, 8.0)
    latch.update(S, 4.0, 2.0)  # 4 rejected again on S: the cycle 2, 4, rejected 4, ...
    assert not latch.open
    latch.update(S, 2.0, 2.0)
    assert not latch.open
    latch.update(T, 2.0, 1.0)  # a new support opens it again
    assert latch.open


def test_regularized_iht_jumps_once_the_support_is_unweighted():
    """With ``support_refit`` it ends at the minimiser on its support (zero gradient there), long before max_iter."""
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    loss = LogisticLoss(X, (y == 0).astype(int), np.ones(len(y)), True, 1e-4)
    W0, b0 = loss.zeros()
    plain = regularized_iht(loss, Hard(), 3, W0=W0, b0=loss.initial_intercept(), max_iter=1000)
    jumped = regularized_iht(loss, Hard(), 3, W0=W0, b0=loss.initial_intercept(), max_iter=1000, support_refit=1)
    assert jumped.converged and jumped.refitted and jumped.n_iter < plain.n_iter
    np.testing.assert_array_equal(jumped.support, plain.support)
    assert np.all(jumped.weights[jumped.support] == 0)
    gradient = loss.value_and_gradient(jumped.coef, jumped.intercept)[1]
    assert np.max(np.abs(gradient[jumped.support])) < 1e-6 * np.max(np.abs(gradient))
    assert jumped.objective[-1] <= plain.objective[-1] + 1e-12
