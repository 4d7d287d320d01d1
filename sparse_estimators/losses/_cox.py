"""Cox proportional-hazards loss: the negative log partial likelihood, Breslow or Efron ties.

The loss is not a sum of pointwise terms: its value, gradient and curvature
are sums over risk sets. The samples are sorted by time once (at
construction); each evaluation is then a few cumulative sums over the sorted
order, O(n) per product with ``X``, as skglm's ``Cox`` datafit does.
"""

import copy
import math

import numpy as np

from .. import _policy
from ._base import BaseLoss
from ._design import LinearDesign, column_values, constant_columns, weighted_column_sums
from ._glm import _NonNegativeRefit
from ._numerics import LinearPredictorRangeError, cholesky_newton_solve, largest_eigenvalue, newton_minimise


def _reverse_cumsum(A):
    """``out[i] = sum_{j >= i} A[j]`` along the first axis."""
    return np.cumsum(A[::-1], axis=0)[::-1]


_UNDERFLOW = ("The Cox partial likelihood cannot be evaluated at these coefficients: the linear "
              "predictor X coef_ spans too wide a range (its exponentials underflow), as when the "
              "features order the event times (nearly) perfectly and the coefficients grow without "
              "bound (monotone likelihood). Standardise the features (StandardScaler) or increase "
              "alpha.")


def _finite_curvature(c):
    """``c``, the risk sets' curvature weights (``s(D_t) / S_t^2`` and such), or a clear ValueError.

    A risk-set sum ``S_t`` (relative to the largest ``exp(eta)``) whose square underflows:
    ``X w`` spans more than about 700, as where the features order the event times (nearly)
    perfectly and the coefficients grow without bound; the Newton solves would otherwise
    fail on the infinite Hessian with a LAPACK message.
    """
    if not math.isfinite(float(c.sum())):  # (an inf or NaN entry; 1.6 us against np.isfinite's 4 us at n = 300)
        raise LinearPredictorRangeError(_UNDERFLOW)
    return c


