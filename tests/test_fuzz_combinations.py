"""Fuzz round 8 on combinations of inputs and options: each test holds a wrong result found by comparing
float64 / float32 / sparse inputs and options against each other or against independent references."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import log_loss, mean_poisson_deviance

from sparse_estimators import IOBSClassifier, IOBSRegressor


def _iobs_problem(seed, kind):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((60, 10))
    y = X[:, 0] - 0.5 * X[:, 1] + rng.standard_t(2, 60)
    if kind == "poisson":
        return X, np.floor(np.exp(0.3 * y).clip(0, 50))
    if kind == "binary":
        return X, (X[:, 0] - 0.5 * X[:, 1] + rng.logistic(size=60) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("kind, params, seeds", [("squared_error", {"positive": True}, (0, 9, 10, 24)),
                                                 ("poisson", {"loss": "poisson"}, (2, 9, 10, 24)),
                                                 ("binary", {}, (0, 3, 21, 28))])
def test_iobs_without_correction_runs_to_a_fixed_point_on_float32_and_float64(kind, params, seeds):
    # I-OBS without the OBS correction halves a Newton step that does not lower the loss; the halvings went
    # on until the step was so small that its loss was within rounding of the current one (a float32 X's
    # products round to 1e-7), accepted it, and the stopping test (relative move <= tol) ended the fit there:
    # the float32 fits stopped after 2 to 5 iterations, 0.2 to 0.8 away from the float64 fits (which stopped
    # early too, more rarely). Now such a step gives way to the projected-gradient safeguard.
    Est = IOBSClassifier if kind == "binary" else IOBSRegressor
    for seed in seeds:
        X, y = _iobs_problem(seed, kind)
        fits = [Est(k=3, correction=False, debias=False, **params).fit(X.astype(dtype), y)
                for dtype in (np.float64, np.float32)]
        if kind == "binary":
            losses = [log_loss(y, fit.predict_proba(X)) for fit in fits]
        elif kind == "poisson":
            losses = [mean_poisson_deviance(y, fit.predict(X)) for fit in fits]
        else:
            losses = [np.mean((y - fit.predict(X)) ** 2) for fit in fits]
        assert_allclose(losses[1], losses[0], rtol=1e-4)
        assert_array_equal(fits[1].support_, fits[0].support_)
        assert_allclose(np.ravel(fits[1].coef_), np.ravel(fits[0].coef_), atol=2e-3)
