"""Deterministic top-k selection, shared by every thresholding operator."""

import math

import numpy as np

_NAN_MESSAGE = "Cannot threshold: the magnitudes contain NaN (a NaN in the input or a diverged iterate)."


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
    order = magnitudes.argpartition((p - k - 1, p - k))
    top = magnitudes[order[p - k - 1:]]
    # (NaN sorts last: it would be in the top k or left out; a sum is NaN when an entry is, one C call)
    if math.isnan(np.add.reduce(top)) and np.isnan(top).any():
        raise ValueError(_NAN_MESSAGE)
    below, kth = top[0], top[1]  # (magnitudes[order[p - k - 1]] and magnitudes[order[p - k]])
    if below < kth:  # no tie at the k-th value: the support is the last k positions (sorted)
        support = order[p - k:]
        support.sort()
        return support, float(below)
    greater = np.flatnonzero(magnitudes > kth)
    support = np.concatenate([greater, np.flatnonzero(magnitudes == kth)[: k - greater.size]])
    support.sort()
    return support, float(below)


def _square_limits(dtype):
    """``(tiny / eps, max)`` of ``dtype``: sums of squares outside them lost digits to underflow, or overflowed."""
    limits = _SQUARE_LIMITS.get(dtype)
    if limits is None:
        info = np.finfo(dtype if dtype.kind == "f" else np.float64)
        limits = _SQUARE_LIMITS[dtype] = (float(info.tiny / info.eps), float(info.max))
    return limits


_SQUARE_LIMITS = {}


def unit_norms(Z, codes=None, n_units=None):
    """The l2 norm of each row of ``Z`` (p, m), or of each group of rows (``codes``: the unit of each row).

    ``np.sqrt`` of the sums of squares, except for units whose sum of squares
    left the floating-point range (``inf``, above about 1e154 for float64) or
    fell below ``tiny / eps`` (about 1e-292, where underflowed squares make it
    imprecise or 0 below 1e-154): those are recomputed scaled by their largest
    magnitude, so that the norms, and the ranking by them, are positively
    homogeneous at every scale; the others keep the plain sum (bit-identical).

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
    norms = np.sqrt(squares)
    low, high = _square_limits(squares.dtype)
    # (two O(p) reductions; NaN fails the test and is left as it is, for the selection's NaN check)
    if not squares.size or (np.minimum.reduce(squares) >= low and np.maximum.reduce(squares) <= high):
        return norms
    bad = np.flatnonzero((squares < low) | (squares > high))
    if not bad.size:
        return norms
    rows = bad if codes is None else np.flatnonzero(np.isin(codes, bad))
    sub = np.abs(Z[rows])
    top = sub.max(axis=1, initial=0.0)
    if codes is not None:  # (the largest magnitude of each unit, for each of its rows)
        unit_top = np.zeros(n_units, dtype=top.dtype)
        np.maximum.at(unit_top, codes[rows], top)
        top = unit_top[codes[rows]]
    scalable = (top > 0) & np.isfinite(top)  # (0: a zero unit; inf: an infinite entry, the norm is inf)
    scaled = sub / np.where(scalable, top, 1.0)[:, None]
    scaled_squares = np.einsum("ij,ij->i", scaled, scaled)
    if codes is None:
        norms[rows[scalable]] = top[scalable] * np.sqrt(scaled_squares[scalable])
    else:
        sums = np.bincount(codes[rows], weights=scaled_squares, minlength=n_units)
        factor = np.zeros(n_units)
        factor[codes[rows]] = np.where(scalable, top, 0.0)
        fix = bad[factor[bad] > 0]
        norms[fix] = factor[fix] * np.sqrt(sums[fix])
    return norms
