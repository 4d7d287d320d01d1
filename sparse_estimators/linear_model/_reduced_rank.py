"""Reduced-rank models: multi-output least squares and multinomial regression with ``rank(coef_) <= rank``."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted, validate_data

from ..solvers import accelerated_iht, iht, low_rank_local_search
from ..solvers._local_search import _reduced_rank_least_squares
from ..structures import LowRank
from ._classifier import SparseClassifierBase
from ._docs import fill_doc
from ._regressor import SparseRegressorBase

_SOLVERS = {"iht": iht, "accelerated": accelerated_iht, "regularized": low_rank_local_search}

#: the Attributes both reduced-rank estimators share, after ``coef_`` and ``intercept_``
_RANK_ATTRIBUTES = """rank_ : int
        The numerical rank of ``coef_`` (at most ``rank``, clipped).
    x_rotations_ : ndarray of shape (n_features, ``rank_``)
        The latent directions in the features scaled by ``coef_``'s singular
        values (``V diag(s)`` of ``coef_ = U diag(s) V^T``, signs fixed so
        that each column of ``U`` has its largest entry positive):
        :meth:`transform` returns ``X @ x_rotations_``.
    y_loadings_ : ndarray of shape (n_outputs, ``rank_``)
        ``U``: orthonormal columns in the outputs (targets or classes' scores),
        so that ``transform(X) @ y_loadings_.T + intercept_`` is the linear
        predictor.
    n_iter_ : int
        Number of iterations of the solver.
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Training objective after each iteration.
    n_exchanges_ : int
        Always 0: a rank constraint has no splicing search (the attribute
        the sparse models share, kept so that code reading it works here).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names."""


class _ReducedRankMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """What the reduced-rank estimators share: ``rank`` as the level, the :class:`LowRank` structure, ``rank_``.

    And the latent scores: ``transform`` is defined here, in a subclass of
    ``TransformerMixin``, so that ``set_output`` wraps it. Subclasses set
    ``_solvers`` (name to solver function), ``_void_message`` (the warning
    when the coefficient matrix has one column) and ``_outputs_name`` (what its columns are, in messages).
    """

    # not parameters of this estimator: a rank constraint has no features to exchange, group, force or sign
    splicing = False
    groups = None
    always_select = None
    positive = False
    _parameter_constraints = {"rank": [Interval(Integral, 1, None, closed="left")]}
    _level_name = "rank"

    @property
    def k(self):
        """The level the shared fitting code thresholds at: the rank."""
        return self.rank

    def _validate_extra_params(self):
        # (after the declarative constraints, which name the solver's choices: what they cannot say)
        c = getattr(self, "weight_step", None)
        if c is not None and (isinstance(c, bool) or not isinstance(c, Real) or not 0 < c <= 1):
            raise ValueError(f"The 'weight_step' parameter must be a float in (0, 1] or None, got {c!r}.")
        if self.solver == "regularized" and not (isinstance(self.thresholding, str) and self.thresholding == "hard"):
            raise ValueError("solver='regularized' keeps whole singular triplets (a local search with fully corrective "
                             f"steps): it supports thresholding='hard' only, got thresholding={self.thresholding!r}.")

    def _sparse_solver(self):
        return self._solvers[self.solver]

    def _solver_options(self):
        return {"weight_step": getattr(self, "weight_step", None)} if self.solver == "regularized" else {}

    def _structure(self, operator, loss):
        if isinstance(operator, LowRank):
            return operator
        structure = LowRank(operator, loss.n_outputs)
        if loss.n_outputs < 2:  # (scikit-learn's checks fit multi-output estimators on one column)
            warnings.warn(self._void_message, UserWarning, stacklevel=4)
            structure.unit_name = None  # (the rank is then 1 whatever was asked: no second warning)
        return structure

    def _effective_k(self, n_units, unit="n_features"):
        if unit is None:
            return min(int(self.rank), n_units)
        if self.rank > n_units:
            warnings.warn(f"rank={self.rank} is larger than min(n_features, {self._outputs_name})={n_units}; using "
                          f"rank={n_units}.", UserWarning, stacklevel=3)
            return n_units
        return int(self.rank)

    def _fit(self, X, y, sample_weight, coef_init):
        super()._fit(X, y, sample_weight, coef_init)
        # a rank model has no feature selection: the shared fit's support_ (every feature) and k_ (the
        # constraint, which rank_ reports where it binds) would say nothing
        for name in ("support_", "k_"):
            self.__dict__.pop(name, None)
        return self

    def _store(self, fit, info):
        super()._store(fit, info)
        coef = np.atleast_2d(self.coef_)
        U, s, Vt = np.linalg.svd(coef, full_matrices=False)
        # (numpy's matrix_rank tolerance, in coef_'s precision: float32 rounding of a rank-r matrix is not rank)
        self.rank_ = int(np.sum(s > s[0] * max(coef.shape) * np.finfo(coef.dtype).eps)) if s.size and s[0] > 0 else 0
        U, Vt = U[:, :self.rank_], Vt[:self.rank_]
        if self.rank_:
            U, Vt = svd_flip(U, Vt, u_based_decision=True)  # (signs fixed by the matrix, not by the LAPACK kernel)
        self.x_rotations_ = Vt.T * s[:self.rank_]
        self.y_loadings_ = U
        self._n_features_out = self.rank_

    def transform(self, X):
        """The latent scores: ``X`` projected on the model's ``rank_`` directions.

        ``X @ x_rotations_``, so that ``transform(X) @ y_loadings_.T +
        intercept_`` is the linear predictor (:meth:`predict` for the
        regressor, :meth:`decision_function` for the classifier with more
        than two classes). As ``PLSRegression``'s and ``CCA``'s, but ``X``
        is not centred: the scores' means are the features' means times
        ``x_rotations_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, ``rank_``)
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], reset=False)
        return np.asarray(X @ self.x_rotations_)



