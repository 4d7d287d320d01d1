"""Logistic (binary) and multinomial losses with an l2 term."""

import numpy as np
import scipy.linalg
from scipy.special import expit, log_expit, softmax

from .. import _policy
from ._base import BaseLoss
from ._design import LinearDesign, column_values, constant_columns, weighted_column_sums
from ._numerics import (
    cholesky_newton_solve,
    diagonal_mean,
    min_norm_solve,
    newton_minimise,
    row_logsumexp,
    well_conditioned_cholesky,
)
from ._pointwise_newton import _PointwiseNewtonRefit
from ._softmax_newton import FrozenNewtonSolver, SoftmaxCurvature, block_hessian, class_rmatvec, softmax_parts


class _GLMLoss(BaseLoss):
    """Mean of a pointwise loss ``psi(z_i, y_i)`` plus ``alpha/2 ||W||_F^2``.

    The intercept ``b`` is a free, unpenalised variable (never thresholded).
    With ``fit_intercept`` the columns of ``X`` are centred implicitly at
    their weighted means (``z = (x - x_mean) W + b``): ``b`` is the intercept
    at the mean, and :meth:`intercept` gives the model's, ``b - x_mean W``.
    """

    intercept_is_variable = True

    def __init__(self, X, Y, sample_weight=None, fit_intercept=True, alpha=0.0):
        offset = constant = None
        if fit_intercept:
            # the columns centred implicitly, as least squares does: the variable b is the intercept at the
            # weighted mean of X, so that adding a constant to a column changes neither the iterates nor
            # the curvature the step sizes see (X + 100 picked another support, X + 1e8 stalled at W = 0);
            # a constant column only duplicates the intercept: exactly 0 once centred, never a candidate
            sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
            offset = weighted_column_sums(X, sw) / sw.sum()
            constant = constant_columns(X)
            if constant is not None:
                offset[constant] = column_values(X, constant)
        super().__init__(LinearDesign(X, offset, constant), sample_weight, Y.shape[1], fit_intercept, alpha)
        self.Y = Y
        self._labels_sw = None  # (see _weighted_labels)

    def intercept(self, W, b):
        """The model's intercept (for the uncentred ``X``): ``b - x_mean @ W``."""
        if not self.fit_intercept:
            return np.zeros(self.n_outputs)
        b = np.asarray(b, dtype=float)
        return b if self.design.offset is None else b - self.design.offset @ W

    def intercept_variable(self, W, intercept):
        """The variable ``b`` of the model ``(W, intercept)`` (the inverse of :meth:`intercept`)."""
        intercept = np.asarray(intercept, dtype=float)
        return intercept if self.design.offset is None else intercept + self.design.offset @ W

    def _pointwise(self, Z):
        """Per-sample losses, shape (n,)."""
        raise NotImplementedError

    def _dz(self, Z):
        """Derivative of the per-sample loss in Z, shape (n, m)."""
        raise NotImplementedError

    def _hz(self, Z, Zv):
        """Second derivative of the per-sample loss in Z applied to Zv."""
        raise NotImplementedError

    def value_from_z(self, Z, W):  # noqa: D102
        f = float(self.sample_weight.dot(self._pointwise(Z))) / self.sw_sum  # (.dot: @'s BLAS call, sooner)
        # (without the l2 term, no pass over W: adding 0.0 leaves f unchanged)
        return f + 0.5 * self.alpha * float(np.vdot(W, W)) if self.alpha else f

    def _backprop(self, D, W):
        D = D * self._sample_share
        if self.fit_intercept and type(self.design) is LinearDesign:  # (D's column sums, also the centring's, once)
            gW, gb = self.design.rmatvec_and_sums(D)
        else:
            gW = self.design.rmatvec(D)
            gb = np.add.reduce(D, axis=0) if self.fit_intercept else np.zeros(self.n_outputs)
        if self.alpha:  # (adding 0 * W would only turn -0.0 entries into 0.0)
            gW = gW + self.alpha * W
        return gW, gb

    def gradient_from_z(self, Z, W):  # noqa: D102
        return self._backprop(self._dz(Z), W)

    def hessp(self, W, b, V, c):  # noqa: D102
        Z = self.linear_predictor(W, b)
        Zv = self.design.matvec(V)
        if self.fit_intercept:
            Zv = Zv + c
        return self._backprop(self._hz(Z, Zv), V)

    def _hess_weights(self, Z):
        """Pointwise second derivatives in z, shape (n, m, m)."""
        raise NotImplementedError

    def _hess_diag(self, Z):
        """Diagonal of the pointwise second derivatives in z, shape (n, m)."""
        raise NotImplementedError

    def feature_curvatures(self, Z, features):  # noqa: D102 - documented in BaseLoss
        features = np.asarray(features)
        weights = self._hess_diag(Z) * (self.sample_weight / self.sw_sum)[:, None]
        design = self.design
        if not design.is_sparse and features.size <= design.shape[1] // 4:
            # a few columns (the splicing search's): their centred squares in one product, a quarter of the time
            # of column_moments' blocked pass (constant columns are exactly 0 once centred)
            A = np.asarray(design.X[:, features], dtype=float)
            if design.offset is not None:
                A -= design.offset[features]
            return (A * A).T @ weights + self.alpha
        return design.columns(features).column_moments(weights) + self.alpha

    def hessian(self, W, b, weights=None):  # noqa: D102 - documented in BaseLoss
        # (``weights``: ``Z -> (n, m, m)`` curvatures in place of the loss's, e.g. a majoriser's)
        m, p = self.n_outputs, self.n_features
        Hw = (self._hess_weights if weights is None else weights)(self.linear_predictor(W, b))
        Hw = Hw * (self.sample_weight / self.sw_sum)[:, None, None]
        has_b = self.fit_intercept
        q = p + int(has_b)
        H = np.zeros((q, m, q, m))
        for a in range(m):
            for c in range(a, m):
                w = Hw[:, a, c]
                block = np.zeros((q, q))
                block[:p, :p] = self.design.weighted_gram(w)
                if has_b:
                    cross = self.design.rmatvec(w[:, None])[:, 0]  # (centred columns)
                    block[:p, p] = block[p, :p] = cross
                    block[p, p] = w.sum()
                H[:, a, :, c] = block
                H[:, c, :, a] = block.T
        H = H.reshape(q * m, q * m)
        H[np.arange(p * m), np.arange(p * m)] += self.alpha
        return H

    def minus_two_log_likelihood(self, W, b):
        """The deviance: ``2 N`` times the weighted mean log-loss (the l2 term excluded)."""
        Z = self.linear_predictor(W, b)
        return self._twice_weighted_total(self._pointwise(Z))

    def _canonical(self, W):
        """The representative of a refit's ``W`` that :meth:`refit` returns (itself here)."""
        return W

    #: how :meth:`refit`'s Newton steps solve ``H x = g`` (minimum norm: the
    #: multinomial Hessian is singular along softmax shifts)
    _solve_newton = staticmethod(min_norm_solve)

    def refit(self, support, W, b, *, max_iter=100, precise=True):
        """Minimise the loss over the rows in ``support`` (see :meth:`BaseLoss.refit`).

        On a dense ``X``, Newton's method runs on the support's columns
        copied once into a small ``n x (k + 1)`` block (the last column for
        the intercept), with the value, gradient and Hessian of the pointwise
        loss computed directly on it: the splicing search refits many small
        candidates, where the generic restricted loss costs more in overhead
        than in arithmetic. A sparse ``X`` takes the generic path.
        """
        if self.design.is_sparse:
            W, b = super().refit(support, W, b, max_iter=max_iter, precise=precise)
            return self._canonical(W), b
        return self._dense_refit(support, W, b, max_iter, precise)[:2]

    def _refit_evaluated(self, support, W, b):
        if self.design.is_sparse:
            return super()._refit_evaluated(support, W, b)
        return self._dense_refit(support, W, b, 100, precise=False)

    def _dense_refit(self, support, W, b, max_iter, precise=True, A=None, factor=None, limit=None):
        """:meth:`refit` on a dense ``X``; returns ``(W, b, value, Z)`` like :meth:`refit_candidates`.

        ``A``, when given, holds the support's centred columns (and one of
        ones with an intercept), and ``factor`` a preconditioner of the
        multinomial Newton steps (see :meth:`MultinomialLoss.refit_candidates`).
        ``limit``: :func:`~sparse_estimators.losses._numerics.newton_minimise`; refused: ``(None, None, inf, None)``
        """
        support = np.asarray(support)
        k, m, has_b = support.size, self.n_outputs, self.fit_intercept
        q = k + int(has_b)
        if A is None:
            A = self._refit_columns(support)
        b = np.asarray(b, dtype=float)
        sw = self.sample_weight / self.sw_sum
        diag = np.arange(k * m)
        last = {}
        multi = m > 1
        if multi:
            # the labels' terms of the value and gradient, sum_i sw_i z_i . y_i and A^T (sw Y), computed once: a
            # step then costs one softmax pass and one product (2.4 times faster at 20000 x 21, 3 classes)
            Y_sw = self._weighted_labels(sw)
            AtY = A.T @ Y_sw
            uniform = self.uniform_weights

        def evaluate(theta):
            T = theta.reshape(q, m)
            Z = A @ T  # without an intercept, b is not part of the model
            if multi:  # (the value and the probabilities in one pass)
                lse, P = softmax_parts(Z)
                last.update(P=P)
                f = float(sw @ lse) - float(np.vdot(Z, Y_sw))
            else:
                f = float(sw @ self._pointwise(Z))
            f += 0.5 * self.alpha * float(np.vdot(T[:k], T[:k]))
            last.update(theta=theta, Z=Z, f=f)
            return T, Z, f

        def fun(theta):
            T, Z, f = evaluate(theta)
            if multi:
                P = last["P"]
                G = (A.T @ P) * sw[0] - AtY if uniform else A.T @ (P * sw[:, None]) - AtY
            else:
                G = A.T @ (self._dz(Z) * sw[:, None])
            G[:k] += self.alpha * T[:k]
            return f, G.ravel()

        def hessian(theta):
            Z = last["Z"] if np.array_equal(theta, last["theta"]) else evaluate(theta)[1]
            if multi:  # (an operator: the solver forms it only when conjugate gradients stall)
                return SoftmaxCurvature(A, last["P"], sw, self.alpha, k)
            H = (A * (self._hess_diag(Z)[:, 0] * sw)[:, None]).T @ A
            H[diag, diag] += self.alpha
            return H

        solve = self._solve_newton
        if multi:
            solve = FrozenNewtonSolver(self._factorize_newton, self._solve_newton, self._project_shifts, factor,
                                       gradient_scale=float(np.linalg.norm(AtY)))
        theta = np.concatenate([W[support].ravel(), b]) if has_b else W[support].ravel()
        theta = newton_minimise(fun, hessian, theta, max_iter=max_iter, solve=solve, precise=precise, limit=limit)
        if theta is None:  # refused (_policy.REJECT_DECREMENTS; the decrement of the CG step: doc/changelog.rst)
            return None, None, np.inf, None
        T = theta.reshape(q, m)
        W_full = np.zeros_like(W)
        W_full[support] = T[:k]
        b_out = T[k].copy() if has_b else b
        canonical = self._canonical(W_full)
        if canonical is W_full and np.array_equal(theta, last["theta"]):
            return W_full, b_out, last["f"], last["Z"]
        T = np.vstack([canonical[support], b_out[None]]) if has_b else canonical[support]
        _, Z, f = evaluate(T.ravel())
        return canonical, b_out, f, Z

    def _weighted_labels(self, sw):
        """``Y`` with rows scaled by ``sw`` (the sample weights over their sum), kept for the next refit."""
        if self._labels_sw is None:
            self._labels_sw = self.Y * sw[:, None]
        return self._labels_sw

    def _refit_columns(self, support):
        """The dense refit's ``n x (k + 1)`` block: the support's centred columns, then ones (intercept)."""
        k = support.size
        A = np.empty((self.n_samples, k + int(self.fit_intercept)))
        if self.design.offset is not None:  # (copied and centred in one pass: the same differences)
            # (transposed: the copy's rows are X's columns; a third of the time of the strided rows of n)
            np.subtract(self.design._copy(support, None).T, self.design.offset[support][:, None], out=A[:, :k].T)
        else:
            A[:, :k] = self.design._copy(support, None)
        if self.fit_intercept:
            A[:, k] = 1.0
        return A

    def restrict(self, support, dtype=np.float64):  # noqa: D102
        sub = object.__new__(type(self))
        BaseLoss.__init__(sub, self.design.columns(support, dtype), self.sample_weight,
                          self.n_outputs, self.fit_intercept, self.alpha)
        sub.Y, sub._labels_sw = self.Y, self._labels_sw
        return sub


