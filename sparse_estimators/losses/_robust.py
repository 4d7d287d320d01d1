"""Huber's robust regression loss, with a scale that makes the fit equivariant to the scale of ``y``."""

import copy

import numpy as np
from scipy.special import erf

from .. import _policy
from .._utils import power_of_two_scale
from ._glm import _NonNegativeRefit
from ._logistic import _GLMLoss
from ._numerics import cholesky_newton_solve
from ._pointwise_newton import _PointwiseNewtonRefit

#: the MAD times this estimates the standard deviation of Gaussian data (1 / Phi^{-1}(3/4))
_MAD_TO_SD = 1.482602218505602


class NoLikelihoodError(ValueError):
    """The loss is not a negative log-likelihood: information criteria do not apply to it."""


def weighted_median(values, weights):
    """The weighted median of ``values``: the midpoint of the lower and upper weighted medians.

    The lower is the smallest value with at least half the weight at or below
    it, the upper the smallest with more than half; they differ only when a
    value splits the weight in exact halves (e.g. an even number of equal
    weights, where this is ``np.median``). The midpoint makes the median of
    ``-values`` minus the median of ``values``, so Huber's fits of ``-y`` are
    minus those of ``y`` (the lower median alone moved the pilot scale by up
    to 6 % at n = 100, and the coefficients by up to 0.6 %).
    """
    order = np.argsort(values, kind="stable")
    ranked, cum = values[order], np.cumsum(weights[order])
    lower, upper = np.searchsorted(cum, 0.5 * cum[-1], side="left"), np.searchsorted(cum, 0.5 * cum[-1], side="right")
    return 0.5 * (float(ranked[lower]) + float(ranked[min(upper, cum.size - 1)]))


def robust_scale(residuals, weights):
    """``1.4826 * MAD``: the weighted median absolute deviation from the weighted median, scaled.

    Falls back to the weighted standard deviation when more than half the
    weight sits on one value (MAD 0), and to 1 when that is 0 too.
    """
    center = weighted_median(residuals, weights)
    mad = weighted_median(np.abs(residuals - center), weights)
    if mad > 0:
        return _MAD_TO_SD * mad
    mean = float(weights @ residuals) / weights.sum()
    sd = float(np.sqrt(weights @ (residuals - mean) ** 2 / weights.sum()))
    return sd if sd > 0 else 1.0


def _cut_variance(cut):
    """The variance of a standard normal cut at ``-cut`` and ``cut``: :func:`inlier_scale`'s consistency factor."""
    return 1.0 - 2.0 * cut * np.exp(-0.5 * cut ** 2) / np.sqrt(2.0 * np.pi) / erf(cut / np.sqrt(2.0))


def inlier_scale(residuals, weights, steps=2):
    """The standard deviation of the inliers: :func:`robust_scale`, then ``steps`` reweighted estimates.

    Each step takes the residuals within ``2.5`` scales (``_policy.INLIER_CUT``) of their weighted
    median and their weighted mean square about it, divided by the variance
    of a standard normal cut at ``2.5`` (0.911), so that it estimates the
    standard deviation of Gaussian noise. The MAD alone is biased by gross
    outliers on one side: with 10 % of them it reads 1.14 times the noise's
    standard deviation (its median and spread shift with them); the two
    steps bring that to about 1.03 and 1.01, and use the spread of all the
    inliers, not one quantile. Equivariant: multiplying the residuals by
    ``c > 0`` multiplies the scale by ``c``.
    """
    scale, cut = robust_scale(residuals, weights), _policy.INLIER_CUT
    for _ in range(steps):
        center = weighted_median(residuals, weights)
        inside = np.abs(residuals - center) <= cut * scale
        w = weights[inside]
        if not w.sum() > 0:
            break
        new = float(np.sqrt(w @ (residuals[inside] - center) ** 2 / w.sum() / _cut_variance(cut)))
        if not new > 0:
            break
        scale = new
    return scale


def huber_rho(a, threshold):
    """Huber's loss of the absolute residuals ``a``: ``a^2 / 2`` up to ``threshold``, linear beyond."""
    return np.where(a <= threshold, 0.5 * a * a, threshold * a - 0.5 * threshold * threshold)


