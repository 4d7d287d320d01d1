"""The GLMs' intercept conventions and the multinomial loss's Newton machinery.

Block Hessians, frozen Newton steps, candidate refits; the design's shared column copies.
"""


import numpy as np
import pytest
import scipy.sparse as sp
from _loss_problems import (
    FORMATS,
    K,
    P,
    Problem,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp, softmax

from sparse_estimators.losses import (
    LinearDesign,
    MultinomialLoss,
)
from sparse_estimators.losses._numerics import row_logsumexp


# --------------------------------------------------------------------------
# intercept conventions of the GLMs
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["multinomial", "multinomial_l2"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_multinomial_intercept_shift_invariance(kind, fmt):
    pb = Problem(kind, fmt)
    b = pb.b + np.array([0.3, -1.0, 2.0])
    ic = pb.loss.intercept(pb.W, b)
    assert_allclose(ic.sum(), 0.0, atol=1e-14)
    c = b - np.average(pb.Xd, axis=0, weights=pb.sw) @ pb.W  # (b is the intercept at the mean of X)
    assert_allclose(ic, c - c.mean(), rtol=1e-13)
    f = pb.loss.value(pb.W, b)
    for shift in [-3.0, 0.5, 40.0]:
        assert_allclose(pb.loss.value(pb.W, b + shift), f, rtol=1e-12)
        assert_allclose(pb.loss.intercept(pb.W, b + shift), ic, atol=1e-12)
    _, gW, gb = pb.loss.value_and_gradient(pb.W, b)
    assert abs(gb.sum()) < 1e-14  # the gradient is orthogonal to the invariant direction
    if pb.alpha == 0:
        v = np.random.RandomState(10).standard_normal((P, 1))
        assert_allclose(pb.loss.value(pb.W + v, b), f, rtol=1e-12)
        assert_allclose(gW.sum(axis=1), 0.0, atol=1e-14)


@pytest.mark.parametrize("kind", ["logistic", "multinomial"])
@pytest.mark.parametrize("weighted", [True, False])
def test_initial_intercept_is_optimal_at_zero(kind, weighted):
    pb = Problem(kind, "dense", True, weighted)
    W0, _ = pb.loss.zeros()
    b0 = pb.loss.initial_intercept()
    _, _, gb = pb.loss.value_and_gradient(W0, b0)
    assert np.max(np.abs(gb)) < 1e-12
    if kind == "multinomial":
        assert abs(b0.sum()) < 1e-12
    no_int = Problem(kind, "dense", False, weighted)
    assert_array_equal(no_int.loss.initial_intercept(), np.zeros(no_int.m))


def test_zeros_shapes():
    assert [a.shape for a in Problem("squared").loss.zeros()] == [(P, 1), (1,)]
    assert [a.shape for a in Problem("squared2").loss.zeros()] == [(P, 2), (2,)]
    assert [a.shape for a in Problem("logistic").loss.zeros()] == [(P, 1), (1,)]
    assert [a.shape for a in Problem("multinomial").loss.zeros()] == [(P, K), (K,)]


@pytest.mark.parametrize("alpha", [0.0, 0.3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("m", [2, 3, 6])
def test_multinomial_block_hessian_and_solve_match_the_generic_ones(alpha, fit_intercept, m):
    """The dense refit's Hessian (two products; one product per pair of classes up to
    ``_policy.PAIR_CLASSES`` classes) and Cholesky solve (softmax shifts projected) against the generic
    per-class-pair Hessian and the SVD minimum-norm solve (issue 26: 30 classes took 2 s)."""
    from sparse_estimators import _policy
    from sparse_estimators.losses._numerics import min_norm_solve

    assert (m <= _policy.PAIR_CLASSES) == (m < 6)  # (both routes of block_hessian are tested)
    rng = np.random.RandomState(3)
    n, p = 80, 4
    X = rng.standard_normal((n, p))
    y = rng.randint(0, m, n)
    sw = rng.uniform(0.5, 2.0, n)
    loss = MultinomialLoss(X, y, m, sample_weight=sw, fit_intercept=fit_intercept, alpha=alpha)
    W, b = 0.3 * rng.standard_normal((p, m)), 0.2 * rng.standard_normal(m)
    H_ref = loss.hessian(W, b)
    # (with an intercept the design is centred, and b is a variable: a column of ones)
    A = np.hstack([X - loss.design.offset, np.ones((n, 1))]) if fit_intercept else X
    H = loss._block_hessian(A, loss.linear_predictor(W, b), sw / sw.sum())
    H[np.arange(p * m), np.arange(p * m)] += alpha
    assert_allclose(H, H_ref, rtol=1e-12, atol=1e-14)
    g = H_ref @ rng.standard_normal(H_ref.shape[0])  # a gradient lies in the Hessian's range
    # the solutions are unique modulo the softmax shifts (the Hessian's null space): compared there, and
    # each is the minimum-norm one (no component along the shifts) by test_newton_solves_have_no_shift_component
    ours, ref = loss._solve_newton(H_ref, g), min_norm_solve(H_ref, g)
    shifts = _softmax_shifts(p + int(fit_intercept), m, alpha, fit_intercept)
    assert_allclose(ours - shifts @ (shifts.T @ ours), ref - shifts @ (shifts.T @ ref), rtol=1e-9, atol=1e-11)


def _softmax_shifts(q, m, alpha, fit_intercept):
    """Orthonormal basis of the multinomial Hessian's null space over ``[W.ravel(), b]`` (``q`` rows of m)."""
    rows = range(q) if alpha == 0 else [q - 1] if fit_intercept else []
    basis = np.zeros((q * m, len(rows)))
    for col, j in enumerate(rows):
        basis[j * m:(j + 1) * m, col] = 1.0 / np.sqrt(m)
    return basis


@pytest.mark.parametrize("alpha", [0.0, 0.3])
@pytest.mark.parametrize("seed", range(6))
def test_newton_solves_have_no_shift_component(alpha, seed):
    """Issue 32 item 11: the Newton step on the singular multinomial Hessian moved along the softmax shifts by
    the gradient's rounding over a null eigenvalue computed at ~4e-16, an amount that depended on the BLAS
    kernel (the suite failed under OPENBLAS_CORETYPE=Prescott): both solves now return the minimum-norm step."""
    from sparse_estimators.losses._numerics import min_norm_solve

    rng = np.random.RandomState(seed)
    n, p, m = 80, 4, 6
    X = rng.standard_normal((n, p)) + rng.uniform(-3, 3, p)
    loss = MultinomialLoss(X, rng.randint(0, m, n), m, sample_weight=rng.uniform(0.5, 2.0, n), alpha=alpha)
    H = loss.hessian(0.3 * rng.standard_normal((p, m)), 0.2 * rng.standard_normal(m))
    g = H @ rng.standard_normal(H.shape[0])
    shifts = _softmax_shifts(p + 1, m, alpha, True)
    for x in (loss._solve_newton(H, g), min_norm_solve(H, g)):
        np.testing.assert_allclose(H @ x, g, atol=1e-10 * np.linalg.norm(g))
        assert np.linalg.norm(shifts.T @ x) <= 1e-12 * np.linalg.norm(x)


@pytest.mark.parametrize("alpha", [0.0, 0.3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multinomial_curvature_operator_matches_the_generic_hessian(alpha, fit_intercept):
    """Issue 33 item 1: the Hessian-vector product (and the operator's dense form) of the dense multinomial refit
    against the generic per-class-pair Hessian of :meth:`MultinomialLoss.hessian`."""

    from sparse_estimators.losses._softmax_newton import SoftmaxCurvature

    rng = np.random.RandomState(5)
    n, p, m = 90, 5, 4
    X = rng.standard_normal((n, p)) + rng.uniform(-2, 2, p)
    sw = rng.uniform(0.5, 2.0, n)
    loss = MultinomialLoss(X, rng.randint(0, m, n), m, sample_weight=sw, fit_intercept=fit_intercept, alpha=alpha)
    W, b = 0.3 * rng.standard_normal((p, m)), 0.2 * rng.standard_normal(m)
    H_ref = loss.hessian(W, b)
    A = np.hstack([X - loss.design.offset, np.ones((n, 1))]) if fit_intercept else X
    op = SoftmaxCurvature(A, softmax(loss.linear_predictor(W, b), axis=1), sw / sw.sum(), alpha, p)
    assert_allclose(op.dense(), H_ref, rtol=1e-12, atol=1e-14)
    for _ in range(3):
        v = rng.standard_normal(H_ref.shape[0])
        assert_allclose(op.dot(v), H_ref @ v, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_frozen_newton_step_solves_the_system_with_an_old_preconditioner(alpha):
    """Issue 33 item 1: a Newton step by conjugate gradients preconditioned with the factor of the Hessian at
    another point solves ``H x = g`` to the forcing tolerance, with no component along the softmax shifts."""

    from sparse_estimators.losses._softmax_newton import FrozenNewtonSolver, SoftmaxCurvature

    rng = np.random.RandomState(7)
    n, p, m = 200, 6, 5
    X = rng.standard_normal((n, p))
    loss = MultinomialLoss(X, rng.randint(0, m, n), m, alpha=alpha)
    A = np.hstack([X - loss.design.offset, np.ones((n, 1))])
    sw = np.full(n, 1.0 / n)
    W0 = 0.3 * rng.standard_normal((p + 1, m))
    W1 = W0 + 0.1 * rng.standard_normal((p + 1, m))  # (a Newton step away)
    old = SoftmaxCurvature(A, softmax(A @ W0, axis=1), sw, alpha, p).dense()
    op = SoftmaxCurvature(A, softmax(A @ W1, axis=1), sw, alpha, p)
    H = op.dense()
    g = H @ rng.standard_normal(H.shape[0])
    solver = FrozenNewtonSolver(loss._factorize_newton, loss._solve_newton, loss._project_shifts,
                                loss._factorize_newton(old))
    solver.first = np.linalg.norm(g) * 1e3  # (the forcing term then asks 1e-3 of |g|)
    x = solver(op, g)
    assert solver.n_hessians == 0  # (conjugate gradients, not a new Hessian)
    assert np.linalg.norm(H @ x - g) <= 1e-3 * np.linalg.norm(g)
    shifts = _softmax_shifts(p + 1, m, alpha, True)
    assert np.linalg.norm(shifts.T @ x) <= 1e-12 * np.linalg.norm(x)
    assert np.linalg.norm(H @ x - g) > 0  # (inexact: the dense solve gives rounding)


@pytest.mark.parametrize("m", [3, 6])
@pytest.mark.parametrize("weighted", [False, True])
def test_multinomial_dense_refit_equals_the_direct_newton_minimiser(m, weighted):
    """The dense refit (Newton steps by preconditioned conjugate gradients, the labels' terms computed once,
    steps of 0 below the gradient's rounding) reaches the minimiser of the generic refit on a CSR X (a dense
    Hessian and a direct solve at every Newton step), on a strictly convex problem (alpha > 0), to 1e-8,
    with both routes of the block Hessian (pairs of classes up to 5 classes)."""

    rng = np.random.RandomState(21 + m)
    n, p = 3000, 12
    X = rng.standard_normal((n, p)) + rng.uniform(-2, 2, p)
    W_true = np.zeros((p, m))
    W_true[:6] = rng.standard_normal((6, m))
    y = np.argmax(X @ W_true + rng.gumbel(size=(n, m)), axis=1)
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    support = np.array([0, 1, 2, 3, 4, 7, 9])
    dense = MultinomialLoss(X, y, m, sample_weight=sw, alpha=1e-3)
    generic = MultinomialLoss(sp.csr_matrix(X), y, m, sample_weight=sw, alpha=1e-3)
    W0, b0 = dense.zeros()
    W0[support] = 0.1 * rng.standard_normal((support.size, m))
    W_d, b_d = dense.refit(support, W0, b0)
    W_g, b_g = generic.refit(support, W0, b0)
    assert_allclose(W_d, W_g, rtol=0, atol=1e-8)
    assert_allclose(dense.intercept(W_d, b_d), generic.intercept(W_g, b_g), rtol=0, atol=1e-8)
    _, gW, gb = dense.value_and_gradient(W_d, b_d)  # (the minimiser: a gradient at rounding level)
    assert np.abs(gW[support]).max() < 1e-10 and np.abs(gb).max() < 1e-10


def test_frozen_newton_step_is_zero_below_the_gradient_rounding():
    """A gradient below the rounding of the terms it is the difference of gives the step 0, with no
    Hessian-vector product and no Hessian (conjugate gradients on rounding alone ran out of their budget and
    formed a Hessian: 150 ms of a 10-class fit)."""

    from sparse_estimators._policy import GRADIENT_ROUNDING
    from sparse_estimators.losses._softmax_newton import FrozenNewtonSolver, SoftmaxCurvature

    rng = np.random.RandomState(8)
    n, p, m = 200, 4, 3
    X = rng.standard_normal((n, p))
    loss = MultinomialLoss(X, rng.randint(0, m, n), m, alpha=1e-3)
    A = np.hstack([X - loss.design.offset, np.ones((n, 1))])
    op = SoftmaxCurvature(A, softmax(A @ (0.3 * rng.standard_normal((p + 1, m))), axis=1), np.full(n, 1.0 / n),
                          1e-3, p)
    products = []
    op_dot = op.dot
    op.dot = lambda v: products.append(1) or op_dot(v)
    solver = FrozenNewtonSolver(loss._factorize_newton, loss._solve_newton, loss._project_shifts,
                                loss._factorize_newton(op.dense()), gradient_scale=0.5)
    solver.first = 1e-2
    g = op.dense() @ rng.standard_normal((p + 1) * m)  # (in the Hessian's range)
    g *= 0.9 * GRADIENT_ROUNDING * np.finfo(float).eps * 0.5 / np.linalg.norm(g)
    assert not np.any(solver(op, g)) and not products and solver.n_hessians == 0
    g *= 100.0  # (above the rounding: a conjugate-gradient step)
    x = solver(op, g)
    assert products and solver.n_hessians == 0 and np.linalg.norm(x) > 0


@pytest.mark.parametrize("m, alpha", [(8, 0.0), (3, 1e-4)])
def test_multinomial_candidate_refits_form_one_hessian_per_round(monkeypatch, m, alpha):
    """Issue 33 item 1: the splicing search's candidate refits formed the (q m)^2 Hessian at every Newton step of
    every candidate (77 % of a 10-class fit); now one Hessian over the candidates' union per round, and each
    candidate starts at the quadratic model's minimiser (its removed features at 0). The values are those of
    precise refits one by one (to the 1e-12 the candidates' comparison needs)."""
    from sparse_estimators.losses import _softmax_newton

    rng = np.random.RandomState(11)
    n, p, k = 2000, 16, 8
    X = rng.standard_normal((n, p))
    W_true = np.zeros((p, m))
    W_true[:k] = rng.standard_normal((k, m))
    y = np.argmax(X @ W_true + rng.gumbel(size=(n, m)), axis=1)
    loss = MultinomialLoss(X, y, m, alpha=alpha)
    W, b = loss.refit(np.arange(k), *loss.zeros())
    supports = [np.sort(np.concatenate([np.arange(c, k), np.arange(k, k + c)])) for c in range(1, 5)]
    calls = []
    original = _softmax_newton.block_hessian
    monkeypatch.setattr(_softmax_newton, "block_hessian", lambda *a: calls.append(1) or original(*a))
    import sparse_estimators.losses._logistic as logistic_module
    monkeypatch.setattr(logistic_module, "block_hessian", _softmax_newton.block_hessian)
    results = loss.refit_candidates(supports, W, b)
    # (one for the union; at most one candidate forming its own; with 3 classes and 9 columns conjugate
    # gradients have a budget of 3 products and a candidate or two form their own)
    assert len(calls) <= (2 if m == 8 else 3)
    for support, (W_c, b_c, f_c, Z_c) in zip(supports, results, strict=True):
        W_ref, b_ref = loss.refit(support, W, b)
        f_ref = loss.value(W_ref, b_ref)
        assert f_ref - 1e-14 * (1 + f_ref) <= f_c <= f_ref + 1e-12 * (1 + f_ref)  # (the minimum, to rounding)
        assert_allclose(Z_c, loss.linear_predictor(W_c, b_c), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["C", "F", "csr", "float32"])
@pytest.mark.parametrize("m", [1, 3, 7])
def test_multinomial_gradient_pass_equals_the_design_product(kind, m):
    """The multinomial gradient's pass over X as ``(R^T X)^T`` (2 to 3 times faster on a C-ordered X) gives
    the design's centred product ``(X - 1 o^T)^T R`` with constant columns at 0, on every kind of X."""

    from sparse_estimators.losses._softmax_newton import class_rmatvec

    rng = np.random.RandomState(4)
    n, p = 60, 9
    X = rng.standard_normal((n, p)) + rng.uniform(-3, 3, p)
    X[:, 4] = 2.5  # (a constant column: its product is exactly 0)
    R = rng.standard_normal((n, m))
    Xk = {"C": X, "F": np.asfortranarray(X), "csr": sp.csr_matrix(X), "float32": X.astype(np.float32)}[kind]
    offset = X.mean(axis=0)
    constant = np.zeros(p, dtype=bool)
    constant[4] = True
    G = class_rmatvec(LinearDesign(Xk, offset, constant), R)
    expected = (X - offset).T @ R
    expected[4] = 0.0
    assert G.dtype == np.float64 and G.shape == (p, m)
    assert_allclose(G, expected, rtol=1e-5 if kind == "float32" else 1e-12, atol=1e-4 if kind == "float32" else 1e-12)
    assert np.all(G[4] == 0.0)


def test_design_shares_the_last_copy_of_a_few_columns():
    """Issue 33 cost (b): copying the support's columns out of a C-ordered X was 28-31 % of a fit at n = 1e5,
    repeated at every iteration and refit on the same support; the last copy of at most p / 4 columns is now
    shared (the same array, equal to X[:, support]), and a copy of more columns is not kept."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((50, 40))
    design = LinearDesign(X, X.mean(axis=0))
    support = np.array([3, 7, 21])
    first = design.columns(support)
    assert_array_equal(first.X, X[:, support])
    assert design.columns(support).X is first.X
    mask = np.zeros(40, dtype=bool)
    mask[support] = True
    assert design.columns(mask).X is first.X  # (a boolean mask names the same columns)
    W = np.zeros((40, 2))
    W[support] = rng.standard_normal((3, 2))
    assert_allclose(design.matvec(W), (X - X.mean(axis=0)) @ W, rtol=1e-12, atol=1e-12)
    assert design.columns(support, dtype=None).X is first.X  # (float64 X: the same columns in X's dtype)
    other = design.columns(np.array([1, 2]))
    assert other.X is not first.X and design.columns(support).X is not first.X  # (one copy kept)
    wide = np.arange(11)
    assert design.columns(wide).X is not design.columns(wide).X  # (more than p / 4 columns: not kept)
    single = LinearDesign(X.astype(np.float32))
    assert single.columns(support, dtype=None).X.dtype == np.float32
    assert single.columns(support).X.dtype == np.float64  # (not the float32 copy kept before)
    assert single.columns(support, dtype=None).X.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_logsumexp_is_scipys(dtype):
    # the multinomial loss's value takes scipy's algorithm without its array-API layer (bit for bit on the machine
    # it was measured on; here to a few ulps, as numpy's exp may round differently by memory alignment), with ties,
    # infinite and NaN entries handled as scipy does, and against a direct log(sum(exp)) on moderate values
    rng = np.random.default_rng(0)
    for scale in (1e-3, 1.0, 30.0, 800.0):
        Z = (rng.standard_normal((60, 7)) * scale).astype(dtype)
        Z[rng.random(Z.shape) < 0.2] = Z[0, 0]  # (ties with the row maximum)
        Z[1] = -np.inf
        Z[2, 3] = np.inf
        Z[3, 1] = np.nan
        Z[4, :2] = [np.inf, -np.inf]
        with np.errstate(all="ignore"):
            expected = logsumexp(Z, axis=1)
        got = row_logsumexp(Z)
        assert got.dtype == expected.dtype == dtype
        assert_array_equal(np.isfinite(got), np.isfinite(expected))
        assert_array_equal(got[~np.isfinite(got)], expected[~np.isfinite(expected)])
        finite = np.isfinite(got)
        assert_allclose(got[finite], expected[finite], rtol=8 * np.finfo(dtype).eps, atol=0)
    Z = rng.standard_normal((50, 4))
    assert_allclose(row_logsumexp(Z), np.log(np.exp(Z).sum(axis=1)), rtol=1e-14)
