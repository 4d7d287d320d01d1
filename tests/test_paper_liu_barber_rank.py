"""Paper 002 (Liu & Barber) Sec. 5 on matrices: the lifted operators (Lemma 8) and Theorem 5's adversarial instance."""

import itertools

import numpy as np
import pytest
from _benchmarks import load_benchmark

from sparse_estimators.solvers import iht
from sparse_estimators.structures import LowRank
from sparse_estimators.thresholding import Hard, Lq, Reciprocal

_paper002 = load_benchmark("reproduce_paper002")


class DiagonalEmbedding:
    """``F(M) = f(diag M) + L/2 ||M - Diag(diag M)||_F^2``: the vector objective ``f`` on d x d matrices.

    Its gradient at a diagonal matrix is diagonal, so a lifted iteration from a
    diagonal start stays diagonal and is the vector iteration on the diagonal.
    """

    intercept_is_variable = False
    fit_intercept = False

    def __init__(self, vector_loss):
        self.f, self.L = vector_loss, vector_loss.L
        self.n_features = self.n_outputs = vector_loss.n_features

    def lipschitz(self):
        return self.L

    def linear_predictor(self, W, b, rows=None):
        return W

    def value_from_z(self, Z, W):
        off = W - np.diag(np.diag(W))
        return self.f.value(np.diag(W)[:, None]) + 0.5 * self.L * float(np.vdot(off, off))

    def gradient_from_z(self, Z, W):
        G = self.L * (W - np.diag(np.diag(W)))
        G[np.diag_indices_from(G)] = self.f.gradient_from_z(None, np.diag(W)[:, None])[0][:, 0]
        return G, None

    def value(self, W, b=None):
        return self.value_from_z(W, W)


@pytest.mark.parametrize("kappa", [4, 6])
def test_theorem5_lifted_hard_is_stuck_reciprocal_escapes(kappa):
    """Theorem 5 on matrices: with rank s = 10 from Diag(x), lifted hard thresholding stays at F = 0 > F(Diag(y));
    lifted reciprocal (c = rho) and lq(2/3) go below F(Diag(y)), where y has rank s' = 1."""
    vector_loss, x, y = _paper002.theorem2_instance(kappa)
    loss = DiagonalEmbedding(vector_loss)
    f_y = loss.value(np.diag(y))
    assert f_y == pytest.approx(vector_loss.value(y[:, None])) and f_y < 0

    def run(op):
        return iht(loss, LowRank(op, x.size), 10, W0=np.diag(x), b0=np.zeros(0), step_size=1.0, max_iter=3000,
                   tol=1e-10)

    hard = run(Hard())
    np.testing.assert_allclose(hard.coef, np.diag(x), atol=1e-12)
    assert loss.value(hard.coef) == pytest.approx(0.0, abs=1e-12)
    for op in (Reciprocal(c=0.1), Lq(q=2 / 3)):  # rho = s'/s = 0.1
        result = run(op)
        assert loss.value(result.coef) < f_y, op
        assert np.linalg.matrix_rank(result.coef, tol=1e-9) <= 10


def _ratio(Y, X, Z):
    """The relative concavity ratio <Y - X, Z - X> / ||Y - X||^2 (Frobenius)."""
    D = Y - X
    return float(np.vdot(D, Z - X)) / float(np.vdot(D, D))


@pytest.mark.parametrize("op", [Reciprocal(0.0), Reciprocal(0.5), Lq(2 / 3), Hard()], ids=repr)
def test_lemma8_lifted_operator_has_the_vector_relative_concavity(op):
    """Lemma 8: on diagonal embeddings ``Z = Diag(z)``, the lifted operator's point is ``Diag(P(z))`` and no
    matrix ``Y`` of rank ``s'`` gives a larger ratio than the vector sup over ``s'``-sparse ``y`` (which diagonal
    ``Y`` attain). ``z`` are the structured points of the paper's proofs (threshold 1, ``S`` the first ``s``)."""
    s, sp = 4, 2
    rng = np.random.RandomState(0)
    for ell, t_in, t_out in itertools.product(range(sp + 1), (1.2, 1.5, 4.0), (1.1, 2.0)):  # (no tie at tau)
        z = np.concatenate([np.full(ell, t_in), np.full(s - ell, t_out), np.ones(sp)])
        d = z.size
        x = op(z, s)
        X = LowRank(op, d)(np.diag(z), s)
        np.testing.assert_allclose(X, np.diag(x), atol=1e-12)
        vector_sup = max(_paper002.best_ratio(z, x, S) for S in itertools.combinations(range(d), sp))
        if not np.isfinite(vector_sup):
            continue
        for _ in range(300):  # random rank-s' matrices, and near-diagonal ones
            A, B = rng.standard_normal((d, sp)), rng.standard_normal((d, sp))
            if rng.rand() < 0.5:
                S = rng.choice(d, sp, replace=False)
                A, B = np.eye(d)[:, S] * rng.uniform(0.2, 3.0, sp) + 0.05 * A, np.eye(d)[:, S] + 0.05 * B
            Y = A @ B.T
            assert _ratio(Y, X, np.diag(z)) <= vector_sup + 1e-9