def huber_location(y, weights, threshold):
    """The constant ``c`` minimising ``sum_i w_i rho(y_i - c)``, Huber's loss with threshold ``threshold``.

    The weighted sum of ``psi(y - c) = clip(y - c, -threshold, threshold)``
    falls as ``c`` grows, from >= 0 at ``min(y)`` to <= 0 at ``max(y)``:
    bisection on it, to ``1e-12`` of the range of ``y``.
    """
    lo, hi = float(y.min()), float(y.max())
    for _ in range(200):
        if hi - lo <= 1e-12 * max(abs(lo), abs(hi), 1e-300):
            break
        mid = 0.5 * (lo + hi)
        if weights @ np.clip(y - mid, -threshold, threshold) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def d2_huber_score(y, prediction, weights, epsilon):
    """D^2 of Huber's loss: ``1 - sum w rho(y - prediction) / sum w rho(y - c)``, ``c`` the best constant.

    The fraction of Huber's loss that the predictions explain, as D^2 is
    the fraction of deviance explained for the Poisson and Gamma losses.
    ``rho`` has threshold ``epsilon`` times the scale of the residuals
    ``y - prediction`` (:func:`inlier_scale`, the fit's own estimate), and
    ``c`` minimises the same loss over constants (:func:`huber_location`).
    Unlike R^2, gross outliers in ``y`` count linearly, so the score ranks
    models by how well they predict the inliers. Multiplying ``y`` and the
    predictions by ``c > 0`` leaves it unchanged. Where every residual is
    zero it is 1; where ``y`` is constant and mispredicted, 0; on fewer than
    two rows or no positive weight, NaN (as :func:`~sklearn.metrics.r2_score`).
    """
    y = np.asarray(y, dtype=float).reshape(-1)
    prediction = np.asarray(prediction, dtype=float).reshape(-1)
    factor = power_of_two_scale(y, prediction)  # (as the fits: Huber's squares under- or overflowed beyond 1e+-154)
    if factor != 1.0:
        y, prediction = y * factor, prediction * factor
    r = y - prediction
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    if y.size < 2 or not w.sum() > 0:
        return float("nan")
    if not np.any(r[w > 0]):
        return 1.0
    t = epsilon * inlier_scale(r, w)

    def loss(z):
        return float(w @ huber_rho(np.abs(z), t))

    null = loss(y - huber_location(y, w, t))
    return 1.0 - loss(r) / null if null > 0 else 0.0


