"""Iterative Optimal Brain Surgeon estimators (Wu et al., *The Iterative Optimal Brain Surgeon*)."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from .. import _policy
from .._selection import _SupportMixin
from ..solvers import iobs
from ._classifier import SparseClassifierBase
from ._docs import attributes, fill_doc
from ._regressor import SparseRegressorBase
from ._validation import _check_real

_PARAMS = """damping : float, default=1e-2
        Levenberg-Marquardt damping of the Hessian, relative to its scale:
        ``H + lambda I`` with ``lambda = damping * mean(diag H)`` (1e-2 is
        SparseGPT's dampening, also used by the paper). Small values give
        Newton-like steps (``0`` is allowed; a singular Hessian is then
        handled by its pseudo-inverse); large values tend to IHT with step
        ``1 / lambda``.

    correction : bool, default=True
        Apply the OBS correction: the values on the selected support are the
        restricted Newton solve ``(H_lambda)_QQ^{{-1}} (H_lambda theta - g)_Q``
        rather than the Newton point's (top-k I-OBS, eq. 12, when False).

    hessian : {hessian_values}, default='auto'
        How the damped Newton systems are solved (the inverse Hessian is never
        formed). {hessian_text}"""

_HESSIAN_REG = """'dense': Cholesky of the ``p x p`` Hessian,
        factored once per fit; 'woodbury': the Woodbury identity through the
        Cholesky factor of an ``n x n`` matrix, also once per fit; 'cg':
        matrix-free conjugate gradient on Hessian-vector products (for data
        too wide for either matrix). 'auto' uses 'dense' when
        ``n_samples >= n_features``, 'woodbury' otherwise, and 'cg' when the
        matrix would have more than 4096 rows
        (``sparse_estimators._policy.DENSE_MAX_LS``). For the other
        losses the Hessian is re-formed at every iterate (see
        :class:`IOBSClassifier`); with ``loss='poisson'``,
        'auto' uses 'screened': the Newton
        step of a block-diagonal Hessian, exact on the current support and
        the ``4 k`` other features of largest diagonal Newton point
        (``sparse_estimators._policy.SCREEN_FACTOR``),
        diagonal elsewhere, which needs no ``n x n`` factorisation (not for
        least squares, which raises a ValueError); with ``loss='gamma'`` and
        ``n_samples < n_features + 1``, 'auto' uses 'fisher': the expected
        Hessian (Fisher scoring) instead of the Hessian at the iterate,
        which for the log-link Gamma loss does not depend on the iterate, so
        it is factored once per fit rather than at every iteration
        (Woodbury when ``n_samples <= 2048`` and ``damping > 0``; else the
        dense Hessian, or CG above 1023 features); the fit from zero takes
        its first step, and checks the support it jumps to, with
        'screened_fisher' (the expected Hessian exact on the support and the
        ``4 k`` screened features, diagonal elsewhere), and factors the full
        expected Hessian only when that support is no fixed point
        (``sparse_estimators._policy.IOBS_FISHER_SCREENED_START``; from 256
        samples, ``IOBS_FISHER_SCREENED_MIN_SAMPLES``). 'fisher'
        and 'screened_fisher' can be asked for at any size, with
        ``loss='gamma'`` only (else a ValueError)."""

_HESSIAN_CLF = """The Hessian depends on the iterate and is
        re-formed at every iteration: 'dense' forms it over the packed
        coefficients and intercepts; 'woodbury' inverts it through an
        ``(n m) x (n m)`` factorisation (``m`` outputs: 1 for two classes,
        ``n_classes`` otherwise) built from ``X X^T``, computed once per fit;
        'cg' uses matrix-free conjugate gradient on Hessian-vector products.
        'auto' uses 'dense' when ``(n_features + 1) m <= 1024``, else
        'woodbury' when ``n_samples m <= 2048`` and ``damping > 0``, else 'cg'
        (``DENSE_MAX_GLM`` and ``WOODBURY_MAX_GLM`` in
        ``sparse_estimators._policy``). With ``damping=0``, 'woodbury'
        falls back to 'cg'. 'screened' (never chosen by 'auto' here): the
        Newton step of a block-diagonal Hessian, exact on the current
        support and ``4 k`` other features, diagonal elsewhere."""

_STEP_SIZE = """step_size : 'auto' or float, default='auto'
        Fraction of the Newton step ``theta - s H_lambda^{-1} g`` on which the
        support is selected: 'auto' is the full step ``s = 1``, a float is
        that ``s``. Either way ``s`` is halved when the iteration would
        increase the objective, and a projected-gradient step is taken if no
        fraction helps, so the objective never increases (hard thresholding
        or ``correction=True``) and the fit cannot diverge."""

_THRESHOLDING = """thresholding : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator, \
default='hard'
        The operator applied to the rows of the Newton point. Every operator
        selects the same ``k`` rows; with ``correction=True`` the restricted
        solve then sets their values, so only ``correction=False`` makes the
        operator's shrinkage matter (the solver then returns its best
        iterate)."""

_DESCRIPTION = """Each iteration takes a damped Newton step
    ``theta+ = theta - H_lambda^{-1} grad f(theta)``, keeps the ``k``
    features of largest magnitude of ``theta+`` (top-k I-OBS, the paper's
    eq. 12) and applies the Optimal Brain Surgeon correction: the restricted
    Newton solve on the kept support (eq. 23). This is a projection in the
    Hessian norm rather than the Euclidean one, and converges in a few
    iterations where IHT needs hundreds on ill-conditioned designs. The
    intercept is never thresholded.

    Beyond the paper: the Hessian is damped relative to ``mean(diag H)``,
    and an iteration that would increase the objective is replaced by a
    shorter Newton step or a projected-gradient step.

    Selection is by coefficient magnitude, which is not scale invariant:
    standardise the features (``StandardScaler`` in a ``Pipeline``)."""

_REFERENCES = """D. Wu, I. Modoranu, M. Safaryan, D. Kuznedelev and D. Alistarh,
    "The Iterative Optimal Brain Surgeon: Faster Sparse Recovery by
    Leveraging Second-Order Information", NeurIPS 2024 (eq. 12, eq. 23),
    https://openreview.net/forum?id=snxWD0Q4EI

    E. Frantar and D. Alistarh, "SparseGPT: Massive Language Models Can Be
    Accurately Pruned in One-Shot", ICML 2023 (1 % Hessian dampening),
    arXiv:2301.00774, https://arxiv.org/abs/2301.00774"""

