"""Iterative hard (or any-operator) thresholding: projected gradient descent."""

import numpy as np

from ..structures import Rows, get_structure
from ..thresholding import Hard
from ._base import (
    IterationMonitor,
    StepGrowthLatch,
    SupportJump,
    _any,
    backtracking_step,
    gradient_step,
    initial_step,
    intercept_origin,
    project,
    same_indices,
    warm_support,
)


def iht(loss, operator, k, *, W0, b0, step_size="auto", max_iter=1000, tol=1e-4, verbose=0,
        support_refit=0, refitted_start=False):
    """Projected gradient descent ``x <- P_k(x - eta grad f(x))``.

    Parameters
    ----------
    loss : BaseLoss
        The smooth loss (see :mod:`sparse_estimators.losses`).
    operator : ThresholdingOperator or Structure
        ``P_k``, applied through a structure; a plain operator thresholds the
        rows of the coefficient matrix (:class:`~sparse_estimators.structures.Rows`).
    k : int
        Sparsity level.
    W0, b0 : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
        Starting point (the intercept is never thresholded).
    step_size : 'auto' or float
        'auto': backtracking on the quadratic upper model (Liu & Barber,
        eq. 6; see :func:`backtracking_step`), starting from the optimistic
        ``1 / L_c`` (``L_c`` the largest single-coordinate curvature; no
        global ``L`` is computed), at least ``1/(2L)``; a float: the fixed
        step ``step_size / L``.
    max_iter : int
    tol : float
        Stop when the support is unchanged and the relative change of the
        iterate is at most ``tol``.
    verbose : int
    support_refit : int, default=0
        With hard thresholding, once the support has been unchanged for this
        many iterations, jump to the minimiser of the loss on it and stop if
        that is a fixed point of the thresholded step (where the iteration
        would converge; see :class:`SupportJump`), else go on
        from it. 0 never jumps (the papers' iteration, stopped by ``tol``).
        Estimators that refit on the support anyway (``debias=True``) use
        1 (classifiers; least squares with many observations per selected
        feature, see ``_policy.SQUARED_PATIENCE_MIN_SAMPLES``), 2 (least
        squares with groups) or 3 (the other regressions).
    refitted_start : bool, default=False
        ``W0, b0`` minimise the loss on ``W0``'s support (of ``k`` rows), as
        the warm starts of a sparsity path do: when the first hard
        thresholded step keeps that support, the start is a fixed point and
        is returned at once, with the gradient there (the check a
        :class:`SupportJump` would make, without refitting again).

    Returns
    -------
    SolverResult
        For operators other than hard, the iterate of lowest objective
        (Liu & Barber: ``f(x_t)`` need not decrease); for hard, the last one.
    """
    operator = get_structure(operator)  # (a plain operator thresholds rows)
    eta, L = initial_step(loss, step_size)
    eta_next = eta
    if plain_hard(operator) and type(W0) is np.ndarray and W0.dtype == np.float64 and not _any(W0, axis=None):
        W, support = _cold_projection(W0, k)  # (a cold start: no partition of p zeros)
    else:
        W, support = project(operator, k, W0)
    b = b0.copy()
    Z = loss.linear_predictor(W, b)
    f = loss.value_from_z(Z, W)
    if not plain_hard(operator):  # (plain hard thresholding keeps the rows it selected: their support is that)
        support = operator.support(W, k)
    # (copies=False: the iterates below are new arrays, never written to)
    monitor = IterationMonitor(f, W, b, tol=tol, keep_best=not operator.is_hard, verbose=verbose, name="IHT",
                               start_support=warm_support(W0, support), copies=False,
                               origin=intercept_origin(loss))
    jump = SupportJump(loss, operator, k, support_refit, support, f)
    start_support, f_start = support, f
    latch = StepGrowthLatch()
    it, start_gradient = 0, None
    # (per solve, not per iteration: the loop's tests and look-ups)
    auto, hard, gradient_from_z = step_size == "auto", operator.is_hard, loss.gradient_from_z
    plain = plain_hard(operator) and W.dtype == np.float64  # (its projection without the operator's dispatch)
    check_start = refitted_start and hard and start_support.size == k
    measured = [None]  # (the accepted step's squared length, from the backtracking: the monitor's change)
    for it in range(1, max_iter + 1):
        gW, gb = gradient_from_z(Z, W)
        if it == 1:
            start_gradient = gW
        if auto:
            tried = eta_next
            Wn, bn, Z, f, support, eta, eta_next = backtracking_step(
                loss, operator, k, W, b, f, gW, gb, eta_next, L, Z, grow_on_stable=latch.open, moved=measured,
                plain=plain)
            if not hard:  # (hard thresholding's next step never reads the latch: see next_step)
                latch.update(support, tried, eta)
        else:
            Wn, bn, Z, f, support = gradient_step(loss, operator, k, W, b, gW, gb, eta, plain)
        if it == 1 and check_start and same_indices(support, start_support):
            monitor.stay(f_start)  # the start is the minimiser on the support the step keeps
            monitor.converged = monitor.refitted = True
            result = monitor.result(W, b, start_support, it, eta)
            result.gradient = result.start_gradient = gW
            return result
        stop = monitor.update(it, W, b, Wn, bn, f, support, measured[0])
        if monitor.diverged:
            break
        W, b = Wn, bn
        if stop:
            break
        jumped = jump(W, b, f, support, eta, monitor)
        if jumped is not None:
            W, b, Z, f = jumped
            if monitor.converged:
                break
    result = monitor.result(W, b, support, it, eta)
    result.start_gradient = start_gradient
    if result.refitted:  # it ended at the jump's minimiser, where the jump took the gradient
        result.gradient, result.linear_predictor = jump.gradient, jump.linear_predictor
    return result


def plain_hard(structure):
    """Whether ``structure`` is hard thresholding of rows, without forced or excluded ones.

    Its projection ``P_k(W)`` keeps the selected rows unchanged and zeroes
    the others, so the support of ``P_k(W)`` is the one the projection
    selected (ties among zero rows go to the lower index in both):
    :func:`iht` does not select it again.
    """
    return (type(structure) is Rows and structure.forced is None and structure.excluded is None
            and type(structure.operator) is Hard)


def _cold_projection(W0, k):
    """``project(Hard(), k, W0)`` for a float64 ``W0`` of zeros: its first ``k`` rows (ties go to the lower index).

    The same array (the rows kept are copied, signed zeros included) and support as the partition of ``p``
    zero magnitudes would give.
    """
    support = np.arange(min(max(k, 0), W0.shape[0]))
    W = np.zeros(W0.shape, W0.dtype)
    W[:support.size] = W0[:support.size]
    return W, support
