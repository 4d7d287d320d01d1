"""Input validation of the estimators' ``fit``: a direct route for plain arrays, scikit-learn's otherwise.

scikit-learn's ``validate_data`` costs 0.1 to 0.2 ms per call whatever the
size of the data (the DataFrame probes of every input, the checks of every
option), 5 to 10 % of a small fit (n = 500, p = 100: a 1.6 ms fit). A
C- or Fortran-ordered float64 or float32 ndarray ``X`` with a plain ndarray
``y`` that needs no conversion gets what ``validate_data`` would do to it, in
a few microseconds: the same arrays back (a C-ordered copy of a Fortran-ordered
``X``), ``n_features_in_`` set and ``feature_names_in_`` removed. Anything else (lists, DataFrames, sparse
matrices, other dtypes or layouts, non-finite values, empty arrays) goes
through ``validate_data``, which converts it or raises its usual errors.
"""

import math
import numbers

import numpy as np
from sklearn import get_config
from sklearn.utils._param_validation import make_constraint, validate_parameter_constraints
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ..losses._design import column_extremes, share_extremes

#: y dtype kinds that need no conversion: regressors (y_numeric), classifiers (labels that
#: check_classification_targets always accepts as 1-D: integers, booleans, strings)
_NUMERIC_KINDS = "fiu"
_LABEL_KINDS = "iubU"
_all = np.logical_and.reduce


def _plain(X, y):
    """Whether ``X`` and ``y`` are ndarrays scikit-learn's checks would return unchanged (values aside)."""
    return (type(X) is np.ndarray and type(y) is np.ndarray and X.ndim == 2 and X.dtype in (np.float64, np.float32)
            and (X.flags.c_contiguous or X.flags.f_contiguous) and X.shape[0] >= 1 and X.shape[1] >= 1
            and y.shape[:1] == X.shape[:1])


def _c_ordered(X):
    """``X`` in C order (the copy ``validate_data(order='C')`` makes of a Fortran-ordered one), extremes kept."""
    if X.flags.c_contiguous:
        return X
    C = np.ascontiguousarray(X)
    share_extremes(X, C)
    return C


def _finite(A):
    """All entries finite: from the column extremes for ``X`` (which the set-up reads anyway), else entry by entry.

    (ufunc reductions: ndarray.all's Python wrapper and np.errstate around a sum cost more than the test
    on a small fit's set-up)
    """
    if get_config()["assume_finite"]:
        return True
    if A.ndim == 2:
        high, low = column_extremes(A)  # (NaN propagates through max and min)
        return bool(_all(np.isfinite(high)) and _all(np.isfinite(low)))
    return bool(_all(np.isfinite(A), axis=None))


def _fitted_on_array(estimator, X):
    """``validate_data(reset=True)``'s attributes for an ndarray ``X`` (no feature names)."""
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.n_features_in_ = X.shape[1]


def validated_regression(estimator, X, y):
    """``validate_data(estimator, X, y, ..., order='C', multi_output=True, y_numeric=True)``."""
    if (_plain(X, y) and y.dtype.kind in _NUMERIC_KINDS and (y.ndim == 1 or y.ndim == 2 and y.shape[1] >= 1)
            and _finite(X) and (y.dtype.kind != "f" or _finite(y))):
        _fitted_on_array(estimator, X)
        return _c_ordered(X), y
    return validate_data(estimator, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], order="C",
                         multi_output=True, y_numeric=True)


def validated_classification(estimator, X, y):
    """``validate_data(estimator, X, y, ..., order='C')`` and ``check_classification_targets(y)``."""
    if _plain(X, y) and y.ndim == 1 and y.dtype.kind in _LABEL_KINDS and _finite(X):
        _fitted_on_array(estimator, X)
        return _c_ordered(X), y
    X, y = validate_data(estimator, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], order="C")
    check_classification_targets(y)
    return X, y


#: the constraint objects of each ``_parameter_constraints`` dict, built once, and the scalar values that
#: passed them: ``id -> (dict, {name: list}, {(name, type, value)})``
_CONSTRAINTS = {}
#: the types whose values are remembered once they pass (immutable; equal values of one type pass alike)
_SCALAR_TYPES = frozenset({int, float, bool, str, type(None)})


def check_parameters(constraints, params, caller_name):
    """scikit-learn's ``validate_parameter_constraints``, with each dict's constraint objects built once.

    scikit-learn's function rebuilds every constraint object at each call
    (40 us per fit, 2 to 3 % of a 1.6 ms fit); here they are built at the
    first call and each value is tested against them. A value that
    satisfies none is passed to scikit-learn's function, which raises its
    ``InvalidParameterError``. A plain scalar (int, float, bool, str, None)
    that passed once is not tested again (the tests cost 30 us per fit).
    """
    entry = _CONSTRAINTS.get(id(constraints))
    if entry is None or entry[0] is not constraints:
        built = {name: [make_constraint(c) for c in options] for name, options in constraints.items()
                 if not (isinstance(options, str) and options == "no_validation")}
        entry = _CONSTRAINTS[id(constraints)] = (constraints, built, set())
    built, passed = entry[1], entry[2]
    for name, value in params.items():
        kind = type(value)
        scalar = kind in _SCALAR_TYPES
        if scalar and (name, kind, value) in passed:
            continue
        options = built.get(name)
        if options is not None and not any(c.is_satisfied_by(value) for c in options):
            validate_parameter_constraints(constraints, params, caller_name)
        if scalar and len(passed) < 1000:  # (bounded: e.g. a search over many values of tol)
            passed.add((name, kind, value))


def _check_int(name, value, minimum):
    # (a plain int skips the ABC checks: a microsecond each, several per fit)
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise ValueError(f"The '{name}' parameter must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"The '{name}' parameter must be >= {minimum}, got {value!r}.")


def _check_real(name, value, *, low=0.0, low_open=True, high=None):
    if not (type(value) is float and math.isfinite(value)) and (  # (a finite float skips the ABC and NumPy calls)
            isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value)):
        raise ValueError(f"The '{name}' parameter must be a finite number, got {value!r}.")
    if (value <= low) if low_open else (value < low):
        sign = ">" if low_open else ">="
        raise ValueError(f"The '{name}' parameter must be {sign} {low}, got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"The '{name}' parameter must be <= {high}, got {value!r}.")



def _checked_weights(sample_weight, X):
    """Sample weights as floats: finite, non-negative, with a positive sum (else a ValueError)."""
    if sample_weight is None:  # (what the check returns, without its 30 us)
        return np.ones(X.shape[0], dtype=np.float64)
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not sample_weight.sum() > 0:
        raise ValueError("Sample weights must have a positive sum; got all zeros.")
    return sample_weight

