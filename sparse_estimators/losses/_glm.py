"""Poisson and Gamma losses with the log link (counts and positive skewed amounts)."""

import math

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.special import digamma, gammaln, xlogy

from .. import _policy
from ._logistic import _GLMLoss
from ._numerics import cholesky_newton_solve
from ._pointwise_newton import _PointwiseNewtonRefit

#: the smallest positive normal float64 (np.finfo's lookup costs microseconds at every splicing round)
_TINY = float(np.finfo(float).tiny)


def _check_target(y, sample_weight, *, positive, family):
    """``y`` as a float column; a ValueError naming ``y`` for values outside the family's support."""
    y = np.asarray(y, dtype=float)
    Y = y.reshape(-1, 1) if y.ndim == 1 else y
    if Y.shape[1] != 1:
        raise ValueError(f"The {family} loss takes a single target; got y of shape {y.shape}.")
    # (the reductions without np.all / np.any's Python wrappers: a small fit's set-up calls them once each)
    if not np.logical_and.reduce(np.isfinite(Y), axis=None):
        raise ValueError(f"y contains NaN or infinity; the {family} loss needs finite targets.")
    if positive and np.logical_or.reduce(Y <= 0, axis=None):
        raise ValueError(f"Some value(s) of y are not strictly positive, which the {family} loss (log link) "
                         f"does not allow: its targets are positive amounts.")
    if not positive and np.logical_or.reduce(Y < 0, axis=None):
        raise ValueError(f"Some value(s) of y are negative, which the {family} loss does not allow: "
                         f"its targets are counts or rates (y >= 0).")
    sw = np.ones(Y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if not float(sw @ Y[:, 0]) > 0:
        raise ValueError(zero_sum_message(family, bool(np.logical_or.reduce(Y[:, 0] > 0))))
    return Y


def zero_sum_message(family, weighted):
    """The error for a ``y`` whose weighted sum is 0; ``weighted``: ``y`` may be positive on rows of weight 0.

    (Before, "got all zeros" whatever ``y``: wrong where its positive values have weight 0.)
    """
    got = "y is 0 on every row of positive sample weight" if weighted else "got all zeros"
    return (f"The weighted sum of y must be positive for the {family} loss (log link); {got}: the null "
            f"model's mean would be 0 (an intercept of minus infinity).")


def nonnegative_refit(loss, support, W, b):
    """Minimise a GLM loss over the coefficients in ``support`` constrained to ``W >= 0`` (``positive=True``).

    L-BFGS-B on the restricted loss (the intercept unconstrained), from the
    positive part of ``W``, in units of the columns' spreads; features whose
    coefficient ends at 0 leave the support, as in the least-squares NNLS
    refit.
    """
    support = np.asarray(support)
    W_full = np.zeros_like(W)
    b = np.asarray(b, dtype=float)
    if not support.size:
        return W_full, b
    sub = loss.restrict(support)
    k, has_b = support.size, bool(loss.fit_intercept)
    # in the loss's units (1, Huber's scale): L-BFGS-B's gradient tolerance is absolute, and Huber's fits of c y
    # must stop where those of y do; each coefficient in units of its column's spread (the weighted standard
    # deviation): in the user's units a column of scale 1e4 (curvature 1e8 times the others') stopped L-BFGS-B
    # far from the minimum (coefficients of 4e-9 for 0.32), and its first trial step (norm 1) left the range of
    # the Cox loss's exponentials
    value_unit = loss.value_unit
    spread = np.sqrt(sub.design.column_moments(sub.sample_weight / sub.sw_sum))
    unit = loss.coef_unit * np.concatenate([1.0 / np.where(spread > 0, spread, 1.0), np.ones(int(has_b))])

    def fun(u):
        theta = u * unit
        w, c = theta[:k, None], (theta[k:] if has_b else b)
        f, gW, gb = sub.value_and_gradient(w, c)
        return f / value_unit, (np.concatenate([gW[:, 0], gb]) if has_b else gW[:, 0]) * unit / value_unit

    theta = np.concatenate([np.maximum(W[support, 0], 0.0), b]) if has_b else np.maximum(W[support, 0], 0.0)
    bounds = [(0.0, None)] * k + [(None, None)] * int(has_b)
    res = minimize(fun, theta / unit, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 1000, "ftol": 1e-15, "gtol": 1e-10})
    x = res.x * unit
    W_full[support, 0] = np.maximum(x[:k], 0.0)
    return W_full, (x[k:].copy() if has_b else b)


