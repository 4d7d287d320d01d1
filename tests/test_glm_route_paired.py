"""The variants of ``benchmarks/glm_route_paired.py`` change the fit inside their block only.

The paired study fits the current route and a variant in one process; a
patch that leaked out of its block would make the "current" fits of later
data sets variant fits, and every difference printed would shrink towards 0.
"""

import numpy as np
import pytest
from _benchmarks import load_benchmark

from sparse_estimators import IHTRegressor


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("glm_route_paired")


def _data(bench, family):
    X, y, _, _, truth = bench.simulate(family, 200, 60, 4, 0.0, "strong", 0, seed=3)
    return X, y, truth


@pytest.mark.parametrize("name", ["from-zero", "from-zero-ours", "iht-from-start", "no-second-search",
                                  "no-first-search", "patience-1", "patience-2"])
def test_variant_is_undone_after_its_block(bench, name):
    X, y, _ = _data(bench, "poisson")
    before = IHTRegressor(k=4, loss="poisson").fit(X, y)
    with bench.variant(name):
        IHTRegressor(k=4, loss="poisson").fit(X, y)
    after = IHTRegressor(k=4, loss="poisson").fit(X, y)
    assert np.array_equal(after.coef_, before.coef_) and after.intercept_ == before.intercept_
    assert after.n_iter_ == before.n_iter_


def test_from_zero_runs_no_solver_and_starts_at_the_largest_marginal_gains(bench):
    # the stand-in solver: no IHT iteration, and on a strong-signal design the k features of largest gain at
    # zero (which the search then keeps) are the true ones
    X, y, truth = _data(bench, "gamma-log")
    current = IHTRegressor(k=4, loss="gamma").fit(X, y)
    assert current.n_iter_ > 0
    with bench.variant("from-zero"):
        model = IHTRegressor(k=4, loss="gamma").fit(X, y)
    assert model.n_iter_ == 0
    assert np.array_equal(model.support_, truth)


def test_iht_from_start_stops_at_a_start_that_is_a_fixed_point(bench):
    # on a strong-signal design the k features of largest gain at zero are the true ones and, refitted, a fixed
    # point of the thresholded step: IHT started there stops after its first step (from zero it needs several)
    X, y, truth = _data(bench, "gamma-log")
    current = IHTRegressor(k=4, loss="gamma").fit(X, y)
    with bench.variant("iht-from-start"):
        model = IHTRegressor(k=4, loss="gamma").fit(X, y)
    assert model.n_iter_ == 1 < current.n_iter_
    assert np.array_equal(model.support_, truth)


def test_patience_variant_reaches_the_solver(bench):
    # the jump after 1 unchanged support instead of 3: fewer IHT iterations on the same data
    X, y, _ = _data(bench, "poisson")
    current = IHTRegressor(k=4, loss="poisson").fit(X, y)
    with bench.variant("patience-1"):
        model = IHTRegressor(k=4, loss="poisson").fit(X, y)
    assert model.n_iter_ < current.n_iter_
