"""``solver='als'``: completion with a ridge on the factors by alternating least squares (softImpute-ALS).

Problem: ``min 1/2 sum_observed (U V^T + 1 mu^T - A)_ij^2 + alpha/2 (||U||_F^2 + ||V||_F^2)``
with ``U`` of shape ``(m, r)``, ``V`` of shape ``(n, r)``. The ridge on the
factors equals the nuclear norm ``alpha ||U V^T||_*`` of the product (Srebro,
Rennie & Jaakkola 2005; Mazumder, Hastie & Tibshirani 2010, Sec. 8): the
solution soft-thresholds the singular values by ``alpha``, keeping at most
``r`` of them, so ``(r, alpha)`` spans hard rank truncation (``alpha = 0``)
to SoftImpute (``r`` large), the shrinkage a hard rank lacks.

The iteration is Hastie, Mazumder, Lee & Zadeh (2015), Algorithm 3.1
(softImpute-ALS): each half-step is the ridge regression of the *filled-in*
matrix ``X* = P_Omega(A) + P_Omega^perp(U V^T)`` on the other factor,
``U <- (U (V^T V) + R V) (V^T V + alpha I)^{-1}`` with ``R`` the residual on
the observed entries (a sparse matrix): ``O(nnz r + (m + n) r^2)`` per
half-step, never the dense matrix. It is a majorise-minimise step, so the
objective never rises. After each sweep an extrapolation ``F + beta (F -
F_prev)`` of both factors is tried and kept only when it lowers the
objective (``beta`` grows by 1.5 while accepted and shrinks by 1.5, not
below 1, on a refusal), as the line-search extrapolation of ALS for tensor
decompositions (Bro 1998, Rajih, Comon & Harshman 2008).

When most entries are observed and the matrix is small, the residual is
kept as a dense ``m x n`` array, zero off the pattern (:class:`_DenseSweep`):
the same half-steps from dense products (BLAS) instead of scipy's sparse
products and gathers on the pattern, equal up to rounding.
"""

import time
import warnings

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from .. import _policy
from ._factored import CompletionResult, _add_gathered, _column_sums, _not_converged_message, _randomized_svd
from ._posterior import discarded_variance, noise_variance

_POTRF, _POTRI = scipy.linalg.lapack.dpotrf, scipy.linalg.lapack.dpotri


def _ridge_solve(gram, rhs, alpha):
    """``rhs (gram + alpha I)^{-1}`` for a symmetric positive semi-definite ``gram`` (a tiny jitter if singular).

    The ``r x r`` inverse from the Cholesky factor (LAPACK ``potrf``,
    ``potri``), then one product: triangular solves with ``m`` right-hand
    sides of ``r`` rows, and scipy's wrappers, took 4 times as long at
    ``r = 19``, ``m = 1797``. A singular system takes the solves with a jitter.
    """
    r = gram.shape[0]
    a = gram + alpha * np.eye(r)
    c, info = _POTRF(a, lower=0, clean=1)
    if info == 0:
        upper, info = _POTRI(c, lower=0)  # (the upper triangle; the lower one is zero, potrf's clean=1)
        inverse = upper + upper.T
        inverse.flat[::r + 1] *= 0.5
        if info == 0 and np.isfinite(inverse).all():
            return rhs @ inverse
    jitter = 1e-12 * max(float(np.trace(gram)) / max(r, 1), np.finfo(float).tiny)
    try:
        c = scipy.linalg.cho_factor(a, check_finite=False)
    except np.linalg.LinAlgError:
        c = scipy.linalg.cho_factor(a + jitter * np.eye(r), check_finite=False)
    return scipy.linalg.cho_solve(c, rhs.T, check_finite=False).T


def _product_distance_squared(U, V, U0, V0, VtV=None):
    """``||U V^T - U0 V0^T||_F^2`` from ``r x r`` Gram blocks (no QR).

    ``U V^T - U0 V0^T = A B^T`` with ``A = [U - U0, U0]``, ``B = [V, V - V0]``;
    every term of ``sum((A^T A) * (B^T B))`` is of the order of the result (a
    product with a difference), so nothing large cancels. The sum is taken
    block by block (no stacked copies); ``VtV``: ``V^T V`` if known.
    """
    dU, dV = U - U0, V - V0
    VtV = V.T @ V if VtV is None else VtV
    total = np.vdot(dU.T @ dU, VtV) + 2.0 * np.vdot(dU.T @ U0, V.T @ dV) + np.vdot(U0.T @ U0, dV.T @ dV)
    return max(float(total), 0.0)


