"""Cox proportional-hazards models with exactly ``k`` features, one class per algorithm.

Thin classes on the regressors' base (:class:`~sparse_estimators.linear_model._regressor.SparseRegressorBase`):
the loss is :class:`~sparse_estimators.losses.CoxLoss`, and a small base
class holds what differs from regression (the structured ``y``, no
intercept, the concordance ``score``, the Breslow baseline and the predicted
survival and cumulative hazard functions, as scikit-survival's
``CoxPHSurvivalAnalysis``).
"""

import warnings
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _policy
from .._selection import _SupportMixin
from ..linear_model._accelerated import _MomentumMixin
from ..linear_model._base import _SparseLinearBase
from ..linear_model._dask import uses_dask
from ..linear_model._docs import fill_doc
from ..linear_model._iobs import _IOBSMixin
from ..linear_model._regressor import SparseRegressorBase
from ..linear_model._regularized import _WeightStepMixin
from ..linear_model._scaling import _rescaled, _rescaled_alpha
from ..linear_model._validation import _check_real, _checked_weights
from ..losses._cox import CoxLoss, breslow_cumulative_hazard
from ..solvers import iht
from ._monotone import MonotoneLikelihoodWarning, monotone_direction
from ._target import StepFunction, check_survival_target, concordance_index

__all__ = ["AcceleratedIHTCoxPHSurvivalAnalysis", "IHTCoxPHSurvivalAnalysis", "IOBSCoxPHSurvivalAnalysis",
           "RegularizedIHTCoxPHSurvivalAnalysis"]

_COX_PARAMS = """ties : {'breslow', 'efron'}, default='breslow'
        How the partial likelihood handles tied event times: Breslow's
        approximation, or Efron's (closer to the exact likelihood when many
        events share a time). With sample weights, Efron's correction for
        the ``m`` events tied at a time ``t`` uses their mean weight: the
        log term is ``(s(D_t) / m) sum_{l < m} log(S_t - (l / m) E_t)``,
        with ``s(D_t)`` their total weight, ``S_t`` the weighted risk-set sum
        of ``exp(X coef)`` and ``E_t`` that of the tied events, as R's
        ``survival::coxph`` and lifelines' ``CoxPHFitter``. Integer weights
        then equal repeated rows with Breslow's ties, not with Efron's (a
        repeated event row is one more tied event, ``m + 1`` terms, where a
        weight of 2 keeps ``m``).

    alpha : float, default=1e-4
        Strength of the l2 penalty ``alpha/2 ||coef||^2`` added to the
        partial likelihood divided by the sum of the sample weights (the mean
        over samples). A small positive value keeps the fit finite when the
        features order the event times perfectly (monotone likelihood, where
        the unpenalised coefficients grow without bound); 0 is the partial
        likelihood itself, as scikit-survival's ``CoxPHSurvivalAnalysis()``."""

_COX_ATTRIBUTES = """coef_ : ndarray of shape (n_features,)
        Coefficients of the linear predictor ``X coef_`` (the log relative
        hazard); exactly ``k`` are non-zero (fewer only when the data support
        fewer, e.g. constant columns).
    intercept_ : float
        Always 0.0: the Cox model has no intercept (the baseline hazard takes
        its place); kept for the package's paths and searches.
    support_ : ndarray of shape (n_selected,)
        Sorted **indices** of the selected features (:meth:`get_support`
        gives the boolean mask).
    groups_support_ : ndarray of shape (n_selected_groups,)
        Only with ``groups``: the sorted labels of the selected groups.
    cum_baseline_hazard_ : StepFunction
        Breslow's estimate of the baseline cumulative hazard on the training
        data, at ``X coef_ = baseline_risk_score_`` (0 unless that baseline
        leaves floating-point range): the cumulative hazard of a sample is
        ``exp(x coef_ - baseline_risk_score_) cum_baseline_hazard_(t)``.
    baseline_survival_ : StepFunction
        ``exp(-cum_baseline_hazard_)``.
    baseline_risk_score_ : float
        The risk score at which the baselines above are taken: 0.0, except
        where some training ``|X coef_|`` exceeds 300
        (``_policy.COX_BASELINE_SHIFT_ABOVE``, uncentred features) and the
        baseline at 0 would be infinite or 0 after an event time (beyond
        about 709): then the largest training ``X coef_``, with a
        UserWarning at :term:`fit`.
    unique_times_ : ndarray of shape (n_unique_times,)
        The distinct times of the training data (events and censorings;
        rows of sample weight 0 are left out, as if absent), where the
        predicted functions are evaluated with ``return_array=True``.
    n_iter_ : int
        Number of iterations of the sparse solver.
    n_exchanges_ : int
        Number of accepted exchanges of the splicing search.
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Training objective after each iteration.
    k_ : int
        The number of features the model uses (``k`` clipped, or chosen when
        ``k=None``).
    k_path_, criterion_path_, k_criterion_ :
        Only when ``k=None``: the levels of the path, the criterion at each
        (with minus twice the log partial likelihood as the fit term) and its
        name.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names."""

