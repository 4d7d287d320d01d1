"""Regularized local search for a rank constraint (Axiotis & Sviridenko, Sec. 5 and App. D, Algorithm 2).

The low-rank form of regularized IHT. The iterate ``A`` (m x n, rank at most
``r``) is kept as factors ``U diag(s) Vt``; the penalty
``Phi(A) = (beta/4) (<W, A A^T> + <Y, A^T A>)`` has a left weight matrix
``W`` (m x m) and a right one ``Y`` (n x n), both starting at the identity
and only ever decreased. Each iteration:

1. **swap**: drop the smallest singular triplet of ``A`` (none while
   ``rank(A) < r``) and add the top singular pair of ``grad g(A)``,
   ``g = f + Phi``; then the **fully corrective step**: minimise ``g`` over
   the matrices ``U_b X V_b^T`` whose column and row spaces are spanned by
   the kept vectors and the new pair (``X`` is ``r x r``);
2. **weight update**: ``W <- W - c W A A^T W / <W, A A^T>`` (and ``Y``
   alike with ``A^T A``: the penalty is lifted from the directions the
   iterate uses), then the fully corrective step on ``A``'s own spaces;
3. keep whichever of the two lowers ``g`` more.

The problem (``f``, its gradient and the fully corrective solve) is an
object with a small interface (:class:`LowRankProblem`), so the same
iteration serves reduced-rank regression (a dense coefficient matrix) and
matrix completion (observed entries only, never the m x n matrix).
"""

import time

import numpy as np
import scipy.linalg
import scipy.optimize

from .. import _policy
from ._base import SolverResult

__all__ = ["LowRankProblem", "SpectralWeights", "regularized_local_search", "low_rank_local_search"]


class SpectralWeights:
    """A weight matrix ``I - Q diag(d) Q^T`` of order ``dim`` (``Q`` orthonormal, ``0 <= d <= 1``).

    Algorithm 2's ``W`` or ``Y``, stored as the identity minus a low-rank
    correction: memory ``O(dim q)``, ``q`` the rank of the correction
    (bounded by the number of directions the iterates have used), never
    ``dim x dim``.

    Parameters
    ----------
    dim : int
        The order of the matrix.
    """

    def __init__(self, dim):
        self.dim = int(dim)
        self.Q = np.zeros((self.dim, 0))
        self.d = np.zeros(0)

    def copy(self):
        """An independent copy."""
        new = SpectralWeights(self.dim)
        new.Q, new.d = self.Q, self.d  # (update() rebinds them, never writes into them)
        return new

    def apply(self, M):
        """``W @ M`` for ``M`` of shape (dim, k)."""
        return M - self.Q @ (self.d[:, None] * (self.Q.T @ M))

    def sandwich(self, B):
        """``B^T W B`` for ``B`` of shape (dim, k)."""
        QB = self.Q.T @ B
        return B.T @ B - QB.T @ (self.d[:, None] * QB)

    def inner(self, B):
        """``<W, B B^T> = trace(B^T W B)``."""
        return float(np.trace(self.sandwich(B)))

    def update(self, B, c=1.0):
        """``W <- W - c (W B)(W B)^T / <W, B B^T>`` (Algorithm 2's update with ``A A^T = B B^T``).

        The subtracted matrix is at most ``W`` (``W`` stays positive
        semi-definite) and has trace at most ``c``. Nothing changes when
        ``<W, B B^T> = 0``.
        """
        WB = self.apply(B)
        denom = float(np.vdot(B, WB))
        if not denom > 0:
            return self
        Z = np.hstack([self.Q, WB])
        Q, R = scipy.linalg.qr(Z, mode="economic", check_finite=False)
        core = np.concatenate([self.d, np.full(WB.shape[1], c / denom)])
        vals, vecs = scipy.linalg.eigh((R * core) @ R.T, check_finite=False)
        keep = vals > _policy.EIG_FLOOR
        self.Q = Q @ vecs[:, keep]
        self.d = np.clip(vals[keep], 0.0, 1.0)
        return self


