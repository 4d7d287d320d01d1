"""Least squares on a dask array: :class:`GramSquaredLoss` from one pass, nothing of size ``n`` in the client."""

import numpy as np

from ._dask_design import DaskDesign
from ._numerics import min_norm_solve
from ._squared import GramSquaredLoss, _cholesky_solve, _nnls, gaussian_fit_term


def solve_normal_equations(G, rhs):
    """Least squares from its normal equations ``G w = rhs`` (minimum-norm when ``G`` is nearly singular)."""
    coef = _cholesky_solve(G, rhs, 1e-4)
    return min_norm_solve(G, rhs) if coef is None else coef


def nonnegative_normal_equations(G, rhs):
    """Non-negative least squares from ``G = A^T A`` and ``rhs = A^T r``: NNLS on an eigen square root of ``G``.

    ``||A w - r||`` and ``||B w - s||`` with ``B^T B = G``, ``B^T s = rhs``
    differ by a constant, so their minimisers over ``w >= 0`` agree (``_nnls``: BVLS where scipy's ``nnls``
    raises at its iteration limit, as in-memory fits do).
    """
    values, vectors = np.linalg.eigh(G)
    keep = values > values.max(initial=0.0) * G.shape[0] * np.finfo(float).eps
    root = np.sqrt(values[keep])
    B = root[:, None] * vectors[:, keep].T
    S = (vectors[:, keep].T @ rhs) / root[:, None]
    return np.column_stack([_nnls(B, S[:, j]) for j in range(rhs.shape[1])])

class _Columns:
    """The shape of a restricted design (the features of a support; no data: the Gram loss needs none)."""

    is_sparse = False

    def __init__(self, n_samples, n_features):
        self.shape = (n_samples, n_features)


