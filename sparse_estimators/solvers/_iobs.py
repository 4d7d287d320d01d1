"""Iterative Optimal Brain Surgeon (Wu et al., *The Iterative Optimal Brain Surgeon*).

Each iteration takes a damped Newton step, keeps the ``k`` rows of largest
magnitude of the Newton point (top-k I-OBS, eq. 12) and, with the OBS
correction, replaces the kept values by the restricted Newton solve on that
support (eq. 23): a projection in the Hessian norm instead of the Euclidean
one.

The linear algebra of each ``hessian`` route (least squares, logistic /
multinomial, the matrix-free CG) is in ``solvers/_iobs_curvature.py``.
"""

import math

import numpy as np

from .. import _policy
from ..losses._numerics import LinearPredictorRangeError
from ..structures import get_structure
from ._base import (
    IterationMonitor,
    _intercept_size,
    backtracking_step,
    initial_step,
    intercept_origin,
    project,
    same_indices,
    warm_support,
)
from ._iobs_curvature import (
    _GLMCache,
    _GLMCurvature,
    _LeastSquaresCurvature,
)

__all__ = ["iobs", "select_hessian_route"]

HESSIAN_ROUTES = ("auto", "dense", "woodbury", "cg", "screened", "fisher", "screened_fisher")


def _trial_value(loss, Z, W):
    """The loss at a trial point of the Newton step's search, ``inf`` (rejected) where it cannot be evaluated.

    The Cox loss raises beyond the range of its exponentials (``X coef`` spanning more than about 700), which a
    full damped Newton step from a flat region can reach: a shorter step is then tried, as for an increase.
    """
    try:
        return loss.value_from_z(Z, W)
    except LinearPredictorRangeError:
        return math.inf


