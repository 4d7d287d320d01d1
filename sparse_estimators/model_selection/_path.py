"""Warm-started paths over the sparsity level k."""

import copy
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch
from sklearn.utils.validation import _check_feature_names

from .._dask import set_feature_names
from ._criteria import criterion_levels


def default_k_grid(n_features):
    """The default grid: ``1 .. min(n_features, 50)``."""
    return np.arange(1, min(n_features, 50) + 1)


def _check_k_grid(k_grid, n_features, *, stacklevel=3, name="n_features"):
    """The validated grid: values above ``n_features`` clipped to it, repeated values merged (first kept).

    Clipping turns ``[50, 60]`` with 12 features into one candidate, 12; a
    warning names the clipped values and the candidates left, so a search
    never lists the same model twice under different ``k``.
    """
    if k_grid is None:
        return default_k_grid(n_features)
    grid = np.asarray(k_grid)
    # (booleans mixed with integers would become 0 and 1 in the array: refused, as the estimators' k=True is)
    booleans = any(isinstance(v, (bool, np.bool_)) for v in np.ravel(np.asarray(k_grid, dtype=object)))
    if (grid.ndim != 1 or grid.size == 0 or not np.issubdtype(grid.dtype, np.integer) or np.any(grid < 1)
            or booleans):
        raise ValueError(f"The 'k_grid' parameter must be a non-empty 1-D sequence of integers >= 1 (not booleans), "
                         f"got {k_grid!r}.")
    grid = grid.astype(np.int64)
    clipped = grid[grid > n_features]
    grid = np.minimum(grid, n_features)
    first = np.sort(np.unique(grid, return_index=True)[1])  # (the grid's order, each value once)
    if clipped.size:
        warnings.warn(f"k_grid has values above {name}={n_features} ({clipped.tolist()}); they are clipped "
                      f"to {n_features}, and repeated values merged: the candidates are {grid[first].tolist()}.",
                      UserWarning, stacklevel=stacklevel)
    elif first.size < grid.size:
        warnings.warn(f"k_grid has repeated values; each is evaluated once: {grid[first].tolist()}.",
                      UserWarning, stacklevel=stacklevel)
    return grid[first]


def _level_grid(k_grid, structure, n_features, *, stacklevel=4):
    """The grid of levels a path or a search fits, in the structure's units (features, or groups).

    :func:`_check_k_grid` with ``n_units`` in place of ``n_features``; the
    default grid and the given values start at the number of forced units
    (``always_select``), which ``fit`` refuses below: smaller given values
    are left out with a warning (a ValueError if none is left).
    """
    units = structure.n_units(n_features)
    n_forced = 0 if structure.forced is None else structure.forced.size
    if k_grid is None:
        return np.arange(max(n_forced, 1), max(n_forced, min(units, 50)) + 1)
    grid = _check_k_grid(k_grid, units, stacklevel=stacklevel + 1, name=structure.unit_name)
    if np.any(grid < n_forced):
        if np.all(grid < n_forced):
            raise ValueError(f"Every value of k_grid is below the number of 'always_select' features (or groups), "
                             f"{n_forced}, which count towards k: got {grid.tolist()}.")
        warnings.warn(f"k_grid has values below the number of 'always_select' features (or groups), {n_forced}, "
                      f"which count towards k: they are left out ({grid[grid < n_forced].tolist()}).",
                      UserWarning, stacklevel=stacklevel)
        grid = grid[grid >= n_forced]
    return grid


def _search_grid(estimator, X, k_grid):
    """:func:`_level_grid` for a search on ``X`` before any fit: the estimator's structure resolved on ``X``."""
    est = clone(estimator)
    operator = est._validate_params()
    _check_feature_names(est, X, reset=True)  # (groups as a callable of the feature names, always_select's names)
    if not hasattr(est, "feature_names_in_"):  # (a dask DataFrame's names, which scikit-learn does not read)
        set_feature_names(est, X)
    return _level_grid(k_grid, est._structure_for(operator, X.shape[1]), X.shape[1], stacklevel=5)


