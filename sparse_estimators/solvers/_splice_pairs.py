"""Exact single exchanges for least squares: every selected feature against the best unselected ones.

A round of the splicing search (:func:`~sparse_estimators.solvers._splice._exchange`)
tries the least useful selected feature, ranked by its own removal cost
``h_i w_i^2 / 2``, against the unselected features of largest marginal gain
``g_j^2 / (2 h_j)``. Both scores ignore the correlation between the feature
removed and the one added. A false positive next to a missed true feature
carries part of that feature's effect: its own removal cost is large and the
missed feature's marginal gain small, so their exchange, which can lower the
loss by more than the gate, is never tried (large ``k`` at about one
observation per ``k log(p - k)``: doc/changelog.rst, "exact single exchanges").

For least squares the change of the loss by exchanging a selected ``i`` for an
unselected ``j`` is known in closed form from the Hessian ``H`` (the weighted,
centred Gram matrix over ``N``) of the support ``S`` and ``j``, the gradient
``g_j`` at the current fit and its coefficients ``w``. With
``a = H_SS^{-1} H_Sj`` and ``d = H_jj - H_jS a`` (``j``'s residual curvature),
adding ``j`` lowers the loss by ``g_j^2 / (2 d)`` and moves the coefficients of
``S`` to ``w - a theta`` (``theta = -g_j / d``, ``j``'s coefficient); removing
then ``i`` raises it by ``(w_i - a_i theta)^2 / (2 ([H_SS^{-1}]_ii + a_i^2 / d))``
(block inverse of ``H`` over ``S`` and ``j``). One Gram matrix over ``S`` and
``J`` candidates (the blocks ``H_SS`` and ``H_SJ``, and the diagonal of
``H_JJ``) gives every one of the ``k J`` exchanges.
"""

import numpy as np
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dpotri as _potri

from .. import _policy
from ..losses._squared import GramSquaredLoss, SquaredLoss


def pair_search_applies(loss, candidates):
    """Whether :func:`best_pair` can run: one-output least squares without bounds or ridge, ``candidates > 0``."""
    return (candidates > 0 and type(loss) in (SquaredLoss, GramSquaredLoss) and loss.n_outputs == 1
            and not loss.positive and not loss.alpha)


def _hessian_blocks(loss, support, adds):
    """The Hessian's blocks ``H_SS`` and ``H_SJ`` over ``support`` and ``adds`` (not ``H_JJ``: its diagonal is known).

    ``X_c^T S X_c / sum(S)`` on the centred columns: ``n k (k + J)`` products
    instead of ``n (k + J)^2``. The support's columns are copied once; the
    candidates' in blocks of ``_policy.PAIR_SWAP_BLOCK`` (no copy of ``J``
    columns: the splicing search's memory stays that of its ``k + 128``). They
    need no centring: the weighted sums of the centred support columns are zero.
    """
    if type(loss) is GramSquaredLoss:
        return loss.gram[np.ix_(support, support)], loss.gram[np.ix_(support, adds)]
    design = loss.design
    share = loss.sample_weight / loss.sw_sum
    S = design.columns(support).dense()  # (centred by the design's offset)
    if loss.fit_intercept and design.offset is None:
        S = S - share @ S
    weighted = (S * share[:, None]).T
    H_SJ = np.empty((support.size, adds.size))
    step = _policy.PAIR_SWAP_BLOCK
    for i in range(0, adds.size, step):
        H_SJ[:, i:i + step] = weighted @ design.columns(adds[i:i + step]).dense()
    return weighted @ S, H_SJ


def best_pair(loss, support, W, gradient, forward, candidates, h, protected=None):
    """The single exchange of largest exact decrease among the selected features and the best unselected ones.

    Parameters
    ----------
    loss : SquaredLoss or GramSquaredLoss
        One output (see :func:`pair_search_applies`).
    support : ndarray of int
        The selected features (sorted), refitted: ``W`` minimises the loss on them.
    W : ndarray of shape (n_features, 1)
    gradient : ndarray of shape (n_features, 1)
        The loss's gradient in the coefficients at ``W``.
    forward : ndarray of shape (n_features,)
        The marginal gains of the unselected features (``-inf``: selected, or
        not a candidate): the ``candidates`` largest are tried (a candidate
        that the support reproduces, ``d`` at most ``1e-8 h_j``, is skipped:
        no ``H_JJ`` block is formed, so more columns than rows are fine).
    candidates : int
    h : ndarray of shape (n_features,)
        The loss's coordinate curvatures (the Hessian's diagonal).
    protected : ndarray of bool or None
        Features never removed.

    Returns
    -------
    (support, decrease) or None
        The exchanged support (sorted) and its decrease of the loss
        (exact up to rounding), or None when no exchange lowers the loss.
    """
    k = support.size
    n_add = min(candidates, np.count_nonzero(np.isfinite(forward)))
    if n_add < 1 or k < 1:
        return None
    adds = np.argpartition(-forward, n_add - 1)[:n_add] if n_add < forward.size else np.arange(forward.size)
    adds = adds[np.argsort(adds)]  # (index order: the result does not depend on the partition)
    adds = adds[np.isfinite(forward[adds])]
    H_SS, H_SJ = _hessian_blocks(loss, support, adds)
    L, info = _potrf(H_SS, lower=1)
    if info:
        return None
    inverse, info = _potri(L, lower=1)
    if info:
        return None
    inverse = np.tril(inverse) + np.tril(inverse, -1).T
    A = inverse @ H_SJ  # (k, J): a for each candidate
    h_J = h[adds]
    d = h_J - np.einsum("kj,kj->j", H_SJ, A)
    usable = d > 1e-8 * h_J  # (a candidate the support reproduces: no exchange)
    d = np.where(usable, d, 1.0)
    g = gradient[adds, 0]
    theta = -g / d
    w = W[support, 0]
    kept = w[:, None] - A * theta
    cost = 0.5 * kept * kept / (inverse.diagonal()[:, None] + A * A / d)
    decrease = 0.5 * g * g / d - cost
    decrease[:, ~usable] = -np.inf
    if protected is not None:
        decrease[protected[support]] = -np.inf
    i, j = np.unravel_index(np.argmax(decrease), decrease.shape)  # (ties: the first in support, then index order)
    if not decrease[i, j] > 0:
        return None
    exchanged = np.concatenate((np.delete(support, i), adds[j:j + 1]))
    exchanged.sort()
    return exchanged, float(decrease[i, j])
