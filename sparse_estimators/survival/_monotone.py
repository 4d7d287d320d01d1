"""The monotone likelihood of the Cox model: whether the partial likelihood has a maximum on given columns.

The log partial likelihood is concave and at most 0; it rises along a
direction ``beta`` for ever (towards a supremum it never reaches, so that the
unpenalised maximum does not exist and the coefficients grow without bound)
exactly when
every event has the largest score ``x beta`` of its risk set and at least
one has a strictly larger score than some row of its risk set (Bryson and
Johnson, 1981; Heinze and Schemper, Biometrics 57, 2001). Rare events make
it likely: one event out of 40 rows is the largest of its risk set along
some pair of features of six. :func:`monotone_direction` answers exactly,
and cheaply on ordinary data:

1. the fitted coefficients themselves: if they order every event before its
   risk set, they are such a direction (``O(n log n)``);
2. else a certificate that none exists (Stiemke's alternative): the score at
   ``beta = 0``, minus the gradient of the negative log partial likelihood,
   is a non-negative combination of the vectors ``x_j - x_i`` (``i`` an event,
   ``j`` in its risk set) built from each event's risk-set extremes along each
   column (a non-negative least-squares fit with zero residual, ``O(n k)``);
3. else a linear programme over all rows decides (HiGHS, ``O(n)`` constraints).
"""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog, nnls

from .. import _policy

__all__ = ["MonotoneLikelihoodWarning", "monotone_direction"]


class MonotoneLikelihoodWarning(UserWarning):
    """The Cox partial likelihood on the selected features has no maximum (monotone likelihood).

    Along some direction of the selected features' coefficients every event
    has the largest risk score of its risk set, so the unpenalised
    coefficients would grow without bound: the fitted ``coef_`` is set by
    the l2 term ``alpha`` (or, with ``alpha=0``, by where the solver
    stopped), not by the data. Typical with few events. A UserWarning, not a
    ConvergenceWarning: with ``alpha > 0`` the solver converged, to the
    penalised optimum; the data leave the unpenalised one undefined (as
    statsmodels' ``PerfectSeparationWarning`` for logistic regression).
    """


def _risk_extremes(values, starts):
    """Per start in the time-sorted order: the largest and smallest ``values`` from there on, and their rows."""
    n = values.shape[0]
    rev = values[::-1]
    idx = np.arange(n)[:, None] * np.ones((1, values.shape[1]), dtype=np.intp)
    out = []
    for sign in (1.0, -1.0):
        best = np.maximum.accumulate(sign * rev, axis=0)
        # the row (in reversed order) of the running extreme: the last position where the running value is new
        new = np.concatenate([np.ones((1, values.shape[1]), bool), best[1:] > best[:-1]])
        where = np.maximum.accumulate(np.where(new, idx, 0), axis=0)
        out.append((n - 1 - where)[::-1][starts])
    return out


def _risk_set_extremes(eta, order, starts):
    """The largest and smallest ``eta`` of each event's risk set (``starts`` in the time-sorted ``order``)."""
    e = eta[order][::-1]
    return np.maximum.accumulate(e)[::-1][starts], np.minimum.accumulate(e)[::-1][starts]


def _separates(eta, event, order, starts):
    """Whether every event's ``eta`` is the largest of its risk set, and some strictly above a row of it."""
    top, low = _risk_set_extremes(eta, order, starts)
    mine = eta[event]
    return bool(np.all(mine >= top) and np.any(mine > low))


def _no_direction_certificate(A, event, order, starts):
    """True when the score at 0 is a non-negative combination of some pairs' ``x_j - x_i`` (no direction exists)."""
    dead = np.flatnonzero(event)
    sorted_A = A[order]
    # the score: sum over events of x_i minus the mean of its risk set (any positive weights on the pairs do)
    tail = np.cumsum(sorted_A[::-1], axis=0)[::-1]
    size = (A.shape[0] - starts)[:, None]
    target = (A[dead] - tail[starts] / size).sum(axis=0)
    norm = float(np.linalg.norm(target))
    if norm == 0.0:  # (the score is a combination with positive weights of every pair: no direction)
        return True
    for size in _policy.COX_MONOTONE_CERTIFICATE_EVENTS:  # (a few events' vectors usually do)
        pick = np.unique(np.linspace(0, dead.size - 1, min(dead.size, size)).round().astype(np.intp))
        top, low = _risk_extremes(sorted_A, starts[pick])
        rows = np.concatenate([top, low], axis=1)  # (events, 2k) rows of the sorted order
        V = sorted_A[rows] - A[dead[pick]][:, None, :]
        _, residual = nnls(V.reshape(-1, A.shape[1]).T, target)
        if residual <= 1e-9 * norm:
            return True
        if pick.size == dead.size:
            break
    return False


