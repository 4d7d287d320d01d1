"""Least squares."""

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.linalg.lapack import dposv as _posv

from .. import _policy
from .._utils import row_squares
from .._utils import vdot as _vdot
from ._base import BaseLoss
from ._design import LinearDesign, column_values, constant_columns, constant_target, weighted_column_sums
from ._numerics import note_collinear

_all = np.logical_and.reduce  # (ndarray.all without its Python wrapper)
_min = np.minimum.reduce


def _one_size(supports):
    """The supports as arrays, and whether they share one non-zero size (one batched solve)."""
    supports = [np.asarray(s) for s in supports]
    k = supports[0].size if supports else 0
    return supports, k > 0 and all(s.size == k for s in supports)


def _cholesky_solve(G, rhs, rtol, scale=None):
    """Solution of ``G x = rhs`` (``G`` symmetric positive definite), or None when it is nearly singular.

    One LAPACK ``posv`` (Cholesky factorisation and solve; a refit at
    ``k = 10`` takes 16 instead of 28 microseconds with separate
    factorisation and solve calls). None when the factorisation fails or a
    pivot ``L_jj^2`` is at most ``rtol`` times ``scale`` (default: its
    diagonal entry ``G_jj``, so that the test is the part of column ``j`` not
    explained by the columns before it, as in
    :func:`~sparse_estimators.losses._numerics.well_conditioned_cholesky`).
    """
    L, x, info = _posv(G, rhs, 1)  # (lower=1 by position: f2py's keyword parsing costs a microsecond)
    if info:
        return None
    pivots = L.diagonal()
    if scale is not None and pivots.size:  # (positive pivots, info being 0: the least square is the least one's)
        least = _min(pivots)
        return x if least * least > rtol * scale else None
    # (logical_and.reduce: np.all's dispatch cost a third of this function at k = 10, ndarray.all's wrapper a tenth)
    return x if _all(pivots * pivots > rtol * G.diagonal()) else None


def _batched_normal_equations(G, rhs):
    """Solutions of the systems ``G[c] x = rhs[c]``, shape (C, k, m), or None.

    None when a Cholesky pivot of a system is at most ``1e-8`` times its
    largest diagonal entry (nearly collinear columns, for which the normal
    equations lose too many digits): the caller then refits one by one.
    One :func:`_cholesky_solve` per system: for the few ``k x k`` systems of
    a splicing round, 17 us against 22 us for numpy's batched ``cholesky``
    and ``solve`` (4 systems of 10).
    """
    out = np.empty(rhs.shape)
    # (_cholesky_solve's test of every pivot, with each system's largest diagonal entry as its scale)
    limits = (1e-8 * np.maximum.reduce(G.diagonal(axis1=1, axis2=2), axis=1)).tolist()
    for c, limit in enumerate(limits):
        L, x, info = _posv(G[c], rhs[c], 1)
        if info:
            return None
        least = _min(L.diagonal())  # (positive pivots, info being 0: the least square is the least one's)
        if not least * least > limit:
            return None
        out[c] = x
    return out


def _nnls(A, b):
    """``argmin_{x >= 0} ||A x - b||``: scipy's ``nnls``, or its bounded-variable least squares where ``nnls`` fails.

    scipy's ``nnls`` (reimplemented in scipy 1.12) raises ``RuntimeError`` when
    it reaches its iteration limit, which it did on badly scaled columns (a
    positive fit at n = 40 with weights from 1e-6 to 1e6: columns from 0.7 to
    5e5 in norm, condition 1.5e10); ``lsq_linear``'s BVLS solves the same problem.
    """
    try:
        return scipy.optimize.nnls(A, b)[0]
    except RuntimeError:
        return scipy.optimize.lsq_linear(A, b, bounds=(0.0, np.inf), method="bvls").x


