"""The IHT loop's shortcuts against the general computations they replace, bit for bit.

Each shortcut (``doc/changelog.rst``: the IHT loop's per-iteration overhead)
must give the very bytes of the computation it stands for: the monitor's
change taken from the backtracking, the finiteness test by one dot product,
the GLM gradient's column sums computed once, one-column indexing in hard
thresholding and in the restricted product, least squares' one-output value,
the top-k selection's magnitudes read from its top slice (its NaN test
checked here too).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from sparse_estimators.losses import LogisticLoss, PoissonLoss, SquaredLoss
from sparse_estimators.losses._design import LinearDesign
from sparse_estimators.solvers import IterationMonitor, iht
from sparse_estimators.thresholding import Hard, Soft, select_top_k


def _data(n=120, p=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + 0.5
    w = np.zeros(p)
    w[[3, 11, 17, 30]] = [1.5, -2.0, 1.0, -1.2]
    return X, X @ w, rng


def _losses(fit_intercept):
    X, z, rng = _data()
    return [SquaredLoss(X, z + 0.3 * rng.standard_normal(z.size), fit_intercept=fit_intercept),
            LogisticLoss(X, (z + rng.standard_normal(z.size) > 0).astype(float)[:, None],
                         fit_intercept=fit_intercept),
            PoissonLoss(X, rng.poisson(np.exp(0.3 * z)).astype(float), fit_intercept=fit_intercept)]


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("op", [Hard(), Soft()], ids=["hard", "soft"])
def test_backtracking_passes_the_monitors_own_change(op, fit_intercept, monkeypatch):
    # the squared step that iht hands to the monitor is the one the monitor would compute itself
    checked = []
    update = IterationMonitor.update

    def checking(self, it, W_old, b_old, W, b, f, support, moved=None):
        if moved is not None:
            dW = W - W_old
            own = np.vdot(dW, dW)
            if b is not b_old:
                db = b - b_old
                own = own + np.vdot(db, db)
            assert np.float64(moved).tobytes() == np.float64(own).tobytes()
            checked.append(it)
        return update(self, it, W_old, b_old, W, b, f, support, moved)

    monkeypatch.setattr(IterationMonitor, "update", checking)
    for loss in _losses(fit_intercept):
        W0, b0 = loss.zeros()
        iht(loss, op, 4, W0=W0, b0=b0, support_refit=0, tol=1e-8)
    assert len(checked) > 10


def test_monitor_finiteness_test_by_the_squared_norm():
    # ||W||^2 overflows for huge finite entries: the entries are then tested one by one (no divergence);
    # an infinite or NaN entry is a divergence
    W0, b0 = np.zeros((4, 1)), np.zeros(1)
    for entry, diverged in ((1e200, False), (np.inf, True), (-np.inf, True), (np.nan, True)):
        mon = IterationMonitor(1e300, W0, b0, tol=1e-3, keep_best=False)
        W1 = np.array([[entry], [1.0], [0.0], [0.0]])
        mon.update(1, W0, b0, W1, b0, 1e299, np.array([0, 1]))
        assert mon.diverged is diverged, entry


@pytest.mark.parametrize("kind", ["dense", "csc", "float32", "constant"])
def test_rmatvec_and_sums_equal_rmatvec_and_the_sum(kind):
    X, _, rng = _data()
    constant = None
    if kind == "constant":
        X[:, 5] = 2.0
        constant = np.zeros(X.shape[1], dtype=bool)
        constant[5] = True
    X = sp.csc_matrix(X) if kind == "csc" else X.astype(np.float32) if kind == "float32" else X
    design = LinearDesign(X, np.asarray(X.mean(axis=0), dtype=float).ravel(), constant)
    R = rng.standard_normal((X.shape[0], 2))
    G, sums = design.rmatvec_and_sums(R)
    assert G.tobytes() == design.rmatvec(R).tobytes()
    assert sums.tobytes() == np.add.reduce(R, axis=0).tobytes()


def test_restricted_product_equals_its_formula():
    X, _, rng = _data()
    offset = X.mean(axis=0)
    design = LinearDesign(X, offset)
    W = np.zeros((X.shape[1], 1))
    rows = np.array([2, 9, 23])
    W[rows, 0] = rng.standard_normal(3)
    expected = X[:, rows] @ W[rows] - offset[rows] @ W[rows]
    assert design.matvec(W, rows).tobytes() == expected.tobytes()


@pytest.mark.parametrize("m", [1, 3])
def test_hard_thresholding_keeps_the_rows_unchanged(m):
    # the one-column path (1-D indexing) gives the general row copy, signed zeros included
    rng = np.random.RandomState(1)
    z = rng.standard_normal((30, m))
    z[[4, 7]] = -0.0
    z[[10, 12]] = 5.0  # a tie among the kept rows
    out, support = Hard()(z, 6, return_support=True)
    expected = np.zeros_like(z)
    expected[support] = z[support]
    assert out.tobytes() == expected.tobytes()
    few, support = Hard()(z, 29, return_support=True)  # (a negative zero kept)
    expected = np.zeros_like(z)
    expected[support] = z[support]
    assert few.tobytes() == expected.tobytes()
    assert np.signbit(few[support]).any()


def test_squared_value_of_one_output_equals_the_einsum_form():
    X, z, rng = _data()
    weights = rng.uniform(0.5, 2.0, z.size)
    loss = SquaredLoss(X, z + rng.standard_normal(z.size), sample_weight=weights)
    Z = rng.standard_normal((z.size, 1)) * 10.0 ** rng.randint(-5, 5, (z.size, 1))
    R = loss.Y - Z
    expected = 0.5 * float(loss.sample_weight @ np.einsum("ij,ij->i", R, R)) / loss.sw_sum
    assert loss.value_from_z(Z, None) == expected


@pytest.mark.parametrize("position", ["kept", "kth", "left_out", "all"])
def test_select_top_k_raises_on_nan_wherever_it_is(position):
    magnitudes = np.abs(np.random.RandomState(2).standard_normal(50))
    order = np.argsort(magnitudes)
    index = {"kept": order[-1], "kth": order[-5], "left_out": order[0], "all": slice(None)}[position]
    magnitudes[index] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        select_top_k(magnitudes, 5)


def test_select_top_k_accepts_infinite_and_huge_magnitudes():
    # the NaN test sums the top magnitudes: an infinite sum is no NaN
    magnitudes = np.array([1.0, np.inf, 1e200, 3.0, 1e300, 0.5])
    support, tau = select_top_k(magnitudes, 3)
    assert_array_equal(support, [1, 2, 4])
    assert tau == 3.0


@pytest.mark.parametrize("kind", ["float64", "float32", "csc", "fortran"])
def test_design_products_equal_the_cast_forms(kind):
    # a dense float64 X skips the casts of the products' operands and results: the same arrays as with them
    X, _, rng = _data()
    X = (sp.csc_matrix(X) if kind == "csc" else X.astype(np.float32) if kind == "float32"
         else np.asfortranarray(X) if kind == "fortran" else X)
    offset = np.asarray(X.mean(axis=0), dtype=float).ravel()
    design = LinearDesign(X, offset)
    R = rng.standard_normal((X.shape[0], 2))
    cast = np.asarray(X.T @ R.astype(X.dtype), dtype=float) - offset[:, None] * np.add.reduce(R, axis=0)
    assert design.rmatvec(R).tobytes() == cast.tobytes()
    W = np.zeros((X.shape[1], 1))
    rows = np.array([2, 9, 23])
    W[rows, 0] = rng.standard_normal(3)
    cast = np.asarray(X[:, rows] @ W[rows].astype(X.dtype), dtype=float) - offset[rows] @ W[rows]
    assert design.matvec(W, rows).tobytes() == cast.tobytes()
