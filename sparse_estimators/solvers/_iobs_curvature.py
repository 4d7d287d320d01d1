"""Curvature of I-OBS (``solvers/_iobs.py``): its Newton solves and its OBS correction.

Linear algebra (``hessian`` option; ``H`` is never inverted explicitly):

* least squares: ``H = X_c^T S X_c / sum(S)`` is constant and factored once
  per fit: Cholesky of ``H + lambda I`` (``'dense'``), or Woodbury through the
  Cholesky factor of the ``n x n`` matrix ``lambda I + A A^T`` with
  ``A = sqrt(S / sum(S)) X_c`` (``'woodbury'``);
* logistic / multinomial: the Hessian (l2 term included) is re-formed at every
  iterate, densely over the packed variables ``[W.ravel(), b]`` (``'dense'``),
  or, for wide data, inverted by Woodbury through an ``(n m) x (n m)``
  factorisation built from ``X X^T`` (computed once per fit) and the
  pointwise second derivatives (``'woodbury'``); the correction then forms
  the small restricted Hessian on the kept rows directly;
* a loss whose expected Hessian is constant (Gamma with the log link, by
  default when ``n < p + 1``): ``'fisher'``, the Newton steps and the
  correction with that Hessian (Fisher scoring), built and factored once per
  fit (Woodbury, dense or CG as logistic's) instead of at every iterate;
  ``'screened_fisher'``, that Hessian's block-diagonal Newton step as
  ``'screened'`` (the solver's start on the 'fisher' route);
* pointwise losses (Poisson by default when ``n < p + 1``):
  ``'screened'``, the Newton step of a block-diagonal Hessian, exact on the
  current support and the rows the top-k selection could take (ranked by
  their diagonal Newton point), diagonal elsewhere: only those columns of
  ``X``, no ``n x n`` or ``p x p`` factorisation;
* any loss: matrix-free Jacobi-preconditioned conjugate gradient on
  Hessian-vector products (``'cg'``), for data too wide for a dense matrix.

The factorisations and the conjugate gradient themselves are in
``solvers/_iobs_linalg.py``.
"""

import numpy as np
import scipy.sparse as sp

from .. import _policy
from ..losses import LinearDesign
from ..losses._numerics import diagonal_mean
from ._cox_newton import CoxWoodbury
from ._iobs_linalg import _damping_scale, _exactly_symmetric, _factored, _inverse_diag, _pcg, _SPDSolver


class _WoodburySolver:
    """``(A^T A + lambda I)^{-1} v`` through an ``n x n`` factorisation.

    ``A = sqrt(S / sum(S)) X_c`` (rows of zero weight dropped), so that
    ``A^T A`` is the least-squares Hessian. With ``lambda > 0``:
    ``(v - A^T (lambda I + A A^T)^{-1} A v) / lambda``; with ``lambda = 0``
    the pseudo-inverse ``A^T K^+ K^+ A v`` (``K = A A^T``), the minimum-norm
    Newton step.
    """

    def __init__(self, loss, lam):
        w = loss.sample_weight / loss.sw_sum
        keep = w > 0
        X = loss.design.X
        self.lam = lam
        self.root = np.sqrt(w[keep])
        self.design = LinearDesign(X[keep] if not np.all(keep) else X, loss.design.offset)
        Xk = self.design.X
        XX = (Xk @ Xk.T).toarray() if self.design.is_sparse else Xk @ Xk.T
        XX = np.asarray(XX, dtype=float)
        o = self.design.offset
        if o is not None:
            Xo = np.asarray(Xk @ o).ravel()
            XX = XX - Xo[:, None] - Xo[None, :] + float(o @ o)
        K = XX * self.root[:, None] * self.root[None, :]
        if lam > 0:
            K[np.diag_indices_from(K)] += lam
        self.inner = _factored(K)

    def _A(self, V):
        return self.design.matvec(V) * self.root[:, None]

    def _At(self, U):
        return self.design.rmatvec(U * self.root[:, None])

    def solve(self, V):
        if self.lam > 0:
            return (V - self._At(self.inner.solve(self._A(V)))) / self.lam
        return self._At(self.inner.solve(self.inner.solve(self._A(V))))