class HuberLoss(_NonNegativeRefit, _PointwiseNewtonRefit, _GLMLoss):
    """Huber's loss with threshold ``epsilon`` times a scale ``sigma``, for regression with outliers.

    ``sum_i s_i rho(y_i - z_i) / sum_i s_i + alpha/2 ||w||^2`` with
    ``z = X w + b`` and, at ``t = epsilon * sigma``,
    ``rho(r) = r^2 / 2`` for ``|r| <= t`` and ``t |r| - t^2 / 2`` beyond:
    squared error for the bulk of the residuals, absolute error for the
    outliers (scikit-learn's :class:`~sklearn.linear_model.HuberRegressor`
    uses the same ``epsilon``, default 1.35: 95 % efficiency on Gaussian
    noise). The intercept is a free variable, never thresholded.

    The scale ``sigma`` is fixed within the loss, so that the loss is a
    smooth function of the coefficients alone (the solvers' contract);
    ``None`` estimates it from ``y`` as ``1.4826`` times the weighted median
    absolute deviation of ``y`` from its weighted median (a pilot for the
    first fit). The estimators then re-estimate it once from the residuals of
    that fit (:meth:`with_residual_scale`) and fit again: multiplying ``y`` by
    ``c`` multiplies the scale, and the fitted coefficients, by ``c``.

    The loss is not a negative log-likelihood of the data (Huber's least
    favourable distribution aside, whose scale would have to be known):
    :meth:`minus_two_log_likelihood` raises :class:`NoLikelihoodError`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    epsilon : float, default=1.35
        Threshold in units of the scale; must be positive.
    scale : float or None, default=None
        The scale ``sigma``; None estimates it from ``y`` (see above).
    alpha : float, default=0.0
        Strength of the l2 term on ``w`` (not on the intercept).
    """

    curvature = 1.0
    has_likelihood = False
    null_fits_constant = True
    #: (a support whose columns vanish on the inliers has a singular Hessian: the minimum-norm fallback)
    _solve_newton = staticmethod(cholesky_newton_solve)

    def __init__(self, X, y, sample_weight=None, fit_intercept=True, epsilon=1.35, scale=None, alpha=0.0):
        y = np.asarray(y, dtype=float)
        Y = y.reshape(-1, 1) if y.ndim == 1 else y
        if Y.shape[1] != 1:
            raise ValueError(f"The Huber loss takes a single target; got y of shape {y.shape}.")
        if not (np.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"The 'epsilon' parameter must be > 0, got {epsilon!r}.")
        super().__init__(X, Y, sample_weight, fit_intercept, alpha)
        self.epsilon = float(epsilon)
        self.scale = robust_scale(Y[:, 0], self.sample_weight) if scale is None else float(scale)
        if not self.scale > 0:
            raise ValueError(f"The Huber scale must be > 0, got {self.scale!r}.")

    @property
    def value_unit(self):
        """``scale ** 2``: the loss's values scale with it (see :attr:`BaseLoss.value_unit`)."""
        return self.scale ** 2

    @property
    def coef_unit(self):
        """``scale``: the coefficients scale with it (see :attr:`BaseLoss.coef_unit`)."""
        return self.scale

    @property
    def threshold(self):
        """``epsilon * scale``: residuals beyond it count linearly."""
        return self.epsilon * self.scale

    def _pointwise(self, Z):
        return huber_rho(np.abs(self.Y[:, 0] - Z[:, 0]), self.threshold)

    def _dz(self, Z):
        t = self.threshold
        return -np.clip(self.Y - Z, -t, t)

    def _hess_diag(self, Z):
        return (np.abs(self.Y - Z) <= self.threshold).astype(float)

    def _hess_weights(self, Z):
        return self._hess_diag(Z)[:, :, None]

    def _parts(self, z):
        r = self.Y[:, 0] - z
        t = self.threshold
        inside = np.abs(r) <= t
        clipped = np.clip(r, -t, t)
        return np.where(inside, 0.5 * r * r, t * np.abs(r) - 0.5 * t * t), -clipped, inside.astype(float)

    def _flat_curvature(self, z):
        """``psi(r) / r = min(1, t / |r|)``: the curvatures of Huber's majoriser at ``z`` (IRLS's weights).

        ``rho`` is concave in ``r^2``, so the quadratic with these curvatures
        that touches it at ``r`` lies above it: the refit's step where no
        residual is inside the threshold (the Hessian is 0 there).
        """
        r = np.abs(self.Y[:, 0] - z)
        t = self.threshold
        return np.where(r > t, t / np.where(r > t, r, 1.0), 1.0)

    def _hz(self, Z, Zv):
        return self._hess_diag(Z) * Zv

    def initial_intercept(self):
        """The weighted median of ``y`` (a robust start)."""
        if not self.fit_intercept:
            return np.zeros(1)
        return np.array([weighted_median(self.Y[:, 0], self.sample_weight)])

    def noise_scale(self, value, k):
        """``scale ** 2``: the loss decrease that a spurious coefficient buys, times ``2 N``, is about it.

        (For Gaussian noise of standard deviation ``scale``, ``E[psi^2] / E[psi']``
        is ``1.1 scale^2`` at ``epsilon = 1.35``.)
        """
        return self.scale ** 2

    def residual_scale(self, W, b):
        """The noise's scale from the residuals of the model ``(W, b)``: :func:`inlier_scale`.

        The MAD reweighted (see :func:`inlier_scale`): with 10 % of gross
        outliers on one side, the MAD alone set the threshold 14 % too high,
        and their pull on the fit with it (changelog: F1 on
        :source:`benchmarks/compare_glm.py`'s ``huber`` designs).
        """
        r = self.Y[:, 0] - self.linear_predictor(W, b)[:, 0]
        return inlier_scale(r, self.sample_weight)

    def with_scale(self, scale):
        """The same loss (same data, shared design) with another scale."""
        other = copy.copy(self)
        other.scale = float(scale)
        other._candidate_cache = {}  # (refits of another loss)
        return other

    def with_residual_scale(self, W, b):
        """The loss with the scale re-estimated from the residuals of ``(W, b)`` (:meth:`residual_scale`)."""
        return self.with_scale(self.residual_scale(W, b))

    def minus_two_log_likelihood(self, W, b):
        """Not defined: raises :class:`NoLikelihoodError` (use cross-validation to choose ``k``)."""
        raise NoLikelihoodError("The Huber loss has no likelihood, so information criteria (SparsityIC) do not "
                                "apply to it: choose k by cross-validation with SparsityCV.")

    def quasi_minus_two_log_likelihood(self, W, b):
        """``2 N`` times the weighted mean of ``rho(r) / scale^2``: the fit term of ``k=None``.

        Minus twice the log-likelihood, up to a constant, of Huber's least
        favourable distribution (density proportional to
        ``exp(-rho(r) / scale^2)``) at the loss's fixed scale, or at
        :meth:`criterion_scale_floor` when that is larger (a fit exact to
        rounding): what the estimators' automatic choice of ``k`` compares
        across levels. Not a likelihood of the data (the scale is not
        estimated with it).
        """
        floor = self.criterion_scale_floor()
        if self.scale < floor:  # (a scale of rounding: the criterion at the floor, see criterion_scale_floor)
            return self.with_scale(floor).quasi_minus_two_log_likelihood(W, b)
        Z = self.linear_predictor(W, b)
        mean = float(self.sample_weight @ self._pointwise(Z)) / self.sw_sum
        return 2.0 * self.n_observations * mean / self.scale ** 2

    def criterion_scale_floor(self):
        """The least scale :meth:`quasi_minus_two_log_likelihood` judges at: ``sqrt(CRITERION_RSS_FLOOR)`` of y's.

        ``y``'s scale: :func:`robust_scale` of ``y`` (the null model's, the pilot). A residual scale below
        ``1e-6`` of it (``_policy.CRITERION_RSS_FLOOR = 1e-12`` in squares, as least squares floors each RSS at
        that share of the null model's) is a fit exact to rounding; judged at it, models exact to rounding were
        ranked by their rounding, so ``k=None`` chose among them at random. At the floor they tie and the
        penalty picks the smallest. Above it nothing changes.
        """
        null = self.__dict__.get("_null_scale")
        if null is None:  # (a weighted median of n values, once per loss and its copies)
            null = self._null_scale = robust_scale(self.Y[:, 0], self.sample_weight)
        return float(np.sqrt(_policy.CRITERION_RSS_FLOOR)) * null

    def restrict(self, support, dtype=np.float64):  # noqa: D102
        sub = super().restrict(support, dtype)
        sub.epsilon, sub.scale = self.epsilon, self.scale
        return sub