class _SparseSweep:
    """The residual ``U V^T + 1 mu^T - A`` on the observed entries as a vector (CSR order); sparse products."""

    def __init__(self, obs, vals_sums, inv_counts, offsets):
        m, n = obs.shape
        self.obs, self.vals_sums, self.inv_counts, self.offsets = obs, vals_sums, inv_counts, offsets
        self.ones = np.ones((m, 1))
        # two residual buffers, reused by every sweep (the current point's and a trial's: no allocation per sweep)
        self.buffers = [np.empty(obs.values.size), np.empty(obs.values.size)]

    def residual(self, U, V, mu, out):
        """``U V^T + 1 mu^T - A`` on the pattern into ``out``: the offsets as one more factor column."""
        r = U.shape[1]
        self.obs.entries(np.hstack([U, self.ones]), np.ones(r + 1), np.vstack([V.T, mu]), out=out)
        out -= self.obs.values
        return out

    def evaluate(self, U, V, out):
        """The best offsets given ``U V^T`` and the residual (fit minus observed) into ``out``."""
        obs = self.obs
        m, n = obs.shape
        res = obs.entries(U, np.ones(U.shape[1]), V.T, out=out)
        if self.offsets:
            mu = (self.vals_sums - _column_sums(obs.cols, n, res)) * self.inv_counts
            _add_gathered(res, mu, obs.cols)
        else:
            mu = np.zeros(n)
        res -= obs.values
        return mu, res

    def times(self, res, V):
        """``R V`` for the residual matrix ``R``."""
        return np.asarray(self.obs.set_data(res) @ V)

    def transpose_times(self, res, U):
        """``R^T U``."""
        return np.asarray(self.obs.set_data(res).T @ U)


class _DenseSweep:
    """The residual as a dense ``m x n`` array, zero off the pattern: the products are dense (BLAS).

    The observed values ``A`` (zero-filled) and the pattern's indicator ``W``
    are made once per pattern and kept on it (the rank search fits the same
    entries many times), with the two residual buffers.
    """

    def __init__(self, obs, vals_sums, inv_counts, offsets):
        m, n = obs.shape
        if obs._dense_sweep is None:
            A, W = np.zeros((m, n)), np.zeros((m, n))
            A[obs.rows, obs.cols] = obs.values
            W[obs.rows, obs.cols] = 1.0
            obs._dense_sweep = (A, W, [np.empty((m, n)), np.empty((m, n))])
        self.A, self.W, self.buffers = obs._dense_sweep
        self.vals_sums, self.inv_counts, self.offsets = vals_sums, inv_counts, offsets
        self.ones = np.ones(m)

    def residual(self, U, V, mu, out):
        np.matmul(U, V.T, out=out)
        out += mu
        out *= self.W
        out -= self.A
        return out

    def evaluate(self, U, V, out):
        P = np.matmul(U, V.T, out=out)
        P *= self.W
        if self.offsets:
            mu = (self.vals_sums - self.ones @ P) * self.inv_counts
            P += mu
            P *= self.W
        else:
            mu = np.zeros(P.shape[1])
        P -= self.A
        return mu, P

    def times(self, res, V):
        return res @ V

    def transpose_times(self, res, U):
        return res.T @ U


def _use_dense_sweep(obs):
    """Whether :class:`_DenseSweep` is the cheaper route (see ``_policy.DENSE_SWEEP_SHARE``)."""
    m, n = obs.shape
    return m * n <= _policy.DENSE_SWEEP_MAX_ENTRIES and obs.values.size >= _policy.DENSE_SWEEP_SHARE * m * n