class _NonNegativeRefit:
    """``positive=True`` (the regressors'): refits on a support are :func:`nonnegative_refit`."""

    def refit(self, support, W, b, *, max_iter=100, precise=True):  # noqa: D102 - see BaseLoss.refit
        if not self.positive:
            return super().refit(support, W, b, max_iter=max_iter, precise=precise)
        return nonnegative_refit(self, support, W, b)

    def _refit_evaluated(self, support, W, b):
        if not self.positive:
            return super()._refit_evaluated(support, W, b)
        W, b = nonnegative_refit(self, support, W, b)
        Z = self.linear_predictor(W, b)
        return W, b, self.value_from_z(Z, W), Z


class _LogLinkLoss(_NonNegativeRefit, _PointwiseNewtonRefit, _GLMLoss):
    """A GLM loss with the log link: ``mu = exp(z)``, the model's mean (``predict``)."""

    _solve_newton = staticmethod(cholesky_newton_solve)
    #: ``(Z, a)``: the last linear predictor :meth:`_pointwise` read (never written to after: the losses' and
    #: solvers' linear predictors are new arrays) and its exp-term (Poisson's means, Gamma's ``y / mu``), which
    #: :meth:`_dz` at the same ``Z`` reuses: the iterations take the gradient where the last step was valued
    _z_memo = None
    screens_candidates = True  # (the splicing search's candidates screened by their quadratic model)
    #: I-OBS's dense Hessian from a centred copy of X (solvers/_iobs_curvature.py, _GLMCache.centred_columns)
    iobs_centred_hessian = True

    def __init__(self, X, y, sample_weight=None, fit_intercept=True, alpha=0.0):
        Y = _check_target(y, sample_weight, positive=self._positive_target, family=self._family)
        super().__init__(X, Y, sample_weight, fit_intercept, alpha)
        #: the weighted mean of y: the null model's mean, ``exp`` of the initial intercept
        self.null_mean = float(self.sample_weight @ self.Y[:, 0]) / self.sw_sum

    def initial_intercept(self):  # noqa: D102 - the null model: mu = mean(y)
        if not self.fit_intercept:
            return np.zeros(1)
        return np.array([np.log(self.null_mean)])

    def intercept_origin(self):
        """The null model's intercept ``log(mean y)``: ``b`` minus it does not depend on ``y``'s unit.

        (Measured from 0, ``b``'s size is ``log`` of ``y``'s unit, and the relative stopping test of ``c y``
        stopped elsewhere than that of ``y``; see :meth:`BaseLoss.intercept_origin`.)
        """
        return self.initial_intercept() if self.fit_intercept else None

    null_fits_constant = True

    def null_intercept(self, value):
        """``log(value)``: the log link's intercept of the null model of mean ``value``."""
        return np.log(np.asarray(value, dtype=float))

    def _hess_weights(self, Z):
        return self._hess_diag(Z)[:, :, None]

    def _hz(self, Z, Zv):
        return self._hess_diag(Z) * Zv

    def restrict(self, support, dtype=np.float64):  # noqa: D102
        sub = super().restrict(support, dtype)
        sub.null_mean = self.null_mean
        sub.curvature = self.curvature
        for cached in ("_value_unit", "_saturated"):  # (functions of y and the weights, which sub shares)
            if cached in self.__dict__:
                sub.__dict__[cached] = self.__dict__[cached]
        return sub

    def _saturated_value(self):
        """The loss at the saturated model ``mu = y``: the weighted mean of ``_saturated_pointwise`` (computed once)."""
        saturated = self.__dict__.get("_saturated")
        if saturated is None:  # (the splicing search asks at every round)
            terms = self._saturated_pointwise(self.Y[:, 0])
            saturated = self._saturated = float(self.sample_weight @ terms) / self.sw_sum
        return saturated

    def value_origin(self):
        """The saturated value (:meth:`BaseLoss.value_origin`): ``f`` minus it is half the mean deviance."""
        return self._saturated_value()

    def noise_scale(self, value, k):
        """The dispersion estimated from the loss ``value`` of a fit with ``k`` features.

        The mean deviance ``2 (value - value_saturated)`` over ``N - k - 1``
        degrees of freedom (``N`` observations): twice the number of
        observations times the loss decrease from ``c`` spurious coefficients
        is about ``c`` times the dispersion (see :meth:`BaseLoss.noise_scale`).
        """
        saturated = self._saturated_value()
        N = self.n_observations
        dof = max(N - k - int(self.fit_intercept), 1.0)
        return max(2.0 * (value - saturated) * N / dof, _TINY)


