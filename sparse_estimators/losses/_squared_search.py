"""Least squares on abess's search set ``U``, with the Gram block of the columns its candidates touch.

The important search of the splicing solver
(:func:`sparse_estimators.solvers._splice_abess._important_search`) works on the
``k + 128`` columns of a set ``U`` and, at small ``n``, spends most of its
time in per-round overhead: for every candidate of a round a copy of the
union of their columns, the union's Gram matrix, each candidate's linear
predictor and residual. Here a round costs one gradient (a residual and a
product with ``U``'s columns), a refit one gather from a Gram block and one
Cholesky solve, and a candidate's loss value follows from the normal
equations. The block holds the inner products of the columns that candidates
touched so far in ``U`` (its current support and the features tried for
it): a new column costs ``n`` times the block's size, not ``n |U|``.
"""

import numpy as np

from .._utils import vdot as _vdot
from ._squared import GramSquaredLoss, _cholesky_solve, _ColumnSubset


class LazyGramSquaredLoss(GramSquaredLoss):
    """:class:`GramSquaredLoss` on the columns ``index`` of a dense :class:`SquaredLoss`, its Gram matrix formed lazily.

    The splicing's important search reads it through :meth:`gradient_on` and
    :meth:`refit_support` (``gram_search``; ``_gram_rounds`` in
    ``solvers/_splice_abess.py``), which need only the Gram block of the columns
    the candidates touch; the methods of :class:`GramSquaredLoss` (other
    searches, fallbacks) form the whole Gram matrix when first called. The
    centred columns are copied once, in float64 (as the candidates' refits
    of :class:`SquaredLoss` copy them).

    ``previous``: a restriction of the same loss to as many features that
    is no longer used; its arrays are reused (a search over successive sets
    ``U`` allocates them once: fresh arrays of this size cost the system's
    page faults, more than the copy itself at small ``n``).
    """

    gram_search = True

    def __init__(self, loss, index, previous=None):
        design = loss.design
        self._inherit(loss, _ColumnSubset(design, index))
        self.x_mean, self.y_mean, self.Y = loss.x_mean[index], loss.y_mean, loss.Y
        n, q = design.shape[0], index.size
        reuse = previous is not None and previous._A.shape == (n, q)
        if design.X.dtype == np.float64:
            A = previous._A if reuse else np.empty((n, q))
            np.take(design.X, index, axis=1, out=A, mode="clip")  # (the indices are valid)
        else:
            A = design.X[:, index].astype(np.float64)
        if design.offset is not None:
            A -= design.offset[index]
        share = self.sample_weight / self.sw_sum
        self._A = A
        self._As = None if self.uniform_weights else A * share[:, None]
        self._share = float(share[0]) if self.uniform_weights and share.size else None
        self.C = self._product(A, self.Y)  # X_U^T S Y / sum(S)
        # (the same for every set U: the previous restriction's, when one)
        self.yy = previous.yy if previous is not None else float(share @ np.einsum("ij,ij->i", self.Y, self.Y))
        # the Gram block of the columns touched: block[i, j] for the slots i, j < n_known of known[:n_known]
        # (grown when full: the candidates of a search touch far fewer than q columns)
        self._block = previous._block if reuse else np.empty((min(q, 32),) * 2)
        # the known columns in slot order, Fortran-ordered (n, capacity): their leading slots are the same array as
        # _A[:, known[:n_known]] (values, strides), so the products with them round alike, without a new gather
        self._columns = previous._columns if reuse else np.empty((self._block.shape[0], n)).T
        self._known = previous._known if reuse else np.empty(q, dtype=np.intp)
        if reuse:  # (the previous slots back to -1: only its known columns were set)
            self._slot = previous._slot
            self._slot[self._known[:previous._n_known]] = -1
        else:
            self._slot = np.full(q, -1, dtype=np.intp)
        self._n_known = 0
        self._gram = None

    def _inherit(self, loss, design):
        """``BaseLoss.__init__`` on ``design`` with ``loss``'s weights, their statistics copied, not recomputed."""
        self.design = design
        self.n_samples, self.n_features = design.shape
        self.n_outputs, self.fit_intercept, self.alpha = loss.n_outputs, loss.fit_intercept, 0.0
        self.sample_weight, self.sw_sum, self._sample_share = loss.sample_weight, loss.sw_sum, loss._sample_share
        self.n_positive, self.n_observations = loss.n_positive, loss.n_observations
        self.uniform_weights = loss.uniform_weights
        self._lipschitz = None

    def _product(self, A, B):
        """``A^T S B / sum(S)`` for columns ``A`` of ``self._A`` and ``B`` (the weights of ``_As``)."""
        # (.dot: @'s BLAS call, without the matmul ufunc's dispatch)
        return A.T.dot(B) * self._share if self._As is None else A.T.dot(B * self._share_column)

    @property
    def _share_column(self):
        return (self.sample_weight / self.sw_sum)[:, None]

    @property
    def gram(self):
        """The whole Gram matrix ``X_U^T S X_U / sum(S)`` (centred), formed when first read."""
        if self._gram is None:
            self._gram = self._product(self._A, self._A)
        return self._gram

    def _touch(self, columns):
        """Add the inner products of ``columns`` (no repeats, none known) with the known ones and each other."""
        m0, m1 = self._n_known, self._n_known + columns.size
        if m1 > self._block.shape[0]:
            size = min(self.n_features, max(2 * self._block.shape[0], m1))
            block = np.empty((size, size))
            block[:m0, :m0] = self._block[:m0, :m0]
            self._block = block
            known_columns = np.empty((size, self._A.shape[0])).T
            known_columns[:, :m0] = self._columns[:, :m0]
            self._columns = known_columns
        self._known[m0:m1] = columns
        self._slot[columns] = np.arange(m0, m1)
        new = self._A[:, columns]  # (Fortran-ordered, as every gather of known columns was)
        self._columns[:, m0:m1] = new
        cross = self._product(self._columns[:, :m1], new)  # (m1, new)
        self._block[:m1, m0:m1] = cross
        self._block[m0:m1, :m0] = cross[:m0].T
        self._n_known = m1

    def gradient_on(self, rows, coef):
        """The gradient ``X_U^T S (X_rows coef - Y) / sum(S)``, shape ``(q, m)``, of the fit ``coef`` on ``rows``."""
        # (the product with Z - Y: the negated values of the product with Y - Z, exactly, without a negation)
        return self._product(self._A, self._A[:, rows].dot(coef) - self.Y)

    def refit_support(self, support):
        """``(coef, value)``: least squares on the features ``support`` (sorted), its coefficients and loss value.

        From the Gram block by Cholesky, as one candidate of
        :meth:`SquaredLoss.refit_candidates` (the same pivot test); nearly
        collinear supports by least squares on the columns
        (:meth:`SquaredLoss.refit`).
        """
        slots = self._slot[support]
        # (a ufunc reduce: ndarray.any's Python wrapper cost a tenth of a refit at k = 10)
        if slots.size and np.minimum.reduce(slots) < 0:
            self._touch(support[slots < 0])
            slots = self._slot[support]
        # (the gathers by np.take: the same values and C order as block[slots[:, None], slots], at half the cost)
        G = self._block.take(slots, 0).take(slots, 1)
        C = self.C.take(support, 0)
        coef = _cholesky_solve(G, C, 1e-8, np.maximum.reduce(G.diagonal()))
        if coef is None:  # (the columns are the parent's, centred: _ColumnSubset)
            W, _ = super(GramSquaredLoss, self).refit(support, *self.zeros())
            coef = W[support]
            R = self.Y - self._A[:, support] @ coef
            return coef, 0.5 * float(self.sample_weight @ np.einsum("ij,ij->i", R, R)) / self.sw_sum
        # the value at the solution of G_S w = C_S: (yy - <C_S, w>) / 2, no product with G
        return coef, max(0.5 * (self.yy - float(_vdot(C, coef))), 0.0)
