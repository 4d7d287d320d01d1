"""Dask input, the GLM losses: fits equal to NumPy's, passes counted, one task per block of X."""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from _dask_problems import (  # noqa: E402
    CHUNKS,
    _assert_same_fit,
    _glm_targets,
    _Graphs,
    _Guard,
    _point_on_support,
    _readers,
)

from sparse_estimators import (  # noqa: E402
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    RegularizedIHTClassifier,
)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("cls, family, params", [
    (IHTClassifier, "logistic", {"k": 3}), (IOBSClassifier, "logistic", {"k": 3}),
    (RegularizedIHTClassifier, "logistic", {"k": 3}), (IHTClassifier, "logistic", {"k": None}),
    (IHTClassifier, "logistic", {"k": 2, "groups": np.arange(20) // 2}),
    (IHTClassifier, "logistic", {"k": 3, "always_select": [0], "class_weight": "balanced"}),
    (IHTClassifier, "multinomial", {"k": 3}), (IOBSClassifier, "multinomial", {"k": 2}),
], ids=["iht", "iobs", "regularized", "auto_k", "groups", "always_select", "multinomial", "iobs_multinomial"])
def test_classifier_on_dask_equals_numpy_fit(cls, family, params):
    X, targets, sw = _glm_targets()
    y = targets[family]
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    expected = cls(**params).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd, vectors=False)  # (labels, weights and linear predictors stay in their blocks: issue 35)
    with dask.config.set(scheduler=guard):
        got = cls(**params).fit(Xd, da.from_array(y, chunks=(CHUNKS,)),
                                sample_weight=da.from_array(sw, chunks=(CHUNKS,)))
    _assert_same_fit(expected, got)
    np.testing.assert_array_equal(got.classes_, expected.classes_)
    assert got.n_passes_ == guard.reads


@pytest.mark.parametrize("loss", ["poisson", "gamma", "huber"])
@pytest.mark.parametrize("k", [3, None])
def test_glm_regressor_on_dask_equals_numpy_fit(loss, k):
    X, targets, sw = _glm_targets()
    y = targets[loss]
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    expected = IHTRegressor(k=k, loss=loss).fit(X, y, sample_weight=sw)
    guard = _Guard(Xd, vectors=loss == "huber")  # (Huber's scale is a weighted median of the n residuals)
    with dask.config.set(scheduler=guard):
        got = IHTRegressor(k=k, loss=loss).fit(Xd, da.from_array(y, chunks=(CHUNKS,)), sample_weight=sw)
    _assert_same_fit(expected, got)
    assert got.n_passes_ == guard.reads


def test_y_computed_from_X_reads_each_block_once():
    # y built from X (as in a generated data set): the pass reads each block of X once, not once for X and once
    # for y (optimising X's and y's graphs apart fused X's tasks into y's, and every block was generated twice)
    generated = []

    def block(block_id=None):
        generated.append(block_id[0])
        return np.random.default_rng(block_id[0]).standard_normal((50, 6))

    X = da.map_blocks(block, chunks=((50,) * 4, (6,)), dtype=float, meta=np.empty((0, 0)))
    y = X @ np.array([1.0, 0, 0, -2.0, 0, 0]) + 0.1 * da.ones(200, chunks=50)
    with dask.config.set(scheduler="synchronous"):
        est = IHTRegressor(k=2).fit(X, y)
    assert sorted(generated) == [0, 1, 2, 3]
    assert est.n_passes_ == 1
    np.testing.assert_array_equal(est.support_, [0, 3])


def test_passes_count_the_reads_of_X_under_a_scheduler_that_optimises(monkeypatch):
    # a distributed scheduler optimises a computation's graph itself, under its own configuration: a point's X W
    # (persisted, an array) and its sums (a Delayed) were optimised apart, X W's graph took the block's task into
    # its own, and every block was read and its kernel run twice per point (on a LocalCluster the second read,
    # still running when the sums were in, served the next pass: n_passes_ 34 for 32.6 passes' reads at 10^6 rows)
    from sparse_estimators.losses import _dask_kernel

    X, targets, _ = _glm_targets(n=800)
    generated, kernels = [], []

    def block(block_id=None):
        generated.append(block_id[0])
        return X[100 * block_id[0]:100 * (block_id[0] + 1)]

    def kernel(*args, _f=_dask_kernel._point_block, **kwargs):
        kernels.append(1)
        return _f(*args, **kwargs)

    monkeypatch.setattr(_dask_kernel, "_point_block", kernel)
    Xd = da.map_blocks(block, chunks=((100,) * 8, (20,)), dtype=float, meta=np.empty((0, 0)))
    y = targets["logistic"]
    expected = IHTClassifier(k=3).fit(X, y)
    guard = _Guard(Xd, vectors=False, optimise=True)
    with dask.config.set(scheduler=guard):
        got = IHTClassifier(k=3).fit(Xd, da.from_array(y, chunks=100))
    _assert_same_fit(expected, got)
    assert len(generated) == 8 * got.n_passes_
    assert np.array_equal(np.bincount(generated), np.full(8, got.n_passes_))
    assert 0 < len(kernels) < 8 * got.n_passes_ and len(kernels) % 8 == 0


def test_newton_step_products_share_passes():
    # a Newton step on dask data asks for X W at the point it has just evaluated, and for X^T w with the
    # weights of its weighted Gram matrix (the intercept's column): each cost one more pass over X (a logistic
    # IHTClassifier(k=10) fit took 159 passes, 106 with both served from the pass that computed them)
    from sparse_estimators.losses._dask_design import DaskLinearDesign
    from sparse_estimators.losses._design import LinearDesign

    X, _, sw = _glm_targets()
    offset = X.mean(axis=0)
    constant = np.zeros(20, dtype=bool)
    constant[7] = True
    design = DaskLinearDesign(da.from_array(X, chunks=(CHUNKS, 20)), offset, constant)
    reference = LinearDesign(X, offset, constant)
    W = np.zeros((20, 1))
    W[[1, 4, 9], 0] = [1.0, -1.5, 0.8]
    guard = _Guard(design.dask)
    with dask.config.set(scheduler=guard):
        Z = design.matvec(W)
        Z[:] = 0.0  # (the caller's copy: the next answer is unchanged)
        np.testing.assert_allclose(design.matvec(W.copy()), reference.matvec(W), rtol=1e-12)
        assert design.n_passes == guard.calls == 1
        G = design.weighted_gram(sw)
        cross = design.rmatvec(sw[:, None].copy())
        assert design.n_passes == guard.calls == 2
        np.testing.assert_allclose(G, reference.weighted_gram(sw), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(cross, reference.rmatvec(sw[:, None]), rtol=1e-12, atol=1e-9)
        assert cross[7, 0] == 0.0
        # other points and other vectors: a pass each
        W[2, 0] = 0.5
        np.testing.assert_allclose(design.matvec(W), reference.matvec(W), rtol=1e-12)
        np.testing.assert_allclose(design.rmatvec(2 * sw[:, None]), reference.rmatvec(2 * sw[:, None]),
                                   rtol=1e-12, atol=1e-9)
        assert design.n_passes == guard.calls == 4


def test_classifier_labels_from_a_dataframe_and_class_weight_dict():
    # string labels of a dask Series and a class_weight dict: encoded and weighted block by block (issue 35)
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + 0.3 * rng.standard_normal((300, 3)), axis=1)]
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    weights = {"a": 2.0, "b": 1.0, "c": 0.5}
    Xd = dd.from_pandas(frame, npartitions=3)
    X_blocks = da.from_array(X, chunks=(100, 6))
    guard = _Guard(X_blocks, vectors=False)
    guard.limit = np.inf  # (X is 14 kB: the statistics of 3 classes weigh more than half of it)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (dask converts the string dtype to object)
        got = IHTClassifier(k=3, class_weight=weights).fit(Xd, dd.from_pandas(pd.Series(y), npartitions=3))
    with dask.config.set(scheduler=guard):
        got_arrays = IHTClassifier(k=3, class_weight=weights).fit(X_blocks, da.from_array(y, chunks=100))
    expected = IHTClassifier(k=3, class_weight=weights).fit(frame, y)
    _assert_same_fit(expected, got)
    _assert_same_fit(expected, got_arrays)
    np.testing.assert_array_equal(got.classes_, ["a", "b", "c"])