class LowRankProblem:
    """What :func:`regularized_local_search` needs from a problem ``min f(A)`` over m x n matrices.

    Attributes
    ----------
    shape : tuple of int
        ``(m, n)``.
    beta : float
        A bound on the smoothness of ``f`` (the penalty's scale).
    """

    shape = (0, 0)
    beta = 1.0

    def value(self, U, s, Vt):
        """``f(U diag(s) Vt)``."""
        raise NotImplementedError

    def top_directions(self, U, s, Vt, W, Y, k):
        """The top ``k`` singular pairs ``(P, Q)`` (shapes (m, k), (n, k)) of ``grad f(A) + (beta/2)(W A + A Y)``."""
        raise NotImplementedError

    def top_direction(self, U, s, Vt, W, Y):
        """The top singular pair ``(u, v)`` (shapes (m,), (n,)) of the regularized gradient."""
        P, Q = self.top_directions(U, s, Vt, W, Y, 1)
        return P[:, 0], Q[:, 0]

    def corrective(self, Ub, Vb, W, Y, X0):
        """``X`` minimising ``g(Ub X Vb^T)`` (exactly or nearly; ``X0``: a warm start), and ``f`` there.

        ``Ub``, ``Vb`` have orthonormal columns; ``g = f + (beta/4)(<W, A A^T> + <Y, A^T A>)``.
        Returns ``(X, f_value)``.
        """
        raise NotImplementedError


def _penalty(beta, U, s, Vt, W, Y):
    """``(beta/4) (<W, A A^T> + <Y, A^T A>)`` for ``A = U diag(s) Vt``."""
    if s.size == 0:
        return 0.0
    return 0.25 * beta * (W.inner(U * s) + Y.inner(Vt.T * s))


def _orth(B):
    """An orthonormal basis of the columns of ``B`` (rank-revealing: dependent columns dropped)."""
    if B.shape[1] == 0:
        return B
    Q, R, _ = scipy.linalg.qr(B, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(R))
    keep = diag > diag[0] * max(B.shape) * np.finfo(float).eps if diag.size and diag[0] > 0 else diag > 0
    return Q[:, :int(keep.sum())]


def _factor(Ub, X, Vb):
    """``Ub X Vb^T`` as SVD factors, singular values decreasing (zero ones dropped)."""
    P, s, Qt = scipy.linalg.svd(X, full_matrices=False, check_finite=False)
    keep = s > (s[0] * max(X.shape) * np.finfo(float).eps if s.size else 0)
    return Ub @ P[:, keep], s[keep], Qt[keep] @ Vb.T


