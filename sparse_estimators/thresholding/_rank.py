"""Thresholding lifted to singular values: the rank-r projection (Liu & Barber, Sec. 5, eq. 20).

A thresholding operator at sparsity level ``r`` acts on a matrix through its
spectrum: keep the ``r`` largest singular triplets, shrink their singular
values with the operator's scalar map ``shrink(a, tau)`` where ``tau`` is the
``(r+1)``-th singular value, and rebuild from the kept triplets. Hard
thresholding gives the best rank-``r`` approximation (Eckart-Young).

The functions here take a (possibly partial) singular value decomposition, so
any SVD routine (dense, ``scipy.sparse.linalg.svds``, a randomized range
finder) can feed them; they know nothing about the problem being solved
(matrix completion, reduced-rank regression, ...).
"""

import numpy as np

from ._operators import get_operator

__all__ = ["threshold_singular_values", "project_rank"]


def threshold_singular_values(operator, r, U, s, Vt):
    """Apply a thresholding operator to the singular values at rank ``r``.

    Liu & Barber's lifting (eq. 20): with ``s_1 >= s_2 >= ...`` the singular
    values and ``tau = s_{r+1}`` (0 when at most ``r`` are given), the result
    is ``sum_{i <= r} shrink(s_i, tau) u_i v_i^T``. Hard thresholding keeps
    ``s_1..s_r`` unchanged (the best rank-``r`` approximation).

    Parameters
    ----------
    operator : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator
        The operator whose scalar map ``shrink(a, tau)`` is applied.
    r : int
        The rank to keep (``>= 0``).
    U : ndarray of shape (m, q)
        Left singular vectors (columns), ``q >= r + 1`` for an exact ``tau``
        (``q <= r`` means ``tau = 0``: every given triplet is kept unshrunk,
        which is exact when the matrix has rank at most ``q``).
    s : ndarray of shape (q,)
        Singular values, non-negative. They need not be sorted: they are
        sorted in decreasing order (stable: ties keep the given order).
    Vt : ndarray of shape (q, n)
        Right singular vectors (rows).

    Returns
    -------
    U_r : ndarray of shape (m, min(r, q))
    s_r : ndarray of shape (min(r, q),)
        The shrunk singular values, in decreasing order (soft thresholding
        may return zeros).
    Vt_r : ndarray of shape (min(r, q), n)

    Raises
    ------
    ValueError
        If ``r`` is negative, a singular value is negative or NaN, or the
        shapes disagree.

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.thresholding import threshold_singular_values
    >>> U, s, Vt = np.eye(3), np.array([3.0, 2.0, 1.0]), np.eye(3)
    >>> threshold_singular_values("soft", 2, U, s, Vt)[1]
    array([2., 1.])
    """
    operator = get_operator(operator)
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 0:
        raise ValueError(f"The rank 'r' must be a non-negative integer, got {r!r}.")
    U, s, Vt = np.asarray(U), np.asarray(s, dtype=float), np.asarray(Vt)
    if s.ndim != 1 or U.ndim != 2 or Vt.ndim != 2 or U.shape[1] != s.size or Vt.shape[0] != s.size:
        raise ValueError(f"Singular triplets of inconsistent shapes: U {U.shape}, s {s.shape}, Vt {Vt.shape}.")
    if np.isnan(s).any() or (s < 0).any():
        raise ValueError("Singular values must be non-negative numbers (got a negative value or NaN).")
    order = np.argsort(-s, kind="stable")
    keep = order[:r]
    tau = float(s[order[r]]) if s.size > r else 0.0
    kept = s[keep]
    if not operator.is_hard and tau > 0 and kept.size:
        kept = np.asarray(operator.shrink(kept, tau), dtype=float)
    return U[:, keep], kept, Vt[keep]


def project_rank(M, r, operator="hard"):
    """The lifted operator applied to a dense matrix: threshold its singular values at rank ``r``.

    A convenience for small dense matrices (one full SVD); for large or
    structured matrices compute a partial SVD of ``r + 1`` triplets and call
    :func:`threshold_singular_values`.

    Parameters
    ----------
    M : array-like of shape (m, n)
        The matrix.
    r : int
        The rank to keep.
    operator : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator, default='hard'
        The thresholding operator lifted to the singular values.

    Returns
    -------
    ndarray of shape (m, n)
        A matrix of rank at most ``r``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.thresholding import project_rank
    >>> np.linalg.matrix_rank(project_rank(np.arange(12.0).reshape(3, 4) ** 2, 1))
    np.int64(1)
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"project_rank expects a 2-D array, got {M.ndim} dimensions.")
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    U, s, Vt = threshold_singular_values(operator, r, U, s, Vt)
    return (U * s) @ Vt
