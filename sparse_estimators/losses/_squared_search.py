"""Least squares on a few hundred columns through Gram columns formed when first needed (abess's search set).

The important search of the splicing solver
(:func:`sparse_estimators.solvers._splice._important_search`) works on the
``k + 128`` columns of a set ``U`` and, at small ``n``, spends most of its
time in per-round overhead: a copy of the candidates' columns, their Gram
matrix, the candidates' linear predictors and residuals, and a product of
the residual with ``U``'s columns for the next gains. On the Gram matrix of
``U`` a round needs none of them: a gradient is ``G W - C``, a refit a
gather of ``G`` and a Cholesky solve. Only the Gram columns of features that
enter a support are ever read, so they are formed when first needed, a
few per round.
"""

import numpy as np

from ._base import BaseLoss
from ._squared import GramSquaredLoss, _batched_normal_equations, _cholesky_solve, _ColumnSubset, _one_size

#: the largest number of rows for which :meth:`SquaredLoss.search_restriction` works on Gram columns: above it
#: a round's new Gram columns (``n |U|`` each) cost more than the per-round overhead they save (measured
#: fits in doc/changelog.rst, issue 33 small fits)
MAX_ROWS = 500


class LazyGramSquaredLoss(GramSquaredLoss):
    """:class:`GramSquaredLoss` on the columns ``index`` of a dense :class:`SquaredLoss`, Gram columns formed lazily.

    ``gram[:, j]`` (and ``gram[j, :]``) holds valid values once column ``j``
    was asked for: :meth:`linear_predictor` and :meth:`refit_candidates`
    form the columns of the rows they read. The centred columns are copied
    once, in float64 (as the candidates' refits of :class:`SquaredLoss` copy
    them). Values are the Gram's (see :class:`GramSquaredLoss`).

    ``gram_search``: the important search runs its rounds through
    :meth:`gradient_on` and :meth:`refit_support` (``solvers/_splice.py``,
    ``_gram_rounds``), without linear predictors.
    """

    gram_search = True

    def __init__(self, loss, index):
        design = loss.design
        BaseLoss.__init__(self, _ColumnSubset(design, index), loss.sample_weight, loss.n_outputs, loss.fit_intercept)
        self.x_mean, self.y_mean, self.Y = loss.x_mean[index], loss.y_mean, loss.Y
        A = design.X[:, index]  # (a copy)
        A = A.astype(np.float64) if A.dtype != np.float64 else A
        if design.offset is not None:
            A -= design.offset[index]
        share = self.sample_weight / self.sw_sum
        self._A = A
        self._As = None if self.uniform_weights else A * share[:, None]
        self._share = float(share[0]) if self.uniform_weights and share.size else None
        self.C = (A.T @ self.Y) * self._share if self._As is None else self._As.T @ self.Y
        self.yy = float(share @ np.einsum("ij,ij->i", self.Y, self.Y))
        q = index.size
        self.gram = np.empty((q, q))  # (entries are read only in formed columns or rows)
        self._filled = np.zeros(q, dtype=bool)

    def _fill(self, rows):
        """Form the Gram columns (and rows) of the features ``rows`` (no repeats) not formed yet."""
        new = rows[~self._filled[rows]]
        if new.size:
            block = self._A[:, new]
            cols = (self._A.T @ block) * self._share if self._As is None else self._As.T @ block
            self.gram[:, new] = cols
            self.gram[new, :] = cols.T
            self._filled[new] = True

    def gradient_on(self, rows, coef):
        """The gradient ``G W - C`` (shape ``(q, m)``) at the coefficients ``coef`` on the features ``rows``."""
        self._fill(rows)
        return self.gram[rows].T @ coef - self.C

    def refit_support(self, support):
        """``(coef, value)``: least squares on the features ``support`` (sorted), its coefficients and loss value.

        From the Gram block by Cholesky, as one candidate of
        :meth:`SquaredLoss.refit_candidates` (the same pivot test); nearly
        collinear supports by :meth:`refit`.
        """
        self._fill(support)
        G = self.gram[support[:, None], support]
        coef = _cholesky_solve(G, self.C[support], 1e-8, G.diagonal().max())
        if coef is None:
            W, _, value, _ = self._refit_evaluated(support, np.zeros((self.n_features, self.n_outputs)),
                                                   np.zeros(self.n_outputs))
            return W[support], value
        # the value at the solution of G_S w = C_S: (yy - <C_S, w>) / 2, no product with G
        return coef, max(0.5 * (self.yy - float(np.vdot(self.C[support], coef))), 0.0)

    def hessian(self, W=None, b=None):
        """The whole Gram matrix (every column formed; see :meth:`GramSquaredLoss.hessian`)."""
        self._fill(np.arange(self.n_features))
        return super().hessian(W, b)

    def hessp(self, W, b, V, c):  # noqa: D102
        self._fill(np.arange(self.n_features))
        return super().hessp(W, b, V, c)

    def _gram_apply(self, v):
        self._fill(np.arange(self.n_features))
        return super()._gram_apply(v)

    def coordinate_curvatures(self):  # noqa: D102
        raise NotImplementedError("the search passes the parent loss's curvatures")

    def linear_predictor(self, W, b, rows=None):
        """``Z = [G W; W]`` (see :meth:`GramSquaredLoss.linear_predictor`), from the Gram rows of ``rows``."""
        if rows is None:
            rows = np.flatnonzero(np.any(W != 0, axis=1))
        self._fill(rows)
        q = self.n_features
        Z = np.empty((2 * q, W.shape[1]))
        Z[:q] = self.gram[rows].T @ W[rows]
        Z[q:] = W
        return Z

    def refit(self, support, W, b, *, precise=True):
        """:meth:`GramSquaredLoss.refit`, its Gram block formed first."""
        self._fill(np.asarray(support, dtype=np.intp))
        return super().refit(support, W, b, precise=precise)

    def refit_candidates(self, supports, W, b):
        """Least squares on each of ``supports`` from the gathered Gram blocks (one size: one batched solve).

        Nearly collinear supports (a Cholesky pivot below ``1e-8`` of the
        largest diagonal entry) and supports of several sizes fall back to
        one :meth:`refit` each, as in :meth:`SquaredLoss.refit_candidates`.
        """
        supports, batched = _one_size(supports)
        if not batched:
            return BaseLoss.refit_candidates(self, supports, W, b)
        rows = np.array(supports)  # (C, k)
        self._fill(np.unique(rows))
        coef = _batched_normal_equations(self.gram[rows[:, :, None], rows[:, None, :]], self.C[rows])
        if coef is None:
            return BaseLoss.refit_candidates(self, supports, W, b)
        C, q, m = rows.shape[0], self.n_features, W.shape[1]
        W_all = np.zeros((C, q, m))
        W_all[np.arange(C)[:, None], rows] = coef
        Z = np.concatenate([np.matmul(self.gram[rows].transpose(0, 2, 1), coef), W_all], axis=1)
        # the values at the solutions of G_S w = C_S: (yy - <C_S, w>) / 2, no product with G
        values = np.maximum(0.5 * (self.yy - np.einsum("ckm,ckm->c", self.C[rows], coef)), 0.0).tolist()
        return [(W_all[c], b, values[c], Z[c]) for c in range(C)]