class _IOBSMixin:
    _solver = staticmethod(iobs)
    _solver_params = ("damping", "correction", "hessian")
    #: with debias, jump to the refit once the Newton point has kept the support for one iteration (the
    #: next iteration checks it is a fixed point, else continues from it): see _policy.IOBS_SUPPORT_REFIT_PATIENCE
    _support_refit_patience = "IOBS_SUPPORT_REFIT_PATIENCE"
    _hessian_routes = ("auto", "dense", "woodbury", "cg", "screened")
    # (the Hessian routes differ between regressors and classifiers: checked by _validate_extra_params)
    _parameter_constraints = {"damping": [Interval(Real, 0, None, closed="left")], "correction": ["boolean"],
                              "hessian": [str]}

    def _validate_extra_params(self):
        _check_real("damping", self.damping, low_open=False)
        if not isinstance(self.correction, (bool, np.bool_)):  # (as the other boolean parameters)
            raise ValueError(f"The 'correction' parameter must be a bool, got {self.correction!r}.")
        if not (isinstance(self.hessian, str) and self.hessian in self._hessian_routes):
            raise ValueError(f"The 'hessian' parameter must be one of {self._hessian_routes}, "
                             f"got {self.hessian!r}.")


@fill_doc(params=_PARAMS.format(hessian_values="{'auto', 'dense', 'woodbury', 'cg', 'screened', 'fisher', "
                                               "'screened_fisher'}",
                                hessian_text=_HESSIAN_REG),
          step_size=_STEP_SIZE, thresholding=_THRESHOLDING, description=_DESCRIPTION, references=_REFERENCES,
          attrs=attributes("(n_features,) or (n_targets, n_features)", "float or ndarray of shape (n_targets,)"))
