"""Deterministic top-k selection, shared by every thresholding operator."""

import math

import numpy as np

_NAN_MESSAGE = "Cannot threshold: the magnitudes contain NaN (a NaN in the input or a diverged iterate)."


def kth_pair(i):
    """``np.array((i, i + 1))``, built once per ``i`` (read-only).

    ``argpartition``'s ``kth`` without the conversion of a tuple: a microsecond of a call that the solvers
    make every iteration.
    """
    pair = _KTH_PAIRS.get(i)
    if pair is None:
        pair = np.array((i, i + 1), dtype=np.intp)
        pair.setflags(write=False)
        if len(_KTH_PAIRS) < 4096:  # (bounded: the levels and sizes of a session's fits)
            _KTH_PAIRS[i] = pair
    return pair


_KTH_PAIRS = {}


def select_top_k(magnitudes, k):
    """Indices of the ``k`` largest magnitudes, sorted, with ties to the lower index.

    Runs in O(p) (one partition) rather than a full sort: ``np.argpartition``
    alone does not break ties deterministically, so the entries equal to the
    k-th largest value are filled in index order.

    Parameters
    ----------
    magnitudes : ndarray of shape (p,)
        Non-negative scores (absolute values or row norms).
    k : int
        Number of entries to keep. ``k >= p`` keeps all of them.

    Returns
    -------
    support : ndarray of shape (min(k, p),), dtype intp
        Sorted indices of the kept entries.
    tau : float
        The largest magnitude outside the support (the (k+1)-th largest
        magnitude), 0.0 when every entry is kept.

    Raises
    ------
    ValueError
        If a magnitude is NaN (no order is defined).
    """
    if type(magnitudes) is not np.ndarray:
        magnitudes = np.asarray(magnitudes)
    p = magnitudes.shape[0]
    if k >= p:
        if np.isnan(magnitudes).any():
            raise ValueError(_NAN_MESSAGE)
        return np.arange(p), 0.0
    if k <= 0:
        return np.empty(0, dtype=np.intp), float(magnitudes.max(initial=0.0))
    # one partition places both the k-th largest value and the (k+1)-th, which
    # is the largest magnitude left out whether or not the k-th one is tied
    order = magnitudes.argpartition(kth_pair(p - k - 1))
    top = magnitudes[order[p - k - 1:]]
    # (NaN sorts last: it would be in the top k or left out; a sum is NaN when an entry is, one C call)
    if math.isnan(np.add.reduce(top)) and np.isnan(top).any():
        raise ValueError(_NAN_MESSAGE)
    below, kth = top[0], top[1]  # (magnitudes[order[p - k - 1]] and magnitudes[order[p - k]])
    if below < kth:  # no tie at the k-th value: the support is the last k positions (sorted)
        support = order[p - k:]
        support.sort()
        return support, float(below)
    # (ndarray.nonzero of the 1-D masks: np.flatnonzero's result without its three Python wrappers)
    greater = (magnitudes > kth).nonzero()[0]
    support = np.concatenate([greater, (magnitudes == kth).nonzero()[0][: k - greater.size]])
    support.sort()
    return support, float(below)


def _square_limits(dtype):
    """``(sqrt(tiny), sqrt(max))`` of ``dtype``: the largest sum of squares outside them is rescaled first."""
    limits = _SQUARE_LIMITS.get(dtype)
    if limits is None:
        info = np.finfo(dtype if dtype.kind == "f" else np.float64)
        limits = _SQUARE_LIMITS[dtype] = (float(np.sqrt(info.tiny)), float(np.sqrt(info.max)))
    return limits


_SQUARE_LIMITS = {}


def unit_norms(Z, codes=None, n_units=None):
    """The l2 norm of each row of ``Z`` (p, m), or of each group of rows (``codes``: the unit of each row).

    ``np.sqrt`` of the sums of squares; when the largest sum leaves
    ``[sqrt(tiny), sqrt(max)]`` of the dtype (norms beyond about 1e154 overflow
    to ``inf`` in float64, below 1e-154 they underflow to imprecise values or
    0), each unit is first scaled by the power of two that brings its
    largest finite magnitude into [1, 2) and its norm scaled back: exact, so
    the norms and the ranking by them are positively homogeneous at every
    scale, and the plain sums (bit-identical) for data of ordinary scale.

    Parameters
    ----------
    Z : ndarray of shape (p, m)
    codes : ndarray of int of shape (p,) or None
        The unit of each row; ``None``: each row is a unit.
    n_units : int or None
        The number of units (``codes`` in ``0 .. n_units - 1``).

    Returns
    -------
    ndarray of shape (p,) or (n_units,)
    """
    squares = np.einsum("ij,ij->i", Z, Z)
    if codes is not None:
        squares = np.bincount(codes, weights=squares, minlength=n_units)
    low, high = _square_limits(Z.dtype)
    top = np.maximum.reduce(squares) if squares.size else low  # (one O(p) reduction; NaN: left to the selection)
    if not (top > high or top < low):  # (0 included: every square may have underflowed)
        return np.sqrt(squares)
    # each unit scaled by the power of two of its largest finite magnitude (exact): no square under- or
    # overflows unless the unit's entries span more than the dtype's range
    magnitudes = np.abs(Z)
    unit_top = magnitudes.max(axis=1, initial=0.0, where=np.isfinite(magnitudes))
    if codes is not None:
        row_top, unit_top = unit_top, np.zeros(n_units, dtype=unit_top.dtype)
        np.maximum.at(unit_top, codes, row_top)
    exponent = np.frexp(unit_top)[1]
    scaled = np.ldexp(Z, -(exponent if codes is None else exponent[codes])[:, None])
    squares = np.einsum("ij,ij->i", scaled, scaled)
    if codes is not None:
        squares = np.bincount(codes, weights=squares, minlength=n_units)
    return np.ldexp(np.sqrt(squares), exponent)