def _spectral_init(obs, r, mu, rng):
    """Factors from the top ``r`` singular triplets of ``P_Omega(A - 1 mu^T) / p`` (split as ``U sqrt(s)``)."""
    m, n = obs.shape
    p = obs.values.size / (m * n)
    S = obs.set_data((obs.values - mu[obs.cols]) / p)
    k = min(r + 10, m, n)
    u, s, vt = _randomized_svd(np.zeros((m, 0)), np.zeros(0), np.zeros((0, n)), S, 1.0, k, None, 2, rng)
    root = np.sqrt(s[:r])
    return u[:, :r] * root, vt[:r].T * root


def _mean_filled_init(obs, r, rng):
    """Factors from the top ``r`` singular triplets of the observed entries, the others their column mean.

    The start of a fit without offsets of columns far from 0 (``mean_start``): there the zero fill of
    :func:`_spectral_init` makes the hidden entries errors of the size of the offsets, which the start's trailing
    components fit (a rank-2 fit of 6 x 13 rank-1 data with offsets of 1e6 deviations, 30 % hidden, stopped at
    components of 1e6 deviations). The mean-filled table is ``1 mu^T`` plus the sparse deviations.
    """
    m, n = obs.shape
    counts = _column_sums(obs.cols, n)
    mu = _column_sums(obs.cols, n, obs.values) / np.maximum(counts, 1)
    S = obs.set_data(obs.values - mu[obs.cols])
    norm = float(np.linalg.norm(mu))
    lead = (np.full((m, 1), 1 / np.sqrt(m)), np.array([np.sqrt(m) * norm]),
            (mu / norm if norm > 0 else np.zeros(n))[None, :])
    k = min(r + _policy.OVERSAMPLE, m, n)
    u, s, vt = _randomized_svd(*lead, S, 1.0, k, None, 2, rng)
    root = np.sqrt(s[:r])
    return u[:, :r] * root, vt[:r].T * root


