"""Losses on weighted, sparse and centred input.

Integer weights as duplicated rows, sparse equal to dense and never densified, the weighted intercept.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _loss_problems import (
    FORMATS,
    KINDS,
    N,
    P,
    Problem,
    build,
    identifiable,
    make_data,
    targets,
    to_format,
)
from numpy.testing import assert_allclose, assert_array_equal

from sparse_estimators.losses import (
    LinearDesign,
    LogisticLoss,
    MultinomialLoss,
    SquaredLoss,
)


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
