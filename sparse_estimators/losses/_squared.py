"""Least squares."""

import numpy as np
import scipy.linalg

from ._base import BaseLoss, well_conditioned_cholesky
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

    def divergence_from_z(self, Z, Z_new):
        """``sum_i s_i ||z_new_i - z_i||^2 / (2 sum_i s_i)``: exact, the loss being quadratic in ``Z``."""
        D = Z_new - Z
        if self.uniform_weights:
            return 0.5 * float(np.vdot(D, D)) / D.shape[0]
        return 0.5 * float(self.sample_weight @ np.einsum("ij,ij->i", D, D)) / self.sw_sum

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

        ``2 * value * N / (m * (N - k - 1))`` with ``N`` the number of
        observations (:attr:`n_observations`) and ``m`` the number of outputs
        (residual mean square).
        """
        N = self.n_observations
        dof = max(N - k - int(self.fit_intercept), 1.0)
        return 2.0 * value * N / (self.n_outputs * dof)

    def restrict(self, support, dtype=np.float64):  # noqa: D102
        sub = object.__new__(SquaredLoss)
        BaseLoss.__init__(sub, self.design.columns(support, dtype), self.sample_weight,
                          self.n_outputs, self.fit_intercept)
        sub.x_mean, sub.y_mean, sub.Y = self.x_mean[support], self.y_mean, self.Y
        return sub

    def refit(self, support, W, b, *, precise=True):
        """Weighted least squares on the columns in ``support`` (minimum-norm solution).

        Direct, hence always precise (``precise`` is accepted for the
        interface of :meth:`BaseLoss.refit` and not used).

        Solved by the normal equations (Cholesky) when every pivot is at
        least ``1e-4`` of its diagonal entry, i.e. no column has ``R^2`` above
        0.9999 on the columns before it (the cheaper solve, which the
        splicing and support-jump refits call often). Otherwise (nearly
        collinear columns, where the normal equations lose too many digits)
        by least squares with a relative rank cut-off, which gives the
        minimum-norm solution when columns are collinear.
        """
        support = np.asarray(support)
        W_full = np.zeros_like(W)
        if support.size:
            A = self.design.columns(support).dense()
            Aw = A if self.uniform_weights else A * self.sample_weight[:, None]
            L = well_conditioned_cholesky(Aw.T @ A, 1e-4)
            if L is not None:
                W_full[support] = scipy.linalg.cho_solve((L, True), Aw.T @ self.Y, check_finite=False)
            else:
                root = np.sqrt(self.sample_weight)[:, None]
                # relative rank cut-off as in LinearRegression: with gelsy's default an exactly
                # duplicated column was kept and got a coefficient of 4e14 (and its twin -4e14)
                cond = max(A.shape) * np.finfo(float).eps
                W_full[support] = scipy.linalg.lstsq(A * root, self.Y * root, cond=cond, lapack_driver="gelsy")[0]
        return W_full, b

    def refit_candidates(self, supports, W, b):
        """Least-squares refits on several supports of one size, solved together.

        The candidates of one splicing round differ in a few columns: the
        Gram matrix of the union of their columns is formed once and the
        ``C`` normal equations (``k x k`` each) are solved in one batched
        call, and each loss value comes from the explicit residual. Falls
        back to one :meth:`refit` per candidate (least squares by orthogonal
        factorisation) when the supports differ in size or a Cholesky pivot
        of a system is below ``1e-8`` times its largest diagonal entry
        (nearly collinear columns, for which the normal equations lose too
        many digits). See :meth:`BaseLoss.refit_candidates`.
        """
        supports = [np.asarray(s) for s in supports]
        k = supports[0].size if supports else 0
        if k == 0 or any(s.size != k for s in supports):
            return super().refit_candidates(supports, W, b)
        # (plain Python sets and np.array: on the few small arrays of a splicing round,
        # np.unique and np.stack cost more in overhead than the rest of the set-up)
        union = np.array(sorted(set().union(*(s.tolist() for s in supports))), dtype=np.intp)
        A = self.design.columns(union).dense()  # centered columns of the union
        Aw = A if self.uniform_weights else A * self.sample_weight[:, None]
        gram, rhs = Aw.T @ A, Aw.T @ self.Y
        rows = np.array(supports)  # (C, k) features of each candidate
        pos = np.searchsorted(union, rows)  # their columns in A
        G = gram[pos[:, :, None], pos[:, None, :]]
        try:
            pivots = np.diagonal(np.linalg.cholesky(G), axis1=1, axis2=2) ** 2
        except np.linalg.LinAlgError:
            return super().refit_candidates(supports, W, b)
        if not np.all(pivots > 1e-8 * np.diagonal(G, axis1=1, axis2=2).max(axis=1, keepdims=True)):
            # nearly collinear columns: the normal equations would lose too many digits
            return super().refit_candidates(supports, W, b)
        coef = np.linalg.solve(G, rhs[pos])  # (C, k, m)
        C = len(supports)
        on_union = np.zeros((C, union.size, coef.shape[2]))
        on_union[np.arange(C)[:, None], pos] = coef
        Z = A @ on_union  # (C, n, m) linear predictors: no (n, C k) gather of columns
        R = self.Y - Z
        squares = np.einsum("cnm,cnm->cn", R, R)  # per candidate and sample
        if self.uniform_weights:
            mean_squares = squares.sum(axis=1) / squares.shape[1]  # = mean(axis=1), without its overhead
        else:
            mean_squares = squares @ self.sample_weight / self.sw_sum
        W_all = np.zeros((C,) + W.shape)
        W_all[np.arange(C)[:, None], rows] = coef
        return [(W_all[c], b, 0.5 * float(mean_squares[c]), Z[c]) for c in range(C)]
