"""Shared pieces of the dask tests: data in uneven row blocks, the guard scheduler, recorded graphs."""

import numpy as np
import pytest
from sklearn.model_selection import PredefinedSplit

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dask.core import flatten  # noqa: E402
from dask.local import get_sync  # noqa: E402

CHUNKS = (100, 57, 200, 146)  # uneven row blocks of 503 rows


class _Guard:
    """A synchronous scheduler that counts its calls and fails when asked for ``X`` as a whole.

    It refuses any computation whose requested keys are blocks of ``X`` (as
    ``np.asarray(X)`` or ``X.compute()`` ask) and any whose results total
    more than half of ``X``'s bytes (``X`` gathered under another name).
    ``reads`` counts the computations whose graph holds ``X``'s blocks (the
    passes over ``X``). With ``optimise=True`` it builds the graph under
    dask's default optimisations, not the client's ``dask.config``, as a
    ``distributed`` scheduler does. With ``vectors=False`` it also refuses any result
    with more rows than a block of ``X`` (a vector of ``n`` rows gathered in
    the client: targets, weights, linear predictors; blocks persisted on the
    workers are returned block by block).
    """

    def __init__(self, X, vectors=True, optimise=False):
        self.name, self.limit, self.calls, self.reads = X.name, X.nbytes / 2, 0, 0
        self.rows = None if vectors else max(X.chunks[0])
        self.optimise = optimise

    def __call__(self, dsk, keys, **kwargs):
        for key in flatten(keys):
            name = key[0] if isinstance(key, tuple) else key
            assert name != self.name, "X was computed as a whole in the client"
        self.calls += 1
        if self.optimise and not isinstance(dsk, dict):  # (as a distributed scheduler: its own configuration)
            with dask.config.set({"optimization.fuse.active": True}):
                dsk = dsk.__dask_graph__()
        graph = dsk if isinstance(dsk, dict) else dsk.__dask_graph__()
        self.reads += any((key[0] if isinstance(key, tuple) else key) == self.name for key in graph.keys())
        result = get_sync(dsk, keys, **kwargs)
        arrays = list(flatten(result, container=(list, tuple)))
        size = sum(getattr(r, "nbytes", 0) for r in arrays)
        assert size <= self.limit, f"a computation returned {size} bytes (X has {2 * self.limit:g})"
        if self.rows is not None:
            tall = [np.shape(r) for r in arrays if np.ndim(r) and np.shape(r)[0] > self.rows]
            assert not tall, f"a computation returned arrays of shapes {tall} to the client (blocks of X: " \
                             f"at most {self.rows} rows)"
        return result


def _data(n=503, p=20, seed=0, weights=False, targets=1):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + 3.0
    coef = np.zeros((p, targets))
    coef[[1, 4, 9]] = rng.uniform(1.5, 3.0, (3, targets)) * np.array([[1], [-1], [1]])
    y = X @ coef + 0.5 * rng.standard_normal((n, targets)) + 1.0
    y = y[:, 0] if targets == 1 else y
    sw = rng.uniform(0.5, 2.0, n) if weights else None
    Xd = da.from_array(X, chunks=(CHUNKS, p))
    yd = da.from_array(y, chunks=(CHUNKS,) + y.shape[1:])
    swd = None if sw is None else da.from_array(sw, chunks=(CHUNKS,))
    return X, y, sw, Xd, yd, swd


def _assert_same_fit(a, b):
    np.testing.assert_array_equal(a.support_, b.support_)
    scale = np.abs(a.coef_).max()
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-8, atol=1e-8 * scale)


def _hash_cv(n_splits, seed):
    from sparse_estimators.model_selection._dask_cv import hash_folds

    return PredefinedSplit(hash_folds(503, n_splits, seed))


def _glm_targets(seed=0, n=503, p=20):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + 3.0
    coef = np.zeros(p)
    coef[[1, 4, 9]] = [1.0, -1.5, 0.8]
    eta = (X - 3.0) @ coef
    targets = {
        "logistic": np.array(["no", "yes"])[(rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)],
        "multinomial": np.argmax(np.column_stack([eta, -eta, 0.5 * eta]) + rng.gumbel(size=(n, 3)), axis=1),
        "poisson": rng.poisson(np.exp(0.3 * eta)).astype(float),
        "gamma": rng.gamma(2.0, np.exp(0.3 * eta) / 2.0),
        "huber": eta + rng.standard_t(2, n),
    }
    return X, targets, rng.uniform(0.5, 2.0, n)


def _point_on_support(loss, expected_loss):
    """A point on the support (1, 4, 9) of the 20 features, and both losses restricted to that support."""
    m = loss.n_outputs
    support = np.array([1, 4, 9])
    W = np.zeros((20, m))
    W[support] = np.linspace(-0.3, 0.4, 3 * m).reshape(3, m)
    b = np.linspace(0.1, -0.2, m)
    return support, W, b, loss.restrict(support), expected_loss.restrict(support)


class _Graphs:
    """A synchronous scheduler that keeps the graph (as a dict of tasks) of each computation."""

    def __init__(self):
        self.graphs = []

    def __call__(self, dsk, keys, **kwargs):
        from dask.utils import ensure_dict

        self.graphs.append(ensure_dict(dsk if isinstance(dsk, dict) else dsk.__dask_graph__()))
        return get_sync(dsk, keys, **kwargs)


def _readers(graphs, X):
    """The tasks of the computations ``graphs`` that take a block of ``X`` as input (its direct readers)."""
    from dask._task_spec import convert_legacy_graph

    blocks = set(X.__dask_keys__()[i][0] for i in range(X.numblocks[0]))
    readers = []
    for graph in graphs:
        for key, task in convert_legacy_graph(graph).items():
            if blocks & set(task.dependencies):
                readers.append(key)
    return readers