def select_hessian_route(loss, hessian="auto", damping=1e-2):
    """The linear-algebra route used by :func:`iobs` for ``loss``.

    Parameters
    ----------
    loss : BaseLoss
        The loss to minimise.
    hessian : {'auto', 'dense', 'woodbury', 'cg', 'screened', 'fisher', 'screened_fisher'}, default='auto'
        'auto' picks, with ``n`` the number of samples of positive weight,
        ``p`` features and ``m`` outputs:

        * least squares: 'dense' (Cholesky of the ``p x p`` Hessian) when
          ``n >= p`` and ``p <= _policy.DENSE_MAX_LS``; 'woodbury' (Cholesky of an
          ``n x n`` matrix) when ``n < p`` and ``n <= _policy.DENSE_MAX_LS``; 'cg'
          otherwise;
        * logistic / multinomial: 'woodbury' (an ``(n m) x (n m)``
          factorisation per iteration) when ``n < p + 1``,
          ``n m <= _policy.WOODBURY_MAX_GLM`` and ``damping > 0`` (cheaper than
          re-forming the ``(p + 1) m`` square Hessian every iteration); else
          'dense' when ``(p + 1) m <= _policy.DENSE_MAX_GLM``; else 'woodbury' under
          the same size and damping conditions; else 'cg'.

        * Gamma (``loss.iobs_fisher``) with ``N < p + 1`` (``N``:
          ``loss.n_observations``, the observations the weights stand for,
          so that integer weights choose as repeated rows do): 'fisher', the
          expected Hessian (Fisher information) instead of the observed one:
          for the log-link Gamma loss its pointwise weights are the sample
          shares, whatever the iterate, so it is built and factored once per
          fit (Woodbury under the conditions of logistic's 'woodbury', else
          dense or CG as logistic) instead of at every iteration; from zero
          (with ``refit_first``), :func:`iobs` takes the first step and checks
          its support jump with 'screened_fisher' (the screened block of the
          expected Hessian, no ``n x n`` kernel) and forms the full expected
          Hessian only when that support is no fixed point
          (``_policy.IOBS_FISHER_SCREENED_START``, with ``N`` at least
          ``_policy.IOBS_FISHER_SCREENED_MIN_SAMPLES``); else as logistic;

        * Poisson (``loss.iobs_screened``):
          'screened', the block-diagonal Newton step (exact on the current
          support and the ``SCREEN_FACTOR * k`` other rows of largest
          diagonal Newton point, diagonal elsewhere): no ``n x n`` or
          ``p x p`` factorisation, only ``X`` restricted to those rows;

        * a loss whose curvature is not pointwise (``loss.pointwise`` False:
          the Cox partial likelihood): 'woodbury' (an ``n x n`` factorisation
          per iteration through the Hessian in the linear predictor, see
          :mod:`~sparse_estimators.solvers._cox_newton`) when ``n < p``,
          ``n m <= _policy.WOODBURY_MAX_GLM`` and ``damping > 0``; else 'dense' when
          ``p m <= _policy.DENSE_MAX_GLM``; else 'cg'.

        * a loss over a dask ``X`` (``loss.blockwise``): 'dense' (one pass
          over the blocks per iterate) when ``(p + 1) m <=
          _policy.DENSE_MAX_LS``; other routes, or more features, raise a
          ValueError.

        Any other value is returned as is.
    damping : float, default=1e-2
        The Woodbury form of a logistic / multinomial Hessian needs a damped
        (invertible) diagonal; with ``damping=0`` its Newton solves use CG.

    Returns
    -------
    str
        One of 'dense', 'woodbury', 'cg', 'screened', 'fisher',
        'screened_fisher' ('screened' only for a loss with pointwise
        curvature, 'fisher' and 'screened_fisher' (the screened step of the
        expected Hessian) only for a loss whose expected Hessian is
        constant).

    Raises
    ------
    ValueError
        On an unknown route; on a dask ``X``, on a route other than 'auto' or
        'dense', or a Hessian wider than ``_policy.DENSE_MAX_LS``.
    """
    if not (isinstance(hessian, str) and hessian in HESSIAN_ROUTES):
        raise ValueError(f"The 'hessian' parameter must be one of {HESSIAN_ROUTES}, got {hessian!r}.")
    p, m = loss.n_features, loss.n_outputs
    if getattr(loss, "blockwise", False):
        return _blockwise_route(hessian, p, m)
    if not getattr(loss, "pointwise", True):  # (Cox: Woodbury through the n x n Hessian in eta)
        if hessian != "auto":
            return hessian
        if damping > 0 and loss.n_positive < p and loss.n_positive * m <= _policy.WOODBURY_MAX_GLM:
            return "woodbury"
        return "dense" if p * m <= _policy.DENSE_MAX_GLM else "cg"
    if hessian != "auto":
        return hessian
    n = loss.n_positive
    if not loss.intercept_is_variable:
        if n >= p:
            return "dense" if p <= _policy.DENSE_MAX_LS else "cg"
        return "woodbury" if n <= _policy.DENSE_MAX_LS else "cg"
    # (Gamma: one constant Hessian per fit instead of an n x n factorisation per iteration). Which Hessian is
    # decided by the observations the weights stand for, as repeated rows would (n_observations: integer weights
    # count as repeats); how it is factored (dense or Woodbury, the same step) by the rows held (n)
    if loss.n_observations < p + 1 and getattr(loss, "iobs_fisher", False):
        return "fisher"
    if getattr(loss, "iobs_screened", False):
        # (Poisson, at any n: block-diagonal Newton steps instead of Woodbury's n x n or the dense
        # (p + 1)^2 Hessian per iteration, the same F1; doc/changelog.rst, "I-OBS Poisson at n >= p + 1")
        return "screened"
    if damping > 0 and n < p + 1 and n * m <= _policy.WOODBURY_MAX_GLM:
        return "woodbury"  # wide data: an (n m)-sized factorisation beats re-forming (p m)^2
    if (p + 1) * m <= _policy.DENSE_MAX_GLM:
        return "dense"
    return "woodbury" if (damping > 0 and n * m <= _policy.WOODBURY_MAX_GLM) else "cg"


def _blockwise_route(hessian, p, m):
    """The route on a loss over a dask ``X``: 'dense', whose Hessian is one pass over the blocks per iterate.

    The other routes index or multiply ``X`` in memory (the ``n x n`` kernel of
    'woodbury', the columns of 'screened', CG's products per iteration).
    """
    if hessian not in ("auto", "dense"):
        raise ValueError(f"The 'hessian' parameter must be 'auto' or 'dense' for a dask X, got {hessian!r}: "
                         "the other routes need X in memory.")
    if (p + 1) * m > _policy.DENSE_MAX_LS:
        raise ValueError(f"I-OBS on a dask X forms the (n_features + 1) * n_outputs = {(p + 1) * m} square "
                         f"Hessian at every iterate, more than {_policy.DENSE_MAX_LS}: use IHTRegressor / "
                         "IHTClassifier, or fewer features.")
    return "dense"


# -- the solver -----------------------------------------------------------------
def _negligible(Wt, bt, W, b, tol, origin=None):
    """Whether the move from ``(W, b)`` to the trial ``(Wt, bt)`` is at most ``tol`` of the trial's norm.

    The stopping test of :class:`~sparse_estimators.solvers._base.IterationMonitor`: accepting a step
    that the halvings shrank to such a move, with the support kept, would end the fit there (a step of
    no descent, whose loss at that size is within rounding of ``f``: on a float32 ``X``, products to
    1e-7, the halvings met such a "decrease" and the fit stopped at the first non-descent Newton step).
    A step already that small before any halving is a converged iterate's, and is accepted as before.
    ``origin``: the monitor's (the loss's intercept origin), from which ``bt``'s size is measured.
    """
    dW, db = Wt - W, bt - b
    moved = float(np.vdot(dW, dW) + np.vdot(db, db))
    return moved <= tol * tol * float(np.vdot(Wt, Wt) + _intercept_size(bt, origin))


