"""Information criteria over sparsity levels, and the largest level at which they are defined.

Shared by the estimators' automatic choice of ``k`` (``k=None``) and by
:class:`~sparse_estimators.model_selection.SparsityIC`. The fit term comes
from the loss (:meth:`~sparse_estimators.losses.BaseLoss.minus_two_log_likelihood`),
so a new loss brings its own likelihood and every criterion works with it.
"""

import numpy as np
from scipy.special import gammaln

__all__ = ["CRITERIA", "criterion_levels", "criterion_penalty", "information_criterion", "largest_k"]

#: the criteria, in the order of their penalty per coefficient on ordinary data
CRITERIA = ("aic", "bic", "gic", "ebic")


def criterion_penalty(criterion, k, n_features, n_observations, coefficients_per_feature, gamma=1.0, *,
                      models=None):
    """The penalty of a model with ``k`` selected features out of ``n_features``.

    With ``df = k * coefficients_per_feature`` and ``N = n_observations``:

    * ``'aic'``: ``2 df`` (Akaike);
    * ``'bic'``: ``df log(N)`` (Schwarz);
    * ``'gic'``: ``df log(p) log(log(N))``, abess's generalised information
      criterion (Zhu et al., 2020, the criterion of its splicing theory);
    * ``'ebic'``: ``df log(N) + 2 gamma log(binomial(p, k))``, the extended
      BIC of Chen & Chen (2008, https://doi.org/10.1093/biomet/asn034), which also pays for the number of models of
      size ``k`` and suits ``p`` larger than ``N``.

    Parameters
    ----------
    criterion : {'aic', 'bic', 'gic', 'ebic'}
    k : int or ndarray of int
        Number of selected features.
    n_features : int
    n_observations : float
    coefficients_per_feature : int
        Free coefficients per feature (see
        :attr:`~sparse_estimators.losses.BaseLoss.coefficients_per_feature`).
    gamma : float, default=1.0
        EBIC's ``gamma`` (0 gives BIC).
    models : tuple (n_units, n_selected_units) or None, default=None
        With a structure other than single features (groups), EBIC counts the
        models of that many units among ``n_units`` instead of ``k`` features
        among ``n_features``.

    Returns
    -------
    float or ndarray
    """
    k = np.asarray(k, dtype=float)
    df = k * coefficients_per_feature
    N, p = float(n_observations), float(n_features)
    if criterion == "aic":
        return 2.0 * df
    if criterion == "bic":
        return df * np.log(N)
    if criterion == "gic":
        return df * np.log(p) * np.log(max(np.log(N), 1.0))
    if criterion == "ebic":
        p, k = (p, k) if models is None else (float(models[0]), np.asarray(models[1], dtype=float))
        return df * np.log(N) + 2.0 * gamma * (gammaln(p + 1) - gammaln(k + 1) - gammaln(p - k + 1))
    raise ValueError(f"Unknown criterion {criterion!r}; expected one of {CRITERIA}.")


def information_criterion(loss, W, b, criterion, gamma=1.0, *, structure=None):
    """The criterion of the model ``(W, b)`` of ``loss`` (lower is better).

    ``loss.minus_two_log_likelihood(W, b)`` plus :func:`criterion_penalty`
    for the number of non-zero rows of ``W``. A loss without a likelihood
    (``has_likelihood`` False: Huber) gives its
    ``quasi_minus_two_log_likelihood`` instead, for the estimators' own
    ``k=None``; :class:`~sparse_estimators.model_selection.SparsityIC`
    refuses such a loss.

    Parameters
    ----------
    loss : BaseLoss
    W, b : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
    criterion : {'aic', 'bic', 'gic', 'ebic'}
    gamma : float, default=1.0
    structure : Structure or None, default=None
        With groups, EBIC counts models in groups (see :func:`criterion_penalty`).

    Returns
    -------
    float
    """
    features = np.flatnonzero(np.any(W != 0, axis=1))
    models = None
    if structure is not None and structure.n_units(loss.n_features) != loss.n_features:
        models = (structure.n_units(loss.n_features), structure.units(features).size)
    if loss.has_likelihood:
        fit = loss.minus_two_log_likelihood(W, b)
    else:  # (Huber: the quasi-likelihood of its least favourable distribution at the loss's scale)
        fit = loss.quasi_minus_two_log_likelihood(W, b)
    return fit + float(criterion_penalty(
        criterion, features.size, loss.n_features, loss.n_observations, loss.coefficients_per_feature, gamma,
        models=models))


def largest_k(n_observations, n_features, coefficients_per_feature=1):
    """The largest sparsity level an information criterion is asked to judge.

    ``floor(N / (m log(p)))`` with ``N`` observations, ``p`` features and
    ``m`` coefficients per feature (at least 1, at most ``p``): support
    recovery needs about ``k log(p)`` observations (Wainwright, 2009,
    https://doi.org/10.1109/TIT.2009.2016018), so
    larger models cannot be told apart from noise, and it keeps the model
    well below saturation (``k m`` coefficients against ``N``
    observations), where the fit term of least squares tends to minus
    infinity and every criterion picks the largest model. The benchmark
    :source:`benchmarks/auto_k.py` measures it.

    Parameters
    ----------
    n_observations : float
    n_features : int
    coefficients_per_feature : int, default=1

    Returns
    -------
    int
    """
    per_feature = max(int(coefficients_per_feature), 1) * np.log(max(n_features, 3))
    return int(max(1, min(n_features, np.floor(float(n_observations) / per_feature))))


def criterion_levels(structure, n_observations, n_features, coefficients_per_feature=1):
    """What an information criterion can judge under a structure (groups): a bound in features, and the levels.

    :func:`largest_k` bounds the number of *features* of a judged model,
    so with groups it counts the features inside the selected groups (a
    group of 50 features for 20 observations saturates the fit whatever
    ``k``); the forced units (``always_select``) are the smallest model a
    fit allows, so the bound is at least their number of features.

    Parameters
    ----------
    structure : Structure
        Rows or groups, with their forced units.
    n_observations : float
    n_features : int
    coefficients_per_feature : int, default=1

    Returns
    -------
    bound : int
        The most features a judged model has.
    admissible : ndarray of bool of shape (n_units,)
        The forced units, and the others that fit within ``bound`` beside them.
    top : int
        The largest level (in units) with a judged model: the forced units
        plus as many of the smallest admissible others as fit (``top`` is
        ``largest_k`` for single features; less than 1 when nothing fits).
    """
    n_units = structure.n_units(n_features)
    sizes = np.bincount(structure.unit_of_features(n_features), minlength=n_units)
    forced = np.zeros(n_units, dtype=bool)
    if structure.forced is not None:
        forced[structure.forced] = True
    n_forced = int(sizes[forced].sum())
    bound = max(largest_k(n_observations, n_features, coefficients_per_feature), n_forced)
    room = bound - n_forced
    admissible = forced | (sizes <= room)
    others = np.cumsum(np.sort(sizes[admissible & ~forced]))
    top = int(forced.sum()) + int(np.searchsorted(others, room, side="right"))
    return bound, admissible, top