def regularized_local_search(problem, rank, *, max_iter=1000, tol=1e-4, weight_step=1.0, start=None, verbose=0,
                             name="RegularizedLocalSearch"):
    """Minimise ``problem``'s ``f`` over matrices of rank at most ``rank`` by regularized local search.

    Axiotis & Sviridenko's Algorithm 2 (App. D) made practical. Its tests
    choose between a swap and a weight update by their progress against
    ``Delta = g(A) - f(A*)``, which needs the unknown optimal value (the
    paper removes it by a binary search over that value); here both are
    computed and the one that lowers ``g`` more is kept (the paper's
    guarantees for either step are decreases of ``g``). Two more changes,
    both measured: after a weight update the iterate is re-optimised on
    its own spaces (the paper keeps it, which leaves it shrunk by a penalty
    already lifted), and when the paper's swap (drop, then add one pair)
    does not lower ``g``, an exchange that adds first is tried: the top
    ``rank`` singular pairs of the gradient join the spaces, the fully
    corrective step runs on them (dimension up to ``2 rank``) and the best
    rank-``rank`` matrix there is re-optimised (ADMiRA's exchange, Lee &
    Bresler 2010); the paper's swap cannot replace a large but misplaced
    triplet. The run has converged when neither lowers ``g`` by more than
    ``tol |g|`` and the penalty's share ``Phi(A) / ((beta/2) ||A||_F^2)``
    (1 with unit weights, 0 once the iterate's spaces are free) is at most
    ``tol``.

    The paper's guarantee is for a relaxed rank (``O(r kappa)`` for a
    rank-``r`` target). At the exact rank the search ends at a local
    minimum of its exchanges: directions it has not used keep their full
    penalty, so moving into them costs. On well-conditioned reduced-rank
    regression it stops 1e-2 to 1e-1 above the optimum in relative
    objective (1e-4 to 1e-3 after the refit in its column space), where
    IHT reaches the closed form; on Liu & Barber's adversarial instance,
    where IHT is stuck, it goes below the target
    (:source:`tests/test_local_search.py` checks both).

    Parameters
    ----------
    problem : LowRankProblem
    rank : int
        The largest rank of the iterate (the paper's ``s'``).
    max_iter : int, default=1000
        Iterations (swaps or weight updates; each one fully corrective solve).
    tol : float, default=1e-4
        Relative decrease of ``g`` a swap must bring, and the penalty share at convergence.
    weight_step : float in (0, 1], default=1.0
        ``c`` in ``W <- W - c W A A^T W / <W, A A^T>``; 1 is Algorithm 2's update.
    start : tuple (U, s, Vt) or None
        A starting point (its top ``rank`` triplets are kept); None: zero.
    verbose : int, default=0
        ``>= 2`` prints one line per iteration.
    name : str
        The solver's name in verbose output.

    Returns
    -------
    dict
        ``U, s, Vt`` (the last iterate), ``objective`` (``f`` after each
        iteration), ``n_iter``, ``converged``, ``n_swaps``, ``n_weight_updates``,
        ``time_curve`` (seconds at the end of each iteration).
    """
    m, n = problem.shape
    beta = float(problem.beta)
    W, Y = SpectralWeights(m), SpectralWeights(n)
    if start is None:
        U, s, Vt = np.zeros((m, 0)), np.zeros(0), np.zeros((0, n))
    else:
        U, s, Vt = (np.asarray(a, dtype=float) for a in start)
        keep = np.flatnonzero(s > 0)[:rank]
        U, s, Vt = U[:, keep], s[keep], Vt[keep]
    f = problem.value(U, s, Vt)
    g = f + _penalty(beta, U, s, Vt, W, Y)
    objective, times = [], []
    converged = False
    n_swaps = n_updates = 0
    t0 = time.perf_counter()
    it = 0
    for it in range(1, max_iter + 1):
        u, v = problem.top_direction(U, s, Vt, W, Y)
        keep = min(s.size, rank - 1)  # H_{r-1}(A): the smallest triplet goes once the rank is full
        Ub = _orth(np.column_stack([U[:, :keep], u]))
        Vb = _orth(np.column_stack([Vt[:keep].T, v]))
        X0 = (Ub.T @ U * s) @ (Vt @ Vb)  # the current iterate in the new bases
        X, f_new = problem.corrective(Ub, Vb, W, Y, X0)
        U_new, s_new, Vt_new = _factor(Ub, X, Vb)
        g_new = f_new + _penalty(beta, U_new, s_new, Vt_new, W, Y)
        if g - g_new <= tol * abs(g) and s.size == rank:
            # the paper's swap (drop, then add) cannot replace a large but misplaced triplet: also try
            # adding first, the top ``rank`` singular pairs of the gradient (a corrective step on spaces of
            # dimension up to 2 rank), then the best rank-r matrix in them (ADMiRA's exchange, Lee & Bresler)
            Ug, Vg = problem.top_directions(U, s, Vt, W, Y, rank)
            Ub = _orth(np.column_stack([U, Ug]))
            Vb = _orth(np.column_stack([Vt.T, Vg]))
            X, _ = problem.corrective(Ub, Vb, W, Y, (Ub.T @ U * s) @ (Vt @ Vb))
            Ut, _, Vtt = _factor(Ub, X, Vb)
            Ub, Vb = Ut[:, :rank], Vtt[:rank].T
            X, f_add = problem.corrective(Ub, Vb, W, Y, (Ub.T @ U * s) @ (Vt @ Vb))
            U_add, s_add, Vt_add = _factor(Ub, X, Vb)
            g_add = f_add + _penalty(beta, U_add, s_add, Vt_add, W, Y)
            if g_add < g_new:
                U_new, s_new, Vt_new, f_new, g_new = U_add, s_add, Vt_add, f_add, g_add
        # the weight update's candidate: lower weights, the iterate re-optimised on its own spaces
        shared = (g - f) / (0.5 * beta * float(s @ s)) if s.size else 0.0  # the penalty's share, in [0, 1]
        if shared > tol:
            W_w, Y_w = W.copy().update(U * s, weight_step), Y.copy().update(Vt.T * s, weight_step)
            X, f_w = problem.corrective(U, Vt.T, W_w, Y_w, np.diag(s))
            U_w, s_w, Vt_w = _factor(U, X, Vt.T)
            g_w = f_w + _penalty(beta, U_w, s_w, Vt_w, W_w, Y_w)
        else:
            g_w = np.inf
        if g - min(g_new, g_w) <= tol * abs(g) and shared <= tol:
            converged = True  # no swap helps and the penalty's share is at most tol: a local minimum of f
            kind = "stop"
        elif g_new <= g_w:
            U, s, Vt, f, g = U_new, s_new, Vt_new, f_new, g_new
            n_swaps += 1
            kind = "swap"
        else:
            U, s, Vt, f, g, W, Y = U_w, s_w, Vt_w, f_w, g_w, W_w, Y_w
            n_updates += 1
            kind = "weights"
        objective.append(f)
        times.append(time.perf_counter() - t0)
        if verbose >= 2:
            print(f"[{name}] iter {it:4d}  {kind:7s}  objective {f:.6e}  regularized {g:.6e}  rank {s.size}")
        if converged:
            break
    return {"U": U, "s": s, "Vt": Vt, "objective": objective, "n_iter": it, "converged": converged,
            "n_swaps": n_swaps, "n_weight_updates": n_updates, "time_curve": np.asarray(times)}


