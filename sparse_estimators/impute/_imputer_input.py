"""LowRankImputer's input: its parameters, its data checked by row blocks, warnings at the user's line."""

import numbers
import os
import sys
import warnings

import joblib
import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.utils._missing import is_scalar_nan
from sklearn.utils.validation import validate_data

from .. import _policy
from ..thresholding import get_operator
from ._completion import _SOLVERS
from ._observed import check_solver_thresholding, observed_entries, row_blocks

#: frames in these directories are not the user's line (warnings point past them, also through a Pipeline)
_INTERNAL = tuple(os.path.dirname(os.path.abspath(path)) + os.sep
                  for path in (os.path.dirname(__file__), sklearn.__file__, joblib.__file__))


def _warn(message, category=UserWarning):
    """``warnings.warn`` at the first frame outside this package and scikit-learn: the user's line."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def column_scale(values, cols, mean, counts):
    """Standard deviation of each column's observed entries, floored, without overflow for huge data.

    Zero for a constant column (its rounding included), then the floor: a tenth of the median of the others
    (ones if every column is constant).
    """
    dev = values - mean[cols]
    top = np.zeros(mean.size)
    np.maximum.at(top, cols, np.abs(dev))
    safe = np.where(top > 0, top, 1.0)
    ratio = dev / safe[cols]
    std = np.where(top > 0, safe * np.sqrt(np.bincount(cols, weights=ratio * ratio, minlength=mean.size) / counts), 0.0)
    # a constant column's deviations from its computed mean are its rounding (1e-17 for a column of 0.1): zero
    # spread, as scikit-learn's StandardScaler's test (_is_constant_feature), not a scale that divides by ~0
    eps = np.finfo(float).eps
    std[std <= counts * eps * np.abs(mean)] = 0.0
    if not (std > 0).any():
        return np.ones(mean.size)
    # floored at the median: no column's units dominate, and nearly constant columns are not blown up into outliers
    return np.maximum(std, _policy.SCALE_FLOOR * np.median(std[std > 0]))


def centered_size(values, cols, counts, m, means=None):
    """The Frobenius norm of the columns' deviations from their means, estimated from the observed entries.

    ``means``: the column means when the caller has them (else from ``values`` and ``counts``).
    """
    n = counts.size
    if means is None:
        means = np.bincount(cols, weights=values, minlength=n) / counts
    dev = values - means[cols]
    return float(np.sqrt(np.vdot(dev, dev) * (m * n / max(values.size, 1))))


def check_params(imputer):
    """Check the imputer's parameters: a ValueError naming the first invalid one."""
    rank = imputer.rank
    if not (isinstance(rank, str) and rank == "auto") and (
            isinstance(rank, (bool, str)) or not isinstance(rank, numbers.Integral) or rank < 1):
        raise ValueError(f"The 'rank' parameter must be a positive integer or 'auto', got {rank!r}.")
    if imputer.solver not in _SOLVERS:
        raise ValueError(f"The 'solver' parameter must be one of {_SOLVERS}, got {imputer.solver!r}.")
    check_solver_thresholding(imputer.solver, imputer.thresholding)
    if not (isinstance(imputer.step_size, str) and imputer.step_size == "auto"):
        if (isinstance(imputer.step_size, (str, bool)) or not isinstance(imputer.step_size, numbers.Real)
                or not np.isfinite(imputer.step_size) or imputer.step_size <= 0):
            raise ValueError(f"The 'step_size' parameter must be 'auto' or a positive float, "
                             f"got {imputer.step_size!r}.")
    for name in ("max_iter", "verbose"):
        value, low = getattr(imputer, name), 1 if name == "max_iter" else 0
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"The '{name}' parameter must be an integer >= {low}, got {value!r}.")
    if (isinstance(imputer.tol, bool) or not isinstance(imputer.tol, numbers.Real) or not np.isfinite(imputer.tol)
            or imputer.tol < 0):
        raise ValueError(f"The 'tol' parameter must be a finite number >= 0, got {imputer.tol!r}.")
    mv = imputer.missing_values
    if not (is_scalar_nan(mv) or isinstance(mv, numbers.Real) and not isinstance(mv, bool) and np.isfinite(mv)):
        raise ValueError(f"The 'missing_values' parameter must be np.nan or a finite number, got {mv!r}.")
    for name in ("center", "standardize", "add_indicator", "keep_empty_features", "copy"):
        if not isinstance(getattr(imputer, name), (bool, np.bool_)):
            raise ValueError(f"The '{name}' parameter must be a bool, got {getattr(imputer, name)!r}.")
    a = imputer.alpha
    if isinstance(a, bool) or not isinstance(a, numbers.Real) or not np.isfinite(a) or a < 0:
        raise ValueError(f"The 'alpha' parameter must be a finite number >= 0, got {a!r}.")
    if a and imputer.solver != "als":
        raise ValueError(f"The 'alpha' parameter (the ridge on the factors) needs solver='als', got "
                         f"solver={imputer.solver!r}.")
    if imputer.solver == "als" and not get_operator(imputer.thresholding).is_hard:
        raise ValueError("solver='als' shrinks the singular values through its ridge 'alpha' (a soft threshold):"
                         f" it supports thresholding='hard' only, got thresholding={imputer.thresholding!r}.")


