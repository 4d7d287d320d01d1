"""Per-output supports: every output (column of the coefficient matrix) keeps its own features.

The structures of layer-wise pruning (OBC / SparseGPT's "uniform sparsity per
row" of a weight matrix, and the N:M semi-structured pattern): the
coefficient matrix is a layer's transposed weight matrix ``W.T``
(n_inputs, n_outputs), each output a separate sparse problem. Their supports
are index arrays of shape ``(n_outputs, k)`` (row ``j``: the sorted features
kept by output ``j``) instead of one sorted feature list, and the I-OBS
solver's correction solves one restricted system per output
(:func:`~sparse_estimators.solvers.iobs`). There are no units shared by the
outputs to exchange or expand, so the splicing search and accelerated IHT's
support expansion do not apply.
"""

import numpy as np

from ._base import Structure

__all__ = ["PerOutput", "NMPattern"]


def _top_per_column(A, k):
    """Per column of ``A`` (p, m): the ``k`` largest entries' rows, sorted, shape (m, k); ties to the lower row."""
    if k <= 0:
        return np.empty((A.shape[1], 0), dtype=np.intp)
    if np.isnan(A).any():
        raise ValueError("Cannot threshold: the magnitudes contain NaN (a NaN in the input or a diverged iterate).")
    order = np.argsort(-A, axis=0, kind="stable")[:k]  # (stable: equal values keep the lower row first)
    return np.sort(order.T, axis=1)


class PerOutput(Structure):
    """Each output keeps its own ``k`` features: top-k of every column of ``W`` (n_features, n_outputs).

    ``k`` counts the features kept *per output*. The projection keeps, in
    each column, the ``k`` entries of largest magnitude (ties: the lower
    feature); non-hard operators shrink them at that column's ``tau``, the
    largest magnitude left out of it.

    The support (``return_support=True``, :meth:`support`) is an index
    array of shape ``(n_outputs, k)``: row ``j`` holds the sorted features
    kept by output ``j`` (the I-OBS correction solves one ``k x k`` system
    per output with it).

    Parameters
    ----------
    operator : ThresholdingOperator
    """

    exchanges = False
    settles = False
    #: supports are (n_outputs, k) index arrays, one row per output
    per_output = True
    unit_name = "n_features"

    def n_units(self, n_features):  # noqa: D102
        return n_features

    def _select(self, A, k):
        """The kept features per output from the magnitudes ``A`` (n_features, n_outputs)."""
        return _top_per_column(A, min(int(k), A.shape[0]))

    def _admissible(self, W):
        """``W`` as floats, made admissible by the operator (e.g. nonnegative), and as a 2-d view."""
        W = np.asarray(W)
        if W.dtype.kind != "f":
            W = W.astype(np.float64)
        admissible = getattr(self.operator, "admissible", None)
        if admissible is not None:
            W = admissible(W)
        return W, (W if W.ndim == 2 else W[:, None])

    def __call__(self, W, k, *, return_support=False):  # noqa: D102
        W, W2 = self._admissible(W)
        A = np.abs(W2)
        support = self._select(A, k)
        cols = np.arange(W2.shape[1])[:, None]
        out = np.zeros_like(W2)
        out[support, cols] = W2[support, cols]
        if not self.is_hard and support.shape[1] < W2.shape[0]:
            left = A.copy()
            left[support, cols] = -np.inf
            tau = left.max(axis=0)  # the largest magnitude left out of each column
            for j in range(W2.shape[1]):
                rows = support[j]
                out[rows, j] = np.sign(W2[rows, j]) * self.operator.shrink(A[rows, j], tau[j])
        out = out if W.ndim == 2 else out[:, 0]
        return (out, support) if return_support else out

    def support(self, W, k):
        """The support of :meth:`__call__`'s projection, without forming the projection (an array of ``W``'s size)."""
        return self._select(np.abs(self._admissible(W)[1]), k)

    def mask(self, support, shape):
        """The boolean mask of shape ``shape`` (n_features, n_outputs) of a per-output ``support``."""
        out = np.zeros(shape, dtype=bool)
        out[support, np.arange(shape[1])[:, None]] = True
        return out

    def unit_scores(self, G):  # noqa: D102
        raise NotImplementedError("per-output supports have no units shared by the outputs")

    def units(self, features):  # noqa: D102
        raise NotImplementedError("per-output supports have no units shared by the outputs")

    def features(self, units):  # noqa: D102
        raise NotImplementedError("per-output supports have no units shared by the outputs")

    def expand(self, G, mask, k):  # noqa: D102
        raise NotImplementedError("per-output supports have no support expansion")

    def refit(self, loss, support, W, b):
        """Least squares of each output on its own features (a loss with a Gram matrix ``loss.gram``).

        One batched ``k x k`` solve per output; the rows outside the support
        are 0.
        """
        gram = getattr(loss, "gram", None)
        if gram is None:
            raise NotImplementedError("a per-output refit needs a least-squares loss with a Gram matrix")
        out = np.zeros_like(W)
        if support.shape[1]:
            cols = np.arange(W.shape[1])[:, None]
            A = gram[support[:, :, None], support[:, None, :]]
            rhs = loss.C[support, cols]
            out[support, cols] = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
        return out, b


class NMPattern(PerOutput):
    """The N:M semi-structured pattern: at most ``n`` of every ``m`` consecutive features, per output.

    Each output keeps, in every block of ``m`` consecutive features
    (``0..m-1``, ``m..2m-1``, ...), the ``n`` of largest magnitude (ties: the
    lower feature), so ``k = n_features * n / m`` per output; the ``k``
    passed to the projection is ignored. ``n_features`` must be a multiple
    of ``m``. NVIDIA's sparse tensor cores run the 2:4 pattern.

    Parameters
    ----------
    operator : ThresholdingOperator
    n, m : int
        ``0 <= n <= m``, ``m >= 1``.
    """

    def __init__(self, operator, n, m):
        super().__init__(operator)
        n, m = int(n), int(m)
        if not (m >= 1 and 0 <= n <= m):
            raise ValueError(f"An N:M pattern needs 0 <= N <= M and M >= 1, got {n}:{m}.")
        self.n, self.m = n, m

    def k_per_output(self, n_features):
        """The features kept by each output: ``n_features * n / m``."""
        self._check(n_features)
        return n_features // self.m * self.n

    def _check(self, n_features):
        if n_features % self.m:
            raise ValueError(f"The pattern {self.n}:{self.m} needs a number of inputs divisible by {self.m}, "
                             f"got {n_features}.")

    def _select(self, A, k):
        p, c = A.shape
        self._check(p)
        if self.n == 0:
            return np.empty((c, 0), dtype=np.intp)
        if np.isnan(A).any():
            raise ValueError("Cannot threshold: the magnitudes contain NaN (a NaN in the input or a diverged "
                             "iterate).")
        blocks = A.reshape(p // self.m, self.m, c)
        order = np.argsort(-blocks, axis=1, kind="stable")[:, :self.n]  # (blocks, n, c)
        rows = order + (np.arange(p // self.m) * self.m)[:, None, None]
        return np.sort(rows.reshape(-1, c).T, axis=1)