class CoxLoss(_NonNegativeRefit, BaseLoss):
    """Negative log partial likelihood of the Cox model, as a weighted mean, plus ``alpha/2 ||w||^2``.

    With ``eta = X w``, sample weights ``s``, events ``d_i`` and, for each
    distinct event time ``t``, its events ``D_t`` and risk set
    ``R_t = {j : time_j >= t}``, Breslow's handling of ties gives

    ``f(w) = (1 / sum s) sum_t [ -sum_{i in D_t} s_i eta_i + s(D_t) log sum_{j in R_t} s_j exp(eta_j) ]``

    and Efron's replaces the log term by
    ``(s(D_t) / m_t) sum_{l < m_t} log( S_t - (l / m_t) E_t )``, with ``m_t``
    the number of events at ``t``, ``S_t`` the risk-set sum and ``E_t``
    the same sum over ``D_t`` (weights enter as in R's ``survival::coxph`` and
    lifelines: the tied events' mean weight ``s(D_t) / m_t`` on each of the
    ``m_t`` terms; integer weights equal repeated rows for Breslow, not for
    Efron, where a repeated event row adds a term). The
    model has no intercept (the baseline hazard takes its place): ``b`` is
    a dummy variable, ``fit_intercept`` is False. The columns of ``X`` are
    centred implicitly at their weighted means (the partial likelihood does
    not change when a constant is added to ``eta``), so constant columns
    are exactly zero.

    The curvature is not pointwise: :meth:`hessian`, :meth:`hessp` and
    :meth:`feature_curvatures` are exact (risk-set covariances), and
    :attr:`curvature`, the scale the group search's blocks use, is the
    weighted fraction of events (the Hessian at ``w = 0`` for independent
    columns of unit variance and no censoring before the events).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    event : ndarray of bool of shape (n_samples,)
    time : ndarray of float of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,) or None
    ties : {'breslow', 'efron'}, default='breslow'
    alpha : float, default=0.0
        Strength of the l2 term on ``w``.
    """

    intercept_is_variable = True  # (a dummy: fit_intercept is False, the linear predictor has no b)
    #: the curvature is a sum over risk sets, not pointwise: the I-OBS solver uses :meth:`hessian_block`
    pointwise = False

    def __init__(self, X, event, time, sample_weight=None, ties="breslow", alpha=0.0):
        if ties not in ("breslow", "efron"):
            raise ValueError(f"The 'ties' parameter must be 'breslow' or 'efron', got {ties!r}.")
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        offset = weighted_column_sums(X, sw) / sw.sum()
        # (rows of weight 0 are absent: a column constant on the others is constant, exactly zero once centred)
        X_live = X if np.all(sw > 0) else X[sw > 0]
        constant = constant_columns(X_live)
        if constant is not None:
            offset[constant] = column_values(X_live, constant)
        super().__init__(LinearDesign(X, offset, constant), sw, 1, False, alpha)
        self.ties = ties
        self.event = np.asarray(event, dtype=bool)
        self.time = np.asarray(time, dtype=float)
        self._index()

    def _index(self):
        """The sorted structure: risk-set starts, event groups and Efron's slots (once per loss)."""
        sw, time = self.sample_weight, self.time
        dead = self.event & (sw > 0)  # (an event of weight 0 is no event: as if the row were absent)
        #: the rows of positive weight when some have weight 0 (else None): the shift of eta is their largest
        self.live = None if np.all(sw > 0) else sw > 0
        self.order = np.argsort(time, kind="stable")
        sorted_time = time[self.order]
        self.event_times = np.unique(time[dead])
        G = self.event_times.size
        self.risk_start = np.searchsorted(sorted_time, self.event_times, side="left")
        self.dead = np.flatnonzero(dead)
        self.dead_group = np.searchsorted(self.event_times, time[self.dead])
        self.d = dead.astype(float)
        self.group_of = np.full(time.size, -1)
        self.group_of[self.dead] = self.dead_group
        self.last_group = np.searchsorted(self.event_times, time, side="right") - 1  # groups with t_g <= t_i
        self.event_weight = np.bincount(self.dead_group, weights=sw[self.dead], minlength=G)
        counts = np.bincount(self.dead_group, minlength=G)
        if self.ties == "efron":  # slot l of group g: denominator S_g - (l / m_g) E_g, weight s(D_g) / m_g
            self.slot_group = np.repeat(np.arange(G), counts)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            self.slot_frac = (np.arange(self.slot_group.size) - starts[self.slot_group]) / counts[self.slot_group]
            self.slot_weight = (self.event_weight / counts)[self.slot_group]
        else:
            self.slot_group = np.arange(G)
            self.slot_frac = np.zeros(G)
            self.slot_weight = self.event_weight
        #: the last (smallest) risk-set sum, relative to the largest ``exp(eta)``, below which ``S`` may have
        #: underflowed or ``slot_weight / S_slot`` overflow (Efron's ``S_slot >= S / m``): :meth:`_risk` then
        #: raises instead of giving a value -inf and a NaN gradient
        ties = float(counts.max()) if G and self.ties == "efron" else 1.0
        self.slot_floor = 1e-300 * float(self.slot_weight.max()) * ties if G else 0.0
        #: the weighted fraction of events: the curvature scale (see the class docstring)
        self.curvature = float(self.event_weight.sum()) / self.sw_sum

    # -- the partial likelihood in the linear predictor -------------------------------------------------------
    def _risk(self, eta):
        """``(we, S_slot, ci, B)`` at ``eta``: weighted relative risks, slot denominators and gradient factors."""
        G = self.event_times.size
        eta = np.asarray(eta, dtype=float)
        if self.live is None:
            shift = float(eta.max()) if eta.size else 0.0  # (the loss is invariant to a shift of eta: no overflow)
            we = self.sample_weight * np.exp(eta - shift)
        else:  # (a row of weight 0 is absent: its eta, however large, neither sets the shift nor overflows)
            shift = float(eta[self.live].max())
            we = self.sample_weight * np.exp(np.minimum(eta - shift, 0.0))
        S = _reverse_cumsum(we[self.order])[self.risk_start]
        E = np.bincount(self.dead_group, weights=we[self.dead], minlength=G)
        if G and not S[-1] > self.slot_floor:  # (the smallest risk set: else the value is -inf, the gradient NaN)
            raise LinearPredictorRangeError(_UNDERFLOW)
        S_slot = S[self.slot_group] - self.slot_frac * E[self.slot_group]
        A = np.bincount(self.slot_group, weights=self.slot_weight / S_slot, minlength=G)
        B = np.bincount(self.slot_group, weights=self.slot_weight * self.slot_frac / S_slot, minlength=G)
        cumA = np.concatenate([[0.0], np.cumsum(A)])[self.last_group + 1]
        ci = cumA - self.d * B[self.group_of]
        return we, S_slot, ci, shift

    def _eta_value(self, eta, risk=None):
        we, S_slot, ci, shift = self._risk(eta) if risk is None else risk
        fit = -float(self.sample_weight @ (self.d * eta)) + float(self.slot_weight @ (np.log(S_slot) + shift))
        return fit / self.sw_sum

    def _eta_gradient(self, eta, risk=None):
        """Gradient of the (mean) loss in ``eta``, shape (n,)."""
        we, _, ci, _ = self._risk(eta) if risk is None else risk
        return (we * ci - self.sample_weight * self.d) / self.sw_sum

    def _eta_hessp(self, eta, v, risk=None):
        """Hessian of the loss in ``eta`` applied to ``v`` (n,)."""
        G = self.event_times.size
        we, S_slot, ci, _ = self._risk(eta) if risk is None else risk
        wv = we * v
        P = _reverse_cumsum(wv[self.order])[self.risk_start]
        Q = np.bincount(self.dead_group, weights=wv[self.dead], minlength=G)
        dS = P[self.slot_group] - self.slot_frac * Q[self.slot_group]
        c = _finite_curvature(self.slot_weight * dS / S_slot ** 2)
        dA = np.bincount(self.slot_group, weights=c, minlength=G)
        dB = np.bincount(self.slot_group, weights=c * self.slot_frac, minlength=G)
        cum_dA = np.concatenate([[0.0], np.cumsum(dA)])[self.last_group + 1]
        dci = cum_dA - self.d * np.concatenate([dB, [0.0]])[self.group_of]
        return (wv * ci - we * dci) / self.sw_sum

    def _eta_hessian(self, risk):
        """The Hessian of the loss in ``eta`` as a dense ``n x n`` array, in ``O(n^2)`` (no matrix product).

        ``diag(s e^eta c) - sum_g a_g u_g u_g^T`` (plus Efron's terms), with
        ``u_g`` the risk set's weighted relative risks: entry ``(i, j)`` of
        the sum is ``s_i e^eta_i s_j e^eta_j`` times the cumulative sum of
        ``a_g`` over the groups at risk for both, those up to the earlier of
        their last groups. The I-OBS Newton solves for ``n < p``
        (``solvers/_iobs_curvature.py``'s Woodbury route) use it.
        """
        G = self.event_times.size
        we, S_slot, ci, _ = risk
        c = _finite_curvature(self.slot_weight / S_slot ** 2)
        cum_a2 = np.concatenate([[0.0], np.cumsum(np.bincount(self.slot_group, weights=c, minlength=G))])
        last = self.last_group + 1  # (0: at risk in no group)
        H = -cum_a2[np.minimum(last[:, None], last[None, :])]
        if self.ties == "efron":
            b2 = np.concatenate([np.bincount(self.slot_group, weights=c * self.slot_frac, minlength=G), [0.0]])
            c2 = np.concatenate([np.bincount(self.slot_group, weights=c * self.slot_frac ** 2, minlength=G), [0.0]])
            g = self.group_of  # (-1: no event, the zero appended above)
            # cross_ij = b2 at j's group if j died there and i was at risk then; c2 where i, j died together
            cross = np.where((g[None, :] >= 0) & (g[None, :] <= self.last_group[:, None]), b2[g][None, :], 0.0)
            H += cross + cross.T - np.where((g[:, None] == g[None, :]) & (g[:, None] >= 0), c2[g][:, None], 0.0)
        H *= we[:, None] * we[None, :]
        H[np.diag_indices_from(H)] += we * ci
        return H / self.sw_sum

    def _block_hessian(self, A, risk):
        """``A^T nabla^2_eta f A`` for the dense columns ``A`` (n x q) at the risk quantities ``risk``."""
        G = self.event_times.size
        we, S_slot, ci, _ = risk
        WA = we[:, None] * A
        H = A.T @ (WA * ci[:, None])
        U = _reverse_cumsum(WA[self.order])[self.risk_start]  # (G, q): risk-set sums of s e^eta x
        c = _finite_curvature(self.slot_weight / S_slot ** 2)
        a2 = np.bincount(self.slot_group, weights=c, minlength=G)
        H -= U.T @ (U * a2[:, None])
        if self.ties == "efron":
            V = np.zeros((G, A.shape[1]))
            np.add.at(V, self.dead_group, WA[self.dead])
            b2 = np.bincount(self.slot_group, weights=c * self.slot_frac, minlength=G)
            c2 = np.bincount(self.slot_group, weights=c * self.slot_frac ** 2, minlength=G)
            cross = U.T @ (V * b2[:, None])
            H += cross + cross.T - V.T @ (V * c2[:, None])
        return 0.5 * (H + H.T) / self.sw_sum

    def _columns(self, features):
        """The centred columns ``features`` of ``X`` as a dense float64 array (n, len(features))."""
        return self.design.columns(np.asarray(features, dtype=np.intp)).dense()

    # -- the loss contract -------------------------------------------------------------------------------------
    def value_from_z(self, Z, W):  # noqa: D102 - documented in BaseLoss
        return self._eta_value(Z[:, 0]) + 0.5 * self.alpha * float(np.vdot(W, W))

    def gradient_from_z(self, Z, W):  # noqa: D102 - documented in BaseLoss
        g = self._eta_gradient(Z[:, 0])
        return self.design.rmatvec(g[:, None]) + self.alpha * W, np.zeros(1)

    def hessp(self, W, b, V, c):  # noqa: D102 - documented in BaseLoss
        eta = self.linear_predictor(W, b)[:, 0]
        hv = self._eta_hessp(eta, self.design.matvec(V)[:, 0])
        return self.design.rmatvec(hv[:, None]) + self.alpha * V, np.zeros(1)

    def hessian(self, W, b):
        """Dense Hessian in ``W`` (p x p; no intercept variable), the l2 term included."""
        return self.hessian_block(self.linear_predictor(W, b), np.arange(self.n_features))

    def hessian_block(self, Z, features):
        """The Hessian's block on ``features`` at the linear predictor ``Z`` (l2 term included).

        The I-OBS solver's restricted systems: the iterate may have
        coefficients outside ``features``, so the block is taken at the full
        linear predictor, not at a restricted loss's.
        """
        H = self._block_hessian(self._columns(features), self._risk(Z[:, 0]))
        H[np.diag_indices_from(H)] += self.alpha
        return H

    def feature_curvatures(self, Z, features):
        """The Hessian's diagonal on ``features`` at ``Z``, shape (len(features), 1), in blocks of columns."""
        features = np.asarray(features, dtype=np.intp)
        risk = self._risk(Z[:, 0])
        G = self.event_times.size
        we, S_slot, ci, _ = risk
        c = self.slot_weight / S_slot ** 2
        a2 = np.bincount(self.slot_group, weights=c, minlength=G)
        if self.ties == "efron":
            b2 = np.bincount(self.slot_group, weights=c * self.slot_frac, minlength=G)
            c2 = np.bincount(self.slot_group, weights=c * self.slot_frac ** 2, minlength=G)
        out = np.empty(features.size)
        for start in range(0, features.size, _policy.COX_BLOCK):
            A = self._columns(features[start:start + _policy.COX_BLOCK])
            WA = we[:, None] * A
            diag = np.einsum("ij,ij->j", A, WA * ci[:, None])
            U = _reverse_cumsum(WA[self.order])[self.risk_start]
            diag -= a2 @ (U * U)
            if self.ties == "efron":
                V = np.zeros((G, A.shape[1]))
                np.add.at(V, self.dead_group, WA[self.dead])
                diag += 2 * (b2 @ (U * V)) - c2 @ (V * V)
            out[start:start + _policy.COX_BLOCK] = diag / self.sw_sum
        return np.maximum(out, 0.0)[:, None] + self.alpha

    def coordinate_curvatures(self):
        """The Hessian's diagonal at ``w = 0`` (plus ``alpha``), cached: the splicing search's curvature scale."""
        if getattr(self, "_coordinate_curvatures", None) is None:
            Z0 = np.zeros((self.n_samples, 1))
            self._coordinate_curvatures = self.feature_curvatures(Z0, np.arange(self.n_features))[:, 0]
        return self._coordinate_curvatures

    def lipschitz(self):
        """Largest eigenvalue of the Hessian at ``w = 0`` plus ``alpha`` (cached; Lanczos on :meth:`_eta_hessp`).

        Not a global bound (the curvature grows where a few samples dominate
        a risk set): a scale for the first step, which the adaptive step
        size corrects along the fit, as for the Poisson loss.
        """
        if self._lipschitz is None:
            eta0 = np.zeros(self.n_samples)
            risk = self._risk(eta0)

            def apply(v):
                hv = self._eta_hessp(eta0, self.design.matvec(v[:, None])[:, 0], risk)
                return self.design.rmatvec(hv[:, None])[:, 0]

            self._lipschitz = largest_eigenvalue(apply, self.n_features) + self.alpha
        return self._lipschitz

    def minus_two_log_likelihood(self, W, b):
        """Minus twice the log partial likelihood, over :attr:`n_observations` observations (the l2 term excluded)."""
        return 2.0 * self.n_observations * self._eta_value(self.linear_predictor(W, b)[:, 0])

    def restrict(self, support, dtype=np.float64):  # noqa: D102 - documented in BaseLoss
        sub = copy.copy(self)
        sub.design = self.design.columns(np.asarray(support), dtype)
        sub.n_features = sub.design.shape[1]
        sub._lipschitz = sub._coordinate_curvatures = sub._coordinate_lipschitz = None
        return sub

    def refit(self, support, W, b, *, max_iter=100, precise=True):
        """Minimise the loss over the coefficients in ``support`` (see :meth:`BaseLoss.refit`).

        Newton's method on the support's centred columns, copied once
        (``n x k``), with Cholesky solves (minimum norm when the columns are
        collinear).
        """
        if self.positive:
            return super().refit(support, W, b, max_iter=max_iter, precise=precise)
        support = np.asarray(support, dtype=np.intp)
        W_full = np.zeros_like(W)
        if not support.size:
            return W_full, np.zeros(1)
        A = self._columns(support)
        last = {}

        def fun(theta):
            eta = A @ theta
            try:
                risk = self._risk(eta)
            except LinearPredictorRangeError:  # (a trial step too long: Newton's line search halves it)
                return math.inf, np.full(theta.shape, np.nan)
            last.update(theta=theta, risk=risk)
            f = self._eta_value(eta, risk) + 0.5 * self.alpha * float(theta @ theta)
            return f, A.T @ self._eta_gradient(eta, risk) + self.alpha * theta

        def hessian(theta):
            risk = last["risk"] if np.array_equal(theta, last.get("theta")) else self._risk(A @ theta)
            H = self._block_hessian(A, risk)
            H[np.diag_indices_from(H)] += self.alpha
            return H

        theta = newton_minimise(fun, hessian, np.asarray(W[support, 0], dtype=float), max_iter=max_iter,
                                solve=cholesky_newton_solve, precise=precise)
        W_full[support, 0] = theta
        return W_full, np.zeros(1)