def _exact_solves(pattern, F, rhs, ridge, by_columns):
    """``G_i^+ rhs_i`` for each column ``i`` (``by_columns``) or row, ``G_i = sum_{observed e in i} f_e f_e^T``.

    ``f_e`` is the row of ``F`` at the entry's other index; ``ridge = (q,
    alpha)`` adds ``alpha`` to the first ``q`` diagonal entries. The Grams of
    a block of ``i`` are one product of the observed indicator (a
    block of ``pattern``, a CSR matrix of ones) with the outer products of
    ``F``'s rows, ``F_e f_e^T`` flattened, as ``transform``'s rows' Grams
    (elementwise outer products summed per entry took 25 times as long at
    rank 40): below a share ``_policy.EXACT_SWEEP_SPARSE_SHARE`` of observed
    entries a sparse product with the outer products' upper triangles
    (:func:`_sparse_grams`), else a dense one (BLAS) with the indicator's
    blocks; blocks of at most ``_policy.EXACT_SWEEP_BLOCK`` floats.
    """
    k = F.shape[1]
    kk = k * k
    n_out = pattern.shape[1] if by_columns else pattern.shape[0]
    n_in = F.shape[0]
    m, n = pattern.shape
    sparse = pattern.nnz < _policy.EXACT_SWEEP_SPARSE_SHARE * m * n
    out_step = max(1, _policy.EXACT_SWEEP_BLOCK // kk)
    in_step = max(1, _policy.EXACT_SWEEP_BLOCK // max(kk, min(out_step, n_out)))
    out = np.empty((n_out, k))
    diagonal = np.arange(ridge[0])
    if sparse:  # (the indicator with the solved index along its rows: CSR when sliced in blocks)
        indicator = pattern.T if by_columns else pattern
        indicator = indicator.tocsr() if out_step < n_out else indicator
    for a in range(0, n_out, out_step):
        b = min(a + out_step, n_out)
        if sparse:
            grams = _sparse_grams(indicator if b - a == n_out else indicator[a:b], F)
        else:
            grams = np.zeros((b - a, kk))
            for c in range(0, n_in, in_step):
                d = min(c + in_step, n_in)
                outer = (F[c:d, :, None] * F[c:d, None, :]).reshape(d - c, kk)
                if by_columns:
                    grams += pattern[c:d, a:b].toarray().T @ outer
                else:
                    grams += pattern[a:b, c:d].toarray() @ outer
            grams = grams.reshape(b - a, k, k)
        grams[:, diagonal, diagonal] += ridge[1]
        out[a:b] = _min_change_solve(grams, rhs[a:b])
    return out


def _sparse_grams(indicator, F):
    """``sum_{e observed in row i of indicator} f_e f_e^T`` per row ``i``: ``(n_rows, k, k)``.

    The sparse product of the indicator (``n_rows x n_in``) with the upper triangles of the outer products of
    ``F``'s rows, ``O(nnz k^2 / 2)``, in pieces of the triangle of at most ``_policy.EXACT_SWEEP_BLOCK`` floats.
    """
    n_in, k = F.shape
    iu, ju = np.triu_indices(k)
    triangle = np.empty((indicator.shape[0], iu.size))
    step = max(1, _policy.EXACT_SWEEP_BLOCK // max(n_in, 1))
    for a in range(0, iu.size, step):
        b = min(a + step, iu.size)
        triangle[:, a:b] = indicator @ (F[:, iu[a:b]] * F[:, ju[a:b]])
    grams = np.empty((indicator.shape[0], k, k))
    grams[:, iu, ju] = triangle
    grams[:, ju, iu] = triangle
    return grams


def _min_change_solve(grams, rhs):
    """``G^+ g`` for each of a stack of positive semi-definite ``G`` (Jacobi-scaled; small eigenvalues dropped).

    Along a direction the system does not determine (a column with fewer
    observed entries than unknowns) the step is 0: the exact fit nearest
    to the current point. A stack whose Cholesky factors have no squared
    pivot at most ``_policy.ALS_FINISH_SINGULAR`` is solved directly
    (an eigendecomposition costs several times as much); the rest by eigenvalues.
    """
    d = np.sqrt(np.maximum(np.diagonal(grams, axis1=1, axis2=2), np.finfo(float).tiny))
    A, g = grams / d[:, :, None] / d[:, None, :], rhs / d
    try:
        pivots = np.diagonal(np.linalg.cholesky(A), axis1=1, axis2=2)
        definite = pivots.min(axis=1) ** 2 > _policy.ALS_FINISH_SINGULAR
    except np.linalg.LinAlgError:  # (one matrix of the stack is not definite)
        definite = np.zeros(len(A), dtype=bool)
    out = np.empty_like(g)
    if definite.any():
        out[definite] = np.linalg.solve(A[definite], g[definite][:, :, None])[:, :, 0]
    rest = ~definite
    if rest.any():
        w, Q = np.linalg.eigh(A[rest])
        keep = w > _policy.ALS_FINISH_SINGULAR * np.maximum(w[:, -1:], np.finfo(float).tiny)
        t = np.einsum("jab,ja->jb", Q, g[rest])
        t *= np.divide(1.0, w, out=np.zeros_like(w), where=keep)
        out[rest] = np.einsum("jab,jb->ja", Q, t)
    return out / d


def noise_ridge(res, rows, cols, values, shape, r, offsets):
    """The ridge ``sigma^2 / spread`` of the exact sweeps of a given rank without a ridge (``finish='noise'``).

    Least squares alone at a rank the observed entries do not determine
    interpolates them: a column with ``r + 1`` observed entries (its ``r``
    loadings and offset) fits them exactly whatever its loadings, and an
    ill-conditioned one takes huge loadings that its hidden entries
    amplify (a 10 x 500 table of rank 2 with 5 % noise, 30 % hidden,
    fit at rank 4: 30 times the column means' error). This is the MAP of
    the noise model of ``transform`` with a Gaussian prior on the balanced
    factors' entries of the data's spread: components and columns the
    entries do not support shrink to zero, as in probabilistic PCA.
    ``sigma^2``: the residual ``res`` (fit minus observed) over its degrees
    of freedom (the free parameters ``r (m + n - r)`` and the offsets; if
    none is left, probabilistic PCA's, from the observed entries: the
    fit's residuals are then 0); ``spread``: the root mean of
    the columns' observed variances. Exact data give a ridge of the
    order of the iteration's own error.
    """
    m, n = shape
    counts = np.maximum(_column_sums(cols, n), 1)
    means = _column_sums(cols, n, values) / counts
    spread = np.sqrt(np.mean(np.maximum(_column_sums(cols, n, values * values) / counts - means * means, 0.0)))
    # (the dense route's residual is zero off the pattern: the same sum of squares)
    sigma2 = noise_variance(res.ravel(), r * (m + n - r) + (n if offsets else 0),
                            lambda: discarded_variance(rows, cols, values, shape, r))
    return _policy.ALS_NOISE_RIDGE * sigma2 / spread if spread > 0 else 0.0


def _exact_sweep(obs, sweep, U, V, mu, res, other, alpha, offsets):
    """One sweep of :func:`_exact_sweeps` from ``(U, V, mu)``: ``(U, V, mu, res, other, objective)``.

    ``res``: the residual at ``(U, V, mu)``, one of ``sweep``'s buffers, ``other`` the other one; returned
    swapped as needed (``res`` the residual at the new point).
    """
    m = obs.shape[0]
    r = U.shape[1]
    # the columns: loadings and offset given U
    B = np.hstack([U, np.ones((m, 1))]) if offsets else U
    grad = sweep.transpose_times(res, B)
    grad[:, :r] += alpha * V
    step = _exact_solves(obs.set_data(1.0), B, -grad, (r, alpha), by_columns=True)  # (S: the indicator)
    V = V + step[:, :r]
    mu = mu + step[:, r] if offsets else mu
    res, other = sweep.residual(U, V, mu, other), res
    # the rows given (V, mu)
    rhs = -(sweep.times(res, V) + alpha * U)
    U = U + _exact_solves(obs.set_data(1.0), V, rhs, (r, alpha), by_columns=False)
    res, other = sweep.residual(U, V, mu, other), res
    return U, V, mu, res, other, _objective(res, U, V, alpha)


def _objective(res, U, V, alpha):
    """``1/2 ||res||^2 + alpha/2 (||U||_F^2 + ||V||_F^2)``."""
    return 0.5 * float(np.vdot(res, res)) + 0.5 * alpha * (float(np.vdot(U, U)) + float(np.vdot(V, V)))


def _anderson(history, g, f):
    """Anderson's mixing ``g - dG gamma``, ``gamma`` minimising ``||f - dF gamma||`` over the ``history``.

    ``history``: the pairs ``(g_j, f_j)`` (a sweep's output and its move ``g_j - x_j``) of the previous sweeps;
    ``dG``, ``dF``: their successive differences up to ``(g, f)``. The least squares by its normal equations
    (``h x h``) with a relative jitter: collinear moves get the least-norm weights.
    """
    dG = np.stack([g - gj for gj, _ in history], axis=1)
    dF = np.stack([f - fj for _, fj in history], axis=1)
    gram = dF.T @ dF
    gram.flat[::len(history) + 1] += _policy.EXACT_SWEEP_ANDERSON_JITTER * float(np.trace(gram))
    try:
        gamma = np.linalg.solve(gram, dF.T @ f)
    except np.linalg.LinAlgError:  # (no move left to mix: the plain sweep's point)
        return g
    return g - dG @ gamma


def _exact_sweeps(obs, sweep, U, V, mu, res, alpha, offsets, tol, max_sweeps, spread=None, accelerate=False):
    """Alternating exact least squares from ``(U, V, mu)``: ``(U, V, mu, objectives, converged)``.

    softImpute-ALS's half-steps regress the *filled-in* matrix: EM steps,
    whose contraction is slow where a column (or row) has few observed
    entries for its unknowns (a wide table's columns: 7 of 10 rows for 2
    loadings and an offset), while its stopping rule measures one step's
    relative change: a step of 1e-3 of the product left errors of 1e-1 on
    those columns' hidden entries. Here each sweep solves each column's
    ridge regression on its observed rows (with its offset), then each
    row's on its observed columns, exactly, as steps ``d = G^+
    (-gradient)`` from the current point (:func:`_min_change_solve`);
    neither raises the objective. They stop when the distance to the limit
    estimated from the contraction of successive changes ``c_t`` (``c_t
    rho / (1 - rho)``, ``rho = c_t / c_{t-1}``) is at most ``tol`` times
    the product (``converged``), or after ``max_sweeps``. ``res``: the
    residual (fit minus observed) at ``(U, V, mu)``, one of ``sweep``'s
    buffers. ``objectives``: the objective after each sweep. ``spread``: see :func:`_tolerance`.

    ``accelerate`` (a given rank's noise ridge, small where the entries
    hardly support the rank: the sweeps contracted at 0.99 to 0.998, and
    ran 360 to 1000 sweeps on ``load_diabetes`` at ranks 5 to 9; and the rank rule's validation fits without a
    ridge, ``_solve_als``'s ``mix``): after
    each sweep, Anderson's mixing (type II, the last
    ``_policy.EXACT_SWEEP_ANDERSON`` sweeps; Walker & Ni 2011) of the
    factors and offsets, kept only when it lowers the objective below the
    sweep's; else the history restarts and the extrapolation ``g + beta (g
    - x)`` of the sweep ``x -> g`` is tried as in :func:`_solve_als`. No
    point raises the objective and a fixed point is the plain sweeps' one.
    The moves ``c_t`` of the accepted points are erratic: ``rho`` is then
    the mean rate over the last ``2 _policy.EXACT_SWEEP_ANDERSON`` moves and
    ``c_t`` the largest of them.
    """
    m, n = obs.shape
    other = sweep.buffers[1] if res is sweep.buffers[0] else sweep.buffers[0]
    previous, objectives, history, changes, beta = None, [], [], [], 1.0
    shapes = (U.shape, V.shape)

    def stacked(U, V, mu):
        return np.concatenate([U.ravel(), V.ravel(), mu])

    for _ in range(max_sweeps):
        U0, V0, mu0 = U, V, mu
        U, V, mu, res, other, f = _exact_sweep(obs, sweep, U, V, mu, res, other, alpha, offsets)
        if accelerate:
            g = stacked(U, V, mu)
            move = g - stacked(U0, V0, mu0)
            candidates = [_anderson(history, g, move)] if history else []
            candidates.append(g + beta * move)  # (where the mixing fails, as the ALS iteration's extrapolation)
            for i, x in enumerate(candidates):
                Ua, Va = x[:U.size].reshape(shapes[0]), x[U.size:U.size + V.size].reshape(shapes[1])
                mua = x[U.size + V.size:] if offsets else mu
                trial = sweep.residual(Ua, Va, mua, other)
                fa = _objective(trial, Ua, Va, alpha)
                if fa < f:
                    U, V, mu, res, other, f = Ua, Va, mua, trial, res, fa
                    if i == len(candidates) - 1:
                        beta *= _policy.EXTRAPOLATION_GROWTH
                    break
                if i == len(candidates) - 1:
                    beta = max(1.0, beta / _policy.EXTRAPOLATION_GROWTH)
                if i == 0 and history:
                    history = []
            history = (history + [(g, move)])[-_policy.EXACT_SWEEP_ANDERSON:]
        objectives.append(f)
        dmu = mu - mu0
        change = np.sqrt(_product_distance_squared(U, V, U0, V0) + m * float(dmu @ dmu))
        size = np.sqrt(max(float(np.sum((U.T @ U) * (V.T @ V))), 0.0))
        changes.append(change)
        if accelerate:  # (the mixed moves are erratic: the rate over the window, from the largest of its moves)
            window = min(2 * _policy.EXACT_SWEEP_ANDERSON, len(changes) - 1)
            rate = (change / changes[-window - 1]) ** (1 / window) if window else np.inf
            change = max(changes[-window - 1:])
        else:
            rate = change / previous if previous else np.inf
        previous = change
        if not size > 0 or change <= np.finfo(float).eps * size or (
                rate < 1 and change * rate / (1 - rate) <= _tolerance(tol, size, spread)):
            return U, V, mu, objectives, True
    return U, V, mu, objectives, False


def _tolerance(tol, size, spread):
    """The change at which a fit stops: ``tol`` times the product's ``size``, or its ``spread`` if smaller.

    ``spread`` (None: the product's size alone): the size of the data's deviations from their column means,
    for a fit without offsets (``LowRankImputer(center=False)``), whose product carries the columns' offsets:
    relative to its size, a change of ``tol`` of offsets of 1e6 column deviations is 1e3 of them (the fit
    stopped there and its residuals, hence its noise ridge, were those of the unfinished fit). Not below the
    rounding of the product (``eps`` times its size).
    """
    if spread is None:
        return tol * size
    return max(tol * min(size, spread), np.finfo(float).eps * size)


def _solve_als(obs, r, alpha, max_iter, tol, rng, verbose, scale, offsets, init=None, warn=True, dense=None,
               monitor=None, finish=False, spread=None, mean_start=False, mix=False):
    """``solver='als'`` on validated (and scaled) observations; ``alpha`` in the scaled units.

    ``init``: factors ``(U, V)`` to start from (a warm start along a path of
    ``alpha``), else the spectral start. ``dense``: the route of the sweeps
    (:class:`_DenseSweep` or :class:`_SparseSweep`), None to choose by
    :func:`_use_dense_sweep`. ``monitor``: called after each sweep with
    ``(U, V, mu)``; the fit stops (not converged) when it returns True.
    ``finish``: end with :func:`_exact_sweeps` (``LowRankImputer``'s final
    fit; the warm-start factors returned are the iteration's). ``spread``: the stopping rules' reference if
    smaller than the product (:func:`_tolerance`). ``mean_start``: without ``init``, start from
    :func:`_mean_filled_init` (a fit without offsets of columns far from 0), not :func:`_spectral_init`.
    ``mix``: the exact sweeps of ``finish`` with Anderson's mixing (as
    ``finish='noise'``'s; :func:`_exact_sweeps`): the rank rule's validation
    fits without a ridge, whose plain sweeps often stopped at
    ``_policy.ALS_FINISH_SWEEPS`` far from their limit.
    Returns a :class:`CompletionResult` (orthonormal factors) and the factors
    ``(U, V)`` for a warm start.
    """
    m, n = obs.shape
    vals, cols = obs.values, obs.cols
    dense = _use_dense_sweep(obs) if dense is None else dense
    counts = _column_sums(cols, n)
    inv_counts = np.divide(1.0, counts, out=np.zeros(n), where=counts > 0)
    vals_sums = _column_sums(cols, n, vals) if offsets else None
    mu = vals_sums * inv_counts if offsets else np.zeros(n)
    if init is not None:
        U, V = init[0].copy(), init[1].copy()
    else:
        U, V = _mean_filled_init(obs, r, rng) if mean_start else _spectral_init(obs, r, mu, rng)
    sweep = (_DenseSweep if dense else _SparseSweep)(obs, vals_sums, inv_counts, offsets)
    buffers = sweep.buffers

    def evaluate(U, V, out):
        """Objective, the best offsets given ``U V^T``, and the residual (fit minus observed) into ``out``."""
        mu, res = sweep.evaluate(U, V, out)
        f = 0.5 * float(np.vdot(res, res)) + 0.5 * alpha * (float(np.vdot(U, U)) + float(np.vdot(V, V)))
        return f, mu, res

    f, mu, res = evaluate(U, V, buffers[0])
    losses, times = [], []
    beta = 1.0
    converged = False
    t0 = time.perf_counter()
    it = 0
    for it in range(1, max_iter + 1):
        U0, V0, mu0 = U, V, mu
        # U <- argmin of the ridge regression of the filled-in matrix on V (residual = fit - observed)
        VtV = V.T @ V
        U = _ridge_solve(VtV, U @ VtV - sweep.times(res, V), alpha)
        trial = buffers[1] if res is buffers[0] else buffers[0]
        sweep.residual(U, V, mu, trial)
        UtU = U.T @ U
        V = _ridge_solve(UtU, V @ UtU - sweep.transpose_times(trial, U), alpha)
        f, mu, res = evaluate(U, V, res)
        # the stopping rule measures the sweep's own move (the fixed-point residual of the ALS map), not the
        # extrapolation's jump on top of it
        dmu = mu - mu0
        VtV = V.T @ V
        change = np.sqrt(_product_distance_squared(U, V, U0, V0, VtV) + m * float(dmu @ dmu))
        # relative to the low-rank part only (invariant to constants added to the data when centering)
        size = np.sqrt(max(float(np.sum(UtU * VtV)), 0.0))  # (U has not moved since UtU)
        bound = _tolerance(tol, size, spread)
        if it > 1 and change > bound:  # a safeguarded extrapolation of both factors
            Ue, Ve = U + beta * (U - U0), V + beta * (V - V0)
            fe, mue, rese = evaluate(Ue, Ve, trial)
            if fe < f:
                U, V, f, mu, res = Ue, Ve, fe, mue, rese
                beta *= _policy.EXTRAPOLATION_GROWTH
            else:  # (one step back, not to the start: the accepted weights were mostly 2 to 5)
                beta = max(1.0, beta / _policy.EXTRAPOLATION_GROWTH)
        losses.append(f)
        times.append(time.perf_counter() - t0)
        if verbose:
            print(f"[complete_matrix als] iter {it:4d}  objective {f / scale / scale:.6e}  "
                  f"rel. change {change / max(size, 1e-300):.2e}")
        if change <= bound:
            converged = True
            break
        if monitor is not None and monitor(U, V, mu):
            finish = False  # (a fit abandoned by its monitor is recorded where it stopped)
            break
    init = (U, V)
    # each sweep counts as an iteration, max_iter bounds both; the search's validation fits (warn=False) stop at
    # _policy.ALS_FINISH_SWEEPS, the final fit only at max_iter: its ConvergenceWarning says to raise max_iter
    budget = (max_iter - it if warn else min(_policy.ALS_FINISH_SWEEPS, max_iter - it)) if finish and vals.size else 0
    if budget > 0:
        ridge = alpha
        if finish == "noise" and alpha == 0:  # (a given rank without a ridge: the noise model's)
            ridge = noise_ridge(res, obs.rows, cols, vals, obs.shape, r, offsets)
        swept = _exact_sweeps(obs, sweep, U, V, mu, res, ridge, offsets, tol, budget, spread,
                              accelerate=finish == "noise" or mix)
        # without a ridge, sweeps that do not settle within max_iter and moved the product farther than its own
        # size followed a direction in which the objective falls while the completed matrix grows (no bounded
        # best fit, as the warning explains): the fit keeps the ALS iterate its own rule stopped at (exact rank-3
        # tables of about 20 x 20, 60 % hidden: hidden entries 42 to 167 column deviations off, not 1.2 to 1.4)
        size = float(np.sum((U.T @ U) * (V.T @ V)))
        # (with ``spread``, a fit without offsets: with a ridge too, and farther than the deviations' size, since
        # the product's is the offsets'; the noise ridge, at their scale, did not hold 16 x 5 tables with offsets
        # of 1e6 deviations, fit at rank 2: 873 sweeps grew the second component's variance from 13 to 2e5)
        moved = _product_distance_squared(swept[0], swept[1], U, V)
        if swept[4] or (moved <= min(size, spread * spread) if spread is not None else ridge > 0 or moved <= size):
            U, V, mu, objectives, converged = swept
            losses.extend(objectives)
            times.extend([time.perf_counter() - t0] * len(objectives))
            it += len(objectives)
    if warn and not converged:
        warnings.warn(_not_converged_message(max_iter, tol, obs.shape, vals.size, r, offsets, hard=alpha == 0),
                      ConvergenceWarning, stacklevel=4)
    # the product as an SVD: U V^T = Qu (Ru Rv^T) Qv^T
    Qu, Ru = scipy.linalg.qr(U, mode="economic", check_finite=False)
    Qv, Rv = scipy.linalg.qr(V, mode="economic", check_finite=False)
    W, s, Zt = scipy.linalg.svd(Ru @ Rv.T, check_finite=False)
    with np.errstate(over="ignore", under="ignore"):
        losses = np.asarray(losses) / scale / scale
    result = CompletionResult(U=Qu @ W, s=s / scale, Vt=(Qv @ Zt.T).T, n_iter=it, loss_curve=losses,
                              converged=converged, step_sizes=np.ones(it), time_curve=np.asarray(times), rank=r,
                              n_restarts=0, column_offsets=mu / scale)
    return result, init
