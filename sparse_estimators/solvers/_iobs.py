"""Iterative Optimal Brain Surgeon (Wu et al., *The Iterative Optimal Brain Surgeon*).

Each iteration takes a damped Newton step, keeps the ``k`` rows of largest
magnitude of the Newton point (top-k I-OBS, eq. 12) and, with the OBS
correction, replaces the kept values by the restricted Newton solve on that
support (eq. 23): a projection in the Hessian norm instead of the Euclidean
one.

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
* any loss: matrix-free Jacobi-preconditioned conjugate gradient on
  Hessian-vector products (``'cg'``), for data too wide for a dense matrix.
"""

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..losses import LinearDesign
from ..structures import get_structure
from ._base import IterationMonitor, backtracking_step, initial_step, project
from ._cox_newton import CoxWoodbury

__all__ = ["iobs", "select_hessian_route", "DENSE_MAX_LS", "DENSE_MAX_GLM", "WOODBURY_MAX_GLM"]

#: largest side of a dense matrix factored for least squares (p x p for
#: Cholesky, n x n for Woodbury): 4096^2 doubles = 128 MiB
DENSE_MAX_LS = 4096
#: largest number of packed variables ``(p + 1) * m`` for which a
#: logistic / multinomial Hessian is formed densely at every iteration
DENSE_MAX_GLM = 1024
#: largest ``n * m`` for which a logistic / multinomial Hessian is inverted by
#: Woodbury (an ``(n m) x (n m)`` Cholesky factorisation per iteration)
WOODBURY_MAX_GLM = 2048
#: relative residual at which the conjugate gradient stops
CG_RTOL = 1e-10
#: maximum number of conjugate-gradient iterations per solve
CG_MAX_ITER = 1000
#: halvings of the Newton step tried before a safeguard step
MAX_HALVINGS = 30

HESSIAN_ROUTES = ("auto", "dense", "woodbury", "cg")


def select_hessian_route(loss, hessian="auto", damping=1e-2):
    """The linear-algebra route used by :func:`iobs` for ``loss``.

    Parameters
    ----------
    loss : BaseLoss
        The loss to minimise.
    hessian : {'auto', 'dense', 'woodbury', 'cg'}, default='auto'
        'auto' picks, with ``n`` the number of samples of positive weight,
        ``p`` features and ``m`` outputs:

        * least squares: 'dense' (Cholesky of the ``p x p`` Hessian) when
          ``n >= p`` and ``p <= DENSE_MAX_LS``; 'woodbury' (Cholesky of an
          ``n x n`` matrix) when ``n < p`` and ``n <= DENSE_MAX_LS``; 'cg'
          otherwise;
        * logistic / multinomial: 'woodbury' (an ``(n m) x (n m)``
          factorisation per iteration) when ``n < p + 1``,
          ``n m <= WOODBURY_MAX_GLM`` and ``damping > 0`` (cheaper than
          re-forming the ``(p + 1) m`` square Hessian every iteration); else
          'dense' when ``(p + 1) m <= DENSE_MAX_GLM``; else 'woodbury' under
          the same size and damping conditions; else 'cg'.

        * a loss whose curvature is not pointwise (``loss.pointwise`` False:
          the Cox partial likelihood): 'woodbury' (an ``n x n`` factorisation
          per iteration through the Hessian in the linear predictor, see
          :mod:`~sparse_estimators.solvers._cox_newton`) when ``n < p``,
          ``n m <= WOODBURY_MAX_GLM`` and ``damping > 0``; else 'dense' when
          ``p m <= DENSE_MAX_GLM``; else 'cg'.

        Any other value is returned as is.
    damping : float, default=1e-2
        The Woodbury form of a logistic / multinomial Hessian needs a damped
        (invertible) diagonal; with ``damping=0`` its Newton solves use CG.

    Returns
    -------
    str
        One of 'dense', 'woodbury', 'cg'.

    Raises
    ------
    ValueError
        On an unknown route.
    """
    if not (isinstance(hessian, str) and hessian in HESSIAN_ROUTES):
        raise ValueError(f"The 'hessian' parameter must be one of {HESSIAN_ROUTES}, got {hessian!r}.")
    p, m = loss.n_features, loss.n_outputs
    if not getattr(loss, "pointwise", True):  # (Cox: Woodbury through the n x n Hessian in eta)
        if hessian != "auto":
            return hessian
        if damping > 0 and loss.n_positive < p and loss.n_positive * m <= WOODBURY_MAX_GLM:
            return "woodbury"
        return "dense" if p * m <= DENSE_MAX_GLM else "cg"
    if hessian != "auto":
        return hessian
    n = loss.n_positive
    if not loss.intercept_is_variable:
        if n >= p:
            return "dense" if p <= DENSE_MAX_LS else "cg"
        return "woodbury" if n <= DENSE_MAX_LS else "cg"
    if damping > 0 and n < p + 1 and n * m <= WOODBURY_MAX_GLM:
        return "woodbury"  # wide data: an (n m)-sized factorisation beats re-forming (p m)^2
    if (p + 1) * m <= DENSE_MAX_GLM:
        return "dense"
    return "woodbury" if (damping > 0 and n * m <= WOODBURY_MAX_GLM) else "cg"