def gaussian_fit_term(rss, null_rss, N):
    """``N sum_j log(RSS_j / N)`` from ``rss = RSS_j / N``, each floored at ``CRITERION_RSS_FLOOR`` of ``null_rss``.

    ``null_rss``: the null model's ``RSS_j / N`` (the target's variance, with an intercept). Below the floor a fit
    is exact to rounding, and the criterion would choose among exact models by their rounding; floored, they tie
    and the penalty picks the smallest. Above it the value is unchanged.
    """
    floor = _policy.CRITERION_RSS_FLOOR * np.asarray(null_rss, dtype=float)
    with np.errstate(divide="ignore"):
        return N * float(np.sum(np.log(np.maximum(rss, floor))))


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

    #: a cold one-output group fit runs the group search alone (measured for least squares and binary logistic
    #: only; the linear_model base's ``_solve``, _policy.GROUP_SEARCH_FROM_ZERO)
    group_search_from_zero = True

    intercept_is_variable = False
    curvature = 1.0
    null_fits_constant = True

    def __init__(self, X, y, sample_weight=None, fit_intercept=True):
        y = np.asarray(y, dtype=float)
        Y = y[:, None] if y.ndim == 1 else y
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if fit_intercept:
            total = sw.sum()
            x_mean = weighted_column_sums(X, sw) / total
            y_mean = sw @ Y / total
            constant = constant_columns(X)
            if constant is not None:  # their exact value, not a rounded mean: centered, exactly 0
                x_mean[constant] = column_values(X, constant)
            # a target constant on the rows of positive weight: its value, so that the null model fits it exactly
            y_constant = constant_target(Y, None if sample_weight is None else sw)
            if y_constant is not None:
                y_mean = y_constant
        else:
            x_mean, y_mean, constant, y_constant = None, np.zeros(Y.shape[1]), None, None
        super().__init__(LinearDesign(X, x_mean, constant), sw, Y.shape[1], fit_intercept)
        self._constant_target = y_constant  # (Y is centred below: the test on y, once)
        self.x_mean = np.zeros(X.shape[1]) if x_mean is None else x_mean
        self.y_mean = y_mean
        self.Y = Y - y_mean

    @property
    def value_unit(self):
        """``y``'s weighted variance (mean over the outputs; 1 for a constant ``y``): see :attr:`BaseLoss.value_unit`.

        The weighted mean square of ``y`` about the null model's fit (its
        weighted mean, 0 without an intercept): the noise variance that the
        null model estimates, an upper bound of the noise variance that needs
        no fit. abess's exchange threshold ``0.01 k m log(p) log(log N) / N``
        (``solvers/_splice_abess.py``) is a loss decrease for a noise
        variance of 1 (a spurious feature lowers the loss by about ``sigma**2
        / (2 N)`` times a chi-square), so it is counted in this unit: the fits
        of ``c y`` accept the exchanges those of ``y`` do, and are ``c`` times
        them. Chosen over the null model's value (half of it) and a noise
        estimate at abess's start (the residual mean square of its refit),
        which gave the same support F1 on the peer designs: the variance is a
        constant of the loss, known before any fit, where the estimate would
        vary with the search's start (measurements in ``doc/changelog.rst``).
        """
        unit = self.__dict__.get("_value_unit")
        if unit is None:
            unit = self._target_mean_square() / self.n_outputs
            unit = self._value_unit = unit if unit > 0 else 1.0
        return unit

    def _target_mean_square(self):
        """``sum_i s_i ||y_i - y_mean||^2 / sum_i s_i``, summed over the outputs (``y_mean`` 0 without an intercept)."""
        return float(self.sample_weight @ row_squares(self.Y)) / self.sw_sum  # (einsum's values, without its parsing)

    def value_from_z(self, Z, W):  # noqa: D102
        R = self.Y - Z
        if R.shape[1] == 1:  # (one output: each row's sum of squares is its one square, as einsum forms it)
            r = R[:, 0]
            return 0.5 * float(self.sample_weight.dot(r * r)) / self.sw_sum  # (.dot: @'s BLAS call, sooner)
        return 0.5 * float(self.sample_weight @ np.einsum("ij,ij->i", R, R)) / self.sw_sum

    def gradient_from_z(self, Z, W):  # noqa: D102
        R = (Z - self.Y) * self._sample_share
        return self.design.rmatvec(R), None

    def divergence_from_z(self, Z, Z_new):
        """``sum_i s_i ||z_new_i - z_i||^2 / (2 sum_i s_i)``: exact, the loss being quadratic in ``Z``."""
        D = Z_new - Z
        if self.uniform_weights:
            return 0.5 * float(_vdot(D, D)) / D.shape[0]
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

    def null_intercept(self, value):
        """``b`` is not a variable here (the null model's intercept is ``y_mean``, the constant): zeros."""
        return np.zeros(self.n_outputs)

    def noise_scale(self, value, k):
        """Noise variance estimated from the loss ``value`` of a fit with ``k`` features.

        ``2 * value * N / (m * (N - k - 1))`` with ``N`` the number of
        observations (:attr:`n_observations`) and ``m`` the number of outputs
        (residual mean square).
        """
        N = self.n_observations
        dof = max(N - k - int(self.fit_intercept), 1.0)
        return 2.0 * value * N / (self.n_outputs * dof)

    def minus_two_log_likelihood(self, W, b):
        """``N sum_j log(RSS_j / N)``: Gaussian, with each target's noise variance estimated.

        ``RSS_j`` is the weighted residual sum of squares of target ``j``
        rescaled to ``N`` (:attr:`n_observations`) observations, from the
        residuals themselves (also for :class:`GramSquaredLoss`, whose values
        are differences of large terms), floored by :func:`gaussian_fit_term`
        (a fit exact to rounding); a perfect fit of a constant target gives ``-inf``.
        """
        R = self.Y - self.design.matvec(W)
        N = self.n_observations
        rss = (N / self.sw_sum) * (self.sample_weight @ (R * R))
        return gaussian_fit_term(rss / N, (self.sample_weight @ (self.Y * self.Y)) / self.sw_sum, N)

    def restrict(self, support, dtype=np.float64):  # noqa: D102
        sub = object.__new__(SquaredLoss)
        BaseLoss.__init__(sub, self.design.columns(support, dtype), self.sample_weight,
                          self.n_outputs, self.fit_intercept)
        sub.x_mean, sub.y_mean, sub.Y = self.x_mean[support], self.y_mean, self.Y
        return sub

    def search_restriction(self, support, previous=None):
        """:meth:`BaseLoss.search_restriction`: on dense ``X`` with few rows, through lazily formed Gram columns.

        A :class:`~sparse_estimators.losses._squared_search.LazyGramSquaredLoss`
        when ``X`` is a dense array of at most
        :data:`~sparse_estimators._policy.MAX_ROWS` rows (and
        ``positive=False``; ``previous``, when one, lends it its arrays); else
        the restriction on a copy of the columns.
        """
        from ._squared_search import LazyGramSquaredLoss  # (that module builds on this one)

        design = self.design
        if (type(self) is SquaredLoss and not self.positive and type(design) is LinearDesign
                and isinstance(design.X, np.ndarray) and self.n_samples <= _policy.MAX_ROWS):
            return LazyGramSquaredLoss(self, np.asarray(support), previous)
        return super().search_restriction(support)

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
        if type(support) is not np.ndarray:
            support = np.asarray(support)
        if self.positive:
            return self._nonnegative_refit(support, W, b)
        # (np.zeros for a C-ordered W: zeros_like's array, without its Python wrapper)
        W_full = np.zeros(W.shape, W.dtype) if W.flags.c_contiguous else np.zeros_like(W)
        if support.size:
            A = self._centred_columns(support)
            Aw = A if self.uniform_weights else A * self.sample_weight[:, None]
            coef = _cholesky_solve(Aw.T @ A, Aw.T @ self.Y, 1e-4)
            if coef is not None:
                W_full[support] = coef
            else:
                note_collinear()  # (the splicing search then looks for redundant features: see splice)
                root = np.sqrt(self.sample_weight)[:, None]
                # relative rank cut-off as in LinearRegression: with gelsy's default an exactly
                # duplicated column was kept and got a coefficient of 4e14 (and its twin -4e14)
                cond = max(A.shape) * np.finfo(float).eps
                W_full[support] = scipy.linalg.lstsq(A * root, self.Y * root, cond=cond, lapack_driver="gelsy")[0]
        return W_full, b

    def _centred_columns(self, support):
        """The centred columns ``support`` of the design, dense, in float64 (``columns(support).dense()``)."""
        design = self.design
        if type(design) is not LinearDesign or design.is_sparse:
            return design.columns(support).dense()
        A = design._copy(support, np.float64)  # (the same, without building a LinearDesign for them)
        return A if design.offset is None else A - design.offset[support]

    def _nonnegative_refit(self, support, W, b):
        """Weighted non-negative least squares on ``support`` (``positive=True``), per target, on the columns."""
        W_full = np.zeros_like(W)
        if support.size:
            root = np.sqrt(self.sample_weight)
            A = self.design.columns(support).dense() * root[:, None]
            for j in range(W.shape[1]):
                W_full[support, j] = _nnls(A, self.Y[:, j] * root)
        return W_full, b

    def refit_candidates(self, supports, W, b):
        """Least-squares refits on several supports, solved together.

        The candidates of one splicing round differ in a few columns: the
        Gram matrix of the union of their columns is formed once and the
        ``C`` normal equations (``k x k`` each) are solved in one batched
        call (supports of one size) or one after the other (supports of
        several sizes: exchanges of groups); the linear predictors of all
        candidates come from one product with the union's columns, and each
        loss value from the explicit residual. Falls back to one :meth:`refit` per candidate
        (least squares by orthogonal factorisation) when a Cholesky pivot
        of a system is below ``1e-8`` times its largest diagonal entry
        (nearly collinear columns, for which the normal equations lose too
        many digits), and for ``positive=True``. See
        :meth:`BaseLoss.refit_candidates`.
        """
        supports, batched = _one_size(supports)
        if self.positive or not supports or not all(s.size for s in supports):  # (non-negative: NNLS each)
            return super().refit_candidates(supports, W, b)
        # (plain Python sets and np.array: on the few small arrays of a splicing round,
        # np.unique and np.stack cost more in overhead than the rest of the set-up)
        union = np.array(sorted(set().union(*(s.tolist() for s in supports))), dtype=np.intp)
        A = self._centred_columns(union)
        Aw = A if self.uniform_weights else A * self.sample_weight[:, None]
        gram, rhs = Aw.T @ A, Aw.T @ self.Y
        C = len(supports)
        on_union = np.zeros((C, union.size, rhs.shape[1]))  # each candidate's coefficients on the union
        if batched:
            pos = union.searchsorted(np.array(supports))  # (C, k) columns of each candidate in A
            coef = _batched_normal_equations(gram[pos[:, :, None], pos[:, None, :]], rhs[pos])  # (C, k, m)
            if coef is None:
                return super().refit_candidates(supports, W, b)
            on_union[np.arange(C)[:, None], pos] = coef
        else:  # (supports of several sizes, e.g. unions of groups: one system each)
            for c, support in enumerate(supports):
                pos = np.searchsorted(union, support)
                G = gram[pos[:, None], pos]  # (np.ix_'s gather without its overhead)
                coef = _cholesky_solve(G, rhs[pos], 1e-8, G.diagonal().max())
                if coef is None:  # (nearly collinear columns: each candidate by itself)
                    return [self._refit_on_union(s, union, A, gram, rhs, W, b) for s in supports]
                on_union[c, pos] = coef
        Z = A @ on_union  # (C, n, m) linear predictors: no (n, C k) gather of columns
        R = self.Y - Z
        if R.shape[2] == 1:  # per candidate and sample (one output: its squares, the same values as einsum's)
            r = R[:, :, 0]
            squares = r * r
        else:
            squares = np.einsum("cnm,cnm->cn", R, R)
        if self.uniform_weights:
            mean_squares = np.add.reduce(squares, axis=1) / squares.shape[1]  # = mean(axis=1), without its overhead
        else:
            mean_squares = squares @ self.sample_weight / self.sw_sum
        W_all = np.zeros((C,) + W.shape)
        W_all[:, union] = on_union
        return [(W_all[c], b, 0.5 * float(mean_squares[c]), Z[c]) for c in range(C)]


    def _refit_on_union(self, support, union, A, gram, rhs, W, b):
        """One candidate of :meth:`refit_candidates` from the union's columns ``A`` and normal equations.

        :meth:`refit` (least squares on the columns) when a Cholesky pivot
        is below ``1e-8`` times the largest diagonal entry.
        """
        pos = np.searchsorted(union, support)
        G = gram[np.ix_(pos, pos)]
        coef = _cholesky_solve(G, rhs[pos], 1e-8, G.diagonal().max())
        if coef is None:
            return self._refit_evaluated(support, W, b)
        W_c = np.zeros_like(W)
        W_c[support] = coef
        Z = A[:, pos] @ coef
        R = self.Y - Z
        squares = np.einsum("nm,nm->n", R, R)
        mean_squares = squares.mean() if self.uniform_weights else squares @ self.sample_weight / self.sw_sum
        return W_c, b, 0.5 * float(mean_squares), Z


