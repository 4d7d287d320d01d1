"""Checks of the input of the completion functions: the observed entries, indices to predict, solver options.

Also the observed entries of a dense array with missing entries, read by
blocks of rows (:func:`observed_entries`, :func:`row_blocks`), and the
restriction of a completion to the rows and columns that have an
observed entry (:func:`restrict`, :func:`expand`): a row or column without
one contributes nothing but zeros to the factors, so a huge declared shape
with few entries is solved at the size of its entries.
"""

import dataclasses
import numbers

import numpy as np
import scipy.sparse as sp

from .. import _policy
from ..thresholding import get_operator

__all__ = ["check_indices", "check_observed", "check_solver_thresholding", "expand", "observed_entries", "restrict",
           "row_blocks"]


def check_shape(shape):
    """The declared ``shape``: a tuple of two positive integers."""
    if (not isinstance(shape, tuple) or len(shape) != 2
            or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and d > 0 for d in shape)):
        raise ValueError(f"The 'shape' parameter must be a tuple of two positive integers, got {shape!r}.")
    return tuple(int(d) for d in shape)


def _real_values(values, what):
    """``values`` as float64 (before any summing: repeated coordinates of small integers must not overflow)."""
    values = np.asarray(values)
    if values.dtype.kind not in "fiub":
        if values.dtype.kind == "O":
            try:
                return values.astype(np.float64)
            except (TypeError, ValueError):
                pass
        raise ValueError(f"The 'observed' {what} must be real numbers, got dtype {values.dtype}.")
    return values.astype(np.float64)


def _integer_indices(a, bound, name, param="observed"):
    """1-D integer indices in ``[0, bound)``; a ValueError naming ``param`` otherwise."""
    a = np.asarray(a)
    if a.size and a.dtype.kind not in "iu":
        raise ValueError(f"The '{param}' {name} must be integers, got dtype {a.dtype}.")
    if a.size:
        low, high = a.min(), a.max()
        if low < 0 or high >= bound:
            bad = low if low < 0 else high
            raise ValueError(f"The '{param}' {name} must be in [0, {bound}) (the shape), got {int(bad)}.")
    return a.astype(np.intp, copy=False)


def _is_triple(observed):
    """A list or other sequence of three 1-D sequences of one length (the (rows, cols, values) form, untupled)."""
    if isinstance(observed, np.ndarray) or not isinstance(observed, (list, tuple)) or len(observed) != 3:
        return False
    try:
        parts = [np.asarray(a) for a in observed]
    except (TypeError, ValueError):
        return False
    return all(p.ndim == 1 for p in parts) and len({p.shape for p in parts}) == 1