def _check_has_k(estimator, caller):
    """A TypeError unless ``estimator`` has a sparsity level ``k`` (not, e.g., ReducedRankRegressor's rank)."""
    if "k" not in estimator.get_params(deep=False):
        raise TypeError(f"{caller} searches over the sparsity level k, which {type(estimator).__name__} does not "
                        "have; search its parameters with sklearn.model_selection.GridSearchCV (e.g. "
                        "GridSearchCV(ReducedRankRegressor(), {'rank': range(1, 6)})).")


def _path_fits(estimator, X, y, sample_weight, k_grid, *, criterion_limit=False, second_search=True, setup=None):
    """Fit ``estimator`` at every k of ``k_grid`` (ascending), warm-starting each from the last.

    The loss (centering, smoothness constant) is built once. Returns the
    validated estimator clone, the grid, the per-k ``_Fit`` records (in grid
    order), the target information needed to format them, and the loss.
    With ``criterion_limit`` the grid stays where information criteria are
    defined (:func:`~sparse_estimators.model_selection._criteria.criterion_levels`):
    the default grid is ``1 .. top`` and larger values are dropped with a
    warning; ``info['criterion_bound']`` is the most features of a judged
    model. ``second_search`` is passed to :func:`solve_path`. ``setup``, if
    given, replaces the estimator's ``_setup``: ``setup(est)`` returns the
    ``(loss, info)`` of the validated clone ``est`` (a fold of a dask ``X``,
    from its statistics).
    """
    _check_has_k(estimator, "sparsity_path")
    est = clone(estimator)
    operator = est._validate_params()
    loss, info = est._setup(X, y, sample_weight) if setup is None else setup(est)
    structure = est._structure(operator, loss)
    grid = _level_grid(k_grid, structure, loss.n_features, stacklevel=4)
    info = dict(info, structure=structure)  # (the fitted estimators' k_ and groups_support_)
    if criterion_limit:  # (the bound counts features, inside the selected groups with groups)
        bound, _, top = criterion_levels(structure, loss.n_observations, loss.n_features,
                                         loss.coefficients_per_feature)
        info["criterion_bound"] = bound
        if k_grid is None:
            grid = np.arange(grid[0], top + 1)
        if np.any(grid > top):
            warnings.warn(f"k_grid has values above {top}, the largest level at which an information criterion "
                          f"can judge a model (at most {bound} features with {loss.n_observations:g} observations "
                          f"and {loss.n_features} features, n / log(n_features)); they are left out.",
                          UserWarning, stacklevel=3)
            grid = grid[grid <= top]
        if not grid.size:
            raise ValueError(f"No level of k_grid is at most {top}, the largest level at which an information "
                             f"criterion can judge a model (at most {bound} features) on these data.")
    fits = solve_path(est, loss, structure, np.unique(grid), *est._initial_point(loss, None, info),
                      second_search=second_search)
    return est, grid, [fits[int(k)] for k in grid], info, loss


def solve_path(est, loss, operator, levels, W, b, *, screening=False, stop=None, second_search=True):
    """Fit at each sparsity level of ``levels`` (ascending), each started from the last one's solution.

    The solution at the previous level is enlarged by the features of
    largest gradient and refitted (:func:`_expand`) before each solve.

    Parameters
    ----------
    est : estimator of this package
        Validated; its ``_solve`` fits one level.
    loss : BaseLoss
    operator : ThresholdingOperator
    levels : sequence of int
        Increasing sparsity levels.
    W, b : ndarrays
        Start of the first level.
    screening : bool, default=False
        Passed to ``est._solve``: the cheap fits of the path that chooses
        ``k`` instead of the estimator's own.
    stop : callable or None
        ``stop(k, fit)`` after each level; True ends the path there.
    second_search : bool, default=True
        Passed to ``est._solve``: False skips the splicing search's second
        start (cheaper levels, see :class:`SparsityCV`).

    Returns
    -------
    dict
        ``{k: _Fit}`` for the levels solved.
    """
    fits, gradient = {}, None
    structure = est._structure(operator, loss)
    for k in levels:
        k = int(k)
        if fits:  # (the gradient at the last solution, when its solver left it there)
            W, b = _expand(loss, W, b, k, gradient, structure)
        fit = est._solve(loss, operator, k, W, b, screening=screening, refitted_start=bool(fits),
                         second_search=second_search)
        fits[k] = fit
        W, b, gradient = fit.coef, fit.b, fit.gradient
        if stop is not None and stop(k, fit):
            break
    return fits