class IOBSRegressor(_SupportMixin, _IOBSMixin, SparseRegressorBase):
    """Least squares with exactly ``k`` features, by the Iterative Optimal Brain Surgeon.

    {description}

    For least squares the Hessian ``X_c^T S X_c / sum(S)`` is constant and
    factored once per fit; for the other losses (``loss='poisson'``,
    ``'gamma'``, ``'huber'``) it is the loss's Hessian at the iterate,
    intercept included, re-formed at every iteration as for the classifiers.

    Parameters
    ----------
    {k}

    {params}

    {solver_params}

    Attributes
    ----------
    {attrs}

    See Also
    --------
    IHTRegressor : First-order iterative thresholding.
    IOBSClassifier : The same algorithm for classification.

    References
    ----------
    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import IOBSRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((100, 20))
    >>> y = 3 * X[:, 2] - 2 * X[:, 7] + 1
    >>> model = IOBSRegressor(k=2).fit(X, y)
    >>> model.support_
    array([2, 7])
    >>> np.round(model.coef_[model.support_], 6)
    array([ 3., -2.])
    """

    def __init__(self, k=None, *, damping=1e-2, correction=True, hessian="auto", loss="squared_error",
                 epsilon=1.35, thresholding="hard", step_size="auto", max_iter=1000, tol=1e-4, fit_intercept=True,
                 debias=True, splicing=True, precompute="auto", positive=False, groups=None, always_select=None,
                 warm_start=False, verbose=0):
        super().__init__(k, loss=loss, epsilon=epsilon,
                         thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing, precompute=precompute,
                         positive=positive, groups=groups, always_select=always_select, warm_start=warm_start,
                         verbose=verbose)
        self.damping = damping
        self.correction = correction
        self.hessian = hessian

    # (Gamma's expected Hessian, in full or screened; not for classifiers)
    _hessian_routes = _IOBSMixin._hessian_routes + ("fisher", "screened_fisher")

    def _solver_options(self):
        options = super()._solver_options()
        if _policy.IOBS_GLM_REFIT_FIRST and self._loss_name() in ("poisson", "gamma"):
            options["refit_first"] = True  # (a cold start's support jump after one iteration, see iobs)
        return options


@fill_doc(params=_PARAMS.format(hessian_values="{'auto', 'dense', 'woodbury', 'cg', 'screened'}",
                                hessian_text=_HESSIAN_CLF),
          step_size=_STEP_SIZE, thresholding=_THRESHOLDING, description=_DESCRIPTION, references=_REFERENCES,
          attrs=attributes("(1, n_features) or (n_classes, n_features)", "ndarray of shape (1,) or (n_classes,)"))
class IOBSClassifier(_SupportMixin, _IOBSMixin, SparseClassifierBase):
    """Logistic regression with exactly ``k`` features, by the Iterative Optimal Brain Surgeon.

    {description}

    Two classes: l2-penalised logistic loss; more: multinomial loss whose
    coefficient rows are thresholded together (one support of ``k``
    features shared by all classes). The Hessian, l2 term included, is
    re-formed at every iteration; the intercepts are variables of the Newton
    step and of the correction.

    Parameters
    ----------
    {k}

    {params}

    {solver_params}

    {classifier_params}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    {attrs}

    See Also
    --------
    IHTClassifier : First-order iterative thresholding.
    IOBSRegressor : The same algorithm for least squares.

    References
    ----------
    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import IOBSClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((300, 20))
    >>> y = (2 * X[:, 4] - 3 * X[:, 11] + 0.3 * rng.standard_normal(300) > 0).astype(int)
    >>> clf = IOBSClassifier(k=2).fit(X, y)
    >>> clf.support_
    array([ 4, 11])
    >>> float(clf.score(X, y)) > 0.95
    True
    """

    def __init__(self, k=None, *, damping=1e-2, correction=True, hessian="auto", thresholding="hard",
                 step_size="auto", max_iter=1000, tol=1e-4, fit_intercept=True, debias=True, splicing="auto",
                 groups=None, always_select=None, warm_start=False,
                 verbose=0, alpha=1e-4, class_weight=None):
        super().__init__(k, thresholding=thresholding, step_size=step_size, max_iter=max_iter, tol=tol,
                         fit_intercept=fit_intercept, debias=debias, splicing=splicing,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose,
                         alpha=alpha, class_weight=class_weight)
        self.damping = damping
        self.correction = correction
        self.hessian = hessian
