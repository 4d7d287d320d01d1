"""The design matrix as a linear operator, with implicit column centering."""

import numpy as np
import scipy.sparse as sp


class LinearDesign:
    """``X`` (dense or scipy.sparse) minus an optional column offset.

    Products with ``X - 1 offset^T`` are computed without forming it, so a
    sparse ``X`` is never densified and a dense one is never copied.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    offset : ndarray of shape (n_features,) or None
        Column means to subtract (``None``: no centering).
    """

    def __init__(self, X, offset=None):
        self.X = X
        self.offset = offset
        self.shape = X.shape
        self.is_sparse = sp.issparse(X)

    def matvec(self, W):
        """``(X - 1 offset^T) @ W`` for ``W`` of shape (p, m).

        When at most a quarter of the rows of ``W`` are non-zero (the sparse
        iterates of every solver here), only those columns of ``X`` are
        multiplied: O(n k) instead of O(n p). Not for CSR input, whose
        column selection costs a pass over ``X``.
        """
        rows = None
        if self.shape[1] >= 8 and not (self.is_sparse and self.X.format == "csr"):
            nonzero = np.flatnonzero(np.any(W != 0, axis=1))
            if nonzero.size <= self.shape[1] // 4:
                rows = nonzero
        if rows is None:
            Z = np.asarray(self.X @ W)
        else:
            Z = np.asarray(self.X[:, rows] @ W[rows]) if rows.size else np.zeros((self.shape[0], W.shape[1]))
        if self.offset is not None:
            Z = Z - (self.offset @ W if rows is None else self.offset[rows] @ W[rows])
        return Z

    def rmatvec(self, R):
        """``(X - 1 offset^T)^T @ R`` for ``R`` of shape (n, m)."""
        G = np.asarray(self.X.T @ R)
        if self.offset is not None:
            G = G - np.outer(self.offset, R.sum(axis=0))
        return G

    def columns(self, support):
        """The design restricted to the columns in ``support``."""
        Xs = self.X[:, support]
        offset = None if self.offset is None else self.offset[support]
        return LinearDesign(Xs, offset)

    def dense(self):
        """The centered design as a dense array (only for small column subsets)."""
        Xd = self.X.toarray() if self.is_sparse else np.asarray(self.X)
        if self.offset is not None:
            Xd = Xd - self.offset
        return Xd

    def weighted_gram(self, weights):
        """``(X - 1 o^T)^T diag(weights) (X - 1 o^T)`` as a dense (p, p) array."""
        Xw = self.X.multiply(weights[:, None]).tocsr() if self.is_sparse else self.X * weights[:, None]
        G = np.asarray((self.X.T @ Xw).toarray() if self.is_sparse else self.X.T @ Xw)
        if self.offset is not None:
            s = np.asarray(Xw.sum(axis=0)).ravel()
            o = self.offset
            G = G - np.outer(o, s) - np.outer(s, o) + weights.sum() * np.outer(o, o)
        return G