_NOTES = """With few events the partial likelihood on the selected features can be
    monotone: along some direction of their coefficients every event has the
    largest risk score of its risk set (e.g. the only event of 40 rows,
    or two events, at the edge of the data of the ``k`` selected features,
    which exact-``k`` selection makes likely), so the unpenalised
    coefficients grow without bound and scikit-survival's
    ``CoxPHSurvivalAnalysis()`` does not converge. The fit then warns with a
    :class:`MonotoneLikelihoodWarning` (a UserWarning): ``coef_`` is the
    optimum of the l2 term ``alpha`` (with ``alpha=0``, where the solver
    stopped), set by ``alpha`` rather than by the data. The check is exact
    (the fitted direction, a certificate that no direction exists, else a
    linear programme over the rows; ``survival/_monotone.py``) and costs 2 to
    8 % of a fit."""

_SEE_ALSO = """sksurv.linear_model.CoxPHSurvivalAnalysis : The Cox model on all features (scikit-survival).
    sksurv.linear_model.CoxnetSurvivalAnalysis : The Cox model with an elastic-net penalty (scikit-survival)."""


def _in_range(baseline, hazard):
    """Whether ``baseline`` (a rescaled ``hazard``) is finite and, where ``hazard > 0``, a normal float (not 0)."""
    return bool(np.all(np.isfinite(baseline)) and np.all(baseline[hazard > 0] >= np.finfo(float).tiny))