@pytest.mark.parametrize("family", ["logistic", "multinomial"])
def test_point_evaluated_in_one_pass(family):
    # a point's linear predictor, loss value and gradient (and, on a refit's columns, its Hessian) come from one
    # computation reading X once: X W had been persisted by one pass, its value computed by another computation
    # and the gradient and Hessian read X once more each (3 passes and 4 computations per Newton step of a refit)
    X, targets, sw = _glm_targets()
    y = targets[family]
    est = IHTClassifier(k=3)
    expected_loss, _ = est._setup(X, y, sw)
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    guard = _Guard(Xd, vectors=False)
    with dask.config.set(scheduler=guard):
        loss, _ = est._setup(Xd, da.from_array(y, chunks=(CHUNKS,)), da.from_array(sw, chunks=(CHUNKS,)))
    support, W, b, sub, expected_sub = _point_on_support(loss, expected_loss)
    with dask.config.set(scheduler=guard):
        for lo, ref, V in [(loss, expected_loss, W), (sub, expected_sub, W[support])]:
            calls, reads, passes = guard.calls, guard.reads, lo.design.n_passes
            f, gW, gb = lo.value_and_gradient(V, b)
            assert (guard.reads - reads, lo.design.n_passes - passes) == (1, 1)
            if lo is sub:  # (the Hessian came in the same pass)
                np.testing.assert_allclose(lo.hessian(V, b), ref.hessian(V, b), rtol=1e-10, atol=1e-12)
            # the predictor at that point and its value: no computation
            assert lo.value_from_z(lo.linear_predictor(V, b), V) == f
            assert guard.calls - calls <= 2 and guard.reads - reads == 1
            f_ref, gW_ref, gb_ref = ref.value_and_gradient(V, b)
            np.testing.assert_allclose(f, f_ref, rtol=1e-12)
            np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-12)
        if family == "logistic":
            # a refit's result is the last point its Newton steps evaluated: its X W and value are kept (no pass)
            W_r, b_r = loss.refit(support, W, b)
            reads = guard.reads
            f_r = loss.value_from_z(loss.linear_predictor(W_r, b_r), W_r)
            assert guard.reads == reads
            np.testing.assert_allclose(f_r, expected_loss.value(W_r, b_r), rtol=1e-12)


