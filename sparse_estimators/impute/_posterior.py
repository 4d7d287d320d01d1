"""Filling rows from a fitted low-rank model: the probabilistic-PCA posterior mean of their missing entries.

Model (Tipping & Bishop's probabilistic PCA, in the basis of the learned row
space, with factor analysis's diagonal noise): a row is ``x = mean + z C + e`` with ``C`` the ``r x n``
orthonormal components, scores ``z ~ N(0, diag(prior))`` and noise ``e ~ N(0, noise diag(1 / w))``
(``w``: :func:`column_weights`, ones for probabilistic PCA's ``noise I``).
Given the observed part ``x_O`` of a row, the posterior mean of its scores is
the weighted ridge estimate

    ``z = (C_O W_O C_O^T + noise diag(1 / prior))^{-1} C_O W_O (x_O - mean_O)``

and the missing entries are filled with ``mean_M + z C_M``: a row with few or
uninformative observed entries is shrunk towards ``mean`` (the column offsets) instead of
being extrapolated by an unregularised least-squares solve.
"""

import numpy as np
import scipy.sparse

from .. import _policy
from .._utils import power_of_two_scale
from ._factored import _entries

__all__ = ["column_weights", "discarded_variance", "fill_missing", "noise_variance", "ridge_penalty",
           "transform_model"]


def noise_variance(residuals, n_free, discarded=None):
    """Unbiased noise variance of a fit: the residual sum of squares over the residual degrees of freedom.

    ``n_free`` is the number of fitted parameters; when it is not below the
    number of residuals (an overparametrised fit, which interpolates the
    observed entries: its residuals say nothing of the noise), the larger
    of the plain mean square (a lower bound) and ``discarded()`` if given
    (:func:`discarded_variance`, probabilistic PCA's estimate).
    """
    rss = float(np.vdot(residuals, residuals))
    dof = residuals.size - n_free
    if dof > 0:
        return rss / dof
    return max(rss / max(residuals.size, 1), 0.0 if discarded is None else float(discarded()))


def discarded_variance(rows, cols, values, shape, r):
    """Probabilistic PCA's noise variance: the mean of the covariance's eigenvalues beyond the first ``r``.

    Tipping & Bishop's maximum-likelihood ``sigma^2``, from the observed
    entries alone (not from a fit, which inflates its components when it
    interpolates them): the eigenvalues of the Gram matrix of the smaller
    side of the column-centred observations, zero-filled and divided by the
    observed share ``p`` (its trace is then the total variance's unbiased
    estimate; the zero fill spreads some of it over the discarded ones).
    """
    m, n = shape
    counts = np.maximum(np.bincount(cols, minlength=n), 1)
    centred = values - (np.bincount(cols, weights=values, minlength=n) / counts)[cols]
    S = scipy.sparse.csr_matrix((centred, (rows, cols)), shape=shape)
    gram = (S.T @ S if n <= m else S @ S.T).toarray()
    eigenvalues = np.linalg.eigvalsh(gram)[::-1] * (m * n / max(values.size, 1))
    return max(float(eigenvalues[r:].sum()), 0.0) / max(m, 1) / max(n - r, 1)


def ridge_penalty(noise, prior):
    """The penalty ``noise / prior`` of each component (inf where ``prior`` is 0: the component is not used).

    The noise variance is floored at ``1e-12 * max(prior)``, so the ridge
    system stays positive definite on an exactly low-rank fit.
    """
    prior = np.asarray(prior, dtype=float)
    if prior.size == 0 or not prior.max() > 0:
        return np.full(prior.shape, np.inf)
    noise = max(float(noise), _policy.NOISE_FLOOR * float(prior.max()))
    with np.errstate(divide="ignore"):
        return noise / prior


def column_weights(residuals, cols, n, n_free, noise):
    """Each column's weight ``noise / noise_j`` in the posterior: its own noise variance against the mean one.

    ``noise_j``: the column's residual sum of squares over its share of the residual degrees of freedom
    (its observed entries times ``1 - n_free / n_observed``), at least ``_policy.COLUMN_NOISE_FLOOR`` times
    ``noise``. Standardized columns of one table differ in their noise (a column of little signal is mostly
    noise once divided by its spread): with one noise variance for all, the posterior trusts a noisy column as
    much as a clean one. Ones when no degree of freedom is left or ``noise`` is 0.
    """
    dof = residuals.size - n_free
    if dof <= 0 or not noise > 0:
        return np.ones(n)
    rss = np.bincount(cols, weights=residuals * residuals, minlength=n)
    share = np.bincount(cols, minlength=n) * (dof / residuals.size)
    prior = _policy.COLUMN_NOISE_PRIOR  # (pseudo-entries at the mean noise: a short column keeps near it)
    own = (rss + prior * noise) / (share + prior)
    return noise / np.maximum(own, _policy.COLUMN_NOISE_FLOOR * noise)