class _CoxPHSurvivalBase(SparseRegressorBase):
    """The Cox model at exactly ``k`` features: structured ``y``, concordance ``score``, survival functions."""

    #: the Cox model has no intercept (a class attribute, not a parameter: the base's checks read it)
    fit_intercept = False
    #: ``y`` is a structured survival array (the searches validate it as such)
    _structured_target = True

    # the search looks for redundant selected features (a duplicated column) after every search, not only after a
    # collinear refit: the l2 term (alpha) keeps the refits on both copies of a column regular; a Gram matrix
    # per search is under 1 % of a Cox fit's time (doc/changelog.rst)
    _splice_options = SparseRegressorBase._splice_options | {"redundant_first": True}

    def _splice_kwargs(self, loss, k):
        """The regressors' options, with ``swap_candidates=_policy.COX_SWAP_CANDIDATES``.

        Each round also tries the least useful feature against each of that many most useful others: with one
        candidate the search stopped where an exchange its gate accepts was one step away.
        """
        return super()._splice_kwargs(loss, k) | {"swap_candidates": _policy.COX_SWAP_CANDIDATES}

    _parameter_constraints = {"ties": [StrOptions({"breslow", "efron"})],
                              "alpha": [Interval(Real, 0, None, closed="left")]}

    def __init__(self, k=None, *, ties="breslow", alpha=1e-4, thresholding="hard", step_size="auto",
                 max_iter=1000, tol=1e-4, debias=True, splicing=True, positive=False, groups=None,
                 always_select=None, warm_start=False, verbose=0):
        self.k = k
        self.ties = ties
        self.alpha = alpha
        self.thresholding = thresholding
        self.step_size = step_size
        self.max_iter = max_iter
        self.tol = tol
        self.debias = debias
        self.splicing = splicing
        self.positive = positive
        self.groups = groups
        self.always_select = always_select
        self.warm_start = warm_start
        self.verbose = verbose

    def _validate_params(self):
        operator = _SparseLinearBase._validate_params(self)
        _check_real("alpha", self.alpha, low_open=False)
        if self.ties not in ("breslow", "efron"):
            raise ValueError(f"The 'ties' parameter must be 'breslow' or 'efron', got {self.ties!r}.")
        return self._constrained(operator)

    def fit(self, X, y, sample_weight=None, coef_init=None):
        """Fit the Cox model with ``k`` features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; scipy.sparse input is never densified.
        y : structured ndarray of shape (n_samples,)
            The event indicator (bool) and the observed time (float >= 0),
            in that order, as ``sksurv.util.Surv.from_arrays(event, time)``
            builds it; anything else raises a ValueError.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples. Integer weights equal repeated rows with
            ``ties='breslow'``, not with ``ties='efron'``, whose tied events
            share their mean weight, as in R's ``survival::coxph`` (see
            ``ties``).
        coef_init : array-like of shape (n_features,), default=None
            Starting coefficients (thresholded before the first step).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, coef_init)

    def _setup(self, X, y, sample_weight):
        if uses_dask(X):  # (validate_data would gather X in the client, which a dask X is meant to avoid)
            raise TypeError(f"{type(self).__name__} does not fit on a dask X: the partial likelihood's risk sets span "
                            "every row, so X would be gathered in the client. Fit on X.compute() if it fits in "
                            "memory.")
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], order="C")
        event, time = check_survival_target(y, X.shape[0])
        sample_weight = _checked_weights(sample_weight, X)
        if not np.any(event & (sample_weight > 0)):
            raise ValueError("Every event of y has sample weight 0: the Cox model needs at least one event.")
        X_fit, x_scale = _rescaled(X)
        # the l2 term on the coefficients in X's units, alpha/2 ||coef||^2 = alpha x_scale^2 / 2 ||w||^2 in X_fit's
        # (x_scale a power of two: exact; 1 for data of ordinary magnitude)
        loss = CoxLoss(X_fit, event, time, sample_weight, self.ties, _rescaled_alpha(self.alpha, x_scale))
        loss.positive = bool(self.positive)
        return loss, {"y_ndim": 1, "scale": (x_scale, 1.0), "dtype": X.dtype,
                      "survival": (X, event, time, sample_weight)}

    def _store(self, fit, info):
        super()._store(fit, info)
        self.intercept_ = 0.0
        X, event, time, sample_weight = info["survival"]
        eta = np.asarray(X @ np.asarray(self.coef_, dtype=float), dtype=float).ravel()
        # the predictions' baseline at the risk score `shift` (not 0) where exp(X coef_) leaves float range
        # (|X coef_| beyond about 700: uncentred features); the public baseline is its value at 0 when that
        # is in range, else at `shift` (baseline_risk_score_). Rows of weight 0 are absent: not their scores
        live = eta[sample_weight > 0]
        shift = float(live.max()) if live.size and np.abs(live).max() > _policy.COX_BASELINE_SHIFT_ABOVE else 0.0
        times, hazard = breslow_cumulative_hazard(eta, event, time, sample_weight, shift)
        self._hazard_shift = (shift, hazard)
        with np.errstate(over="ignore", under="ignore"):
            baseline = hazard * np.exp(-shift) if shift else hazard
        if shift and not _in_range(baseline, hazard):  # (the baseline at 0 is inf, or 0 after an event)
            warnings.warn(f"{type(self).__name__}: the largest training risk score X coef_ is {shift:.4g}, so the "
                          "baseline cumulative hazard at X coef_ = 0 leaves floating-point range; "
                          "cum_baseline_hazard_ and baseline_survival_ hold the baseline at X coef_ = "
                          "baseline_risk_score_ instead (the predicted functions are unaffected). Centre or "
                          "standardise the features (StandardScaler) for the baseline at 0.", UserWarning,
                          stacklevel=4)
            baseline = hazard
        else:
            shift = 0.0
        self.baseline_risk_score_ = shift
        self.unique_times_ = times
        self.cum_baseline_hazard_ = StepFunction(times, baseline)
        self.baseline_survival_ = StepFunction(times, np.exp(-baseline))

    def _check_fitted(self, loss, fit):
        """A :class:`MonotoneLikelihoodWarning` when the partial likelihood on the support has no maximum."""
        support = np.asarray(fit.support, dtype=np.intp)
        theta = np.asarray(fit.coef, dtype=float)[support, 0]
        direction = monotone_direction(loss._columns(support), loss.event, loss.time, loss.sample_weight, theta,
                                       positive=bool(self.positive),
                                       sorted_index=(loss.order, loss.risk_start[loss.dead_group]))
        if direction is None:
            return
        live = loss.sample_weight > 0
        features = support[np.abs(direction) > 1e-6 * np.abs(direction).max()].tolist()
        where = (f"the optimum of the l2 penalty alpha={self.alpha!r}, set by alpha rather than by the data"
                 if self.alpha > 0 else "a finite point along that direction, where the solver stopped (alpha=0)")
        warnings.warn(
            f"{type(self).__name__}: the Cox partial likelihood on the selected feature(s) {features} is monotone "
            f"({int(np.sum(loss.event & live))} event(s) among {int(np.sum(live))} samples): along a direction of "
            "their coefficients every event has the largest risk score of its risk set, so the unpenalised "
            "maximum does not exist (those coefficients would grow without bound; scikit-survival's "
            f"CoxPHSurvivalAnalysis() does not converge). coef_ is {where}. Select fewer features, gather more "
            "events, or choose alpha deliberately (e.g. by cross-validation).", MonotoneLikelihoodWarning,
            stacklevel=4)

    def predict(self, X):
        """The risk score ``X coef_`` (the log relative hazard; higher: earlier event).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            In ``X``'s float dtype (float32 in, float32 out).
        """
        return self._decision(X)

    def score(self, X, y, sample_weight=None):
        """Harrell's concordance index of the risk scores on ``(X, y)``.

        Unweighted, the value of scikit-survival's
        ``concordance_index_censored(event, time, predict(X))[0]`` (the
        ``score`` of its estimators); with ``sample_weight`` a comparable
        pair counts the product of its weights.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : structured ndarray of shape (n_samples,)
            Event indicator and time, as for :meth:`fit`.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        return self._score_linear(y, self._decision(X), sample_weight)

    def _score_linear(self, y, eta, sample_weight=None):
        """:meth:`score` from the risk scores ``eta`` (the searches' scoring of path fits)."""
        eta = np.asarray(eta, dtype=float).ravel()
        event, time = check_survival_target(y, eta.shape[0])
        # (checked as fit's: a wrong length, NaN or negative weights failed with NumPy's broadcasting error or
        # "no comparable pair")
        sw = None if sample_weight is None else _checked_weights(sample_weight, eta[:, None])
        return concordance_index(event, time, eta, sw)

    def _functions(self, X, survival, return_array):
        """The cumulative hazard (or, with ``survival``, the survival) functions of the samples of ``X``."""
        check_is_fitted(self)
        shift, hazard = self._hazard_shift  # (the baseline at the risk score `shift`: see _store)
        with np.errstate(over="ignore"):
            risk = np.exp(np.asarray(self.predict(X), dtype=float) - shift)
        # S = exp(-risk H0), not S0 ** risk: far from X coef_ = 0 (uncentred features), S0 = exp(-H0)
        # underflows to 0 or rounds to 1 where risk H0 is of order 1
        if return_array:
            return np.exp(-risk[:, None] * hazard[None, :]) if survival else risk[:, None] * hazard[None, :]
        out = np.empty(risk.size, dtype=object)
        for i, r in enumerate(risk):
            out[i] = (StepFunction(self.unique_times_, np.exp(-r * hazard)) if survival
                      else StepFunction(self.unique_times_, hazard, a=r))
        return out

    def predict_cumulative_hazard_function(self, X, return_array=False):
        """The cumulative hazard ``H(t | x) = exp(x coef_) H0(t)``, ``H0`` Breslow's baseline.

        As scikit-survival's ``CoxPHSurvivalAnalysis``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        return_array : bool, default=False
            False: an array of :class:`StepFunction` objects (one per
            sample, callable on times within their domain). True: their
            values at :attr:`unique_times_`, shape (n_samples, n_unique_times).

        Returns
        -------
        ndarray
        """
        return self._functions(X, False, return_array)

    def predict_survival_function(self, X, return_array=False):
        """The survival function ``S(t | x) = exp(-exp(x coef_) H0(t))``, ``H0`` Breslow's baseline.

        As scikit-survival's ``CoxPHSurvivalAnalysis``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        return_array : bool, default=False
            False: an array of :class:`StepFunction` objects (one per
            sample). True: their values at :attr:`unique_times_`, shape
            (n_samples, n_unique_times).

        Returns
        -------
        ndarray
        """
        return self._functions(X, True, return_array)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = None  # (neither a regressor nor a classifier, as scikit-survival's estimators)
        tags.regressor_tags = None
        tags.target_tags.required = True
        tags.target_tags.multi_output = False
        tags.target_tags.single_output = True
        return tags


