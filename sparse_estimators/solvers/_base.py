"""What every solver shares: the result record, stopping rules, step sizes."""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SolverResult:
    """The outcome of a solver run.

    Attributes
    ----------
    coef : ndarray of shape (n_features, n_outputs)
    intercept : ndarray of shape (n_outputs,)
        The intercept *variable* (see ``BaseLoss.intercept`` for the model's).
    support : ndarray
        Sorted indices of the selected features.
    n_iter : int
    objective : list of float
        Loss value after each iteration.
    converged : bool
    diverged : bool
        The iteration blew up; ``coef`` is then the best finite iterate.
    step_size : float
        The last step size used (absolute, not a multiple of 1/L).
    """

    coef: np.ndarray
    intercept: np.ndarray
    support: np.ndarray
    n_iter: int
    objective: list = field(default_factory=list)
    converged: bool = False
    diverged: bool = False
    step_size: float = float("nan")


class IterationMonitor:
    """Stopping, divergence detection and best-iterate bookkeeping.

    Parameters
    ----------
    f0 : float
        Objective at the starting point.
    W0, b0 : ndarrays
        The starting point (kept as the best iterate until one is better).
    tol : float
        Stop when the support is unchanged and
        ``||x_t - x_{t-1}|| <= tol * ||x_t||``.
    keep_best : bool
        Return the iterate of lowest objective rather than the last one.
    verbose : int
        ``>= 2`` prints one line per iteration.
    name : str
        Solver name for verbose output.
    """

    #: an objective that rises above the best one by this many times the
    #: objective's scale (start and first iterate) means divergence
    blowup = 1e4

    def __init__(self, f0, W0, b0, *, tol, keep_best, verbose=0, name="solver"):
        self.f0 = f0
        self.tol = tol
        self.keep_best = keep_best
        self.verbose = verbose
        self.name = name
        self.objective = []
        self.best = (f0, W0.copy(), b0.copy())
        self.diverged = False
        self.converged = False
        self.scale = abs(f0)
        self._support = None

    def update(self, it, W_old, b_old, W, b, f, support):
        """Record iteration ``it``; return True when the solver should stop."""
        if not self.objective:
            # objective scale: start and first iterate (objectives may be <= 0)
            self.scale = max(abs(self.f0), abs(f))
        if (not np.isfinite(f) or not np.all(np.isfinite(W))
                or f - self.best[0] > self.blowup * self.scale):
            self.diverged = True
            return True
        self.objective.append(f)
        if f < self.best[0]:
            self.best = (f, W.copy(), b.copy())
        change = np.sqrt(np.vdot(W - W_old, W - W_old) + np.vdot(b - b_old, b - b_old))
        scale = np.sqrt(np.vdot(W, W) + np.vdot(b, b))
        same_support = self._support is not None and np.array_equal(support, self._support)
        self._support = support
        if self.verbose >= 2:
            print(f"[{self.name}] iter {it:4d}  objective {f:.6e}  rel. change {change / max(scale, 1e-300):.2e}")
        if (same_support or it == 1 and change == 0) and change <= self.tol * scale:
            self.converged = True
            return True
        return False

    def stay(self, f):
        """Record an iteration that kept the previous iterate (e.g. a restart)."""
        self.objective.append(f)

    def result(self, W, b, support, n_iter, step):
        """Build the :class:`SolverResult` (best iterate where asked or needed)."""
        if self.diverged or self.keep_best:
            W, b = self.best[1], self.best[2]
            support = np.flatnonzero(np.any(W != 0, axis=1))
        return SolverResult(W, b, np.asarray(support), n_iter, self.objective,
                            self.converged, self.diverged, float(step))


def project(operator, k, W):
    """Threshold the rows of ``W`` at level ``k``; returns ``(W, support)``."""
    return operator(W, k, return_support=True)


def initial_step(loss, step_size):
    """Absolute step from the ``step_size`` parameter ('auto' starts at 1/L)."""
    L = loss.lipschitz()
    if L <= 0:
        L = 1.0
    factor = 1.0 if step_size == "auto" else float(step_size)
    return factor / L, L


def backtracking_step(loss, operator, k, W, b, f, gW, gb, eta, L):
    """One thresholded gradient step with an adaptive step size (Liu & Barber, eq. 6).

    Tries ``eta`` (grown by 2 from the previous step) and halves it until the
    quadratic upper model holds at the thresholded point,

        f(x+) <= f(x) + <g, x+ - x> + ||x+ - x||^2 / (2 eta),

    never going below the safe step ``1/L`` (for which it always holds).

    Returns
    -------
    W_new, b_new, Z_new, f_new, support, eta
    """
    eta = 2.0 * eta
    floor = 1.0 / L
    while True:
        Wn, support = project(operator, k, W - eta * gW)
        bn = b if gb is None else b - eta * gb
        Z = loss.linear_predictor(Wn, bn)
        fn = loss.value_from_z(Z, Wn)
        dW, db = Wn - W, bn - b
        model = f + np.vdot(gW, dW) + (0.0 if gb is None else np.vdot(gb, db)) \
            + (np.vdot(dW, dW) + np.vdot(db, db)) / (2.0 * eta)
        if eta <= floor or fn <= model + 1e-12 * abs(f):
            return Wn, bn, Z, fn, support, eta
        eta = max(0.5 * eta, floor)