class GramSquaredLoss(SquaredLoss):
    """:class:`SquaredLoss` evaluated through its Gram matrix (for ``n_samples`` much larger than ``n_features``).

    As a function of ``W`` the loss is the quadratic

        f(W) = yy / 2 - <C, W> + <W, G W> / 2,

    with ``G = X_c^T S X_c / sum(S)`` (p x p), ``C = X_c^T S Y_c / sum(S)``
    (p x m) and ``yy = sum_i s_i ||y_i - y_mean||^2 / sum(S)``, computed once
    (``G`` in blocks of rows of ``X``, at the cost of ``p / 15`` to ``p / 4``
    products with ``X``, see :source:`benchmarks/gram_precompute.py`). No product with ``X`` follows: a
    gradient costs ``O(p k m)`` instead of ``O(n p m)`` and a refit on ``k``
    features one ``k x k`` solve. The fitted values equal those of
    :class:`SquaredLoss` up to rounding.

    The solvers' two-stage API is kept with another linear predictor:
    :meth:`linear_predictor` returns ``Z = [G W; W]``, shape ``(2 p, m)``,
    from which the value, the gradient ``G W - C`` and the exact divergence
    between two points follow in ``O(p m)``. Like ``X W`` it is linear in
    ``W``, so momentum extrapolates it the same way.

    Values are differences of the three terms: their rounding error is about
    ``1e-16 yy`` rather than ``1e-16 f``, which matters only for fits that
    explain ``y`` to within about ``1e-10`` of its variance (noiseless data;
    :class:`SquaredLoss` is then the precise choice). They are clipped at 0.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    """

    def __init__(self, X, y, sample_weight=None, fit_intercept=True):
        super().__init__(X, y, sample_weight, fit_intercept)
        self._set_moments(self.design.weighted_gram(self.sample_weight / self.sw_sum))

    @classmethod
    def _from_gram(cls, X, y, gram):
        """The loss without intercept nor sample weights, whose ``G = X^T X / n`` the caller has formed.

        ``gram`` is kept as it is (not copied, never written to): layer
        pruning forms ``H = X^T X / n`` for its other steps, and the
        constructor formed it a second time (equal to rounding).
        """
        loss = object.__new__(cls)
        SquaredLoss.__init__(loss, X, y, None, False)
        loss._set_moments(gram)
        return loss

    def _set_moments(self, gram):
        s = self.sample_weight / self.sw_sum
        self.gram = gram
        self.C = self.design.rmatvec(self.Y * s[:, None])
        self.yy = float(s @ np.einsum("ij,ij->i", self.Y, self.Y))

    def _target_mean_square(self):  # (computed once, in the constructor)
        return self.yy

    def linear_predictor(self, W, b, rows=None):
        """``Z = [G W; W]``, shape ``(2 n_features, n_outputs)`` (see the class description).

        ``rows``, when given, includes the index of every non-zero row of ``W``.
        """
        p = self.n_features
        if rows is None:
            rows = np.flatnonzero(np.any(W != 0, axis=1))
        Z = np.empty((2 * p, W.shape[1]))
        Z[:p] = self.gram @ W if rows.size > p // 4 else self.gram[rows].T @ W[rows]  # G is symmetric
        Z[p:] = W
        return Z

    def value_from_z(self, Z, W):  # noqa: D102
        GW = Z[:self.n_features]
        return max(0.5 * self.yy - float(np.vdot(self.C, W)) + 0.5 * float(np.vdot(W, GW)), 0.0)

    def gradient_from_z(self, Z, W):  # noqa: D102
        return Z[:self.n_features] - self.C, None

    def divergence_from_z(self, Z, Z_new):
        """``<W_new - W, G (W_new - W)> / 2``: exact, the loss being quadratic."""
        p = self.n_features
        D = Z_new - Z
        return 0.5 * float(np.vdot(D[p:], D[:p]))

    def hessp(self, W, b, V, c):  # noqa: D102
        return self.gram @ V, None

    def hessian(self, W=None, b=None):
        """The Gram matrix ``G`` (a copy), shape (p, p); see :meth:`SquaredLoss.hessian`."""
        return self.gram.copy()

    def _gram_apply(self, v):
        return self.gram @ v

    def coordinate_curvatures(self):
        """The diagonal of ``G`` (see :meth:`BaseLoss.coordinate_curvatures`); no pass over ``X``."""
        if getattr(self, "_coordinate_curvatures", None) is None:
            self._coordinate_curvatures = self.curvature * np.diagonal(self.gram).copy() + self.alpha
        return self._coordinate_curvatures

    def restrict(self, support, dtype=np.float64):
        """The loss on the features in ``support``: the blocks of ``G`` and ``C``, no copy of ``X``'s columns.

        The columns are copied (in ``dtype``) only if a refit has to fall
        back to least squares on them (nearly collinear features).
        """
        support = np.asarray(support)
        sub = object.__new__(GramSquaredLoss)
        BaseLoss.__init__(sub, _ColumnSubset(self.design, support), self.sample_weight, self.n_outputs,
                          self.fit_intercept)
        sub.x_mean, sub.y_mean, sub.Y = self.x_mean[support], self.y_mean, self.Y
        sub.gram, sub.C, sub.yy = self.gram[np.ix_(support, support)], self.C[support], self.yy
        return sub

    def refit(self, support, W, b, *, precise=True):
        """Least squares on ``support`` from the blocks of ``G`` and ``C`` (see :meth:`SquaredLoss.refit`).

        Nearly collinear features (a Cholesky pivot below ``1e-4`` of its
        diagonal entry) fall back to :meth:`SquaredLoss.refit`, least squares
        on the columns themselves.
        """
        support = np.asarray(support)
        if self.positive:
            return self._nonnegative_refit(support, W, b)
        W_full = np.zeros_like(W)
        if support.size:
            coef = _cholesky_solve(self.gram[np.ix_(support, support)], self.C[support], 1e-4)
            if coef is None:
                return super().refit(support, W, b)
            W_full[support] = coef
        return W_full, b

    def refit_candidates(self, supports, W, b):
        """Least-squares refits on several supports of one size, from ``G`` in one batched solve.

        The same tests as :meth:`SquaredLoss.refit_candidates`; nearly
        collinear supports (and supports of different sizes) are refitted one
        by one with :meth:`refit`.
        """
        supports, batched = _one_size(supports)
        if not batched or self.positive:
            return BaseLoss.refit_candidates(self, supports, W, b)
        rows = np.array(supports)  # (C, k)
        coef = _batched_normal_equations(self.gram[rows[:, :, None], rows[:, None, :]], self.C[rows])
        if coef is None:
            return BaseLoss.refit_candidates(self, supports, W, b)
        out = []
        for support, coef_c in zip(rows, coef, strict=True):
            W_c = np.zeros_like(W)
            W_c[support] = coef_c
            Z = self.linear_predictor(W_c, b, support)
            out.append((W_c, b, self.value_from_z(Z, W_c), Z))
        return out


class _ColumnSubset:
    """The columns ``index`` of a :class:`LinearDesign`, selected only when asked for.

    The design of a :class:`GramSquaredLoss` restricted to some features:
    that loss needs the columns only in a fallback refit
    (:meth:`LinearDesign.columns`), so a restriction costs no copy of them.
    """

    def __init__(self, design, index):
        self.parent, self.index = design, index
        self.shape = (design.shape[0], index.size)

    def columns(self, support, dtype=np.float64):
        """The parent's columns ``index[support]`` (see :meth:`LinearDesign.columns`)."""
        return self.parent.columns(self.index[support], dtype)