class LogisticLoss(_PointwiseNewtonRefit, _GLMLoss):
    """Binary logistic loss, labels in {0, 1}.

    ``sum_i s_i (log(1 + exp(z_i)) - y_i z_i) / sum_i s_i + alpha/2 ||w||^2``
    with ``z = X w + b``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values in {0, 1}
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    alpha : float, default=0.0
        Strength of the l2 term on ``w`` (not on the intercept).
    """

    #: see SquaredLoss.group_search_from_zero
    group_search_from_zero = True

    curvature = 0.25

    def __init__(self, X, y, sample_weight=None, fit_intercept=True, alpha=0.0):
        super().__init__(X, np.asarray(y, dtype=float).reshape(-1, 1), sample_weight, fit_intercept, alpha)

    def _pointwise(self, Z):
        z, y = Z[:, 0], self.Y[:, 0]
        return -log_expit(z) + (1.0 - y) * z

    # the splicing search's candidate refits: the shared quadratic start and the one-output Newton loop of
    # _PointwiseNewtonRefit.refit_candidates; refit() keeps _GLMLoss's loop (fits without an exchange unchanged)
    _dense_refit = _GLMLoss._dense_refit
    #: newton_minimise's precise=False rule, as before: the candidates' values within about 1e-12 of their
    #: minima (the classifiers' gate is 0: any decrease counts, so the values are kept that close)
    candidate_decrement = 1e-6
    #: a candidate's refit stops once it clearly cannot get below the value it needs (see _pointwise_newton's
    #: REJECT_DECREMENTS): the exchanges the search accepts, and so every result, are unchanged
    rejects_candidates = True

    def _refit_evaluated(self, support, W, b):
        """A lone candidate (the second search's start): the one-output Newton loop, as the others."""
        if self.design.is_sparse or self.positive:
            return super()._refit_evaluated(support, W, b)
        return _PointwiseNewtonRefit._dense_refit(self, support, W, b, 100, precise=False)

    def _parts(self, z):
        """The pointwise loss and its first and second derivatives in ``z`` (1-D), for the candidate refits."""
        p = expit(z)
        y = self.Y[:, 0]
        return -log_expit(z) + (1.0 - y) * z, p - y, p * (1.0 - p)

    def _dz(self, Z):
        return expit(Z) - self.Y

    def _hz(self, Z, Zv):
        p = expit(Z)
        return p * (1.0 - p) * Zv

    def _hess_weights(self, Z):
        return self._hess_diag(Z)[:, :, None]

    # the binary Hessian is positive definite unless the support's columns are (nearly) collinear or the
    # classes separate
    _solve_newton = staticmethod(cholesky_newton_solve)

    def _hess_diag(self, Z):
        p = expit(Z)
        return p * (1.0 - p)

    def initial_intercept(self):  # noqa: D102
        if not self.fit_intercept:
            return np.zeros(1)
        mean = float(self.sample_weight @ self.Y[:, 0]) / self.sw_sum
        mean = min(max(mean, 1e-12), 1 - 1e-12)
        return np.array([np.log(mean / (1.0 - mean))])