# -- linear algebra -------------------------------------------------------------
class _SPDSolver:
    """Solve with a symmetric positive semi-definite matrix, factored once.

    Cholesky; when the matrix is singular to working precision (a pivot below
    ``1e-12`` of the largest diagonal entry, e.g. ``damping=0`` with
    ``n < p``), the pseudo-inverse from an eigendecomposition instead, i.e.
    the minimum-norm solution.
    """

    def __init__(self, M):
        self.chol = None
        self.size = M.shape[0]
        if self.size == 0:
            return
        top = float(np.max(np.diag(M)))
        try:
            c = scipy.linalg.cho_factor(M, lower=True, check_finite=False)
            pivots = np.diag(c[0])
            if np.all(np.isfinite(pivots)) and top > 0 and float(np.min(pivots)) ** 2 > 1e-12 * top:
                self.chol = c
        except (np.linalg.LinAlgError, ValueError):
            pass
        if self.chol is None:
            w, V = scipy.linalg.eigh(M)
            cutoff = max(float(w[-1]), 0.0) * self.size * np.finfo(float).eps
            self.V = V
            self.winv = np.where(w > cutoff, 1.0 / np.where(w > cutoff, w, 1.0), 0.0)

    def solve(self, v):
        if self.size == 0:
            return np.zeros_like(v)
        if self.chol is not None:
            return scipy.linalg.cho_solve(self.chol, v, check_finite=False)
        coef = self.V.T @ v
        return self.V @ (self.winv.reshape((-1,) + (1,) * (coef.ndim - 1)) * coef)


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
        self.inner = _SPDSolver(K)

    def _A(self, V):
        return self.design.matvec(V) * self.root[:, None]

    def _At(self, U):
        return self.design.rmatvec(U * self.root[:, None])

    def solve(self, V):
        if self.lam > 0:
            return (V - self._At(self.inner.solve(self._A(V)))) / self.lam
        return self._At(self.inner.solve(self.inner.solve(self._A(V))))


def _pcg(apply, rhs, precond):
    """Jacobi-preconditioned conjugate gradient for ``apply(x) = rhs`` (1-D)."""
    x = np.zeros_like(rhs)
    bnorm = np.linalg.norm(rhs)
    if bnorm == 0 or not np.isfinite(bnorm):
        return x
    r = rhs.copy()
    z = precond * r
    d = z.copy()
    rz = float(r @ z)
    for _ in range(min(CG_MAX_ITER, 2 * rhs.size + 10)):
        Ad = apply(d)
        dAd = float(d @ Ad)
        if dAd <= 0 or not np.isfinite(dAd):
            break
        a = rz / dAd
        x += a * d
        r -= a * Ad
        if np.linalg.norm(r) <= CG_RTOL * bnorm:
            break
        z = precond * r
        rz_new = float(r @ z)
        d = z + (rz_new / rz) * d
        rz = rz_new
    return x


