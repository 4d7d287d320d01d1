"""Base classes of the estimators: validation, loss and operator set-up, attributes.

An algorithm is a solver function (``sparse_estimators.solvers``); an
estimator pair is two short subclasses of :class:`SparseRegressorBase` and
:class:`SparseClassifierBase` that name the solver and its extra
hyperparameters (``_solver_params``).
"""

import functools
import inspect
import numbers
import time
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._utils import _DocLinkMixin, _numeric_target, all_or_nothing
from ..losses import GammaLoss, GramSquaredLoss, HuberLoss, LogisticLoss, MultinomialLoss, PoissonLoss, SquaredLoss
from ..losses._design import column_extremes, known_extremes, shared_extremes
from ..model_selection._criteria import criterion_levels, information_criterion
from ..model_selection._path import solve_path
from ..solvers import iht, splice
from ..structures import Groups, Structure, get_structure
from ..thresholding import Hard, ThresholdingOperator, get_operator
from ..thresholding._operators import _NAMED, _NonNegative
from ._dask import dask_regression_setup, lazy_method, lazy_score, uses_dask
from ._dask_resident import dask_classifier_setup
from ._validation import validated_classification, validated_regression

__all__ = ["SparseRegressorBase", "SparseClassifierBase"]


#: precompute='auto' works through the Gram matrix for dense X with at least this
#: many samples per feature and at most this many features. benchmarks/gram_precompute.py
#: (IHTRegressor, Gram / plain fit time, doc/peers/gram_precompute.md): 0.41-0.79 for
#: n >= 10000 or p <= 50, 0.87-1.09 at n = 1000-5000 with p = 100-150; at p = 200,
#: 0.43-0.77 except 1.10 at n = 5000; at p = 400, 1.53-1.81. Below 10 samples per
#: feature the gain is small (0.83-0.95 at 200-500 x 50-100) and the p x p matrix is
#: no longer small against X (peak traced memory 2.3 times X at 120 x 100, against
#: 1.1 through X)
_GRAM_AUTO_RATIO = 10
_GRAM_AUTO_MAX_FEATURES = 150
#: from _GRAM_MODEL_MIN_SAMPLES samples, precompute='auto' also takes the Gram path above
#: _GRAM_AUTO_MAX_FEATURES when it is cheaper, costs in units of one product with X (n p multiply-adds):
#: forming the Gram matrix costs _GRAM_PRODUCTS_PER_FEATURE * p of them (n p^2 / 2 multiply-adds in
#: BLAS-3 blocks), a fit through X about _X_FIT_PRODUCTS (iterations, refits, the splicing's column copies
#: and products), i.e. up to p = 420. Measured by benchmarks/gram_precompute.py --calibrate (medians; a fit
#: through X made 8 products at 20000 x 200, hence the sample limit; doc/changelog.rst)
_GRAM_MODEL_MIN_SAMPLES = 50000
_GRAM_PRODUCTS_PER_FEATURE = 0.05
_X_FIT_PRODUCTS = 21

#: the regressors' ``loss`` names and their classes (squared error also has its Gram form, see
#: ``precompute``); the losses' own modules hold their logic (sparse_estimators/losses/_glm.py, _robust.py)
REGRESSION_LOSSES = {"squared_error": SquaredLoss, "poisson": PoissonLoss, "gamma": GammaLoss, "huber": HuberLoss}
#: the losses whose model's mean is ``exp`` of the linear predictor, and their Tweedie power (D^2 score)
_LOG_LINK_POWER = {"poisson": 1, "gamma": 2}


class _Fit(NamedTuple):
    coef: np.ndarray
    b: np.ndarray
    intercept: np.ndarray
    support: np.ndarray
    n_iter: int
    loss_curve: np.ndarray
    n_exchanges: int = 0
    gradient: np.ndarray | None = None  # at coef, when the solver left it (SolverResult.gradient)


@functools.cache
def _takes(solver, name):
    """Whether the solver function has the keyword parameter ``name`` (looked up once)."""
    return name in inspect.signature(solver).parameters


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"The '{name}' parameter must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"The '{name}' parameter must be >= {minimum}, got {value!r}.")