def transform_model(values, mean, rows, cols, shape, U, s, Vt, n_rows, n_free, product=None):
    """The model of :func:`fill_missing` from a completion's fit: noise, scores' variance, penalty, weights.

    ``values`` are the observed entries (standardized), ``mean`` the fitted column offsets, ``U, s, Vt`` the
    fitted product (``product``: its pattern of observed entries, ``_Observed``, whose order of summation the
    fit used; None: the per-entry sums of ``_factored._entries``), ``n_rows`` the rows with an observed entry
    and ``n_free`` the fitted parameters. Computed on the data rescaled by a power of two, as the completion is
    (squares of extreme data are not representable), and returned in the data's units.

    Returns
    -------
    noise : float
        :func:`noise_variance` (probabilistic PCA's :func:`discarded_variance` when no degree of freedom is left).
    prior : ndarray of shape (r,)
        The variance of the rows' scores along each component.
    penalty : ndarray of shape (r,)
        :func:`ridge_penalty`.
    weights : ndarray of shape (n,)
        :func:`column_weights` (ones without a component).
    """
    power = power_of_two_scale(values)
    residuals = (values - mean[cols]) * power
    if s.size:
        residuals -= (product.entries(U, s * power, Vt) if product is not None
                      else _entries(U, s * power, Vt, rows, cols))
    prior = (s * power) ** 2 / max(n_rows, 1)
    noise = noise_variance(residuals, n_free, lambda: discarded_variance(rows, cols, values * power, shape, len(s)))
    penalty = ridge_penalty(noise, prior)
    weights = column_weights(residuals, cols, shape[1], n_free, noise) if s.size else np.ones(shape[1])
    with np.errstate(over="ignore", under="ignore"):
        return noise / power / power, prior / power / power, penalty, weights


def fill_missing(X, is_missing, mean, scale, components, penalty, weights=None):
    """Fill the missing entries of ``X`` in place with their posterior mean given each row (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n)
        Float64 or float32 data (a view is fine); its missing entries are overwritten (computed in float64).
    is_missing : callable
        ``is_missing(block)``: where a block of rows of ``X`` is missing (a
        boolean array of its shape). Called per block of rows: no mask of the
        size of ``X`` is formed.
    mean : ndarray of shape (n,)
    scale : ndarray of shape (n,)
        Column scales: the model holds for ``(x - mean) / scale``.
    components : ndarray of shape (r, n)
        Orthonormal rows.
    penalty : ndarray of shape (r,)
        ``noise / prior`` per component (:func:`ridge_penalty`); components
        with an infinite penalty are not used.
    weights : ndarray of shape (n,), default=None
        Per column, the mean noise variance over the column's own (:func:`column_weights`): the posterior's
        weighted least squares; None: ones.

    Returns
    -------
    n_empty : int
        The number of rows with no observed entry (filled with ``mean``).
    """
    keep = np.isfinite(penalty)
    C, ridge = components[keep], penalty[keep]
    r, n = C.shape
    Cw = C if weights is None else C * weights  # (the weighted side of C_O W C_O^T and C_O W x_O)
    # every row's Gram matrix C_O W C_O^T as one product (observed indicator) @ (the n x r^2 outer products),
    # when that table is small; else one r x r system per missingness pattern
    batched = n * r * r <= 4 * _policy.ROW_BLOCK_ENTRIES
    outer = (Cw.T[:, :, None] * C.T[:, None, :]).reshape(n, r * r) if batched and r else None
    step = max(1, _policy.ROW_BLOCK_ENTRIES // max(n, r * r, 1))
    n_empty = 0
    for start in range(0, X.shape[0], step):
        block_missing = is_missing(X[start:start + step])
        n_empty += int(block_missing.all(axis=1).sum()) if n else 0
        todo = np.flatnonzero(block_missing.any(axis=1))
        if todo.size == 0:
            continue
        if r == 0 or batched:
            whole = todo.size == block_missing.shape[0]  # (every row of the block: filled in place, no copy)
            rows = slice(start, start + todo.size) if whole else start + todo
            block, miss = X[rows], block_missing if whole else block_missing[todo]  # (else copies, written back)
            fill = np.broadcast_to(mean, block.shape)
            if r:
                target = (block - mean) / scale
                target[miss] = 0.0
                gram = ((~miss) @ outer).reshape(-1, r, r)
                gram[:, np.arange(r), np.arange(r)] += ridge
                scores = np.linalg.solve(gram, (target @ Cw.T)[:, :, None])[:, :, 0]
                fill = mean + (scores @ C) * scale
            np.copyto(block, fill, where=miss)
            if not whole:
                X[rows] = block
            continue
        # rows sharing a missingness pattern share one r x r system (packed bits: a cheap hashable key)
        keys = np.packbits(block_missing[todo], axis=1)
        groups = {}
        for i, key in enumerate(keys):
            groups.setdefault(key.tobytes(), []).append(i)
        for members in groups.values():
            rows = start + todo[members]
            miss = block_missing[todo[members[0]]]
            obs = ~miss
            fill = np.broadcast_to(mean[miss], (rows.size, int(miss.sum()))).copy()
            if r and obs.any():
                C_obs, Cw_obs = C[:, obs], Cw[:, obs]
                gram = Cw_obs @ C_obs.T
                gram[np.diag_indices(r)] += ridge
                target = (X[np.ix_(rows, obs)] - mean[obs]) / scale[obs]
                scores = np.linalg.solve(gram, Cw_obs @ target.T)  # (r, rows): symmetric positive definite
                fill += (scores.T @ C[:, miss]) * scale[miss]
            X[np.ix_(rows, np.flatnonzero(miss))] = fill
    return n_empty