def _inverse_diag(diag):
    return np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 1.0)


def _damping_scale(diag_mean):
    """Mean of diag(H), or 1 when the Hessian vanishes (constant features)."""
    return diag_mean if np.isfinite(diag_mean) and diag_mean > 0 else 1.0


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
        elif Q.size <= DENSE_MAX_LS:
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
        holding at most ``DENSE_MAX_LS^2`` entries.
        """
        H = self.H if self.H is not None else self.loss.hessian()
        m, k = Q.shape
        out = np.empty((m, k))
        eye = self.lam * np.eye(k)
        step = max(1, DENSE_MAX_LS**2 // max(k * k, 1))
        for start in range(0, m, step):
            q = Q[start:start + step]
            A = H[q[:, :, None], q[:, None, :]] + eye
            rhs = R[q, np.arange(start, start + q.shape[0])[:, None]]
            if self.lam > 0:
                out[start:start + step] = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
            else:  # (damping=0: a block can be singular, e.g. an input never active; pseudo-inverse as elsewhere)
                out[start:start + step] = [_SPDSolver(a).solve(r) for a, r in zip(A, rhs, strict=True)]
        return out


class _GLMCache:
    """Per-fit quantities of the logistic / multinomial routes, computed on first use."""

    def __init__(self, loss):
        self.loss = loss
        w = loss.sample_weight / loss.sw_sum
        self.keep = w > 0
        self._G = self._Xk = None

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
        s = cache.G / self.dW + (1.0 / self.db if self.has_b else 0.0)
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


class _GLMCurvature:
    """The logistic / multinomial Hessian at one iterate, over ``[W.ravel(), b]``."""

    def __init__(self, loss, route, damping, W, b, Z, cache):
        self.loss, self.route = loss, route
        self.W, self.b = W, b
        p, m = W.shape
        self.p, self.m = p, m
        self.has_b = bool(loss.fit_intercept)
        self.H = self.Hw = None
        self.Z = Z
        if route == "dense":
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
        self.lam = damping * _damping_scale(float(diag[: p * m].mean()) if p else 0.0)
        self.woodbury = None
        if route == "dense":
            H[np.diag_indices_from(H)] += self.lam
            self.H = H
            self.solver = _SPDSolver(H)
        elif route == "woodbury" and not getattr(loss, "pointwise", True):  # (Cox: the n x n Hessian in eta)
            if loss.alpha + self.lam > 0:
                self.woodbury = CoxWoodbury(loss, Z, loss.alpha + self.lam, cache)
        elif route == "woodbury" and self.lam > 0:
            self.woodbury = _GLMWoodbury(self, cache, self.Hw[cache.keep])

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
        HV, Hc = self.loss.hessp(self.W, self.b, V, c)
        return self.pack(HV, Hc) + self.lam * theta

    def newton(self, GW, gb):
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
        block = np.empty((k, m, k, m))
        for a in range(m):
            for c in range(a, m):
                G = XQ.T @ (Hw[:, a, c][:, None] * XQ)
                block[:, a, :, c] = G
                block[:, c, :, a] = G.T
        H = block.reshape(k * m, k * m)
        H[np.diag_indices_from(H)] += self.loss.alpha
        if self.has_b:
            cross = np.einsum("ij,iac->jac", XQ, Hw).reshape(k * m, m)
            H = np.block([[H, cross], [cross.T, Hw.sum(axis=0)]])
        H[np.diag_indices_from(H)] += self.lam
        return H

    def correct(self, Q, R, W, b):
        idx = self._indices(Q)
        if self.H is not None:
            x = _SPDSolver(self.H[np.ix_(idx, idx)]).solve(R[idx])
        elif idx.size <= DENSE_MAX_GLM:
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


# -- the solver -----------------------------------------------------------------
def _covers(Q, current):
    """Whether the support ``Q`` holds the current non-zeros (rows; or, per output, a mask)."""
    if Q.ndim == 1:
        return bool(np.all(np.isin(current, Q)))
    return not np.any(current & ~_per_output_mask(Q, current.shape))


def _per_output_mask(Q, shape):
    out = np.zeros(shape, dtype=bool)
    out[Q, np.arange(shape[1])[:, None]] = True
    return out


def iobs(loss, operator, k, *, W0, b0, step_size="auto", max_iter=100, tol=1e-4, verbose=0,
         damping=1e-2, correction=True, hessian="auto"):
    """Iterative Optimal Brain Surgeon: top-k on the damped Newton point plus the OBS correction.

    At ``theta_t`` with gradient ``g`` and Hessian ``H`` (mean loss, l2 term
    included), with ``H_lambda = H + lambda I`` and
    ``lambda = damping * mean(diag H)`` (the mean over the coefficient
    entries; the damping is added to the intercept's diagonal too):

    1. Newton point ``theta+ = theta_t - s H_lambda^{-1} g`` (``s`` from
       ``step_size``);
    2. ``Q`` = the ``k`` rows of ``W+`` of largest norm (the operator's
       support), and ``W_{t+1} = P_k(W+)`` (top-k I-OBS, eq. 12);
    3. with ``correction`` (default), the OBS correction (eq. 23): the
       restricted Newton solve on ``Q``,
       ``theta_Q = (H_lambda)_QQ^{-1} (H_lambda theta_t - g)_Q``, zero
       elsewhere. For least squares this minimises
       ``f(theta) + lambda/2 ||theta - theta_t||^2`` over the vectors supported
       on ``Q`` (the least-squares refit on ``Q`` when ``damping=0`` and
       ``H_QQ`` is invertible).

    The intercept of logistic / multinomial losses is a variable of the
    Newton step and of the correction, never thresholded; that of least
    squares is eliminated by centering.

    Safeguard (beyond the paper): an iteration may not increase the
    objective. The Newton fraction is halved (which moves the selection
    point towards ``theta_t``) up to ``MAX_HALVINGS`` times; with the
    correction, if ``Q`` contains the current support, the segment from
    ``theta_t`` to the corrected point is then searched by halving; as a last
    resort one projected-gradient step with backtracking (as in
    :func:`~sparse_estimators.solvers.iht`) is taken. With hard thresholding
    (or the correction) the objective therefore never increases and the
    iteration cannot diverge.

    ``damping -> infinity`` recovers IHT with step ``1/lambda``;
    ``damping = 0`` with an exact, invertible Hessian is Newton's method
    (least squares with ``n >= p``: the first Newton point is the OLS fit).

    Parameters
    ----------
    loss : BaseLoss
        The smooth loss (see :mod:`sparse_estimators.losses`).
    operator : ThresholdingOperator or Structure
        ``P_k``, applied through a structure; a plain operator thresholds the
        rows of the coefficient matrix (:class:`~sparse_estimators.structures.Rows`). With the
        correction only its support (the top-k rows, the same for every
        operator) is used, since the restricted solve sets the kept values;
        without it, non-hard operators shrink the Newton point.
    k : int
        Sparsity level.
    W0, b0 : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
        Starting point (thresholded first; the intercept never is).
    step_size : 'auto' or float, default='auto'
        The fraction ``s`` of the Newton step: 'auto' is the full step
        ``s = 1``; a float is that fraction. In both cases it is halved when
        the iteration would increase the objective. With the correction the
        fraction only moves the point on which the support is selected.
    max_iter : int, default=100
        Maximum number of iterations (one Hessian solve each).
    tol : float, default=1e-4
        Stop when the support is unchanged and the relative change of the
        iterate is at most ``tol``.
    verbose : int, default=0
        ``>= 2`` prints the route and one line per iteration.
    damping : float, default=1e-2
        ``lambda / mean(diag H)`` (SparseGPT's 1 % dampening). Must be >= 0.
        At 0 a singular Hessian is handled by its pseudo-inverse.
    correction : bool, default=True
        Apply the OBS correction (restricted Newton solve on the support).
    hessian : {'auto', 'dense', 'woodbury', 'cg'}, default='auto'
        Linear-algebra route, see :func:`select_hessian_route` (with
        ``damping=0`` a logistic / multinomial "woodbury" falls back to CG).

    Returns
    -------
    SolverResult
        ``step_size`` is the last accepted Newton fraction ``s``. For non-hard
        operators without the correction, the iterate of lowest objective.
    """
    if not (np.isfinite(damping) and damping >= 0):
        raise ValueError(f"The 'damping' parameter must be a finite number >= 0, got {damping!r}.")
    route = select_hessian_route(loss, hessian, damping)
    least_squares = not loss.intercept_is_variable
    s0 = 1.0 if (isinstance(step_size, str) and step_size == "auto") else float(step_size)
    if verbose >= 2:
        print(f"[IOBS] hessian route: {route}")
    operator = get_structure(operator)  # (a plain operator thresholds rows)
    W, b = project(operator, k, W0)[0], np.asarray(b0, dtype=float).copy()
    Z = loss.linear_predictor(W, b)
    f = loss.value_from_z(Z, W)
    monitor = IterationMonitor(f, W, b, tol=tol, keep_best=not (operator.is_hard or correction),
                               verbose=verbose, name="IOBS")
    support = operator.support(W, k)
    curvature = _LeastSquaresCurvature(loss, route, damping) if least_squares else None
    cache = None if least_squares else _GLMCache(loss)
    eta = L = None
    s = s_used = s0
    it = 0
    for it in range(1, max_iter + 1):
        GW, gb = loss.gradient_from_z(Z, W)
        if not least_squares:
            curvature = _GLMCurvature(loss, route, damping, W, b, Z, cache)
        dW, db = curvature.newton(GW, gb)
        R = curvature.correction_rhs(W, b, GW, gb) if correction else None
        current = np.flatnonzero(np.any(W != 0, axis=1)) if support.ndim == 1 else W != 0
        slack = 1e-12 * abs(f)
        accepted = None
        tried = set()
        segment = None
        for h in range(MAX_HALVINGS):
            s = s0 * 0.5**h
            Wp, Q = project(operator, k, W - s * dW)
            if correction:
                key = Q.tobytes()
                if key in tried:
                    continue
                tried.add(key)
                Wc, bc = curvature.correct(Q, R, W, b)
                if segment is None and _covers(Q, current):
                    segment = (Wc, bc, Q)
            else:
                Wc, bc = Wp, (b if db is None else b - s * db)
            Zc = loss.linear_predictor(Wc, bc)
            fc = loss.value_from_z(Zc, Wc)
            if fc <= f + slack:
                accepted = (Wc, bc, Zc, fc, Q)
                s_used = s
                break
        if accepted is None and segment is not None:
            Wc, bc, Q = segment
            for h in range(1, MAX_HALVINGS + 1):
                a = 0.5**h
                Wa, ba = W + a * (Wc - W), b + a * (bc - b)
                Za = loss.linear_predictor(Wa, ba)
                fa = loss.value_from_z(Za, Wa)
                if fa <= f + slack:
                    accepted = (Wa, ba, Za, fa, Q)
                    break
        if accepted is None:
            if verbose >= 2:
                print(f"[IOBS] iter {it:4d}  Newton step rejected: projected-gradient step")
            if eta is None:
                eta, L = initial_step(loss, "auto")
            *accepted, _, eta = backtracking_step(loss, operator, k, W, b, f, GW, gb, eta, L, Z)
        Wn, bn, Zn, fn, Qn = accepted
        stop = monitor.update(it, W, b, Wn, bn, fn, np.asarray(Qn))
        if monitor.diverged:
            break
        W, b, Z, f, support = Wn, bn, Zn, fn, Qn
        if stop:
            break
    return monitor.result(W, b, support, it, s_used)
