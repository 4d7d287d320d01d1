"""Accelerated IHT estimators (Khanna & Kyrillidis, *IHT dies hard*)."""

from numbers import Real

from sklearn.utils._param_validation import Interval

from .._selection import _SupportMixin
from ..solvers import accelerated_iht
from ._classifier import SparseClassifierBase
from ._docs import attributes, fill_doc
from ._regressor import SparseRegressorBase
from ._validation import _check_real

_MOMENTUM = """momentum : float, default=0.25
        Momentum ``tau`` of the extrapolation ``u = x_new + tau (x_new - x)``;
        1/4 is the paper's universal choice; in ``[0, 1)``. A momentum step that raises the
        objective is discarded and replaced by a plain IHT step (restart), so
        a poor value can slow the fit but never make it diverge."""

_DESCRIPTION = """The gradient is taken at an extrapolated point
    ``u = x_t + momentum (x_t - x_{t-1})``, which is never thresholded; the
    step is restricted to the support of ``u`` plus the ``k`` largest
    gradient entries outside it (support expansion), then thresholded to
    ``k`` features. Beyond the paper, the momentum restarts whenever it
    raises the objective (O'Donoghue & Candes), so the method is never worse
    than plain IHT by more than one gradient per restart."""


class _MomentumMixin:
    _solver = staticmethod(accelerated_iht)
    _group_search_alone = True
    _solver_params = ("momentum",)
    _parameter_constraints = {"momentum": [Interval(Real, 0, 1, closed="left")]}

    def _validate_extra_params(self):
        _check_real("momentum", self.momentum, low_open=False)
        if not self.momentum < 1:  # an extrapolation of tau >= 1 steps past the new point: no contraction left
            raise ValueError(f"The 'momentum' parameter must be in [0, 1), got {self.momentum!r}.")


@fill_doc(momentum=_MOMENTUM, description=_DESCRIPTION,
          attrs=attributes("(n_features,) or (n_targets, n_features)", "float or ndarray of shape (n_targets,)"))
class AcceleratedIHTRegressor(_SupportMixin, _MomentumMixin, SparseRegressorBase):
    """Least squares with exactly ``k`` features, by accelerated IHT.

    {description}

    Parameters
    ----------
    {k}

    {momentum}

    {solver_params}

    Attributes
    ----------
    {attrs}

    See Also
    --------
    IHTRegressor : Plain iterative thresholding.

    References
    ----------
    R. Khanna and A. Kyrillidis, "IHT dies hard: Provable accelerated
    Iterative Hard Thresholding", AISTATS 2018, Algorithm 1,
    arXiv:1712.09379, https://arxiv.org/abs/1712.09379

    B. O'Donoghue and E. Candes, "Adaptive restart for accelerated gradient
    schemes", Foundations of Computational Mathematics 15(3), 2015 (function
    restart), arXiv:1204.3982, https://arxiv.org/abs/1204.3982

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import AcceleratedIHTRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((100, 20))
    >>> y = 3 * X[:, 2] - 2 * X[:, 7] + 1
    >>> AcceleratedIHTRegressor(k=2).fit(X, y).support_
    array([2, 7])
    """

    def __init__(self, k=None, *, momentum=0.25, loss="squared_error", epsilon=1.35, thresholding="hard",
                 step_size="auto", max_iter=1000, tol=1e-4, fit_intercept=True, debias=True, splicing=True,
                 precompute="auto", positive=False, groups=None, always_select=None, warm_start=False,
                 verbose=0):
        super().__init__(k, loss=loss, epsilon=epsilon,
                         thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing, precompute=precompute,
                         positive=positive, groups=groups, always_select=always_select, warm_start=warm_start,
                         verbose=verbose)
        self.momentum = momentum


@fill_doc(momentum=_MOMENTUM, description=_DESCRIPTION,
          attrs=attributes("(1, n_features) or (n_classes, n_features)", "ndarray of shape (1,) or (n_classes,)"))
class AcceleratedIHTClassifier(_SupportMixin, _MomentumMixin, SparseClassifierBase):
    """Logistic regression with exactly ``k`` features, by accelerated IHT.

    {description}

    Two classes: logistic loss; more: multinomial loss with one support of
    ``k`` features shared by all classes.

    Parameters
    ----------
    {k}

    {momentum}

    {solver_params}

    {classifier_params}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    {attrs}

    See Also
    --------
    IHTClassifier : Plain iterative thresholding.

    References
    ----------
    R. Khanna and A. Kyrillidis, "IHT dies hard: Provable accelerated
    Iterative Hard Thresholding", AISTATS 2018, Algorithm 1,
    arXiv:1712.09379, https://arxiv.org/abs/1712.09379
    """

    def __init__(self, k=None, *, momentum=0.25, thresholding="hard", step_size="auto", max_iter=1000,
                 tol=1e-4, fit_intercept=True, debias=True, splicing="auto",
                 groups=None, always_select=None, warm_start=False, verbose=0, alpha=1e-4,
                 class_weight=None):
        super().__init__(k, thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose,
                         alpha=alpha, class_weight=class_weight)
        self.momentum = momentum