class PoissonLoss(_LogLinkLoss):
    """Poisson loss with the log link, for counts (``y >= 0``).

    ``sum_i s_i (exp(z_i) - y_i z_i) / sum_i s_i + alpha/2 ||w||^2`` with
    ``z = X w + b``: the mean negative log-likelihood of ``y_i ~ Poisson(exp(z_i))``
    up to a constant (half the mean Poisson deviance plus a constant). The
    intercept is a free variable, never thresholded.

    The pointwise curvature ``exp(z)`` is not bounded: :attr:`curvature` is
    its value at the null model (the weighted mean of ``y``), a scale for the
    smoothness estimates; the adaptive step size corrects it along the fit.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values >= 0 with a positive weighted sum
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    alpha : float, default=0.0
        Strength of the l2 term on ``w`` (not on the intercept).

    Raises
    ------
    ValueError
        If ``y`` has a negative value or a zero weighted sum.
    """

    _family = "Poisson"
    #: I-OBS (any n) takes block-diagonal Newton steps ('screened' route; paired F1 in doc/changelog.rst:
    #: not Gamma, which lost F1 with them on inverse-link data)
    iobs_screened = True
    _positive_target = False

    def __init__(self, X, y, sample_weight=None, fit_intercept=True, alpha=0.0):
        super().__init__(X, y, sample_weight, fit_intercept, alpha)
        self.curvature = self.null_mean

    @property
    def value_unit(self):
        """The null model's Pearson dispersion ``sum_i s_i (y_i - m)^2 / (m sum_i s_i)``, ``m`` y's weighted mean.

        (1 for a constant ``y``.) The values of ``c y`` are ``c`` times those
        of ``y`` up to a constant, its coefficients the same (the intercept
        plus ``log c``): abess's exchange threshold, a loss decrease for a
        dispersion of 1 (about 1 for counts; ``c`` for ``c`` times counts,
        e.g. rates), and the refits' stopping rules count in this unit, and
        :meth:`noise_scale` (the splicing gates) is the dispersion too, so
        that the fits of ``c y`` are those of ``y``. Chosen over ``m`` (y's
        unit, but far from the dispersion for counts of large mean) and the
        null dispersion for the gates as well, which changed more count fits
        (measurements in ``doc/changelog.rst``).
        """
        unit = self.__dict__.get("_value_unit")
        if unit is None:
            y, m = self.Y[:, 0], self.null_mean
            unit = float(self.sample_weight @ ((y - m) * (y - m))) / (self.sw_sum * m)
            unit = self._value_unit = unit if unit > 0 else 1.0
        return unit

    @staticmethod
    def _saturated_pointwise(y):
        """The pointwise loss at ``mu = y``: ``y - y log(y)``."""
        return y - xlogy(y, y)

    def _pointwise(self, Z):
        z, y = Z[:, 0], self.Y[:, 0]
        mu = np.exp(z)
        self._z_memo = (Z, mu)
        return mu - y * z

    def _dz(self, Z):
        memo = self._z_memo
        if memo is not None and memo[0] is Z:  # (the value's means at this very Z: the same exp, not again)
            return memo[1][:, None] - self.Y
        return np.exp(Z) - self.Y

    def _hess_diag(self, Z):
        return np.exp(Z)

    def _parts(self, z):
        mu = np.exp(z)
        y = self.Y[:, 0]
        return mu - y * z, mu - y, mu

    def deviance(self, W, b):
        """Weighted mean Poisson deviance of the model, ``2 mean(y log(y / mu) - y + mu)``."""
        mu = np.exp(self.linear_predictor(W, b)[:, 0])
        y = self.Y[:, 0]
        return 2.0 * float(self.sample_weight @ (xlogy(y, y / mu) - y + mu)) / self.sw_sum

    def minus_two_log_likelihood(self, W, b):
        """``2 N`` times the weighted mean of ``mu - y log(mu) + log(y!)`` (Poisson; the l2 term excluded)."""
        Z = self.linear_predictor(W, b)
        y = self.Y[:, 0]
        terms = self._pointwise(Z) + gammaln(y + 1.0)
        return self._twice_weighted_total(terms)

    def separated_features(self, W, b):
        """The features of ``W``'s support whose coefficients diverge: zero counts separated, no finite MLE.

        The Poisson likelihood has no maximum (Santos Silva and Tenreyro,
        Economics Letters, 2010; Correia, Guimaraes and Zylkin,
        https://arxiv.org/abs/1903.01633) when a direction ``d`` of the
        coefficients (with the intercept) leaves the linear predictor
        unchanged on every row of positive count and lowers it on some rows
        of zero count (a category, or a feature's range, whose counts are all
        0): the fit runs along ``d`` until those rows' means are numerically
        0. Found here from the fit itself: some zero counts have a fitted
        mean below ``_policy.POISSON_VANISHING_MEAN`` of the null model's
        (else nothing more is computed), the rows of positive count leave a
        direction of the support undetermined (their columns, with the ones
        column, are rank deficient) and the fit's component in those
        directions alone lowers such a row's mean by more than that factor.
        Rows of weight 0 count for neither. Returns the indices (ascending)
        of the features carrying that component; empty if none.
        """
        none = np.empty(0, dtype=np.intp)
        support = W[:, 0].nonzero()[0]
        if not support.size:  # (the null model: the MLE exists, the weighted sum of y being positive)
            return none
        log_share = math.log(_policy.POISSON_VANISHING_MEAN)
        Z = self.linear_predictor(W, b, support)[:, 0]
        cut = math.log(self.null_mean) + log_share
        if not np.minimum.reduce(Z) < cut:  # (an ordinary fit's only cost: its linear predictor, 10 us at n = 200)
            return none
        y, live = self.Y[:, 0], self.sample_weight > 0
        vanishing = live & (y == 0) & (Z < cut)
        if not vanishing.any():
            return none
        A = self.design.columns(support).dense()
        theta = W[support, 0]
        if self.fit_intercept:
            A, theta = np.c_[A, np.ones(A.shape[0])], np.r_[theta, b]
        scale = np.sqrt(np.einsum("ij,ij->j", A[live], A[live]))
        scale[scale == 0] = 1.0
        A, theta = A / scale, theta * scale
        positive = live & (y > 0)
        _, sv, Vt = np.linalg.svd(A[positive], full_matrices=True)
        rank = int(np.count_nonzero(sv > sv[0] * max(A.shape) * np.finfo(float).eps)) if sv.size else 0
        N = Vt[rank:].T  # (the directions the positive counts leave undetermined)
        if not N.size:
            return none
        undetermined = N @ (N.T @ theta)
        if not float(np.min(A[vanishing] @ undetermined)) < log_share:
            return none
        coef = np.abs(undetermined[:support.size])
        return support[coef > np.sqrt(np.finfo(float).eps) * np.abs(undetermined).max()]