_DESCRIPTION = """The Cox proportional-hazards model ``h(t | x) = h0(t) exp(x coef_)``
    with exactly ``k`` non-zero coefficients, fit by {algorithm} on the
    negative log partial likelihood (:class:`~sparse_estimators.losses.CoxLoss`,
    Breslow's or Efron's ties), then refit on the support by Newton's method
    and (by default) improved by the splicing search. ``y`` is a structured
    array ``(event, time)`` as scikit-survival builds it; :meth:`predict`
    gives the risk score ``X coef_``, :meth:`score` Harrell's concordance
    index, and :meth:`predict_survival_function` and
    :meth:`predict_cumulative_hazard_function` the functions of Breslow's
    baseline, as scikit-survival's ``CoxPHSurvivalAnalysis``.

    Selection is by coefficient magnitude: standardise the features
    (``StandardScaler`` in a ``Pipeline``)."""


@fill_doc(cox_params=_COX_PARAMS, attrs=_COX_ATTRIBUTES, see_also=_SEE_ALSO, notes=_NOTES,
          description=_DESCRIPTION.format(algorithm="iterative hard thresholding"))
class IHTCoxPHSurvivalAnalysis(_SupportMixin, _CoxPHSurvivalBase):
    """Cox proportional-hazards model with exactly ``k`` features, by iterative thresholding.

    {description}

    Parameters
    ----------
    {k}

    {cox_params}

    {solver_params}

    Attributes
    ----------
    {attrs}

    See Also
    --------
    {see_also}

    Notes
    -----
    {notes}

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((300, 20))
    >>> time = rng.exponential(np.exp(-(1.5 * X[:, 3] - X[:, 11])))
    >>> y = np.array([(True, t) for t in time], dtype=[("event", bool), ("time", float)])
    >>> model = IHTCoxPHSurvivalAnalysis(k=2).fit(X, y)
    >>> model.support_
    array([ 3, 11])
    """

    _solver = staticmethod(iht)


