"""``solver='regularized'`` for completion: Axiotis & Sviridenko's local search on the observed entries."""

import warnings

import numpy as np
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.exceptions import ConvergenceWarning

from .. import _policy
from ..solvers import LowRankProblem, regularized_local_search
from ._als import _solve_als
from ._factored import (
    CompletionResult,
    _add_gathered,
    _column_sums,
    _entries,
    _not_converged_message,
    _randomized_svd,
)


class _CompletionProblem(LowRankProblem):
    """Completion as a :class:`~sparse_estimators.solvers.LowRankProblem`, for ``solver='regularized'``.

    ``f(L) = 1/2 ||C(P_Omega(L) - A_Omega)||^2``, with ``C`` removing each
    column's mean residual over its observed entries when ``offsets`` (the
    offsets ``mu`` profiled out: ``f`` is then the minimum over ``mu``) and
    the identity otherwise. ``beta = 1``. The regularized gradient is
    "sparse + low rank" (the residual on the observed pattern, plus
    ``L - (E_W L + L E_Y) / 2`` with the weights' low-rank corrections), so
    its top singular pairs come from the randomized range finder; the fully
    corrective step solves the ``r^2`` normal equations by conjugate
    gradients, each product ``O(nnz r)``.
    """

    beta = 1.0
    #: conjugate-gradient iterations per fully corrective step, and their relative tolerance
    cg_iter, cg_tol = 200, 1e-10

    def __init__(self, obs, offsets, rng, n_power_iter=2):
        self.obs, self.offsets, self.rng, self.n_power_iter = obs, offsets, rng, n_power_iter
        self.shape = obs.shape
        self.counts = np.maximum(_column_sums(obs.cols, obs.shape[1]), 1)

    def center(self, v):
        """``C v``: observed values minus their column's mean (identity without offsets)."""
        if not self.offsets:
            return v
        return _add_gathered(v.copy(), _column_sums(self.obs.cols, self.shape[1], v) / self.counts, self.obs.cols, -1.0)

    def residual(self, U, s, Vt):
        """``C(P_Omega(L) - A_Omega)`` on the observed entries."""
        return self.center(_entries(U, s, Vt, self.obs.rows, self.obs.cols) - self.obs.values)

    def value(self, U, s, Vt):  # noqa: D102
        r = self.residual(U, s, Vt)
        return 0.5 * float(r @ r)

    def top_directions(self, U, s, Vt, W, Y, k):  # noqa: D102
        S = self.obs.set_data(self.residual(U, s, Vt))
        Us = U * s
        left = np.hstack([Us, -0.5 * (W.Q @ (W.d[:, None] * (W.Q.T @ Us))), -0.5 * Us])
        right = np.vstack([Vt, Vt, ((Vt @ Y.Q) * Y.d) @ Y.Q.T])
        m, n = self.shape
        P, _, Qt = _randomized_svd(left, np.ones(left.shape[1]), right, S, 1.0, min(k + _policy.OVERSAMPLE, m, n), None,
                                   self.n_power_iter, self.rng)
        return P[:, :k], Qt[:k].T

    def corrective(self, Ub, Vb, W, Y, X0):  # noqa: D102
        obs, shape = self.obs, (Ub.shape[1], Vb.shape[1])
        WU, YV, ones, Vbt = W.sandwich(Ub), Y.sandwich(Vb), np.ones(Vb.shape[1]), np.ascontiguousarray(Vb.T)

        def adjoint(v):  # U_b^T (sparse matrix of v on the pattern) V_b
            return Ub.T @ np.asarray(obs.set_data(v) @ Vb)

        def normal(x):
            X = x.reshape(shape)
            e = self.center(_entries(Ub @ X, ones, Vbt, obs.rows, obs.cols))
            return (adjoint(e) + 0.5 * (WU @ X + X @ YV)).ravel()

        op = LinearOperator((X0.size, X0.size), matvec=normal, dtype=np.float64)
        x, _ = cg(op, adjoint(self.center(obs.values)).ravel(), x0=np.asarray(X0, dtype=float).ravel(),
                  rtol=self.cg_tol, maxiter=self.cg_iter)
        X = x.reshape(shape)
        return X, self.value(Ub @ X, ones, Vbt)


def _solve_local_search(obs, r, max_iter, tol, n_power_iter, rng, verbose, scale, offsets):
    """``solver='regularized'``: the regularized local search on the observed entries (see :func:`complete_matrix`).

    The search ends at a local minimum of its exchanges (on noiseless rank-3 50 x 30 matrices, half observed: up to
    19 % relative error on the missing entries, reported converged); it is finished by alternating least squares
    at its rank (``solver='als'`` with ``alpha=0``) started from its factors, kept when not worse, as
    ``ReducedRankRegressor(solver='regularized')`` finishes with the closed form.
    """
    problem = _CompletionProblem(obs, offsets, rng, max(n_power_iter, 1))
    out = regularized_local_search(problem, r, max_iter=max_iter, tol=tol, verbose=2 * verbose,
                                   name="complete_matrix")
    U, s, Vt = out["U"], out["s"], out["Vt"]
    m, n = obs.shape
    if s.size < r:  # (pad so the shapes are always (m, r), (r,), (r, n))
        U = np.hstack([U, np.zeros((m, r - s.size))])
        Vt = np.vstack([Vt, np.zeros((r - s.size, n))])
        s = np.concatenate([s, np.zeros(r - s.size)])
    if offsets:  # the profiled offsets: each column's mean residual of the low-rank part
        resid = obs.values - _entries(U, s, Vt, obs.rows, obs.cols)
        mu = _column_sums(obs.cols, n, resid) / problem.counts
    else:
        mu = np.zeros(n)
    losses, times, converged = list(out["objective"]), list(out["time_curve"]), out["converged"]
    n_iter = out["n_iter"]
    # the finish: hard-rank ALS from the search's factors (scaled units), kept when its objective is not higher
    root = np.sqrt(s)
    polish, _ = _solve_als(obs, r, 0.0, max_iter, tol, rng, verbose, 1.0, offsets,
                           init=(U * root, Vt.T * root), warn=False)
    if polish.loss_curve.size and polish.loss_curve[-1] <= problem.value(U, s, Vt):
        U, s, Vt, mu = polish.U, polish.s, polish.Vt, polish.column_offsets
        losses += list(polish.loss_curve)
        times += list((times[-1] if times else 0.0) + polish.time_curve)
        n_iter += polish.n_iter  # (converged stays the search's: the finish only lowers the objective)
    if not converged:
        warnings.warn(_not_converged_message(max_iter, tol, obs.shape, obs.values.size, r, offsets),
                      ConvergenceWarning, stacklevel=4)
    with np.errstate(over="ignore", under="ignore"):
        losses = np.asarray(losses) / scale / scale
    return CompletionResult(U=U, s=s / scale, Vt=Vt, n_iter=n_iter, loss_curve=losses,
                            converged=converged, step_sizes=np.ones(n_iter),
                            time_curve=np.asarray(times), rank=r, n_restarts=0, column_offsets=mu / scale)
