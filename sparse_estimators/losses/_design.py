"""The design matrix as a linear operator, with implicit column centering."""

import contextlib
import threading

import numpy as np
import scipy.sparse as sp

from .. import _policy

#: the column extremes of the array a fit is setting up (see shared_extremes), per thread
_SHARED = threading.local()


@contextlib.contextmanager
def shared_extremes(X):
    """Within the block, :func:`column_extremes` of ``X`` (this very object) is computed once.

    A fit's set-up asks for them up to three times (finite values, the
    power-of-two scale, the constant columns): two passes over ``X`` instead
    of six. Nothing is kept after the block, so a later change of ``X`` in
    place is seen.
    """
    previous = getattr(_SHARED, "entry", None)
    _SHARED.entry = [X, None]
    try:
        yield
    finally:
        _SHARED.entry = previous


def share_extremes(X, copy):
    """``copy`` (a copy of ``X``'s values, e.g. in another memory order) takes ``X``'s place in shared_extremes."""
    entry = getattr(_SHARED, "entry", None)
    if entry is not None and entry[0] is X:
        entry[0] = copy


def known_extremes(X):
    """:func:`column_extremes` of ``X`` when :func:`shared_extremes` holds ``X`` (computed if needed), else None."""
    entry = getattr(_SHARED, "entry", None)
    if entry is None or entry[0] is not X:
        return None
    if entry[1] is None:
        entry[1] = _column_extremes(X)
    return entry[1]


def column_extremes(X):
    """Each column's largest and smallest entry, as two float64 vectors; a sparse ``X`` is never densified."""
    known = known_extremes(X)
    return _column_extremes(X) if known is None else known


def _column_extremes(X):
    if type(X) is np.ndarray:  # (X.max(axis=0) and X.min(axis=0) without their Python wrappers)
        return (np.asarray(_column_reduce(np.maximum, X), dtype=float),
                np.asarray(_column_reduce(np.minimum, X), dtype=float))
    if not sp.issparse(X):
        return np.asarray(X.max(axis=0), dtype=float), np.asarray(X.min(axis=0), dtype=float)
    Xc = sp.csc_matrix(X)
    counts = np.diff(Xc.indptr)
    high, low = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    filled = np.flatnonzero(counts)
    if filled.size:
        starts = Xc.indptr[filled]
        high[filled] = np.maximum.reduceat(Xc.data, starts)
        low[filled] = np.minimum.reduceat(Xc.data, starts)
    partial = counts < X.shape[0]  # (columns with implicit zeros)
    high[partial] = np.maximum(high[partial], 0.0)
    low[partial] = np.minimum(low[partial], 0.0)
    return high, low


