"""Unit tests of the losses, the implicit design and power iteration.

References are independent of the package: explicit formulas on a dense
copy of the data (weighted means, explicit centering, sklearn's log_loss),
finite differences, numpy.linalg.eigvalsh of explicitly formed Gram
matrices, scikit-learn's LinearRegression / LogisticRegression, and
invariances (row duplication versus integer weights, softmax shifts).
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit, softmax
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import log_loss

from sparse_estimators.losses import (
    GramSquaredLoss,
    LinearDesign,
    LogisticLoss,
    MultinomialLoss,
    SquaredLoss,
    power_iteration,
)

N, P, K = 40, 6, 3
KINDS = ["squared", "squared2", "gram", "gram2", "logistic", "logistic_l2", "multinomial", "multinomial_l2"]
FORMATS = ["dense", "csr", "csc"]
CURVATURE = {"squared": 1.0, "logistic": 0.25, "multinomial": 0.5}


# --------------------------------------------------------------------------
# problem factory
# --------------------------------------------------------------------------
def base_family(kind):
    """'squared', 'logistic' or 'multinomial' ('gram': least squares through the Gram matrix)."""
    family = kind.rstrip("2").replace("_l", "")
    return "squared" if family == "gram" else family


def make_data(seed=0, n=N, p=P):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[rng.rand(n, p) < 0.4] = 0.0  # a real sparsity pattern for the sparse formats
    X[:, 1] += 1.5  # a column with a large mean: centering matters
    w = rng.standard_normal(p)
    y_reg = X @ w + 0.7 + 0.3 * rng.standard_normal(n)
    Y_reg2 = np.column_stack([y_reg, -2.0 * y_reg + rng.standard_normal(n)])
    y_bin = (rng.rand(n) < expit(0.8 * (X @ w) - 0.4)).astype(float)
    scores = X @ rng.standard_normal((p, K)) * 0.7 + rng.gumbel(size=(n, K))
    y_multi = np.argmax(scores, axis=1)
    sw = rng.uniform(0.2, 3.0, size=n)
    return X, {"squared": y_reg, "squared2": Y_reg2, "logistic": y_bin, "multinomial": y_multi}, sw


def to_format(X, fmt):
    if fmt == "dense":
        return X
    return {"csr": sp.csr_matrix, "csc": sp.csc_matrix}[fmt](X)


def build(kind, X, y, sw, fit_intercept):
    alpha = 0.3 if kind.endswith("_l2") else 0.0
    fam = base_family(kind)
    if fam == "squared":
        Loss = GramSquaredLoss if kind.startswith("gram") else SquaredLoss
        return Loss(X, y, sample_weight=sw, fit_intercept=fit_intercept), alpha
    if fam == "logistic":
        return LogisticLoss(X, y, sample_weight=sw, fit_intercept=fit_intercept, alpha=alpha), alpha
    return MultinomialLoss(X, y, K, sample_weight=sw, fit_intercept=fit_intercept, alpha=alpha), alpha


def targets(kind, ys):
    return ys["squared2"] if kind in ("squared2", "gram2") else ys[base_family(kind)]


class Problem:
    def __init__(self, kind, fmt="dense", fit_intercept=True, weighted=True, seed=0):
        X, ys, sw = make_data(seed)
        self.kind, self.fam = kind, base_family(kind)
        self.Xd = X
        self.X = to_format(X, fmt)
        self.y = targets(kind, ys)
        self.sw_arg = sw if weighted else None
        self.sw = sw if weighted else np.ones(N)
        self.fit_intercept = fit_intercept
        self.loss, self.alpha = build(kind, self.X, self.y, self.sw_arg, fit_intercept)
        self.m = self.loss.n_outputs
        self.has_b = bool(self.loss.intercept_is_variable and fit_intercept)
        rng = np.random.RandomState(seed + 100)
        self.W = 0.3 * rng.standard_normal((P, self.m))
        self.b = 0.5 * rng.standard_normal(self.m)

    # packed variables [W.ravel(), b] (b only when it is a variable)
    def pack(self, W, b):
        return np.concatenate([W.ravel(), b]) if self.has_b else W.ravel().copy()

    def unpack(self, theta):
        W = theta[: P * self.m].reshape(P, self.m)
        b = theta[P * self.m:] if self.has_b else self.b
        return W, b

    def packed_gradient(self, theta):
        f, gW, gb = self.loss.value_and_gradient(*self.unpack(theta))
        return self.pack(gW, gb if gb is not None else np.zeros(self.m))

    def packed_hessp(self, theta, v):
        V, c = self.unpack(v) if self.has_b else (v.reshape(P, self.m), np.zeros(self.m))
        HV, Hc = self.loss.hessp(*self.unpack(theta), V, c)
        return self.pack(HV, Hc if Hc is not None else np.zeros(self.m))

    def reference_value(self, W, b):
        """The loss from its definition, on the dense data, with sklearn's log_loss for GLMs."""
        Xd, sw = self.Xd, self.sw_arg
        if self.fam == "squared":
            Y = self.y[:, None] if self.y.ndim == 1 else self.y
            pred = Xd @ W
            if self.fit_intercept:
                x_mean = np.average(Xd, axis=0, weights=self.sw)
                y_mean = np.average(Y, axis=0, weights=self.sw)
                pred = pred + (y_mean - x_mean @ W)
            return 0.5 * np.average(((Y - pred) ** 2).sum(axis=1), weights=self.sw)
        # with an intercept the GLM losses centre X too: b is the intercept at the weighted mean of X
        Z = (Xd - np.average(Xd, axis=0, weights=self.sw)) @ W + b if self.fit_intercept else Xd @ W
        pen = 0.5 * self.alpha * np.sum(W**2)
        if self.fam == "logistic":
            return log_loss(self.y, expit(Z[:, 0]), sample_weight=sw, labels=[0, 1]) + pen
        return log_loss(self.y, softmax(Z, axis=1), sample_weight=sw, labels=list(range(K))) + pen

    def design_matrix(self):
        """Explicit dense matrix whose weighted Gram is the Hessian scale (centered / with a ones column)."""
        if self.fam == "squared":
            if self.fit_intercept:
                return self.Xd - np.average(self.Xd, axis=0, weights=self.sw)
            return self.Xd
        if self.fit_intercept:
            return np.column_stack([self.Xd - np.average(self.Xd, axis=0, weights=self.sw), np.ones(N)])
        return self.Xd


