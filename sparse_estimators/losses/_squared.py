"""Least squares."""

import numpy as np
import scipy.linalg

from ._base import BaseLoss
from ._design import LinearDesign


class SquaredLoss(BaseLoss):
    """Weighted mean squared error ``sum_i s_i ||y_i - x_i W||^2 / (2 sum_i s_i)``.

    With ``fit_intercept`` the weighted means of ``X`` and ``y`` are removed
    (implicitly for ``X``: a sparse ``X`` is never densified) and the
    intercept is recovered as ``y_mean - x_mean @ W``; it is never thresholded.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    """

    intercept_is_variable = False
    curvature = 1.0

    def __init__(self, X, y, sample_weight=None, fit_intercept=True):
        y = np.asarray(y, dtype=float)
        Y = y[:, None] if y.ndim == 1 else y
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if fit_intercept:
            total = sw.sum()
            x_mean = np.asarray(X.T @ sw.astype(X.dtype), dtype=float).ravel() / total
            y_mean = sw @ Y / total
        else:
            x_mean, y_mean = None, np.zeros(Y.shape[1])
        super().__init__(LinearDesign(X, x_mean), sw, Y.shape[1], fit_intercept)
        self.x_mean = np.zeros(X.shape[1]) if x_mean is None else x_mean
        self.y_mean = y_mean
        self.Y = Y - y_mean

    def value_from_z(self, Z, W):  # noqa: D102
        R = self.Y - Z
        return 0.5 * float(self.sample_weight @ np.einsum("ij,ij->i", R, R)) / self.sw_sum

    def gradient_from_z(self, Z, W):  # noqa: D102
        R = (Z - self.Y) * (self.sample_weight / self.sw_sum)[:, None]
        return self.design.rmatvec(R), None

    def hessp(self, W, b, V, c):  # noqa: D102
        Z = self.design.matvec(V) * (self.sample_weight / self.sw_sum)[:, None]
        return self.design.rmatvec(Z), None

    def hessian(self, W=None, b=None):
        """Dense Hessian ``X_c^T S X_c / sum(S)``, shape (p, p).

        The loss is separable across outputs, each output having this same
        Hessian (``W`` and ``b`` do not matter: the loss is quadratic).
        """
        return self.design.weighted_gram(self.sample_weight / self.sw_sum)

    def intercept(self, W, b):  # noqa: D102
        if not self.fit_intercept:
            return np.zeros(self.n_outputs)
        return self.y_mean - self.x_mean @ W

    def noise_scale(self, value, k):
        """Noise variance estimated from the loss ``value`` of a fit with ``k`` features.

        ``2 * value * N / (m * (N - k - 1))`` with ``N`` the weighted number
        of samples and ``m`` the number of outputs (residual mean square).
        """
        dof = max(self.sw_sum - k - int(self.fit_intercept), 1.0)
        return 2.0 * value * self.sw_sum / (self.n_outputs * dof)

    def restrict(self, support):  # noqa: D102
        sub = object.__new__(SquaredLoss)
        BaseLoss.__init__(sub, self.design.columns(support), self.sample_weight,
                          self.n_outputs, self.fit_intercept)
        sub.x_mean, sub.y_mean, sub.Y = self.x_mean[support], self.y_mean, self.Y
        return sub

    def refit(self, support, W, b):
        """Weighted least squares on the columns in ``support`` (minimum-norm solution)."""
        support = np.asarray(support)
        W_full = np.zeros_like(W)
        if support.size:
            root = np.sqrt(self.sample_weight)[:, None]
            A = self.design.columns(support).dense() * root
            W_full[support] = scipy.linalg.lstsq(A, self.Y * root, lapack_driver="gelsy")[0]
        return W_full, b
