"""A row-chunked dask array as the design of the losses read at every iteration: one ``dask.compute`` per product.

:class:`DaskLinearDesign` is :class:`~sparse_estimators.losses._design.LinearDesign`
on a dask ``X``. With ``resident=True`` (the GLM losses of
:mod:`sparse_estimators.losses._dask_glm`) the vectors of ``n`` rows stay
on the workers: products ``X W`` are dask arrays persisted there, and the
products ``X^T R``, weighted Gram matrices and column moments take dask
vectors, computed in the pass that reads ``X``; only ``p``-sized results
reach the client. Without it (least squares read at every iteration,
Huber) those vectors are NumPy arrays of the client.
"""

import numpy as np

from ._design import LinearDesign


def _is_lazy(A):
    return hasattr(A, "dask") and hasattr(A, "chunks")


class _Columns:
    """``design.X`` of a :class:`DaskLinearDesign`: indexing computes the selected columns (a counted pass).

    The refits of the losses whose vectors live in the client copy the few
    columns of a support into memory (``X[:, support]``, ``n x k``); ``X``
    as a whole is never computed.
    """

    def __init__(self, design):
        self._design = design
        self.shape, self.dtype = design.dask.shape, design.dask.dtype

    def __getitem__(self, index):
        return self._design._compute(self._design.dask[index])