def _column_reduce(extreme, X):
    """``extreme.reduce(X, axis=0)`` (``np.maximum`` or ``np.minimum``) for a C-ordered array ``X``.

    A narrow ``X`` (``_policy.EXTREME_ROW_WIDTH``) is read as rows of ``r``
    of its rows, reduced, and the ``r`` partial extremes then: the same
    values (max and min are exact; among equal entries, only a zero's sign
    could come from another row, which no use of the extremes reads), in a
    third of the time where numpy's row loop would take rows of ``p``
    entries.
    """
    n, p = X.shape if X.ndim == 2 else (0, 0)
    r = _policy.EXTREME_ROW_WIDTH // max(p, 1)
    if r < 8 or n < 8 * r or not X.flags.c_contiguous:
        return extreme.reduce(X, axis=0)
    m = n - n % r
    out = extreme.reduce(extreme.reduce(X[:m].reshape(m // r, r * p), axis=0).reshape(r, p), axis=0)
    if m < n:
        extreme(out, extreme.reduce(X[m:], axis=0), out=out)
    return out


def weighted_column_sums(X, weights):
    """``X^T weights`` as a float64 vector, the product in ``X``'s dtype (a sparse ``X`` is never densified).

    A float64 ndarray ``X`` takes ``ndarray.dot``: the BLAS call of ``@``, without its dispatch and the
    weights' cast (a copy).
    """
    if type(X) is np.ndarray and X.dtype == weights.dtype:
        return X.T.dot(weights)
    return np.asarray(X.T @ weights.astype(X.dtype), dtype=float).ravel()


def constant_columns(X):
    """Mask of the columns of ``X`` whose entries are all equal (``None`` when there is none).

    With an intercept such a column carries no information; after centering
    it must be exactly zero, not the rounding residue of its mean, which can
    make it look informative (issue: a constant column selected with a
    coefficient of 1e15 on the Gram path).
    """
    if X.shape[0] == 0:
        return None
    high, low = column_extremes(X)
    mask = high == low
    return mask if mask.any() else None


def column_values(X, mask):
    """The value of each column of ``mask`` (constant columns of ``X``), as float64."""
    return column_extremes(X)[0][mask]


class LinearDesign:
    """``X`` (dense or scipy.sparse) minus an optional column offset.

    Products with ``X - 1 offset^T`` are computed without forming it, so a
    sparse ``X`` is never densified and a dense one is never copied.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    offset : ndarray of shape (n_features,) or None
        Column means to subtract (``None``: no centering).
    constant : ndarray of bool of shape (n_features,) or None
        Columns that carry no information (constant, with an intercept):
        their products with residuals, Gram rows and moments are exactly 0.
    """

    def __init__(self, X, offset=None, constant=None):
        self.X = X
        self.offset = offset
        self.constant = constant
        self.shape = X.shape
        self.is_sparse = sp.issparse(X)
        #: products are computed in X's dtype (float32 X is never upcast or
        #: copied); their results, and everything else, are float64
        self.dtype = X.dtype
        #: the last copy of a few columns, ``(key, array)``: the iterations of a fit whose support has settled,
        #: its refit and the splicing search's final refit ask for the same columns (see :meth:`_copy`)
        self._last_copy = None
        # (what the products of every iteration would otherwise look up or recompute: see matvec, rmatvec)
        self._restricts = X.shape[1] >= 8 and not (self.is_sparse and X.format == "csr")
        self._offset_column = None if offset is None else offset[:, None]
        self._dtype_str = self.dtype.str
        #: a dense float64 X (the usual case): products take float64 operands as they are and return float64
        #: arrays, with no cast of either (see _product); X.T once, not a new view per product
        self._float64 = type(X) is np.ndarray and X.dtype == np.float64
        self._XT = X.T if self._float64 else None

    def _copy(self, support, dtype):
        """``X[:, support]`` in ``dtype`` (None: X's), shared with the last request for the same columns.

        Copies of at most a quarter of the columns are kept for the next request (callers never
        write to them), so a fit copies its support once rather than at
        every iteration and refit.
        """
        if type(support) is not np.ndarray:
            support = np.asarray(support)
        if support.dtype == bool:
            support = np.flatnonzero(support)
        key = (support.tobytes(), self._dtype_str if dtype is None else np.dtype(dtype).str)
        if self._last_copy is not None and self._last_copy[0] == key:
            return self._last_copy[1]
        Xs = self.X[:, support]  # (Fortran-ordered: np.take's C-ordered copy changes the products' rounding)
        if dtype is not None and Xs.dtype != dtype:
            Xs = Xs.astype(dtype)
        if not self.is_sparse and support.size <= self.shape[1] // 4:
            self._last_copy = (key, Xs)
        return Xs

    def _cast(self, A):
        return A if A.dtype == self.dtype else A.astype(self.dtype)

    def _product(self, M, A):
        """``M @ A`` in X's dtype (``M``: X, its transpose or some of its columns), as float64.

        ``.dot``: the BLAS call of ``@``, without the matmul ufunc's overhead of about a microsecond.
        """
        if self._float64 and A.dtype == np.float64:  # (what the casts below return unchanged)
            return M.dot(A)
        return np.asarray(M.dot(self._cast(A)), dtype=float)

    def matvec(self, W, rows=None):
        """``(X - 1 offset^T) @ W`` for ``W`` of shape (p, m).

        When at most a quarter of the rows of ``W`` are non-zero (the sparse
        iterates of every solver here), only those columns of ``X`` are
        multiplied: O(n k) instead of O(n p). Not for CSR input, whose
        column selection costs a pass over ``X``.

        Parameters
        ----------
        W : ndarray of shape (p, m)
        rows : ndarray of int, optional
            Indices that include every non-zero row of ``W`` (a thresholding
            operator's support), when the caller knows them: saves searching.
        """
        if self._restricts:
            if rows is None:
                rows = (W[:, 0] if W.shape[1] == 1 else np.any(W != 0, axis=1)).nonzero()[0]  # (np.flatnonzero's)
            if rows.size > self.shape[1] // 4:
                rows = None
        else:
            rows = None
        if rows is None:
            Z = np.asarray(self.X.dot(self._cast(W)), dtype=float)
            if self.offset is not None:
                Z = Z - self.offset.dot(W)
            return Z
        if not rows.size:
            return np.zeros((self.shape[0], W.shape[1]))
        W_rows = W.take(rows, axis=0)  # (W[rows]'s copy in a third of the time)
        Z = self._product(self._copy(rows, None), W_rows)
        if self.offset is not None:
            Z -= self.offset[rows].dot(W_rows)  # (Z is the product's own array)
        return Z

    def rmatvec(self, R):
        """``(X - 1 offset^T)^T @ R`` for ``R`` of shape (n, m)."""
        return self._rmatvec(R, None if self.offset is None else np.add.reduce(R, axis=0))

    def rmatvec_and_sums(self, R):
        """:meth:`rmatvec` and ``R.sum(axis=0)`` (the GLM losses' intercept gradient), the sums computed once."""
        sums = np.add.reduce(R, axis=0)  # (R.sum(axis=0) without its Python wrapper)
        return self._rmatvec(R, sums), sums

    def _rmatvec(self, R, sums):
        G = self._product(self.X.T if self._XT is None else self._XT, R)
        if self.offset is not None:
            G -= self._offset_column * sums
        if self.constant is not None:
            G[self.constant] = 0.0
        return G

    def columns(self, support, dtype=np.float64):
        """The design restricted to the columns in ``support``, copied.

        In float64 by default (a few columns, for refits); ``dtype=None``
        keeps ``X``'s, so that products with the copy equal those with ``X``
        and a float32 ``X`` is not copied at twice its width.
        """
        Xs = self._copy(support, dtype)
        offset = None if self.offset is None else self.offset[support]
        constant = None if self.constant is None or not self.constant[support].any() else self.constant[support]
        return LinearDesign(Xs, offset, constant)

    def dense(self):
        """The centered design as a dense array (only for small column subsets)."""
        Xd = self.X.toarray() if self.is_sparse else np.asarray(self.X)
        if self.offset is not None:
            Xd = Xd - self.offset
        return Xd

    def column_moments(self, weights):
        """Weighted second moments of the centered columns, ``sum_i w_i (x_ij - o_j)^2``.

        The diagonal of :meth:`weighted_gram` without forming it: dense ``X``
        is read in blocks of at most an eighth of its rows (for ``n >= 64``; no
        ``n x p`` temporary, ``X`` never copied).

        Parameters
        ----------
        weights : ndarray of shape (n,) or (n, m)
            One weight vector, or ``m`` of them (one result column each).

        Returns
        -------
        ndarray of shape (p,) or (p, m), float64
        """
        w = self._cast(np.asarray(weights))
        if self.is_sparse:
            second = np.asarray(self.X.multiply(self.X).T @ w, dtype=float)
        else:
            second = np.zeros((self.shape[1],) + w.shape[1:])
            rows = min(256, max(8, self.shape[0] // 8))  # temporaries of at most 1/8 of X (n >= 64)
            for start in range(0, self.shape[0], rows):  # (.dot: @'s BLAS call, without the matmul ufunc's dispatch)
                block = self.X[start:start + rows]
                second += (block * block).T.dot(w[start:start + rows])
        if self.offset is not None:  # E[(x - o)^2] = E[x^2] - 2 o E[x] + o^2
            first = np.asarray(self.X.T @ w if self.is_sparse else self.X.T.dot(w), dtype=float)
            o = self.offset if w.ndim == 1 else self.offset[:, None]
            uncentred = second
            # (np.add.reduce: ndarray.sum's reduction, without its Python wrapper)
            second = second - 2 * o * first + o * o * np.add.reduce(np.asarray(weights, dtype=float), axis=0)
            lost = self._cancelled(uncentred, second)
            if lost.size:  # (means dominating the spread): from the centred columns themselves
                A = self.columns(lost).dense()
                second[lost] = (A * A).T @ np.asarray(weights, dtype=float)
        if self.constant is not None:
            second[self.constant] = 0.0
        return second

    def _cancelled(self, uncentred, centred):
        """Columns whose centred moment lost too many digits to cancellation (see ``_policy.CANCELLATION_RATIO``)."""
        if uncentred.ndim > 1:
            uncentred, centred = uncentred.max(axis=1), np.abs(centred).min(axis=1)
        lost = np.abs(uncentred) > _policy.CANCELLATION_RATIO * np.abs(centred)
        if self.constant is not None:
            lost &= ~self.constant
        return lost.nonzero()[0]  # (np.flatnonzero's result, lost being 1-D)

    def weighted_gram(self, weights):
        """``(X - 1 o^T)^T diag(weights) (X - 1 o^T)`` as a dense (p, p) float64 array.

        Dense ``X`` is read in blocks of rows, each centered before its
        product: no ``n x p`` temporary, and no cancellation between an
        uncentered product and the mean correction when the columns' means
        are large against their spread. The blocks' products are in ``X``'s
        dtype and summed in float64. A sparse ``X`` is never densified: its
        uncentered product is corrected by the means.
        """
        if self.is_sparse:
            wx = self._cast(weights)[:, None]
            Xw = self.X.multiply(wx).tocsr()
            G = np.asarray((self.X.T @ Xw).toarray(), dtype=float)
            if self.offset is not None:
                s = np.asarray(Xw.sum(axis=0), dtype=float).ravel()
                o = self.offset
                uncentred = G.diagonal().copy()
                G = G - np.outer(o, s) - np.outer(s, o) + weights.sum() * np.outer(o, o)
                lost = self._cancelled(uncentred, G.diagonal())
                if lost.size:  # rows and columns of those features from their centred (dense) columns
                    A = self.columns(lost).dense()
                    cross = np.asarray(Xw.T @ A, dtype=float) - np.outer(o, np.asarray(weights, dtype=float) @ A)
                    G[lost] = cross.T
                    G[:, lost] = cross
                    G[np.ix_(lost, lost)] = A.T @ (A * np.asarray(weights, dtype=float)[:, None])
            return self._zero_constant(G)
        weights = np.asarray(weights, dtype=float)
        uniform = weights.size == 0 or bool(np.all(weights == weights[0]))
        signed = not uniform and bool(np.any(weights < 0))  # (the multinomial Hessian's off-diagonal blocks)
        # B^T B of each block (a symmetric rank-k update: 1.2 ms against 2.0 for a general
        # product on 4096 x 100): the rows scaled by the square roots of non-negative weights
        scale = None if uniform else self._cast(weights if signed else np.sqrt(weights))[:, None]
        offset = None if self.offset is None else self._cast(self.offset)
        G = np.zeros((self.shape[1], self.shape[1]))
        rows = min(1024, max(64, self.shape[0] // 8))  # temporaries of at most 1/8 of X (n >= 512)
        for start in range(0, self.shape[0], rows):
            block = self.X[start:start + rows]
            if offset is not None:
                block = block - offset
            if signed:
                G += block.T @ (block * scale[start:start + rows])
            else:
                if scale is not None:
                    block = block * scale[start:start + rows]
                G += block.T @ block
        return self._zero_constant(G * weights[0] if uniform and weights.size else G)

    def _zero_constant(self, G):
        if self.constant is not None:
            G[self.constant] = 0.0
            G[:, self.constant] = 0.0
        return G
