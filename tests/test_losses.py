"""Unit tests of the losses, the implicit design and power iteration.

References are independent of the package: explicit formulas on a dense
copy of the data (weighted means, explicit centering, sklearn's log_loss),
finite differences, numpy.linalg.eigvalsh of explicitly formed Gram
matrices, scikit-learn's LinearRegression / LogisticRegression, and
invariances (row duplication versus integer weights, softmax shifts).
"""


import numpy as np
import pytest
import scipy.sparse as sp
from _loss_problems import (
    ALL_CASES,
    ALL_IDS,
    CURVATURE,
    FORMATS,
    P,
    Problem,
    rel_err,
    to_format,
)
from numpy.testing import assert_allclose

from sparse_estimators.losses import (
    LogisticLoss,
    MultinomialLoss,
    SquaredLoss,
    power_iteration,
)


@pytest.fixture(params=ALL_CASES, ids=ALL_IDS)
def problem(request):
    return Problem(*request.param)


# --------------------------------------------------------------------------
# value, gradient, Hessian
# --------------------------------------------------------------------------
def test_value_matches_definition(problem):
    pb = problem
    for W, b in [(pb.W, pb.b), (np.zeros_like(pb.W), pb.b), (3 * pb.W, -pb.b)]:
        assert_allclose(pb.loss.value(W, b), pb.reference_value(W, b), rtol=1e-10)
        f, _, _ = pb.loss.value_and_gradient(W, b)
        assert_allclose(f, pb.reference_value(W, b), rtol=1e-10)
        Z = pb.loss.linear_predictor(W, b)
        assert_allclose(pb.loss.value_from_z(Z, W), pb.reference_value(W, b), rtol=1e-10)


def test_gradient_matches_finite_differences(problem):
    pb = problem
    theta = pb.pack(pb.W, pb.b)
    g = pb.packed_gradient(theta)
    h = 1e-6
    g_fd = np.empty_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = h
        g_fd[i] = (pb.loss.value(*pb.unpack(theta + e)) - pb.loss.value(*pb.unpack(theta - e))) / (2 * h)
    assert rel_err(g, g_fd) < 1e-6
    _, gW, gb = pb.loss.value_and_gradient(pb.W, pb.b)
    assert gW.shape == pb.W.shape
    if pb.fam == "squared":
        assert gb is None
    elif not pb.fit_intercept:
        # the intercept is not a variable: it must not move
        assert gb is None or np.all(gb == 0)


def test_hessp_matches_finite_differences_of_gradient(problem):
    pb = problem
    rng = np.random.RandomState(1)
    theta = pb.pack(pb.W, pb.b)
    h = 1e-5
    for _ in range(3):
        v = rng.standard_normal(theta.size)
        hv = pb.packed_hessp(theta, v)
        hv_fd = (pb.packed_gradient(theta + h * v) - pb.packed_gradient(theta - h * v)) / (2 * h)
        assert rel_err(hv, hv_fd) < 1e-6


def test_divergence_from_z_is_the_bregman_divergence(problem):
    """Least squares: f(W') - f(W) - <grad f(W), W' - W> = (W' - W)^T H (W' - W) / 2, with H the explicit
    weighted Gram of the centered design; computed from the two linear predictors. Other losses: None."""
    pb = problem
    W2 = pb.W + 0.7 * np.random.RandomState(2).standard_normal(pb.W.shape)
    Z, Z2 = pb.loss.linear_predictor(pb.W, pb.b), pb.loss.linear_predictor(W2, pb.b)
    divergence = pb.loss.divergence_from_z(Z, Z2)
    if pb.fam != "squared":
        assert divergence is None
        return
    A = pb.design_matrix()
    D = A @ (W2 - pb.W)
    expected = 0.5 * float(pb.sw @ np.einsum("ij,ij->i", D, D)) / pb.sw.sum()
    assert expected > 0.01
    assert_allclose(divergence, expected, rtol=1e-12)
    # and it is what the values and the gradient give (no cancellation at this distance)
    f, gW, _ = pb.loss.value_and_gradient(pb.W, pb.b)
    assert_allclose(divergence, pb.reference_value(W2, pb.b) - f - np.vdot(gW, W2 - pb.W), rtol=1e-9)


