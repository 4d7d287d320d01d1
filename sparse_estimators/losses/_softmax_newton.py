"""Newton steps of the dense multinomial refit without a Hessian per step.

The multinomial refit on ``q`` columns (the support's, and one of ones for the
intercept) and ``m`` classes has a ``(q m)^2`` Hessian that costs
``n (q m)^2 / 2`` multiply-adds to form: at ``n = 2e4``, ``q = 21``,
``m = 10`` about 50 times a Hessian-vector product, and 77 % of a fit when it
was formed at every Newton step of every candidate refit of the splicing
search. Here a step solves ``H x = g`` by conjugate gradients with
the exact Hessian-vector product, preconditioned by the Cholesky factor of a
Hessian formed earlier (at the refit's first step, or the Hessian of the
candidates' union at the current fit, see :meth:`MultinomialLoss.refit_candidates`):
the Hessian changes little between Newton steps, so a few iterations reach
``1e-10`` of ``g``; when they do not, the Hessian is formed again at the
current point (doc/changelog.rst, multinomial refits). With few classes the
Hessian is formed one pair of classes at a time, and the gradient's pass over
``X`` (:func:`class_rmatvec`) is the larger share of a fit (doc/changelog.rst,
multinomial fits with few classes).
"""

import numpy as np

from .. import _policy
from ._design import LinearDesign


def softmax_parts(Z):
    """Row log-sum-exps ``logsumexp(z_i)`` and the probabilities ``softmax(Z)`` in one pass.

    The row maxima by one pass per class and the row sums by a product with
    ones: numpy's reductions along short rows cost 5 times more (2.1 ms
    against 0.4 at 20000 x 10).
    """
    top = Z[:, 0].copy()
    for a in range(1, Z.shape[1]):
        np.maximum(top, Z[:, a], out=top)
    E = Z - top[:, None]
    np.exp(E, out=E)
    s = E @ np.ones(Z.shape[1])
    E /= s[:, None]
    return np.log(s) + top, E


def class_rmatvec(design, R):
    """``design.rmatvec(R)`` for ``R`` of shape ``(n, m)``, on a dense C-ordered ``X`` as ``(R^T X)^T``.

    The multinomial gradient's pass over ``X``: with ``X`` C-ordered, OpenBLAS
    computes ``X^T R`` at 2 to 6 GB/s for 2 to 20 columns, ``R^T X`` near the
    bandwidth of one ``X^T r`` (at 20000 x 500, one thread: 18 against 8 ms for
    3 classes, 38 against 13 for 20; doc/changelog.rst, multinomial refits).
    Other designs (sparse, dask, Fortran-ordered) take ``design.rmatvec``.
    """
    X = design.X
    if type(design) is not LinearDesign or design.is_sparse or R.shape[1] < 2 or not X.flags.c_contiguous:
        return design.rmatvec(R)
    G = np.asarray((np.ascontiguousarray(design._cast(R).T) @ X).T, dtype=float)
    if design.offset is not None:
        G -= design.offset[:, None] * R.sum(axis=0)
    if design.constant is not None:
        G[design.constant] = 0.0
    return G


def block_hessian(A, P, sw):
    """``sum_i sw_i (a_i a_i^T) kron (diag(p_i) - p_i p_i^T)`` over the columns of ``A``, shape ``(q m, q m)``.

    Variable ``j * m + a`` for column ``j`` and class ``a``. Up to
    ``_policy.PAIR_CLASSES`` classes, one symmetric product ``C^T C`` per pair of
    classes ``a <= c`` (the weights ``sw_i (delta_ac p_ia - p_ia p_ic)`` have
    one sign per pair: ``C`` is ``A`` scaled by their square roots), about
    ``n q^2 m (m + 1) / 4`` multiply-adds; above, the diagonal part from one
    ``q x (q m)`` product and the rank-one part as ``B^T B`` with
    ``B_i = sqrt(sw_i) a_i kron p_i`` (one wide symmetric product, ``n (q m)^2 / 2``,
    which BLAS runs faster than many small ones).
    """
    n, q = A.shape
    m = P.shape[1]
    if n and np.array_equal(P[-1], P[0]) and np.all(P == P[0]):
        # the same probabilities in every row (the intercept-only start of a refit from zero): the Kronecker
        # product of one weighted Gram matrix and the classes' m x m block, n q^2 / 2 multiply-adds
        C = A * np.sqrt(sw)[:, None]
        return np.kron(C.T @ C, np.diag(P[0]) - np.outer(P[0], P[0]))
    if m <= _policy.PAIR_CLASSES:
        H = np.empty((q, m, q, m))
        Ps = P * sw[:, None]
        for a in range(m):
            for c in range(a, m):
                w = Ps[:, a] * (1.0 - P[:, a]) if a == c else Ps[:, a] * P[:, c]
                C = A * np.sqrt(w)[:, None]
                G = C.T @ C  # (numpy's symmetric product)
                if a == c:
                    H[:, a, :, a] = G
                else:
                    np.negative(G, out=G)
                    H[:, a, :, c] = G
                    H[:, c, :, a] = G
        return H.reshape(q * m, q * m)
    B = (A[:, :, None] * (P * np.sqrt(sw)[:, None])[:, None, :]).reshape(n, q * m)
    H = -(B.T @ B)
    D = A.T @ (A[:, :, None] * (P * sw[:, None])[:, None, :]).reshape(n, q * m)  # (j, l, a)
    H.reshape(q, m, q, m)[:, np.arange(m), :, np.arange(m)] += D.reshape(q, q, m).transpose(2, 0, 1)
    return H


