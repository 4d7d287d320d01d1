"""I-OBS Newton steps for a loss whose curvature is not pointwise (the Cox partial likelihood), when ``n < p``.

The Hessian over the coefficients is ``H = X_c^T H_eta X_c`` with ``H_eta``
the ``n x n`` Hessian in the linear predictor (risk-set covariances, not a
diagonal). With ``mu = alpha + lambda`` (the l2 term and the damping) the
push-through identity gives

``(mu I + X_c^T H_eta X_c)^{-1} g = (g - X_c^T (mu I + H_eta K)^{-1} H_eta X_c g) / mu``,

``K = X_c X_c^T`` (formed once per fit), so that each iteration factors an
``n x n`` matrix (``O(n^3)``) instead of forming the ``p x p`` Hessian
(``O(n p^2)``) and factoring it (``O(p^3)``). ``mu I + H_eta K`` is not
symmetric but similar to a symmetric positive definite matrix (``H_eta`` and
``K`` are positive semi-definite): LU solves it.
"""

import numpy as np
import scipy.linalg

from ..losses import LinearDesign


class CoxWoodbury:
    """``(H + mu I)^{-1} v`` over the coefficients, ``H`` the Hessian of ``loss`` at the linear predictor ``Z``.

    Parameters
    ----------
    loss : CoxLoss
        A loss with ``_risk`` and ``_eta_hessian`` (the ``n x n`` Hessian in
        the linear predictor).
    Z : ndarray of shape (n_samples, 1)
        The linear predictor of the iterate.
    mu : float
        ``alpha + lambda``; must be positive.
    cache : _GLMCache
        The per-fit ``K = X_c X_c^T`` (over the samples of positive weight)
        and those rows of ``X``.
    """

    def __init__(self, loss, Z, mu, cache):
        keep = cache.keep
        H = loss._eta_hessian(loss._risk(Z[:, 0]))  # (rows of weight 0 are zero: dropped)
        self.H = H if np.all(keep) else H[np.ix_(keep, keep)]
        self.mu = mu
        self.design = LinearDesign(cache.Xk, loss.design.offset, loss.design.constant)
        M = self.H @ cache.G
        M[np.diag_indices_from(M)] += mu
        self.lu = scipy.linalg.lu_factor(M, check_finite=False)

    def solve(self, v):
        """``(H + mu I)^{-1} v`` for ``v`` of shape (n_features,)."""
        u = self.H @ self.design.matvec(v[:, None])[:, 0]
        x = scipy.linalg.lu_solve(self.lu, u, check_finite=False)
        return (v - self.design.rmatvec(x[:, None])[:, 0]) / self.mu
