"""Reduced-rank regression: multi-output least squares with ``rank(coef_) <= rank``."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..solvers import accelerated_iht, iht, low_rank_local_search
from ..structures import LowRank
from ._base import SparseRegressorBase, _check_int
from ._docs import fill_doc

_SOLVERS = {"iht": iht, "accelerated": accelerated_iht, "regularized": low_rank_local_search}


@fill_doc()
class ReducedRankRegressor(SparseRegressorBase):
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
    space gets (:source:`tests/test_reduced_rank.py` measures it).

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
        weight update costs an iteration. It needs ``thresholding='hard'``
        and ignores ``step_size`` (the corrective step is exact).
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
    rank_ : int
        The numerical rank of ``coef_``.
    k_ : int
        The rank constraint used (``rank``, clipped).
    support_ : ndarray
        Features with a non-zero row of coefficients (usually all).
    n_iter_ : int
        Number of iterations of the solver.
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Training objective after each iteration.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.

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

    # not parameters of this estimator: a rank constraint has no features to exchange, group, force or sign
    splicing = False
    groups = None
    always_select = None
    positive = False
    _parameter_constraints = {"rank": [Interval(Integral, 1, None, closed="left")],
                              "solver": [StrOptions(set(_SOLVERS))],
                              "weight_step": [Interval(Real, 0, 1, closed="right"), None]}

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

    @property
    def k(self):
        """The level the shared fitting code thresholds at: the rank."""
        return self.rank

    def _validate_params(self):
        _check_int("rank", self.rank, 1)
        if self.solver not in _SOLVERS:
            raise ValueError(f"The 'solver' parameter must be one of {sorted(_SOLVERS)}, got {self.solver!r}.")
        c = self.weight_step
        if c is not None and (isinstance(c, bool) or not isinstance(c, Real) or not 0 < c <= 1):
            raise ValueError(f"The 'weight_step' parameter must be a float in (0, 1] or None, got {c!r}.")
        if self.solver == "regularized" and not (isinstance(self.thresholding, str) and self.thresholding == "hard"):
            raise ValueError("solver='regularized' keeps whole singular triplets (a local search with fully corrective "
                             f"steps): it supports thresholding='hard' only, got thresholding={self.thresholding!r}.")
        return super()._validate_params()

    def _sparse_solver(self):
        return _SOLVERS[self.solver]

    def _solver_options(self):
        return {"weight_step": self.weight_step} if self.solver == "regularized" else {}

    def _structure(self, operator, loss):
        if isinstance(operator, LowRank):
            return operator
        if loss.n_outputs < 2:  # (scikit-learn's checks fit multi-output estimators on one column)
            warnings.warn("ReducedRankRegressor with one target: every coefficient matrix has rank at most 1, so "
                          "the rank constraint is void and the fit is ordinary least squares.", UserWarning,
                          stacklevel=4)
        return LowRank(operator, loss.n_outputs)

    def _effective_k(self, n_units, unit="n_features"):
        if self.rank > n_units:
            warnings.warn(f"rank={self.rank} is larger than min(n_features, n_targets)={n_units}; using "
                          f"rank={n_units}.", UserWarning, stacklevel=3)
            return n_units
        return int(self.rank)

    def _store(self, fit, info):
        super()._store(fit, info)
        coef = np.atleast_2d(self.coef_)
        s = np.linalg.svd(coef, compute_uv=False)
        self.rank_ = int(np.sum(s > s[0] * max(coef.shape) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        return tags
