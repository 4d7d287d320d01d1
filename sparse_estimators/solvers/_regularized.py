"""Regularized IHT with adaptive weights (Axiotis & Sviridenko, Algorithm 1)."""

import numpy as np

from .. import _policy
from .._utils import row_squares
from ..structures import get_structure
from ._base import (
    IterationMonitor,
    StepGrowthLatch,
    SupportJump,
    curvature_ratio,
    gradient_step,
    initial_step,
    intercept_origin,
    next_step,
    project,
    warm_support,
)


def _support_size(structure, k, p):
    """The most features a support of ``k`` units holds: ``min(k, p)``, or with groups the ``k`` largest's sizes.

    The weights are per feature, so the default weight step counts features:
    with ``k`` counting groups, ``k / max_iter`` left a support of groups of
    two or more features weighted past ``max_iter``.
    """
    if structure.n_units(p) == p:  # (one feature per unit)
        return min(k, p)
    try:
        units = structure.unit_of_features(p)
    except NotImplementedError:
        return min(k, p)
    return int(np.sort(np.bincount(units))[::-1][:k].sum())


def _update_weights(w, W, c):
    """``w <- (w - c (w x)^2 / sum_j w_j x_j^2)_{>= 1/2}``, from the *old* ``x`` and ``w``.

    Entries that fall below 1/2 become 0 (so a zero weight stays zero);
    nothing changes while ``sum_j w_j x_j^2 == 0``.
    """
    sq = row_squares(W)
    reg = float(w @ sq)
    if reg <= 0.0:
        return w
    new = w - c * (w * w * sq) / reg
    new[new < 0.5] = 0.0
    return new


def _step(loss, operator, k, W, b, gW, gb, w, eta):
    """``x+ = P_k((1 - w/2) x - eta grad f(x))``; the intercept takes a plain gradient step."""
    return gradient_step(loss, operator, k, (1.0 - 0.5 * w)[:, None] * W, b, gW, gb, eta)


def _backtracking(loss, operator, k, W, b, f, gW, gb, w, eta, L, Z, grow_on_stable=False):
    """Algorithm 1's step with an adaptive ``eta`` (halved until accepted; see ``backtracking_step``).

    Accepted when the quadratic upper model of the regularized objective
    ``g_eta(x) = f(x) + ||x||_w^2 / (4 eta)`` holds at the new point.

    The penalty is exactly quadratic, so the test reduces to

        f(x+) <= f(x) + <grad f, d> + ||d||^2 / (2 eta) - ||d||_w^2 / (4 eta),

    which always holds at the floor ``eta = 1/(2L)``, where ``g`` is
    ``1/eta``-smooth (``L`` from ``f``, ``L`` from the penalty). The next
    step follows :func:`~sparse_estimators.solvers._base.next_step`, as plain
    IHT's: operators other than hard stop doubling on a stable support once
    the latch closes (``grow_on_stable``), else their iterates cycle.
    """
    floor = 0.0 if L is None else 0.5 / L
    eta = max(eta, floor)
    for halvings in range(61):
        Wn, bn, Zn, fn, support = _step(loss, operator, k, W, b, gW, gb, w, eta)
        penalty = float(w @ row_squares(Wn - W)) / (4.0 * eta)
        ratio = curvature_ratio(loss, f, fn, Zn, W, b, Wn, bn, gW, gb, eta, penalty, Z_start=Z)
        if eta <= floor or ratio <= 1.0 or halvings == 60:
            break
        eta = max(0.5 * eta, floor)
    return Wn, bn, Zn, fn, support, eta, next_step(operator, W, support, eta, ratio, grow_on_stable and halvings == 0)


