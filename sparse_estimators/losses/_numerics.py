"""The losses' numerical kernels: the largest eigenvalue (smoothness estimates), Newton solves, Newton's method."""

import math
import threading

import numpy as np
import scipy.linalg
from scipy.linalg.lapack import dpotrs as _potrs
from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

from .. import _policy


class LinearPredictorRangeError(ValueError):
    """The loss cannot be evaluated at these coefficients: their linear predictor leaves floating-point range.

    A ValueError for the user (the Cox loss raises it); the Cox loss's Newton refit and the I-OBS solver catch
    it at their trial points (a step too long from a start where the likelihood is flat), which they treat
    as points of infinite value (:func:`newton_minimise`: a shorter step).
    """


def power_iteration(apply, n, *, max_iter=300, tol=1e-7, seed=0):
    """Largest eigenvalue of a symmetric positive semi-definite operator.

    Parameters
    ----------
    apply : callable
        ``v -> A v`` for ``v`` of shape (n,).
    n : int
        Dimension.
    max_iter, tol : int, float
        Stop when the Rayleigh quotient changes by less than ``tol`` (relative).
    seed : int
        Seed of the (fixed, hence deterministic) starting vector.

    Returns
    -------
    float
        The estimate, inflated by ``tol`` relative so that ``1 / L`` stays a
        safe step despite the iteration approaching from below.
    """
    if n == 0:
        return 0.0
    v = np.random.RandomState(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    lam = 0.0
    for _ in range(max_iter):
        Av = apply(v)
        new = float(v @ Av)
        norm = np.linalg.norm(Av)
        if norm == 0.0:
            return 0.0
        v = Av / norm
        if abs(new - lam) <= tol * abs(new):
            lam = new
            break
        lam = new
    return lam * (1.0 + 10 * tol)


def largest_eigenvalue(apply, n, *, tol=1e-6, seed=0):
    """Largest eigenvalue of a symmetric positive semi-definite operator, by Lanczos.

    Lanczos (ARPACK's ``eigsh``) is power iteration accelerated on its Krylov
    subspace: on a 500 x 1000 Gaussian design it needed 51 operator products
    where :func:`power_iteration` needed 282 for the same accuracy. The
    starting vector is fixed (deterministic); tiny operators are formed
    densely.

    Parameters
    ----------
    apply : callable
        ``v -> A v`` for ``v`` of shape (n,).
    n : int
        Dimension.
    tol : float
        Relative accuracy asked of ARPACK.
    seed : int
        Seed of the starting vector.

    Returns
    -------
    float
        The estimate inflated by ``10 * tol`` relative (Ritz values approach
        from below, and ``1 / L`` must stay a safe step).
    """
    if n == 0:
        return 0.0
    if n <= 16:
        A = np.column_stack([apply(e) for e in np.eye(n)])
        return float(np.linalg.eigvalsh(0.5 * (A + A.T))[-1]) * (1.0 + 10 * tol)
    op = LinearOperator((n, n), matvec=apply, dtype=float)
    v0 = np.random.RandomState(seed).standard_normal(n)
    try:
        lam = eigsh(op, k=1, which="LA", v0=v0, tol=tol, return_eigenvectors=False)[0]
    except ArpackError:  # no convergence, or A v0 = 0 (an all-zero design): the plain iteration handles both
        return power_iteration(apply, n, seed=seed)
    return float(max(lam, 0.0)) * (1.0 + 10 * tol)


def diagonal_mean(diag, alpha=0.0):
    """``diag.mean()``, also when an l2 term ``alpha`` in each entry (near 1e307) takes their sum past float range."""
    if float(alpha) * diag.size < 1e300:  # (a Python float product: inf without a warning)
        return float(diag.mean())
    return float((diag / diag.size).sum())  # (each term at most 1.8e308 / size)


#: minimum-norm or orthogonal solves so far, in any thread (see :func:`note_collinear`)
_collinear_solves = 0
_collinear_lock = threading.Lock()


def note_collinear():
    """Count a refit's solve that did not rule out collinear columns (a Cholesky pivot test failed, or none ran).

    The splicing search of the regressors looks for redundant selected
    features (a duplicated or rescaled column) only after such a solve
    (``splice``'s ``redundant_first='collinear'``): every refit on a support
    holding both copies of a column makes one (its Cholesky pivot test
    fails), refits on supports whose columns are not nearly collinear none,
    so that the check costs their fits nothing. Where the minimum-norm
    solve is the loss's own (Newton steps on a scipy.sparse ``X``, the
    multinomial loss) every refit counts, and the search always looks.
    """
    global _collinear_solves
    with _collinear_lock:  # (an increment from two threads at once is not lost)
        _collinear_solves += 1


def collinear_count():
    """The number of :func:`note_collinear` calls so far (only ever grows)."""
    return _collinear_solves


def row_logsumexp(Z):
    """``scipy.special.logsumexp(Z, axis=1)`` for a real 2-d ``Z``, to the last bit, at a third of its time.

    scipy's steps (1.15 and later): the row maximum ``a``, the ``c`` entries
    equal to it set aside, ``s`` the sum of the others' ``exp(z - a)``, and
    ``log1p(s / c) + log(c) + a``; a row whose result is not finite takes
    ``log(sum(exp(z)))``. scipy also forms that second sum for every row and
    goes through the array-API layer: 0.67 ms against 0.22 at 1797 x 10, a
    quarter of a multinomial fit's time.
    """
    top = Z.max(axis=1, keepdims=True)
    ties = Z == top
    count = ties.sum(axis=1, keepdims=True, dtype=Z.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        E = Z - top
        E[ties] = -np.inf
        np.exp(E, out=E)
        s = E.sum(axis=1, keepdims=True, dtype=E.dtype)
        s = np.where(s == 0, s, s / count)
        out = (np.log1p(s) + np.log(count) + top)[:, 0]
    bad = ~np.isfinite(out)
    if bad.any():  # (an infinite or NaN entry: scipy's direct sum, on those rows)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            out[bad] = np.log(np.exp(Z[bad]).sum(axis=1))
    return out


def min_norm_solve(H, g):
    """Minimum-norm solution of ``H x = g`` (``H`` symmetric, possibly singular).

    Singular values below ``max(H.shape) * eps`` times the largest are cut
    (the relative cut-off of ``LinearRegression`` and ``numpy.linalg.pinv``):
    with LAPACK's default of ``eps`` a null direction whose computed singular
    value came out at ``4e-16`` was kept, and the solution moved along it by
    ``g``'s rounding over that value, by an amount that depended on the CPU's
    BLAS kernel.
    """
    note_collinear()
    cond = max(H.shape) * np.finfo(float).eps
    return scipy.linalg.lstsq(H, g, cond=cond, lapack_driver="gelsd", check_finite=False)[0]


def well_conditioned_cholesky(G, rtol):
    """Lower Cholesky factor of the symmetric ``G``, or None when it is (nearly) singular.

    None when the factorisation fails or a pivot ``L_jj^2`` is at most
    ``rtol`` times its diagonal entry ``G_jj`` (the part of column ``j`` not
    explained by the columns before it): callers then fall back to a
    minimum-norm or orthogonal solve.
    """
    try:
        L = np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        return None
    return L if (L.diagonal() ** 2 > rtol * G.diagonal()).all() else None


def cholesky_newton_solve(H, g):
    """``H^{-1} g`` by Cholesky, or the minimum-norm solution when a pivot is below ``1e-10`` of its diagonal.

    The Newton steps of the refits: a loss's Hessian on a support is positive
    definite unless its columns are (nearly) collinear (or the classes
    separate), and the Cholesky solve is far cheaper than the SVD-based
    minimum-norm one it falls back to.
    """
    L = well_conditioned_cholesky(H, 1e-10)
    if L is None:
        return min_norm_solve(H, g)
    if not g.size:
        return scipy.linalg.cho_solve((L, True), g, check_finite=False)
    # the LAPACK call of scipy.linalg.cho_solve without its checks (15-30 us per Newton step of a refit)
    x, info = _potrs(L, g, lower=1)
    if info:
        raise ValueError(f"illegal value in argument {-info} of LAPACK potrs")
    return x


def _norm(x):
    """``np.linalg.norm`` of a 1-D float vector, computed as it does (``sqrt(x.dot(x))``) without its overhead."""
    return math.sqrt(float(x.dot(x)))


def newton_minimise(fun, hessian, theta, *, max_iter=100, solve=min_norm_solve, precise=True, value_unit=1.0,
                    coef_unit=1.0, flat_hessian=None, limit=None, value_origin=0.0):
    """Minimise a smooth convex function by Newton's method, to rounding error.

    Newton steps with an Armijo backtracking line search, iterated until the
    step is at the level of rounding error in ``theta``, so that equivalent
    problems (sample weights versus repeated rows) give equal solutions.

    Parameters
    ----------
    fun : callable
        ``fun(theta) -> (value, gradient)``.
    hessian : callable
        ``hessian(theta) -> H``, the dense Hessian; called only at the point
        where ``fun`` was last evaluated (so it may reuse that evaluation).
    theta : ndarray of shape (d,)
        Starting point.
    max_iter : int, default=100
        Largest number of Newton steps.
    solve : callable, default=minimum-norm least squares
        ``solve(H, g)`` returns a solution of ``H x = g``; the minimum-norm
        one when ``H`` is singular along invariances of the function (softmax
        intercept shifts), which the gradient is orthogonal to.
    precise : bool, default=True
        Iterate until the step is at the level of rounding in ``theta``.
        False stops after the full Newton step taken once the decrement
        ``-g^T step`` is at most ``1e-6 (1 + |f|)``: with Newton's quadratic
        convergence the value is then within about ``1e-12 (1 + |f|)`` of the
        minimum, enough to compare candidate supports, for about two
        Hessians fewer (the splicing search's candidate refits, see
        :meth:`BaseLoss.refit_candidates`).
    value_unit, coef_unit : float, default=1.0
        The 1 of ``1 + |f|`` and of ``1 + ||theta||`` in the rules above
        (:attr:`BaseLoss.value_unit`, :attr:`BaseLoss.coef_unit`): Huber's
        and Poisson's scale with ``y``, so that their refits of ``c y`` stop
        where those of ``y`` do.
    value_origin : float, default=0.0
        ``precise=False``'s ``|f|`` is ``|f - value_origin|``
        (:meth:`BaseLoss.value_origin`: the log link's saturated value, whose
        ``f`` shifts with ``y``'s unit); the rounding-level rules keep ``|f|``.
    flat_hessian : callable or None, default=None
        ``flat_hessian(theta)``, a majoriser's curvature, used where the
        Newton step is 0 though the gradient is not (Huber's loss with no
        residual inside its threshold; see ``HuberLoss._flat_curvature``).
    limit : float or None, default=None
        Stop, returning None, as soon as the value lies above ``limit`` by
        more than :data:`~sparse_estimators._policy.REJECT_DECREMENTS` Newton decrements ``-g^T step``
        (a candidate refit that cannot get below ``limit``; see
        ``_PointwiseNewtonRefit._newton``'s, the same rule).

    Returns
    -------
    ndarray of shape (d,) or None
    """
    f, g = fun(theta)
    for _ in range(max_iter):
        H = hessian(theta)
        step = -solve(H, g)
        t, slope = 1.0, float(g @ step)
        if slope == 0.0 and flat_hessian is not None and g.any():  # (no curvature along g: the majoriser's step)
            step = -solve(flat_hessian(theta), g)
            slope = float(g @ step)
        if limit is not None and f - limit > -_policy.REJECT_DECREMENTS * slope:
            return None
        if not precise and -slope <= 1e-6 * (value_unit + abs(f - value_origin)):
            theta_new = theta + step
            f_new, _ = fun(theta_new)
            return theta_new if f_new <= f + 1e-12 * (value_unit + abs(f)) else theta
        if -slope <= 1e-12 * (value_unit + abs(f)):
            # within rounding of the minimum in f (the decrement is what a
            # full step would gain), but theta may still be ~sqrt(eps)
            # away: full Newton steps (quadratic convergence here) until
            # the step is at the level of rounding in theta
            f_new, g_new = fun(theta + step)
            if not f_new <= f + 1e-12 * (value_unit + abs(f)):
                break
            theta = theta + step
            f, g = f_new, g_new
            if _norm(step) <= 1e-12 * (coef_unit + _norm(theta)):
                break
            continue
        while True:
            f_new, g_new = fun(theta + t * step)
            if f_new <= f + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        if f_new == math.inf:  # (no step short enough stays where the loss can be evaluated: stop at theta)
            break
        theta = theta + t * step
        done = _norm(t * step) <= 1e-12 * (coef_unit + _norm(theta)) or f - f_new <= 0
        f, g = f_new, g_new
        if done:
            break
    return theta
