"""Invariances of the Poisson and Gamma fits that users expect (scikit-learn's estimators keep them).

``c y`` (a change of ``y``'s unit, c > 0) has the fit of ``y``: the same coefficients and support, the
intercept plus ``log c`` (the log link); integer ``sample_weight`` is the fit of the repeated rows
(scikit-learn's ``check_sample_weight_equivalence``).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from sparse_estimators import IOBSRegressor
from sparse_estimators.losses import GammaLoss, PoissonLoss
from sparse_estimators.solvers import accelerated_iht, iht, iobs, regularized_iht
from sparse_estimators.solvers._iobs import select_hessian_route
from sparse_estimators.thresholding import Hard

LOSSES = {"poisson": PoissonLoss, "gamma": GammaLoss}
SOLVERS = {"iht": iht, "accelerated": accelerated_iht, "regularized": regularized_iht, "iobs": iobs}


def _log_link_data(family, n, p, k, seed, strength=0.3):
    """Standard Gaussian ``X``, ``y`` of the family with log-mean ``X beta + 0.5`` (``beta``: ``k`` of +-strength)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:k] = rng.choice([-1.0, 1.0], k) * strength
    mu = np.exp(X @ beta + 0.5)
    y = rng.poisson(mu).astype(float) if family == "poisson" else rng.gamma(2.0, mu / 2.0)
    return X, y


@pytest.mark.parametrize("family", sorted(LOSSES))
@pytest.mark.parametrize("solver", sorted(SOLVERS))
@pytest.mark.parametrize("c", [2.0**20, 2.0**-20, 1000.0])
def test_solvers_stop_at_the_same_iterate_for_c_y(family, solver, c):
    """Without the support jump the stopping test ends the run: ``c y`` must end it at the same iteration.

    The test ``||x_t - x_{t-1}|| <= tol ||x_t||`` counted ``||b||`` in ``||x_t||``, and ``b`` shifts by
    ``log c``: before, for c = 2^20 (b about 14 instead of 0.5) every run on ``c y`` stopped iterations
    earlier, at coefficients that differ at the level of ``tol`` (not rounding). Now ``b`` is measured from
    the null model's intercept (``BaseLoss.intercept_origin``), which shifts with it: the runs on ``y`` and
    ``c y`` are the same up to rounding (the values and gradients scale with ``c`` (Poisson) or not at all
    (Gamma), the step sizes inversely).
    """
    X, y = _log_link_data(family, 150, 60, 3, seed=1)
    runs = []
    for target in (y, c * y):
        loss = LOSSES[family](X, target)
        W0, _ = loss.zeros()
        runs.append(SOLVERS[solver](loss, Hard(), 3, W0=W0, b0=loss.initial_intercept(), tol=1e-4))
    a, b = runs
    assert a.n_iter == b.n_iter
    assert_array_equal(a.support, b.support)
    # (equal up to rounding: a stop one iteration apart moves them by about tol = 1e-4, relative)
    assert_allclose(b.coef, a.coef, rtol=1e-7, atol=1e-9)
    assert_allclose(b.intercept, a.intercept + np.log(c), rtol=1e-9)


def test_intercept_origin_is_the_null_intercept_for_the_log_link_only():
    """The loss says where the stopping test measures ``b`` from: the log link's null intercept, else 0."""
    X, y = _log_link_data("gamma", 40, 5, 2, seed=0)  # (positive: a target of both losses)
    for cls in LOSSES.values():
        loss = cls(X, y)
        assert_allclose(loss.intercept_origin(), [np.log(np.mean(y))], rtol=1e-15)
        assert cls(X, y, fit_intercept=False).intercept_origin() is None
    from sparse_estimators.losses import HuberLoss, LogisticLoss, SquaredLoss

    assert SquaredLoss(X, y).intercept_origin() is None
    assert HuberLoss(X, y).intercept_origin() is None
    assert LogisticLoss(X, (y > np.median(y)).astype(float)).intercept_origin() is None


def _weighted_gamma_design(seed):
    """A Gamma design (sizes from ``seed``) with integer weights 0 to 3 and the rows they repeat."""
    rng = np.random.default_rng(seed)
    n, p, k = int(rng.integers(30, 150)), int(rng.integers(20, 200)), int(rng.integers(1, 8))
    X, y = _log_link_data("gamma", n, p, k, seed=seed, strength=0.8)
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, n).astype(float)
    w[0] = 1.0
    return X, y, w, np.repeat(np.arange(n), w.astype(int)), k