def check_observed(observed, shape):
    """The observations as a canonical float64 CSR matrix of their own (never the caller's), and the shape.

    Accepts a scipy.sparse matrix or array (its stored entries), a dense array
    (its non-zeros), a NumPy masked array (its unmasked entries), or ``(rows, cols, values)`` with ``shape`` (a list of
    three is accepted with ``shape`` too, and refused without: it would
    otherwise read as a dense 3-row matrix). Values are made float64 before
    repeated coordinates are summed.
    """
    if isinstance(observed, list) and _is_triple(observed):
        if shape is None:
            raise ValueError("The 'observed' parameter is a list of three 1-D sequences: for (rows, cols, values) "
                             "pass a tuple and the 'shape' parameter; for a dense 3-row matrix pass "
                             "np.asarray(observed).")
        observed = tuple(observed)
    if isinstance(observed, tuple):
        if len(observed) != 3:
            raise ValueError("The 'observed' tuple must be (rows, cols, values).")
        if shape is None:
            raise ValueError("The 'shape' parameter is required when 'observed' is a (rows, cols, values) tuple.")
        shape = check_shape(shape)
        rows, cols, values = (np.asarray(a) for a in observed)
        if not (rows.shape == cols.shape == values.shape and rows.ndim == 1):
            raise ValueError("The 'observed' rows, cols and values must be 1-D arrays of the same length, got "
                             f"shapes {rows.shape}, {cols.shape}, {values.shape}.")
        rows = _integer_indices(rows, shape[0], "rows")
        cols = _integer_indices(cols, shape[1], "cols")
        S = sp.csr_matrix((_real_values(values, "values"), (rows, cols)), shape=shape)
    else:
        if not sp.issparse(observed):
            if observed is None:
                raise ValueError("The 'observed' parameter must be a scipy.sparse matrix (its stored entries are the "
                                 "observations), a dense array or a (rows, cols, values) tuple, got None.")
            if isinstance(observed, np.ma.MaskedArray):  # its unmasked entries (zeros too) are the observations
                # (np.asarray drops the mask: the hidden entries' placeholders were fitted as observations)
                if observed.ndim != 2:
                    raise ValueError(f"The 'observed' matrix must be 2-D, got {observed.ndim} dimensions.")
                seen = ~np.ma.getmaskarray(observed)
                observed = sp.coo_matrix((_real_values(observed.data[seen], "values"), np.nonzero(seen)),
                                         shape=observed.shape)
            else:
                observed = np.asarray(observed)  # a dense array: its non-zeros are the observations
                if observed.ndim != 2:
                    raise ValueError(f"The 'observed' matrix must be 2-D, got {observed.ndim} dimensions.")
                observed = _real_values(observed, "values")
                if np.isnan(observed).any():
                    raise ValueError("The 'observed' dense array contains NaN: its non-zero entries are the "
                                     "observations, so NaN cannot mark the missing ones. Pass "
                                     "np.ma.masked_invalid(X) (its unmasked entries are observed, zeros "
                                     "included), or use LowRankImputer on a dense X with NaN.")
                observed = sp.coo_matrix(observed)
        elif observed.ndim != 2:
            raise ValueError(f"The 'observed' matrix must be 2-D, got {observed.ndim} dimensions.")
        if shape is not None and check_shape(shape) != tuple(observed.shape):
            raise ValueError(f"The 'shape' parameter {shape!r} does not match the observed matrix's {observed.shape}.")
        if observed.dtype != np.float64:
            # (to float64 before the CSR conversion sums repeated coordinates)
            observed = observed.copy()
            observed.data = _real_values(observed.data, "values")
        # an own CSR copy (its data becomes the residual buffer): the caller's matrix is never modified
        S = observed.copy() if observed.format == "csr" else observed.tocsr()
        S = sp.csr_matrix(S)  # (a csr_array becomes a matrix: the same products)
    S.sum_duplicates()  # (scipy's convention for repeated coordinates; explicit zeros stay observed)
    if not np.isfinite(S.data).all():
        raise ValueError("The 'observed' values contain NaN or infinity; pass only the observed entries, all "
                         "finite.")
    if S.nnz == 0:
        raise ValueError("The 'observed' matrix has no stored entry: there is nothing to complete from.")
    return S, tuple(S.shape)


def check_indices(rows, cols, shape):
    """Row and column indices of entries to predict: integers within ``shape``, of one shape; as intp arrays."""
    rows, cols = np.asarray(rows), np.asarray(cols)
    if rows.shape != cols.shape:
        raise ValueError(f"The 'rows' and 'cols' must have the same shape, got {rows.shape} and {cols.shape}.")
    return (_integer_indices(rows, shape[0], "indices", "rows"),
            _integer_indices(cols, shape[1], "indices", "cols"))


def check_solver_thresholding(solver, thresholding):
    """``solver='regularized'`` keeps whole singular triplets: hard thresholding only."""
    operator = get_operator(thresholding)
    if solver == "regularized" and not operator.is_hard:
        raise ValueError("solver='regularized' keeps whole singular triplets (a local search with fully corrective "
                         f"steps): it supports thresholding='hard' only, got thresholding={thresholding!r}.")
    return operator


