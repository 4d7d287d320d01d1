"""Rank-constrained matrix completion on the observed entries only (never the dense matrix).

Problem: ``min f(M) = 1/2 sum_{(i,j) observed} (M_ij - A_ij)^2`` subject to
``rank(M) <= r``. Every iterate is kept as factors ``U diag(s) Vt``; the
gradient ``P_Omega(M - A)`` is a sparse matrix on the observed pattern, so a
gradient step ``M - eta G`` is "low rank + sparse" and its partial SVD only
needs products with the factors and with the sparse matrix: memory
``O((m + n) r + nnz)``, time ``O(nnz r + (m + n) r^2)`` per product block.
"""

import numbers
import time
import warnings

import numpy as np
import scipy.linalg.blas
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from threadpoolctl import ThreadpoolController

from .. import _policy
from .._utils import power_of_two_scale
from ..thresholding import threshold_singular_values
from ._als import _solve_als
from ._completion_local_search import _solve_local_search
from ._factored import (
    CompletionResult,
    _add_gathered,
    _arpack_svd,
    _column_sums,
    _frobenius_distance,
    _not_converged_message,
    _Observed,
    _orth,
    _randomized_svd,
)
from ._observed import check_observed, check_solver_thresholding, expand, restrict, zero_unobserved
from ._observed import check_observed as _check_observed  # noqa: F401 (the name choose_rank imports)

__all__ = ["CompletionResult", "complete_matrix"]

#: made once: a controller lists the loaded BLAS libraries (about 5 ms per ``threadpool_limits`` call otherwise)
_CONTROLLER = None