def _lp_direction(A, event, time, positive):
    """The linear programme: a direction of rising likelihood, or None.

    Variables ``beta`` (in ``[-1, 1]``, ``[0, 1]`` if ``positive``) and, per event time ``g``, a bound ``u_g`` on
    the scores of its risk set: ``x_j beta <= u_g`` for the rows whose last event time at risk is ``g``,
    ``u_{g+1} <= u_g``, and ``u_g <= x_i beta`` for its events. The objective, the gaps of those inequalities,
    is positive exactly when some event is strictly above a row of its risk set.
    """
    n, k = A.shape
    times = np.unique(time[event])
    G = times.size
    block = np.searchsorted(times, time, side="right") - 1
    at, dead = np.flatnonzero(block >= 0), np.flatnonzero(event)
    m = at.size
    first, chain, last = np.arange(m), m + np.arange(G - 1), m + G - 1 + np.arange(dead.size)
    U = sp.csr_matrix((np.concatenate([-np.ones(m), np.ones(G - 1), -np.ones(G - 1), np.ones(dead.size)]),
                       (np.concatenate([first, chain, chain, last]),
                        np.concatenate([block[at], np.arange(1, G), np.arange(G - 1), block[dead]]))),
                      shape=(m + G - 1 + dead.size, G))
    B = sp.csr_matrix(np.vstack([A[at], np.zeros((G - 1, k)), -A[dead]]))
    c_u = -np.bincount(block[at], minlength=G).astype(float)
    c_u[0] -= 1.0
    c_u[G - 1] += 1.0
    c = np.concatenate([A[at].sum(axis=0), c_u])
    bounds = [(0.0 if positive else -1.0, 1.0)] * k + [(None, None)] * G
    res = linprog(c, A_ub=sp.hstack([B, U]).tocsr(), b_ub=np.zeros(B.shape[0]), bounds=bounds, method="highs")
    if res.status != 0 or not -res.fun > 1e-6 * m:  # (HiGHS's tolerances: gaps of 1e-7 on unit-scale columns)
        return None
    return res.x[:k]


def monotone_direction(A, event, time, sample_weight=None, coef=None, positive=False, sorted_index=None):
    """A direction of the coefficients of ``A``'s columns along which the partial likelihood rises for ever.

    Parameters
    ----------
    A : ndarray of shape (n_samples, n_columns)
        The columns (the selected features).
    event : ndarray of bool of shape (n_samples,)
    time : ndarray of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,) or None
        Rows of weight 0 are left out (as if absent); positive weights do not matter.
    coef : ndarray of shape (n_columns,) or None
        The fitted coefficients, tried first as the direction.
    positive : bool, default=False
        Only directions of non-negative coefficients (the fit's constraint).
    sorted_index : tuple or None
        ``(order, starts)`` if known (used only when every weight is positive):
        ``order = np.argsort(time, kind="stable")`` and, for each event in row
        order, the position in ``time[order]`` where its risk set starts.

    Returns
    -------
    ndarray of shape (n_columns,) or None
        The direction, None when the unpenalised maximum exists (no direction rises for ever).
    """
    A = np.asarray(A, dtype=float)
    keep = np.ones(A.shape[0], bool) if sample_weight is None else np.asarray(sample_weight) > 0
    A, event, time = A[keep], np.asarray(event, bool)[keep], np.asarray(time, float)[keep]
    if A.shape[1] == 0 or not event.any():
        return None
    if sorted_index is not None and keep.all():
        order, starts = sorted_index
    else:
        order = np.argsort(time, kind="stable")
        starts = np.searchsorted(time[order], time[event], side="left")  # each event's risk set in the sorted order
    if coef is not None and _separates(A @ coef, event, order, starts):
        return np.asarray(coef, dtype=float)
    A = A - A.mean(axis=0)
    spread = np.abs(A).max(axis=0)
    spread[spread == 0] = 1.0
    A /= spread  # (unit scale: the tolerances below are relative to it)
    if _no_direction_certificate(A, event, order, starts):
        return None
    beta = _lp_direction(A, event, time, positive)
    if beta is None:
        return None
    eta = A @ beta
    top, _ = _risk_set_extremes(eta, order, starts)
    if np.min(eta[event] - top) < -1e-9 * float(np.abs(eta).max()):  # (the programme's answer, checked)
        return None
    return beta / spread