class DaskGramSquaredLoss(GramSquaredLoss):
    """:class:`GramSquaredLoss` whose statistics come from one pass over a dask ``X`` (see :class:`DaskDesign`).

    The statistics are those of the NumPy path up to rounding: ``G = X_c^T S
    X_c / sum(S)``, ``C = X_c^T S Y_c / sum(S)``, the weighted means and the
    targets' centred sums of squares, merged from blocks of rows centred at
    their own means. Everything after the pass (solvers, splicing, refits,
    ``k=None`` and the information criteria) works on them in memory:

    - the Gaussian likelihood of the criteria takes the residual sums of
      squares from ``yy - 2 <C, W> + <W, G W>`` instead of the residuals;
    - a refit on nearly collinear features (a Cholesky pivot below ``1e-4`` of
      its diagonal entry) takes the minimum-norm solution of the normal
      equations, and ``positive=True`` solves NNLS on a square root of ``G``;
      the NumPy path uses the columns themselves there.

    Use :meth:`from_dask`.
    """

    #: the statistics come from a dask ``X`` (I-OBS takes its 'dense' route, on ``G``)
    blockwise = True

    @classmethod
    def from_dask(cls, X, Y, sample_weight=None, fit_intercept=True):
        """Read ``X`` once and build the loss.

        Parameters
        ----------
        X : dask array (n_samples, n_features), chunked by rows
        Y : dask array (n_samples, n_outputs), chunked like ``X``'s rows
        sample_weight : dask array (n_samples,) or None
        fit_intercept : bool

        Returns
        -------
        loss : DaskGramSquaredLoss
        stats : dict
            The pass's statistics (:meth:`DaskDesign.gram_statistics`), for
            the caller's checks (finite values, weights) and rescaling.
        """
        design = DaskDesign(X)
        stats = design.gram_statistics(Y, sample_weight, centred=fit_intercept)
        return cls.from_statistics(design, stats, Y.shape[1], fit_intercept, sample_weight is not None), stats

    @classmethod
    def from_statistics(cls, design, stats, n_outputs, fit_intercept, weighted):
        """The loss of the rows that ``stats`` (of :meth:`DaskDesign.gram_statistics`) describe; no pass.

        Parameters
        ----------
        design : DaskDesign
            The pass's design (its counter of passes).
        stats : dict
            Statistics of the rows (all of them, or a cross-validation fold's).
        n_outputs : int
        fit_intercept : bool
        weighted : bool
            Whether the rows have sample weights.

        Returns
        -------
        loss : DaskGramSquaredLoss
            Call :meth:`set_statistics` before use.
        """
        loss = object.__new__(cls)
        loss.design = design
        loss.n_samples, loss.n_features = int(stats["rows"]), design.shape[1]
        loss.n_outputs = n_outputs
        loss.fit_intercept = fit_intercept
        loss.alpha = 0.0
        loss._lipschitz = None
        import dask.array as da

        loss.sample_weight = da.ones(loss.n_samples)  # (lazy, for the interface: nothing computes it)
        loss._sample_share = None
        loss.sw_sum = float(stats["weight"])
        loss.n_positive = int(stats["positive"])
        loss.n_observations = max(loss.sw_sum, float(loss.n_positive))
        loss.uniform_weights = not weighted or stats["w_min"] == stats["w_max"]
        loss.Y = None
        return loss

    def set_statistics(self, stats, x_scale=1.0, y_scale=1.0):
        """The loss's ``G``, ``C``, ``yy`` and means from the pass's ``stats``, rescaled by exact powers of two.

        Constant columns (equal extremes, with an intercept) get their exact
        value as mean and zero rows in ``G`` and ``C``, as in the NumPy path.
        """
        total = self.sw_sum
        self.gram = stats["xx"] * (x_scale * x_scale / total)
        self.C = stats["xy"] * (x_scale * y_scale / total)
        self.yy_targets = stats["yy"] * (y_scale * y_scale / total)
        self.yy = float(self.yy_targets.sum())
        self._constant_target = None
        if self.fit_intercept:
            self.x_mean = stats["x_mean"] * x_scale
            self.y_mean = stats["y_mean"] * y_scale
            if np.all(stats["t_high"] == stats["t_low"]):  # (a constant target on the rows of positive weight)
                self.y_mean = self._constant_target = stats["t_high"] * y_scale
            constant = stats["x_high"] == stats["x_low"]
            if constant.any():
                self.x_mean[constant] = stats["x_high"][constant] * x_scale
                self.gram[constant] = 0.0
                self.gram[:, constant] = 0.0
                self.C[constant] = 0.0
        else:
            self.x_mean, self.y_mean = np.zeros(self.n_features), np.zeros(self.n_outputs)

    def constant_target(self):
        """Set by :meth:`set_statistics` (equal extremes of every target on the rows of positive weight)."""
        return self.__dict__.get("_constant_target")

    @property
    def n_passes(self):
        """Passes over ``X`` so far."""
        return self.design.n_passes

    def minus_two_log_likelihood(self, W, b):
        """``N sum_j log(RSS_j / N)`` with ``RSS_j / N = yy_j - 2 C_j^T W_j + W_j^T G W_j`` (see the class)."""
        N = self.n_observations
        rss = N * np.maximum(self.yy_targets - 2 * np.einsum("pm,pm->m", self.C, W)
                             + np.einsum("pm,pm->m", W, self.gram @ W), 0.0)
        return gaussian_fit_term(rss / N, self.yy_targets, N)

    def restrict(self, support, dtype=np.float64):
        """The loss on the features in ``support``: the blocks of ``G`` and ``C``."""
        support = np.asarray(support)
        sub = object.__new__(type(self))
        sub.__dict__.update(self.__dict__)
        sub.design = _Columns(self.n_samples, support.size)
        sub.n_features = support.size
        sub._lipschitz = None
        sub._coordinate_curvatures = None
        sub._coordinate_lipschitz = None
        sub.x_mean = self.x_mean[support]
        sub.gram, sub.C = self.gram[np.ix_(support, support)], self.C[support]
        return sub

    def refit(self, support, W, b, *, precise=True):
        """Least squares on ``support`` from ``G`` and ``C`` (minimum-norm when nearly collinear)."""
        support = np.asarray(support)
        if self.positive:
            return self._nonnegative_refit(support, W, b)
        W_full = np.zeros_like(W)
        if support.size:
            W_full[support] = solve_normal_equations(self.gram[np.ix_(support, support)], self.C[support])
        return W_full, b

    def _nonnegative_refit(self, support, W, b):
        """NNLS on ``support`` from ``G_S`` and ``C_S`` (:func:`nonnegative_normal_equations`)."""
        W_full = np.zeros_like(W)
        if support.size:
            W_full[support] = nonnegative_normal_equations(self.gram[np.ix_(support, support)], self.C[support])
        return W_full, b