def regularized_iht(loss, operator, k, *, W0, b0, step_size="auto", max_iter=1000, tol=1e-4, verbose=0,
                    weight_step=None, support_refit=0, weights0=None):
    """Regularized IHT: IHT on ``f(x) + ||x||_w^2 / (4 eta)`` whose weights ``w`` are learned.

    With ``x_0 = P_k(W0)`` and ``w_0 = 1``, each iteration is

    1. ``x_{t+1} = P_k((1 - 0.5 w_t) x_t - eta grad f(x_t))``;
    2. ``w_{t+1} = (w_t - c (w_t x_t)^2 / sum_j w_j x_{t,j}^2)_{>= 1/2}``,

    products and squares element-wise, ``(v)_{>= 1/2}`` setting every entry
    below 1/2 to 0. The weight update uses the old ``x_t`` and ``w_t`` and is
    skipped while ``sum_j w_j x_{t,j}^2 == 0``; weights never increase and a
    zero weight stays zero. Step 1 is exactly an IHT step with step ``eta`` on
    ``f(x) + (1/(4 eta)) sum_j w_j x_j^2``: an l2 penalty per feature that
    starts on every feature and is progressively removed from the features
    the iterates keep putting their mass on. Weights are per feature: with
    several outputs (classes) ``x_j^2`` is the squared norm of row ``j`` of
    the coefficient matrix. The intercept variable (logistic losses) takes a
    plain gradient step and is never penalised. ``P_k`` keeps the ``k``
    largest rows (the paper's reference code, its Fig. 2, zeroes the ``k``
    smallest instead: a bug, not reproduced). The proof-only revert of
    Algorithm 1 is not performed ("in practice there is no need").

    Parameters
    ----------
    loss : BaseLoss
        The smooth loss ``f``.
    operator : ThresholdingOperator or Structure
        ``P_k``, applied through a structure; a plain operator thresholds the
        rows of the coefficient matrix (:class:`~sparse_estimators.structures.Rows`).
    k : int
        Sparsity level (the paper's ``s'``).
    W0, b0 : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
        Starting point (thresholded first; the intercept never is).
    step_size : 'auto' or float
        The step ``eta`` of Algorithm 1 in multiples of ``1/L`` (``L`` the
        smoothness constant of ``f``); the theory uses ``eta = 1/(2L)``.
        Note the factor 2 against the paper's reference code, which writes
        ``0.5 * eta`` for this step. The penalty ``1/(4 eta)`` is tied to the
        step, so a larger step also means a weaker penalty.
        A float: the fixed step ``eta = step_size / L``; 0.5 is the theory,
        values above 1.5 can diverge while the weights are 1 (plain IHT's
        limit is 2), which is detected and reported.
        'auto': backtracking on the quadratic upper model of the regularized
        objective ``f + ||x||_w^2 / (4 eta)``, starting at ``1/(2 L_c)``
        (``L_c`` the largest single-coordinate curvature, at most ``L``) and
        halved until the model holds (it does for every step up to
        ``1/(2L)``, so no global ``L`` is computed); it is doubled for the next iteration only when the accepted
        step used at most half of the model's allowance, so it settles. While the weights are about
        1 the test reads ``L_d <= 1 / (2 eta)``, ``L_d`` the curvature of
        ``f`` along the step, so ``eta`` settles near ``1/(2 L_d)``: a
        penalty ``(L_d / 2) ||x||_w^2``, the paper's ``(beta / 2) ||x||_w^2``
        with a local ``beta`` in place of the global ``L`` (the test is on
        the whole step, so a stiff direction can be outweighed by flat
        ones); on unweighted features it is plain IHT's adaptive step. With hard thresholding
        every step decreases the current regularized objective.
    max_iter : int
        Maximum number of iterations (the paper's ``T``).
    tol : float
        Stop when the support is unchanged, ``||x_t - x_{t-1}|| <= tol ||x_t||``
        **and** the weights did not change in this iteration. The weights
        stop moving only once every feature of the iterate is unweighted
        (``w_j = 0``), so a run is never cut short while the penalty still
        shapes the iterate: with a stable support of ``k`` features this
        takes about ``k ln(2) / c`` iterations (about ``0.7 max_iter`` with
        the default ``c``), then plain IHT converges on that support.
    verbose : int
        ``>= 2`` prints one line per iteration.
    weight_step : float or None, default=None
        The paper's ``c``. Each iteration lowers the total weight by
        between ``c/2`` and ``c`` while the iterate has weighted features
        (then the rounding to 0), and a feature is unregularized once its
        weight has lost 1/2, so ``c T`` is about the number of features
        that get unregularized in ``T`` iterations: run about ``k / c``
        iterations. A large ``c`` (``>= 1``; at once when ``c >= k/2``)
        soon unweights the support and behaves much like plain IHT (each
        newly selected feature is still shrunk once before its weight drops
        to 0, so the end point can differ: measured on a real design, 7 %
        apart in excess loss at ``c = 1000``); a small
        ``c`` needs more iterations and can reach a lower loss. None:
        ``c = k / max_iter``, the paper's experiments (its theory uses
        ``k / (4 max_iter)``), ``k`` counted in features (with groups, the
        features of the ``k`` largest groups).
    support_refit : int, default=0
        As in :func:`~sparse_estimators.solvers.iht`, once every feature of
        the iterate is unweighted (``w_j = 0`` on the support, after which
        the weights no longer move and the step is plain IHT's): with hard
        thresholding, when the support has been unchanged for this many
        iterations, jump to the minimiser of the loss on it and stop if that
        is a fixed point of the step, else go on from it. Without it, plain
        IHT had the last ``0.3 max_iter`` or so iterations to converge on
        the support, which ill-conditioned (near-separable logistic) fits
        did not. 0 never jumps (Algorithm 1). When ``k`` is at least the
        number of units, the projection drops none and the weights cannot
        change the support: the jump does not wait for them (the run ends
        at the minimiser on every feature, as it did after about
        ``0.7 max_iter`` iterations).
    weights0 : ndarray of shape (n_features,) or None, default=None
        The starting weights ``w_0``; None is the paper's ``w_0 = 1``. A
        warm start passes the weights a previous run ended with, so that the
        run continues Algorithm 1 rather than restarting its schedule (from
        its own end point it then stops at once instead of after another
        ``0.7 max_iter`` iterations).

    Returns
    -------
    SolverResult
        ``objective`` holds ``f`` (without the penalty) after each iteration;
        for operators other than hard, the iterate of lowest ``f`` is
        returned. ``weights`` holds ``w`` after the last iteration.

    References
    ----------
    K. Axiotis and M. Sviridenko, "Iterative Hard Thresholding with Adaptive
    Regularization: Sparser Solutions Without Sacrificing Runtime", ICML 2022,
    Algorithm 1, https://proceedings.mlr.press/v162/axiotis22a.html
    """
    p = W0.shape[0]
    operator = get_structure(operator)  # (a plain operator thresholds rows)
    if weight_step is None:
        c = _support_size(operator, k, p) / max_iter
    else:
        c = float(weight_step)
        if not (np.isfinite(c) and c > 0):
            raise ValueError(f"weight_step must be a positive number, got {weight_step!r}.")
    auto = isinstance(step_size, str) and step_size == "auto"
    eta, L = initial_step(loss, step_size)
    if auto:  # Algorithm 1's theory step is 1/(2L): the adaptive one starts at half the optimistic step
        eta *= 0.5
    eta_next = eta
    # where the curvature along the steps vanishes, the doubling stops here (and below float overflow)
    eta_cap = eta * min(_policy.STEP_GROWTH_CAP, np.finfo(float).max / max(eta, 1.0))
    W, b = project(operator, k, W0)[0], b0.copy()
    w = np.ones(p) if weights0 is None else np.array(weights0, dtype=float)
    if w.shape != (p,):
        raise ValueError(f"weights0 has shape {w.shape}; expected ({p},).")
    Z = loss.linear_predictor(W, b)
    f = loss.value_from_z(Z, W)
    support = operator.support(W, k)
    monitor = IterationMonitor(f, W, b, tol=tol, keep_best=not operator.is_hard, verbose=verbose,
                               name="RegularizedIHT", start_support=warm_support(W0, support),
                               origin=intercept_origin(loss))
    jump = SupportJump(loss, operator, k, support_refit, support, f)
    # a projection that keeps every unit (k at least their number) never drops one: the weights cannot change
    # the support, and waiting for them (about 0.7 max_iter iterations) only delayed the jump to the minimiser
    keeps_all = k >= operator.n_units(p)
    latch = StepGrowthLatch()
    it, start_gradient = 0, None
    for it in range(1, max_iter + 1):
        gW, gb = loss.gradient_from_z(Z, W)
        if it == 1:
            start_gradient = gW
        if auto:
            tried = eta_next
            Wn, bn, Zn, fn, support_n, eta, eta_next = _backtracking(
                loss, operator, k, W, b, f, gW, gb, w, eta_next, L, Z, grow_on_stable=latch.open)
            if not operator.is_hard:  # (hard thresholding's next step never reads the latch: see next_step)
                latch.update(support_n, tried, eta)
            eta_next = min(eta_next, eta_cap)
        else:
            Wn, bn, Zn, fn, support_n = _step(loss, operator, k, W, b, gW, gb, w, eta)
        w_new = _update_weights(w, W, c)
        stop = monitor.update(it, W, b, Wn, bn, fn, support_n)
        if monitor.diverged:
            break
        if stop and not np.array_equal(w_new, w):
            # the iterate is (nearly) still, but the penalty that holds it is
            # still being removed: keep going
            monitor.converged, stop = False, False
        W, b, Z, f, support, w = Wn, bn, Zn, fn, support_n, w_new
        if stop:
            break
        if w[support].any() and not keeps_all:  # (the penalty still acts on the support: not plain IHT yet)
            jump.reset(support, f)
            continue
        jumped = jump(W, b, f, support, eta, monitor)
        if jumped is not None:
            W, b, Z, f = jumped
            if monitor.converged:
                break
    result = monitor.result(W, b, support, it, eta)
    result.weights = w
    result.start_gradient = start_gradient
    if result.refitted:  # it ended at the jump's minimiser, where the jump took the gradient
        result.gradient = jump.gradient
    return result