@fill_doc(cox_params=_COX_PARAMS, attrs=_COX_ATTRIBUTES, see_also=_SEE_ALSO, notes=_NOTES,
          description=_DESCRIPTION.format(algorithm="accelerated IHT (momentum with restarts)"))
class AcceleratedIHTCoxPHSurvivalAnalysis(_SupportMixin, _MomentumMixin, _CoxPHSurvivalBase):
    """Cox proportional-hazards model with exactly ``k`` features, by accelerated IHT.

    {description}

    Parameters
    ----------
    {k}

    momentum : float, default=0.25
        Momentum of the extrapolation, in ``[0, 1)`` (see
        :class:`~sparse_estimators.AcceleratedIHTRegressor`).

    {cox_params}

    {solver_params}

    Attributes
    ----------
    {attrs}

    See Also
    --------
    {see_also}

    Notes
    -----
    {notes}
    """

    def __init__(self, k=None, *, momentum=0.25, ties="breslow", alpha=1e-4, thresholding="hard",
                 step_size="auto", max_iter=1000, tol=1e-4, debias=True, splicing=True, positive=False,
                 groups=None, always_select=None, warm_start=False, verbose=0):
        super().__init__(k, ties=ties, alpha=alpha, thresholding=thresholding, step_size=step_size,
                         max_iter=max_iter, tol=tol, debias=debias, splicing=splicing, positive=positive,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose)
        self.momentum = momentum