def validate_X(imputer, X, *, reset, copy):
    """``X`` as float64, or float32 kept (never copied unless ``copy``), checked for infinity (and NaN) by row blocks.

    No ``n_samples x n_features`` temporary: the imputer finds the missing entries per block.
    """
    if sp.issparse(X):
        raise TypeError(f"{type(imputer).__name__} takes a dense X with missing entries marked by missing_values, "
                        f"got a scipy.sparse {type(X).__name__}. For a sparse matrix whose stored entries are the "
                        "observed ones, use sparse_estimators.impute.complete_matrix (it never forms the dense "
                        "matrix).")
    try:
        X = validate_data(imputer, X, reset=reset, dtype=[np.float64, np.float32], copy=copy, ensure_all_finite=False)
    except ValueError as exc:
        if "could not convert" in str(exc):
            raise ValueError(f"{type(imputer).__name__} needs numeric data (non-numeric entry or column): "
                             f"{exc}") from exc
        raise
    nan = is_scalar_nan(imputer.missing_values)
    for block in row_blocks(X):
        if np.isinf(block).any():
            raise ValueError("Input X contains infinity: LowRankImputer accepts finite values and missing "
                             "values.")
        if not nan and np.isnan(block).any():
            raise ValueError(f"Input X contains NaN but missing_values={imputer.missing_values!r}: set "
                             "missing_values=np.nan if NaN marks the missing entries.")
    return X


def observed_table(imputer, X):
    """The observed entries of a validated ``X`` (``rows, cols, values``), gathered row block by row block.

    Also returns ``valid`` (the columns with an observed entry; ``cols`` counts those alone) and ``empty_rows``,
    with a warning for each kind of empty line, and for a ``missing_values`` that does not occur; raises when
    every entry is missing.
    """
    m, n = X.shape
    rows, cols, values = observed_entries(X, imputer._is_missing)  # (no m x n mask)
    if values.size == 0:
        raise ValueError(f"Every entry of X is missing (missing_values={imputer.missing_values!r}): "
                         "there is nothing to learn from.")
    if values.size == m * n and not is_scalar_nan(imputer.missing_values):
        _warn(f"missing_values={imputer.missing_values!r} does not occur in X: nothing to impute in the training "
              "data.")
    valid = np.bincount(cols, minlength=n) > 0
    if not valid.all():
        what = ("they are imputed with 0" if imputer.keep_empty_features else
                "they are dropped from the output (keep_empty_features=False), as in SimpleImputer")
        _warn(f"{int((~valid).sum())} column(s) of X have no observed entry (e.g. column "
              f"{int(np.flatnonzero(~valid)[0])}): {what}.")
        cols = (np.cumsum(valid) - 1)[cols]  # (the model is fit on the columns with an observed entry)
    empty_rows = np.bincount(rows, minlength=m) == 0
    if empty_rows.any():
        _warn(f"{int(empty_rows.sum())} row(s) of X have no observed entry: they are imputed with "
              f"{imputer._empty_row_fill()}.")
    return rows, cols, values, valid, empty_rows
