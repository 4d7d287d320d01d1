"""The shortcuts of the small Poisson / Gamma fits give what the direct computations give.

The per-fit overhead of ``IHTRegressor(loss='poisson' | 'gamma')`` at
n = 200, p = 100 was cut by computing some quantities once or in fewer NumPy
calls (doc/changelog.rst). Each test here recomputes such a quantity the
direct way (LAPACK's Cholesky and its pivots, the centred columns, abess's
threshold formula, the l2 term) and compares.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import lapack

from sparse_estimators.losses import GammaLoss, PoissonLoss
from sparse_estimators.losses._numerics import min_norm_solve
from sparse_estimators.losses._pointwise_newton import cholesky_solve
from sparse_estimators.solvers._splice_abess import _abess_threshold

LOSSES = {"poisson": PoissonLoss, "gamma": GammaLoss}


def _data(family, n=120, p=30, seed=0, dtype=np.float64):
    rng = np.random.RandomState(seed)
    X = (rng.standard_normal((n, p)) + 3.0).astype(dtype)  # (means away from 0: the centring matters)
    eta = 0.3 * (X[:, 2] - 3.0) - 0.2 * (X[:, 7] - 3.0) + 0.5
    y = rng.poisson(np.exp(eta)).astype(float) if family == "poisson" else rng.gamma(4.0, np.exp(eta) / 4.0)
    return X, y


def _explicit_pivot_test(H, g):
    """The previous form of cholesky_solve's test: every squared pivot above 1e-10 of its diagonal entry."""
    L, x, info = lapack.dposv(H, g, lower=1)
    return info == 0 and bool((L.diagonal() ** 2 > 1e-10 * H.diagonal()).all()), x


@pytest.mark.parametrize("gap", [1e-9, 2e-10, 5e-11, 1e-11, 0.0])
def test_cholesky_solve_pivot_test_at_its_boundary(gap):
    # the last pivot of [[1, 1], [1, 1 + gap]] is sqrt(gap) to rounding: the Cholesky solution above the
    # 1e-10 ratio, the minimum-norm one below it (gap 0 is singular); decided as the explicit test decides
    H = np.array([[1.0, 1.0], [1.0, 1.0 + gap]])
    g = np.array([1.0, 2.0])
    cholesky, x = _explicit_pivot_test(H, g)
    assert cholesky == (gap > 1e-10)
    expected = x if cholesky else min_norm_solve(H, g)
    assert_array_equal(cholesky_solve(H, g), expected)


def test_cholesky_solve_on_a_hessian_and_a_singular_one():
    rng = np.random.RandomState(0)
    A = rng.standard_normal((50, 6))
    H, g = A.T @ A, rng.standard_normal(6)
    assert_allclose(H @ cholesky_solve(H, g), g, rtol=1e-10, atol=1e-12)
    A[:, 5] = A[:, 4]  # (two equal columns: the minimum-norm solution splits their weight evenly)
    H = A.T @ A
    x = cholesky_solve(H, g)
    assert_array_equal(x, min_norm_solve(H, g))
    assert abs(x[4] - x[5]) <= 1e-8 * np.abs(x).max()


@pytest.mark.parametrize("family", sorted(LOSSES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_refit_columns_are_the_centred_columns(family, dtype, fit_intercept):
    X, y = _data(family, dtype=dtype)
    loss = LOSSES[family](X, y, fit_intercept=fit_intercept)
    support = np.array([1, 2, 7, 20])
    A = loss._refit_columns(support)
    columns = X[:, support].astype(np.float64)
    if fit_intercept:  # (centred at the column means, then a column of ones for the intercept)
        offset = X.astype(np.float64).mean(axis=0)[support]
        # (a float32 X's means are its float32 products with the weights: to float32's rounding)
        assert_allclose(A[:, :-1], columns - offset, rtol=0, atol=1e-12 if dtype == np.float64 else 1e-5)
        assert_array_equal(A[:, :-1], columns - loss.design.offset[support])
        assert_array_equal(A[:, -1], 1.0)
    else:
        assert_array_equal(A, columns)
    assert A.dtype == np.float64 and A.flags.c_contiguous


def test_abess_threshold_is_its_formula_per_loss_and_k():
    # computed once per (k, outputs, features, observations): two losses of other sizes get their own values;
    # in the loss's unit (Poisson's: the null model's dispersion)
    values = []
    for n, p, k in ((200, 100, 5), (500, 300, 10), (200, 100, 7), (150, 100, 5)):
        X, y = _data("poisson", n=n, p=p)
        loss = PoissonLoss(X, y)
        expected = 0.01 * k * math.log(p) * math.log(math.log(n)) / n * loss.value_unit
        for _ in range(2):  # (the second call reads the stored value)
            assert_allclose(_abess_threshold(loss, k), expected, rtol=1e-14)
        values.append(_abess_threshold(loss, k))
    assert len(set(values)) == 4


@pytest.mark.parametrize("family", sorted(LOSSES))
def test_value_and_gradient_add_the_l2_term_only_when_alpha_is_positive(family):
    X, y = _data(family)
    W = np.zeros((X.shape[1], 1))
    W[[2, 7, 11], 0] = [0.2, -0.1, 0.05]
    b = np.array([0.4])
    plain, ridge = LOSSES[family](X, y), LOSSES[family](X, y, alpha=0.3)
    Z = plain.linear_predictor(W, b)
    assert_array_equal(Z, ridge.linear_predictor(W, b))
    assert_allclose(ridge.value_from_z(Z, W), plain.value_from_z(Z, W) + 0.15 * float(W[:, 0] @ W[:, 0]),
                    rtol=1e-14)
    (g0, gb0), (g1, gb1) = plain.gradient_from_z(Z, W), ridge.gradient_from_z(Z, W)
    assert_allclose(g1, g0 + 0.3 * W, rtol=1e-14, atol=1e-15)
    assert_array_equal(gb0, gb1)
    # the gradient without the l2 term: the centred columns against the pointwise derivative, averaged
    Xc = X - X.mean(axis=0)
    mu = np.exp(Z[:, 0])
    d = mu - y if family == "poisson" else 1.0 - y / mu
    assert_allclose(g0[:, 0], Xc.T @ d / X.shape[0], rtol=1e-10, atol=1e-13)