def _limit_blas_threads():
    """A context in which BLAS runs on ``_policy.BLAS_THREADS`` threads (threadpoolctl, one controller per process)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=_policy.BLAS_THREADS, user_api="blas")


def _line_search_step(U, obs, S):
    """Exact line-search step along the gradient projected on the column space of the current point.

    ``eta = ||P_U G||_F^2 / ||P_Omega(P_U G)||^2`` with ``P_U = Q Q^T`` and
    ``Q`` an orthonormal basis of the columns of ``U`` (normalized IHT,
    Tanner & Wei 2013; Khanna & Kyrillidis' line search restricted to the
    current subspace). It minimises ``f`` along ``-P_U G`` exactly; about
    ``1/p`` for a share ``p`` of observed entries, against the safe ``1``.
    """
    if U.shape[1] == 0:
        return 1.0
    Q = _orth(U)
    P = np.asarray(S.T @ Q).T  # Q^T G, shape (q, n)
    num = float(np.vdot(P, P))
    den = obs.entries_squared_norm(Q, np.ones(Q.shape[1]), P)
    if not (num > 0 and den > 0):
        return 1.0
    return max(num / den, 1.0)


def _effective_rank(rank, shape):
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ValueError(f"The 'rank' parameter must be a positive integer, got {rank!r}.")
    top = min(shape) - 1
    if top < 1:
        raise ValueError(f"A {shape[0]} x {shape[1]} matrix cannot be completed at a rank below its "
                         "smallest dimension: it needs at least two rows and two columns.")
    if rank > top:
        warnings.warn(f"rank={rank} is larger than min(m, n) - 1 = {top} for a {shape[0]} x {shape[1]} matrix; "
                      f"using rank={top}.", UserWarning, stacklevel=3)
        return top
    return int(rank)


# -- the solver --------------------------------------------------------------------------------------------
_SOLVERS = ("accelerated", "iht", "regularized", "als")
_SVD_SOLVERS = ("randomized", "arpack")


def complete_matrix(observed, rank, *, shape=None, solver="accelerated", thresholding="hard", step_size="auto",
                    max_iter=300, tol=1e-5, momentum=0.25, center=False, svd_solver="randomized",
                    n_power_iter=1, alpha=0.0, random_state=0, verbose=0):
    """Complete a matrix of rank at most ``rank`` from some of its entries, without forming it.

    Minimises ``f(M) = 1/2 sum_{(i,j) observed} (M_ij - A_ij)^2`` subject to
    ``rank(M) <= rank`` by iterative thresholding of the singular values:
    ``M_{t+1} = P_r(M_t - eta_t P_Omega(M_t - A))`` with ``P_r`` the
    thresholding operator lifted to the spectrum
    (:func:`~sparse_estimators.thresholding.threshold_singular_values`: hard
    keeps the best rank-``r`` approximation). Iterates are kept as factors and
    each step's partial SVD uses products with the factors and the sparse
    residual only, so memory is ``O((m + n) rank + nnz)``.

    Parameters
    ----------
    observed : scipy.sparse matrix, array or masked array of shape (m, n), or tuple (rows, cols, values)
        The observed entries: the stored entries of a sparse matrix (explicit
        zeros are observed zeros; repeated coordinates are summed, scipy's
        convention), the non-zero entries of a dense array (NaN refused), the
        unmasked entries of a ``numpy.ma`` masked array (zeros included), or
        three 1-D arrays with ``shape`` given.
    rank : int
        The rank of the completed matrix; above ``min(m, n) - 1`` it is
        clipped, with a warning.
    shape : tuple of two ints, default=None
        ``(m, n)``; required with a tuple ``observed``, else it must match.
    solver : {'accelerated', 'iht', 'regularized', 'als'}, default='accelerated'
        ``'iht'``: the thresholded gradient step above (Jain et al.'s SVP
        with hard thresholding). ``'accelerated'``: Khanna & Kyrillidis'
        Algorithm 1 lifted to low rank, the step taken at the extrapolated
        point ``U_{t+1} = M_{t+1} + momentum (M_{t+1} - M_t)`` (a sum of two
        factored matrices, still low rank + sparse), with a function restart
        (a momentum step that raises the objective is replaced by a plain
        step). ``'regularized'``: Axiotis & Sviridenko's regularized local
        search (App. D, Algorithm 2; see
        :func:`~sparse_estimators.solvers.regularized_local_search`): the
        ``m x m`` and ``n x n`` weight matrices are kept as the identity minus
        low-rank corrections (memory ``O((m + n) q)``, ``q`` the directions
        used), each iteration swaps one singular triplet or lowers the
        weights and then solves the ``rank^2`` normal equations of the fully
        corrective step by conjugate gradients (``O(nnz rank)`` per CG
        iteration, up to 200): much slower per iteration than the others,
        and at least ``rank`` iterations to reach the rank. The search ends
        at a local minimum of its exchanges: it is finished by alternating
        least squares at its rank (``'als'`` with ``alpha=0``) started from
        its factors, kept when not worse (``n_iter`` and ``loss_curve``
        include those sweeps; ``converged`` is the search's). It needs
        ``thresholding='hard'``; ``step_size`` and ``momentum`` are not used,
        and ``tol`` is the relative decrease a swap must bring. ``'als'``:
        the factored problem with a ridge ``alpha`` on the factors,
        ``1/2 sum_observed (U V^T + 1 mu^T - A)_ij^2 + alpha/2 (||U||_F^2 +
        ||V||_F^2)``, which equals a nuclear-norm penalty ``alpha ||U V^T||_*``
        with at most ``rank`` singular values (soft thresholding of the
        singular values by ``alpha``: SoftImpute's shrinkage, capped at a
        rank), solved by softImpute-ALS (Hastie, Mazumder, Lee & Zadeh 2015,
        Algorithm 3.1; ``O(nnz rank)`` per sweep) with a safeguarded
        extrapolation (module ``impute/_als.py``). With
        ``alpha=0`` it is a hard rank fitted by alternating least squares:
        softImpute-ALS's half-steps regress the filled-in matrix (EM steps),
        which contract slowly where a column (or row) has few observed
        entries, so once its stopping rule holds the fit ends with exact
        alternating least squares (each column's loadings and offset on its
        observed rows, then each row's scores), stopped when the distance to
        the limit estimated from the contraction of successive changes is
        ``tol`` of the product; those sweeps count in ``n_iter``,
        ``loss_curve`` and ``max_iter``, and ``converged`` is theirs.
        It needs ``thresholding='hard'``; ``step_size``, ``momentum`` and
        ``svd_solver`` are not used.
    thresholding : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator, default='hard'
        The operator lifted to the singular values (``tau`` = the
        ``(rank+1)``-th singular value of the step). Operators other than
        hard do not decrease ``f`` monotonically: the best iterate is returned.
    step_size : 'auto' or float, default='auto'
        A float is a fixed step in multiples of ``1/L``; the observation
        operator has ``L = 1``, so ``1.0`` is the safe step (monotone for
        hard thresholding). ``'auto'``: exact line search along the gradient
        projected on the current column space (normalized IHT,
        ``eta = ||P_U G||^2 / ||P_Omega P_U G||^2``, about ``1/p`` for a share
        ``p`` observed), halved while the objective rises, down to 1; the
        first step from zero is scaled to minimise ``f`` along it.
    max_iter : int, default=300
        Maximum number of iterations (one partial SVD each, plus line-search
        trials; with ``'als'``, sweeps, the final exact ones included).
    tol : float, default=1e-5
        Stop when ``||M_t - M_{t-1}||_F <= tol ||L_t||_F``, with ``L_t`` the
        low-rank part (the iterate without its column offsets, so that the
        rule does not change when a constant is added to the data with
        ``center=True``, nor when the data are scaled).
    momentum : float in [0, 1), default=0.25
        The extrapolation weight of ``'accelerated'`` (the paper's ``tau``).
    center : bool, default=False
        Fit column offsets ``mu`` jointly: the completed matrix is
        ``L + 1 mu^T`` with ``rank(L) <= rank`` and ``mu`` never thresholded
        (after each step on ``L``, ``mu`` is set to the mean residual of each
        column, its exact minimiser). Fixed means computed beforehand would
        not do: the observed entries' column means differ from the
        matrix's, and subtracting them breaks an exact low rank.
    svd_solver : {'randomized', 'arpack'}, default='randomized'
        ``'randomized'``: a block range finder of ``rank + 11`` columns,
        warm-started from the previous right singular vectors, with
        ``n_power_iter`` power iterations. ``'arpack'``:
        ``scipy.sparse.linalg.svds`` on a ``LinearOperator`` (slower, see
        :source:`benchmarks/bench_completion_svd.py`).
    n_power_iter : int, default=1
        Block power iterations of the randomized range finder.
    alpha : float >= 0, default=0.0
        The ridge on the factors of ``solver='als'`` (in the data's units: a
        singular value of the completed matrix is its unpenalised value minus
        ``alpha``, or 0); must be 0 with the other solvers.
        :func:`choose_rank` or ``LowRankImputer(rank='auto', solver='als')``
        choose it on held-out entries.
    random_state : int, RandomState instance or None, default=0
        Seeds the random columns of the range finder (results are
        reproducible with an int).
    verbose : int, default=0
        ``>= 1`` prints one line per iteration.

    Returns
    -------
    CompletionResult
        Factors ``U, s, Vt``, ``n_iter``, ``loss_curve``, ``converged``, ``step_sizes``.

    Raises
    ------
    ValueError
        On invalid parameters, no observed entry, non-finite observed values
        or a matrix with fewer than two rows or columns.

    Warns
    -----
    ConvergenceWarning
        When ``max_iter`` is reached before the stopping rule, or the
        iteration diverged (a fixed ``step_size`` too large); the best iterate
        is returned. A hard rank (``alpha=0``) with fewer than 6 observed
        entries per free parameter (``rank (m + n - rank)``, plus ``n`` with
        ``center``) may have no best fit at all (the objective's infimum
        approached by matrices growing without bound): the message then says
        so, and more iterations would only raise the error on the missing
        entries; lower the rank or use ``solver='als'`` with ``alpha > 0``.

    Notes
    -----
    A row or column with no observed entry gets exact zeros in the completed
    matrix (the gradient never reaches it; its rows of ``U`` or columns of
    ``Vt`` are set to 0), plus its offset with ``center`` (0 for an empty
    column).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sparse_estimators.impute import complete_matrix
    >>> rng = np.random.default_rng(0)
    >>> M = rng.standard_normal((60, 2)) @ rng.standard_normal((2, 40))
    >>> mask = rng.uniform(size=M.shape) < 0.5
    >>> result = complete_matrix(sp.csr_matrix(np.where(mask, M, 0.0)), rank=2)
    >>> bool(np.abs(result.to_dense() - M).max() < 1e-3)
    True

    (That example treats the zeros of a dense matrix as missing; an observed
    zero must be stored explicitly, e.g. with the tuple form.)
    """
    if solver not in _SOLVERS:
        raise ValueError(f"The 'solver' parameter must be one of {_SOLVERS}, got {solver!r}.")
    if svd_solver not in _SVD_SOLVERS:
        raise ValueError(f"The 'svd_solver' parameter must be one of {_SVD_SOLVERS}, got {svd_solver!r}.")
    auto = isinstance(step_size, str) and step_size == "auto"
    if not auto and (isinstance(step_size, (str, bool)) or not isinstance(step_size, numbers.Real)
                     or not np.isfinite(step_size) or step_size <= 0):
        raise ValueError(f"The 'step_size' parameter must be 'auto' or a positive float, got {step_size!r}.")
    for name, value, low in (("max_iter", max_iter, 1), ("n_power_iter", n_power_iter, 0), ("verbose", verbose, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"The '{name}' parameter must be an integer >= {low}, got {value!r}.")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol >= 0 or not np.isfinite(tol):
        raise ValueError(f"The 'tol' parameter must be a finite number >= 0, got {tol!r}.")
    if (isinstance(momentum, bool) or not isinstance(momentum, numbers.Real)
            or not 0 <= momentum < 1):
        raise ValueError(f"The 'momentum' parameter must be in [0, 1), got {momentum!r}.")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"The 'alpha' parameter must be a finite number >= 0, got {alpha!r}.")
    operator = check_solver_thresholding(solver, thresholding)
    S, shape = check_observed(observed, shape)
    r = _effective_rank(rank, shape)
    rng = check_random_state(random_state)

    scale = power_of_two_scale(S.data)
    if scale != 1.0:
        S.data *= scale
    S, row_index, col_index = restrict(S, r)  # (only the rows and columns with an entry, when few)
    obs = _Observed.from_csr(S)
    if not isinstance(center, (bool, np.bool_)):
        raise ValueError(f"The 'center' parameter must be a bool, got {center!r}.")
    if solver == "als" and not operator.is_hard:
        raise ValueError("solver='als' shrinks the singular values through its ridge 'alpha' (a soft threshold): "
                         f"it supports thresholding='hard' only, got thresholding={thresholding!r}.")
    if alpha and solver != "als":
        raise ValueError(f"The 'alpha' parameter (the ridge on the factors) needs solver='als', got solver={solver!r}.")
    # (a hard rank by ALS ends with exact alternating least squares: softImpute-ALS alone stops far from its limit
    # on the columns of a wide table, or the rows of a tall one)
    result = _solve(obs, r, operator, solver, auto, step_size, max_iter, tol, momentum, svd_solver, n_power_iter,
                    rng, verbose, scale, offsets=bool(center), alpha=alpha, finish=solver == "als" and alpha == 0)
    return expand(zero_unobserved(result, obs.rows, obs.cols), row_index, col_index, shape)


def _solve(obs, r, operator, solver, auto, step_size, max_iter, tol, momentum, svd_solver, n_power_iter, rng,
           verbose, scale, offsets=False, alpha=0.0, init=None, finish=False, spread=None, mean_start=False):
    """The iteration of :func:`complete_matrix` on validated input (also called by LowRankImputer).

    ``alpha`` (``solver='als'``) is in the data's units; the data were scaled by ``scale``; ``init``: the
    factors ``(U, V)`` ``solver='als'`` starts from (scaled units), else its spectral start; ``finish``: the ALS
    fit ends with exact alternating least squares (``_als._exact_sweeps``; ``'noise'``: without a ridge, with
    ``_als.noise_ridge``'s); ``spread``, ``mean_start``: ``solver='als'`` stops relative to ``spread`` if
    smaller than the product (``_als._tolerance``), starts from the mean-filled table. BLAS runs on
    ``_policy.BLAS_THREADS`` threads.
    """
    with _limit_blas_threads():
        if solver == "als":
            return _solve_als(obs, r, alpha * scale, max_iter, tol, rng, verbose, scale, offsets, init=init,
                              finish=finish, spread=spread, mean_start=mean_start)[0]
        if solver == "regularized":
            return _solve_local_search(obs, r, max_iter, tol, n_power_iter, rng, verbose, scale, offsets)
        return _solve_thresholding(obs, r, operator, solver, auto, step_size, max_iter, tol, momentum, svd_solver,
                                   n_power_iter, rng, verbose, scale, offsets)


def _solve_thresholding(obs, r, operator, solver, auto, step_size, max_iter, tol, momentum, svd_solver,
                        n_power_iter, rng, verbose, scale, offsets):
    """``solver='iht'`` and ``'accelerated'``.

    The iterate is ``L + 1 mu^T``: ``L`` as factors ``(U, s, Vt)`` and, with
    ``offsets``, column offsets ``mu`` that are never thresholded; after each
    thresholded step on ``L`` they are set to their exact minimiser given
    ``L`` (the mean residual of each column), so the objective still never
    rises with the safe step. Without ``offsets``, ``mu = 0``.
    """
    m, n = obs.shape
    k = min(r + 1 + _policy.OVERSAMPLE, m, n)
    vals, cols = obs.values, obs.cols
    counts = _column_sums(cols, n)
    vals_sums = _column_sums(cols, n, vals) if offsets else None
    # Residuals (fit minus observed) on the observed entries, one nnz-sized buffer each: ``res_x`` at the
    # iterate, ``res_new`` at the trial point, and ``obs.S.data`` at the point the gradient is taken
    # (the extrapolated one); the fitted values themselves are never stored.

    def best_offsets(pred_L):
        """The offsets minimising f given the low-rank part's fitted values ``pred_L`` (each column's mean residual)."""
        if not offsets:
            return np.zeros(n)
        sums = vals_sums - _column_sums(cols, n, pred_L)
        return np.divide(sums, counts, out=np.zeros(n), where=counts > 0)

    empty = (np.zeros((m, 0)), np.zeros(0), np.zeros((0, n)))
    mu_x = vals_sums / np.maximum(counts, 1) if offsets else np.zeros(n)  # (best_offsets at L = 0)
    x = empty
    res_x = _add_gathered(-vals, mu_x, cols)  # (-vals is a new array)
    f_x = 0.5 * float(res_x @ res_x)
    f0 = max(f_x, 0.5 * float(vals @ vals))
    obs.S.data[:] = res_x
    u, mu_u = x, mu_x
    res_new = np.empty_like(vals)
    accelerated = solver == "accelerated" and momentum > 0
    extrapolated = False
    keep_best = not operator.is_hard
    best = (f_x, x, mu_x)
    losses, steps, times = [], [], []
    converged = diverged = False
    n_restarts = 0
    t0 = time.perf_counter()
    it = 0
    for it in range(1, max_iter + 1):
        S = obs.S  # (its data: the residual at u)
        f_u = 0.5 * float(S.data @ S.data)
        # (the column space of the last iterate x: the extrapolated point spans up to 2r nearly dependent columns)
        eta = _line_search_step(x[0] if x[1].size else u[0], obs, S) if auto else float(step_size)
        start = np.ascontiguousarray(x[2].T) if x[1].size else None
        while True:
            if svd_solver == "randomized":
                trip = _randomized_svd(*u, S, -eta, k, start, n_power_iter, rng)
            else:
                trip = _arpack_svd(*u, S, -eta, k, start, rng)
            new = threshold_singular_values(operator, r, *trip)
            pred_L = obs.entries(*new, out=res_new)  # (the buffer becomes the residual below)
            if auto and u[1].size == 0:
                # first step from zero: the scalar multiple of the thresholded step minimising f
                nn = float(pred_L @ pred_L)
                c = (float(pred_L @ vals) - (float(mu_u @ _column_sums(cols, n, pred_L)) if offsets else 0.0)) / nn \
                    if nn > 0 else 1.0
                if c > 0:
                    new = (new[0], new[1] * c, new[2])
                    pred_L *= c
            mu_new = best_offsets(pred_L)
            res_new = _add_gathered(pred_L, mu_new, cols)
            res_new -= vals
            f_new = 0.5 * float(res_new @ res_new)
            if not auto or f_new <= f_u or eta <= 1.0:
                break
            eta = max(0.5 * eta, 1.0)
        if not np.isfinite(f_new) or f_new > _policy.BLOWUP * max(f0, np.finfo(float).tiny):
            diverged = True
            losses.append(f_new if np.isfinite(f_new) else np.inf)
            steps.append(eta)
            times.append(time.perf_counter() - t0)
            break
        if accelerated and extrapolated and f_new > f_x:
            # function restart: drop the momentum, next iteration steps from x
            u, mu_u, extrapolated = x, mu_x, False
            S.data[:] = res_x
            n_restarts += 1
            losses.append(f_x)
            steps.append(eta)
            times.append(time.perf_counter() - t0)
            continue
        # ||M_new - M_x||_F, with the offsets' part m ||d mu||^2 added (their cross term with L ignored)
        dmu = mu_new - mu_x
        change = np.sqrt(_frobenius_distance(new, x) ** 2 + m * float(dmu @ dmu))
        # relative to the low-rank part alone: the offsets would make the rule depend on a constant added to
        # the data (at +1e4 it stopped after 5 iterations with 200 times the error)
        size = np.sqrt(float(new[1] @ new[1]))
        losses.append(f_new)
        steps.append(eta)
        if verbose:
            print(f"[complete_matrix] iter {it:4d}  objective {f_new / scale / scale:.6e}  step {eta:.3g}  "
                  f"rel. change {change / max(size, 1e-300):.2e}")
        if f_new < best[0]:
            best = (f_new, new, mu_new)
        if accelerated:
            # the extrapolated point as factors: [U_new, U_x] diag((1 + tau) s_new, -tau s_x) [Vt_new; Vt_x];
            # its residual (1 + tau) res_new - tau res_x (the observed values cancel)
            u = (np.hstack([new[0], x[0]]), np.concatenate([(1 + momentum) * new[1], -momentum * x[1]]),
                 np.vstack([new[2], x[2]]))
            mu_u = (1 + momentum) * mu_new - momentum * mu_x
            np.multiply(res_new, 1 + momentum, out=S.data)
            scipy.linalg.blas.daxpy(res_x, S.data, a=-momentum)
            extrapolated = True
        else:
            u, mu_u = new, mu_new
            S.data[:] = res_new
        x, mu_x, f_x = new, mu_new, f_new
        res_x, res_new = res_new, res_x  # (the old residual's buffer takes the next trial)
        times.append(time.perf_counter() - t0)
        if change <= tol * size:
            converged = True
            break
    if diverged or keep_best:
        x, mu_x = best[1], best[2]
    if diverged:
        warnings.warn("complete_matrix diverged (the objective blew up): the step size is too large; returning "
                      "the best iterate. Use step_size='auto' or a step <= 1.", ConvergenceWarning, stacklevel=4)
    elif not converged:
        warnings.warn(_not_converged_message(max_iter, tol, obs.shape, vals.size, r, offsets, operator.is_hard),
                      ConvergenceWarning, stacklevel=4)
    U, s, Vt = x
    if s.size < r:  # (soft thresholding can return fewer; pad so the shapes are always (m, r), (r,), (r, n))
        U = np.hstack([U, np.zeros((m, r - s.size))])
        Vt = np.vstack([Vt, np.zeros((r - s.size, n))])
        s = np.concatenate([s, np.zeros(r - s.size)])
    with np.errstate(over="ignore", under="ignore"):  # (objectives of data near 1e+-300 are not representable)
        losses = np.asarray(losses) / scale / scale
    return CompletionResult(U=U, s=s / scale, Vt=Vt, n_iter=it, loss_curve=losses,
                            converged=converged, step_sizes=np.asarray(steps), time_curve=np.asarray(times),
                            rank=r, n_restarts=n_restarts, column_offsets=mu_x / scale)
