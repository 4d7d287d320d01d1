"""Exact power-of-two rescaling of data of extreme magnitude (the solvers' squares and steps stay in range)."""


import math

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
    return _power_of_two(-int((exponents.min() + exponents.max()) // 2 - 1))


def _power_of_two(exponent):
    """``2**exponent``: a float where one holds it exactly, else a :class:`_BeyondFloat` (subnormal data's scale)."""
    return math.ldexp(1.0, exponent) if -1074 <= exponent <= 1023 else _BeyondFloat(exponent)


def _exponent(scale):
    """The exponent of a power of two ``scale`` (a float or a :class:`_BeyondFloat`)."""
    return scale.exponent if isinstance(scale, _BeyondFloat) else math.frexp(scale)[1] - 1


class _BeyondFloat:
    """A power of two beyond float range: the scale of data whose magnitudes are subnormal (below ``2**-1022``).

    Products with arrays and floats are taken in two (or more) exact steps by powers of two that floats hold (each
    intermediate is the exact product, unless it leaves float range); products and quotients of powers of two
    are powers of two (a float when one holds them). Equal to no float (in particular not 1: data rescaled).
    """

    __array_ufunc__ = None  # (NumPy and dask defer ``A * scale`` to __rmul__)

    def __init__(self, exponent):
        self.exponent = int(exponent)

    def __repr__(self):
        return f"2**{self.exponent}"

    def __mul__(self, other):
        if isinstance(other, _BeyondFloat) or (isinstance(other, float) and _is_power_of_two(other)):
            return _power_of_two(self.exponent + _exponent(other))
        return _in_steps(other, self.exponent, 1000)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, _BeyondFloat) or (isinstance(other, float) and _is_power_of_two(other)):
            return _power_of_two(self.exponent - _exponent(other))
        return self * (1.0 / other)

    def __rtruediv__(self, other):
        return other * _power_of_two(-self.exponent)

    def __eq__(self, other):
        return isinstance(other, _BeyondFloat) and other.exponent == self.exponent

    def __hash__(self):
        return hash(("_BeyondFloat", self.exponent))


def _in_steps(A, exponent, largest):
    """``A * 2**exponent`` as products by balanced powers of two of exponents at most ``largest`` in magnitude."""
    steps = max(1, -(-abs(exponent) // largest))
    for step in range(steps, 0, -1):
        part = exponent // step
        A, exponent = A * math.ldexp(1.0, part), exponent - part
    return A


def _is_power_of_two(value):
    """Whether the float ``value`` is a positive power of two (normal or subnormal)."""
    return value > 0.0 and math.frexp(value)[0] == 0.5


#: the magnitudes whose squares (and sums of them) floats hold with their digits: the dask paths' one-pass
#: moments are taken in X's units, before any rescaling (2^-511 squared is the smallest normal float)
_MOMENTS_RANGE = (2.0 ** -500, 2.0 ** 500)


def _check_moments_range(high, low, name):
    """Refuse data (a dask ``X`` or ``y`` of extremes ``high``, ``low``) whose one-pass moments under- or overflowed."""
    top = max(float(np.max(high, initial=0.0)), -float(np.min(low, initial=0.0)))
    if top != 0.0 and not _MOMENTS_RANGE[0] <= top <= _MOMENTS_RANGE[1]:
        raise ValueError(f"The largest magnitude of {name} ({top:.3g}) is outside [2**-500, 2**500], where the "
                         f"squares of a dask {name}'s one-pass statistics lose their digits: multiply {name} by a "
                         f"power of two, or fit on {name}.compute().")


def _scale_from_extremes(high, low, centred=False):
    """:func:`_power_of_two_scale` of an array whose columns' extremes are ``high`` and ``low``."""
    ext = high - low if centred else np.maximum(high, -low)
    top = float(ext.max(initial=0.0))
    return 1.0 if top == 0.0 or _policy.SCALE_RANGE[0] <= top <= _policy.SCALE_RANGE[1] else _scale_of(ext)


def _rescaled(A, centred=False):
    """``A`` times :func:`_power_of_two_scale` (a copy only when that is not 1), and the factor."""
    scale = _power_of_two_scale(A, centred)
    if scale == 1.0:
        return A, scale
    if A.dtype == np.float32 and not isinstance(scale, _BeyondFloat):  # (float32 holds powers of two to 2^127)
        return _in_steps(A, _exponent(scale), 120), scale
    return A * scale, scale


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
    if isinstance(x_scale, _BeyondFloat):  # (subnormal data: alpha x_scale^2 exceeds 2^972, past the cap)
        return max(alpha, _policy.RESCALED_ALPHA_MAX)
    return min(alpha * x_scale * x_scale, max(alpha, _policy.RESCALED_ALPHA_MAX))
