"""Base classes of the estimators: validation, loss and operator set-up, attributes.

An algorithm is a solver function (``sparse_estimators.solvers``); an
estimator pair is two short subclasses of
:class:`~sparse_estimators.linear_model._regressor.SparseRegressorBase` and
:class:`~sparse_estimators.linear_model._classifier.SparseClassifierBase` that
name the solver and its extra hyperparameters (``_solver_params``). This
module holds what both share (:class:`_SparseLinearBase`: parameters,
operator and structure set-up, the solver call); ``k=None``'s path is in
``_auto_k.py``, the losses' scaling in ``_scaling.py``, input checks in
``_validation.py``.
"""

import contextlib
import functools
import inspect
import time
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _policy
from .._utils import _DocLinkMixin, all_or_nothing, row_squares
from ..losses._design import shared_extremes
from ..solvers import iht, splice
from ..solvers._base import SolverResult, nonzero_rows, same_indices
from ..structures import Groups, Rows, Structure, get_structure
from ..thresholding import ThresholdingOperator, get_operator
from ..thresholding._operators import _NAMED, check_nested_params
from ._auto_k import choose_k
from ._dask import lazy_method, uses_dask
from ._forced import forced_units
from ._scaling import _exponent
from ._validation import _check_int, _check_real, check_parameters

#: ``ndarray.any`` without its Python wrapper (a small fit's set-up asks a few times)
_any = np.logical_or.reduce


class _Fit(NamedTuple):
    coef: np.ndarray
    b: np.ndarray
    intercept: np.ndarray
    support: np.ndarray
    n_iter: int
    loss_curve: np.ndarray
    n_exchanges: int = 0
    gradient: np.ndarray | None = None  # at coef, when the solver left it (SolverResult.gradient)
    weights: np.ndarray | None = None  # regularized IHT's final per-feature weights (SolverResult.weights)


@functools.cache
def _takes(solver, name):
    """Whether the solver function has the keyword parameter ``name`` (looked up once)."""
    return name in inspect.signature(solver).parameters


def _samples_per_selection(loss, k):
    """Observations per ``k log(p - k)`` (the scale of the information needed to select ``k`` of ``p``).

    Observations, not rows: integer weights count as repeated rows (see
    :attr:`~sparse_estimators.losses.BaseLoss.n_observations`). With groups
    ``k`` counts groups, on purpose: counting their features would stop the
    classifiers' splicing (``'auto'``) at n = 200, p = 500, 5 groups, where it
    raises the group F1 from 0.55 to 0.72 (SNR 6), and the regressors'
    switch gate at 0.25 instead of 0.1 gave the same group F1 there
    (:source:`benchmarks/compare_groups.py`'s designs, 20 data sets per
    setting; issue 33).
    """
    return _observations_per_selection(loss.n_observations, loss.n_features, k)


@functools.lru_cache(maxsize=64)  # (a fit asks three to five times: a NumPy log each)
def _observations_per_selection(N, p, k):
    return N / (k * np.log(max(p - k, 2)))


#: the parameter names of each estimator class (see _SparseLinearBase._get_param_names)
_PARAM_NAMES = {}


def _taken(W, operator):
    """The features a model counts towards ``k``: its non-zero rows and the forced ones (``always_select``)."""
    support = nonzero_rows(W)
    return support if operator.forced is None else np.union1d(support, operator.features(operator.forced))