def _check_real(name, value, *, low=0.0, low_open=True, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"The '{name}' parameter must be a finite number, got {value!r}.")
    if (value <= low) if low_open else (value < low):
        sign = ">" if low_open else ">="
        raise ValueError(f"The '{name}' parameter must be {sign} {low}, got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"The '{name}' parameter must be <= {high}, got {value!r}.")


#: data whose largest magnitude lies outside [2^-20, 2^20] are solved rescaled (doc/changelog.rst, scale)
_SCALE_RANGE = (2.0 ** -20, 2.0 ** 20)


def _power_of_two_scale(A, centred=False):
    """A power of two bringing the largest magnitude of ``A`` into [1, 2) when it lies outside ``_SCALE_RANGE``.

    Extreme scales (1e-150 .. 1e150) overflow or underflow the solvers'
    squares and step sizes; an exact power of two changes no digit, and
    data of ordinary scale get 1 (untouched). ``centred=True`` (a 2-D ``A``
    whose columns are centred, for the classifiers, whose ridge term is not
    scale-free) measures the columns' ranges instead of their magnitudes,
    so that a constant added to a column does not change the scale.
    """
    if centred and A.ndim == 2:
        high, low = column_extremes(A)
        ext = high - low
        top = float(ext.max(initial=0.0))
    elif (known := known_extremes(A)) is not None:  # (the set-up's own: no pass over A)
        high, low = known
        top = max(float(high.max()), -float(low.min())) if high.size else 0.0
        ext = None
    else:
        data = A.data if sp.issparse(A) else A
        top = max(float(data.max()), -float(data.min())) if data.size else 0.0  # (no temporary of A's size)
        ext = None
    if top == 0.0 or _SCALE_RANGE[0] <= top <= _SCALE_RANGE[1]:
        return 1.0
    # the middle, in exponents, of the columns' largest magnitudes: headroom both ways when they differ
    if ext is None and A.ndim == 2:
        high, low = column_extremes(A)
        ext = np.maximum(high, -low)
    elif ext is None:
        ext = np.array([top])
    return _scale_of(ext)


def _scale_of(ext):
    """The power of two of :func:`_power_of_two_scale` from the columns' largest magnitudes ``ext`` (out of range)."""
    exponents = np.frexp(ext[ext > 0])[1]
    return float(np.ldexp(1.0, -int((exponents.min() + exponents.max()) // 2 - 1)))


def _scale_from_extremes(high, low, centred=False):
    """:func:`_power_of_two_scale` of an array whose columns' extremes are ``high`` and ``low``."""
    ext = high - low if centred else np.maximum(high, -low)
    top = float(ext.max(initial=0.0))
    return 1.0 if top == 0.0 or _SCALE_RANGE[0] <= top <= _SCALE_RANGE[1] else _scale_of(ext)


def _rescaled(A, centred=False):
    """``A`` times :func:`_power_of_two_scale` (a copy only when that is not 1), and the factor."""
    scale = _power_of_two_scale(A, centred)
    return (A if scale == 1.0 else A * scale), scale


def _checked_weights(sample_weight, X):
    """Sample weights as floats: finite, non-negative, with a positive sum (else a ValueError)."""
    if sample_weight is None:  # (what the check returns, without its 30 us)
        return np.ones(X.shape[0], dtype=np.float64)
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not sample_weight.sum() > 0:
        raise ValueError("Sample weights must have a positive sum; got all zeros.")
    return sample_weight


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
    return loss.n_observations / (k * np.log(max(loss.n_features - k, 2)))


#: the parameter names of each estimator class (see _SparseLinearBase._get_param_names)
_PARAM_NAMES = {}


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
    #: with ``debias=True``, solvers that can (``support_refit`` parameter) jump
    #: to the minimiser on the support once it has been unchanged for this many
    #: iterations (set per task, from the peer benchmark)
    _support_refit_patience = 3
    #: options of the splicing search (see ``splice``), set per task
    _splice_options = {}
    #: options added to those with ``groups`` (the search then exchanges whole groups)
    _group_splice_options = {}
    #: ``splicing='auto'`` splices when ``n_samples > factor * k * log(n_features - k)``
    _splice_auto_factor = 0.0
    #: ``k=None``: the information criterion that chooses ``k``, and how many
    #: levels past its best value the path goes on (doc/auto_k.md)
    _k_criterion = "ebic"
    _k_patience = 10
    #: ... then takes the smallest level whose criterion is within this margin of the best value:
    #: a larger model needs "positive" evidence (a criterion lower by more than about 2 to 6,
    #: Raftery 1995) to be preferred; 4 was chosen on measurements (doc/changelog.rst)
    _k_margin = 4.0
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

    # -- validation -------------------------------------------------------------
    def _validate_params(self):
        # scikit-learn's InvalidParameterError (a ValueError naming the class and the allowed range) first;
        # the checks below add what the constraints cannot say (bool is not an int, finite values)
        validate_parameter_constraints(self._parameter_constraints, self.get_params(deep=False),
                                       caller_name=type(self).__name__)
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
        """``structure`` keeping the ``always_select`` features (or groups), validated."""
        if self.always_select is None:
            return structure
        chosen = np.atleast_1d(np.asarray(self.always_select))
        if chosen.ndim != 1:
            raise ValueError(f"The 'always_select' parameter must be a 1-D sequence, got shape {chosen.shape}.")
        if isinstance(structure, Groups):
            # group labels, each compared as given (not through np.asarray, which would make 1 and '1' equal)
            values = chosen.tolist() if isinstance(self.always_select, np.ndarray) else list(self.always_select)
            if structure.labels.dtype.kind != "b" and any(isinstance(v, (bool, np.bool_)) for v in values):
                raise ValueError("The 'always_select' parameter holds group labels with 'groups', got booleans: a "
                                 "mask is not accepted (True would read as the label 1); pass the labels of the "
                                 "groups to keep, e.g. those of groups_support_.")
            index = {label: unit for unit, label in enumerate(structure.labels.tolist())}
            missing = [label for label in values if label not in index]
            if missing:
                raise ValueError(f"The 'always_select' parameter names groups that are not in 'groups': {missing}.")
            units = np.array([index[label] for label in values], dtype=np.intp)
        else:
            if chosen.size and not np.issubdtype(chosen.dtype, np.integer):
                raise ValueError(f"The 'always_select' parameter must hold feature indices (integers) without "
                                 f"'groups', got {chosen.dtype} values.")
            if chosen.size and (chosen.min() < 0 or chosen.max() >= n_features):
                raise ValueError(f"The 'always_select' parameter must hold indices in [0, {n_features}), "
                                 f"got {sorted(set(chosen.tolist()))}.")
            units = chosen
        return structure.with_forced(units)

    # -- fitting ----------------------------------------------------------------
    def _initial_point(self, loss, coef_init, info=None):
        x_scale, y_scale = (info or {}).get("scale", (1.0, 1.0))
        W, b = self._initial_point_unscaled(loss, coef_init, y_scale / x_scale)
        if (x_scale, y_scale) != (1.0, 1.0):  # a start in the user's units, solved in the rescaled problem's
            W, b = W * (y_scale / x_scale), b * y_scale
        return W, b

    def _initial_point_unscaled(self, loss, coef_init, coef_scale=1.0):
        W, b = loss.zeros()
        b = loss.initial_intercept()
        p, m = W.shape
        if coef_init is not None:
            C = np.asarray(coef_init, dtype=float)
            if C.size != p * m:
                raise ValueError(f"coef_init has {C.size} entries; expected {p * m} "
                                 f"(shape {self._coef_shape(p, m)}).")
            W = C.reshape(m, p).T.copy()
        elif self.warm_start and hasattr(self, "coef_"):
            C = np.asarray(self.coef_, dtype=float)
            # (a different shape, e.g. other classes or features, starts cold)
            if C.shape == self._coef_shape(p, m) or (C.ndim == 2 and C.shape == (m, p)):
                W = C.reshape(m, p).T.copy()
                if loss.intercept_is_variable and loss.fit_intercept:
                    # (the variable of the loss's parametrisation, for the coefficients as the loss scales them)
                    b = loss.intercept_variable(W * coef_scale, np.atleast_1d(np.asarray(self.intercept_, dtype=float)))
        if not np.all(np.isfinite(W)):
            raise ValueError("coef_init contains NaN or infinity.")
        return W, b

    def _solver_options(self):
        return {name: getattr(self, name) for name in self._solver_params}

    def _sparse_solver(self):
        """The solver function of this fit (``_solver``; an estimator with a ``solver`` parameter overrides it)."""
        return type(self)._solver

    def _splices(self, loss, k):
        """Whether the fit runs the splicing search (``splicing`` resolved)."""
        if isinstance(self.splicing, str):  # 'auto'
            return bool(_samples_per_selection(loss, k) > self._splice_auto_factor)
        return bool(self.splicing)

    def _splice_kwargs(self, loss, k):
        """The options of this fit's splicing search (``_splice_options``, set per task)."""
        return self._splice_options

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
        options = {"refitted_start": refitted_start} if screening else self._solver_options()
        solver = iht if screening else self._sparse_solver()
        debias = screening or self.debias
        if debias and _takes(solver, "support_refit"):
            # the fit ends with a refit on the support: jump there once the support settles (at
            # once on the screening path, whose levels start refitted on the previous support)
            options["support_refit"] = 1 if screening else self._support_refit_patience
        result = solver(loss, operator, k, W0=W0, b0=b0, step_size=self.step_size,
                        max_iter=self.max_iter, tol=self.tol, verbose=self.verbose, **options)
        W, b = result.coef, result.intercept
        name = type(self).__name__
        if result.diverged:
            warnings.warn(f"{name} diverged (the objective blew up) after {result.n_iter} iterations "
                          f"with step_size={self.step_size!r}; the best finite iterate is kept. Use a "
                          "smaller step_size or step_size='auto'.", ConvergenceWarning, stacklevel=self._warn_depth)
        elif not result.converged:
            warnings.warn(f"{name} did not converge in max_iter={self.max_iter} iterations; "
                          "increase max_iter or tol.", ConvergenceWarning, stacklevel=self._warn_depth)
        support = np.flatnonzero(np.any(W != 0, axis=1))
        n_exchanges, gradient = 0, result.gradient
        if operator.forced is not None and debias:  # (a forced feature whose coefficient is still 0)
            forced = operator.features(operator.forced)
            if not np.isin(forced, support).all():
                support = np.union1d(support, forced)
                W, b = operator.refit(loss, support, W, b)
                result.refitted, gradient = True, None
        if debias and not screening and operator.exchanges and self._splices(loss, k) and support.size:
            kwargs = self._splice_kwargs(loss, k) | ({} if second_search else {"screening_start": False})
            if operator.forced is not None:
                kwargs["forced"] = operator.features(operator.forced)
            if isinstance(operator, Groups):
                kwargs |= self._group_splice_options
            spliced = splice(loss, k, W, b, refitted=result.refitted, structure=operator, **kwargs)
            W, b, n_exchanges, gradient = spliced.coef, spliced.intercept, spliced.n_iter, None
        elif debias and support.size and not result.refitted:
            W, b = operator.refit(loss, support, W, b)
            gradient = None
        if loss.positive and np.any(W < 0):  # (e.g. IOBS's unconstrained Newton correction): back to W >= 0
            W, b = loss.refit(np.flatnonzero(np.any(W != 0, axis=1)), W, b)
            gradient = None
        support = np.flatnonzero(np.any(W != 0, axis=1))
        if isinstance(operator, Groups):  # a group is in or out whole (positive=True can zero part of it)
            support = operator.features(operator.units(support))
        if operator.forced is not None:  # (in the support even where positive=True's refit sets them to 0)
            support = np.union1d(support, operator.features(operator.forced))
        if self.verbose:
            print(f"[{name}] k={k}: {result.n_iter} iterations and {n_exchanges} exchanges in "
                  f"{time.perf_counter() - start:.2f} s, "
                  f"objective {loss.value(W, b):.6g}, {support.size} features selected")
        return _Fit(W, b, loss.intercept(W, b), support, result.n_iter,
                    np.asarray(result.objective, dtype=float), n_exchanges, gradient)

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
        """``k=None``: choose ``k`` by an information criterion along a warm-started path, then fit there.

        The path fits hard-thresholding IHT at ``k = 1, 2, ...`` (each level
        warm-started from the last and refitted on its support, no splicing
        search: the cheap fits that rank the levels), while the model has at
        most :func:`~sparse_estimators.model_selection._criteria.largest_k`
        features (counted inside the selected groups, with groups: groups
        too large to fit are left out, see
        :func:`~sparse_estimators.model_selection._criteria.criterion_levels`),
        and stops ``_k_patience`` levels after the best value of the criterion
        ``_k_criterion``; the chosen level is the smallest whose criterion is
        within ``_k_margin`` of that best value. The estimator's own algorithm (solver, operator,
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
        criterion = self._k_criterion
        values = {}
        # the criteria judge models of at most `bound` features, counted inside the selected groups: groups
        # that cannot fit beside the forced ones are left out, and the path stops at the first larger model
        bound, admissible, top = criterion_levels(operator, loss.n_observations, loss.n_features,
                                                  loss.coefficients_per_feature)
        first = 1 if operator.forced is None else max(1, operator.forced.size)
        if top < first:
            raise ValueError(f"k=None cannot choose {self._level_name}: every group has more than {bound} features, "
                             f"the most an information criterion can judge with {loss.n_observations:g} "
                             f"observations and {loss.n_features} features (n / log(n_features)); pass "
                             f"{self._level_name}.")
        if not admissible.all():
            operator = operator.with_excluded(np.flatnonzero(~admissible))

        def n_features(fit):  # (the features inside the selected units)
            return operator.features(operator.units(fit.support)).size

        def stop(k, fit):
            if n_features(fit) > bound:
                return True
            values[k] = information_criterion(loss, fit.coef, fit.b, criterion, structure=operator)
            best = min(values, key=values.get)
            return k - best >= self._k_patience

        path = solve_path(self, loss, operator.with_operator(self._constrained(Hard())), range(first, top + 1),
                          loss.zeros()[0], b0, screening=True, stop=stop)
        levels = np.array(sorted(values))
        curve = np.array([values[k] for k in levels])
        best = int(levels[np.flatnonzero(curve <= curve.min() + self._k_margin)[0]])
        cheap = path[best]
        fit = self._solve(loss, operator, best, cheap.coef, cheap.b)
        if n_features(fit) > bound:  # (the estimator's own search took larger groups): the judged model
            fit = cheap
        return best, fit, {"k_path_": levels, "criterion_path_": curve, "k_criterion_": criterion}

    def _store(self, fit, info):
        self.n_iter_ = fit.n_iter
        self.n_exchanges_ = fit.n_exchanges
        self.loss_curve_ = fit.loss_curve
        self.support_ = fit.support
        coef, intercept = fit.coef, fit.intercept
        x_scale, y_scale = info.get("scale", (1.0, 1.0))
        if (x_scale, y_scale) != (1.0, 1.0):  # back to the user's units (see _rescaled)
            coef, intercept = coef * (x_scale / y_scale), np.asarray(intercept) / y_scale
        if info.get("dtype") == np.float32:  # float32 in, float32 out (as scikit-learn's linear models)
            coef, intercept = coef.astype(np.float32), np.asarray(intercept, dtype=np.float32)
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


class SparseRegressorBase(RegressorMixin, _SparseLinearBase):
    """Least-squares regression with exactly ``k`` features (subclass per solver)."""

    # the second splicing search runs abess's rules from the screening start
    # (exchanges within the k + 128 features of largest gain, abess's small
    # threshold); its result is kept only if its loss is lower by more than the
    # gate. At n=100, p=1000 (compare_peers.py's designs, 10 fresh data sets
    # per setting, two batches) mean support F1 went 0.518 -> 0.528 and 0.510
    # -> 0.516, settings more than 0.01 below abess 5 -> 2 and 3 -> 2 of 24,
    # the worst (rho 0.35, beta 1, SNR 3) -0.11 -> -0.04 and -0.15 -> -0.05;
    # the same F1 at n=500 (p=100 and 1000); classifiers keep the first rules
    # (there abess's rules chose overfitted supports: F1 0.70 -> 0.62)
    _splice_options = {"screening_start": "abess"}
    # That result replaces the first at splice's switch_gate: 0.25 (the exchange
    # gate) up to this many observations per k log(p - k), 0.1 above. On fresh
    # data sets (benchmarks/switch_gate.py, doc/peers/switch_gate.md), 0.1 took
    # abess's support where the first search stops short of abess's lower loss
    # (independent or spread-out features at low SNR): at n=500, p=1000 (7.2
    # observations per k log(p - k)) the settings more than 0.01 below the best
    # peer went from 3 to 0 of 24 (30 data sets each), for a mean F1 of 0.9208
    # instead of 0.9258 (abess 0.9176), and at n=2000, p=10000 (10.9) from 1 to
    # 0; at n=100, p=1000 (1.45) it lowered the mean F1 from 0.5083 to 0.4964
    # and left 1 such setting. The grid puts the limit between 1.45 and 7.2.
    _switch_gate_limit = 3.0
    # with groups, up to 2 groups exchanged at once instead of 5, as the classifiers: on
    # compare_groups.py's regression designs at n=200, p=500 (20 data sets per setting,
    # three batches, sizes 2-10 twice and 1-8 once) the mean group F1 moved by +0.005,
    # 0.000 and -0.001 for 0.88 to 0.91 times the CPU time (doc/changelog.rst)
    _group_splice_options = {"max_exchange": 2}

    def _splice_kwargs(self, loss, k):
        """``_splice_options``, with ``switch_gate=0.1`` above the limit (below it, the exchange gate)."""
        large = _samples_per_selection(loss, k) > self._switch_gate_limit
        return ({"switch_gate": 0.1} if large else {}) | self._splice_options

    def __init__(self, k=None, *, loss="squared_error", epsilon=1.35, thresholding="hard", step_size="auto",
                 max_iter=1000, tol=1e-4, fit_intercept=True, debias=True, splicing=True, precompute="auto",
                 positive=False, groups=None, always_select=None, warm_start=False, verbose=0):
        super().__init__(k, thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing,
                         groups=groups, always_select=always_select, warm_start=warm_start,
                         verbose=verbose)
        self.loss = loss
        self.epsilon = epsilon
        self.precompute = precompute
        self.positive = positive

    _parameter_constraints = {"precompute": ["boolean", StrOptions({"auto"})], "positive": ["boolean"],
                              "loss": [StrOptions(set(REGRESSION_LOSSES))],
                              "epsilon": [Interval(Real, 1.0, None, closed="left")]}

    def _loss_name(self):
        """The ``loss`` parameter (squared error for the estimators without one: the reduced-rank regressor)."""
        return getattr(self, "loss", "squared_error")

    def _constrained(self, operator):
        """``positive=True``: the operator applied to the positive part (the ``k`` largest positive entries)."""
        return _NonNegative(operator) if self.positive else operator

    def _validate_params(self):
        operator = super()._validate_params()
        if not (isinstance(self.precompute, (bool, np.bool_))
                or isinstance(self.precompute, str) and self.precompute == "auto"):
            raise ValueError(f"The 'precompute' parameter must be a bool or 'auto', got {self.precompute!r}.")
        return self._constrained(operator)

    def _uses_gram(self, X):
        """Whether the fit works through the Gram matrix (``precompute`` resolved)."""
        if isinstance(self.precompute, str):  # 'auto'
            n, p = X.shape
            cheaper = p <= _GRAM_AUTO_MAX_FEATURES or (
                n >= _GRAM_MODEL_MIN_SAMPLES and _GRAM_PRODUCTS_PER_FEATURE * p <= _X_FIT_PRODUCTS)
            return not sp.issparse(X) and n >= _GRAM_AUTO_RATIO * p and cheaper
        return bool(self.precompute)

    def fit(self, X, y, sample_weight=None, coef_init=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; scipy.sparse input is never densified. Dense input
            is used in C order (a Fortran-ordered array, e.g. from a DataFrame,
            is copied once), so results do not depend on memory layout.
            float32 input is kept in float32 (not copied); products with it
            are computed in float32, everything else in float64, and the
            fitted ``coef_``, ``intercept_`` and predictions are float32.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets. Several targets share one support.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples; integer weights are equivalent to
            repeating rows. Weights that sum to less than the number of rows
            of positive weight (e.g. normalised to sum to 1) are read as
            relative importances: the splicing search's significance
            thresholds then count each of those rows as one observation.
        coef_init : array-like of shape (n_features,) or (n_targets, n_features), default=None
            Starting coefficients (thresholded before the first step).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, coef_init)

    def _setup(self, X, y, sample_weight):
        if uses_dask(X):  # (one pass over the chunks builds the Gram statistics; X is never gathered)
            return dask_regression_setup(self, X, y, sample_weight)
        X, y = validated_regression(self, X, y)
        y = _numeric_target(y)
        sample_weight = _checked_weights(sample_weight, X)
        X, x_scale = _rescaled(X)
        name = self._loss_name()
        if name != "squared_error":  # (the GLM losses: an intercept variable, no Gram form)
            if y.ndim == 2 and y.shape[1] != 1:
                raise ValueError(f"loss={name!r} takes a single target; got y of shape {y.shape}.")
            y = y.reshape(-1)
            # Huber's coefficients are linear in y (rescaled as least squares); a log link's are not
            y, y_scale = _rescaled(y) if name == "huber" else (y, 1.0)
            options = {"epsilon": self.epsilon} if name == "huber" else {}
            loss = REGRESSION_LOSSES[name](X, y, sample_weight, self.fit_intercept, **options)
            loss.positive = bool(self.positive)
            return loss, {"y_ndim": 1, "scale": (x_scale, y_scale)}
        y, y_scale = _rescaled(y)
        loss = (GramSquaredLoss if self._uses_gram(X) else SquaredLoss)(X, y, sample_weight, self.fit_intercept)
        if self.positive:
            loss.positive = True
        return loss, {"y_ndim": y.ndim, "scale": (x_scale, y_scale), "dtype": X.dtype}

    @staticmethod
    def _format_coef(W, intercept, info):
        if info["y_ndim"] == 1:
            return W[:, 0].copy(), intercept[0] if intercept.dtype == np.float32 else float(intercept[0])
        return W.T.copy(), intercept

    def predict(self, X):
        """Predict with the sparse linear model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            The predicted mean: the linear predictor, its exponential for
            ``loss='poisson'`` and ``loss='gamma'`` (log link).
        """
        return self._mean(self._decision(X))

    def _mean(self, eta):
        """The model's mean from the linear predictor ``eta`` (``exp`` for a log link)."""
        return np.exp(eta) if self._loss_name() in _LOG_LINK_POWER else eta

    def score(self, X, y, sample_weight=None):
        """Goodness of fit on ``(X, y)``: R^2, or D^2 for the Poisson and Gamma losses.

        ``loss='squared_error'`` and ``loss='huber'``: the coefficient of
        determination R^2 (:func:`~sklearn.metrics.r2_score`).
        ``loss='poisson'`` and ``loss='gamma'``: the fraction of deviance
        explained, D^2 (:func:`~sklearn.metrics.d2_tweedie_score` with power 1
        or 2), as :class:`~sklearn.linear_model.PoissonRegressor` and
        :class:`~sklearn.linear_model.GammaRegressor` score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        if uses_dask(X) and self._loss_name() not in _LOG_LINK_POWER:  # (one pass, no vector of n in the client)
            check_is_fitted(self)
            return lazy_score(self, X, y, sample_weight, "r2")
        return self._score_linear(y, self._decision(X), sample_weight)

    def _score_linear(self, y, eta, sample_weight=None):
        """:meth:`score` from the linear predictor ``eta`` of validated data."""
        from sklearn.metrics import d2_tweedie_score, r2_score

        power = _LOG_LINK_POWER.get(self._loss_name())
        if power is None:
            return float(r2_score(y, eta, sample_weight=sample_weight))
        return float(d2_tweedie_score(np.asarray(y, dtype=float), np.exp(eta), sample_weight=sample_weight,
                                      power=power))

    _warn_depth = 5

    def _solve(self, loss, operator, k, W0, b0, **kwargs):
        """:meth:`_SparseLinearBase._solve`; Huber fits twice, the second time at the first fit's residual scale.

        The Huber loss's scale starts at the MAD of ``y`` (a pilot, too large
        when the features explain much of ``y``); the first fit's residuals
        give the noise's scale (:func:`~sparse_estimators.losses._robust.inlier_scale`), and the fit is
        repeated from there with it (:meth:`HuberLoss.with_residual_scale`).
        Both estimates are equivariant, so multiplying ``y`` by ``c``
        multiplies the coefficients by ``c``. The screening fits of ``k=None``
        keep the pilot (one loss along the path, comparable levels).
        """
        fit = super()._solve(loss, operator, k, W0, b0, **kwargs)
        if kwargs.get("screening") or not isinstance(loss, HuberLoss):
            return fit
        return super()._solve(loss.with_residual_scale(fit.coef, fit.b), operator, k, fit.coef, fit.b, **kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class SparseClassifierBase(ClassifierMixin, _SparseLinearBase):
    """Logistic / multinomial classification with exactly ``k`` features."""

    # jumping after one iteration with a settled support raised mean support F1
    # against 2 and 3 (n=100, p=1000: 0.238, 0.199, 0.191; n=500: 0.664, 0.649,
    # 0.643; benchmarks/compare_peers.py's designs, 4 repeats); for least
    # squares 3 was better than 1 (n=100, p=1000, 240 fits on fresh seeds: mean
    # F1 0.519 against 0.510, paired difference 0.009 +- 0.004), at a cost of
    # about 0.4 ms of a 2.5 ms fit
    _support_refit_patience = 1
    # exchanges that lower the deviance are accepted when every added feature is
    # itself significant at the risk-inflation level (see splice's add_gate); on
    # compare_peers.py's logistic designs (n=500, p=100 and 1000, 12 and 10
    # data sets per setting) this raised mean support F1 (0.913 -> 0.918,
    # 0.683 -> 0.700) and cut the settings more than 0.01 below abess from 9
    # to 3 of 24 at both sizes; at n=100, p=1000 it lowered the F1 (0.202 ->
    # 0.171) at 7 times the time: below about n = 2 k log(p - k), Wainwright's
    # threshold for recovering the support at all, 'auto' does not splice.
    # Exchanges whose removed features the kept ones do not explain need only
    # half that level (splice's add_gate_uncorrelated): at n=2000, p=10000,
    # SNR 1 (16 fresh data sets per setting) this moved F1 minus abess's from
    # -0.025 to +0.012 (rho 0.35, beta type 1) and from -0.034 to +0.009
    # (rho 0, type 2), and left the correlated-block gains (+0.16 to +0.35)
    # unchanged; at n=500 (10 fresh data sets per setting) mean F1 moved by
    # +0.007 (p=100) and -0.0025 (p=1000), settings within 0.01 of abess
    # 18 -> 21 and 20 -> 20 of 24
    _splice_options = {"gate": 0.0, "add_gate": 1.0, "add_gate_uncorrelated": 0.5}
    _splice_auto_factor = 2.0
    # with groups, up to 2 groups exchanged at once instead of 5: each candidate is a
    # Newton refit on up to 5 more groups of features; on compare_groups.py's logistic
    # designs (n=200, p=500 and n=500, p=1000, 20 fresh data sets per setting) the mean
    # group F1 was 0.4942 against 0.4929 at 5, for 0.60 to 0.66 times the CPU time
    # (doc/peers/compare_groups.md has the benchmark); least squares too since issue 33
    # (the same F1 there for 0.9 times the time)
    _group_splice_options = {"max_exchange": 2}

    def __init__(self, k=None, *, thresholding="hard", step_size="auto", max_iter=1000, tol=1e-4,
                 fit_intercept=True, debias=True, splicing="auto",
                 groups=None, always_select=None, warm_start=False, verbose=0, alpha=1e-4,
                 class_weight=None):
        super().__init__(k, thresholding=thresholding, step_size=step_size, max_iter=max_iter,
                         tol=tol, fit_intercept=fit_intercept, debias=debias, splicing=splicing,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose)
        self.alpha = alpha
        self.class_weight = class_weight

    _parameter_constraints = {"alpha": [Interval(Real, 0, None, closed="left")],
                              "class_weight": [dict, StrOptions({"balanced"}), None]}

    def _validate_params(self):
        operator = super()._validate_params()
        _check_real("alpha", self.alpha, low_open=False)
        if not (self.class_weight is None or self.class_weight == "balanced"
                or isinstance(self.class_weight, dict)):
            raise ValueError("The 'class_weight' parameter must be None, 'balanced' or a dict, "
                             f"got {self.class_weight!r}.")
        return operator

    def fit(self, X, y, sample_weight=None, coef_init=None):
        """Fit the model: logistic for two classes, multinomial for more.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; scipy.sparse input is never densified. Dense input
            is used in C order (a Fortran-ordered array, e.g. from a DataFrame,
            is copied once), so results do not depend on memory layout.
            float32 input is kept in float32 (not copied); products with it
            are computed in float32, everything else in float64, and the
            fitted ``coef_``, ``intercept_`` and predictions are float32.
        y : array-like of shape (n_samples,)
            Class labels. With more than two classes all classes share one
            support of ``k`` features.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, multiplied by ``class_weight``; integer
            weights are equivalent to repeating rows. Weights that sum to less
            than the number of rows of positive weight (e.g. normalised to
            sum to 1) are read as relative importances: the splicing search's
            significance thresholds then count each of those rows as one
            observation.
        coef_init : array-like of shape (n_features,) or (n_classes, n_features), default=None
            Starting coefficients (``(1, n_features)`` for two classes).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, coef_init)

    def _setup(self, X, y, sample_weight):
        if uses_dask(X):  # (X stays in its chunks, labels, weights and predictors on the workers)
            return dask_classifier_setup(self, X, y, sample_weight)
        X, y = validated_classification(self, X, y)
        sample_weight = _checked_weights(sample_weight, X)
        X, x_scale = _rescaled(X, centred=self.fit_intercept)
        loss, classes = self._classification_loss(X, y, sample_weight)
        return loss, {"attributes": {"classes_": classes}, "scale": (x_scale, 1.0), "dtype": X.dtype}

    def _classification_loss(self, X, y, sample_weight):
        """The logistic or multinomial loss of the labels ``y`` (checked weights, rescaled ``X``), and the classes."""
        if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind != "O":
            classes, y_enc = np.unique(y, return_inverse=True)  # (LabelEncoder's result, without its 0.2-0.6 ms)
        else:
            encoder = LabelEncoder()
            y_enc = encoder.fit_transform(y)
            classes = encoder.classes_
        if self.class_weight is not None:
            factors = compute_sample_weight(self.class_weight, y)
            if not np.all(np.isfinite(factors) & (factors >= 0)):
                raise ValueError(f"The 'class_weight' parameter must give finite, non-negative weights, "
                                 f"got {self.class_weight!r}.")
            sample_weight = sample_weight * factors
        present = np.unique(y_enc[sample_weight > 0])
        if present.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes with "
                             f"positive weight; got {present.size} class(es).")
        if classes.size == 2:
            return LogisticLoss(X, y_enc, sample_weight, self.fit_intercept, self.alpha), classes
        return MultinomialLoss(X, y_enc, classes.size, sample_weight, self.fit_intercept, self.alpha), classes

    @staticmethod
    def _format_coef(W, intercept, info):
        return W.T.copy(), intercept

    def decision_function(self, X):
        """Confidence scores (linear predictor).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities (logistic for two classes, softmax otherwise).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from scipy.special import expit, softmax

        if uses_dask(X):
            check_is_fitted(self)
            return lazy_method(self, "predict_proba", X, len(self.classes_))
        scores = self._decision(X)
        if scores.shape[1] == 1:
            p1 = expit(scores[:, 0])
            return np.column_stack([1.0 - p1, p1])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from scipy.special import log_expit, log_softmax

        if uses_dask(X):
            check_is_fitted(self)
            return lazy_method(self, "predict_log_proba", X, len(self.classes_))
        scores = self._decision(X)
        if scores.shape[1] == 1:
            return np.column_stack([log_expit(-scores[:, 0]), log_expit(scores[:, 0])])
        return log_softmax(scores, axis=1)

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if uses_dask(X):
            check_is_fitted(self)
            return lazy_method(self, "predict", X, dtype=self.classes_.dtype)
        return self._labels_from_scores(self._decision(X))

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on ``(X, y)`` (weighted by ``sample_weight``), as :class:`~sklearn.base.ClassifierMixin`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        if uses_dask(X):  # (one pass: the weighted count of right predictions)
            check_is_fitted(self)
            return lazy_score(self, X, y, sample_weight, "accuracy")
        return super().score(X, y, sample_weight)

    def _labels_from_scores(self, scores):
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
