"""IOBSRegressor (Gamma) with ``_policy.IOBS_SETTLED_SEARCH``: a verified I-OBS fixed point that the first
splicing search keeps ends the search (no second, abess-start search); Poisson's 'auto' route is 'screened' at
any n."""

import numpy as np
import pytest
from _benchmarks import load_benchmark

from sparse_estimators import IOBSRegressor, _policy
from sparse_estimators.losses import GammaLoss, PoissonLoss, SquaredLoss
from sparse_estimators.solvers import _splice_abess
from sparse_estimators.solvers._iobs import select_hessian_route


def _spy(monkeypatch):
    calls = []
    search = _splice_abess._important_search

    def counted(*args, **kwargs):
        calls.append(1)
        return search(*args, **kwargs)

    monkeypatch.setattr(_splice_abess, "_important_search", counted)
    return calls


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_settled_fixed_point_skips_the_second_search(monkeypatch, family):
    """compare_glm.py's small design (seed 1): the first splicing search keeps I-OBS's support (the true one),
    abess's start differs from it, so the second search runs by default; with the policy on, not for Gamma
    (still for Poisson, where skipping it lost F1)."""
    simulate = load_benchmark("compare_glm").simulate
    X, y, *_, truth = simulate("poisson" if family == "poisson" else "gamma-log", 200, 100, 5, 0.0, "strong", 1, 1)
    calls = _spy(monkeypatch)
    model = IOBSRegressor(k=5, loss=family).fit(X, y)
    assert len(calls) == 1  # (the second search ran, and kept the same support)
    np.testing.assert_array_equal(np.flatnonzero(model.coef_), np.sort(truth))
    calls.clear()
    monkeypatch.setattr(_policy, "IOBS_SETTLED_SEARCH", True)
    again = IOBSRegressor(k=5, loss=family).fit(X, y)
    assert len(calls) == (family == "poisson")
    np.testing.assert_array_equal(np.flatnonzero(again.coef_), np.sort(truth))


def test_auto_route_for_poisson_at_any_n():
    rng = np.random.RandomState(0)
    tall = rng.standard_normal((50, 20))
    assert select_hessian_route(PoissonLoss(tall, rng.poisson(1.0, 50))) == "screened"
    assert select_hessian_route(GammaLoss(tall, rng.gamma(2.0, 1.0, 50))) == "dense"  # (fisher lost F1 there)
    assert select_hessian_route(SquaredLoss(tall, rng.standard_normal(50))) == "dense"  # (unchanged)
