"""Survival targets: validation of the structured ``y``, Harrell's concordance index, step functions."""

import numpy as np

__all__ = ["StepFunction", "check_survival_target", "concordance_index"]

#: the structured array scikit-survival's ``Surv.from_arrays(event, time)`` builds
_EXPECTED = ("y must be a structured array with two fields, the event indicator (bool) first and the time "
             "(float) second, as sksurv.util.Surv.from_arrays(event, time) builds it (e.g. "
             "np.array(list(zip(event, time)), dtype=[('event', bool), ('time', float)]))")


def check_survival_target(y, n_samples=None):
    """The event indicator and the times of a survival target ``y``, checked.

    Parameters
    ----------
    y : structured ndarray of shape (n_samples,)
        Two fields: the event indicator (bool) first, the observed time
        (event or censoring, a finite number >= 0) second, whatever their
        names (scikit-survival's convention: ``Surv.from_arrays`` names them
        ``'event'`` and ``'time'``, its data sets e.g. ``'fstat'`` and
        ``'lenfol'``).
    n_samples : int or None
        The number of rows of ``X``, which ``y`` must match.

    Returns
    -------
    event : ndarray of bool of shape (n_samples,)
    time : ndarray of float64 of shape (n_samples,)

    Raises
    ------
    ValueError
        Naming ``y``, for anything else: a numeric array, other fields,
        non-finite or negative times, or no event at all.
    """
    if y is None:
        raise ValueError("This estimator requires y to be passed, but the target y is None: pass the structured "
                         "array (event, time).")
    names = getattr(getattr(y, "dtype", None), "names", None)
    if not isinstance(y, np.ndarray) or names is None or len(names) != 2:
        got = (f"an array of dtype {y.dtype} and shape {y.shape}" if isinstance(y, np.ndarray)
               else f"a {type(y).__name__}")
        raise ValueError(f"{_EXPECTED}; got {got}.")
    event_name, time_name = names
    if y.dtype[event_name].kind != "b":
        raise ValueError(f"{_EXPECTED}; the first field of y, {event_name!r}, has dtype {y.dtype[event_name]}, "
                         "not bool.")
    if y.dtype[time_name].kind not in "fiu":
        raise ValueError(f"{_EXPECTED}; the second field of y, {time_name!r}, has dtype {y.dtype[time_name]}, "
                         "not a number.")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one record per sample); got shape {y.shape}.")
    event = np.asarray(y[event_name], dtype=bool)
    time = np.asarray(y[time_name], dtype=float)
    if not np.all(np.isfinite(time)):
        raise ValueError(f"The times of y (field {time_name!r}) contain NaN or infinity.")
    if np.any(time < 0):
        raise ValueError(f"The times of y (field {time_name!r}) must be >= 0; got {float(time.min())!r}.")
    if n_samples is not None and event.size != n_samples:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: X has {n_samples}, "
                         f"y has {event.size}.")
    if not event.any():
        raise ValueError("Every sample of y is censored (no event): the Cox model needs at least one event.")
    return event, time


def concordance_index(event, time, estimate, sample_weight=None, tied_tol=1e-8):
    """Harrell's concordance index of risk scores ``estimate`` (higher: earlier event).

    A pair ``(i, j)`` is comparable when ``i`` has an event and ``j`` was
    observed longer (``time_j > time_i``, or ``time_j == time_i`` with ``j``
    censored); it is concordant when ``estimate_i > estimate_j``, and
    estimates within ``tied_tol`` count one half. Unweighted, this is
    scikit-survival's ``concordance_index_censored(...)[0]``; with weights a
    pair counts ``w_i w_j`` (integer weights act as repeated rows). Computed
    in blocks of events against all samples, O(n_events n) time.

    Parameters
    ----------
    event : ndarray of bool of shape (n_samples,)
    time : ndarray of shape (n_samples,)
    estimate : ndarray of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,) or None
    tied_tol : float, default=1e-8

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When no pair is comparable.
    """
    event = np.asarray(event, dtype=bool)
    time = np.asarray(time, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    w = np.ones(time.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    dead = np.flatnonzero(event & (w > 0))
    numerator = denominator = 0.0
    block = max(1, 2 ** 22 // max(time.size, 1))  # (about 4M pairs at a time)
    for start in range(0, dead.size, block):
        i = dead[start:start + block]
        ti, ei = time[i, None], estimate[i, None]
        comparable = (time > ti) | ((time == ti) & ~event)
        diff = estimate - ei
        tied = np.abs(diff) <= tied_tol
        score = np.where(tied, 0.5, (diff < 0).astype(float)) * comparable
        numerator += float(w[i] @ (score @ w))
        denominator += float(w[i] @ (comparable @ w))
    if denominator == 0:
        raise ValueError("y has no comparable pair (an event observed before another sample's time): the "
                         "concordance index is undefined.")
    return numerator / denominator


class StepFunction:
    """A right-continuous step function ``f(z) = a y_i + b`` for ``x_i <= z < x_{i+1}``.

    The interface of scikit-survival's ``sksurv.functions.StepFunction``
    (attributes ``x``, ``y``, ``a``, ``b``, ``domain``; calling it outside
    its domain raises a ValueError), so that code written for
    scikit-survival's predicted functions works with these; it is a class
    of this package (scikit-survival is not a dependency), so
    ``isinstance(f, sksurv.functions.StepFunction)`` is False.

    Parameters
    ----------
    x : ndarray of shape (n_points,)
        Ascending knots.
    y : ndarray of shape (n_points,)
        Values at the knots.
    a : float, default=1.0
        Factor applied to ``y``.
    b : float, default=0.0
        Offset.
    domain : tuple, default=(0, None)
        ``(lower, upper)``; None means the first or last knot.
    """

    def __init__(self, x, y, *, a=1.0, b=0.0, domain=(0, None)):
        if len(x) != len(y):
            raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}.")
        self.x = x
        self.y = y
        self.a = a
        self.b = b
        lower = self.x[0] if domain[0] is None else domain[0]
        upper = self.x[-1] if domain[1] is None else domain[1]
        self._domain = (float(lower), float(upper))

    @property
    def domain(self):
        """``(lower, upper)``: the values the function accepts."""
        return self._domain

    def __call__(self, x):
        """The function at ``x`` (a float, or an array of shape (n_values,)), within :attr:`domain`."""
        x = np.atleast_1d(x)
        if not np.isfinite(x).all():
            raise ValueError("x must be finite")
        if np.min(x) < self._domain[0] or np.max(x) > self._domain[1]:
            raise ValueError(f"x must be within [{self._domain[0]:f}; {self._domain[1]:f}]")
        x = np.clip(x, a_min=self.x[0], a_max=None)  # (before the first knot: its value, as scikit-survival)
        i = np.searchsorted(self.x, x, side="right") - 1
        value = self.a * self.y[i] + self.b
        return value[0] if value.shape[0] == 1 else value

    def __repr__(self):
        return f"StepFunction(x={self.x!r}, y={self.y!r}, a={self.a!r}, b={self.b!r})"

    def __eq__(self, other):
        if isinstance(other, type(self)):
            return (np.array_equal(self.x, other.x) and np.array_equal(self.y, other.y)
                    and self.a == other.a and self.b == other.b)
        return False

    __hash__ = None
