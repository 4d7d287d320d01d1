"""Dask input: recognising it and validating it lazily (shapes, chunks, dtype), never gathering it.

Dask is optional (the ``[dask]`` extra): nothing here imports it unless the
input is already a dask collection, whose module is then loaded.
"""

import sys

import numpy as np


def is_dask_collection(obj):
    """Whether ``obj`` is a dask array, DataFrame or Series (without importing dask)."""
    module = type(obj).__module__ or ""
    if not module.startswith(("dask.", "dask_expr")) or "dask" not in sys.modules:
        return False
    from dask import is_dask_collection as _is

    return _is(obj)


def as_dask_array(obj, name):
    """``obj`` as a dask array: a dask DataFrame or Series through ``to_dask_array(lengths=True)``.

    Computing the partitions' lengths reads them once (their index only), as
    dask's own conversion does; arrays are returned as they are.
    """
    import dask.array as da

    if isinstance(obj, da.Array):
        return obj
    if hasattr(obj, "to_dask_array"):
        return obj.to_dask_array(lengths=True)
    raise TypeError(f"{name} is a dask collection of type {type(obj).__name__}; pass a dask array, DataFrame or "
                    "Series.")


def set_feature_names(est, X):
    """``feature_names_in_`` from a dask DataFrame's string column names (else removed), as ``validate_data``."""
    names = np.asarray(X.columns, dtype=object) if hasattr(X, "columns") else None
    if names is not None and len(names) and all(isinstance(c, str) for c in names):
        est.feature_names_in_ = names
    elif hasattr(est, "feature_names_in_"):
        del est.feature_names_in_


def _check_row_chunks(A, name):
    """ValueError unless the row chunks of ``A`` are known (not NaN)."""
    if any(np.isnan(c) for c in A.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes (NaN, e.g. from a DataFrame's .values or a boolean "
                         f"mask); call {name}.compute_chunk_sizes(), or convert a DataFrame with "
                         "to_dask_array(lengths=True).")


def check_dask_X(X, n_features=None):
    """A row-chunked 2-D dask array of floats, validated without computing it.

    Parameters
    ----------
    X : dask array or DataFrame
    n_features : int, optional
        The number of columns the fitted estimator expects.

    Returns
    -------
    X : dask array, float64 or float32 (other numeric types are cast lazily)
    """
    X = as_dask_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimension(s).")
    _check_row_chunks(X, "X")
    if any(np.isnan(c) for c in X.chunks[1]):
        raise ValueError("X has an unknown number of columns (NaN chunk sizes); call X.compute_chunk_sizes().")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the estimator is expecting {n_features} features as "
                         "input.")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold numbers; got a dask array of dtype {X.dtype}.")
    if X.dtype not in (np.float64, np.float32):
        X = X.astype(np.float64)
    return X


def check_dask_fit_input(X, y, sample_weight, numeric_y=True):
    """Validate dask ``X``, ``y`` and ``sample_weight`` for a fit, lazily.

    ``X`` must be chunked by rows only (one chunk spans all its columns:
    every block is a set of whole rows); ``y`` and ``sample_weight`` may be
    dask arrays or Series with the same row chunks, or NumPy arrays (then
    chunked like ``X``'s rows); blocks without rows are merged away. Finite
    values, non-negative weights and the number of rows of positive weight
    are checked in the pass that builds the statistics (see
    :mod:`sparse_estimators.losses._dask_design`).
    ``numeric_y=False`` (class labels) leaves ``y``'s type unchecked.

    Returns
    -------
    X : dask array (n, p)
    Y : dask array (n, m), float64
    sample_weight : dask array (n,) or None
    """
    import dask.array as da

    X = check_dask_X(X)
    if X.numblocks[1] != 1:
        raise ValueError(f"X must be chunked by rows only, with every block holding whole rows; got "
                         f"{X.numblocks[1]} chunks across its {X.shape[1]} columns. Use X.rechunk({{1: -1}}).")
    rows = X.chunks[0]

    def aligned(v, name):
        if is_dask_collection(v):
            v = as_dask_array(v, name)
            _check_row_chunks(v, name)
        else:
            v = np.asarray(v)
            if v.shape[:1] != (X.shape[0],):
                raise ValueError(f"Found input variables with inconsistent numbers of samples: X has {X.shape[0]} "
                                 f"rows, {name} has shape {v.shape}.")
            v = da.from_array(v, chunks=(rows,) + v.shape[1:])
        if v.shape[0] != X.shape[0]:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: X has {X.shape[0]} rows, "
                             f"{name} has {v.shape[0]}.")
        if v.chunks[0] != rows:
            raise ValueError(f"{name} must be chunked by rows like X (row chunks {rows}); got {v.chunks[0]}. Use "
                             f"{name}.rechunk({{0: X.chunks[0]}}).")
        if v.ndim > 1 and v.numblocks[1] != 1:
            v = v.rechunk({1: -1})
        return v

    y = aligned(y, "y")
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1-D or 2-D; got {y.ndim} dimensions.")
    if numeric_y and y.dtype.kind not in "biuf":
        raise ValueError(f"The target y must be numeric for a regressor; got a dask array of dtype {y.dtype}.")
    Y = y[:, None] if y.ndim == 1 else y
    Y = Y.astype(np.float64) if numeric_y else Y
    if sample_weight is not None:
        sample_weight = aligned(sample_weight, "sample_weight")
        if sample_weight.ndim != 1:
            raise ValueError(f"Sample weights must be 1D array or scalar; got shape {sample_weight.shape}.")
        sample_weight = sample_weight.astype(np.float64)
    if 0 in rows and X.shape[0]:  # (blocks without rows, as a filtered DataFrame's: merged into their neighbours)
        rows = tuple(c for c in rows if c)
        X, Y = X.rechunk({0: rows}), Y.rechunk({0: rows})
        sample_weight = None if sample_weight is None else sample_weight.rechunk({0: rows})
    return X, Y, y.ndim, sample_weight