class _LossProblem(LowRankProblem):
    """``f(A) = loss(A, b)`` for a loss of the package whose coefficient matrix ``W`` is ``A`` (b fixed).

    Least squares (quadratic, the same Hessian for every output) has an
    exact fully corrective step, a Sylvester equation of order ``r``:
    ``(U^T H U + (beta/2) U^T W U) X + X (beta/2) V^T Y V = -U^T grad f(0) V``;
    any other smooth loss is minimised over ``X`` by L-BFGS from the warm start.
    """

    def __init__(self, loss, b):
        self.loss = loss
        self.shape = (loss.n_features, loss.n_outputs)
        self.beta = loss.lipschitz()
        self.b = b
        self.quadratic = hasattr(loss, "y_mean") and not loss.intercept_is_variable  # (SquaredLoss and its Gram form)
        if self.quadratic:
            W0 = np.zeros(self.shape)
            self.grad0 = self._gradient(W0)  # -X^T S Y / N: the linear term

    def _dense(self, U, s, Vt):
        return (U * s) @ Vt if s.size else np.zeros(self.shape)

    def _gradient(self, A):
        return self.loss.gradient_from_z(self.loss.linear_predictor(A, self.b), A)[0]

    def value(self, U, s, Vt):  # noqa: D102
        return self.loss.value(self._dense(U, s, Vt), self.b)

    def top_directions(self, U, s, Vt, W, Y, k):  # noqa: D102
        A = self._dense(U, s, Vt)
        G = self._gradient(A) + 0.5 * self.beta * (W.apply(A) + Y.apply(A.T).T)
        P, _, Qt = scipy.linalg.svd(G, full_matrices=False, check_finite=False)
        return P[:, :k], Qt[:k].T

    def corrective(self, Ub, Vb, W, Y, X0):  # noqa: D102
        half_beta = 0.5 * self.beta
        WU, YV = W.sandwich(Ub), Y.sandwich(Vb)
        if self.quadratic:
            HU = self.loss.hessp(None, self.b, Ub, None)[0]
            X = scipy.linalg.solve_sylvester(Ub.T @ HU + half_beta * WU, half_beta * YV, -(Ub.T @ self.grad0 @ Vb))
            return X, self.loss.value(Ub @ X @ Vb.T, self.b)
        shape = (Ub.shape[1], Vb.shape[1])

        def fun(x):
            X = x.reshape(shape)
            A = Ub @ X @ Vb.T
            Z = self.loss.linear_predictor(A, self.b)
            f, G = self.loss.value_from_z(Z, A), self.loss.gradient_from_z(Z, A)[0]
            pen = 0.5 * half_beta * (np.vdot(WU, X @ X.T) + np.vdot(YV, X.T @ X))
            return f + pen, (Ub.T @ G @ Vb + half_beta * (WU @ X + X @ YV)).ravel()

        X = scipy.optimize.minimize(fun, np.asarray(X0, dtype=float).ravel(), jac=True, method="L-BFGS-B",
                                    options={"maxiter": 500, "gtol": 1e-12, "ftol": 1e-15}).x.reshape(shape)
        return X, self.loss.value(Ub @ X @ Vb.T, self.b)