def restrict(S, rank):
    """``S`` restricted to its rows and columns with an observed entry, when they are few; else ``S``.

    Returns ``(S_small, row_index, col_index)``; the indices are None when
    ``S`` is returned as is. At least ``rank + 1`` rows and columns are kept
    (empty ones added), so the restricted problem has the same rank bound.
    """
    m, n = S.shape
    used_rows = np.flatnonzero(np.diff(S.indptr))
    used_cols = np.unique(S.indices)
    used_rows, used_cols = _pad(used_rows, m, rank + 1), _pad(used_cols, n, rank + 1)
    if used_rows.size + used_cols.size > _policy.RESTRICT_SHARE * (m + n):
        return S, None, None
    small = S[used_rows][:, used_cols]  # (sorted index arrays: the entries keep their order)
    return sp.csr_matrix(small), used_rows, used_cols


def _pad(index, bound, size):
    """``index`` (sorted) with the smallest absent indices added until it has ``min(size, bound)`` of them."""
    missing = min(size, bound) - index.size
    if missing <= 0:
        return index
    extra = np.setdiff1d(np.arange(min(bound, index.size + missing)), index)[:missing]
    return np.union1d(index, extra)


def zero_unobserved(result, rows, cols):
    """``result`` with exact zeros in ``U``'s rows and ``Vt``'s columns (and the offsets) that no entry touches.

    The gradient never reaches them, but the range finder's orthogonalisation
    mixes rounding into them (values up to 3e-14 in the completed matrix).
    """
    m, n = result.U.shape[0], result.Vt.shape[1]
    empty_rows = np.bincount(rows, minlength=m) == 0
    empty_cols = np.bincount(cols, minlength=n) == 0
    if not (empty_rows.any() or empty_cols.any()):
        return result
    U, Vt = result.U.copy(), result.Vt.copy()
    U[empty_rows] = 0.0
    Vt[:, empty_cols] = 0.0
    offsets = result.column_offsets
    if offsets is not None and offsets.size:
        offsets = offsets.copy()
        offsets[empty_cols] = 0.0
    return dataclasses.replace(result, U=U, Vt=Vt, column_offsets=offsets)


def expand(result, row_index, col_index, shape):
    """A completion of the restricted problem as the completion of the full one (zeros elsewhere)."""
    if row_index is None:
        return result
    m, n = shape
    U = np.zeros((m, result.U.shape[1]))
    U[row_index] = result.U
    Vt = np.zeros((result.Vt.shape[0], n))
    Vt[:, col_index] = result.Vt
    offsets = np.zeros(n)
    if result.column_offsets.size:
        offsets[col_index] = result.column_offsets
    return dataclasses.replace(result, U=U, Vt=Vt, column_offsets=offsets)


def row_blocks(X, start=False):
    """Blocks of rows of ``X`` (views), about ``_policy.ROW_BLOCK_ENTRIES`` entries; with ``start``, (start, block)."""
    step = max(1, _policy.ROW_BLOCK_ENTRIES // max(X.shape[1], 1))
    for i in range(0, X.shape[0], step):
        yield (i, X[i:i + step]) if start else X[i:i + step]


def observed_entries(X, is_missing):
    """Row indices, column indices (row-major order) and values of the entries of ``X`` that are not missing.

    Two passes over row blocks (count, then fill): no array of the size of
    ``X`` is formed, and the outputs are allocated once.
    """
    total = sum(int(np.count_nonzero(~is_missing(block))) for block in row_blocks(X))
    rows, cols, values = np.empty(total, dtype=np.intp), np.empty(total, dtype=np.intp), np.empty(total)
    at = 0
    for start, block in row_blocks(X, start=True):
        r, c = np.nonzero(~is_missing(block))
        rows[at:at + r.size] = r + start
        cols[at:at + r.size] = c
        values[at:at + r.size] = block[r, c]
        at += r.size
    return rows, cols, values
