"""``k=None``: choose ``k`` by an information criterion along a warm-started path (the estimators' ``_choose_k``)."""

import numpy as np

from .. import _policy
from ..model_selection._criteria import criterion_levels, information_criterion
from ..model_selection._path import solve_path
from ..thresholding import Hard


def choose_k(estimator, loss, operator, W0, b0):
    """``k=None``: choose ``k`` by an information criterion along a warm-started path, then fit there.

    The path fits hard-thresholding IHT at ``k = 1, 2, ...`` (each level
    warm-started from the last and refitted on its support, no splicing
    search: the cheap fits that rank the levels), while the model has at
    most :func:`~sparse_estimators.model_selection._criteria.largest_k`
    features (counted inside the selected groups, with groups: groups
    too large to fit are left out, see
    :func:`~sparse_estimators.model_selection._criteria.criterion_levels`),
    and stops ``_policy.K_PATIENCE`` levels after the best value of the criterion
    ``_k_criterion``; the chosen level is the smallest whose criterion is
    within ``_policy.K_MARGIN`` of that best value. The estimator's own algorithm (solver, operator,
    splicing) then fits at the best level, started from the path's
    solution there (the path's fit is kept if that one has more features
    than the bound).

    Returns
    -------
    k : int
        The chosen level.
    fit : _Fit
    selection : dict
        ``k_path_``, ``criterion_path_``, ``k_criterion_``.
    """
    criterion = estimator._k_criterion
    values = {}
    # the criteria judge models of at most `bound` features, counted inside the selected groups: groups
    # that cannot fit beside the forced ones are left out, and the path stops at the first larger model
    bound, admissible, top = criterion_levels(operator, loss.n_observations, loss.n_features,
                                              loss.coefficients_per_feature)
    first = 1 if operator.forced is None else max(1, operator.forced.size)
    if top < first:
        raise ValueError(f"k=None cannot choose {estimator._level_name}: every group has more than {bound} features, "
                         f"the most an information criterion can judge with {loss.n_observations:g} "
                         f"observations and {loss.n_features} features (n / log(n_features)); pass "
                         f"{estimator._level_name}.")
    if not admissible.all():
        operator = operator.with_excluded(np.flatnonzero(~admissible))

    def n_features(fit):  # (the features inside the selected units)
        return operator.features(operator.units(fit.support)).size

    def stop(k, fit):
        if n_features(fit) > bound:
            return True
        values[k] = information_criterion(loss, fit.coef, fit.b, criterion, structure=operator)
        best = min(values, key=values.get)
        return k - best >= _policy.K_PATIENCE

    path = solve_path(estimator, loss, operator.with_operator(estimator._constrained(Hard())), range(first, top + 1),
                      loss.zeros()[0], b0, screening=True, stop=stop)
    levels = np.array(sorted(values))
    curve = np.array([values[k] for k in levels])
    best = int(levels[np.flatnonzero(curve <= curve.min() + _policy.K_MARGIN)[0]])
    for _ in range(_policy.K_REJUDGE_ROUNDS):  # (until the level stays: see _rejudging_loss)
        judge = estimator._rejudging_loss(loss, path[best])
        if judge is None:
            break
        curve = np.array([information_criterion(judge, path[k].coef, path[k].b, criterion, structure=operator)
                          for k in levels])
        level = int(levels[np.flatnonzero(curve <= curve.min() + _policy.K_MARGIN)[0]])
        if level == best:
            break
        best = level
    cheap = path[best]
    fit = estimator._solve(loss, operator, best, cheap.coef, cheap.b)
    if n_features(fit) > bound:  # (the estimator's own search took larger groups): the judged model
        fit = cheap
    return best, fit, {"k_path_": levels, "criterion_path_": curve, "k_criterion_": criterion}
