"""Exact power-of-two rescaling of data of extreme magnitude (the solvers' squares and steps stay in range)."""


import numpy as np
import scipy.sparse as sp

from .. import _policy
from ..losses._design import column_extremes, known_extremes

_max, _min = np.maximum.reduce, np.minimum.reduce


def _power_of_two_scale(A, centred=False):
    """A power of two bringing the largest magnitude of ``A`` into [1, 2) when it lies outside ``_policy.SCALE_RANGE``.

    Extreme scales (1e-150 .. 1e150) overflow or underflow the solvers'
    squares and step sizes; an exact power of two changes no digit, and
    data of ordinary scale get 1 (untouched). ``centred=True`` (a 2-D ``A``
    whose columns are centred, for the classifiers, whose ridge term is not
    scale-free) measures the columns' ranges instead of their magnitudes,
    so that a constant added to a column does not change the scale.
    """
    if centred and A.ndim == 2:
        high, low = column_extremes(A)
        ext = high - low
        top = float(ext.max(initial=0.0))
    elif (known := known_extremes(A)) is not None:  # (the set-up's own: no pass over A)
        high, low = known
        top = max(float(_max(high)), -float(_min(low))) if high.size else 0.0
        ext = None
    else:
        data = A.data if sp.issparse(A) else A
        # (no temporary of A's size; ufunc reductions: the values of max() and min(), without their Python wrappers)
        top = max(float(_max(data, axis=None)), -float(_min(data, axis=None))) if data.size else 0.0
        ext = None
    if top == 0.0 or _policy.SCALE_RANGE[0] <= top <= _policy.SCALE_RANGE[1]:
        return 1.0
    # the middle, in exponents, of the columns' largest magnitudes: headroom both ways when they differ
    if ext is None and A.ndim == 2:
        high, low = column_extremes(A)
        ext = np.maximum(high, -low)
    elif ext is None:
        ext = np.array([top])
    return _scale_of(ext)


def _scale_of(ext):
    """The power of two of :func:`_power_of_two_scale` from the columns' largest magnitudes ``ext`` (out of range)."""
    exponents = np.frexp(ext[ext > 0])[1]
    return float(np.ldexp(1.0, -int((exponents.min() + exponents.max()) // 2 - 1)))


def _scale_from_extremes(high, low, centred=False):
    """:func:`_power_of_two_scale` of an array whose columns' extremes are ``high`` and ``low``."""
    ext = high - low if centred else np.maximum(high, -low)
    top = float(ext.max(initial=0.0))
    return 1.0 if top == 0.0 or _policy.SCALE_RANGE[0] <= top <= _policy.SCALE_RANGE[1] else _scale_of(ext)


def _rescaled(A, centred=False):
    """``A`` times :func:`_power_of_two_scale` (a copy only when that is not 1), and the factor."""
    scale = _power_of_two_scale(A, centred)
    return (A if scale == 1.0 else A * scale), scale


def _rescaled_alpha(alpha, x_scale):
    """The l2 strength on the coefficients of ``X * x_scale`` that is ``alpha`` on those of ``X``: ``alpha x_scale^2``.

    ``alpha/2 ||coef||^2 = alpha x_scale^2 / 2 ||w||^2`` with ``w = coef / x_scale`` (the rescaled problem's
    coefficients): exact, ``x_scale`` being a power of two, and ``alpha`` itself for data of ordinary magnitude.
    Data far below ``_policy.SCALE_RANGE`` give a product beyond ``_policy.RESCALED_ALPHA_MAX`` (or float range),
    where the penalty outweighs the loss's curvature on the rescaled data by so much that the fit is
    the null model to rounding: it is capped there (or at ``alpha``, when larger), finite.
    """
    if x_scale == 1.0 or alpha == 0.0:
        return alpha
    return min(alpha * x_scale * x_scale, max(alpha, _policy.RESCALED_ALPHA_MAX))