def _fill_nonnegative(loss, operator, k, W, b):
    """``positive=True``: a model with fewer than ``k`` non-zero rows takes the features that still lower the loss.

    A non-negative refit can end a selected feature at 0 (I-OBS's start had it negative, and the
    splicing search then keeps the empty slot: its exchanges must clear a significance gate). While
    fewer than ``k`` features are non-zero, the unselected feature of largest gain ``g_j^2 / h_j``
    among those with a negative gradient ``g_j`` (raising it from 0 lowers the loss; with several
    targets, the negative entries of row ``j``) is added and the support refitted; none such: the
    data support fewer (the Karush-Kuhn-Tucker conditions hold).
    """
    h = loss.coordinate_curvatures()
    for _ in range(k):
        taken = _taken(W, operator)
        if taken.size >= k:
            break
        f, G = loss.value_and_gradient(W, b)[:2]
        G = np.minimum(G, 0.0)  # (the descent directions, per output)
        descent = np.any(G < 0, axis=1) & (h > loss.alpha)
        descent[taken] = False
        if operator.excluded is not None:
            descent[operator.features(operator.excluded)] = False
        if not descent.any():
            break
        gain = np.where(descent, row_squares(G) / np.maximum(h, np.finfo(float).tiny), -np.inf)
        W_new, b_new = loss.refit(np.union1d(nonzero_rows(W), [int(np.argmax(gain))]), W, b)
        if not loss.value(W_new, b_new) < f:
            break
        W, b = W_new, b_new
    return W, b


