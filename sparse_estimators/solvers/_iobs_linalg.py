"""Dense linear algebra of I-OBS's curvature models (``solvers/_iobs_curvature.py``).

Solves with a symmetric positive semi-definite matrix factored once
(Cholesky, or the pseudo-inverse when singular), in place when the caller's
matrix is exactly symmetric; Jacobi-preconditioned conjugate gradient; the
damping's scale.
"""

import numpy as np
import scipy.linalg

from .. import _policy

_potrf, _potrs = scipy.linalg.lapack.dpotrf, scipy.linalg.lapack.dpotrs


def _exactly_symmetric(M, strip=64):
    """Whether the square ``M`` equals its transpose exactly, compared by strips.

    (``np.array_equal(M, M.T)`` reads ``M.T`` across rows: ten times slower at n = 500.)
    """
    n = M.shape[0]
    for i in range(0, n, strip):
        if not np.array_equal(M[i:i + strip, i:], M[i:, i:i + strip].T):
            return False
    return True


def _factored(M, symmetric=None):
    """``_SPDSolver(M)`` for a matrix ``M`` built for it (it may be overwritten).

    ``symmetric``: whether ``M`` equals its transpose exactly, when the caller
    knows (None: compared here).
    """
    large = M.shape[0] >= _policy.IN_PLACE_MIN and M.dtype == np.float64 and M.flags.c_contiguous
    if large and symmetric is None:
        symmetric = _exactly_symmetric(M)
    return _SPDSolver(M, symmetric=large and symmetric)


class _SPDSolver:
    """Solve with a symmetric positive semi-definite matrix, factored once.

    Cholesky; when the matrix is singular to working precision (a pivot below
    ``1e-12`` of the largest diagonal entry, e.g. ``damping=0`` with
    ``n < p``), the pseudo-inverse from an eigendecomposition instead, i.e.
    the minimum-norm solution. ``symmetric``: ``M`` (C-contiguous float64)
    equals its transpose exactly and may be overwritten (see :func:`_factored`).
    """

    def __init__(self, M, symmetric=False):
        self.chol = None
        self.size = M.shape[0]
        if self.size == 0:
            return
        top = float(M.diagonal().max())
        diagonal = None
        # cho_factor's LAPACK call (the same factor) without its wrapper's checks: I-OBS factors a few
        # small matrices per iteration, where the wrapper cost as much as the factorisation
        if M.dtype == np.float64 and symmetric and M.flags.c_contiguous:
            # (an exactly symmetric M of the caller's, which may be overwritten: M.T is the same matrix in
            # Fortran order, so LAPACK factors it in place, without its C-to-Fortran copy, a fresh n x n array)
            diagonal = np.diag(M).copy()
            c, info = _potrf(M.T, lower=True, clean=False, overwrite_a=True)
        elif M.dtype == np.float64:
            c, info = _potrf(M, lower=True, clean=False)
        else:
            try:
                c, info = scipy.linalg.cho_factor(M, lower=True, check_finite=False)[0], 0
            except (np.linalg.LinAlgError, ValueError):
                c, info = None, 1
        if info == 0:
            pivots = c.diagonal()
            if np.all(np.isfinite(pivots)) and top > 0 and float(np.min(pivots)) ** 2 > 1e-12 * top:
                self.chol = c
        if self.chol is None:
            if diagonal is not None:  # (the factorisation overwrote M's upper triangle and diagonal: restore them)
                lower = np.tril(M, -1)
                M = lower + lower.T
                M[np.diag_indices_from(M)] = diagonal
            w, V = scipy.linalg.eigh(M)
            cutoff = max(float(w[-1]), 0.0) * self.size * np.finfo(float).eps
            self.V = V
            self.winv = np.where(w > cutoff, 1.0 / np.where(w > cutoff, w, 1.0), 0.0)

    def solve(self, v):
        if self.size == 0:
            return np.zeros_like(v)
        if self.chol is not None:
            if self.chol.dtype != np.float64:
                return scipy.linalg.cho_solve((self.chol, True), v, check_finite=False)
            return _potrs(self.chol, v, lower=True)[0]  # (cho_solve's LAPACK call)
        coef = self.V.T @ v
        return self.V @ (self.winv.reshape((-1,) + (1,) * (coef.ndim - 1)) * coef)


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
    for _ in range(min(_policy.IOBS_CG_MAX_ITER, 2 * rhs.size + 10)):
        Ad = apply(d)
        dAd = float(d @ Ad)
        if dAd <= 0 or not np.isfinite(dAd):
            break
        a = rz / dAd
        x += a * d
        r -= a * Ad
        if np.linalg.norm(r) <= _policy.IOBS_CG_RTOL * bnorm:
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