@fill_doc(rank_attributes=_RANK_ATTRIBUTES)
class ReducedRankRegressor(_ReducedRankMixin, SparseRegressorBase):
    """Multi-output least squares whose coefficient matrix has rank at most ``rank``.

    The package's solvers with the thresholding operator lifted to the
    singular values of the coefficient matrix (Liu & Barber, Sec. 5, eq.
    20; :class:`~sparse_estimators.structures.LowRank`): each iteration
    takes a gradient step and keeps the ``rank`` largest singular triplets,
    their singular values shrunk by the operator at the ``(rank+1)``-th one
    (hard thresholding: the best rank-``rank`` approximation). With
    ``debias=True`` the result is refitted in its column space ``V`` (the
    ``rank`` right singular vectors, in the targets): ``W_ols V V^T``, the
    least-squares minimiser among the matrices with that column space.

    With hard thresholding, a full-column-rank ``X`` and a gap after the
    ``rank``-th singular value of the fitted values, the fixed point is the
    global minimiser (reduced-rank regression: the least-squares fit projected
    onto the top right singular vectors of its fitted values); the
    iteration converges to it linearly, so ``tol`` sets how close the column
    space gets (:source:`tests/test_reduced_rank.py` measures it). With
    ``debias=True`` a hard-thresholding fit that stopped at ``max_iter``, or
    whose refit lies farther than ``tol`` (relative, Frobenius) from that
    minimiser, is replaced by it (on an ill-conditioned ``X`` the iteration
    creeps and stopped up to 2 % away).

    :meth:`transform` gives the latent scores ``X @ x_rotations_`` (the
    ``rank_`` linear features of ``X`` the predictions are made of, as
    ``PLSRegression``'s), named by :meth:`get_feature_names_out`.

    Each iteration costs two products with ``X`` and an SVD of the
    ``n_features x n_targets`` coefficient matrix; the refit solves the
    ``n_features x n_features`` normal equations once (dense copy of ``X``).

    Parameters
    ----------
    rank : int, default=1
        The largest rank of ``coef_``; clipped, with a warning, to
        ``min(n_features, n_targets)``. With one target the constraint is
        void (ordinary least squares, with a warning).
    solver : {{'iht', 'accelerated', 'regularized'}}, default='iht'
        Plain iterative thresholding, or accelerated IHT with momentum 1/4
        (Khanna & Kyrillidis; the gradient is not restricted: there is no
        support to expand), or ``'regularized'``: Axiotis & Sviridenko's
        regularized local search (App. D, Algorithm 2; see
        :func:`~sparse_estimators.solvers.regularized_local_search`), with
        left and right weight matrices (``n_features`` and ``n_targets``
        square, stored as the identity minus a low-rank correction) and a
        fully corrective step. Each of its iterations either swaps one
        singular triplet (the smallest out, the top singular pair of the
        regularized gradient in) or lowers the weights, and then solves a
        Sylvester equation of order ``rank`` for the best matrix in the
        current row and column spaces: per iteration one gradient (two
        products with ``X``), an SVD of the ``n_features x n_targets``
        gradient, ``rank`` Hessian-vector products and an ``O(rank^3)``
        solve; reaching rank ``r`` takes at least ``r`` iterations, and each
        weight update costs an iteration. Its corrective steps minimise
        the regularized objective, whose minimiser lies about 1e-3 away
        from the loss's: the search finishes with the least-squares
        minimiser of rank ``rank`` (the closed form above), kept when it is
        not worse. It needs ``thresholding='hard'`` and ignores
        ``step_size`` (the corrective step is exact).
    {thresholding}

    {step_size}

    {max_iter}

    {tol}

    {fit_intercept}

    {debias}

    {precompute}

    {warm_start}

    {verbose}

    weight_step : float in (0, 1] or None, default=None
        ``c`` of ``solver='regularized'``'s weight update
        ``W <- W - c W A A^T W / <W, A A^T>`` (and alike for the right
        weights); None: 1, Algorithm 2's. Not used by the other solvers.

    Attributes
    ----------
    coef_ : ndarray of shape (n_targets, n_features)
        Coefficients, of rank at most ``rank``.
    intercept_ : ndarray of shape (n_targets,)
        Intercepts (0 when ``fit_intercept=False``).
    {rank_attributes}

    See Also
    --------
    sklearn.cross_decomposition.PLSRegression : Latent-variable regression.

    References
    ----------
    H. Liu and R. Foygel Barber, "Between hard and soft thresholding: optimal
    iterative thresholding algorithms", Information and Inference 2020, Sec. 5,
    arXiv:1804.08841, https://arxiv.org/abs/1804.08841

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import ReducedRankRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((200, 8))
    >>> B = rng.standard_normal((8, 1)) @ rng.standard_normal((1, 5))  # rank 1
    >>> Y = X @ B + 0.01 * rng.standard_normal((200, 5))
    >>> model = ReducedRankRegressor(rank=1).fit(X, Y)
    >>> model.rank_, bool(model.score(X, Y) > 0.99)
    (1, True)
    """

    _solvers = _SOLVERS
    _parameter_constraints = {"solver": [StrOptions(set(_SOLVERS))],
                              "weight_step": [Interval(Real, 0, 1, closed="right"), None]}
    _void_message = ("ReducedRankRegressor with one target: every coefficient matrix has rank at most 1, so the "
                     "rank constraint is void and the fit is ordinary least squares.")
    _outputs_name = "n_targets"

    def __init__(self, rank=1, *, solver="iht", thresholding="hard", step_size="auto", max_iter=1000, tol=1e-4,
                 fit_intercept=True, debias=True, precompute="auto", warm_start=False, verbose=0, weight_step=None):
        self.rank = rank
        self.solver = solver
        self.thresholding = thresholding
        self.step_size = step_size
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.debias = debias
        self.precompute = precompute
        self.warm_start = warm_start
        self.verbose = verbose
        self.weight_step = weight_step

    def _closed_form_applies(self, loss, operator):
        return operator.is_hard and not loss.intercept_is_variable and hasattr(loss, "y_mean")

    def _solver_start(self, loss, operator, k, W0, b0):
        """A cold hard-thresholding IHT fit starts at the closed-form minimiser, which the solver then checks.

        That minimiser is the fixed point of ``'iht'`` and ``'accelerated'``,
        and :meth:`_finish_solver` ends there anyway; started at zero on a
        badly scaled ``X`` the iteration crept to it in up to ``max_iter``
        steps (``doc/changelog.rst``). ``'regularized'`` keeps its own start
        (its search swaps triplets in from zero; from the minimiser it took
        as many iterations). The least-squares fit on every feature and the
        minimiser are kept for the finish.
        """
        if (self.solver == "regularized" or not self._closed_form_applies(loss, operator) or np.any(W0)
                or not np.all(np.isfinite(W0))):
            return W0, b0
        W_ols, b = loss.refit(np.arange(loss.n_features), W0, b0)
        best = _reduced_rank_least_squares(loss, W_ols, b, int(k), W_ols=W_ols)
        self._closed_form = (W_ols, best)
        return best, b

    def _finish_solver(self, loss, operator, k, result):
        """Least squares with hard thresholding: the closed-form minimiser where the solver's fit is not within ``tol``.

        The iteration's fixed point is the rank-``k`` least-squares
        minimiser, ``W_ols V V^T`` with ``V`` the top right singular vectors
        of the fitted values (``_reduced_rank_least_squares``); on a badly
        scaled ``X`` (Gram condition number 1e4 to 1e5) IHT creeps towards
        it and stopped, at ``max_iter`` or on a small step, up to 2 % away
        (``doc/changelog.rst``). The debiasing refit is done here; its result
        is replaced by the closed form, when not worse, if the solver did not
        converge or the two differ by more than ``tol`` (relative, Frobenius):
        fits that reach the minimiser within ``tol`` are kept as they were.
        """
        # (the least-squares fit and the closed form from _solver_start, on the same loss: computed once)
        W_ols, best = self.__dict__.pop("_closed_form", (None, None))
        if result.diverged or not self._closed_form_applies(loss, operator):
            return result
        W, b = result.coef, result.intercept
        # the debiasing refit, as LowRank.refit computes it (W_ols V V^T, V the column space of W), W_ols shared
        # with the closed form
        V = operator.column_space(W, min(W.shape))
        if W_ols is None:
            W_ols, b = loss.refit(np.arange(loss.n_features), W, b)
        if V.shape[1] and not result.refitted:
            W = W_ols @ V @ V.T
        if best is None:
            best = _reduced_rank_least_squares(loss, W, b, int(k), W_ols=W_ols)
        far = np.linalg.norm(best - W) > self.tol * np.linalg.norm(best)
        if (far or not result.converged) and loss.value(best, b) <= loss.value(W, b):
            W, result.converged = best, True
        result.coef, result.intercept, result.refitted = W, b, True
        result.gradient = result.linear_predictor = None
        return result

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        return tags


