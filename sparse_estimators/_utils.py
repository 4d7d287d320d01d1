"""Helpers shared by the estimators and the model-selection objects."""

import itertools
from contextlib import contextmanager

import numpy as np

from . import _policy

__all__ = ["all_or_nothing"]

#: Root of the published documentation: the HTML repr of an estimator links to its API page under
#: it (``generated/<public module>.<class>.html``, the pages of doc/api.rst)
DOC_URL = "https://sparse-estimators.readthedocs.io/en/latest/"


class _DocLinkMixin:
    """The ``?`` link of scikit-learn's HTML repr points to this package's API page of the estimator.

    scikit-learn's ``_get_doc_link`` fills ``_doc_link_template`` for
    classes of ``_doc_link_module``; the page is named after the module the
    class is documented in: the top-level package for the estimators
    (``sparse_estimators.IHTRegressor``), else its public module
    (``sparse_estimators.model_selection.SparsityCV``).
    """

    _doc_link_module = "sparse_estimators"
    _doc_link_template = DOC_URL + "generated/{estimator_module}.{estimator_name}.html"

    def _doc_link_url_param_generator(self):
        import sparse_estimators

        name = type(self).__name__
        if getattr(sparse_estimators, name, None) is type(self):
            module = "sparse_estimators"
        else:
            module = ".".join(itertools.takewhile(lambda part: not part.startswith("_"),
                                                  type(self).__module__.split(".")))
        return {"estimator_module": module, "estimator_name": name}


#: ``np.vdot``, ``np.concatenate`` and ``np.where`` without NumPy's ``__array_function__`` dispatch (their C
#: functions, the same results; the plain functions where a NumPy lacks the attribute): the dispatch took about
#: 0.8 microseconds per call, and a small GLM fit makes about a hundred of these calls
vdot = getattr(np.vdot, "_implementation", np.vdot)
concatenate = getattr(np.concatenate, "_implementation", np.concatenate)
where = getattr(np.where, "_implementation", np.where)
lexsort = getattr(np.lexsort, "_implementation", np.lexsort)
try:  # ``np.count_nonzero`` of a whole array: its C function, without the Python function and its dispatcher
    from numpy._core.multiarray import count_nonzero  # (the splicing searches count the finite gains every round)
except ImportError:  # (NumPy 1: numpy.core)
    count_nonzero = np.count_nonzero


def largest_magnitude(a):
    """``float(np.abs(a).max())`` (NaN if ``a`` holds one; 0 if empty), without the copy ``np.abs`` makes.

    For floating ``a``: the larger of ``|max|`` and ``|min|``, two reductions
    (the dense peak of ``prune_layer(method='wanda')`` was this copy of the
    calibration matrix); other dtypes as before (``abs`` of the smallest
    integer wraps around).
    """
    if a.size == 0:
        return 0.0
    if a.dtype.kind != "f":
        return float(np.abs(a).max())
    high = float(a.max())
    if high != high:  # (NaN: np.max propagates it, as np.abs(a).max() did)
        return high
    return max(abs(high), abs(float(a.min())))


def power_of_two_scale(*arrays):
    """An exact power of two bringing the largest magnitude of ``arrays`` into [0.5, 1), or 1.

    1 when that magnitude is 0, not finite, or within ``_policy.SCALE_RANGE``:
    data of ordinary scale are untouched; data of extreme magnitude (whose
    squares under- or overflow) are solved rescaled, no digit changed.
    Subnormal data (below ``2**-1022``) get ``2**1023``, the largest power of
    two a float holds: their magnitude then exceeds ``2**-52``.
    """
    return power_of_two_for(max((largest_magnitude(a) for a in arrays if a.size), default=0.0))


def power_of_two_for(top):
    """:func:`power_of_two_scale` of arrays whose largest magnitude is ``top`` (a caller that already has it)."""
    if top == 0.0 or not np.isfinite(top) or _policy.SCALE_RANGE[0] <= top <= _policy.SCALE_RANGE[1]:
        return 1.0
    return float(np.ldexp(1.0, min(-int(np.frexp(top)[1]), 1023)))


def row_squares(A):
    """``np.einsum("ij,ij->i", A, A)``, the sum of squares of each row of a 2-D array.

    With one column, the squares of that column: the same values (a sum of
    one product), without einsum's parsing, which cost 4 to 6 microseconds
    per call against 1 (the splicing search ranks features this way several
    times per round).
    """
    if A.shape[1] == 1:
        a = A[:, 0]
        return a * a
    return np.einsum("ij,ij->i", A, A)


@contextmanager
def all_or_nothing(estimator):
    """Restore ``estimator``'s attributes if the body raises (KeyboardInterrupt included).

    Used around every ``fit`` of the package, so an interrupted or failed fit
    never leaves an estimator half-fitted.
    """
    state = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(state)
        raise


def _numeric_target(y):
    """``y`` as floats when it holds numbers as strings (as scikit-learn's LinearRegression reads them).

    ``validate_data(..., y_numeric=True)`` converts only object arrays; a numpy
    string array is converted here, or a ValueError names ``y``.
    """
    if y.dtype.kind not in "US":
        return y
    try:
        return y.astype(np.float64)
    except ValueError:
        raise ValueError(f"The target y must be numeric for a regressor; got {y.dtype} values that are not "
                         "numbers (for class labels, use a classifier).") from None