@fill_doc(cox_params=_COX_PARAMS, attrs=_COX_ATTRIBUTES, see_also=_SEE_ALSO, notes=_NOTES,
          description=_DESCRIPTION.format(algorithm="regularized IHT (adaptive weights)"))
class RegularizedIHTCoxPHSurvivalAnalysis(_SupportMixin, _WeightStepMixin, _CoxPHSurvivalBase):
    """Cox proportional-hazards model with exactly ``k`` features, by regularized IHT.

    {description}

    Parameters
    ----------
    {k}

    weight_step : float or None, default=None
        The weights' step (see :class:`~sparse_estimators.RegularizedIHTRegressor`).

    {cox_params}

    {solver_params}

    Attributes
    ----------
    {attrs}
    weights_ : ndarray of shape (n_features,)
        The per-feature penalty weights the run ended with (see
        :class:`~sparse_estimators.RegularizedIHTRegressor`); a warm start
        continues from them.

    See Also
    --------
    {see_also}

    Notes
    -----
    {notes}
    """

    def __init__(self, k=None, *, weight_step=None, ties="breslow", alpha=1e-4, thresholding="hard",
                 step_size="auto", max_iter=1000, tol=1e-4, debias=True, splicing=True, positive=False,
                 groups=None, always_select=None, warm_start=False, verbose=0):
        super().__init__(k, ties=ties, alpha=alpha, thresholding=thresholding, step_size=step_size,
                         max_iter=max_iter, tol=tol, debias=debias, splicing=splicing, positive=positive,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose)
        self.weight_step = weight_step


@fill_doc(cox_params=_COX_PARAMS, attrs=_COX_ATTRIBUTES, see_also=_SEE_ALSO, notes=_NOTES,
          description=_DESCRIPTION.format(algorithm="the Iterative Optimal Brain Surgeon (damped Newton "
                                                    "steps on the partial likelihood's Hessian)"))
class IOBSCoxPHSurvivalAnalysis(_SupportMixin, _IOBSMixin, _CoxPHSurvivalBase):
    """Cox proportional-hazards model with exactly ``k`` features, by the Iterative Optimal Brain Surgeon.

    {description}

    The Hessian is the partial likelihood's at the iterate, re-formed at every
    iteration. ``hessian='auto'``: with fewer samples than features (and
    ``damping > 0``), 'woodbury': the damped Newton step through the
    ``n x n`` Hessian in the linear predictor (an ``n x n`` factorisation per
    iteration, the ``p x p`` Hessian never formed); else densely when
    ``n_features <= 1024``, else matrix-free by conjugate gradient on
    Hessian-vector products ('cg').

    Parameters
    ----------
    {k}

    damping : float, default=1e-2
        Damping of the Hessian relative to the mean of its diagonal (see
        :class:`~sparse_estimators.IOBSRegressor`).

    correction : bool, default=True
        Apply the OBS correction (the restricted Newton solve on the kept
        support).

    hessian : {{'auto', 'dense', 'woodbury', 'cg'}}, default='auto'
        How the damped Newton systems are solved (see above).

    {cox_params}

    {solver_params}

    Attributes
    ----------
    {attrs}

    See Also
    --------
    {see_also}

    Notes
    -----
    {notes}
    """

    def __init__(self, k=None, *, damping=1e-2, correction=True, hessian="auto", ties="breslow", alpha=1e-4,
                 thresholding="hard", step_size="auto", max_iter=1000, tol=1e-4, debias=True, splicing=True,
                 positive=False, groups=None, always_select=None, warm_start=False, verbose=0):
        super().__init__(k, ties=ties, alpha=alpha, thresholding=thresholding, step_size=step_size,
                         max_iter=max_iter, tol=tol, debias=debias, splicing=splicing, positive=positive,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose)
        self.damping = damping
        self.correction = correction
        self.hessian = hessian

    _hessian_routes = ("auto", "dense", "woodbury", "cg")  # (no 'screened': the curvature is not pointwise)