@pytest.mark.parametrize("family", ["logistic", "multinomial"])
def test_point_pass_is_one_task_per_block(family):
    # a point's pass is one task per block of X (its product, loss, gradient and support Hessian, in tiles of the
    # block), one picking the block's X W out and a tree summing the small results: built from dask array
    # operations it had been about 20 tasks per block (30 with the Hessian), each charged the scheduler's overhead
    X, targets, sw = _glm_targets(n=1600)
    y = targets[family]
    expected_loss, _ = IHTClassifier(k=3)._setup(X, y, sw)
    chunks = 100  # (16 blocks)
    with dask.config.set(scheduler="sync"):
        loss, _ = IHTClassifier(k=3)._setup(da.from_array(X, chunks=(chunks, 20)), da.from_array(y, chunks=chunks),
                                            da.from_array(sw, chunks=chunks))
    n_blocks = X.shape[0] // chunks
    inputs = set()
    for array in (loss.design.dask, loss.Y, loss.sample_weight):
        inputs |= set(array.__dask_graph__())
    support, W, b, sub, expected_sub = _point_on_support(loss, expected_loss)
    for lo, ref, V, evaluate in [(loss, expected_loss, W, "value_and_gradient"),
                                 (loss, expected_loss, 0.5 * W, "trial"),
                                 (sub, expected_sub, W[support], "value_and_gradient")]:
        graphs = _Graphs()
        with dask.config.set(scheduler=graphs):
            passes = lo.design.n_passes
            if evaluate == "trial":  # (a trial step's point: its gradient comes in its pass, asked for next)
                Z = lo.linear_predictor(V, b)
                f, (gW, gb) = lo.value_from_z(Z, V), lo.gradient_from_z(Z, V)
            else:
                f, gW, gb = lo.value_and_gradient(V, b)
            assert lo.design.n_passes - passes == 1
        tasks = [key for graph in graphs.graphs for key in graph if key not in inputs]
        # one per block, one picking its X W out, the sum tree (fewer than a task per block)
        assert len(tasks) < 3 * n_blocks, (evaluate, len(tasks))
        f_ref, gW_ref, gb_ref = ref.value_and_gradient(V, b)
        np.testing.assert_allclose(f, f_ref, rtol=1e-12)
        np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-12)
        if lo is sub:  # (the Hessian came in the same pass)
            np.testing.assert_allclose(lo.hessian(V, b), ref.hessian(V, b), rtol=1e-10, atol=1e-12)
    # a refit's result: the whole loss's value and gradient there come from the refit's last pass (no pass)
    with dask.config.set(scheduler="sync"):
        W_r, b_r = loss.refit(support, W, b)
        passes = loss.design.n_passes
        Z = loss.linear_predictor(W_r, b_r)
        f, (gW, gb) = loss.value_from_z(Z, W_r), loss.gradient_from_z(Z, W_r)
        assert loss.design.n_passes == passes
    f_ref, gW_ref, gb_ref = expected_loss.value_and_gradient(W_r, b_r)
    np.testing.assert_allclose(f, f_ref, rtol=1e-12)
    np.testing.assert_allclose(gW, gW_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("family", ["logistic", "multinomial", "poisson", "gamma"])
def test_set_up_pass_is_one_task_per_block_and_gives_the_curvatures_and_first_gradient(family):
    # the set-up's pass reads each block of X in one task (finite values, extremes, weighted sums, the centred
    # columns' second moments and X^T (s Y)); the coordinate curvatures and the gradient at W = 0 come from it
    # (no pass, nor any computation): each had been a pass of its own, and the set-up read X in 4 tasks per block
    X, targets, sw = _glm_targets(n=1600)
    y = targets[family]
    est = IHTClassifier(k=3) if family in ("logistic", "multinomial") else IHTRegressor(k=3, loss=family)
    expected_loss, _ = est._setup(X, y, sw)
    Xd = da.from_array(X, chunks=(100, 20))  # (16 blocks)
    graphs = _Graphs()
    with dask.config.set(scheduler=graphs):
        loss, _ = est._setup(Xd, da.from_array(y, chunks=100), da.from_array(sw, chunks=100))
    assert loss.design.n_passes == 1
    assert len(_readers(graphs.graphs, Xd)) == Xd.numblocks[0], len(_readers(graphs.graphs, Xd))
    guard = _Guard(Xd, vectors=False)
    with dask.config.set(scheduler=guard):
        curvatures = loss.coordinate_curvatures()
        W = np.zeros((20, loss.n_outputs))
        b = loss.initial_intercept()
        f, gW, gb = loss.value_and_gradient(W, b)
        W_sub = np.zeros((3, loss.n_outputs))
        sub = loss.restrict([1, 4, 9])
        sub_gW, sub_gb = sub.gradient_from_z(sub.linear_predictor(W_sub, b), W_sub)
    # (nothing computed: the value at W = 0 from the weighted label sums, as the gradient)
    assert guard.calls == 0 and loss.design.n_passes == 1
    np.testing.assert_allclose(curvatures, expected_loss.coordinate_curvatures(), rtol=1e-10)
    f_ref, gW_ref, gb_ref = expected_loss.value_and_gradient(W, b)
    np.testing.assert_allclose(f, f_ref, rtol=1e-12)
    np.testing.assert_allclose(gW, gW_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sub_gW, gW_ref[[1, 4, 9]], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sub_gb, gb_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("family", ["logistic", "multinomial"])
def test_hessian_and_gram_products_are_one_task_per_block(family):
    # a Hessian-vector product (IOBS's curvature steps) and a product with the weighted Gram matrix (the Lanczos
    # iterations of lipschitz()) are one pass each, one task per block of X computing X V in its tiles (and a
    # tree summing the small results): built from dask array operations they had been about 20 tasks per block
    X, targets, sw = _glm_targets(n=1600)
    y = targets[family]
    expected_loss, _ = IHTClassifier(k=3)._setup(X, y, sw)
    with dask.config.set(scheduler="sync"):
        loss, _ = IHTClassifier(k=3)._setup(da.from_array(X, chunks=(100, 20)), da.from_array(y, chunks=100),
                                            da.from_array(sw, chunks=100))
    n_blocks = 16
    support, W, b, _, _ = _point_on_support(loss, expected_loss)
    rng = np.random.RandomState(1)
    V, c, v = rng.standard_normal(W.shape), rng.standard_normal(W.shape[1]), rng.standard_normal(21)
    V[[0, 5]] = 0.0  # (the product reads the non-zero rows of V)
    with dask.config.set(scheduler="sync"):
        Z = loss.linear_predictor(W, b)  # (the point's predictor, persisted: its pass not counted below)
    inputs = set()
    for array in (loss.design.dask, loss.Y, loss.sample_weight, Z):
        inputs |= set(array.__dask_graph__())
    for name, product, reference in [
        ("hessp", lambda: loss.hessp(W, b, V, c), expected_loss.hessp(W, b, V, c)),
        ("gram", lambda: (loss._gram_apply(v),), (expected_loss._gram_apply(v),)),
    ]:
        graphs = _Graphs()
        passes = loss.design.n_passes
        with dask.config.set(scheduler=graphs):
            got = product()
        assert loss.design.n_passes - passes == 1 and len(graphs.graphs) == 1
        tasks = [key for key in graphs.graphs[0] if key not in inputs]
        assert len(tasks) < 2 * n_blocks, (name, len(tasks))
        for a, r in zip(got, reference, strict=True):
            np.testing.assert_allclose(a, r, rtol=1e-10, atol=1e-12)


def test_cox_models_refuse_a_dask_X_instead_of_gathering_it():
    from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis

    X, _, _ = _glm_targets()
    rng = np.random.RandomState(0)
    y = np.empty(X.shape[0], dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = rng.uniform(size=X.shape[0]) < 0.7, rng.exponential(size=X.shape[0])
    Xd = da.from_array(X, chunks=(CHUNKS, 20))
    guard = _Guard(Xd)
    for cls in (IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis):
        with dask.config.set(scheduler=guard), pytest.raises(TypeError, match="does not fit on a dask X"):
            cls(k=3).fit(Xd, y)
    assert guard.calls == 0
    # predictions of a model fitted in memory stay lazy, block by block
    est = IHTCoxPHSurvivalAnalysis(k=3).fit(X, y)
    with dask.config.set(scheduler=guard):
        risk = est.predict(Xd)
        assert hasattr(risk, "dask")
        np.testing.assert_allclose(risk.compute(), est.predict(X), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("loss, params", [
    ("poisson", {}), ("gamma", {}), ("squared_error", {}), ("squared_error", {"precompute": False}),
    ("logistic", {}), ("huber", {}),
], ids=["poisson", "gamma", "squared_gram", "squared_passes", "logistic", "huber"])
def test_iobs_on_a_wide_dask_X_takes_the_dense_route(loss, params):
    # with fewer rows than features, 'auto' chose routes that index X in memory (Woodbury's n x n kernel,
    # the screened rows, CG), which failed on a dask X; it takes the p x p Hessian of one pass per iterate
    # (Huber's, whose loss is made apart from the others', still took Woodbury's kernel: a TypeError)
    from sparse_estimators import IOBSRegressor

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 120))
    w = np.zeros(120)
    w[:3] = 0.6
    z = X @ w
    y = {"poisson": rng.poisson(np.exp(z)), "gamma": rng.gamma(2.0, np.exp(z) / 2.0),
         "squared_error": z + 0.1 * rng.standard_normal(60), "logistic": (z + 0.3 * rng.standard_normal(60) > 0),
         "huber": z + 0.1 * rng.standard_normal(60) + np.r_[5.0, 5.0, np.zeros(58)]}
    if loss == "logistic":
        make = lambda **kw: IOBSClassifier(k=3, **kw)  # noqa: E731
    else:
        make = lambda **kw: IOBSRegressor(k=3, loss=loss, **params, **kw)  # noqa: E731
    Xd = da.from_array(X, chunks=(20, 120))
    lazy = make().fit(Xd, y[loss])
    in_memory = make(hessian="dense").fit(X, y[loss])
    np.testing.assert_allclose(lazy.coef_, in_memory.coef_, rtol=1e-8, atol=1e-10)
    assert np.array_equal(np.flatnonzero(lazy.coef_), [0, 1, 2])
    with pytest.raises(ValueError, match="'hessian' parameter must be 'auto' or 'dense' for a dask X"):
        make(hessian="woodbury").fit(Xd, y[loss])


def test_iobs_on_a_dask_X_refuses_a_hessian_wider_than_the_dense_limit(monkeypatch):
    from sparse_estimators import _policy

    monkeypatch.setattr(_policy, "DENSE_MAX_LS", 50)  # (p + 1 = 121 packed variables: more than allowed)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 120))
    y = (X[:, 0] + 0.3 * rng.standard_normal(200) > 0).astype(int)
    with pytest.raises(ValueError, match="I-OBS on a dask X forms the .* = 121 square Hessian"):
        IOBSClassifier(k=3).fit(da.from_array(X, chunks=(50, 120)), y)
