"""Common machinery of the losses: the loss contract (values, gradients, smoothness, restriction, refits)."""

import inspect
import math

import numpy as np

from ._design import constant_target
from ._numerics import collinear_count, largest_eigenvalue, min_norm_solve, newton_minimise


class BaseLoss:
    """A smooth loss of a linear model ``Z = X W + b``, as a weighted mean.

    ``W`` always has shape (n_features, n_outputs): one output for least
    squares and binary logistic, ``K`` columns for multinomial, and thresholding
    acts on its rows. ``b`` has shape (n_outputs,).

    Subclasses set ``intercept_is_variable``: True when ``b`` is optimised
    alongside ``W`` (logistic, multinomial; never thresholded), False when the
    intercept is eliminated by centering (least squares, then ``gb`` is
    ``None`` and :meth:`intercept` recovers it).

    Solvers use the two-stage API (:meth:`linear_predictor` then
    :meth:`value_from_z` / :meth:`gradient_from_z`) so that a step-size
    trial costs one product with ``X`` and an accepted step one more.
    """

    #: non-negative coefficients (least squares only, the regressors' ``positive=True``): refits are NNLS
    positive = False

    intercept_is_variable = False
    #: whether :meth:`minus_two_log_likelihood` is defined (False for Huber: no information criteria)
    has_likelihood = True
    #: curvature bound of the pointwise loss (1 squared, 1/4 logistic, 1/2 multinomial)
    curvature = 1.0
    #: the units of the loss's values and coefficients, in which the absolute parts of the refits' stopping rules
    #: and abess's exchange threshold are counted: 1, but least squares' y's variance, Poisson's dispersion and
    #: Huber's scale**2 and scale (their values scale with y, and the fits must too)
    value_unit = 1.0
    coef_unit = 1.0

    def __init__(self, design, sample_weight, n_outputs, fit_intercept, alpha=0.0):
        self.design = design
        self.n_samples, self.n_features = design.shape
        self.n_outputs = n_outputs
        self.fit_intercept = fit_intercept
        self.alpha = float(alpha)
        sw = np.ones(self.n_samples) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.sample_weight = sw
        self.sw_sum = float(sw.sum())
        #: ``sample_weight / sw_sum`` as a column, the factor of every gradient
        self._sample_share = (sw / self.sw_sum)[:, None]
        #: the number of observations the weights stand for, which the
        #: sample-size dependent thresholds use (splicing gates, degrees of
        #: freedom, information criteria): the sum of the weights when it is at
        #: least the number of rows of positive weight (frequency weights:
        #: integer weights act as repeated rows), else that number of rows
        #: (weights of relative importance, e.g. normalised to sum to 1, which
        #: would otherwise make every sample count as a fraction of one)
        #: rows of positive weight
        self.n_positive = int(np.count_nonzero(sw > 0))
        self.n_observations = max(self.sw_sum, float(self.n_positive))
        #: all weights equal: a weighted mean is a plain mean (cheaper products)
        self.uniform_weights = bool(sw.size == 0 or np.logical_and.reduce(sw == sw[0]))
        self._lipschitz = None
        #: :func:`collinear_count` when the loss was built: a refit since then (solver's or search's) that could
        #: not rule out collinear columns raised it (``splice``'s ``redundant_first='collinear'``)
        self._collinear_mark = collinear_count()

    # -- shapes ---------------------------------------------------------------
    def zeros(self):
        """A zero starting point ``(W, b)``."""
        return np.zeros((self.n_features, self.n_outputs)), np.zeros(self.n_outputs)

    # -- values and gradients ------------------------------------------------
    def linear_predictor(self, W, b, rows=None):
        """``Z = X W + b`` (centered ``X`` for least squares).

        ``rows``, when given, includes the index of every non-zero row of
        ``W`` (see :meth:`LinearDesign.matvec`).
        """
        Z = self.design.matvec(W, rows)
        if self.intercept_is_variable and self.fit_intercept:
            Z = Z + b
        return Z

    def value_from_z(self, Z, W):
        """Loss value given ``Z = linear_predictor(W, b)``."""
        raise NotImplementedError

    def gradient_from_z(self, Z, W):
        """Gradients ``(gW, gb)`` given ``Z``; ``gb`` is None if b is not a variable."""
        raise NotImplementedError

    def value(self, W, b):
        """Loss value at ``(W, b)``."""
        return self.value_from_z(self.linear_predictor(W, b), W)

    def value_and_gradient(self, W, b):
        """``(f, gW, gb)`` at ``(W, b)``."""
        Z = self.linear_predictor(W, b)
        return (self.value_from_z(Z, W), *self.gradient_from_z(Z, W))

    def divergence_from_z(self, Z, Z_new):
        """``f(x_new) - f(x) - <grad f(x), x_new - x>`` from the two linear predictors, or None.

        The Bregman divergence of the loss between two points, which the
        adaptive step size compares with its quadratic model (see
        :func:`sparse_estimators.solvers.backtracking_step`). Losses that
        are quadratic in ``Z`` compute it exactly from ``Z_new - Z`` (no
        cancellation between nearly equal values of ``f``, and no gradient at
        the new point); the others return None, and the caller works from
        values and gradients.
        """
        return None

    def hessp(self, W, b, V, c):
        """Hessian-vector product at ``(W, b)`` in the direction ``(V, c)``.

        Returns ``(HV, Hc)``; ``Hc`` is None when b is not a variable.
        """
        raise NotImplementedError

    def intercept(self, W, b):
        """The model's intercept, shape (n_outputs,)."""
        if not self.fit_intercept:
            return np.zeros(self.n_outputs)
        return np.asarray(b, dtype=float)

    def intercept_variable(self, W, intercept):
        """The intercept variable ``b`` of the model ``(W, intercept)`` (a warm start from fitted attributes)."""
        return np.asarray(intercept, dtype=float)

    def initial_intercept(self):
        """The intercept that is optimal at ``W = 0`` (a good start)."""
        return np.zeros(self.n_outputs)

    def intercept_origin(self):
        """The intercept variable from which the solvers' stopping tests measure ``b``'s size, or None (from 0).

        The relative stopping test ``||x_t - x_{t-1}|| <= tol ||x_t||`` of
        :class:`~sparse_estimators.solvers.IterationMonitor` (and I-OBS's
        step safeguard) counts ``b - intercept_origin()`` in ``||x_t||``. None
        here: ``b`` itself, whose 0 is a point of the model's scale (least
        squares' intercept is no variable; logistic's 0 is even odds;
        Huber's intercept scales with ``y`` as ``W`` does). A loss whose
        intercept *shifts* with ``y``'s unit (the log link: ``c y`` adds
        ``log c``) returns the null model's intercept, so that the fits of
        ``c y`` stop where those of ``y`` do.
        """
        return None

    def value_origin(self):
        """The loss value from which the candidate refits' precision rule measures ``|f|``: 0 here.

        A refit of the splicing search stops at a Newton decrement of
        ``CANDIDATE_DECREMENT (value_unit + |f - value_origin()|)`` (see
        ``losses/_pointwise_newton.py``; on a sparse ``X``, ``1e-6`` times
        that, see :func:`newton_minimise`). The log-link losses return their
        saturated value (``f`` minus it is half the mean deviance): their ``f``
        at ``c y`` is not ``f`` at ``y`` in ``y``'s units (``c f - c log(c)
        mean(y)`` for Poisson, ``f + log c`` for Gamma), and the candidates
        of ``c y`` were refitted to another precision than those of ``y``.
        """
        return 0.0

    #: whether each pointwise loss is least where the model's mean is ``y`` (squared error, Poisson, Gamma, Huber)
    null_fits_constant = False

    def constant_target(self):
        """The target's value per output if constant on the rows of positive weight, else None (cached)."""
        if "_constant_target" not in self.__dict__:
            self._constant_target = constant_target(self.Y, self.sample_weight)
        return self._constant_target

    def null_intercept(self, value):
        """The intercept variable ``b`` of the null model of mean ``value`` (the link of ``value``)."""
        return np.asarray(value, dtype=float)

    def null_minimiser(self):
        """``b`` with ``(0, b)`` a minimiser: the intercept alone fits every row exactly; else None.

        With ``fit_intercept``, :attr:`null_fits_constant` and a constant target (:meth:`constant_target`), any
        coefficient could only keep or raise the loss (``SparseRegressorBase._null_fit`` returns that model).
        """
        if not (self.null_fits_constant and self.fit_intercept):
            return None
        value = self.constant_target()
        return None if value is None else self.null_intercept(value)

    # -- smoothness -----------------------------------------------------------
    def _gram_apply(self, v):
        """``Xt^T S Xt v / sum(S)`` where Xt carries a ones column when b is a variable."""
        p = self.n_features
        aug = self.intercept_is_variable and self.fit_intercept
        w = v[:p, None]
        z = self.design.matvec(w)[:, 0]
        if aug:
            z = z + v[p]
        z *= self.sample_weight / self.sw_sum
        out = self.design.rmatvec(z[:, None])[:, 0]
        return np.append(out, z.sum()) if aug else out

    def lipschitz(self):
        """Smoothness constant ``L`` of the loss in ``(W, b)`` (cached).

        ``curvature * lambda_max(Xt^T S Xt) / sum(S) + alpha``, the largest
        eigenvalue found by :func:`largest_eigenvalue` (Lanczos), computed once
        per loss object.
        """
        if self._lipschitz is None:
            dim = self.n_features + int(self.intercept_is_variable and self.fit_intercept)
            lam = largest_eigenvalue(self._gram_apply, dim)
            self._lipschitz = self.curvature * lam + self.alpha
        return self._lipschitz

    def coordinate_lipschitz(self):
        """Largest smoothness constant of the loss along a single coordinate (cached).

        ``curvature * max_j (Xt^T S Xt)_jj / sum(S) + alpha``: the largest
        weighted second moment of a (centered) column, the intercept column
        included when it is a variable. At most :meth:`lipschitz`, and close to
        the curvature that sparse steps meet, it is the optimistic start of
        the adaptive step size. Costs one pass over ``X``.
        """
        if getattr(self, "_coordinate_lipschitz", None) is None:
            # (np.maximum.reduce: ndarray.max's reduction, without its Python wrapper)
            top = float(np.maximum.reduce(self.coordinate_curvatures(), axis=None, initial=0.0) - self.alpha)
            if self.intercept_is_variable and self.fit_intercept:
                top = max(top, self.curvature)
            self._coordinate_lipschitz = top + self.alpha
        return self._coordinate_lipschitz

    def coordinate_curvatures(self):
        """Smoothness constant of the loss along each feature, shape (n_features,) (cached).

        ``curvature * (Xt^T S Xt)_jj / sum(S) + alpha``: exact for least
        squares, an upper bound for the logistic and multinomial losses. The
        splicing search (:func:`sparse_estimators.solvers.splice`) uses it to
        rate adding or removing a feature. Costs one pass over ``X``.
        """
        if getattr(self, "_coordinate_curvatures", None) is None:
            second = self.design.column_moments(self.sample_weight / self.sw_sum)
            self._coordinate_curvatures = self.curvature * np.asarray(second, dtype=float) + self.alpha
        return self._coordinate_curvatures

    def feature_curvatures(self, Z, features):
        """Curvature of the loss along each coefficient of ``features`` at linear predictor ``Z``.

        The diagonal of the Hessian in those coefficients, shape
        ``(len(features), n_outputs)``. Here the constant
        :meth:`coordinate_curvatures` (exact for least squares); losses
        whose curvature varies (logistic, multinomial) evaluate it at ``Z``.
        The splicing search uses it to rate a feature it would add (see
        ``add_gate`` in :func:`sparse_estimators.solvers.splice`).
        """
        h = self.coordinate_curvatures()[np.asarray(features)]
        return np.repeat(h[:, None], self.n_outputs, axis=1)

    def removal_costs(self, Z, features, W):
        """Loss increase from removing each of ``features`` alone from the fit ``W`` at ``Z``, to second order.

        Half the Wald statistic ``w_j^T H_jj w_j / 2`` of each feature's
        coefficient row ``w_j``, with ``H_jj`` the block of the Hessian on
        that row, shape ``(len(features),)``. Here ``H_jj`` is diagonal
        (:meth:`feature_curvatures`: one output, or outputs fitted
        independently); the multinomial loss couples its classes. The
        splicing search's ``add_gate`` test (:func:`sparse_estimators.solvers.splice`).
        """
        features = np.asarray(features)
        return 0.5 * np.einsum("ij,ij->i", self.feature_curvatures(Z, features), W[features] ** 2)

    def noise_scale(self, value, k):
        """Scale of the loss decrease that noise alone buys per added coefficient.

        Twice the weighted number of samples times the decrease of the loss
        from ``c`` spurious coefficients (per output) is about ``c`` times
        this value: 1 for the logistic and multinomial deviances, the noise
        variance for least squares (see :class:`SquaredLoss`).
        """
        return 1.0

    # -- information criteria ------------------------------------------------------
    @property
    def coefficients_per_feature(self):
        """Free coefficients a selected feature adds to the model (its degrees of freedom).

        ``n_outputs`` here (least squares: one per target; binary logistic:
        one); the multinomial loss has one fewer, its softmax being invariant
        to a shift shared by the classes. The degrees of freedom of the
        information criteria and the price of a feature in the splicing
        gates (:func:`~sparse_estimators.solvers.splice`; its units' chi-squared
        levels with groups); abess's own threshold keeps ``n_outputs``.
        """
        return self.n_outputs

    def minus_two_log_likelihood(self, W, b):
        """Minus twice the log-likelihood of the model ``(W, b)``, the fit term of information criteria.

        Up to a constant that does not depend on the model, over
        :attr:`n_observations` observations (weighted sums are rescaled to
        that count). Subclasses define it: the deviance for the logistic and
        multinomial losses, ``N sum_j log(RSS_j / N)`` for least squares (the
        Gaussian likelihood with each target's variance estimated).
        """
        raise NotImplementedError

    def _twice_weighted_total(self, terms):
        """``2 N`` times the weighted mean of the pointwise ``terms`` (``N``: :attr:`n_observations`).

        Where ``2 N (weights @ terms)`` leaves float range (weights summing
        past about 1e154) the mean is formed first, so that an information
        criterion stays finite and comparable across ``k``; otherwise the
        product in that order, as before.
        """
        total = 2.0 * self.n_observations * float(self.sample_weight @ terms) / self.sw_sum
        if math.isinf(total):
            total = 2.0 * self.n_observations * float(self._sample_share[:, 0] @ terms)
        return total

    # -- restriction and refit -------------------------------------------------
    def restrict(self, support, dtype=np.float64):
        """The same loss on the columns of ``X`` in ``support``.

        Parameters
        ----------
        support : ndarray of int
        dtype : dtype or None, default=float64
            Type of the copied columns: float64 for the small supports of
            refits and Hessians, None to keep ``X``'s (the splicing search
            within a few hundred features, whose products are then those
            of the full loss; see :meth:`LinearDesign.columns`).
        """
        raise NotImplementedError

    def search_restriction(self, support, previous=None):
        """The loss on the columns in ``support`` for a search that refits many small supports among them.

        The splicing's important search within a few hundred features
        (:func:`~sparse_estimators.solvers._splice_abess._important_search`):
        :meth:`restrict` keeping ``X``'s dtype, unless the loss has a cheaper
        form (least squares at small ``n``: lazily formed Gram columns, see
        ``losses/_squared_search.py``). ``previous``: such a cheaper form
        returned before for as many features and no longer used, whose
        arrays may be reused (ignored here).
        """
        return self.restrict(support, dtype=None)

    def hessian(self, W, b):
        """Dense Hessian over the packed variables ``[W.ravel(), b]``.

        ``W.ravel()`` is row-major (feature j, output a at ``j * m + a``), and
        ``b`` follows when the intercept is a variable. Meant for small
        problems (restricted supports) and second-order solvers.
        """
        raise NotImplementedError

    def refit_candidates(self, supports, W, b):
        """Refit on each of several supports and evaluate the loss there.

        The candidate evaluation of the splicing search
        (:func:`sparse_estimators.solvers.splice`). Each refit starts from
        ``W`` with the rows outside its support set to zero, and may be
        approximate (``refit(..., precise=False)``: the value within about
        ``1e-12`` of the minimum), which is all a comparison of candidates
        needs; the search refits its final support precisely. Losses with a
        closed-form refit evaluate all candidates at once (see
        :meth:`SquaredLoss.refit_candidates`); the binary logistic loss and
        the other one-output GLM losses start each at the minimum of one
        shared quadratic model when ``X`` is dense
        (``losses._pointwise_newton``), the multinomial loss refits each on
        a dense copy of its columns (see :meth:`LogisticLoss.refit`).

        Parameters
        ----------
        supports : list of ndarrays
            Sorted feature indices, one array per candidate.
        W, b : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
            The current point (warm start).

        Returns
        -------
        list of tuples ``(W_c, b_c, value_c, Z_c)``
            Refitted coefficients (zero outside the support), intercept
            variable, loss value and linear predictor
            (:meth:`linear_predictor`, from which the next gradient follows
            without another product), one per candidate.
        """
        out = []
        for support in supports:
            start = np.zeros_like(W)
            start[support] = W[support]
            out.append(self._refit_evaluated(support, start, b))
        return out

    def _refit_evaluated(self, support, W, b):
        """One candidate of :meth:`refit_candidates`: ``refit(precise=False)`` and ``(W, b, value, Z)`` there."""
        W, b = self.refit(support, W, b, precise=False)
        Z = self.linear_predictor(W, b)
        return W, b, self.value_from_z(Z, W), Z

    #: how :meth:`refit`'s Newton steps solve ``H x = g``: the minimum-norm solution (see MultinomialLoss's)
    _restricted_solve = staticmethod(min_norm_solve)

    def refit(self, support, W, b, *, max_iter=100, precise=True):
        """Minimise the loss over the coefficients in ``support`` (debiasing).

        Newton's method on the restricted problem with a dense Hessian and an
        Armijo line search, iterated until the step is at the level of
        rounding error, so that equivalent data (weights versus repeated rows)
        give equal fits. ``precise=False`` stops earlier, with the value
        within about ``1e-12`` (relative) of the minimum (see
        :func:`newton_minimise`): the splicing search's candidate refits,
        whose accepted support is refitted precisely at the end.

        Returns
        -------
        W_full, b : ndarrays
            Coefficients that are zero outside ``support``.
        """
        support = np.asarray(support)
        sub = self.restrict(support)
        k, m = support.size, self.n_outputs
        has_b = self.intercept_is_variable and self.fit_intercept

        def unpack(theta):
            return theta[: k * m].reshape(k, m), (theta[k * m:] if has_b else np.asarray(b, dtype=float))

        def fun(theta):
            f, gW, gb = sub.value_and_gradient(*unpack(theta))
            return f, (np.concatenate([gW.ravel(), gb]) if has_b else gW.ravel())

        curvature = getattr(sub, "_flat_curvature", None)
        if curvature is not None and "weights" not in inspect.signature(sub.hessian).parameters:
            curvature = None  # (a Hessian that takes no curvatures of its own, e.g. a dask X's)
        flat = None if curvature is None else (
            lambda theta: sub.hessian(*unpack(theta), weights=lambda Z: curvature(Z[:, 0])[:, None, None]))
        theta = np.concatenate([W[support].ravel(), b]) if has_b else W[support].ravel()
        theta = newton_minimise(fun, lambda theta: sub.hessian(*unpack(theta)), theta, max_iter=max_iter,
                                solve=sub._restricted_solve, precise=precise, value_unit=self.value_unit,
                                coef_unit=self.coef_unit, flat_hessian=flat, value_origin=self.value_origin())
        Ws, bs = unpack(theta)
        W_full = np.zeros_like(W)
        W_full[support] = Ws
        return W_full, bs
