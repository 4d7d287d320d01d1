"""Matrices kept as factors, the observed entries, and partial SVDs of "low rank + sparse".

The completion's iterates are factors ``U diag(s) Vt``; everything here
touches only the factors and the observed entries (a CSR pattern), never a
dense ``m x n`` matrix: memory ``O((m + n) r + nnz)``.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, svds

from .. import _policy
from ._observed import check_indices


@dataclass
class CompletionResult:
    """The outcome of :func:`complete_matrix`: the completed matrix as factors.

    The completed matrix is ``(U * s) @ Vt``; its entry ``(i, j)`` is
    ``U[i] @ (s * Vt[:, j])``, so it never needs to be formed.

    Attributes
    ----------
    U : ndarray of shape (m, rank)
        Left singular vectors (orthonormal columns).
    s : ndarray of shape (rank,)
        Singular values, decreasing.
    Vt : ndarray of shape (rank, n)
        Right singular vectors (orthonormal rows).
    n_iter : int
        Number of iterations run.
    loss_curve : ndarray of shape (n_iter,)
        The objective ``1/2 sum_observed (M_ij - A_ij)^2`` after each iteration
        (data of magnitude beyond about ``1e+-150`` are solved rescaled by a
        power of two; their objective may then not be representable: inf or 0).
    converged : bool
        The stopping rule was met before ``max_iter``.
    step_sizes : ndarray of shape (n_iter,)
        The step accepted at each iteration (multiples of ``1/L = 1``).
    time_curve : ndarray of shape (n_iter,)
        Seconds elapsed at the end of each iteration (for time-against-objective plots).
    rank : int
        The rank used (``rank`` clipped to ``min(m, n) - 1``).
    n_restarts : int
        Momentum steps discarded because they raised the objective (``'accelerated'``).
    column_offsets : ndarray of shape (n,)
        The column offsets ``mu`` (zeros unless ``center=True``): the
        completed matrix is then ``(U * s) @ Vt + mu``.
    """

    U: np.ndarray
    s: np.ndarray
    Vt: np.ndarray
    n_iter: int
    loss_curve: np.ndarray
    converged: bool
    step_sizes: np.ndarray = field(default_factory=lambda: np.empty(0))
    time_curve: np.ndarray = field(default_factory=lambda: np.empty(0))
    rank: int = 0
    n_restarts: int = 0
    column_offsets: np.ndarray = field(default_factory=lambda: np.empty(0))

    def predict(self, rows, cols):
        """Entries ``(rows[k], cols[k])`` of the completed matrix, in ``O(len(rows) rank)``.

        Parameters
        ----------
        rows, cols : array-like of int, same shape
            Row and column indices.

        Returns
        -------
        ndarray of float
        """
        rows, cols = check_indices(rows, cols, (self.U.shape[0], self.Vt.shape[1]))
        out = _entries(self.U, self.s, self.Vt, rows.ravel(), cols.ravel()).reshape(rows.shape)
        return out + self.column_offsets[cols] if self.column_offsets.size else out

    def to_dense(self):
        """The completed matrix as a dense array (``m x n`` memory: for small matrices).

        Returns
        -------
        ndarray of shape (m, n)
        """
        out = (self.U * self.s) @ self.Vt
        return out + self.column_offsets if self.column_offsets.size else out


# -- the observed entries --------------------------------------------------------------------------------
class _Observed:
    """Observed entries in CSR order and a CSR matrix ``S`` whose ``data`` is overwritten with residuals.

    ``cols`` is ``S.indices`` itself and the indices stay in scipy's index
    dtype (int32 below 2^31 entries), so the pattern is stored once: with the
    values and the residual buffer, 24 bytes per entry (int32) in all.
    """

    def __init__(self, rows, cols, values, shape):
        self._from_csr(sp.csr_matrix((np.asarray(values, dtype=np.float64), (rows, cols)), shape=shape))

    @classmethod
    def from_csr(cls, S):
        """From a CSR matrix of float64 that may be used as the residual buffer (it is sorted in place)."""
        obs = cls.__new__(cls)
        obs._from_csr(S)
        return obs

    def _from_csr(self, S):
        S.sum_duplicates()  # canonical: sorted columns within each row (scipy sums repeated coordinates)
        m, n = self.shape = S.shape
        self.S = S
        self.values = S.data.copy()
        self.cols = S.indices
        self.rows = np.repeat(np.arange(m, dtype=S.indices.dtype), np.diff(S.indptr))
        self._plan = None
        self._dense_sweep = None  # (impute/_als.py's dense arrays of the pattern, made on first use)

    def entries(self, U, s, Vt, out=None):
        """:func:`_entries` on the observed pattern (in CSR order); into ``out``.

        When at least ``_policy.DENSE_SHARE`` of the entries are observed, the rows
        are taken in blocks: one dense product ``(U s)[block] @ Vt`` (BLAS)
        and a gather of its observed entries, several times faster than
        gathering ``r`` factor values per entry.
        """
        m, n = self.shape
        if s.size == 0 or self.values.size < _policy.DENSE_SHARE * m * n:
            return _entries(U, s, Vt, self.rows, self.cols, out=out)
        if out is None:
            out = np.empty(self.values.size)
        step, local, buffer = self._block_plan()
        Us, indptr = U * s, self.S.indptr
        for start in range(0, m, step):
            stop = min(start + step, m)
            block = np.matmul(Us[start:stop], Vt, out=buffer[:(stop - start) * n].reshape(stop - start, n))
            lo, hi = indptr[start], indptr[stop]
            np.take(block.ravel(), local[lo:hi], out=out[lo:hi], mode="clip")  # ('raise' buffers)
        return out

    def entries_squared_norm(self, U, s, Vt):
        """``sum`` of the squares of :meth:`entries`, without storing them (chunks or row blocks)."""
        m, n = self.shape
        if s.size == 0 or self.values.size < _policy.DENSE_SHARE * m * n:
            return _entries_squared_norm(U, s, Vt, self.rows, self.cols)
        step, local, buffer = self._block_plan()
        Us, indptr, total = U * s, self.S.indptr, 0.0
        for start in range(0, m, step):
            stop = min(start + step, m)
            block = np.matmul(Us[start:stop], Vt, out=buffer[:(stop - start) * n].reshape(stop - start, n))
            lo, hi = indptr[start], indptr[stop]
            e = np.take(block.ravel(), local[lo:hi])
            total += float(e @ e)
        return total

    def _block_plan(self):
        """Row-block height, each entry's index in its block's flattened product (int32), and the block buffer.

        Made once per pattern and reused by every product (4 bytes per entry and one block): recomputing the
        indices and allocating a block per call cost several times the product itself (page faults of fresh
        allocations; ``doc/changelog.rst``).
        """
        if self._plan is None:
            m, n = self.shape
            step = max(1, _policy.ENTRY_CHUNK // n)
            # (below step * n <= max(ENTRY_CHUNK, n) < 2^31; built in chunks: no int64 temporary of the entries' size)
            local = np.empty(self.rows.size, dtype=np.int32)
            for start in range(0, local.size, _policy.ENTRY_CHUNK):
                sl = slice(start, start + _policy.ENTRY_CHUNK)
                local[sl] = self.rows[sl].astype(np.int64) % step * n + self.cols[sl]
            self._plan = (step, local, np.empty(step * n))
        return self._plan

    def set_data(self, values):
        """Make ``self.S`` the sparse matrix with ``values`` on the observed pattern."""
        self.S.data[:] = values
        return self.S


def _entries(U, s, Vt, rows, cols, out=None):
    """``sum_j U[rows, j] s[j] Vt[j, cols]`` for each pair, vectorised in chunks (O(len(rows) r)); into ``out``."""
    if out is None:
        out = np.zeros(rows.size)
    if s.size == 0:
        out[:] = 0.0
        return out
    Us = U * s
    V = np.ascontiguousarray(Vt.T)
    for sl, a, b in _gathered_rows(Us, V, rows, cols):
        np.einsum("ij,ij->i", a, b, out=out[sl])
    return out


def _entries_squared_norm(U, s, Vt, rows, cols):
    """``sum`` of the squared entries :func:`_entries` would return, without storing them."""
    if s.size == 0:
        return 0.0
    Us = U * s
    V = np.ascontiguousarray(Vt.T)
    total = 0.0
    for _, a, b in _gathered_rows(Us, V, rows, cols):
        e = np.einsum("ij,ij->i", a, b)
        total += float(e @ e)
    return total


def _gathered_rows(Us, V, rows, cols):
    """Chunks ``(slice, Us[rows[slice]], V[cols[slice]])`` of at most ``_policy.ENTRY_CHUNK`` entries.

    The rows are gathered by ``np.take`` into two buffers reused by every chunk (``mode='clip'``: the indices are
    valid, and ``'raise'`` buffers its output once more), of at most ``_policy.ENTRY_GATHER`` floats each: fancy
    indexing into fresh arrays of 64k rows took 1.4 to 5 times as long (doc/changelog.rst, "Gathers").
    """
    r = Us.shape[1]
    step = max(1, min(_policy.ENTRY_CHUNK, _policy.ENTRY_GATHER // max(r, 1)))
    a, b = np.empty((min(step, rows.size), r)), np.empty((min(step, rows.size), r))
    for start in range(0, rows.size, step):
        sl = slice(start, start + step)
        k = min(step, rows.size - start)
        np.take(Us, rows[sl], axis=0, out=a[:k], mode="clip")
        np.take(V, cols[sl], axis=0, out=b[:k], mode="clip")
        yield sl, a[:k], b[:k]


def _column_sums(cols, n, weights=None):
    """``np.bincount(cols, weights, minlength=n)`` in chunks (bincount copies int32 indices to intp whole)."""
    out = np.zeros(n)
    for start in range(0, cols.size, _policy.ENTRY_CHUNK):
        sl = slice(start, start + _policy.ENTRY_CHUNK)
        out += np.bincount(cols[sl], weights=None if weights is None else weights[sl], minlength=n)
    return out


def _add_gathered(out, mu, cols, sign=1.0):
    """``out += sign * mu[cols]`` in chunks (no temporary of the size of ``out``)."""
    for start in range(0, cols.size, _policy.ENTRY_CHUNK):
        sl = slice(start, start + _policy.ENTRY_CHUNK)
        out[sl] += sign * mu[cols[sl]]
    return out


# -- partial SVD of "low rank + sparse" ------------------------------------------------------------------
def _products(U, s, Vt, S, coef):
    """``Y @ B`` and ``Y.T @ B`` for ``Y = U diag(s) Vt + coef * S`` (never formed)."""

    def mul(B):
        return U @ (s[:, None] * (Vt @ B)) + coef * (S @ B)

    def rmul(B):
        return Vt.T @ (s[:, None] * (U.T @ B)) + coef * (S.T @ B)

    return mul, rmul


def _orth(B):
    return scipy.linalg.qr(B, mode="economic", check_finite=False)[0]


def _randomized_svd(U, s, Vt, S, coef, k, start, n_power, rng):
    """Top-``k`` singular triplets of ``U diag(s) Vt + coef * S`` by a randomized range finder.

    The test block is ``start`` (the previous iterate's right singular
    vectors: a warm start, since successive iterates share most of their
    row space) padded with Gaussian columns, then ``n_power`` block power
    iterations (each one product with ``Y`` and one with ``Y.T``, QR in
    between). Exact when ``k >= min(m, n)``.
    """
    m, n = S.shape
    mul, rmul = _products(U, s, Vt, S, coef)
    j = 0 if start is None else min(start.shape[1], k)
    block = np.empty((n, k))
    if j:
        block[:, :j] = start[:, :j]
    block[:, j:] = rng.standard_normal((n, k - j))
    Q = _orth(mul(block))
    for _ in range(n_power):
        Q = _orth(mul(_orth(rmul(Q))))
    Bt = rmul(Q)  # Y.T Q, so Y ~ Q Q.T Y = Q Bt.T
    W, sig, Zt = scipy.linalg.svd(Bt, full_matrices=False, check_finite=False)
    return Q @ Zt.T, sig, W.T


def _arpack_svd(U, s, Vt, S, coef, k, start, rng):
    """Top-``k`` singular triplets by ``scipy.sparse.linalg.svds`` on a LinearOperator (ARPACK)."""
    m, n = S.shape
    if k >= min(m, n):  # ARPACK needs k < min(m, n): the range finder is exact there
        return _randomized_svd(U, s, Vt, S, coef, k, None, 0, rng)
    mul, rmul = _products(U, s, Vt, S, coef)
    op = LinearOperator((m, n), matvec=lambda v: mul(v.reshape(-1, 1)).ravel(),
                        rmatvec=lambda v: rmul(v.reshape(-1, 1)).ravel(), matmat=mul, rmatmat=rmul,
                        dtype=np.float64)
    v0 = start[:, 0] if start is not None and start.shape[1] else rng.standard_normal(n)
    u_, s_, vt_ = svds(op, k=k, v0=v0, solver="arpack", random_state=rng)
    order = np.argsort(-s_, kind="stable")
    return u_[:, order], s_[order], vt_[order]


# -- small helpers ---------------------------------------------------------------------------------------
def _not_converged_message(max_iter, tol, shape, n_observed, r, offsets, hard=True):
    """The ConvergenceWarning of a completion that reached ``max_iter``.

    For a hard rank with few observed entries per free parameter it says why
    more iterations may not help: a rank-``r`` fit of data that are not of
    rank ``r`` can have no bounded minimiser when the entries are few for its
    ``r (m + n - r)`` parameters (the set of the fitted values on the
    observed entries need not be closed; e.g. rank 1 with three entries of a
    2 x 2 matrix), and the objective then keeps falling while the completed
    matrix grows.
    """
    message = (f"complete_matrix did not converge in max_iter={max_iter} iterations (tol={tol}); increase max_iter "
               "or tol.")
    m, n = shape
    parameters = r * (m + n - r) + (n if offsets else 0)
    per_parameter = n_observed / max(parameters, 1)
    if hard and per_parameter < _policy.FEW_ENTRIES_PER_PARAMETER:
        message += (f" At rank {r} the fit has {parameters} free parameters for {n_observed} observed entries "
                    f"({per_parameter:.1f} per parameter): unless the data are close to rank {r}, a hard rank this "
                    "large may converge slowly or have no bounded best fit, and more iterations then lower the "
                    "objective while the completed matrix grows and its error on the missing entries rises. A lower "
                    "rank, rank='auto' (LowRankImputer, choose_rank), or solver='als' with alpha > 0 is better posed.")
    return message


def _frobenius_distance(a, b):
    """``||A - B||_F`` for two factored matrices, through QR of the stacked factors (no cancellation)."""
    Ua, sa, Vta = a
    Ub, sb, Vtb = b
    if sa.size + sb.size == 0:
        return 0.0
    q = sa.size + sb.size
    # (mode='r' returns R with as many rows as the input: only its first q rows can be non-zero)
    Ru = scipy.linalg.qr(np.hstack([Ua, Ub]), mode="r", check_finite=False)[0][:q]
    Rv = scipy.linalg.qr(np.hstack([Vta.T, Vtb.T]), mode="r", check_finite=False)[0][:q]
    d = np.concatenate([sa, -sb])
    return float(np.linalg.norm((Ru * d) @ Rv.T))