def test_feature_curvatures_are_the_hessian_diagonal(problem):
    """feature_curvatures(Z, features) is the diagonal of the Hessian (from hessp) in those coefficients."""
    pb = problem
    theta = pb.pack(pb.W, pb.b)
    features = np.array([0, 2, P - 1])
    got = pb.loss.feature_curvatures(pb.loss.linear_predictor(pb.W, pb.b), features)
    assert got.shape == (features.size, pb.m)
    for i, j in enumerate(features):
        for a in range(pb.m):
            e = np.zeros(theta.size)
            e[j * pb.m + a] = 1.0
            assert_allclose(got[i, a], pb.packed_hessp(theta, e)[j * pb.m + a], rtol=1e-10)


# (the multi-output squared Hessian is the shared per-output (p, p) block: tested separately)
@pytest.mark.parametrize("case", [c for c in ALL_CASES if c[0] not in ("squared2", "gram2")],
                         ids=[i for c, i in zip(ALL_CASES, ALL_IDS, strict=True) if c[0] not in ("squared2", "gram2")])
def test_hessian_equals_hessp_on_identity_columns(case):
    pb = Problem(*case)
    theta = pb.pack(pb.W, pb.b)
    d = theta.size
    H_cols = np.column_stack([pb.packed_hessp(theta, e) for e in np.eye(d)])
    H = pb.loss.hessian(pb.W, pb.b)
    assert H.shape == (d, d)
    assert_allclose(H, H_cols, rtol=1e-10, atol=1e-12 * np.abs(H_cols).max())
    assert_allclose(H, H.T, rtol=0, atol=1e-13 * np.abs(H).max())
    # all three losses are convex
    assert np.linalg.eigvalsh(H).min() >= -1e-12 * np.abs(H).max()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_squared_hessian_is_explicit_centered_gram(fmt, fit_intercept, weighted):
    pb = Problem("squared", fmt, fit_intercept, weighted)
    Xc = pb.Xd - np.average(pb.Xd, axis=0, weights=pb.sw) if fit_intercept else pb.Xd
    H_ref = Xc.T @ (pb.sw[:, None] * Xc) / pb.sw.sum()
    assert_allclose(pb.loss.hessian(pb.W, pb.b), H_ref, rtol=1e-10, atol=1e-13)
    assert_allclose(pb.loss.hessian(), H_ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("fmt", FORMATS)
def test_squared_multioutput_hessian_is_shared_block(fmt):
    # each output has the same (p, p) Hessian: hessp acts column by column
    pb = Problem("squared2", fmt)
    H = pb.loss.hessian(pb.W, pb.b)
    assert H.shape == (P, P)
    V = np.random.RandomState(2).standard_normal((P, 2))
    HV, _ = pb.loss.hessp(pb.W, pb.b, V, np.zeros(2))
    assert_allclose(HV, H @ V, rtol=1e-10)


# --------------------------------------------------------------------------
# smoothness constant
# --------------------------------------------------------------------------
def test_lipschitz_bounds_true_lambda_max(problem):
    pb = problem
    Xt = pb.design_matrix()
    G = Xt.T @ (pb.sw[:, None] * Xt) / pb.sw.sum()
    L_true = CURVATURE[pb.fam] * np.linalg.eigvalsh(G)[-1] + pb.alpha
    L = pb.loss.lipschitz()
    assert L >= L_true
    assert L <= L_true * (1 + 1e-3)
    assert pb.loss.lipschitz() == L  # cached, deterministic
    # and it bounds the actual curvature at several points
    if pb.kind != "squared2":
        rng = np.random.RandomState(3)
        for scale in [0.0, 0.3, 3.0]:
            W = scale * rng.standard_normal(pb.W.shape)
            b = scale * rng.standard_normal(pb.m)
            assert np.linalg.eigvalsh(pb.loss.hessian(W, b))[-1] <= L * (1 + 1e-12)


def _close_top_eigenvalues_design(gap, n=200, p=20, seed=0):
    Q, _ = np.linalg.qr(np.random.RandomState(seed).standard_normal((n, p)))
    spectrum = np.linspace(0.5, 1.0 - gap, p)
    spectrum[-1] = 1.0
    return Q * np.sqrt(spectrum * n)  # X^T X / n has eigenvalues `spectrum`


def test_lipschitz_upper_bound_with_close_top_eigenvalues():
    # plain power iteration (stopping on a small change of the Rayleigh quotient)
    # returned up to 1 % below lambda_max on these designs
    rng = np.random.RandomState(4)
    designs = [_close_top_eigenvalues_design(gap) for gap in [1e-2, 1e-3, 1e-4]]
    # eigenvalues 1 and 0.99 on top, the top eigenvector almost orthogonal to the
    # start vector of the iteration: plain power iteration settles on 0.99
    p, n = 20, 100
    v0 = np.random.RandomState(0).standard_normal(p)
    v0 /= np.linalg.norm(v0)
    u = np.random.RandomState(1).standard_normal(p)
    u -= (u @ v0) * v0
    u = u / np.linalg.norm(u) + 1e-3 * v0
    U, _ = np.linalg.qr(np.column_stack([u, np.random.RandomState(2).standard_normal((p, p - 1))]))
    spectrum = np.concatenate([[1.0, 0.99], np.linspace(0.3, 0.9, p - 2)])
    Qn, _ = np.linalg.qr(np.random.RandomState(3).standard_normal((n, p)))
    designs.append((Qn * np.sqrt(spectrum * n)) @ U.T)
    for X in designs:
        lam = np.linalg.eigvalsh(X.T @ X / X.shape[0])[-1]
        L = SquaredLoss(X, rng.standard_normal(X.shape[0]), fit_intercept=False).lipschitz()
        assert lam <= L <= lam * (1 + 1e-3)


@pytest.mark.parametrize("family", ["squared", "logistic", "multinomial"])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_lipschitz_bounds_lambda_max_many_features(family, fmt, fit_intercept):
    # p = 40: large enough for the iterative eigenvalue path
    n, p = 60, 40
    rng = np.random.RandomState(12)
    X = rng.standard_normal((n, p)) * rng.uniform(0.2, 2, size=p) + rng.uniform(-1, 1, size=p)
    X[rng.rand(n, p) < 0.5] = 0.0
    sw = rng.uniform(0.2, 3, size=n)
    Xf = to_format(X, fmt)
    if family == "squared":
        loss = SquaredLoss(Xf, rng.standard_normal(n), sample_weight=sw, fit_intercept=fit_intercept)
        Xt = X - np.average(X, axis=0, weights=sw) if fit_intercept else X
    else:
        if family == "logistic":
            loss = LogisticLoss(Xf, rng.randint(0, 2, n), sample_weight=sw, fit_intercept=fit_intercept, alpha=0.05)
        else:
            loss = MultinomialLoss(Xf, rng.randint(0, 3, n), 3, sample_weight=sw, fit_intercept=fit_intercept,
                                   alpha=0.05)
        Xt = np.column_stack([X - np.average(X, axis=0, weights=sw), np.ones(n)]) if fit_intercept else X
    G = Xt.T @ (sw[:, None] * Xt) / sw.sum()
    L_true = CURVATURE[family] * np.linalg.eigvalsh(G)[-1] + loss.alpha
    assert L_true <= loss.lipschitz() <= L_true * (1 + 1e-3)




@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize(("family", "p", "expected"), [
    ("squared", 5, 0.0), ("logistic_noint", 5, 0.0), ("logistic", 5, 0.25),
    pytest.param("squared", 20, 0.0),
    pytest.param("logistic_noint", 20, 0.0),
    ("logistic", 20, 0.25),  # the intercept column alone: Gram eigenvalue 1, times 1/4
])
def test_lipschitz_of_an_all_zero_design(fmt, family, p, expected):
    n = 30
    X = np.zeros((n, p)) if fmt == "dense" else sp.csr_matrix((n, p))
    y = np.arange(n) % 2
    if family == "squared":
        loss = SquaredLoss(X, y.astype(float))
    else:
        loss = LogisticLoss(X, y, fit_intercept=family == "logistic")
    L = loss.lipschitz()
    assert expected <= L <= expected * (1 + 1e-3) + 1e-12


def test_power_iteration_explicit_matrix():
    rng = np.random.RandomState(5)
    Q, _ = np.linalg.qr(rng.standard_normal((15, 15)))
    evals = np.concatenate([[4.0, 2.0], rng.uniform(0, 1.5, 13)])
    A = (Q * evals) @ Q.T
    lam = power_iteration(lambda v: A @ v, 15)
    assert 4.0 <= lam <= 4.0 * (1 + 1e-5)
    assert power_iteration(lambda v: A @ v, 15) == lam  # deterministic
    assert power_iteration(lambda v: A @ v, 0) == 0.0
    assert power_iteration(lambda v: np.zeros_like(v), 7) == 0.0