def test_gamma_iobs_route_does_not_depend_on_how_weights_are_encoded():
    """Fewer rows of positive weight than ``p + 1`` but more observations (integer weights): the Hessian
    'auto' uses is that of the repeated rows (the observed one), factored as the rows held allow."""
    X, y, w, rep, _ = _weighted_gamma_design(seed=1)
    p = X.shape[1]
    assert np.count_nonzero(w) < p + 1 <= w.sum()  # (the case: weighted rows below p + 1, observations above)
    assert rep.size >= p + 1
    assert select_hessian_route(GammaLoss(X[rep], y[rep])) == "dense"
    assert select_hessian_route(GammaLoss(X, y, w)) == "woodbury"  # (before: 'fisher', the expected Hessian)
    # unweighted rows and weights of relative importance (summing to at most the rows): 'fisher' as before
    assert select_hessian_route(GammaLoss(X, y)) == "fisher"
    assert select_hessian_route(GammaLoss(X, y, w / w.sum())) == "fisher"


@pytest.mark.parametrize(("seed", "splicing"), [(1, True), (11, False), (24, False), (26, False)])
def test_gamma_iobs_integer_weights_fit_as_repeated_rows(seed, splicing):
    """scikit-learn's convention: integer ``sample_weight`` fits as the rows repeated.

    I-OBS's 'auto' route counted the rows of positive weight: with fewer than ``p + 1`` of them but more
    repeated rows, the weights took the expected Hessian ('fisher') and the repeats the observed one,
    other iterations and, on these designs, another support (before, weights against repeats: seed 1
    [0 1 3 4 5 18] against [0 1 2 3 4 5]; without splicing, seed 11 [0 1 2 3 4 5] against
    [0 1 2 3 4 17], seed 24 [0 1 2 3 5 60] against [2 3 5 16 56 73], seed 26 [1 2 3 74] against
    [1 2 3 95]).
    """
    X, y, w, rep, k = _weighted_gamma_design(seed)
    assert np.count_nonzero(w) < X.shape[1] + 1 <= w.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a convergence warning would be both fits')
        weighted = IOBSRegressor(k, loss="gamma", splicing=splicing).fit(X, y, sample_weight=w)
        repeated = IOBSRegressor(k, loss="gamma", splicing=splicing).fit(X[rep], y[rep])
    assert_array_equal(weighted.support_, repeated.support_)
    # (the same Newton steps, factored by Woodbury on the weighted rows and densely on the repeats)
    assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-6, atol=1e-9)
    assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-6)


@pytest.mark.parametrize("family", sorted(LOSSES))
@pytest.mark.parametrize("c", [2.0**20, 2.0**-20])
@pytest.mark.parametrize("sparse", [False, True])
def test_candidate_refits_of_c_y_are_those_of_y(family, c, sparse):
    """The splicing search's approximate candidate refits stop at the same Newton step for ``c y``.

    Their rule, a decrement of at most ``CANDIDATE_DECREMENT (value_unit + |f|)``, measured ``|f|`` from 0,
    and the log link's ``f`` at ``c y`` is not in ``y``'s units (Poisson ``c f - c log(c) mean(y)``, Gamma
    ``f + log c``): before, the candidates of ``c y`` stopped at other Newton steps, coefficients apart by
    far more than rounding, which ranked the next round's exchanges otherwise (a fuzz design, IHT with
    splicing: deviance 1.00522 for ``y``, 0.97838 for ``2 y``). Now ``|f|`` is measured from the saturated
    value (``BaseLoss.value_origin``): half the deviance, which scales as the loss does. A sparse ``X`` takes
    the generic refit (``newton_minimise``, its rule ``1e-6 (value_unit + |f|)``): the same.
    """
    X, y = _log_link_data(family, 200, 30, 4, seed=3)
    if sparse:
        X = sp.csr_matrix(X)
    supports = [np.array(s) for s in ([0, 1, 2, 5], [0, 1, 3, 6], [1, 2, 3, 7], [0, 2, 3, 4])]
    results = []
    for target, shift in ((y, 0.0), (c * y, np.log(c))):
        loss = LOSSES[family](X, target)
        W, b = loss.refit(np.array([0, 1, 2, 8]), loss.zeros()[0], loss.initial_intercept())  # (the current fit)
        results.append((loss.refit_candidates(supports, W, b), shift))
    (first, _), (second, shift) = results
    for (W1, b1, _, _), (W2, b2, _, _) in zip(first, second, strict=True):
        assert_allclose(W2, W1, rtol=1e-9, atol=1e-12)  # (before: up to 5.6e-4 apart, 3 % relative)
        assert_allclose(b2, b1 + shift, rtol=1e-9)
