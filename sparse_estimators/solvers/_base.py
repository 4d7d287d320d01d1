"""What every solver shares: the result record, stopping rules, step sizes."""

import math
from dataclasses import dataclass, field

import numpy as np

from .. import _policy
from .._utils import vdot as _vdot
from ..thresholding._operators import _magnitudes, kept_rows
from ..thresholding._selection import select_top_k


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
    weights : ndarray of shape (n_features,) or None
        Per-feature regularization weights at the end of the run, for
        solvers that learn them (regularized IHT); None otherwise.
    refitted : bool
        ``coef`` and ``intercept`` minimise the loss on ``support`` (the run
        ended with a :class:`SupportJump`): a debiasing refit would return
        them unchanged.
    gradient : ndarray of shape (n_features, n_outputs) or None
        The gradient in the coefficients at ``coef``, when the solver
        computed it there (the fixed-point test of a :class:`SupportJump`
        that ended the run); None otherwise. A warm-started path reuses it.
    linear_predictor : ndarray or None
        The loss's linear predictor at ``coef`` (:meth:`BaseLoss.linear_predictor`
        on the ``support``), when the solver computed it with ``gradient``;
        None otherwise. The splicing search that follows starts from it.
    start_gradient : ndarray of shape (n_features, n_outputs) or None
        The gradient in the coefficients at the start ``(P_k(W0), b0)``, from
        the solver's first iteration; None when it ran none. At a zero start
        the splicing search's second start reuses it (its marginal gains).
    """

    coef: np.ndarray
    intercept: np.ndarray
    support: np.ndarray
    n_iter: int
    objective: list = field(default_factory=list)
    converged: bool = False
    diverged: bool = False
    step_size: float = float("nan")
    weights: np.ndarray | None = None
    refitted: bool = False
    gradient: np.ndarray | None = None
    linear_predictor: np.ndarray | None = None
    start_gradient: np.ndarray | None = None


def warm_support(W0, support):
    """``support`` if the start ``W0`` is warm (not all zero), else None (:class:`IterationMonitor`'s argument)."""
    return support if _any(W0, axis=None) else None


def same_indices(a, b):
    """``np.array_equal`` for two index arrays, without its overhead (called every iteration).

    Integer arrays of one dtype compare their bytes (equal bytes are equal
    integers: a quarter of the time of an elementwise comparison); others,
    e.g. floats (where -0.0 equals 0.0), elementwise.
    """
    if a.shape != b.shape:
        return False
    if a.dtype == b.dtype and a.dtype.kind in "iu":
        return a.tobytes() == b.tobytes()
    return bool(_all(a == b, axis=None))


#: ``ndarray.all`` and ``ndarray.any`` without their Python wrappers (the solvers call them every iteration)
_all, _any = np.logical_and.reduce, np.logical_or.reduce
_TINY = float(np.finfo(float).tiny)


def nonzero_rows(W):
    """Sorted indices of the rows of ``W`` (p, m) with a non-zero entry: ``flatnonzero(any(W != 0, axis=1))``."""
    return (W[:, 0] != 0 if W.shape[1] == 1 else _any(W != 0, axis=1)).nonzero()[0]


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
        ``||x_t - x_{t-1}|| <= tol * ||x_t||``, with
        ``||x_t||^2 = ||W_t||^2 + ||b_t - origin||^2``.
    keep_best : bool
        Return the iterate of lowest objective rather than the last one.
    verbose : int
        ``>= 2`` prints one line per iteration.
    name : str
        Solver name for verbose output.
    start_support : ndarray or None, default=None
        The support of a warm start (``W0`` not zero): the start then counts
        as iterate 0, so that a first step that keeps its support and moves
        it by at most ``tol`` stops the solver (a refit from a previous
        solution on the same data ends there). None: the first iteration
        stops only if it does not move at all (a cold start's support is
        arbitrary).
    copies : bool, default=True
        Keep copies of the best iterates; False keeps the arrays themselves
        (a solver whose iterates are new arrays, never written to after).
    origin : ndarray or None, default=None
        The intercept from which ``b``'s size is measured in the stopping test
        (the loss's :meth:`~sparse_estimators.losses.BaseLoss.intercept_origin`); None: from 0.
    """

    #: an objective that rises above the best one by this many times the
    #: objective's scale (start and first iterate) means divergence
    blowup = 1e4

    def __init__(self, f0, W0, b0, *, tol, keep_best, verbose=0, name="solver", start_support=None, copies=True,
                 origin=None):
        self.f0 = f0
        self.tol = tol
        self.keep_best = keep_best
        self.verbose = verbose
        self.name = name
        self.objective = []
        self.best = (f0, W0.copy(), b0.copy())
        self.best_step = None  # best finite iterate after at least one step
        self.diverged = False
        self.converged = False
        self.refitted = False  # the last iterate is a SupportJump's minimiser
        self.scale = abs(f0)
        self._support = start_support
        self._copies = copies
        self._origin = origin

    def update(self, it, W_old, b_old, W, b, f, support, moved=None):
        """Record iteration ``it``; return True when the solver should stop.

        ``moved``, when the caller has it: ``||W - W_old||^2 + ||b - b_old||^2``
        computed as here (the accepted trial's, see :func:`backtracking_step`).
        """
        if not self.objective:
            # objective scale: start and first iterate (objectives may be <= 0)
            self.scale = max(abs(self.f0), abs(f))
        # (||W||^2 is finite only if every entry is: one C call where the elementwise test takes two,
        # and the stopping test's scale below reuses it)
        squared = _vdot(W, W)
        if (not math.isfinite(f) or not (math.isfinite(squared) or _all(np.isfinite(W), axis=None))
                or f - self.best[0] > self.blowup * self.scale):
            self.diverged = True
            self.objective.append(float(f) if np.isfinite(f) else np.inf)
            return True
        self.objective.append(f)
        better, better_step = f < self.best[0], self.best_step is None or f < self.best_step[0]
        if better or better_step:  # (one copy serves both records: neither is modified in place)
            record = (f, W.copy(), b.copy()) if self._copies else (f, W, b)
            if better:
                self.best = record
            if better_step:
                self.best_step = record
        same_support = self._support is not None and same_indices(support, self._support)
        self._support = support
        if not (same_support or it == 1 or self.verbose >= 2):
            return False  # (the stopping test below needs an unchanged support or the first iteration)
        if moved is None:
            dW = W - W_old
            moved = _vdot(dW, dW)
            if b is not b_old:  # (an intercept that is no variable is passed on unchanged: its change is 0)
                db = b - b_old
                moved = moved + _vdot(db, db)
        change = math.sqrt(moved)
        scale = math.sqrt(squared + _intercept_size(b, self._origin))
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
        """Build the :class:`SolverResult` (best iterate where asked or needed).

        After a divergence, the best finite iterate *after at least one step*
        (it has selected ``k`` features, unlike a zero start); the start only
        when no step was finite.
        """
        if self.diverged:
            f, W, b = self.best_step if self.best_step is not None else self.best
            support = np.flatnonzero(np.any(W != 0, axis=1))
        elif self.keep_best:
            W, b = self.best[1], self.best[2]
            support = np.flatnonzero(np.any(W != 0, axis=1))
        return SolverResult(W, b, np.asarray(support), n_iter, self.objective,
                            self.converged, self.diverged, float(step),
                            refitted=self.refitted and not (self.diverged or self.keep_best))


def intercept_origin(loss):
    """The loss's :meth:`~sparse_estimators.losses.BaseLoss.intercept_origin` (None for a loss without it).

    (The solvers also take objectives that only follow the loss contract, e.g. the papers' constructed
    quadratics in ``tests/test_paper_liu_barber.py``, which do not derive from ``BaseLoss``.)
    """
    origin = getattr(loss, "intercept_origin", None)
    return None if origin is None else origin()


def _intercept_size(b, origin):
    """``||b - origin||^2`` (``||b||^2`` when ``origin`` is None): the intercept's part of an iterate's size."""
    if origin is None:
        return _vdot(b, b)
    d = b - origin
    return _vdot(d, d)


def project(operator, k, W):
    """Threshold the rows of ``W`` at level ``k``; returns ``(W, support)``."""
    return operator(W, k, return_support=True)


def gradient_step(loss, operator, k, W, b, gW, gb, eta, plain=False):
    """One thresholded gradient step ``P_k(W - eta gW)``; the intercept takes a plain step.

    ``plain``: ``operator`` is plain hard thresholding of rows (:func:`~sparse_estimators.solvers._iht.plain_hard`)
    and ``W``, ``gW`` are float64 arrays: the projection is the operator's own, without its dispatch and checks.

    Returns
    -------
    W_new, b_new, Z_new, f_new, support
        ``Z_new`` is the linear predictor at the new point (one product with
        ``X``), reused by the caller for the next gradient.
    """
    if plain:
        Wn, support = _hard_rows(W - eta * gW, k)
    else:
        Wn, support = project(operator, k, W - eta * gW)
    bn = b if gb is None else b - eta * gb
    Z = loss.linear_predictor(Wn, bn, support if support.ndim == 1 else None)  # (per-output: (m, k))
    return Wn, bn, Z, loss.value_from_z(Z, Wn), support


def _hard_rows(V, k):
    """``Hard()(V, k, return_support=True)`` for a float64 ``V`` (p, m): the same array and support."""
    support = select_top_k(_magnitudes(V), k)[0]
    return kept_rows(V, support), support


def initial_step(loss, step_size):
    """Absolute step from the ``step_size`` parameter, and ``L`` when it is needed.

    A float is the fixed step ``step_size / L`` (``L = loss.lipschitz()``).
    'auto' returns the optimistic start of the adaptive step,
    ``1 / loss.coordinate_lipschitz()`` (at least ``1/L``), and ``L = None``:
    backtracking needs no global constant (see :func:`backtracking_step`),
    which saves the eigenvalue computation (measured: about 70 % of an IHT
    fit on a 500 x 1000 design).
    """
    if isinstance(step_size, str) and step_size == "auto":
        Lc = loss.coordinate_lipschitz() if hasattr(loss, "coordinate_lipschitz") else loss.lipschitz()
        return 1.0 / max(Lc, _TINY), None
    L = loss.lipschitz()
    if L <= 0:
        L = 1.0
    return float(step_size) / L, L


def curvature_ratio(loss, f, fn, Z, W, b, Wn, bn, gW, gb, eta, penalty=0.0, Z_start=None):
    """How much of the quadratic upper model's allowance a trial step uses.

    Returns ``(f(x+) - f(x) - <g, x+ - x>) / (||x+ - x||^2 / (2 eta) - penalty)``:
    the model holds when the ratio is at most 1, and for a quadratic it
    would still hold at twice the step when the ratio is at most 1/2. The
    numerator is the loss's Bregman divergence: computed exactly from the
    two linear predictors when the loss can
    (:meth:`~sparse_estimators.losses.BaseLoss.divergence_from_z`, least
    squares, given ``Z_start``); otherwise from the values, and near
    convergence, where their difference is mostly rounding (it would accept
    any step), from gradients instead, which is exact for quadratics (as in
    TFOCS).

    Parameters
    ----------
    loss : BaseLoss
        The loss (its gradient is evaluated only in the rounding case).
    f, fn : float
        Objective at the current and at the trial point.
    Z : ndarray
        Linear predictor at the trial point.
    W, b, Wn, bn : ndarrays
        Current and trial points.
    gW, gb : ndarrays (``gb`` may be None)
        Gradient at the current point.
    eta : float
        Trial step.
    penalty : float, default=0.0
        Subtracted from the allowance (regularized IHT's exactly quadratic
        weighted penalty, at most half of it).
    Z_start : ndarray or None, default=None
        Linear predictor at the current point ``(W, b)``.

    Returns
    -------
    float
    """
    return _ratio_and_move(loss, f, fn, Z, W, b, Wn, bn, gW, gb, eta, penalty, Z_start)[0]


def _ratio_and_move(loss, f, fn, Z, W, b, Wn, bn, gW, gb, eta, penalty=0.0, Z_start=None):
    """:func:`curvature_ratio`, and the squared length of the step ``||Wn - W||^2 + ||bn - b||^2`` (its ``moved``)."""
    dW = Wn - W
    if bn is b:  # (an intercept that is no variable takes no step: its term is 0)
        db, moved = None, _vdot(dW, dW)
    else:
        db = bn - b
        moved = _vdot(dW, dW) + _vdot(db, db)
    allowance = moved / (2.0 * eta) - penalty
    if allowance <= 0.0:
        return 0.0, moved
    excess = None if Z_start is None else loss.divergence_from_z(Z_start, Z)
    if excess is not None:
        return float(excess / allowance), moved
    excess = fn - f - _vdot(gW, dW) - (0.0 if gb is None or db is None else _vdot(gb, db))
    if abs(excess) <= 1e-8 * abs(f):
        gWn, gbn = loss.gradient_from_z(Z, Wn)
        excess = 0.5 * (_vdot(gWn - gW, dW) + (0.0 if gb is None or db is None else _vdot(gbn - gb, db)))
    return float(excess / allowance), moved


def next_step(operator, W, support, eta, ratio, grow_on_stable=False):
    """The step to try next: ``2 eta`` if the accepted one used at most half of the allowance.

    Operators other than hard have fixed points that depend on the step, and
    a step that keeps being doubled and halved makes the iterates cycle
    (e.g. eta, 2 eta, rejected 2 eta, ...). So for them the step grows on a
    stable support (the new support is the current iterate's) only while
    ``grow_on_stable`` (the solver's :class:`StepGrowthLatch`: until a
    step is rejected twice on that support): it grows while the curvature
    along the steps allows, then settles, and the iteration converges.
    Never growing there (as before) left the step at its early value on
    near-separable logistic fits, whose curvature along the late steps is
    hundreds of times smaller, and the iterate drifting for thousands of
    iterations (doc/changelog.rst, issue 32).
    """
    if ratio > 0.5:
        return eta
    if (not operator.is_hard and not (grow_on_stable and ratio <= _policy.STABLE_GROWTH_RATIO)
            and same_indices(support, nonzero_rows(W))):
        return eta
    return 2.0 * eta


class StepGrowthLatch:
    """Whether the adaptive step may still grow on a stable support (operators other than hard).

    Open on each new support; closed when a trial step is rejected (halved
    by the backtracking) for the second time on that support, the mark of
    the cycle eta, 2 eta, rejected 2 eta, ...: the step then never doubles
    again on it and settles (see :func:`next_step`). A single rejection
    does not close it: early on, where the curvature along the steps is
    high, a step is rejected that the late steps, along flatter
    directions, accept.
    """

    def __init__(self):
        self.open = True
        self._support = None
        self._rejected = set()

    def update(self, support, tried, accepted):
        """Record a step: the support it selected, the step tried and the one accepted."""
        if self._support is None or not same_indices(support, self._support):
            self.open, self._rejected = True, set()
        elif accepted < tried:
            self.open = self.open and tried not in self._rejected
            self._rejected.add(tried)
        self._support = support


def backtracking_step(loss, operator, k, W, b, f, gW, gb, eta, L, Z=None, grow_on_stable=False, moved=None,
                      plain=False):
    """One thresholded gradient step with an adaptive step size (Liu & Barber, eq. 6).

    Tries ``eta`` and halves it until the quadratic upper model holds at the
    thresholded point,

        f(x+) <= f(x) + <g, x+ - x> + ||x+ - x||^2 / (2 eta),

    (see :func:`curvature_ratio`). The model holds for every ``eta <= 1/L``,
    so halving stops at a step of at least ``1/(2L)`` without knowing ``L``;
    when ``L`` is given the step never goes below ``1/L`` (a floor, accepted
    unconditionally). A safety cap of 60 halvings (a factor 1e18) bounds the
    loop. The step to try next is twice the accepted
    one only when the accepted step used at most half of the model's
    allowance (so the doubled step would pass on a quadratic); otherwise the
    same. Steps therefore settle instead of bouncing between a rejected
    ``2 eta`` and ``eta``, which operators other than hard need to converge
    (their fixed points depend on the step). ``Z``, the linear predictor at
    ``(W, b)``, lets least squares test the model exactly (see
    :func:`curvature_ratio`). ``grow_on_stable``: see :func:`next_step`
    (ignored after a rejected trial). ``moved``, a list or None: its first
    entry is set to the accepted step's ``||W_new - W||^2 + ||b_new - b||^2``
    (what :meth:`IterationMonitor.update` would compute again).

    Returns
    -------
    W_new, b_new, Z_new, f_new, support, eta, eta_next
        ``eta`` is the accepted step, ``eta_next`` the one to try next.
    """
    floor = 0.0 if L is None else 1.0 / L
    eta = max(eta, floor)
    for halvings in range(61):
        Wn, bn, Zn, fn, support = gradient_step(loss, operator, k, W, b, gW, gb, eta, plain)
        ratio, squared = _ratio_and_move(loss, f, fn, Zn, W, b, Wn, bn, gW, gb, eta, 0.0, Z)
        if eta <= floor or ratio <= 1.0 or halvings == 60:
            break
        eta = max(0.5 * eta, floor)
    if moved is not None:
        moved[0] = squared
    return Wn, bn, Zn, fn, support, eta, next_step(operator, W, support, eta, ratio,
                                                   grow_on_stable and halvings == 0)


class SupportJump:
    """Jump to the limit of hard-thresholding IHT once its support has settled.

    While the support of hard-thresholding iterates stays ``S``, the
    iteration is gradient descent on the loss restricted to ``S``, whose
    limit is the minimiser on ``S`` (:meth:`BaseLoss.refit`). After
    ``patience`` consecutive iterations that keep the support and do not
    raise the objective (a fixed step too large for the loss must still be
    reported as divergent), this computes that point directly and checks
    that it is a fixed point of the thresholded step with step ``eta``:
    ``P_k(W - eta grad f(W))`` keeps ``S`` (the gradient on ``S`` is zero, so
    the step then returns the same point). A fixed point is where iterating
    would have converged; otherwise the iteration continues from the
    minimiser, whose loss is no higher.

    Parameters
    ----------
    loss : BaseLoss
    operator : ThresholdingOperator
        Only hard thresholding jumps (the fixed points of the others are not
        minimisers on their support).
    k : int
    patience : int
        0 never jumps.
    support : ndarray
        Support of the starting point.
    f : float
        Objective at the starting point.
    """

    def __init__(self, loss, operator, k, patience, support, f):
        self.loss, self.operator, self.k = loss, operator, k
        self.patience = patience if operator.is_hard and getattr(operator, "settles", True) else 0
        self.support, self.f, self.count = support, f, 0
        self.gradient = self.linear_predictor = None  # at the last minimiser jumped to

    def reset(self, support, f):
        """Record an iteration that may not count towards the patience (e.g. a weighted support)."""
        self.support, self.f, self.count = support, f, 0

    def __call__(self, W, b, f, support, eta, monitor):
        """Record an iteration's result; jump when the support has settled.

        Returns ``None`` (no jump) or ``(W, b, Z, f)`` at the minimiser; the
        jump completes the iteration (it replaces the last entry of
        ``monitor.objective``) and sets ``monitor.converged`` (and
        ``monitor.refitted``) to whether the minimiser is a fixed point.
        """
        settled = same_indices(support, self.support) and f <= self.f
        self.count = self.count + 1 if settled else 0
        self.support, self.f = support, f
        if not self.patience or self.count < self.patience:
            return None
        self.count = 0
        loss = self.loss
        Wr, br = self.operator.refit(loss, support, W, b)
        Z = loss.linear_predictor(Wr, br, support)
        fr = loss.value_from_z(Z, Wr)
        if not fr <= f:
            return None
        gW = self.gradient = loss.gradient_from_z(Z, Wr)[0]
        self.linear_predictor = Z
        self.f = fr
        monitor.objective[-1] = fr
        monitor.converged = same_indices(self.operator.support(Wr - eta * gW, self.k), support)
        monitor.refitted = monitor.converged  # solvers stop at a fixed point, else move on
        return Wr, br, Z, fr