def _expand(loss, W, b, k, gradient, structure):
    """Warm start for level ``k`` from a sparser solution: add, by gradient, and refit.

    The units (features, or groups) of largest gradient norm outside the
    current support fill it up to ``k`` (ties: lower index), and the loss is
    minimised on the enlarged support (an orthogonal-matching-pursuit step).
    The solver then starts from a point that is optimal on its support, so a
    stable support converges in one or two iterations.
    """
    mask = np.any(W != 0, axis=1)
    missing = k - structure.units(np.flatnonzero(mask)).size
    if missing <= 0:
        return W, b
    gW = loss.value_and_gradient(W, b)[1] if gradient is None else gradient
    return structure.refit(loss, np.flatnonzero(structure.expand(gW, mask, missing)), W, b)


def _fitted_estimator(template, fit, info, k):
    """A fitted copy of ``template`` (a set-up estimator) holding ``fit`` at level ``k``."""
    est = copy.copy(template)
    est.__dict__ = dict(template.__dict__)
    est.k = int(k)
    est._store(fit, info)
    est._store_level(k, info["structure"])
    return est


def sparsity_path(estimator, X, y, k_grid=None, *, sample_weight=None):
    """Coefficients and training objective over a grid of sparsity levels, warm-started.

    The levels are solved in increasing order, each started from the solution
    at the previous level enlarged by the features of largest gradient and
    refitted on that support (an orthogonal-matching-pursuit step); the loss
    (centering, smoothness constant) is set up once. On well-posed problems each point equals a single fit of
    ``estimator`` at that ``k`` (same support; same coefficients with
    ``debias=True``). On small noisy designs (mostly beyond the true
    sparsity) a point can keep other features than a cold fit, usually with
    a lower training loss, in about one case in six a higher one; with
    ``loss='huber'`` it can also reach the cold fit's support with other
    coefficients, as Huber's second fit runs at the residual scale of the
    first, which then started elsewhere.

    Parameters
    ----------
    estimator : estimator of this package
        Any regressor or classifier of :mod:`sparse_estimators` (unfitted or
        fitted: its hyperparameters are used, ``k`` is overridden).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets.
    k_grid : array-like of int, default=None
        Sparsity levels; ``None`` means ``1 .. min(n_features, 50)`` (with
        ``groups``, ``k`` counts groups: ``n_groups`` in place of
        ``n_features``; with ``always_select``, from their number on). Levels
        above ``n_features`` (``n_groups``) are clipped to it and repeated
        levels merged, and levels below the number of ``always_select``
        features (or groups), which ``fit`` refuses, left out (with a
        warning).
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    path : :class:`~sklearn.utils.Bunch`
        ``k_grid`` (n_k,); ``coefs`` ``(n_k, *coef_.shape)``; ``intercepts``
        (n_k, ...); ``objectives`` (n_k,), the training loss after the
        (debiased) fit; ``n_iter`` (n_k,); ``supports``, a list of index
        arrays; ``estimators``, a fitted estimator per level, with the
        attributes of ``fit`` at that ``k`` (``k_``, and ``groups_support_``
        with ``groups``).

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import IHTRegressor
    >>> from sparse_estimators.model_selection import sparsity_path
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((100, 10))
    >>> y = 3 * X[:, 0] - 2 * X[:, 4] + X[:, 7]
    >>> path = sparsity_path(IHTRegressor(), X, y, k_grid=[1, 2, 3])
    >>> [s.tolist() for s in path.supports]
    [[0], [0, 4], [0, 4, 7]]
    >>> bool(path.objectives[2] < 1e-20)
    True
    """
    template, grid, fits, info, loss = _path_fits(estimator, X, y, sample_weight, k_grid)
    estimators = [_fitted_estimator(template, fit, info, k) for fit, k in zip(fits, grid, strict=True)]
    return Bunch(
        k_grid=grid,
        coefs=np.array([e.coef_ for e in estimators]),
        intercepts=np.array([e.intercept_ for e in estimators]),
        objectives=np.array([loss.value(fit.coef, fit.b) for fit in fits]),
        n_iter=np.array([fit.n_iter for fit in fits]),
        supports=[fit.support for fit in fits],
        estimators=estimators,
    )

