"""Accelerated IHT with momentum (Khanna & Kyrillidis, *IHT dies hard*, Algorithm 1)."""

import math

import numpy as np

from ..structures import get_structure
from ._base import (
    IterationMonitor,
    StepGrowthLatch,
    SupportJump,
    backtracking_step,
    gradient_step,
    initial_step,
    intercept_origin,
    project,
    warm_support,
)


def accelerated_iht(loss, operator, k, *, W0, b0, step_size="auto", max_iter=1000, tol=1e-4, verbose=0,
                    momentum=0.25, restart=True, support_refit=0):
    """Accelerated IHT: a thresholded gradient step taken at an extrapolated point.

    With ``x_0 = u_0 = P_k(W0)`` and ``U_0 = supp(u_0)``, each iteration

    1. ``T_i = U_i`` plus the top-k entries of ``|grad f(u_i)|`` outside ``U_i``;
    2. ``x_{i+1} = P_k(u_i - eta * grad_{T_i} f(u_i))`` (gradient zeroed off ``T_i``);
    3. ``u_{i+1} = x_{i+1} + momentum * (x_{i+1} - x_i)``, ``U_{i+1} = supp(u_{i+1})``.

    The extrapolated point ``u`` is never thresholded (it has up to 2k
    non-zeros); the intercept variable is extrapolated alike but never
    thresholded. With a fixed step the restriction to ``T_i`` leaves
    ``x_{i+1}`` unchanged; it matters for the adaptive step, whose
    backtracking uses the restricted gradient.

    Beyond the paper: with ``restart`` (default), when a momentum step raises
    the objective, it is discarded and a plain IHT step is taken from the
    previous iterate (O'Donoghue & Candes' function restart). A poor
    ``momentum`` therefore slows the fit but cannot make it diverge where
    plain IHT with the same step would not.

    Parameters
    ----------
    loss : BaseLoss
        The smooth loss.
    operator : ThresholdingOperator or Structure
        ``P_k``, applied through a structure; a plain operator thresholds the
        rows of the coefficient matrix (:class:`~sparse_estimators.structures.Rows`).
    k : int
        Sparsity level.
    W0, b0 : ndarrays
        Starting point.
    step_size : 'auto' or float
        As in :func:`~sparse_estimators.solvers.iht` (the paper uses ``1/L``).
    max_iter : int
        Maximum number of iterations (one gradient each).
    tol : float
        Stop when the support is unchanged and ``||x_i - x_{i-1}|| <= tol ||x_i||``.
    verbose : int
        ``>= 2`` prints one line per iteration.
    momentum : float or 'nesterov', default=0.25
        The paper's ``tau``; 1/4 is its universal choice. 'nesterov': Nesterov's
        (FISTA's) increasing sequence ``(t_i - 1) / t_{i+1}``, ``t_{i+1} = (1 +
        sqrt(1 + 4 t_i^2)) / 2``, started again at ``t = 1`` on each restart
        and after each support jump (O'Donoghue & Candes' adaptive restart).
    restart : bool, default=True
        Discard momentum steps that increase the objective.
    support_refit : int, default=0
        As in :func:`~sparse_estimators.solvers.iht`: with hard thresholding,
        once the support of ``x`` has been unchanged for this many
        iterations, jump to the minimiser on it (the limit of the iteration
        while the support stays) and stop if it is a fixed point of the
        thresholded step; otherwise go on from it without momentum.

    Returns
    -------
    SolverResult
    """
    operator = get_structure(operator)  # (a plain operator thresholds rows)
    eta, L = initial_step(loss, step_size)
    eta_next = eta
    x, b = project(operator, k, W0)[0], b0.copy()
    Z_x = loss.linear_predictor(x, b)
    f_x = loss.value_from_z(Z_x, x)
    support = operator.support(x, k)
    monitor = IterationMonitor(f_x, x, b, tol=tol, keep_best=not operator.is_hard, verbose=verbose,
                               name="AcceleratedIHT", start_support=warm_support(W0, support),
                               origin=intercept_origin(loss))
    u, bu, Zu = x.copy(), b.copy(), Z_x
    extrapolated = False
    nesterov, t = isinstance(momentum, str) and momentum == "nesterov", 1.0
    jump = SupportJump(loss, operator, k, support_refit, support, f_x)
    latch = StepGrowthLatch()
    it, start_gradient = 0, None
    for it in range(1, max_iter + 1):
        f_u = loss.value_from_z(Zu, u)
        gW, gb = loss.gradient_from_z(Zu, u)
        if it == 1:
            start_gradient = gW
        T = operator.expand(gW, np.any(u != 0, axis=1), k)  # the support plus k units by gradient
        gW = np.where(T[:, None], gW, 0.0)
        if step_size == "auto":
            tried = eta_next
            x_new, b_new, Z_new, f_new, support_new, eta, eta_next = backtracking_step(
                loss, operator, k, u, bu, f_u, gW, gb, eta_next, L, Zu, grow_on_stable=latch.open)
            latch.update(support_new, tried, eta)
        else:
            x_new, b_new, Z_new, f_new, support_new = gradient_step(loss, operator, k, u, bu, gW, gb, eta)
        if restart and extrapolated and f_new > f_x:
            # discard the momentum: next iteration is a plain step from x
            u, bu, Zu, extrapolated = x.copy(), b.copy(), Z_x, False
            monitor.stay(f_x)
            t = 1.0
            continue
        stop = monitor.update(it, x, b, x_new, b_new, f_new, support_new)
        if monitor.diverged:
            break
        tau = momentum
        if nesterov:
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            tau, t = (t - 1.0) / t_next, t_next
        u = x_new + tau * (x_new - x)
        bu = b_new + tau * (b_new - b)
        Zu = Z_new + tau * (Z_new - Z_x)
        extrapolated = tau != 0 and not np.array_equal(u, x_new)
        x, b, Z_x, f_x, support = x_new, b_new, Z_new, f_new, support_new
        if stop:
            break
        jumped = jump(x, b, f_x, support, eta, monitor)
        if jumped is not None:
            x, b, Z_x, f_x = jumped
            u, bu, Zu, extrapolated, t = x.copy(), b.copy(), Z_x, False, 1.0
            if monitor.converged:
                break
    result = monitor.result(x, b, support, it, eta)
    result.start_gradient = start_gradient
    return result