def _covers(Q, current, n_rows):
    """Whether the support ``Q`` holds the current non-zeros (rows; or, per output, a mask)."""
    if Q.ndim == 1:  # (a mask of Q's rows: np.isin's set machinery costs more than the step at small p)
        kept = np.zeros(n_rows, dtype=bool)
        kept[Q] = True
        return bool(kept[current].all())
    return not np.any(current & ~_per_output_mask(Q, current.shape))


def _per_output_mask(Q, shape):
    out = np.zeros(shape, dtype=bool)
    out[Q, np.arange(shape[1])[:, None]] = True
    return out


def iobs(loss, operator, k, *, W0, b0, step_size="auto", max_iter=100, tol=1e-4, verbose=0,
         damping=1e-2, correction=True, hessian="auto", support_refit=0, refit_first=False):
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
    point towards ``theta_t``) up to ``_policy.MAX_HALVINGS`` times; with the
    correction, if ``Q`` contains the current support, the segment from
    ``theta_t`` to the corrected point is then searched by halving; as a last
    resort one projected-gradient step with backtracking (as in
    :func:`~sparse_estimators.solvers.iht`) is taken. The halvings of a
    step that moves the iterate by more than ``tol`` (relative) stop where
    the halved step moves it by at most ``tol``: accepted, such a step
    would end the fit by the stopping test while its loss is only within
    rounding of the current one. With hard thresholding
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
    hessian : {'auto', 'dense', 'woodbury', 'cg', 'screened', 'fisher', 'screened_fisher'}, default='auto'
        Linear-algebra route, see :func:`select_hessian_route` (with
        ``damping=0`` a logistic / multinomial "woodbury" falls back to CG).
    support_refit : int, default=0
        With the correction and hard thresholding of rows: after
        ``support_refit`` consecutive iterations that keep the support and do
        not raise the objective, jump to the minimiser of the loss on that
        support (:meth:`BaseLoss.refit`). Where the gradient vanishes on the
        support ``Q``, the correction returns the point itself
        (``theta_Q - (H_lambda)_QQ^{-1} g_Q``), so the minimiser is a fixed
        point exactly when the next Newton point selects ``Q`` again: the
        next iteration checks that and stops there (``refitted``); otherwise
        it continues from the minimiser, whose objective is no higher. 0
        never jumps (the iteration then converges to that point in the
        coefficients, to ``tol``).
    refit_first : bool, default=False
        With ``support_refit`` and a cold start (``W0`` all zero, whose
        thresholded support is arbitrary): jump to the minimiser on the
        first iteration's support at once, without waiting for a second
        iteration to keep it. The next iteration checks the fixed point as
        after any jump, so a support the Newton point leaves is not kept.

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
    if route == "screened" and (least_squares or not getattr(loss, "pointwise", True)):
        raise ValueError("The 'screened' Hessian route needs a loss whose curvature is pointwise and changes "
                         "with the iterate (not least squares, not Cox): use hessian='auto'.")
    if route in ("fisher", "screened_fisher") and not getattr(loss, "iobs_fisher", False):
        raise ValueError(f"The {route!r} Hessian route needs a loss whose expected Hessian is constant "
                         "(loss='gamma'): use hessian='auto'.")
    s0 = 1.0 if (isinstance(step_size, str) and step_size == "auto") else float(step_size)
    if verbose >= 2:
        print(f"[IOBS] hessian route: {route}")
    operator = get_structure(operator)  # (a plain operator thresholds rows)
    W, b = project(operator, k, W0)[0], np.asarray(b0, dtype=float).copy()
    Z = loss.linear_predictor(W, b)
    f = f0 = loss.value_from_z(Z, W)
    support = operator.support(W, k)
    origin = intercept_origin(loss)
    monitor = IterationMonitor(f, W, b, tol=tol, keep_best=not (operator.is_hard or correction),
                               verbose=verbose, name="IOBS", start_support=warm_support(W0, support),
                               origin=origin)
    curvature = _LeastSquaresCurvature(loss, route, damping) if least_squares else None
    cache = None if least_squares else _GLMCache(loss)
    eta = L = None
    s = s_used = s0
    # the support jump (see support_refit): rows of a hard operator only (its fixed points are minimisers)
    patience = support_refit if (correction and operator.is_hard and getattr(operator, "settles", True)
                                 and support.ndim == 1 and not loss.positive) else 0
    settled, at_minimiser, gradient = 0, False, None
    # (a cold start's support is top-k of zeros: the first iteration's support has nothing to be kept against)
    cold = bool(refit_first and patience and not np.any(W))
    # 'fisher' from zero: the first step and the check of its jump by the expected Hessian's screened block
    # (no n x n kernel); the kernel only once that support is no fixed point (doc/changelog.rst,
    # "I-OBS Gamma on wide data")
    screened_start = (route == "fisher" and cold and _policy.IOBS_FISHER_SCREENED_START
                      and loss.n_observations >= _policy.IOBS_FISHER_SCREENED_MIN_SAMPLES)
    it, start_gradient = 0, None
    for it in range(1, max_iter + 1):
        GW, gb = loss.gradient_from_z(Z, W)
        if it == 1:
            start_gradient = GW
        screened_start = screened_start and (it == 1 or at_minimiser)
        if screened_start:
            curvature = _GLMCurvature(loss, "screened_fisher", damping, W, b, Z, cache,
                                      screen_rows=_policy.SCREEN_FACTOR * k)
        elif not least_squares and (curvature is None or route != "fisher" or curvature.route != route):
            # ('fisher': constant, once per fit)
            curvature = _GLMCurvature(loss, route, damping, W, b, Z, cache, screen_rows=_policy.SCREEN_FACTOR * k)
        dW, db = curvature.newton(GW, gb)
        if at_minimiser:
            at_minimiser = False
            if same_indices(np.sort(project(operator, k, W - s0 * dW)[1]), np.sort(support)):
                monitor.stay(f)  # a fixed point: the step would return the minimiser
                monitor.converged = monitor.refitted = True
                gradient = GW
                break
            if screened_start:  # (no fixed point of the screened step: the full expected Hessian from here)
                screened_start = False
                curvature = _GLMCurvature(loss, route, damping, W, b, Z, cache)
                dW, db = curvature.newton(GW, gb)
        R = curvature.correction_rhs(W, b, GW, gb) if correction else None
        current = np.flatnonzero(np.any(W != 0, axis=1)) if support.ndim == 1 else W != 0
        slack = 1e-12 * abs(f)
        accepted = None
        tried = set()
        segment = None
        for h in range(_policy.MAX_HALVINGS):
            s = s0 * 0.5**h
            Wp, Q = project(operator, k, W - s * dW)
            if correction:
                key = Q.tobytes()
                if key in tried:
                    continue
                tried.add(key)
                Wc, bc = curvature.correct(Q, R, W, b)
                if segment is None and _covers(Q, current, W.shape[0]):
                    segment = (Wc, bc, Q)
            else:
                Wc, bc = Wp, (b if db is None else b - s * db)
                if h == 0:
                    shrinkable = not _negligible(Wc, bc, W, b, tol, origin)
                elif shrinkable and _negligible(Wc, bc, W, b, tol, origin):  # (smaller fractions move less)
                    break
            Zc = loss.linear_predictor(Wc, bc)
            fc = _trial_value(loss, Zc, Wc)
            if fc <= f + slack:
                accepted = (Wc, bc, Zc, fc, Q)
                s_used = s
                break
        if accepted is None and segment is not None:
            Wc, bc, Q = segment
            shrinkable = not _negligible(Wc, bc, W, b, tol, origin)
            for h in range(1, _policy.MAX_HALVINGS + 1):
                a = 0.5**h
                Wa, ba = W + a * (Wc - W), b + a * (bc - b)
                if shrinkable and _negligible(Wa, ba, W, b, tol, origin):  # (as above: the safeguard step instead)
                    break
                Za = loss.linear_predictor(Wa, ba)
                fa = _trial_value(loss, Za, Wa)
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
        Qn = np.asarray(Qn)
        stop = monitor.update(it, W, b, Wn, bn, fn, Qn)
        if monitor.diverged:
            break
        kept = fn <= f and same_indices(np.sort(Qn), np.sort(support))
        W, b, Z, f, support = Wn, bn, Zn, fn, Qn
        if stop:
            break
        settled = settled + 1 if kept else 0
        if cold and it == 1 and fn <= f0:
            settled = patience
        if patience and settled >= patience:
            settled = 0
            Wr, br = operator.refit(loss, support, W, b)
            Zr = loss.linear_predictor(Wr, br, support)
            fr = loss.value_from_z(Zr, Wr)
            if fr <= f:
                W, b, Z, f, at_minimiser = Wr, br, Zr, fr, True
                monitor.objective[-1] = fr
    result = monitor.result(W, b, support, it, s_used)
    result.start_gradient = start_gradient
    if result.refitted:
        result.gradient = gradient
        result.linear_predictor = Z  # (at the minimiser: the splicing search starts from it, as after IHT)
    return result