class GammaLoss(_LogLinkLoss):
    """Gamma loss with the log link, for positive skewed amounts (``y > 0``).

    ``sum_i s_i (y_i exp(-z_i) + z_i) / sum_i s_i + alpha/2 ||w||^2`` with
    ``z = X w + b``: the mean negative log-likelihood of a Gamma model of mean
    ``exp(z_i)`` divided by its shape (half the mean Gamma deviance plus a
    constant). The intercept is a free variable, never thresholded.

    The pointwise curvature ``y exp(-z)`` is 1 on average at the null model
    (:attr:`curvature`); the adaptive step size corrects it along the fit.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values > 0
    sample_weight : ndarray of shape (n_samples,) or None
    fit_intercept : bool, default=True
    alpha : float, default=0.0
        Strength of the l2 term on ``w`` (not on the intercept).

    Raises
    ------
    ValueError
        If ``y`` has a value that is not strictly positive.
    """

    _family = "Gamma"
    _positive_target = True
    #: I-OBS ('fisher' route): its expected Hessian is constant (the pointwise weights' mean y / mu is 1)
    iobs_fisher = True
    curvature = 1.0

    def _pointwise(self, Z):
        z, y = Z[:, 0], self.Y[:, 0]
        ratio = y * np.exp(-z)
        self._z_memo = (Z, ratio)
        return ratio + z

    def _dz(self, Z):
        memo = self._z_memo
        if memo is not None and memo[0] is Z:  # (the value's ratios y / mu at this very Z: not again)
            return 1.0 - memo[1][:, None]
        return 1.0 - self.Y * np.exp(-Z)

    def _hess_diag(self, Z):
        return self.Y * np.exp(-Z)

    def _parts(self, z):
        ratio = self.Y[:, 0] * np.exp(-z)
        return ratio + z, 1.0 - ratio, ratio

    def _mean_unit_deviance(self, Z):
        """Weighted mean Gamma deviance ``2 mean((y - mu) / mu - log(y / mu))`` at the linear predictor ``Z``."""
        z, y = Z[:, 0], self.Y[:, 0]
        ratio = y * np.exp(-z)
        return 2.0 * float(self.sample_weight @ (ratio - 1.0 - np.log(ratio))) / self.sw_sum

    def deviance(self, W, b):
        """Weighted mean Gamma deviance of the model."""
        return self._mean_unit_deviance(self.linear_predictor(W, b))

    @staticmethod
    def _saturated_pointwise(y):
        """The pointwise loss at ``mu = y``: ``1 + log(y)``."""
        return 1.0 + np.log(y)

    def minus_two_log_likelihood(self, W, b):
        """Minus twice the Gamma log-likelihood with the shape (inverse dispersion) estimated by maximum likelihood.

        With mean ``mu = exp(z)`` and shape ``nu``, ``-log f(y) = nu (y / mu +
        log mu) - nu log nu - (nu - 1) log y + log Gamma(nu)``; the profile
        maximum over ``nu`` solves ``log nu - digamma(nu) = D / 2``, ``D`` the
        weighted mean deviance. Summed over :attr:`n_observations`
        observations (weights rescaled to that count).

        The mean deviance is floored at ``_policy.CRITERION_RSS_FLOOR`` of
        the null model's (as least squares' residual sum of squares, see
        :func:`~sparse_estimators.losses._squared.gaussian_fit_term`): below,
        the fit is exact to rounding, the estimated dispersion goes to 0 and
        the value would rank exact models by their rounding; floored, they
        tie (the same value, from the saturated model's terms) and the
        penalty picks the smallest. Above the floor the value is unchanged.
        A perfect fit of a constant ``y`` gives ``-inf``.
        """
        Z = self.linear_predictor(W, b)
        half_dev = 0.5 * self._mean_unit_deviance(Z)
        floor = _policy.CRITERION_RSS_FLOOR * self._null_half_deviance()
        if not half_dev > floor:
            return self._floored_minus_two_log_likelihood(floor)
        nu = _gamma_shape(half_dev)
        y = self.Y[:, 0]
        terms = nu * (self._pointwise(Z)) - nu * np.log(nu) - (nu - 1.0) * np.log(y) + gammaln(nu)
        return self._twice_weighted_total(terms)

    def _null_half_deviance(self):
        """Half the null model's mean deviance, ``log(mean y) - mean log(y)`` (weighted)."""
        return max(float(np.log(self.null_mean)) + 1.0 - self._saturated_value(), 0.0)

    def _floored_minus_two_log_likelihood(self, half_dev):
        """:meth:`minus_two_log_likelihood` of any model whose half mean deviance is ``half_dev`` (``-inf`` at 0).

        The mean of the pointwise loss is ``half_dev`` plus the saturated
        model's ``mean(1 + log y)``: the value depends on the model through
        ``half_dev`` alone, so the models at the floor tie exactly.
        """
        if not half_dev > 0:
            return -np.inf
        nu = _gamma_shape(half_dev)
        mean_log_y = self._saturated_value() - 1.0
        per_observation = nu * half_dev + nu - nu * np.log(nu) + mean_log_y + gammaln(nu)
        return 2.0 * self.n_observations * float(per_observation)


def _gamma_shape(half_deviance):
    """The shape ``nu`` solving ``log(nu) - digamma(nu) = half_deviance`` (> 0), the Gamma MLE of the shape.

    ``log(nu) - digamma(nu)`` decreases from infinity to 0 (about
    ``1 / (2 nu)`` for large ``nu``, ``1 / nu`` for small).
    """
    def equation(log_nu):
        nu = np.exp(log_nu)
        return np.log(nu) - digamma(nu) - half_deviance

    guess = np.log(1.0 / (2.0 * half_deviance))
    low, high = guess - 5.0, guess + 5.0
    while equation(low) < 0:
        low -= 5.0
    while equation(high) > 0:
        high += 5.0
    return float(np.exp(brentq(equation, low, high, xtol=1e-14, rtol=1e-14)))
