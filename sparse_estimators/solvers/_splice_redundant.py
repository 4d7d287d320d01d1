"""Selected features that the others reproduce (splice's ``redundant_first``): a duplicated, rescaled or summed column.

A round of :func:`~sparse_estimators.solvers.splice` that accepts nothing
retries with them removed first (see ``redundant_first`` there).
"""

import numpy as np
from scipy.linalg.lapack import dpotrf as _potrf

from .. import _policy
from ..losses._design import LinearDesign, weighted_column_sums
from ..losses._numerics import collinear_count


def _column_gram(loss, support):
    """The weighted Gram matrix of the ``support`` columns, centred when the loss fits an intercept.

    None where it is not formed: a design other than NumPy's or scipy.sparse (dask: one more pass over the
    data), or at least as many columns as rows of positive weight, less one for the intercept (then every
    column is a combination of the others).
    """
    design = loss.design
    if type(design) is not LinearDesign or support.size + bool(loss.fit_intercept) >= loss.n_positive:
        return None
    columns = design.columns(support)
    w = loss.sample_weight
    centre = loss.fit_intercept and columns.offset is None  # (the classifiers' design is not centred)
    if columns.is_sparse:
        G = columns.weighted_gram(w)
        if centre:
            sums = weighted_column_sums(columns.X, w)
            G = G - np.outer(sums, sums) / loss.sw_sum
        return G
    A = columns.dense()
    if centre:
        A = A - w.dot(A) / loss.sw_sum
    return A.T.dot(A * w[:, None])


def _may_be_redundant(loss, redundant_first):
    """Whether :func:`_redundant` can find a feature (``splice``'s ``redundant_first``: True or ``'collinear'``)."""
    if redundant_first != "collinear" or loss.positive:
        return True
    mark = getattr(loss, "_collinear_mark", None)  # (None: a loss not built by BaseLoss.__init__)
    return mark is None or collinear_count() != mark


def _redundant(loss, support, protected=None):
    """The selected features that the ones before them reproduce (a duplicated, rescaled or summed column).

    Features in index order, protected ones first: a feature is redundant when its residual on those before it
    is at most ``_policy.DUPLICATE_RESIDUAL`` of its centred weighted variance (the pivots of a Cholesky
    factorisation of their correlation matrix). Protected features are never returned.
    """
    G = _column_gram(loss, support)
    if G is None:
        return support[:0]
    order = np.arange(support.size) if protected is None else np.argsort(~protected[support], kind="stable")
    G = G[np.ix_(order, order)]
    d = np.sqrt(np.maximum(G.diagonal(), 0.0))
    d = np.where(d > 0, d, 1.0)
    # (a ridge of a thousandth of the level keeps the factorisation defined where columns repeat exactly)
    C = G / np.outer(d, d) + 1e-3 * _policy.DUPLICATE_RESIDUAL * np.eye(d.size)
    L, info = _potrf(C, lower=1)
    if info:  # (not positive definite: rounding beyond the ridge; no redundancy claimed)
        return support[:0]
    residual = L.diagonal() ** 2
    redundant = support[order[residual <= _policy.DUPLICATE_RESIDUAL]]
    if protected is not None:
        redundant = redundant[~protected[redundant]]
    return redundant