class SoftmaxCurvature:
    """The Hessian of a dense multinomial refit at one point, as an operator (formed only when asked).

    Parameters
    ----------
    A : ndarray of shape (n, q)
        The refit's columns (centred; the last one of ones with an intercept).
    P : ndarray of shape (n, m)
        The class probabilities at the point.
    sw : ndarray of shape (n,)
        Sample weights summing to one.
    alpha : float
        The l2 term, on the first ``k`` rows of coefficients.
    k : int
        Number of penalised rows (the support's columns).
    """

    def __init__(self, A, P, sw, alpha, k):
        self.A, self.P, self.sw, self.alpha, self.k = A, P, sw, alpha, k
        self.shape = (A.shape[1] * P.shape[1],) * 2
        self._weighted = None

    def dense(self):
        """The Hessian as a dense array."""
        H = block_hessian(self.A, self.P, self.sw)
        if self.alpha:
            diag = np.arange(self.k * self.P.shape[1])
            H[diag, diag] += self.alpha
        return H

    def dot(self, v):
        """``H v`` in ``4 n q m`` multiply-adds."""
        m = self.P.shape[1]
        if self._weighted is None:
            self._weighted = self.P * self.sw[:, None]
        V = v.reshape(-1, m)
        Zv = self.A @ V
        Zv -= np.einsum("ij,ij->i", self.P, Zv)[:, None]  # sw_i (diag(p_i) - p_i p_i^T) z_i
        Zv *= self._weighted
        out = self.A.T @ Zv
        if self.alpha:
            out[:self.k] += self.alpha * V[:self.k]
        return out.ravel()


class FrozenNewtonSolver:
    """``solve(H, g)`` for :func:`~sparse_estimators.losses._numerics.newton_minimise`, forming few Hessians.

    ``H`` is a :class:`SoftmaxCurvature`. The first call (without a
    ``factor`` given) forms it and keeps its factorisation; later calls run
    preconditioned conjugate gradients with it, and form the Hessian anew
    when they do not reach ``_policy.SOFTMAX_CG_RTOL`` within their share of its cost.

    Parameters
    ----------
    factorize : callable
        ``H -> solve`` (a function of ``g``) or None when ``H`` is (nearly)
        singular beyond the softmax shifts; those Hessians are solved by
        ``fallback`` at every step.
    fallback : callable
        ``(H, g) -> x`` on dense Hessians.
    project : callable
        Removes the component of a step along the softmax shifts (in place).
    factor : callable or None
        A preconditioner to start with (``g -> M^{-1} g``).
    gradient_scale : float, default=0.0
        The size of the terms whose difference is the gradient
        (``|A^T (sw Y)|``): ``_policy.GRADIENT_ROUNDING`` units of its rounding are
        the gradient's rounding error, below which residuals are not asked
        for, and a gradient below it gives the step 0 (conjugate gradients on
        rounding alone ran out of their budget and formed a Hessian, 150 ms
        of a 10-class fit).
    """

    def __init__(self, factorize, fallback, project, factor=None, gradient_scale=0.0):
        self.factorize, self.fallback, self.project = factorize, fallback, project
        self.factor = factor
        self.floor = _policy.GRADIENT_ROUNDING * np.finfo(float).eps * gradient_scale
        self.singular = False
        self.n_hessians = 0
        self.first = None

    def _direct(self, H, g):
        Hd = H.dense()
        self.n_hessians += 1
        self.factor = self.factorize(Hd)
        if self.factor is None:  # (collinear columns, separable classes: every step on the dense Hessian)
            self.singular = True
            return self.fallback(Hd, g)
        return self.factor(g)

    def __call__(self, H, g):
        g_norm = float(np.linalg.norm(g))
        if self.first is None:
            self.first = g_norm
        if self.singular or self.factor is None:
            return self._direct(H, g)
        q_m = H.shape[0]
        most = max(2, int(_policy.SOFTMAX_CG_SHARE * q_m / 4))
        x = np.zeros_like(g)
        if g_norm <= self.floor:
            return x
        # (and at least the rounding of the gradient: one iteration when g is rounding itself)
        low, high = _policy.SOFTMAX_CG_RTOL
        tol = max(g_norm * min(max(g_norm / self.first, low), high), 1e-15 * self.first, self.floor)
        r = g.copy()
        z = self.factor(r)
        d = z.copy()
        rz = float(r @ z)
        for _ in range(most):
            Hd = H.dot(d)
            curv = float(d @ Hd)
            if not curv > 0:
                break
            t = rz / curv
            x += t * d
            r -= t * Hd
            if np.linalg.norm(r) <= tol:
                self.project(x)
                return x
            z = self.factor(r)
            rz_new = float(r @ z)
            d *= rz_new / rz
            d += z
            rz = rz_new
        return self._direct(H, g)