def low_rank_local_search(loss, operator, k, *, W0, b0, step_size="auto", max_iter=1000, tol=1e-4, verbose=0,
                          weight_step=None):
    """:func:`regularized_local_search` with the solvers' signature: a loss under a rank constraint.

    ``operator`` must be a :class:`~sparse_estimators.structures.LowRank`
    structure with hard thresholding (the swaps keep whole singular
    triplets; there is no step to threshold), ``k`` is the rank and
    ``step_size`` is not used (the fully corrective step is exact for
    least squares, L-BFGS for other losses; an intercept variable stays at
    ``b0``).
    ``weight_step`` None means 1, Algorithm 2's update.

    Returns
    -------
    SolverResult
    """
    if not operator.is_hard:
        raise ValueError("solver='regularized' keeps whole singular triplets (a local search with fully "
                         "corrective steps): it supports thresholding='hard' only.")
    c = 1.0 if weight_step is None else float(weight_step)
    if not 0 < c <= 1:
        raise ValueError(f"weight_step must be in (0, 1] for the rank-constrained local search, got {weight_step!r}.")
    start = None
    if np.any(W0 != 0):
        U0, s0, Vt0 = scipy.linalg.svd(np.asarray(W0, dtype=float), full_matrices=False, check_finite=False)
        start = (U0, s0, Vt0)
    out = regularized_local_search(_LossProblem(loss, b0), int(k), max_iter=max_iter, tol=tol,
                                   weight_step=c, start=start, verbose=verbose)
    U, s, Vt = out["U"], out["s"], out["Vt"]
    W = (U * s) @ Vt if s.size else np.zeros_like(W0)
    objective = list(out["objective"])
    if hasattr(loss, "y_mean") and not loss.intercept_is_variable and s.size:  # (least squares)
        # the search's corrective steps minimise the *regularized* objective, whose minimiser is biased away
        # from the loss's (about 1e-3 in coefficients whatever tol): finish with the least-squares minimiser
        # of rank k, kept if it is not worse (it is the global one when the k-th singular value of the
        # fitted values is separated from the next)
        polished = _reduced_rank_least_squares(loss, W, b0, int(k))
        value = loss.value(polished, b0)
        if value <= loss.value(W, b0):
            W = polished
            objective.append(value)
    return SolverResult(W, b0.copy(), np.flatnonzero(np.any(W != 0, axis=1)), out["n_iter"], objective,
                        converged=out["converged"])


def _reduced_rank_least_squares(loss, W, b, rank, W_ols=None):
    """Reduced-rank regression in closed form: ``W_ols V V^T``.

    ``V`` holds the top ``rank`` right singular vectors of the (weighted,
    centred) fitted values ``X W_ols``: eigenvectors of ``W_ols^T H W_ols``
    (``m x m``, ``H`` the loss's Hessian, through Hessian-vector products).
    ``W_ols``: the least-squares fit on every feature, if the caller has it.
    """
    if W_ols is None:
        W_ols, _ = loss.refit(np.arange(loss.n_features), W, b)
    M = W_ols.T @ loss.hessp(W_ols, b, W_ols, None)[0]
    V = np.linalg.eigh(0.5 * (M + M.T))[1][:, ::-1][:, :rank]
    return W_ols @ V @ V.T
