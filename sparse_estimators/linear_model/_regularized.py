"""Regularized IHT estimators (Axiotis & Sviridenko, *IHT with adaptive regularization*)."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from .._selection import _SupportMixin
from ..solvers import regularized_iht
from ._classifier import SparseClassifierBase
from ._docs import attributes, fill_doc
from ._regressor import SparseRegressorBase
from ._validation import _check_real

_WEIGHT_STEP = """weight_step : float or None, default=None
        The paper's weight step ``c``: how fast the per-feature penalty
        weights are removed. Each iteration lowers the total weight by
        between ``c/2`` and ``c`` while the iterate has weighted features,
        and a feature is unregularized (weight 0) once its weight has lost
        1/2, so ``c * max_iter`` is about the number of features that get
        unregularized: run about ``k / c`` iterations. None means
        ``c = k / max_iter``, the choice of the paper's experiments (its
        theory uses ``k / (4 max_iter)``), with ``groups`` ``k`` counted in
        features (those of the ``k`` largest groups); a stable support of ``k``
        features is then unweighted after about ``0.7 max_iter`` (at least
        ``0.5 max_iter``) iterations, and the fit does not stop before
        (with ``debias=True`` and hard thresholding it then jumps to the
        minimiser on the support and stops there when that is a fixed point
        of the step, as IHT does; with ``k`` at least the number of features,
        or of groups, none can be dropped and it jumps there at once).
        Large values (``>= 1``) soon unweight the support and behave like
        plain IHT; smaller ones need more iterations and can find a lower
        loss. As the default scales with ``1 / max_iter``, raising
        ``max_iter`` alone stretches the schedule: when the support keeps
        changing late and the fit ends with a ConvergenceWarning, set
        ``weight_step`` (a larger value ends the weighting sooner)."""

_STEP_SIZE = """step_size : 'auto' or float, default='auto'
        The step ``eta`` of Algorithm 1 in multiples of ``1/L`` (``L`` the
        smoothness constant of the loss); the penalty is
        ``||coef||_w^2 / (4 eta)``, so the step also sets its strength. The
        theory's step is ``eta = 1/(2L)``, i.e. ``step_size=0.5`` (the
        paper's reference code writes ``0.5 * eta`` for the same step). A
        float is a fixed step ``step_size / L``; above 1.5 it can diverge,
        which is detected and reported. 'auto': backtracking on the quadratic
        upper bound of the regularized objective, starting at ``1/(2L)``,
        allowed to grow, never below ``1/(2L)``, where the bound always
        holds: with hard thresholding every step decreases the current
        regularized objective, and the penalty tracks the local curvature
        of the loss rather than its global bound ``L``."""

_DESCRIPTION = """Iterative thresholding on ``f(x) + ||x||_w^2 / (4 eta)``, an
    l2 penalty per feature whose weights the algorithm learns: each
    iteration takes

    ``x <- P_k((1 - w/2) x - eta grad f(x))``,
    ``w <- (w - c (w x)^2 / sum_j w_j x_j^2)_{>= 1/2}``

    (element-wise; weights start at 1, never increase, and are set to 0 once
    below 1/2). The weights fall fastest on the features that carry the
    iterate's mass, so the penalty is progressively lifted from a good
    support while still discouraging the others; this lets the method
    escape fixed points where plain IHT is stuck, and its guarantee needs
    ``k = O(k* kappa)`` rather than IHT's ``O(k* kappa^2)``. Early
    iterations are worse than IHT's (the penalty is active); the fit only
    stops once the weights of the selected features have reached 0.
    Several targets (classes) share one weight per feature, computed from
    the squared norm of the feature's coefficients. The weights start at 1
    on every fit, also from ``coef_init``; a warm start (``warm_start=True``
    with an int ``k``, on the same features) continues from the previous
    fit's ``weights_`` as well as its coefficients, so a refit from a
    converged model stops at once rather than running the weight schedule
    again."""


_TOL = """tol : float, default=1e-4
        Stop when the support is unchanged, the relative change of the
        coefficients is at most ``tol`` and the weights did not change in
        the last iteration (every selected feature is unweighted)."""


class _WeightStepMixin:
    _solver = staticmethod(regularized_iht)
    _solver_params = ("weight_step",)
    _parameter_constraints = {"weight_step": [Interval(Real, 0, None, closed="neither"), None]}

    def _validate_extra_params(self):
        if self.weight_step is not None:
            _check_real("weight_step", self.weight_step)

    def _initial_point_unscaled(self, loss, coef_init, coef_scale=1.0, intercept_scale=1.0):
        """The base start; a warm start from the previous coefficients also takes that fit's ``weights_``.

        (With the weights back at 1, a refit from its own solution ran the whole schedule again, about
        ``0.7 max_iter`` iterations. ``k=None`` starts its final fit from the path instead: weights at 1.)
        """
        W, b = super()._initial_point_unscaled(loss, coef_init, coef_scale, intercept_scale)
        weights = getattr(self, "weights_", None)
        previous = np.asarray(getattr(self, "coef_", ()), dtype=float)
        # (only where the start is the previous coefficients: not after a change of classes or targets)
        warm = (coef_init is None and self.warm_start and self.k is not None and previous.size == W.size
                and weights is not None and weights.shape == (W.shape[0],)
                and np.array_equal(W, previous.reshape(W.shape[::-1]).T))
        self._start_weights = weights if warm else None
        return W, b

    def _solver_options(self):
        options = super()._solver_options()
        if getattr(self, "_start_weights", None) is not None:
            options["weights0"] = self._start_weights
        return options

    def _store(self, fit, info):
        super()._store(fit, info)
        self._start_weights = None
        if fit.weights is not None:
            self.weights_ = fit.weights
        elif hasattr(self, "weights_"):  # (no regularized IHT run ended this fit: no weights to continue from)
            del self.weights_


_REFERENCES = """K. Axiotis and M. Sviridenko, "Iterative Hard Thresholding with
    Adaptive Regularization: Sparser Solutions Without Sacrificing Runtime",
    ICML 2022, Algorithm 1, https://proceedings.mlr.press/v162/axiotis22a.html"""


