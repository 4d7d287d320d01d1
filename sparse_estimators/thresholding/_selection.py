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
    # (ndarray.nonzero of the 1-D masks: np.flatnonzero's result without its three Python wrappers)
    greater = (magnitudes > kth).nonzero()[0]
    support = np.concatenate([greater, (magnitudes == kth).nonzero()[0][: k - greater.size]])
    support.sort()
    return support, float(below)
