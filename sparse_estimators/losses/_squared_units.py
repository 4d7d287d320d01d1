"""Least-squares candidate refits of the group splicing search from the Gram block of the columns they touch.

The group search (``solvers/_splice_groups.py``) refits, at every round, a
few candidates that are unions of whole groups. :meth:`SquaredLoss.refit_candidates`
copies the union of their columns out of ``X``, forms its Gram matrix and
each candidate's linear predictor and residual: per-round work that at small
``n`` costs more than the solves. Here the centred columns the candidates
touch are copied once per fit, their inner products kept in one block (a
new column costs ``n`` times the columns known so far), and a candidate's
loss value follows from its normal equations; only the accepted candidate's
linear predictor is formed. The coefficients and values agree with
:meth:`SquaredLoss.refit_candidates` to rounding; the search refits its final
support with :meth:`SquaredLoss.refit`.
"""

import numpy as np

from .. import _policy
from ._design import LinearDesign
from ._squared import SquaredLoss, _cholesky_solve


def unit_gram_candidates(loss):
    """A :class:`UnitGramCandidates` for ``loss`` when it applies (dense least squares), else None."""
    if (type(loss) is SquaredLoss and not loss.positive and type(loss.design) is LinearDesign
            and isinstance(loss.design.X, np.ndarray)):
        return UnitGramCandidates(loss)
    return None


class UnitGramCandidates:
    """Candidate refits of a dense :class:`SquaredLoss` through the Gram block of the columns touched so far.

    Slot ``i`` holds one feature's centred column (row ``i`` of ``_At``),
    its inner products with the other known columns (``_block``, weighted by
    the sample shares) and with ``Y`` (``_C``).
    """

    def __init__(self, loss):
        self.loss = loss
        n, p = loss.design.shape
        self._share = loss.sample_weight / loss.sw_sum
        self._yy = float(self._share @ np.einsum("ij,ij->i", loss.Y, loss.Y))
        self._slot = np.full(p, -1, dtype=np.intp)
        self._n_known = 0
        size = min(p, 64)
        self._At = np.empty((size, n))
        self._block = np.empty((size, size))
        self._C = np.empty((size, loss.n_outputs))

    def _touch(self, features):
        """Copy the columns of ``features`` not known yet and add their inner products."""
        new = features[self._slot[features] < 0]
        if not new.size:
            return
        m0, m1 = self._n_known, self._n_known + new.size
        if m1 > self._At.shape[0]:
            size = max(2 * self._At.shape[0], m1)
            At, block = np.empty((size, self._At.shape[1])), np.empty((size, size))
            C = np.empty((size, self._C.shape[1]))
            At[:m0], block[:m0, :m0], C[:m0] = self._At[:m0], self._block[:m0, :m0], self._C[:m0]
            self._At, self._block, self._C = At, block, C
        design = self.loss.design
        columns = np.asarray(design.X[:, new], dtype=np.float64)
        if design.offset is not None:
            columns = columns - design.offset[new]
        self._At[m0:m1] = columns.T
        weighted = columns * self._share[:, None]
        cross = self._At[:m1] @ weighted  # (m1, new)
        self._block[:m1, m0:m1] = cross
        self._block[m0:m1, :m0] = cross[:m0].T
        self._C[m0:m1] = weighted.T @ self.loss.Y
        self._slot[new] = np.arange(m0, m1)
        self._n_known = m1

    def refit_candidates(self, supports, W, b):
        """As :meth:`SquaredLoss.refit_candidates` with ``Z_c`` None (see :meth:`linear_predictor`), or None.

        None when a candidate's Cholesky pivot is below ``1e-8`` times its
        largest diagonal entry (nearly collinear columns) or its value is at
        most ``_policy.EXPLAINED_SHARE`` of ``y``'s variance: the caller then
        evaluates the round with :meth:`SquaredLoss.refit_candidates`.
        """
        self._touch(np.unique(np.concatenate(supports)))
        out = []
        for support in supports:
            slots = self._slot[support]
            G = self._block[slots[:, None], slots]
            C = self._C[slots]
            coef = _cholesky_solve(G, C, 1e-8, G.diagonal().max())
            if coef is None:
                return None
            value = 0.5 * (self._yy - float(np.vdot(C, coef)))  # (at the solution of G w = C, no product with G)
            if not value > _policy.EXPLAINED_SHARE * self._yy:
                return None
            W_c = np.zeros_like(W)
            W_c[support] = coef
            out.append((W_c, b, value, None))
        return out

    def linear_predictor(self, W, support):
        """``Z`` of :meth:`SquaredLoss.linear_predictor` for ``W`` whose non-zero rows are in ``support`` (known)."""
        return self._At[self._slot[support]].T @ W[support]