@fill_doc(weight_step=_WEIGHT_STEP, step_size=_STEP_SIZE, tol=_TOL, description=_DESCRIPTION,
          references=_REFERENCES,
          attrs=attributes("(n_features,) or (n_targets, n_features)", "float or ndarray of shape (n_targets,)"))
class RegularizedIHTRegressor(_SupportMixin, _WeightStepMixin, SparseRegressorBase):
    """Least squares with exactly ``k`` features, by regularized IHT.

    {description}

    Selection is by coefficient magnitude, which is not scale invariant:
    standardise the features (``StandardScaler`` in a ``Pipeline``).

    Parameters
    ----------
    {k}

    {weight_step}

    {solver_params}

    Attributes
    ----------
    {attrs}
    weights_ : ndarray of shape (n_features,)
        The per-feature penalty weights ``w`` the run ended with (0 on the
        features it unweighted); a warm start continues from them. Absent
        when the fit ran no regularized IHT (a search from zero alone).

    See Also
    --------
    IHTRegressor : Plain iterative thresholding (``weight_step`` large).
    RegularizedIHTClassifier : The same algorithm for classification.

    References
    ----------
    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import RegularizedIHTRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((100, 20))
    >>> y = 3 * X[:, 2] - 2 * X[:, 7] + 1
    >>> model = RegularizedIHTRegressor(k=2).fit(X, y)
    >>> model.support_
    array([2, 7])
    >>> np.round(model.coef_[model.support_], 6)
    array([ 3., -2.])
    """

    def __init__(self, k=None, *, weight_step=None, loss="squared_error", epsilon=1.35, thresholding="hard",
                 step_size="auto", max_iter=1000, tol=1e-4, fit_intercept=True, debias=True, splicing=True,
                 precompute="auto", positive=False, groups=None, always_select=None, warm_start=False,
                 verbose=0):
        super().__init__(k, loss=loss, epsilon=epsilon,
                         thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing, precompute=precompute,
                         positive=positive, groups=groups, always_select=always_select, warm_start=warm_start,
                         verbose=verbose)
        self.weight_step = weight_step


@fill_doc(weight_step=_WEIGHT_STEP, step_size=_STEP_SIZE, tol=_TOL, description=_DESCRIPTION,
          references=_REFERENCES,
          attrs=attributes("(1, n_features) or (n_classes, n_features)", "ndarray of shape (1,) or (n_classes,)"))
class RegularizedIHTClassifier(_SupportMixin, _WeightStepMixin, SparseClassifierBase):
    """Logistic regression with exactly ``k`` features, by regularized IHT.

    {description}

    Two classes: logistic loss; more: multinomial loss with one support of
    ``k`` features shared by all classes. The intercept is never penalised
    nor thresholded.

    Parameters
    ----------
    {k}

    {weight_step}

    {solver_params}

    {classifier_params}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    {attrs}
    weights_ : ndarray of shape (n_features,)
        The per-feature penalty weights ``w`` the run ended with (0 on the
        features it unweighted); a warm start continues from them. Absent
        when the fit ran no regularized IHT (a search from zero alone).

    See Also
    --------
    IHTClassifier : Plain iterative thresholding (``weight_step`` large).
    RegularizedIHTRegressor : The same algorithm for least squares.

    References
    ----------
    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import RegularizedIHTClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((300, 20))
    >>> y = (2 * X[:, 4] - 3 * X[:, 11] > 0).astype(int)
    >>> RegularizedIHTClassifier(k=2).fit(X, y).support_
    array([ 4, 11])
    """

    def __init__(self, k=None, *, weight_step=None, thresholding="hard", step_size="auto", max_iter=1000,
                 tol=1e-4, fit_intercept=True, debias=True, splicing="auto",
                 groups=None, always_select=None, warm_start=False, verbose=0, alpha=1e-4,
                 class_weight=None):
        super().__init__(k, thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose,
                         alpha=alpha, class_weight=class_weight)
        self.weight_step = weight_step
