"""Choosing k by an information criterion along one path (SparsityIC)."""


from numbers import Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
)

from .._dask import is_dask_collection
from ._criteria import CRITERIA, information_criterion
from ._path import _path_fits
from ._search import _SparsitySearchBase

__all__ = ["SparsityIC"]


class SparsityIC(_SparsitySearchBase):
    """Choose ``k`` by an information criterion, then refit.

    One warm-started path on all the data (the estimator's own fits at each
    ``k``); no cross-validation, hence about ``cv`` times cheaper than
    :class:`SparsityCV`. For each ``k``, the criterion is ``-2 log L`` (the
    loss's :meth:`~sparse_estimators.losses.BaseLoss.minus_two_log_likelihood`:
    ``n sum_j log(RSS_j / n)`` for least squares, ``RSS_j`` the residual sum
    of squares of target ``j``; the deviance, twice the summed log-loss, for
    logistic and multinomial; the Poisson likelihood, and the Gamma likelihood
    with its shape estimated by maximum likelihood, for the regressors'
    ``loss='poisson'`` and ``loss='gamma'``; the Cox partial likelihood for
    the models of :mod:`sparse_estimators.survival`) plus a penalty in ``df``, the number of free
    coefficients (``k`` times the number of targets, ``k`` for two classes,
    ``k (n_classes - 1)`` for more):

    * ``'aic'``: ``2 df``;
    * ``'bic'``: ``df log(n)``;
    * ``'gic'``: ``df log(p) log(log(n))``, abess's generalised information
      criterion;
    * ``'ebic'``: ``df log(n) + 2 gamma log(binomial(p, k))`` (Chen & Chen,
      2008), which also pays for the number of models of size ``k`` and suits
      ``p >> n``; the criterion of the estimators' ``k=None``, which
      recovered the true support best on the peer benchmark
      (the benchmark :source:`benchmarks/auto_k.py`).

    ``n`` is the number of observations: the number of samples, or the sum of
    the sample weights when it is larger (frequency weights; weights that sum
    to less, e.g. normalised to sum to 1, are read as relative importances,
    and the fit terms use the weighted means times ``n``).

    The grid stays where the criteria are defined: ``k`` at most
    ``n / (m log(p))`` (``m`` free coefficients per feature), beyond which
    the selection of the best-fitting features among ``p`` makes every
    criterion prefer ever larger models (in the limit of a saturated least
    squares fit, ``RSS = 0``, the fit term is minus infinity). With
    ``groups`` the bound counts the features inside the selected groups: the
    default grid ends at the largest number of groups whose smallest members
    fit within it, and a level whose fit has more features (it took larger
    groups) gets ``criterion_ = inf`` and is not chosen (a ValueError when no
    level is judged). With ``always_select``, the bound is at least their
    number of features, and the grid starts at their number.

    **Not the estimators' k=None.** SparsityIC takes the level of the
    smallest criterion (``argmin``; ties: the first of the grid). An
    estimator's ``k=None`` takes the smallest level whose EBIC is within 4
    of its path's minimum, over cheaper fits (hard-thresholding IHT, no
    splicing search) that stop 10 levels past the best: on the same data,
    ``SparsityIC(est, k_grid=est_fitted.k_path_)`` has the same criterion
    wherever the two fits agree, and can choose a larger ``k`` than
    ``est(k=None)`` (with a criterion lower by less than 4). For the
    choice of ``k=None``, take the smallest ``k`` of ``k_grid_`` whose
    ``criterion_`` is within 4 of its minimum.

    The Huber loss (``loss='huber'``) is not a likelihood: SparsityIC raises
    a ValueError for it; use :class:`SparsityCV`.

    Parameters
    ----------
    estimator : estimator of this package
        The model whose ``k`` is chosen.
    k_grid : array-like of int, default=None
        Candidate sparsity levels; ``None`` means ``1 .. n / (m log(p))``
        (see above). Larger values are left out, with a warning; values
        above ``n_features`` (``n_groups``) are clipped to it, and values
        below the number of ``always_select`` features (or groups) left out.
    criterion : {'ebic', 'bic', 'aic', 'gic'}, default='ebic'
        The information criterion.
    gamma : float in [0, 1], default=1.0
        EBIC's ``gamma`` (0 gives BIC).

    Attributes
    ----------
    k_ : int
        The chosen sparsity level.
    criterion_ : ndarray of shape (n_k,)
        The criterion at each ``k`` of ``k_grid_`` (``inf`` where the fit
        has more features than the criteria can judge, see above).
    k_grid_ : ndarray of shape (n_k,)
        The grid used.
    n_passes_ : int
        Only when ``X`` is a dask array: the passes over its chunks for the
        path and the refit (1 for least squares).
    best_estimator_ : estimator
        ``estimator`` with ``k=k_`` refitted on all the data.
    classes_ : ndarray
        Class labels (classifiers).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during fit, when ``X`` has string column
        names.

    See Also
    --------
    SparsityCV : Choose k by cross-validation.

    References
    ----------
    J. Chen and Z. Chen, "Extended Bayesian information criteria for model
    selection with large model spaces", Biometrika 95(3):759-771, 2008,
    https://doi.org/10.1093/biomet/asn034

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import IHTRegressor
    >>> from sparse_estimators.model_selection import SparsityIC
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((200, 300))
    >>> y = X[:, 1] - 2 * X[:, 5] + 1.5 * X[:, 20] + 0.5 * rng.standard_normal(200)
    >>> SparsityIC(IHTRegressor(), k_grid=range(1, 11), criterion="ebic").fit(X, y).k_
    3
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "k_grid": ["array-like", None],
        "criterion": [StrOptions(set(CRITERIA))],
        "gamma": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, estimator, *, k_grid=None, criterion="ebic", gamma=1.0):
        self.estimator = estimator
        self.k_grid = k_grid
        self.criterion = criterion
        self.gamma = gamma

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, **params):
        """Compute the path, the criterion at each ``k``, choose ``k_`` and refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            A classifier's column vector ``(n_samples, 1)`` is raveled with
            a DataConversionWarning.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the estimator (with metadata routing enabled, only if
            it requests it: ``set_fit_request(sample_weight=True)``).
        **params : dict
            With metadata routing enabled, metadata the estimator requests.

        Returns
        -------
        self : object
        """
        return self._atomic(self._fit, X, y, sample_weight, params)

    def _fit(self, X, y, sample_weight, params):
        self._check_estimator()
        X, y = self._validate_input(X, y)
        sample_weight = self._routed_fit_params(sample_weight, params).estimator.fit.get("sample_weight")
        if getattr(self.estimator, "loss", None) == "huber":  # (before the path: no criterion to compare with)
            raise ValueError("SparsityIC needs a likelihood, and the Huber loss (loss='huber') has none: "
                             "choose k by cross-validation with SparsityCV.")
        template, grid, fits, info, loss = _path_fits(self.estimator, X, y, sample_weight, self.k_grid,
                                                      criterion_limit=True)
        if not loss.has_likelihood:
            raise ValueError(f"SparsityIC needs a likelihood, and the {type(loss).__name__} has none: "
                             "choose k by cross-validation with SparsityCV.")
        structure = template._structure(template._validate_params(), loss)  # (EBIC counts groups with groups)
        bound = info["criterion_bound"]
        # a fit with more features than the criteria can judge (groups larger than the level's share) is not chosen
        judged = [structure.features(structure.units(fit.support)).size <= bound for fit in fits]
        crit = [information_criterion(loss, fit.coef, fit.b, self.criterion, self.gamma, structure=structure)
                if ok else np.inf for fit, ok in zip(fits, judged, strict=True)]
        if not any(judged):
            raise ValueError(f"Every fit of k_grid {grid.tolist()} has more than {bound} features, the most an "
                             f"information criterion can judge on these data (with groups, the selected groups "
                             f"are larger): choose k with SparsityCV.")
        self.criterion_ = np.array(crit)
        self.k_grid_ = grid
        self.k_ = int(grid[int(np.argmin(self.criterion_))])
        self._refit(X, y, sample_weight, (template, loss, info) if is_dask_collection(X) else None)

    def get_metadata_routing(self):
        """Get the metadata routing of this object: ``fit``'s metadata go to the estimator's fit.

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter`.
        """
        return MetadataRouter(owner=self).add(estimator=self.estimator,
                                              method_mapping=MethodMapping().add(caller="fit", callee="fit"))