ALL_CASES = [(kind, fmt, fi, wt) for kind in KINDS for fmt in FORMATS for fi in (True, False)
             for wt in ((True, False) if fmt == "dense" else (True,))]
ALL_IDS = [f"{k}-{f}-{'int' if fi else 'noint'}-{'sw' if wt else 'nosw'}" for k, f, fi, wt in ALL_CASES]


@pytest.fixture(params=ALL_CASES, ids=ALL_IDS)
def problem(request):
    return Problem(*request.param)


def identifiable(loss, W):
    """The part of W that the loss determines: rows centred for the unpenalised multinomial."""
    if isinstance(loss, MultinomialLoss) and loss.alpha == 0:
        return W - W.mean(axis=1, keepdims=True)
    return W


def rel_err(a, b):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) / max(np.linalg.norm(np.ravel(b)), 1e-300)


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


# --------------------------------------------------------------------------
# weights, sparse input, intercepts
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_integer_weights_equal_row_duplication(kind, fmt, fit_intercept):
    X, ys, _ = make_data(1)
    y = targets(kind, ys)
    rng = np.random.RandomState(6)
    counts = rng.randint(0, 4, size=N)
    counts[:3] = [0, 3, 1]  # some rows are dropped (weight 0), some tripled
    rows = np.repeat(np.arange(N), counts)
    Xf = to_format(X, fmt)
    weighted, _ = build(kind, Xf, y, counts.astype(float), fit_intercept)
    duplicated, _ = build(kind, to_format(X[rows], fmt), y[rows], None, fit_intercept)
    m = weighted.n_outputs
    W = 0.3 * rng.standard_normal((P, m))
    b = 0.5 * rng.standard_normal(m)
    f1, gW1, gb1 = weighted.value_and_gradient(W, b)
    f2, gW2, gb2 = duplicated.value_and_gradient(W, b)
    assert_allclose(f1, f2, rtol=1e-12)
    assert_allclose(gW1, gW2, rtol=1e-10, atol=1e-14)
    if gb1 is not None:
        assert_allclose(gb1, gb2, rtol=1e-10, atol=1e-14)
    V = rng.standard_normal((P, m))
    c = rng.standard_normal(m)
    assert_allclose(weighted.hessp(W, b, V, c)[0], duplicated.hessp(W, b, V, c)[0], rtol=1e-10, atol=1e-14)
    assert_allclose(weighted.lipschitz(), duplicated.lipschitz(), rtol=1e-6)
    assert_allclose(weighted.intercept(W, b), duplicated.intercept(W, b), rtol=1e-12, atol=1e-14)
    support = np.array([0, 2, 5])
    R1, c1 = weighted.refit(support, W, b)
    R2, c2 = duplicated.refit(support, W, b)
    # (raw coefficients of the unpenalised multinomial: see test_multinomial_refit_is_unique)
    assert_allclose(identifiable(weighted, R1), identifiable(duplicated, R2), rtol=1e-7, atol=1e-9)
    assert_allclose(weighted.intercept(R1, c1), duplicated.intercept(R2, c2), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparse_equals_dense(kind, fmt, fit_intercept):
    dense = Problem(kind, "dense", fit_intercept)
    sparse = Problem(kind, fmt, fit_intercept)
    Ld, Ls = dense.loss, sparse.loss
    W, b = dense.W, dense.b
    for a, c in zip(Ld.value_and_gradient(W, b), Ls.value_and_gradient(W, b), strict=True):
        if a is None:
            assert c is None
        else:
            assert_allclose(c, a, rtol=1e-12, atol=1e-14)
    V, cv = 2 * W + 1, b - 1
    assert_allclose(Ls.hessp(W, b, V, cv)[0], Ld.hessp(W, b, V, cv)[0], rtol=1e-12, atol=1e-14)
    assert_allclose(Ls.hessian(W, b), Ld.hessian(W, b), rtol=1e-12, atol=1e-14)
    assert_allclose(Ls.lipschitz(), Ld.lipschitz(), rtol=1e-9)
    assert_allclose(Ls.intercept(W, b), Ld.intercept(W, b), rtol=1e-12, atol=1e-14)
    Rd, bd = Ld.refit([1, 3, 4], W, b)
    Rs, bs = Ls.refit([1, 3, 4], W, b)
    assert_allclose(identifiable(Ls, Rs), identifiable(Ld, Rd), rtol=1e-8, atol=1e-10)
    assert_allclose(Ls.intercept(Rs, bs), Ld.intercept(Rd, bd), rtol=1e-8, atol=1e-10)


@pytest.fixture
def forbid_densify(monkeypatch):
    """Make toarray/todense raise on any sparse matrix with more than `limit` entries."""

    def install(limit):
        seen = set()
        for cls in [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array, sp.csc_array, sp.coo_array]:
            for name in ["toarray", "todense"]:
                owner = next(k for k in cls.__mro__ if name in vars(k))
                if (owner, name) in seen:
                    continue
                seen.add((owner, name))
                original = vars(owner)[name]

                def guarded(self, *args, _original=original, **kwargs):
                    if self.shape[0] * self.shape[1] > limit:
                        raise AssertionError(f"a sparse matrix of shape {self.shape} was densified")
                    return _original(self, *args, **kwargs)

                monkeypatch.setattr(owner, name, guarded)

    return install


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("family", ["squared", "logistic", "multinomial"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_is_never_densified(family, fmt, forbid_densify):
    n, p = 200, 10000  # dense: 16 MB
    rng = np.random.RandomState(7)
    X = sp.random(n, p, density=5e-4, format="csr", random_state=rng)
    X = (X + sp.csr_matrix((np.ones(n), (np.arange(n), np.zeros(n, dtype=int))), shape=(n, p))).asformat(fmt)
    sw = rng.uniform(0.5, 2, size=n)
    if family == "squared":
        loss = SquaredLoss(X, rng.standard_normal(n), sample_weight=sw, fit_intercept=True)
    elif family == "logistic":
        loss = LogisticLoss(X, rng.randint(0, 2, size=n), sample_weight=sw, alpha=0.1)
    else:
        loss = MultinomialLoss(X, rng.randint(0, 3, size=n), 3, sample_weight=sw, alpha=0.1)
    forbid_densify(limit=50 * n)
    W, b = loss.zeros()
    W[[0, 5, 17]] = 1.0

    def work():
        loss.value_and_gradient(W, b)
        loss.hessp(W, b, W, b + 1)
        loss.lipschitz()
        loss.refit(np.array([0, 5, 17]), W, b)
        loss.intercept(W, b)

    peak = _peak_bytes(work)
    assert peak < 4e6, f"peak memory {peak / 1e6:.1f} MB: the {n} x {p} design was densified"


def test_linear_design_matvec_huge_sparse(forbid_densify):
    # 10^3 x 10^6 with a few thousand non-zeros: the dense (centered) form is 8 GB
    n, p = 1000, 10**6
    rng = np.random.RandomState(8)
    nnz = 5000
    rows, cols = rng.randint(0, n, nnz), rng.randint(0, p, nnz)
    cols[:n] = rng.choice(50, n)  # columns 0..49 are well populated
    X = sp.csr_matrix((rng.standard_normal(nnz), (rows, cols)), shape=(n, p))
    y = rng.standard_normal(n)
    forbid_densify(limit=100 * n)
    S = np.array([3, 11, 42])
    holder = {}

    def work():
        loss = SquaredLoss(X, y, fit_intercept=True)
        W = np.zeros((p, 1))
        W[S, 0] = [1.0, -2.0, 0.5]
        holder["x_mean"] = loss.x_mean.copy()
        holder["Z"] = loss.design.matvec(W)
        holder["G"] = loss.design.rmatvec(np.arange(n, dtype=float)[:, None] / n)
        holder["f"] = loss.value(W, np.zeros(1))

    peak = _peak_bytes(work)
    assert peak < 100e6, f"peak memory {peak / 1e6:.0f} MB"
    x_mean = np.asarray(X.mean(axis=0)).ravel()
    assert_allclose(holder["x_mean"], x_mean, rtol=1e-12, atol=1e-15)
    # explicit centering on the few columns involved
    Xs = X[:, S].toarray() - x_mean[S]
    assert_allclose(holder["Z"][:, 0], Xs @ np.array([1.0, -2.0, 0.5]), rtol=1e-10, atol=1e-12)
    r = np.arange(n, dtype=float) / n
    check = np.array([3, 11, 42, 999_999, 123_456])
    Xc = X[:, check].toarray() - x_mean[check]
    assert_allclose(holder["G"][check, 0], Xc.T @ r, rtol=1e-10, atol=1e-12)
    resid = (y - y.mean()) - Xs @ np.array([1.0, -2.0, 0.5])
    assert_allclose(holder["f"], 0.5 * np.mean(resid**2), rtol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("offset", [True, False])
def test_linear_design_against_explicit_centering(fmt, offset):
    X, _, _ = make_data(2)
    rng = np.random.RandomState(9)
    o = rng.standard_normal(P) if offset else None
    D = LinearDesign(to_format(X, fmt), o)
    Xc = X - o if offset else X
    W = rng.standard_normal((P, 2))
    R = rng.standard_normal((N, 2))
    assert_allclose(D.matvec(W), Xc @ W, rtol=1e-12, atol=1e-13)
    assert_allclose(D.rmatvec(R), Xc.T @ R, rtol=1e-12, atol=1e-13)
    assert_allclose(D.dense(), Xc, rtol=1e-15, atol=0)
    weights = rng.standard_normal(N)  # signed weights too (multinomial off-diagonal blocks)
    assert_allclose(D.weighted_gram(weights), Xc.T @ (weights[:, None] * Xc), rtol=1e-10, atol=1e-12)
    S = np.array([4, 0, 2])
    assert_allclose(D.columns(S).dense(), Xc[:, S], rtol=1e-15, atol=0)
    assert D.shape == (N, P)
    assert D.is_sparse == (fmt != "dense")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("kind", ["squared", "squared2", "gram", "gram2"])
def test_squared_intercept_is_weighted_means(fmt, weighted, kind):
    pb = Problem(kind, fmt, True, weighted)
    Y = pb.y[:, None] if pb.y.ndim == 1 else pb.y
    x_mean = np.average(pb.Xd, axis=0, weights=pb.sw)
    y_mean = np.average(Y, axis=0, weights=pb.sw)
    b = pb.loss.intercept(pb.W, pb.b)
    assert b.shape == (pb.m,)
    assert_allclose(b, y_mean - x_mean @ pb.W, rtol=1e-12, atol=1e-14)
    # so the weighted mean residual is zero
    assert_allclose(pb.sw @ (Y - pb.Xd @ pb.W - b), 0, atol=1e-10)
    no_int = Problem(kind, fmt, False, weighted)
    assert_array_equal(no_int.loss.intercept(pb.W, pb.b), np.zeros(pb.m))


# --------------------------------------------------------------------------
# refit on a support
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("kind", ["squared", "squared2", "gram", "gram2"])
def test_squared_refit_matches_linear_regression(fmt, fit_intercept, weighted, kind):
    pb = Problem(kind, fmt, fit_intercept, weighted)
    S = np.array([0, 2, 3])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    assert W.shape == pb.W.shape
    assert np.all(W[[1, 4, 5]] == 0.0)
    lr = LinearRegression(fit_intercept=fit_intercept).fit(pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
    coef = lr.coef_.T if pb.y.ndim == 2 else lr.coef_[:, None]
    assert_allclose(W[S], coef, rtol=1e-8, atol=1e-10)
    lr_intercept = np.atleast_1d(lr.intercept_) if fit_intercept else np.zeros(pb.m)
    assert_allclose(pb.loss.intercept(W, b), lr_intercept, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("Loss", [SquaredLoss, GramSquaredLoss])
def test_squared_refit_nearly_collinear_columns(fmt, weighted, Loss):
    # a column equal to another one (the minimum-norm solution splits the
    # coefficient) and one nearly equal (R^2 = 1 - 1e-9: the normal
    # equations would lose most digits, the refit must not)
    X, ys, sw = make_data(3)
    y = ys["squared"]
    rng = np.random.RandomState(4)
    near = X[:, [2]] + 1e-4 * X[:, [2]].std() * rng.standard_normal((N, 1))
    Xx = np.hstack([X, X[:, [1]], near])
    loss = Loss(to_format(Xx, fmt), y, sample_weight=sw if weighted else None)
    W, _ = loss.refit(np.array([0, 1, P]), *loss.zeros())
    W1, _ = SquaredLoss(to_format(X, fmt), y, sample_weight=sw if weighted else None).refit(
        np.array([0, 1]), *loss.zeros())
    assert_allclose(W[[1, P], 0], [W1[1, 0] / 2] * 2, rtol=1e-8)
    assert_allclose(W[0, 0], W1[0, 0], rtol=1e-8)
    S = np.array([0, 2, P + 1])
    W, _ = loss.refit(S, *loss.zeros())
    lr = LinearRegression().fit(Xx[:, S], y, sample_weight=sw if weighted else None)
    assert_allclose(W[S, 0], lr.coef_, rtol=1e-6)


def test_squared_refit_empty_support():
    pb = Problem("squared", "csr")
    W, b = pb.loss.refit(np.array([], dtype=int), pb.W, pb.b)
    assert np.all(W == 0)
    assert_allclose(pb.loss.intercept(W, b), [np.average(pb.y, weights=pb.sw)], rtol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("kind", ["squared", "squared2", "gram", "gram2"])
def test_squared_refit_candidates_match_linear_regression(fmt, fit_intercept, weighted, kind):
    # the batched normal equations against one LinearRegression per candidate
    pb = Problem(kind, fmt, fit_intercept, weighted)
    supports = [np.array([0, 2, 3]), np.array([1, 2, 5]), np.array([0, 4, 5])]
    fits = pb.loss.refit_candidates(supports, pb.W, pb.b)
    assert len(fits) == 3
    for S, (W, b, value, Z) in zip(supports, fits, strict=True):
        assert_allclose(Z, pb.loss.linear_predictor(W, b), rtol=1e-10, atol=1e-10)
        assert np.all(np.delete(W, S, axis=0) == 0.0)
        lr = LinearRegression(fit_intercept=fit_intercept).fit(pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
        coef = lr.coef_.T if pb.y.ndim == 2 else lr.coef_[:, None]
        assert_allclose(W[S], coef, rtol=1e-8, atol=1e-10)
        residual = (pb.y - lr.predict(pb.Xd[:, S])).reshape(N, -1)
        expected = 0.5 * np.sum(pb.sw[:, None] * residual**2) / pb.sw.sum()
        assert value == pytest.approx(expected, rel=1e-10)


def test_squared_refit_candidates_equal_weights_are_no_weights():
    # equal weights take the unweighted products; the mean they define is the same
    pb = Problem("squared2")
    supports = [np.array([0, 2, 3]), np.array([1, 2, 5])]
    plain = SquaredLoss(pb.Xd, pb.y).refit_candidates(supports, pb.W, pb.b)
    weighted = SquaredLoss(pb.Xd, pb.y, sample_weight=np.full(N, 3.0)).refit_candidates(supports, pb.W, pb.b)
    assert SquaredLoss(pb.Xd, pb.y, sample_weight=np.full(N, 3.0)).uniform_weights
    assert not SquaredLoss(pb.Xd, pb.y, sample_weight=np.arange(1.0, N + 1)).uniform_weights
    for (W1, _, v1, Z1), (W2, _, v2, Z2) in zip(plain, weighted, strict=True):
        assert_allclose(W2, W1, rtol=1e-12, atol=1e-14)
        assert v2 == pytest.approx(v1, rel=1e-12)
        assert_allclose(Z2, Z1, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("Loss", [SquaredLoss, GramSquaredLoss])
def test_squared_refit_candidates_fall_back_on_singular_and_mixed_sizes(Loss):
    pb = Problem("squared")
    X = np.column_stack([pb.Xd, pb.Xd[:, 2]])  # column 6 duplicates column 2
    loss = Loss(X, pb.y, sample_weight=pb.sw)
    W, b = loss.zeros()
    for supports in ([np.array([1, 2, 6]), np.array([0, 1, 3])], [np.array([1, 2]), np.array([0, 1, 3])]):
        fits = loss.refit_candidates(supports, W, b)
        for S, (W_c, b_c, value, Z_c) in zip(supports, fits, strict=True):
            assert_allclose(Z_c, loss.linear_predictor(W_c, b_c), rtol=1e-10, atol=1e-10)
            lr = LinearRegression().fit(X[:, S], pb.y, sample_weight=pb.sw)
            residual = pb.y - lr.predict(X[:, S])
            assert value == pytest.approx(0.5 * np.average(residual**2, weights=pb.sw), rel=1e-8)
            # the minimum-norm solution: duplicated columns share their coefficient
            assert_allclose(W_c[S, 0], lr.coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["squared", "logistic_l2", "multinomial"])
def test_restrict_in_x_dtype_is_the_loss_on_those_columns(kind, fmt):
    """restrict(U, dtype=None) (the splicing search within U) keeps a float32 X in float32, and its
    values and gradients are the full loss's at coefficients that are zero outside U."""
    X, ys, sw = make_data(4)
    X32 = to_format(X.astype(np.float32), fmt)
    loss, _ = build(kind, X32, targets(kind, ys), sw, True)
    U = np.array([0, 2, 3, 5])
    sub = loss.restrict(U, dtype=None)
    assert sub.design.X.dtype == np.float32 and sub.n_features == U.size
    assert loss.restrict(U).design.X.dtype == np.float64  # the default: float64 columns for refits
    rng = np.random.RandomState(0)
    W, b = loss.zeros()
    W[U] = rng.standard_normal((U.size, loss.n_outputs))
    b += 0.3
    f, gW, _ = loss.value_and_gradient(W, b)
    f_sub, gW_sub, _ = sub.value_and_gradient(W[U], b)
    assert_allclose(f_sub, f, rtol=1e-6)
    assert_allclose(gW_sub, gW[U], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("weighted", [True, False])
def test_gram_restrict_is_the_loss_on_those_columns_without_copying_them(weighted):
    """GramSquaredLoss.restrict(U) (the splicing search within U): its values, gradients,
    refits and Hessian are the full loss's at coefficients zero outside U, and it copies
    none of X's columns (which SquaredLoss.restrict does)."""
    rng = np.random.RandomState(5)
    n, p = 20000, 60
    X = rng.standard_normal((n, p)) + 3.0
    y = X[:, [3, 10, 40]] @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(n)
    loss = GramSquaredLoss(X, y, sample_weight=rng.uniform(0.5, 2.0, n) if weighted else None)
    U = np.arange(0, p, 2)  # 30 columns: a copy would take 4.8 MB
    tracemalloc.start()
    sub = loss.restrict(U)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.5e6 < n * U.size * 8
    W, b = loss.zeros()
    W[U] = 0.2 * rng.standard_normal((U.size, 1))
    f, gW, _ = loss.value_and_gradient(W, b)
    f_sub, gW_sub, _ = sub.value_and_gradient(W[U], b)
    assert_allclose(f_sub, f, rtol=1e-12)
    assert_allclose(gW_sub, gW[U], rtol=1e-10, atol=1e-12)
    assert_allclose(sub.hessian(), loss.hessian()[np.ix_(U, U)], rtol=1e-12)
    S = np.array([1, 5, 20])  # positions in U: features U[S]
    W_sub, _ = sub.refit(S, W[U], b)
    W_full, _ = loss.refit(U[S], W, b)
    assert_allclose(W_sub, W_full[U], rtol=1e-10, atol=1e-12)
    (W_c, _, f_c, _), = sub.refit_candidates([S], W[U], b)
    assert_allclose(W_c, W_full[U], rtol=1e-10, atol=1e-12)
    assert f_c == pytest.approx(loss.value(W_full, b), rel=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
def test_gram_loss_keeps_precision_with_large_column_means(fmt):
    """The Gram matrix is formed from centered blocks: columns of mean 1e4 and unit spread
    give the same fit as without the offset (an uncentered X^T X would lose 8 digits)."""
    rng = np.random.RandomState(6)
    X = rng.standard_normal((500, 8))
    y = X @ rng.standard_normal(8) + 0.5 * rng.standard_normal(500)
    S = np.array([0, 3, 5])
    reference, _ = GramSquaredLoss(X, y).refit(S, *GramSquaredLoss(X, y).zeros())
    shifted = X.copy()
    shifted[:, S] += 1e4
    loss = GramSquaredLoss(to_format(shifted, fmt), y) if fmt == "dense" else None
    if loss is None:  # sparse X: the uncentered product is corrected (documented); only dense is claimed
        return
    W, _ = loss.refit(S, *loss.zeros())
    assert_allclose(W, reference, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["logistic_l2", "multinomial"])
def test_glm_refit_candidates_are_refits(kind):
    pb = Problem(kind)
    supports = [np.array([1, 2, 4]), np.array([0, 3, 5])]
    for S, (W, b, value, Z) in zip(supports, pb.loss.refit_candidates(supports, pb.W, pb.b), strict=True):
        assert_allclose(Z, pb.loss.linear_predictor(W, b), rtol=1e-12, atol=1e-12)
        start = np.where(np.isin(np.arange(P), S)[:, None], pb.W, 0.0)
        W_ref, b_ref = pb.loss.refit(S, start, pb.b)
        # candidates stop Newton's method early (precise=False): the value is
        # within 1e-12 of the minimum, the point within about its square root
        f_ref = pb.loss.value(W_ref, b_ref)
        assert f_ref - 1e-15 <= value <= f_ref * (1 + 1e-12)
        assert_allclose(W, W_ref, atol=1e-5)
        assert_allclose(b, b_ref, atol=1e-5)
        assert np.all(W[np.setdiff1d(np.arange(P), S)] == 0.0)


@pytest.mark.parametrize("kind", ["logistic", "multinomial"])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_glm_imprecise_refit_is_near_the_minimum_for_fewer_hessians(kind, fmt, monkeypatch):
    # precise=False (the splicing candidates) stops Newton's method after the
    # full step that follows a decrement of 1e-6: the value is within 1e-12 of
    # the minimum's, and it takes fewer Hessians than iterating to rounding
    import sparse_estimators.losses._base as base_module
    import sparse_estimators.losses._logistic as logistic_module

    calls = []
    original = base_module.newton_minimise

    def counting(fun, hessian, theta, **kwargs):
        def counted(t):
            calls[-1] += 1
            return hessian(t)
        calls.append(0)
        return original(fun, counted, theta, **kwargs)

    monkeypatch.setattr(base_module, "newton_minimise", counting)
    monkeypatch.setattr(logistic_module, "newton_minimise", counting)
    pb = Problem(kind, fmt)
    S = np.array([0, 2, 3, 5])
    start = np.zeros_like(pb.W)
    W_p, b_p = pb.loss.refit(S, start, pb.b)
    W_i, b_i = pb.loss.refit(S, start, pb.b, precise=False)
    precise_hessians, imprecise_hessians = calls
    f_p, f_i = pb.loss.value(W_p, b_p), pb.loss.value(W_i, b_i)
    assert f_p - 1e-15 <= f_i <= f_p * (1 + 1e-12)
    assert imprecise_hessians < precise_hessians
    assert_allclose(W_i, W_p, atol=1e-5)


@pytest.mark.parametrize("kind", ["squared", "logistic", "multinomial"])
def test_n_observations(kind):
    """Frequency weights count their sum, relative weights the rows of positive weight."""
    X, ys, _ = make_data()
    y = ys[kind]

    def n_obs(sw):
        return build(kind, X, y, sw, True)[0].n_observations

    assert n_obs(None) == N
    integer = np.r_[np.zeros(4), np.full(N - 4, 3.0)]  # zeros drop rows, 3 repeats them
    assert n_obs(integer) == 3.0 * (N - 4)
    assert n_obs(integer / integer.sum()) == N - 4  # normalised to sum 1: the 36 rows
    assert n_obs(np.full(N, 0.5)) == N


GLM_KINDS = ["logistic", "logistic_l2", "multinomial", "multinomial_l2"]


@pytest.mark.parametrize("kind", GLM_KINDS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_glm_refit_zero_restricted_gradient(kind, fmt, fit_intercept, weighted):
    pb = Problem(kind, fmt, fit_intercept, weighted)
    S = np.array([1, 2, 4])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    assert W.shape == pb.W.shape and b.shape == pb.b.shape
    assert np.all(W[[0, 3, 5]] == 0.0)
    _, gW, gb = pb.loss.value_and_gradient(W, b)
    assert np.max(np.abs(gW[S])) < 1e-8
    if fit_intercept:
        assert np.max(np.abs(gb)) < 1e-8
    else:
        assert_array_equal(b, pb.b)  # not a variable: returned untouched
    # and it is a minimum on the support: better than the start
    assert pb.loss.value(W, b) < pb.loss.value(np.where(np.isin(np.arange(P), S)[:, None], pb.W, 0), pb.b)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_logistic_refit_matches_sklearn_with_l2(fmt, fit_intercept, weighted):
    # ours:    sum_i s_i l_i / S + alpha/2 ||w||^2
    # sklearn: C sum_i s_i l_i + 1/2 ||w||^2, the same minimiser when C = 1 / (alpha S)
    pb = Problem("logistic_l2", fmt, fit_intercept, weighted)
    S = np.array([0, 3, 5])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    C = 1.0 / (pb.alpha * pb.sw.sum())
    clf = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000,
                             fit_intercept=fit_intercept).fit(pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
    assert_allclose(W[S, 0], clf.coef_[0], rtol=0, atol=1e-5)
    if fit_intercept:
        assert_allclose(pb.loss.intercept(W, b), clf.intercept_, rtol=0, atol=1e-5)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [True, False])
def test_multinomial_refit_matches_sklearn_with_l2(fmt, weighted):
    pb = Problem("multinomial_l2", fmt, True, weighted)
    S = np.array([0, 1, 4])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    C = 1.0 / (pb.alpha * pb.sw.sum())
    clf = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(
        pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
    assert_allclose(W[S], clf.coef_.T, rtol=0, atol=1e-5)
    assert_allclose(pb.loss.intercept(W, b), clf.intercept_ - clf.intercept_.mean(), rtol=0, atol=1e-5)


def test_multinomial_refit_is_unique():
    X, ys, _ = make_data(1)
    y = ys["multinomial"]
    rng = np.random.RandomState(11)
    counts = rng.randint(0, 4, size=N)
    rows = np.repeat(np.arange(N), counts)
    W = 0.3 * rng.standard_normal((P, K))
    b = 0.5 * rng.standard_normal(K)
    for fit_intercept in [True, False]:
        for S in [np.array([0, 2, 5]), np.array([1, 3, 4])]:
            fits = []
            for fmt in FORMATS:
                for loss in [MultinomialLoss(to_format(X, fmt), y, K, sample_weight=counts.astype(float),
                                             fit_intercept=fit_intercept),
                             MultinomialLoss(to_format(X[rows], fmt), y[rows], K, fit_intercept=fit_intercept)]:
                    fits.append(loss.refit(S, W, b)[0])
            for other in fits[1:]:
                assert_allclose(other, fits[0], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("kind", ["logistic", "multinomial"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_glm_refit_empty_support_is_intercept_only_model(kind, fmt):
    pb = Problem(kind, fmt)
    W, b = pb.loss.refit(np.array([], dtype=int), pb.W, pb.b)
    assert np.all(W == 0)
    freq = np.array([np.average(pb.y == c, weights=pb.sw) for c in range(pb.m if kind == "multinomial" else 2)])
    if kind == "logistic":
        assert_allclose(b, [np.log(freq[1] / freq[0])], rtol=1e-8)
    else:
        assert_allclose(softmax(b), freq, rtol=1e-8)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_logistic_refit_duplicated_column_splits_the_coefficient(fmt, fit_intercept):
    # a singular Hessian (two equal columns): the minimum-norm Newton step
    # gives each copy half of the coefficient of the column fitted alone
    X, ys, sw = make_data(2)
    y = ys["logistic"]
    twice = LogisticLoss(to_format(np.hstack([X, X[:, [1]]]), fmt), y, sample_weight=sw, fit_intercept=fit_intercept)
    once = LogisticLoss(to_format(X, fmt), y, sample_weight=sw, fit_intercept=fit_intercept)
    W2, b2 = twice.refit(np.array([0, 1, P]), *twice.zeros())
    W1, b1 = once.refit(np.array([0, 1]), *once.zeros())
    assert_allclose(W2[[1, P], 0], [W1[1, 0] / 2] * 2, rtol=1e-8)
    assert_allclose(W2[0], W1[0], rtol=1e-8)
    assert_allclose(b2, b1, rtol=1e-8, atol=1e-12)


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
    ``_softmax_newton._PAIR_CLASSES`` classes) and Cholesky solve (softmax shifts projected) against the generic
    per-class-pair Hessian and the SVD minimum-norm solve (issue 26: 30 classes took 2 s)."""
    from sparse_estimators.losses import _softmax_newton
    from sparse_estimators.losses._base import min_norm_solve

    assert (m <= _softmax_newton._PAIR_CLASSES) == (m < 6)  # (both routes of block_hessian are tested)
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
    from sparse_estimators.losses._base import min_norm_solve

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
    from scipy.special import softmax

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
    from scipy.special import softmax

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
    import scipy.sparse as sp

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
    from scipy.special import softmax

    from sparse_estimators.losses._softmax_newton import _GRADIENT_ROUNDING, FrozenNewtonSolver, SoftmaxCurvature

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
    g *= 0.9 * _GRADIENT_ROUNDING * np.finfo(float).eps * 0.5 / np.linalg.norm(g)
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
    import scipy.sparse as sp

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