def breslow_cumulative_hazard(eta, event, time, sample_weight=None, shift=0.0):
    """Breslow's estimate of the baseline cumulative hazard, at every distinct time of ``time``.

    ``H0(t) = sum_{t_g <= t} s(D_g) / sum_{j : time_j >= t_g} s_j exp(eta_j)``
    over the distinct event times ``t_g`` (scikit-survival's
    ``BreslowEstimator``, weighted).

    ``shift``: the estimate for the risk scores ``eta - shift`` instead,
    ``exp(shift) H0``, whose exponentials stay in range where ``eta`` does
    not (``shift = max(eta)`` for ``X coef_`` beyond about 709, where
    ``exp(eta)`` overflows: uncentred features); the cumulative hazard of a
    sample is ``exp(eta_x - shift)`` times it.

    Returns
    -------
    times : ndarray
        The distinct times (events and censorings) of the rows of positive
        weight, ascending.
    cumulative_hazard : ndarray
        ``exp(shift) H0`` at each of them.
    """
    sw = np.ones(time.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if not np.all(sw > 0):  # (a row of weight 0 is absent: its time is no step of the functions)
        keep = sw > 0
        eta, event, time, sw = np.asarray(eta)[keep], np.asarray(event)[keep], np.asarray(time)[keep], sw[keep]
    order = np.argsort(time, kind="stable")
    times = np.unique(time)
    risk = _reverse_cumsum((sw * np.exp(eta - shift if shift else eta))[order])
    start = np.searchsorted(time[order], times, side="left")
    at = np.searchsorted(times, time)
    deaths = np.bincount(at, weights=sw * event, minlength=times.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        increments = np.where(deaths > 0, deaths / risk[start], 0.0)
    return times, np.cumsum(increments)