# -- curvature models ----------------------------------------------------------
class _LeastSquaresCurvature:
    """The constant least-squares Hessian, damped and factored once per fit."""

    def __init__(self, loss, route, damping):
        self.loss, self.route = loss, route
        p = loss.n_features
        w = loss.sample_weight / loss.sw_sum
        if route == "dense":
            self.H = loss.hessian()
            diag = np.diag(self.H).copy()
        else:
            self.H = None
            diag = loss.design.column_moments(w)
        self.diag = diag
        self.lam = damping * _damping_scale(float(diag.mean()) if p else 0.0)
        if route == "dense":
            M = self.H.copy()
            M[np.diag_indices_from(M)] += self.lam
            self.solver = _SPDSolver(M)
        elif route == "woodbury":
            self.solver = _WoodburySolver(loss, self.lam)

    def _hv(self, V):
        return self.H @ V if self.H is not None else self.loss.hessp(None, None, V, None)[0]

    def newton(self, GW, gb):
        """``H_lambda^{-1} g``; no intercept variable."""
        if self.route in ("dense", "woodbury"):
            return self.solver.solve(GW), None
        shape = GW.shape
        precond = np.repeat(_inverse_diag(self.diag + self.lam), shape[1])

        def apply(v):
            V = v.reshape(shape)
            return (self._hv(V) + self.lam * V).ravel()

        return _pcg(apply, GW.ravel(), precond).reshape(shape), None

    def correction_rhs(self, W, b, GW, gb):
        """``H_lambda theta_t - g`` over all rows."""
        return self._hv(W) + self.lam * W - GW

    def correct(self, Q, R, W, b):
        """Restricted Newton solve on rows ``Q``: ``(H_lambda)_QQ^{-1} R_Q``."""
        Wn = np.zeros_like(W)
        if Q.size == 0:
            return Wn, b
        if Q.ndim == 2:  # per-output supports: one restricted system per output
            Wn[Q, np.arange(W.shape[1])[:, None]] = self._correct_per_output(Q, R)
            return Wn, b
        if self.H is not None:
            HQQ = self.H[np.ix_(Q, Q)]
        elif Q.size <= _policy.DENSE_MAX_LS:
            HQQ = self.loss.restrict(Q).hessian()
        else:
            HQQ = None
        if HQQ is not None:
            HQQ = HQQ.copy()
            HQQ[np.diag_indices_from(HQQ)] += self.lam
            Wn[Q] = _SPDSolver(HQQ).solve(R[Q])
            return Wn, b
        shape = (Q.size, W.shape[1])
        sub = self.loss.restrict(Q)
        precond = np.repeat(_inverse_diag(self.diag[Q] + self.lam), shape[1])

        def apply(v):
            V = v.reshape(shape)
            return (sub.hessp(None, None, V, None)[0] + self.lam * V).ravel()

        Wn[Q] = _pcg(apply, R[Q].ravel(), precond).reshape(shape)
        return Wn, b

    def _correct_per_output(self, Q, R):
        """``(H_lambda)_{Q_j Q_j}^{-1} R_{Q_j, j}`` for every output ``j`` (``Q`` of shape (m, k)), shape (m, k).

        Batched LU solves of the ``k x k`` blocks, in chunks of outputs
        holding at most ``_policy.PER_OUTPUT_BLOCK_ENTRIES`` entries. The
        halvings of one iteration share ``R``: an output whose support the
        previous call solved with the same ``R`` takes that solution (each
        block is solved on its own: the same values), only the others are
        solved.
        """
        H = self.H if self.H is not None else self.loss.hessian()
        m, k = Q.shape
        out = np.empty((m, k))
        todo = np.arange(m)
        last = getattr(self, "_last_per_output", None)
        if last is not None and last[0] is R and last[1].shape == Q.shape:
            same = np.all(Q == last[1], axis=1)
            out[same] = last[2][same]
            todo = np.flatnonzero(~same)
        eye = self.lam * np.eye(k)
        step = max(1, _policy.PER_OUTPUT_BLOCK_ENTRIES // max(k * k, 1))
        for start in range(0, todo.size, step):
            rows = todo[start:start + step]
            q = Q[rows]
            A = H[q[:, :, None], q[:, None, :]]
            A += eye  # (in place: H[...] + eye was a second array of the chunk's size)
            rhs = R[q, rows[:, None]]
            if self.lam > 0:
                out[rows] = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
            else:  # (damping=0: a block can be singular, e.g. an input never active; pseudo-inverse as elsewhere)
                out[rows] = [_SPDSolver(a).solve(r) for a, r in zip(A, rhs, strict=True)]
            del A  # (freed before the next chunk's gather: both were held at once)
        self._last_per_output = (R, Q.copy(), out)
        return out


class _GLMCache:
    """Per-fit quantities of the logistic / multinomial routes, computed on first use."""

    def __init__(self, loss):
        self.loss = loss
        w = loss.sample_weight / loss.sw_sum
        self.keep = w > 0
        self._G = self._Xk = self._kernel = self._Xc = self._fisher_weights = self._fisher_diagonal = None

    def kernel(self):
        """An ``n x n`` float64 array reused by every iteration's Woodbury kernel (see :class:`_GLMWoodbury`).

        Valid until the next call: each iteration's curvature replaces the previous one's.
        """
        if self._kernel is None:
            self._kernel = np.empty_like(self.G)
            #: whether G equals its transpose exactly (a one-output kernel built from it then does too)
            self.G_symmetric = _exactly_symmetric(self.G)
        return self._kernel

    def fisher_weights(self, m):
        """The expected Hessian's pointwise weights (the sample shares), the same at every iterate: formed once."""
        if self._fisher_weights is None:
            loss = self.loss
            self._fisher_weights = (loss.sample_weight / loss.sw_sum)[:, None, None] * np.eye(m)
        return self._fisher_weights

    def fisher_diagonal(self, p, m):
        """The expected Hessian's diagonal (features, then intercepts), from :meth:`fisher_weights`: formed once.

        The screened start of the 'fisher' route and its full curvature share it (one pass over ``X``).
        """
        if self._fisher_diagonal is None:
            loss = self.loss
            Hd = np.einsum("iaa->ia", self.fisher_weights(m))
            dW = loss.design.column_moments(Hd).reshape(p, m) + loss.alpha
            self._fisher_diagonal = np.concatenate([dW.ravel(), Hd.sum(axis=0)]) if loss.fit_intercept else dW.ravel()
        return self._fisher_diagonal

    def centred_columns(self):
        """``X`` centred as the loss's design, dense float64, constant columns 0; None where not used.

        For the dense Hessian at the iterate of the one-output log-link losses
        (Poisson, Gamma; see :meth:`_GLMCurvature._log_link_hessian`): dense
        in-memory ``X`` of at most ``_policy.IOBS_CENTRED_COPY_MAX`` entries
        (a copy kept for the fit). Formed on first use.
        """
        if self._Xc is None:
            loss = self.loss
            design = loss.design
            usable = (getattr(loss, "iobs_centred_hessian", False) and loss.n_outputs == 1
                      and not getattr(loss, "blockwise", False)
                      and isinstance(design, LinearDesign) and not design.is_sparse
                      and design.shape[0] * design.shape[1] <= _policy.IOBS_CENTRED_COPY_MAX)
            if not usable:
                self._Xc = False
            else:
                Xc = design.dense()
                if Xc is design.X or Xc.dtype != np.float64:  # (no offset: dense() is X itself)
                    Xc = np.array(Xc, dtype=float)
                if design.constant is not None:
                    Xc[:, design.constant] = 0.0
                self._Xc = Xc
        return self._Xc if self._Xc is not False else None

    @property
    def Xk(self):
        """The rows of ``X`` of positive weight."""
        if self._Xk is None:
            X = self.loss.design.X
            self._Xk = X if np.all(self.keep) else X[self.keep]
        return self._Xk

    @property
    def G(self):
        """``X_c X_c^T`` over the samples of positive weight, ``X`` centred as the loss's design (Woodbury kernel)."""
        if self._G is None:
            Xk, o = self.Xk, self.loss.design.offset
            if o is not None and not sp.issparse(Xk):
                Xk = Xk - o  # (a copy of the few rows of this route: no cancellation)
            G = Xk @ Xk.T
            G = np.asarray(G.toarray() if hasattr(G, "toarray") else G, dtype=float)
            if o is not None and sp.issparse(Xk):
                Xo = np.asarray(Xk @ o, dtype=float).ravel()
                G = G - Xo[:, None] - Xo[None, :] + float(o @ o)
            self._G = G
        return self._G


class _GLMWoodbury:
    """``(B^T B + Lambda)^{-1} v`` through an ``(n m) x (n m)`` factorisation.

    The Hessian is ``sum_i J_i^T C_i J_i`` with ``J_i theta = W^T x_i + b``
    and ``C_i`` the pointwise second derivatives times the sample weight; with
    ``C_i = R_i R_i^T`` it is ``B^T B`` (``B`` stacks ``R_i^T J_i``) and
    ``Lambda = diag(alpha + lambda`` on ``W``, ``lambda`` on ``b)``. Since
    ``J_i Lambda^{-1} J_j^T = s_ij I`` with
    ``s = X X^T / (alpha + lambda) + 1 / lambda``, the inner matrix
    ``I + B Lambda^{-1} B^T`` has blocks ``s_ij R_i^T R_j``.
    """

    def __init__(self, curvature, cache, Hw):
        loss = curvature.loss
        n, m = Hw.shape[0], Hw.shape[1]
        if m == 1:
            R = np.sqrt(np.maximum(Hw, 0.0))
        else:
            evals, evecs = np.linalg.eigh(Hw)
            R = evecs * np.sqrt(np.maximum(evals, 0.0))[:, None, :]
        self.R = R
        self.m, self.has_b = m, curvature.has_b
        self.dW = loss.alpha + curvature.lam
        self.db = curvature.lam
        self.design = LinearDesign(cache.Xk, curvature.loss.design.offset, curvature.loss.design.constant)
        shift = 1.0 / self.db if self.has_b else 0.0
        if m == 1:
            # the products of the einsum below, by strips of rows into the fit's buffer (cache.kernel), factored
            # in place: no fresh n x n arrays per iteration, whose first touch (page faults) cost more than
            # the arithmetic at n = 500 (changelog)
            r, K = R[:, 0, 0], cache.kernel()
            for start in range(0, n, _policy.KERNEL_STRIP):
                rows = slice(start, start + _policy.KERNEL_STRIP)
                np.multiply(r[rows, None] * r, cache.G[rows] / self.dW + shift, out=K[rows])
            K[np.diag_indices_from(K)] += 1.0
            # (K_ij = (r_i r_j)(G_ij / dW + shift): exactly symmetric when G is)
            self.inner = _factored(K, symmetric=cache.G_symmetric)
        else:
            s = cache.G / self.dW + shift
            K = np.einsum("iab,jac->ibjc", R, R) * s[:, None, :, None]
            K = K.reshape(n * m, n * m)
            K[np.diag_indices_from(K)] += 1.0
            self.inner = _SPDSolver(K)
        self.curvature = curvature

    def solve(self, v):
        c = self.curvature
        V, b = c.unpack(v, None)
        V = V / self.dW
        b = b / self.db if self.has_b else None
        Zv = self.design.matvec(V) + (b if self.has_b else 0.0)
        u = np.einsum("iab,ia->ib", self.R, Zv).ravel()
        y = self.inner.solve(u).reshape(-1, self.m)
        T = np.einsum("iab,ib->ia", self.R, y)
        V = V - self.design.rmatvec(T) / self.dW
        if self.has_b:
            b = b - T.sum(axis=0) / self.db
        return c.pack(V, b)


def _fisher_algebra(loss, damping):
    """How the 'fisher' route solves with its constant Hessian: 'dense', 'woodbury' or 'cg' (as logistic's 'auto')."""
    n, p, m = loss.n_positive, loss.n_features, loss.n_outputs
    if damping > 0 and n < p + 1 and n * m <= _policy.WOODBURY_MAX_GLM:
        return "woodbury"
    if (p + 1) * m <= _policy.DENSE_MAX_GLM:
        return "dense"
    return "woodbury" if (damping > 0 and n * m <= _policy.WOODBURY_MAX_GLM) else "cg"


def _fisher_hessian(loss):
    """The expected Hessian over ``[W.ravel(), b]`` (undamped): pointwise weights the sample shares.

    As :meth:`_GLMLoss.hessian` with the identity for every pointwise
    second-derivative matrix: one weighted Gram matrix, the same for every
    output, no coupling between outputs.
    """
    p, m, has_b = loss.n_features, loss.n_outputs, bool(loss.fit_intercept)
    w = loss.sample_weight / loss.sw_sum
    q = p + int(has_b)
    block = np.zeros((q, q))
    block[:p, :p] = loss.design.weighted_gram(w)
    if has_b:
        cross = loss.design.rmatvec(w[:, None])[:, 0]  # (0 up to rounding: the columns are centred)
        block[:p, p] = block[p, :p] = cross
        block[p, p] = w.sum()
    H = np.zeros((q, m, q, m))
    for a in range(m):
        H[:, a, :, a] = block
    H = H.reshape(q * m, q * m)
    H[np.arange(p * m), np.arange(p * m)] += loss.alpha
    return H


class _GLMCurvature:
    """The Hessian of a GLM loss at one iterate, over ``[W.ravel(), b]``.

    ``route='fisher'``: the expected Hessian, the same at every iterate (the
    solver builds it once per fit); ``W``, ``b``, ``Z`` are then unused.
    ``route='screened_fisher'``: the expected Hessian's screened step (as
    ``'screened'``: exact on the rows of ``W`` and ``screen_rows`` others).
    """

    def __init__(self, loss, route, damping, W, b, Z, cache, screen_rows=0):
        self.loss, self.route = loss, route
        self.screen_rows = screen_rows
        self.W, self.b = W, b
        p, m = W.shape
        self.p, self.m = p, m
        self.has_b = bool(loss.fit_intercept)
        self.H = self.Hw = None
        self.Z = Z
        if route in ("fisher", "screened_fisher"):
            # the expected Hessian: constant pointwise weights (the sample shares), one curvature per fit
            # ('screened_fisher': its block-diagonal Newton step as 'screened', no n x n kernel)
            self.Hw = cache.fisher_weights(m)
            self.algebra = _fisher_algebra(loss, damping) if route == "fisher" else route
            if self.algebra == "dense":
                H = _fisher_hessian(loss)
                diag = np.diag(H).copy()
            else:
                diag = cache.fisher_diagonal(p, m)
        elif route == "dense" and cache is not None and cache.centred_columns() is not None:
            H = self._log_link_hessian(cache.centred_columns(), Z)
            diag = np.diag(H).copy()
        elif route == "dense":
            H = loss.hessian(W, b)
            diag = np.diag(H).copy()
        elif not getattr(loss, "pointwise", True):  # (Cox: the exact diagonal, by risk-set sums)
            diag = loss.feature_curvatures(Z, np.arange(p)).ravel()
        else:
            # the pointwise second derivatives give the diagonal and restricted blocks
            Hw = loss._hess_weights(Z) * (loss.sample_weight / loss.sw_sum)[:, None, None]
            self.Hw = Hw
            Hd = np.einsum("iaa->ia", Hw)
            dW = loss.design.column_moments(Hd).reshape(p, m) + loss.alpha
            diag = np.concatenate([dW.ravel(), Hd.sum(axis=0)]) if self.has_b else dW.ravel()
        self.diag = diag
        self.lam = damping * _damping_scale(diagonal_mean(diag[: p * m], getattr(loss, "alpha", 0.0)) if p else 0.0)
        self.woodbury = None
        algebra = self.algebra if route == "fisher" else route
        if algebra == "dense":
            H.flat[:: H.shape[0] + 1] += self.lam  # (the diagonal; np.diag_indices_from costs more at p = 100)
            self.H = H
            self.solver = _SPDSolver(H)
        elif route == "woodbury" and not getattr(loss, "pointwise", True):  # (Cox: the n x n Hessian in eta)
            if loss.alpha + self.lam > 0:
                self.woodbury = CoxWoodbury(loss, Z, loss.alpha + self.lam, cache)
        elif algebra == "woodbury" and self.lam > 0:
            self.woodbury = _GLMWoodbury(self, cache, self.Hw[cache.keep])

    def _log_link_hessian(self, Xc, Z):
        """:meth:`loss.hessian` at ``Z`` of a one-output log-link loss from the centred copy ``Xc``, in one product.

        ``Xc^T diag(h) Xc`` as ``A^T A`` with ``A = sqrt(h) Xc``, ``h`` the
        pointwise second derivatives times the sample shares (non-negative),
        with the intercept's row ``Xc^T h`` and corner ``sum(h)``: the blocked
        products of ``weighted_gram`` cost more than this arithmetic at
        ``p = 100`` (doc/changelog.rst). Equal up to rounding.
        """
        loss, p = self.loss, self.p
        h = loss._hess_weights(Z)[:, 0, 0] * (loss.sample_weight / loss.sw_sum)
        A = Xc * np.sqrt(h)[:, None]
        q = p + int(self.has_b)
        H = np.empty((q, q))
        H[:p, :p] = A.T @ A
        if self.has_b:
            cross = Xc.T @ h
            H[:p, p] = cross
            H[p, :p] = cross
            H[p, p] = h.sum()
        if loss.alpha:
            H.flat[: p * (q + 1): q + 1] += loss.alpha
        return H

    def pack(self, W, b):
        return np.concatenate([W.ravel(), b]) if self.has_b else W.ravel()

    def unpack(self, theta, b_default):
        pm = self.p * self.m
        W = theta[:pm].reshape(self.p, self.m)
        return W, (theta[pm:].copy() if self.has_b else b_default)

    def _hv(self, theta):
        """``H_lambda theta`` (matrix-free unless the dense Hessian is formed)."""
        if self.H is not None:
            return self.H @ theta
        V, c = self.unpack(theta, np.zeros(self.m))
        if self.route in ("fisher", "screened_fisher"):  # (the loss's hessp is the observed Hessian at the iterate)
            Zv = self.loss.design.matvec(V) + (c if self.has_b else 0.0)
            U = np.einsum("iab,ib->ia", self.Hw, Zv)
            HV = self.loss.design.rmatvec(U) + self.loss.alpha * V
            return self.pack(HV, U.sum(axis=0)) + self.lam * theta
        HV, Hc = self.loss.hessp(self.W, self.b, V, c)
        return self.pack(HV, Hc) + self.lam * theta

    def _screened_newton(self, GW, gb):
        """The Newton step of the block-diagonal Hessian: exact on the rows ``C`` (and ``b``), diagonal elsewhere.

        ``C`` holds the current non-zero rows and the ``screen_rows`` others
        whose diagonal Newton point ``W - g / (diag H + lambda)`` is largest
        (the rows the top-k selection could take): their Newton point is
        the damped Newton solve restricted to ``C``, which needs ``X[:, C]``
        only, no ``n x n`` or ``p x p`` factorisation.
        """
        p, m = self.p, self.m
        dW = GW * _inverse_diag(self.diag[: p * m].reshape(p, m) + self.lam)
        current = np.any(self.W != 0, axis=1)
        score = np.linalg.norm(self.W - dW, axis=1) if m > 1 else np.abs(self.W[:, 0] - dW[:, 0])
        score[current] = -np.inf
        free = p - int(current.sum())
        extra = min(self.screen_rows, free)
        if extra > 0:
            top = np.argpartition(score, p - extra)[p - extra:] if extra < p else np.arange(p)
            chosen = current.copy()  # (the sorted union of the two index sets, without np.union1d's sort)
            chosen[top] = True
            rows = np.flatnonzero(chosen)
        else:
            rows = np.flatnonzero(current)
        idx = self._indices(rows)
        x = _SPDSolver(self._restricted_hessian(rows)).solve(self.pack(GW, gb)[idx])
        dW[rows] = x[: rows.size * m].reshape(rows.size, m)
        return dW, (x[rows.size * m:].copy() if self.has_b else None)

    def newton(self, GW, gb):
        if self.route in ("screened", "screened_fisher"):
            return self._screened_newton(GW, gb)
        g = self.pack(GW, gb)
        if self.H is not None:
            d = self.solver.solve(g)
        elif self.woodbury is not None:
            d = self.woodbury.solve(g)
        else:
            d = _pcg(self._hv, g, _inverse_diag(self.diag + self.lam))
        dW, db = self.unpack(d, None)
        return dW, db

    def correction_rhs(self, W, b, GW, gb):
        return self._hv(self.pack(W, b)) - self.pack(GW, gb)

    def _indices(self, Q):
        m = self.m
        idx = (Q[:, None] * m + np.arange(m)).ravel()
        if self.has_b:
            idx = np.concatenate([idx, self.p * m + np.arange(m)])
        return idx

    def _restricted_hessian(self, Q):
        """The damped Hessian at theta_t on the rows ``Q`` (and ``b``), from ``X[:, Q]``."""
        if self.Hw is None:  # (a loss without pointwise weights: its own block at the iterate)
            H = self.loss.hessian_block(self.Z, Q)
            H[np.diag_indices_from(H)] += self.lam
            return H
        XQ = self.loss.design.columns(Q).dense()
        k, m, Hw = Q.size, self.m, self.Hw
        km = k * m
        # (one array with the intercept's rows and columns, its diagonal a strided view: np.block and
        # np.diag_indices_from cost more than the arithmetic on these small blocks; the same sums)
        H = np.empty((km + m, km + m) if self.has_b else (km, km))
        for a in range(m):  # (rows and columns q * m + a of output a)
            for c in range(a, m):
                G = XQ.T @ (Hw[:, a, c][:, None] * XQ)
                H[a:km:m, c:km:m] = G
                H[c:km:m, a:km:m] = G.T
        H.flat[: km * (H.shape[0] + 1): H.shape[0] + 1] += self.loss.alpha
        if self.has_b:
            cross = np.einsum("ij,iac->jac", XQ, Hw).reshape(km, m)
            H[:km, km:] = cross
            H[km:, :km] = cross.T
            H[km:, km:] = Hw.sum(axis=0)
        H.flat[:: H.shape[0] + 1] += self.lam
        return H

    def correct(self, Q, R, W, b):
        idx = self._indices(Q)
        if self.H is not None:
            x = _SPDSolver(self.H[np.ix_(idx, idx)]).solve(R[idx])
        elif idx.size <= _policy.DENSE_MAX_GLM:
            x = _SPDSolver(self._restricted_hessian(Q)).solve(R[idx])
        else:
            q = self.pack(W, b).size

            def apply(v):
                full = np.zeros(q)
                full[idx] = v
                return self._hv(full)[idx]

            x = _pcg(apply, R[idx], _inverse_diag(self.diag[idx] + self.lam))
        theta = np.zeros(self.pack(W, b).size)
        theta[idx] = x
        return self.unpack(theta, b)