class _SparseLinearBase(_DocLinkMixin, BaseEstimator):
    """Fit a linear model with exactly ``k`` features by a sparse solver.

    Subclasses set ``_solver`` (a function of ``sparse_estimators.solvers``)
    and ``_solver_params`` (names of the extra hyperparameters it takes),
    and implement ``_validate_extra_params`` for them.
    """

    _solver = None
    _solver_params = ()
    #: the parameter that sets ``k`` (in messages; the reduced-rank estimators' ``rank``)
    _level_name = "k"
    #: the ``stacklevel`` of ``_solve``'s warnings (the user's call to ``fit``; one more for the regressors,
    #: whose ``_solve`` wraps this one)
    _warn_depth = 4
    #: with ``debias=True``, solvers that can (``support_refit`` parameter) jump to the minimiser on the support
    #: once it has been unchanged for as many iterations as the ``_policy`` constant this names (set per task:
    #: the tuned numbers live in _policy.py only, tests/test_policy.py)
    _support_refit_patience = "SUPPORT_REFIT_PATIENCE"
    #: the same with ``groups`` (None: ``_support_refit_patience``), set per task
    _group_support_refit_patience = None
    #: options of the splicing search (see ``splice``) that are not tuned numbers, set per task (the gates:
    #: ``_splice_kwargs``)
    _splice_options = {}
    #: a cold group fit with the group search runs the search alone, without this solver (IHT and accelerated
    #: IHT, whose support the search replaces anyway; see _policy.GROUP_SEARCH_FROM_ZERO)
    _group_search_alone = False
    #: ``splicing='auto'`` splices when ``n_samples > factor * k * log(n_features - k)``, with ``factor`` the
    #: ``_policy`` constant of this name, set per task
    _splice_auto_factor = "SPLICE_AUTO_FACTOR"
    #: ``k=None``: the information criterion that chooses ``k`` (doc/auto_k.md); the path's patience and margin
    #: are ``_policy.K_PATIENCE`` and ``_policy.K_MARGIN``
    _k_criterion = "ebic"
    #: scikit-learn's declarative parameter constraints; each class lists its own parameters and
    #: ``__init_subclass__`` merges those of its bases (mixins included), so ``_parameter_constraints``
    #: of an estimator class covers all its parameters
    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "thresholding": [StrOptions(set(_NAMED)), ThresholdingOperator],
        "step_size": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "debias": ["boolean"],
        "splicing": ["boolean", StrOptions({"auto"})],
        "groups": ["array-like", callable, None],
        "always_select": ["array-like", None],
        "warm_start": ["boolean"],
        "verbose": [Interval(Integral, 0, None, closed="left")],
    }

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        merged = {}
        for klass in reversed(cls.__mro__):
            merged.update(vars(klass).get("_parameter_constraints", {}))
        cls._parameter_constraints = merged

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's (the parameters of ``__init__``'s signature), read once per class (30 us per fit)."""
        names = _PARAM_NAMES.get(cls)
        if names is None:
            names = _PARAM_NAMES[cls] = super()._get_param_names()
        return list(names)

    def __init__(self, k=None, *, thresholding="hard", step_size="auto", max_iter=1000, tol=1e-4,
                 fit_intercept=True, debias=True, splicing=True,
                 groups=None, always_select=None, warm_start=False, verbose=0):
        self.k = k
        self.thresholding = thresholding
        self.step_size = step_size
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.debias = debias
        self.splicing = splicing
        self.groups = groups
        self.always_select = always_select
        self.warm_start = warm_start
        self.verbose = verbose

    def set_params(self, **params):
        """Set the parameters, scikit-learn's way; ``thresholding__c`` reaches an operator object.

        Parameters
        ----------
        **params : dict
            Estimator parameters; ``thresholding__<name>`` sets a parameter
            of the ``thresholding`` operator object (``c`` of
            :class:`~sparse_estimators.thresholding.Reciprocal`, ``q`` of
            :class:`~sparse_estimators.thresholding.Lq`), in place. A
            ValueError if ``thresholding`` is a name (``'reciprocal'``).

        Returns
        -------
        self : estimator instance
        """
        check_nested_params(self.thresholding, params)
        return super().set_params(**params)

    # -- validation -------------------------------------------------------------
    def _validate_params(self):
        # scikit-learn's InvalidParameterError (a ValueError naming the class and the allowed range) first;
        # the checks below add what the constraints cannot say (bool is not an int, finite values)
        check_parameters(self._parameter_constraints, self.get_params(deep=False), type(self).__name__)
        if self.k is not None:
            _check_int(self._level_name, self.k, 1)
        operator = get_operator(self.thresholding)
        if not (isinstance(self.step_size, str) and self.step_size == "auto"):
            if isinstance(self.step_size, str):
                raise ValueError(f"The 'step_size' parameter must be 'auto' or a positive float, "
                                 f"got {self.step_size!r}.")
            _check_real("step_size", self.step_size)
        _check_int("max_iter", self.max_iter, 1)
        _check_real("tol", self.tol, low_open=False)
        _check_int("verbose", self.verbose, 0)
        for name in ("fit_intercept", "debias", "warm_start"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"The '{name}' parameter must be a bool, got {getattr(self, name)!r}.")
        if not (isinstance(self.splicing, (bool, np.bool_))
                or isinstance(self.splicing, str) and self.splicing == "auto"):
            raise ValueError(f"The 'splicing' parameter must be a bool or 'auto', got {self.splicing!r}.")
        self._validate_extra_params()
        return operator

    def _validate_extra_params(self):
        """Check the hyperparameters that only some estimators have."""

    def _constrained(self, operator):
        """The projection with the coefficients' constraints (``positive=True``: :class:`_NonNegative`)."""
        return operator

    def _effective_k(self, n_units, unit="n_features"):
        """The sparsity level to fit (``k`` clipped to the number of units), or None to choose it."""
        if self.k is None:
            return None
        if self.k > n_units:
            warnings.warn(f"k={self.k} is larger than {unit}={n_units}; using k={n_units}.",
                          UserWarning, stacklevel=3)
            return n_units
        return int(self.k)  # (numpy integers from grids such as np.arange)

    def _structure(self, operator, loss):
        """The structure the operator acts through: rows or the ``groups``, keeping ``always_select``.

        Validated against the loss's number of features; a structure is
        returned as it is.
        """
        return self._structure_for(operator, loss.n_features)

    def _structure_for(self, operator, n_features):
        """:meth:`_structure` for ``n_features`` features, before any loss (e.g. a search's grid)."""
        if isinstance(operator, Structure):
            return operator
        if self.groups is None:
            return self._with_forced(get_structure(operator), n_features)
        groups = self.groups
        if callable(groups):  # (e.g. groups_from_feature_names: labels from the input's column names)
            if not hasattr(self, "feature_names_in_"):
                raise ValueError("The 'groups' parameter is a callable of the feature names, but X has none: "
                                 "pass a DataFrame (in a Pipeline, .set_output(transform='pandas') on the "
                                 "transformer before this estimator), or, for sparse output, use "
                                 "sparse_estimators.compose.GroupsFromTransformer(transformer, estimator), "
                                 "which takes the names from the fitted transformer.")
            groups = groups(self.feature_names_in_)
        if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
            raise ValueError(f"The 'groups' parameter must be an array-like of one label per feature, "
                             f"got {type(groups).__name__}.")
        if len(groups) != n_features:
            raise ValueError(f"The 'groups' parameter must have one label per feature: got {len(groups)} "
                             f"labels for {n_features} features.")
        try:
            structure = get_structure(operator, groups)
        except TypeError as exc:  # (unhashable, unorderable or mixed labels)
            raise ValueError(f"The 'groups' parameter must hold hashable, sortable labels, all numbers or all "
                             f"strings: {exc}.") from None
        return self._with_forced(structure, n_features)

    def _with_forced(self, structure, n_features):
        """``structure`` keeping the ``always_select`` features (or groups), validated (see ``_forced.py``)."""
        if self.always_select is None:
            return structure
        return structure.with_forced(forced_units(self.always_select, structure, n_features,
                                                  getattr(self, "feature_names_in_", None)))

    # -- fitting ----------------------------------------------------------------
    def _initial_point(self, loss, coef_init, info=None):
        x_scale, y_scale = (info or {}).get("scale", (1.0, 1.0))
        W, b = self._initial_point_unscaled(loss, coef_init, y_scale / x_scale, y_scale)
        if (x_scale, y_scale) != (1.0, 1.0):  # a start in the user's units, solved in the rescaled problem's
            W = W * (y_scale / x_scale)
        return W, b

    def _initial_point_unscaled(self, loss, coef_init, coef_scale=1.0, intercept_scale=1.0):
        """The start: ``W`` in the user's units, ``b`` in the loss's (``intercept_scale`` times the user's).

        (The cold intercept, ``loss.initial_intercept()``, is already in the loss's units: scaled by ``y``'s
        factor once more, Huber's weighted median of a rescaled tiny ``y`` started ``2**20`` times too far.)
        """
        W, b = loss.zeros()
        b = loss.initial_intercept()
        zeros, (p, m) = W, W.shape
        if coef_init is not None:
            C = np.asarray(coef_init, dtype=float)
            # the documented shapes only: a (n_features, n_targets) array or a flat one has the right size
            # but would be read in an order the caller did not mean (transposed)
            if C.shape != (m, p) and not (m == 1 and C.shape == (p,)):
                raise ValueError(f"coef_init has shape {C.shape}; expected {self._coef_shape(p, m)}"
                                 + (f" or {(1, p)}." if m == 1 else " (n_targets or n_classes, n_features)."))
            W = C.reshape(m, p).T.copy()
        elif self.warm_start and hasattr(self, "coef_"):
            C = np.asarray(self.coef_, dtype=float)
            # (a different shape, e.g. other classes or features, starts cold)
            if C.shape == self._coef_shape(p, m) or (C.ndim == 2 and C.shape == (m, p)):
                W = C.reshape(m, p).T.copy()
                if loss.intercept_is_variable and loss.fit_intercept:
                    # (the variable of the loss's parametrisation, for the coefficients as the loss scales them)
                    intercept = np.atleast_1d(np.asarray(self.intercept_, dtype=float))
                    b = loss.intercept_variable(W * coef_scale, intercept * intercept_scale if intercept_scale != 1.0
                                                else intercept)
        if W is not zeros and not np.logical_and.reduce(np.isfinite(W), axis=None):  # (a cold start is finite)
            raise ValueError("coef_init contains NaN or infinity.")
        return W, b

    def _solver_options(self):
        return {name: getattr(self, name) for name in self._solver_params}

    def _sparse_solver(self):
        """The solver function of this fit (``_solver``; an estimator with a ``solver`` parameter overrides it)."""
        return type(self)._solver

    def _refit_patience(self, loss, operator, k):
        """The unchanged iterations after which the solver jumps to the minimiser on its support (``debias=True``)."""
        name = self._group_support_refit_patience if isinstance(operator, Groups) else None
        return getattr(_policy, name or self._support_refit_patience)

    def _search_from_zero(self, loss, k):
        """Whether a cold fit without groups skips the solver: the splicing search alone, from abess's start."""
        return False

    def _splices(self, loss, k):
        """Whether the fit runs the splicing search (``splicing`` resolved)."""
        if isinstance(self.splicing, str):  # 'auto'
            return bool(_samples_per_selection(loss, k) > getattr(_policy, self._splice_auto_factor))
        return bool(self.splicing)

    def _splice_kwargs(self, loss, k):
        """The options of this fit's splicing search (``_splice_options``; each task adds its ``_policy`` gates)."""
        return self._splice_options

    def _finish_solver(self, loss, operator, k, result):
        """The solver's result, before the warnings and the debiasing refit (``debias=True`` fits only).

        An estimator that knows its minimiser in closed form may finish the
        run with it (:class:`~sparse_estimators.ReducedRankRegressor`); none here.
        """
        return result

    def _solver_start(self, loss, operator, k, W0, b0):
        """Where the solver starts (``debias=True`` fits only): ``(W0, b0)`` as given; none changes it here.

        An estimator that knows its minimiser in closed form may start the
        solver there (:class:`~sparse_estimators.ReducedRankRegressor`).
        """
        return W0, b0

    def _solve(self, loss, operator, k, W0, b0, *, screening=False, refitted_start=False, second_search=True):
        """Run the solver and the debiasing refit; no attribute is set.

        ``screening=True`` is the cheap fit of the path that chooses ``k``
        (:meth:`_choose_k`): hard-thresholding IHT (the caller passes the
        hard operator) with its support jump, refitted on the support, no
        splicing search, whatever the estimator's own settings; with
        ``refitted_start`` (``W0, b0`` minimise the loss on their support, as
        the path's warm starts do) it stops at once where that start is a
        fixed point. ``second_search=False`` runs the splicing search from
        the solver's support only, not its second start (``splice``'s
        ``screening_start``): the cheaper fits of :class:`SparsityCV`'s paths.

        Returns
        -------
        _Fit
            ``coef`` (n_features, n_outputs), ``b`` (the intercept variable,
            a warm start for the next solve), ``intercept`` (the model's),
            ``support``, ``n_iter``, ``loss_curve``.
        """
        start = time.perf_counter()
        operator = self._structure(operator, loss)
        rows = operator.as_rows() if isinstance(operator, Groups) else None
        if rows is not None:  # every group one feature: the fit without groups (the groups' search has other gates
            operator = rows  # and starts, and stopped short of its optimum: doc/changelog.rst, "groups of one")
        options = {"refitted_start": refitted_start} if screening else self._solver_options()
        solver = iht if screening else self._sparse_solver()
        debias = screening or self.debias
        if debias and _takes(solver, "support_refit"):
            # the fit ends with a refit on the support: jump there once the support settles (at
            # once on the screening path, whose levels start refitted on the previous support)
            options["support_refit"] = 1 if screening else self._refit_patience(loss, operator, k)
        # a cold hard-thresholding fit that the splicing search ends may skip the solver: the search starts from
        # abess's start alone (the k features or groups of largest gain at zero)
        from_zero = (debias and not screening and operator.is_hard and self._splices(loss, k)
                     and not _any(W0, axis=None) and same_indices(b0, loss.initial_intercept()))
        if from_zero and isinstance(operator, Groups):  # (one output; _policy.GROUP_SEARCH_FROM_ZERO)
            from_zero = (self._group_search_alone and _policy.GROUP_SEARCH_FROM_ZERO and loss.n_outputs == 1
                         and getattr(loss, "group_search_from_zero", False)
                         and k < operator.n_units(loss.n_features))
        elif from_zero:  # (where the estimator says so: _policy.SEARCH_FROM_ZERO_MIN_SAMPLES)
            from_zero = (second_search and type(operator) is Rows and operator.forced is None
                         and operator.excluded is None and k < loss.n_features and self._search_from_zero(loss, k))
        if from_zero:
            result = SolverResult(W0, b0, np.empty(0, dtype=np.intp), 0, converged=True)
        else:
            if not screening and debias:
                W0, b0 = self._solver_start(loss, operator, k, W0, b0)
            result = solver(loss, operator, k, W0=W0, b0=b0, step_size=self.step_size,
                            max_iter=self.max_iter, tol=self.tol, verbose=self.verbose, **options)
            if not screening and debias:
                result = self._finish_solver(loss, operator, k, result)
        W, b = result.coef, result.intercept
        name = type(self).__name__
        if result.diverged:
            warnings.warn(f"{name} diverged (the objective blew up) after {result.n_iter} iterations "
                          f"with step_size={self.step_size!r}; the best finite iterate is kept. Use a "
                          "smaller step_size or step_size='auto'.", ConvergenceWarning, stacklevel=self._warn_depth)
        elif not result.converged:
            warnings.warn(f"{name} did not converge in max_iter={self.max_iter} iterations; "
                          "increase max_iter or tol.", ConvergenceWarning, stacklevel=self._warn_depth)
        support = nonzero_rows(W)
        n_exchanges, gradient = 0, result.gradient
        if operator.forced is not None and debias and not from_zero:  # (a forced feature whose coefficient is 0)
            forced = operator.features(operator.forced)
            if not np.isin(forced, support).all():
                support = np.union1d(support, forced)
                W, b = operator.refit(loss, support, W, b)
                result.refitted, gradient = True, None
        if from_zero or debias and not screening and operator.exchanges and self._splices(loss, k) and support.size:
            kwargs = self._splice_kwargs(loss, k) | ({} if second_search else {"screening_start": False})
            if (gradient is not None and result.linear_predictor is not None and result.refitted
                    and same_indices(support, result.support)):  # (the search starts where the solver ended)
                kwargs["start_state"] = (result.linear_predictor, result.objective[-1], gradient)
            if (result.start_gradient is not None and second_search and not _any(W0, axis=None)
                    and same_indices(b0, loss.initial_intercept())):  # (the second start's gradient at zero)
                kwargs["zero_gradient"] = result.start_gradient
            if operator.forced is not None:
                kwargs["forced"] = operator.features(operator.forced)
            if isinstance(operator, Groups):  # (the search then exchanges whole groups)
                kwargs["max_exchange"] = _policy.GROUP_MAX_EXCHANGE
            spliced = splice(loss, k, W, b, refitted=result.refitted, structure=operator, **kwargs)
            W, b, n_exchanges, gradient = spliced.coef, spliced.intercept, spliced.n_iter, None
        elif debias and support.size and not result.refitted:
            W, b = operator.refit(loss, support, W, b)
            gradient = None
        if loss.positive and np.any(W < 0):  # (e.g. IOBS's unconstrained Newton correction): back to W >= 0
            W, b = loss.refit(np.flatnonzero(np.any(W != 0, axis=1)), W, b)
            gradient = None
        if loss.positive and debias and not screening and type(operator) is Rows and _taken(W, operator).size < k:
            W, b = _fill_nonnegative(loss, operator, k, W, b)
            gradient = None
        support = nonzero_rows(W)
        if isinstance(operator, Groups):  # a group is in or out whole (positive=True can zero part of it)
            support = operator.features(operator.units(support))
        if operator.forced is not None:  # (in the support even where positive=True's refit sets them to 0)
            support = np.union1d(support, operator.features(operator.forced))
        if self.verbose:
            print(f"[{name}] k={k}: {result.n_iter} iterations and {n_exchanges} exchanges in "
                  f"{time.perf_counter() - start:.2f} s, "
                  f"objective {loss.value(W, b):.6g}, {support.size} features selected")
        return _Fit(W, b, loss.intercept(W, b), support, result.n_iter,
                    np.asarray(result.objective, dtype=float), n_exchanges, gradient, getattr(result, "weights", None))

    def _fit(self, X, y, sample_weight, coef_init, setup=None):
        """Validate, set up the loss, solve, store: all or nothing.

        Any exception (including KeyboardInterrupt) restores the estimator's
        previous state, so an interrupted fit never leaves it half-fitted.
        ``setup``: the ``(loss, info)`` of :meth:`_setup` on the same data,
        already built (a search's refit on a dask ``X``: no second pass).
        """
        with all_or_nothing(self):
            operator = self._validate_params()
            if setup is None:
                with shared_extremes(X):  # (validation, scaling and the loss read X's column extremes once)
                    setup = self._setup(X, y, sample_weight)
            loss, info = setup
            operator = self._structure(operator, loss)
            k = self._effective_k(operator.n_units(loss.n_features), operator.unit_name)
            n_forced = 0 if operator.forced is None else operator.forced.size
            if k is not None and n_forced > k:
                raise ValueError(f"The 'always_select' parameter names {n_forced} features (or groups), more "
                                 f"than k={k}: they count towards k.")
            W0, b0 = self._initial_point(loss, coef_init, info)
            if k is None:
                k, fit, selection = self._choose_k(loss, operator, W0, b0)
            else:
                fit, selection = self._solve(loss, operator, k, W0, b0), {}
            self._store(fit, info)
            self._store_level(k, operator)
            self._check_fitted(loss, fit)
            if hasattr(loss.design, "n_passes"):  # (a dask X: the passes over it)
                self.n_passes_ = loss.design.n_passes
            elif hasattr(self, "n_passes_"):
                del self.n_passes_
            for name in ("k_path_", "criterion_path_", "k_criterion_"):
                if name in selection:
                    setattr(self, name, selection[name])
                elif hasattr(self, name):  # from an earlier fit with k=None
                    delattr(self, name)
        return self

    def _choose_k(self, loss, operator, W0, b0):
        """``k=None``: choose ``k`` along a warm-started path, then fit there (:func:`._auto_k.choose_k`)."""
        return choose_k(self, loss, operator, W0, b0)

    def _rejudging_loss(self, loss, fit):
        """The loss whose criterion judges ``k=None``'s path again after it chose ``fit``'s level; None: no second look.

        (The regressors' Huber loss: the path's scale is a pilot, the one at the chosen level estimates the noise.)
        """
        return None

    def _check_fitted(self, loss, fit):
        """After :meth:`fit`'s final solve: warn of a model the data leave undetermined (regressors); here nothing."""

    def _store(self, fit, info):
        self.n_iter_ = fit.n_iter
        self.n_exchanges_ = fit.n_exchanges
        self.loss_curve_ = fit.loss_curve
        self.support_ = fit.support
        coef, intercept = fit.coef, fit.intercept
        x_scale, y_scale = info.get("scale", (1.0, 1.0))
        rescaled = (x_scale, y_scale) != (1.0, 1.0)
        with np.errstate(over="ignore") if rescaled else contextlib.nullcontext():  # (an overflow: the error below)
            if rescaled:  # back to the user's units (see _rescaled)
                coef, intercept = coef * (x_scale / y_scale), np.asarray(intercept) / y_scale
            if info.get("dtype") == np.float32:  # float32 in, float32 out (as scikit-learn's linear models)
                coef, intercept = coef.astype(np.float32), np.asarray(intercept, dtype=np.float32)
        if rescaled and not np.logical_and.reduce(np.isfinite(coef), axis=None):
            raise ValueError(f"The fitted coefficients in the units of X exceed the float range (X's largest "
                             f"magnitudes are about 2**{-_exponent(x_scale)}"
                             + (f", y's 2**{-_exponent(y_scale)}" if y_scale != 1.0 else "")
                             + "): multiply X by a power of two (or standardise it) and fit again.")
        self.coef_, self.intercept_ = self._format_coef(coef, intercept, info)
        for name, value in info.get("attributes", {}).items():
            setattr(self, name, value)

    def _store_level(self, k, structure):
        """``k_`` and, with groups, ``groups_support_`` (the fit's and the paths' fitted estimators')."""
        self.k_ = int(k)
        if isinstance(structure, Groups):
            self.groups_support_ = structure.labels[structure.units(self.support_)]
        elif hasattr(self, "groups_support_"):  # (from an earlier fit with groups)
            del self.groups_support_

    @staticmethod
    def _coef_shape(p, m):
        return (p,) if m == 1 else (m, p)

    def _decision(self, X):
        check_is_fitted(self)
        if uses_dask(X):  # (lazy: a dask array of the scores, block by block)
            return lazy_method(self, "_decision", X, None if np.ndim(self.coef_) == 1 else len(self.coef_))
        return self._scores(validate_data(self, X, accept_sparse=["csr", "csc"], reset=False))

    def _scores(self, X):
        """Linear predictor for already validated ``X``."""
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