class DaskLinearDesign(LinearDesign):
    """:class:`~sparse_estimators.losses._design.LinearDesign` on a row-chunked dask array: one pass per product.

    The losses whose curvature changes with the fit (logistic, multinomial,
    Poisson, Gamma, Huber) need ``X W`` and ``X^T R`` at every iteration:
    each is one ``dask.compute`` over the blocks, and so are a weighted Gram
    matrix and the columns' moments. A refit on a support runs Newton's
    method on the lazy columns of the support (each step a value, a
    gradient and ``X_S^T W X_S`` from the blocks). ``X`` and its columns
    never reach the client; with ``resident`` the vectors of ``n`` rows do
    not either (see the module docstring). ``n_passes`` counts the
    computations that read ``X``, shared with the designs of column subsets
    (:meth:`columns`).

    Parameters
    ----------
    X : dask array of shape (n_samples, n_features), one chunk across the columns
    offset, constant : as :class:`LinearDesign`
    counter : list of one int or None
        The pass counter, shared with other designs on the same ``X``.
    resident : bool, default=False
        ``X W`` as a dask array persisted on the workers; ``R`` and weights
        taken as dask arrays in ``X``'s row chunks.
    source : tuple or None, default=None
        ``(A, scale, columns)``: ``X`` is ``A[:, columns] * scale`` (``columns``
        None for all of them), the array whose blocks a point's pass reads
        directly (:mod:`~sparse_estimators.losses._dask_kernel`); None:
        ``(X, 1.0, None)``.
    """

    def __init__(self, X, offset=None, constant=None, counter=None, resident=False, source=None):
        self.dask = X
        self.source, self.scale, self.source_columns = (X, 1.0, None) if source is None else source
        self.offset = offset
        self.constant = constant
        self.shape = X.shape
        #: not an array in memory: the losses take their generic paths through this design's products
        #: (refits by Newton on :meth:`columns`, each step a few passes), as for scipy.sparse input
        self.is_sparse = True
        self.dtype = X.dtype
        self.counter = [0] if counter is None else counter
        self.resident = resident
        self.X = _Columns(self)
        # the last matvec (rows, W[rows], Z) and the X^T w of the last weighted_gram (w or its dask name, X^T w):
        # Newton's steps ask for X W again at the point just evaluated, and for X^T w with the weights of the Gram
        # matrix; each would be a pass over X (doc/changelog.rst, issue 35)
        self._last_matvec = self._last_cross = None
        #: {name of a dask weight vector: its column moments} known without a pass (see :meth:`remember_moments`)
        self._moments = {}

    @property
    def n_passes(self):
        """Computations that read ``X`` (or some of its columns) so far."""
        return self.counter[0]

    def _compute(self, *lazy):
        """One counted pass computing ``lazy`` (several results share the pass: X's blocks are read once).

        Float arrays; of an object array of one entry, the entry (see ``_dask_kernel._sum_tree``).
        """
        import dask

        self.counter[0] += 1
        out = [a[0] if np.asarray(a).dtype.kind == "O" else np.asarray(a, dtype=float)
               for a in dask.compute(*lazy)]
        return out[0] if len(out) == 1 else out

    def persist_and_compute(self, keep, small):
        """One counted pass: ``keep`` (arrays of ``n`` rows) persisted on the workers and ``small`` computed.

        Both come from one computation, so that ``X``'s blocks are read once
        for all of them; the values of ``small`` (``p``-sized) are then
        gathered from their persisted results (without reading ``X``). All
        are dask arrays, optimised as one graph: a task that both ``keep``
        and ``small`` read stays one task.
        Returns ``(persisted keep, values of small)`` (float arrays; the
        entry of an object array of one entry as it is).
        """
        import dask

        self.counter[0] += 1
        out = dask.persist(*keep, *small)
        values = dask.compute(*out[len(keep):])
        return list(out[:len(keep)]), [a[0] if a.dtype == object else np.asarray(a, dtype=float) for a in values]

    def _rows(self, A):
        """An ``n``-row array in ``X``'s row chunks (a dask array as it is, a NumPy one sent to the blocks)."""
        import dask.array as da

        if _is_lazy(A):
            return A
        return da.from_array(A, chunks=(self.dask.chunks[0],) + A.shape[1:])

    def _centred(self):
        X = self.dask.astype(np.float64)
        return X if self.offset is None else X - self.offset

    def lazy_matvec(self, W, rows=None):
        """``(X - 1 offset^T) W`` as a lazy dask array in ``X``'s row chunks (nothing computed)."""
        import dask.array as da

        rows = np.flatnonzero(np.any(W != 0, axis=1)) if rows is None else np.asarray(rows)
        if not rows.size:
            return da.zeros((self.shape[0], W.shape[1]), chunks=(self.dask.chunks[0], (W.shape[1],)))
        Z = self.dask[:, rows].astype(np.float64) @ W[rows]
        return Z if self.offset is None else Z - self.offset[rows] @ W[rows]

    def cached_matvec(self, W, rows):
        """The ``X W`` of the last :meth:`matvec` (or :meth:`remember_matvec`) if it was at ``W``, else None."""
        last = self._last_matvec
        if last is not None and np.array_equal(last[0], rows) and np.array_equal(last[1], W[rows]):
            return last[2]
        return None

    def remember_matvec(self, W, rows, Z):
        """Keep ``Z`` (``X W`` persisted on the workers, resident only) as the last :meth:`matvec`."""
        self._last_matvec = (np.array(rows), W[rows].copy(), Z)

    def matvec(self, W, rows=None):  # noqa: D102 - see LinearDesign.matvec
        rows = np.flatnonzero(np.any(W != 0, axis=1)) if rows is None else np.asarray(rows)
        if not rows.size:
            return self.lazy_matvec(W, rows) if self.resident else np.zeros((self.shape[0], W.shape[1]))
        cached = self.cached_matvec(W, rows)
        if cached is not None:
            return cached if self.resident else cached.copy()
        if self.resident:  # (kept on the workers: the value, gradient and curvatures at this point read it)
            import dask

            self.counter[0] += 1
            (Z,) = dask.persist(self.lazy_matvec(W, rows))
        else:
            Z = self._compute(self.dask[:, rows].astype(np.float64) @ W[rows])
            Z = Z if self.offset is None else Z - self.offset[rows] @ W[rows]
        self._last_matvec = (rows.copy(), W[rows].copy(), Z if self.resident else Z.copy())
        return Z

    def _rmatvec_lazy(self, R):
        return self.dask.T.astype(np.float64) @ self._rows(R if _is_lazy(R) else np.asarray(R, dtype=float))

    def _rmatvec_finish(self, G, sums):
        if self.offset is not None:
            G -= self.offset[:, None] * sums
        if self.constant is not None:
            G[self.constant] = 0.0
        return G

    def rmatvec_and_sums(self, R):
        """``(X - 1 offset^T)^T R`` and ``R.sum(axis=0)`` in one pass (``R`` a dask array of shape (n, m))."""
        G, sums = self._compute(self._rmatvec_lazy(R), R.sum(axis=0))
        return self._rmatvec_finish(G, sums), sums

    def _cross_key(self, R):
        """What identifies the vector of ``R`` (n, 1) for the cache of ``X^T w`` (see ``__init__``)."""
        if _is_lazy(R):
            return R.name if R.shape[1:] == (1,) else None
        return R[:, 0] if np.shape(R)[1:] == (1,) else None

    def _cached_cross(self, R):
        key, last = self._cross_key(R), self._last_cross
        if key is None or last is None or type(key) is not type(last[0]):
            return None
        same = key == last[0] if isinstance(key, str) else np.array_equal(key, last[0])
        return last[1].copy() if same else None

    def rmatvec(self, R):  # noqa: D102 - see LinearDesign.rmatvec
        cached = self._cached_cross(R)
        if cached is not None:
            return cached
        if _is_lazy(R):
            return self.rmatvec_and_sums(R)[0]
        R = np.asarray(R, dtype=float)
        return self._rmatvec_finish(self._compute(self._rmatvec_lazy(R)), R.sum(axis=0))

    def columns(self, support, dtype=np.float64):
        """The columns ``support`` as a lazy design (no copy; passes counted with this one's)."""
        support = np.asarray(support)
        offset = None if self.offset is None else self.offset[support]
        constant = None if self.constant is None or not self.constant[support].any() else self.constant[support]
        columns = support if self.source_columns is None else self.source_columns[support]
        design = DaskLinearDesign(self.dask[:, support], offset, constant, self.counter, self.resident,
                                  (self.source, self.scale, columns))
        design._moments = {name: second[support] for name, second in self._moments.items()}
        return design

    def dense(self):
        """The centred columns in memory (only for small column subsets)."""
        return self._compute(self._centred())

    def remember_moments(self, weights, second):
        """Keep ``second``, the :meth:`column_moments` of the dask vector ``weights``, computed by another pass."""
        second = np.array(second, dtype=float)
        if self.constant is not None:
            second[self.constant] = 0.0
        self._moments[weights.name] = second

    def column_moments(self, weights):  # noqa: D102 - see LinearDesign.column_moments
        known = self._moments.get(weights.name) if _is_lazy(weights) else None
        if known is not None:  # (from the set-up's pass)
            return known.copy()
        w = weights if _is_lazy(weights) else np.asarray(weights, dtype=float)
        Xc = self._centred()
        second = self._compute((Xc * Xc).T @ self._rows(w))
        if self.constant is not None:
            second[self.constant] = 0.0
        return second

    def _gram_lazy(self, w):
        Xc = self._centred()
        return Xc.T @ (Xc * self._rows(w)[:, None])

    def weighted_gram(self, weights):  # noqa: D102 - see LinearDesign.weighted_gram
        # (X^T w in the same pass: the Hessian's intercept column asks for it next, see __init__)
        w = weights if _is_lazy(weights) else np.asarray(weights, dtype=float)
        G, cross, total = self._compute(self._gram_lazy(w), self._rmatvec_lazy(w[:, None]), w.sum())
        self._last_cross = (self._cross_key(w[:, None]), self._rmatvec_finish(cross, np.atleast_1d(total)))
        return self._zero_constant(G)

    def weighted_grams(self, weights):
        """``[(weighted_gram(w), rmatvec(w[:, None])[:, 0], w.sum()) for w in weights]`` in one pass (dask ``w``)."""
        flat = self._compute(*self.weighted_grams_lazy(weights))
        return self.weighted_grams_finish(flat if isinstance(flat, list) else [flat])

    def weighted_grams_lazy(self, weights):
        """The lazy arrays :meth:`weighted_grams` computes (three per weight vector), for a caller's pass."""
        return [a for w in weights for a in (self._gram_lazy(w), self._rmatvec_lazy(w[:, None]), w.sum())]

    def weighted_grams_finish(self, flat):
        """:meth:`weighted_grams` from the computed values of :meth:`weighted_grams_lazy`."""
        out = []
        for i in range(len(flat) // 3):
            G, cross, total = flat[3 * i: 3 * i + 3]
            out.append((self._zero_constant(G), self._rmatvec_finish(cross, np.atleast_1d(total))[:, 0],
                        float(total)))
        return out