_CLASSIFIER_SOLVERS = {"iht": iht, "accelerated": accelerated_iht}


@fill_doc(rank_attributes=_RANK_ATTRIBUTES)
class ReducedRankClassifier(_ReducedRankMixin, SparseClassifierBase):
    """Multinomial logistic regression whose coefficient matrix has rank at most ``rank``.

    For many classes with few underlying directions: the ``n_classes x
    n_features`` coefficient matrix is kept of rank ``rank`` (the classes'
    scores are ``rank`` linear features of ``X`` mixed per class), through
    the package's solvers with the thresholding operator lifted to the
    singular values (:class:`~sparse_estimators.structures.LowRank`, as
    :class:`ReducedRankRegressor`). With ``debias=True`` the result is
    refitted in its column space ``V`` (in the classes): the multinomial
    loss minimised over ``B V^T`` (and the intercepts) by Newton-CG. With two
    classes there is one coefficient vector and the constraint is void
    (a warning; the fit is l2-regularized logistic regression).
    :meth:`transform` gives the latent scores ``X @ x_rotations_``, the
    ``rank_`` linear features of ``X`` that the classes' scores mix.

    Parameters
    ----------
    rank : int, default=2
        The largest rank of ``coef_``; clipped, with a warning, to
        ``min(n_features, n_classes)``. The default is the smallest rank that
        separates three classes not ordered along one direction (with three
        classes it leaves the l2-regularized fit unconstrained: its
        coefficient columns sum to zero).
    solver : {{'iht', 'accelerated'}}, default='accelerated'
        Accelerated IHT with Nesterov's momentum ``(t_i - 1) / t_{{i+1}}``
        (FISTA's sequence), restarted whenever a step raises the loss
        (O'Donoghue & Candes; see
        :func:`~sparse_estimators.solvers.accelerated_iht`), or ``'iht'``:
        plain iterative thresholding. Near separation the penalised
        multinomial loss is ill-conditioned (curvatures from ``alpha`` to
        about 1/2) and plain IHT creeps: on ``load_digits`` standardized it
        took 318 to 807 iterations and stopped (on a step below ``tol``)
        up to 13 % above the loss the iteration converges to; the momentum
        reaches that loss in 155 to 214 (``benchmarks/classifier_convergence.py``).
        The regularized local search (``ReducedRankRegressor``'s
        ``'regularized'``) is not offered: its fully corrective step would
        need the intercepts profiled out at every candidate.
    {thresholding}

    {step_size}

    {max_iter}

    {tol}

    {fit_intercept}

    {debias}

    {warm_start}

    {verbose}

    {classifier_params}

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients, of rank at most ``rank``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts (never constrained).
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    {rank_attributes}

    See Also
    --------
    ReducedRankRegressor : The same constraint for several regression targets.

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import ReducedRankClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((600, 10))
    >>> centers = rng.standard_normal((8, 1)) @ rng.standard_normal((1, 10))  # 8 classes on one direction
    >>> y = np.argmax(X @ centers.T * 3 + rng.gumbel(size=(600, 8)), axis=1)
    >>> model = ReducedRankClassifier(rank=1).fit(X, y)
    >>> model.rank_, model.coef_.shape
    (1, (8, 10))
    """

    _solvers = _CLASSIFIER_SOLVERS
    _parameter_constraints = {"solver": [StrOptions(set(_CLASSIFIER_SOLVERS))]}
    _void_message = ("ReducedRankClassifier with two classes: the coefficients are one vector (rank at most 1), so "
                     "the rank constraint is void and the fit is l2-regularized logistic regression.")
    _outputs_name = "n_classes"

    def __init__(self, rank=2, *, solver="accelerated", thresholding="hard", step_size="auto", max_iter=1000,
                 tol=1e-4, fit_intercept=True, debias=True, warm_start=False, verbose=0, alpha=1e-4,
                 class_weight=None):
        self.rank = rank
        self.solver = solver
        self.thresholding = thresholding
        self.step_size = step_size
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.debias = debias
        self.warm_start = warm_start
        self.verbose = verbose
        self.alpha = alpha
        self.class_weight = class_weight

    def _solver_options(self):
        # Nesterov's momentum with restarts: the fixed momentum 1/4 took as many iterations as plain IHT here
        return {"momentum": "nesterov"} if self.solver == "accelerated" else {}
