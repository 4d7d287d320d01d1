"""A rank constraint: thresholding lifted to the singular values of the coefficient matrix."""

import numpy as np
import scipy.optimize
from scipy.sparse.linalg import LinearOperator, cg

from ..thresholding import threshold_singular_values
from ._base import Structure


class LowRank(Structure):
    """``rank(W) <= r`` for the coefficient matrix ``W`` (n_features, n_outputs); ``k`` is the rank.

    The projection keeps the ``r`` largest singular triplets of ``W`` and maps
    their singular values with the operator's ``shrink`` at ``tau``, the
    ``(r+1)``-th singular value (Liu & Barber, Sec. 5, eq. 20; hard
    thresholding is the best rank-``r`` approximation), through
    :func:`~sparse_estimators.thresholding.threshold_singular_values`.

    The refit keeps the iterate's column space (its top ``r`` right singular
    vectors ``V``, in the outputs) and re-optimises everything else: for
    least squares the minimiser of ``f(B V^T)`` over ``B`` is
    ``W_ols V V^T``, ``W_ols`` the unconstrained least-squares fit. There are
    no units to exchange and no support to settle (every feature stays), so
    neither the splicing search nor the support jump applies.

    Parameters
    ----------
    operator : ThresholdingOperator
    n_outputs : int
        The number of columns of ``W`` (targets).
    """

    exchanges = False
    settles = False
    unit_name = "min(n_features, n_targets)"

    def __init__(self, operator, n_outputs):
        super().__init__(operator)
        self.n_outputs = int(n_outputs)

    def n_units(self, n_features):  # noqa: D102
        return min(n_features, self.n_outputs)

    def unit_scores(self, G):
        """The singular values of ``G``."""
        return np.linalg.svd(G, compute_uv=False)

    def units(self, features):  # noqa: D102
        raise NotImplementedError("a rank constraint has no units of features")

    def features(self, units):  # noqa: D102
        raise NotImplementedError("a rank constraint has no units of features")

    def __call__(self, W, k, *, return_support=False):  # noqa: D102
        W = np.asarray(W, dtype=float)
        U, s, Vt = np.linalg.svd(W, full_matrices=False)
        U, s, Vt = threshold_singular_values(self.operator, int(k), U, s, Vt)
        out = (U * s) @ Vt
        if not return_support:
            return out
        return out, np.flatnonzero(np.any(out != 0, axis=1))

    def support(self, W, k):  # noqa: D102
        return np.flatnonzero(np.any(np.asarray(W) != 0, axis=1))

    def expand(self, G, mask, k):
        """Every feature: the gradient is not restricted (no support expansion for a rank constraint)."""
        return np.ones_like(mask)

    def column_space(self, W, r):
        """The top ``r`` right singular vectors of ``W`` (columns, shape (n_outputs, r'))."""
        _, s, Vt = np.linalg.svd(W, full_matrices=False)
        keep = s[:r] > s[0] * max(W.shape) * np.finfo(float).eps if s.size else np.zeros(0, dtype=bool)
        return Vt[:r][keep].T

    def refit(self, loss, support, W, b):
        """The loss minimised over the matrices with the column space ``V`` of ``W`` (the rank of ``W`` kept).

        Least squares: ``W_ols V V^T`` (closed form). Other losses (the
        multinomial of :class:`~sparse_estimators.ReducedRankClassifier`):
        ``B V^T`` and the intercept variable by Newton-CG from ``W V``, ``b``.
        """
        V = self.column_space(W, min(W.shape))
        if V.shape[1] == 0:
            return W, b
        if not loss.intercept_is_variable and hasattr(loss, "y_mean"):  # least squares
            W_ols, b = loss.refit(np.arange(loss.n_features), W, b)
            return W_ols @ V @ V.T, b
        return _refit_in_column_space(loss, V, W, b)


def _refit_in_column_space(loss, V, W, b):
    """``min_{B, b} loss(B V^T, b)`` from ``B = W V`` (``b`` only if a variable), by Newton-CG (trust region).

    Hessian-vector products through :meth:`~sparse_estimators.losses.BaseLoss.hessp`
    (two products with ``X`` each, no dense Hessian), iterated to a gradient
    at rounding level, so that equivalent data (weights against repeated
    rows) give the same fit.
    """
    p, r = W.shape[0], V.shape[1]
    with_b = loss.intercept_is_variable and loss.fit_intercept

    def unpack(theta):
        B = theta[:p * r].reshape(p, r)
        return B @ V.T, (theta[p * r:] if with_b else b)

    def fun(theta):
        Wc, bc = unpack(theta)
        Z = loss.linear_predictor(Wc, bc)
        gW, gb = loss.gradient_from_z(Z, Wc)
        grad = (gW @ V).ravel()
        return loss.value_from_z(Z, Wc), (np.concatenate([grad, gb]) if with_b else grad)

    def hessp(theta, v):
        Wc, bc = unpack(theta)
        dW = v[:p * r].reshape(p, r) @ V.T
        HW, Hb = loss.hessp(Wc, bc, dW, v[p * r:] if with_b else None)
        out = (HW @ V).ravel()
        return np.concatenate([out, Hb]) if with_b else out

    theta0 = np.concatenate([(W @ V).ravel(), b]) if with_b else (W @ V).ravel()
    f0, g0 = fun(theta0)
    gtol = 1e-14 * max(1.0, np.linalg.norm(g0))
    theta = scipy.optimize.minimize(fun, theta0, jac=True, hessp=hessp, method="trust-ncg",
                                    options={"gtol": gtol, "maxiter": 200}).x
    # near the minimum the value changes by less than its rounding and trust-ncg can stop with a gradient of
    # 1e-11 (its status 2), leaving a result that depends on the summation order (weights against repeated
    # rows, the BLAS kernel): full Newton steps (CG on hessp) while the gradient norm falls
    # (a softmax loss is invariant to a shift of the intercepts shared by the classes: its Hessian is
    # singular there and CG drifted along it; the steps are kept off that direction, the projector onto it
    # added to the operator)
    shift = with_b and loss.coefficients_per_feature < loss.n_outputs

    def off_shift(v):
        if shift:
            v = v.copy()
            v[p * r:] -= v[p * r:].mean()
        return v

    g = off_shift(fun(theta)[1])
    for _ in range(10):
        if np.linalg.norm(g) <= gtol:
            break
        op = LinearOperator((theta.size, theta.size), dtype=float,
                            matvec=lambda v, t=theta: hessp(t, v) + (v - off_shift(v)))
        step = off_shift(cg(op, -g, rtol=1e-10, maxiter=10 * theta.size)[0])
        g_new = off_shift(fun(theta + step)[1])
        if not np.linalg.norm(g_new) < np.linalg.norm(g):
            break
        theta, g = theta + step, g_new
    if not fun(theta)[0] <= f0:  # (never worse than the start)
        theta = theta0
    return unpack(theta)[0], (theta[p * r:].copy() if with_b else b)