class MultinomialLoss(_GLMLoss):
    """Multinomial (softmax cross-entropy) loss with K classes.

    ``sum_i s_i (logsumexp(z_i) - z_{i, y_i}) / sum_i s_i + alpha/2 ||W||_F^2``
    with ``Z = X W + b``, ``W`` of shape (p, K). Thresholding the rows of
    ``W`` gives one support shared by all classes.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), integer labels in ``0 .. K-1``
    n_classes : int
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    alpha : float, default=0.0
    """

    curvature = 0.5

    def __init__(self, X, y, n_classes, sample_weight=None, fit_intercept=True, alpha=0.0):
        y = np.asarray(y, dtype=np.intp)
        Y = np.zeros((y.shape[0], n_classes))
        Y[np.arange(y.shape[0]), y] = 1.0
        super().__init__(X, Y, sample_weight, fit_intercept, alpha)

    def _pointwise(self, Z):
        return row_logsumexp(Z) - np.einsum("ij,ij->i", Z, self.Y)

    def _backprop(self, D, W):
        D = D * self._sample_share
        gW = class_rmatvec(self.design, D) + self.alpha * W  # (the product in the order BLAS reads fastest)
        gb = D.sum(axis=0) if self.fit_intercept else np.zeros(self.n_outputs)
        return gW, gb

    def _dz(self, Z):
        return softmax(Z, axis=1) - self.Y

    def _hz(self, Z, Zv):
        P = softmax(Z, axis=1)
        PZ = P * Zv
        return PZ - P * PZ.sum(axis=1, keepdims=True)

    def _hess_weights(self, Z):
        P = softmax(Z, axis=1)
        return np.einsum("ia,ac->iac", P, np.eye(P.shape[1])) - P[:, :, None] * P[:, None, :]

    def _hess_diag(self, Z):
        P = softmax(Z, axis=1)
        return P * (1.0 - P)

    def removal_costs(self, Z, features, W):  # noqa: D102 - documented in BaseLoss
        # the classes' block: sample i adds x_ij^2 times the variance of w_j under its probabilities, where the
        # diagonal alone (P (1 - P)) drops the negative cross-class terms, up to a third of a 3-class cost
        features = np.asarray(features)
        P, rows = softmax(Z, axis=1), W[features]
        spread = (P @ (rows * rows).T - (P @ rows.T) ** 2) * (self.sample_weight / self.sw_sum)[:, None]
        moments = self.design.columns(features).column_moments(spread)
        return 0.5 * (moments.diagonal() + self.alpha * np.einsum("ij,ij->i", rows, rows))

    @staticmethod
    def _block_hessian(A, Z, sw):
        """The dense refit's ``(q m)^2`` Hessian at ``Z`` (``j * m + a`` for column ``j``, class ``a``).

        See :func:`~sparse_estimators.losses._softmax_newton.block_hessian`.
        """
        return block_hessian(A, softmax(Z, axis=1), sw)

    def _shift_rows(self, q):
        """The rows of the ``(q, m)`` variables along which the Hessian is singular (softmax shifts)."""
        return np.arange(q) if self.alpha == 0 else np.arange(q - 1, q) if self.fit_intercept else np.arange(0)

    def _project_shifts(self, x):
        """Remove, in place, the component of the step ``x`` along the softmax shifts.

        That component is ``g``'s rounding over the Hessian's, which depends on
        the BLAS kernel: removed exactly, so that the step (and the fitted
        intercepts) is the minimum-norm one.
        """
        m = self.n_outputs
        steps = x.reshape(-1, m)
        rows = self._shift_rows(steps.shape[0])
        steps[rows] -= steps[rows].mean(axis=1, keepdims=True)
        return x

    def _factorize_newton(self, H):
        """``g -> H^+ g`` (the minimum-norm solution) by Cholesky, or None when ``H`` is singular beyond the shifts.

        The Hessian is singular along the softmax shifts (a constant added to
        a row of coefficients over the classes: every row without the l2
        term, the intercept's with it); ``g`` is orthogonal to them, so adding
        the projector onto them gives the minimum-norm solution by Cholesky,
        far cheaper than the SVD-based solve used on other
        (near-)singularities (collinear columns, separable classes).
        """
        m = self.n_outputs
        q = H.shape[0] // m
        rows = self._shift_rows(q)
        if rows.size == 0:
            L = well_conditioned_cholesky(H, 1e-10)
        else:
            scale = max(diagonal_mean(np.diagonal(H), self.alpha), np.finfo(float).tiny)
            shifted = H.copy()
            view = shifted.reshape(q, m, q, m)
            view[rows, :, rows, :] += scale / m  # scale times the projector onto (e_j kron 1_m) / sqrt(m)
            L = well_conditioned_cholesky(shifted, 1e-10)
        if L is None:
            return self._factorize_flat_shifts(H, rows)
        return lambda g: self._project_shifts(scipy.linalg.cho_solve((L, True), g, check_finite=False))

    def _factorize_flat_shifts(self, H, rows):
        """:meth:`_factorize_newton` with the coefficient rows whose shift curvature ``alpha`` is negligible.

        Along a coefficient row's softmax shift the Hessian's curvature is
        ``alpha`` alone; on a column far larger than the others (``1e7`` times)
        ``alpha`` falls below the Cholesky pivot test relative to that row's
        curvature, and the SVD fallback cut the small columns' directions too
        (their curvature below ``eps`` of the large one's): the refit stopped
        far from its minimum. Those rows' shifts are treated as the
        intercept's (no step along them, as the SVD's cut did), each shifted
        by its own mean diagonal, so that the factorisation is scale-free.
        None when no row qualifies or ``H`` stays singular.
        """
        if not self.alpha:  # (every row's shift is already one of rows)
            return None
        m = self.n_outputs
        q = H.shape[0] // m
        curvature = np.einsum("jaja->j", H.reshape(q, m, q, m)) / m  # each row's mean diagonal
        flat = np.flatnonzero(self.alpha <= _policy.FLAT_SHIFT_RTOL * curvature[:q - int(self.fit_intercept)])
        if flat.size == 0:
            return None
        rows = np.union1d(rows, flat)
        shifted = H.copy()
        view = shifted.reshape(q, m, q, m)
        view[rows, :, rows, :] += (np.maximum(curvature[rows], np.finfo(float).tiny) / m)[:, None, None]
        L = well_conditioned_cholesky(shifted, 1e-10)
        if L is None:
            return None

        def solve(g):
            x = scipy.linalg.cho_solve((L, True), g, check_finite=False)
            steps = x.reshape(q, m)
            steps[rows] -= steps[rows].mean(axis=1, keepdims=True)
            return x

        return solve

    def _solve_newton(self, H, g):
        # the minimum-norm Newton step on a dense Hessian: by Cholesky (see _factorize_newton), by the SVD
        # when H is singular beyond the softmax shifts
        solve = self._factorize_newton(H)
        if solve is None:
            return self._project_shifts(min_norm_solve(H, g))
        return solve(g)

    def _restricted_solve(self, H, g):
        # the generic refit's (a sparse X): the minimum-norm solve, by Cholesky when coefficient rows' shifts are
        # flat (see _factorize_flat_shifts; the SVD cut the directions of columns far smaller than another)
        solve = self._factorize_flat_shifts(H, self._shift_rows(H.shape[0] // self.n_outputs))
        return min_norm_solve(H, g) if solve is None else solve(g)

    #: the splicing search passes ``limits`` to :meth:`refit_candidates` (see ``LogisticLoss.rejects_candidates``)
    rejects_candidates = True

    def refit_candidates(self, supports, W, b, limits=None):
        """Refit on each of several supports (see :meth:`BaseLoss.refit_candidates`), sharing one Hessian.

        On a dense ``X``, the Hessian over the union of the candidates' (and
        the current support's) columns is formed once, at the current point;
        each candidate's Newton steps run conjugate gradients preconditioned
        by the factor of its block (see
        :class:`~sparse_estimators.losses._softmax_newton.FrozenNewtonSolver`),
        on its columns taken from the union's ``n x |U|`` copy rather than
        from ``X``.

        ``limits`` (or None): the value each candidate must get below; its
        Newton iterations stop once it lies more than :data:`~sparse_estimators._policy.REJECT_DECREMENTS`
        decrements above (entry ``(None, None, inf, None)``; a sparse ``X`` refits all to the end).
        """
        supports = [np.asarray(s) for s in supports]
        if self.design.is_sparse or len(supports) < 2 or not all(s.size for s in supports):
            return super().refit_candidates(supports, W, b)
        if limits is None:
            limits = [None] * len(supports)
        m, has_b = self.n_outputs, self.fit_intercept
        current = np.flatnonzero(np.any(W != 0, axis=1))
        union = np.array(sorted(set(current.tolist()).union(*(s.tolist() for s in supports))), dtype=np.intp)
        u = union.size
        A_union = self._refit_columns(union)
        b = np.asarray(b, dtype=float)
        sw = self.sample_weight / self.sw_sum
        P = softmax(A_union @ (np.vstack([W[union], b[None]]) if has_b else W[union]), axis=1)
        H = block_hessian(A_union, P, sw)
        if self.alpha:
            diag = np.arange(u * m)
            H[diag, diag] += self.alpha
        # each candidate starts at the minimiser of the quadratic model at the current point over its variables,
        # with its removed features' coefficients taken to 0 (about one Newton step fewer per candidate)
        theta = np.vstack([W[union], b[None]]) if has_b else W[union].copy()
        G = A_union.T @ (P * sw[:, None]) - A_union.T @ self._weighted_labels(sw)
        G[:u] += self.alpha * theta[:u]
        theta, G = theta.ravel(), G.ravel()
        out = []
        for support, limit in zip(supports, limits, strict=True):
            cols = np.searchsorted(union, support)
            removed = np.searchsorted(union, np.setdiff1d(current, support))
            if has_b:
                cols = np.append(cols, u)
            rows = (cols[:, None] * m + np.arange(m)).ravel()
            gone = (removed[:, None] * m + np.arange(m)).ravel()
            factor = self._factorize_newton(H[np.ix_(rows, rows)])
            start_rows = theta[rows]
            if factor is not None:
                start_rows = start_rows - factor(G[rows] - H[np.ix_(rows, gone)] @ theta[gone])
            T = start_rows.reshape(-1, m)
            start = np.zeros_like(W)
            start[support] = T[:support.size]
            out.append(self._dense_refit(support, start, T[-1] if has_b else b, 100, precise=False,
                                         A=A_union[:, cols], factor=factor, limit=limit))
        return out

    @property
    def coefficients_per_feature(self):
        """``n_classes - 1``: the softmax is invariant to a shift shared by the classes."""
        return self.n_outputs - 1

    def intercept(self, W, b):
        """The intercept (see :meth:`_GLMLoss.intercept`), shifted to mean zero (softmax is invariant to the shift)."""
        c = super().intercept(W, b)
        return c - np.mean(c) if self.fit_intercept else c

    def _canonical(self, W):
        """Without the l2 term, the representative whose rows sum to zero over the classes.

        ``W`` is then only defined up to a vector added to every class column
        (softmax invariance) and Newton's minimum-norm steps leave that
        component to rounding: the representative of the limit ``alpha -> 0``
        makes equivalent data give equal coefficients.
        """
        return W - W.mean(axis=1, keepdims=True) if self.alpha == 0 else W

    def initial_intercept(self):  # noqa: D102
        if not self.fit_intercept:
            return np.zeros(self.n_outputs)
        freq = np.maximum(self.sample_weight @ self.Y / self.sw_sum, 1e-12)
        logf = np.log(freq)
        return logf - logf.mean()
