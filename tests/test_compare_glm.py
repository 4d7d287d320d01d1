"""The designs of ``benchmarks/compare_glm.py``: each Gamma design is the model its peer fits.

abess's ``GammaRegression`` uses the inverse link (mean ``-1 / eta``) and
``loss='gamma'`` the log link; the benchmark's ``gamma-inverse`` and
``gamma-log`` data must follow those links, or the comparison is unfair to
one side (as a first version of the script was to abess).
"""

import numpy as np
import pytest
from _benchmarks import load_benchmark

from sparse_estimators import IHTRegressor


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("compare_glm")


def _mean_ratio_by_bin(mean, y, bins=5):
    """Observed over expected mean of ``y`` in bins of the expected mean."""
    edges = np.quantile(mean, np.linspace(0, 1, bins + 1))
    group = np.clip(np.searchsorted(edges, mean, side="right") - 1, 0, bins - 1)
    return np.array([y[group == g].mean() / mean[group == g].mean() for g in range(bins)])


def test_gamma_inverse_design_is_abess_model(bench):
    # abess's own model: it finds the true support, and the observed means match its predicted means in
    # every bin of them (a log-link design would not give abess calibrated means: the previous script's
    # abess found almost none of the true features)
    from abess.linear import GammaRegression

    X, y, _, _, truth = bench.simulate("gamma-inverse", 5000, 8, 3, 0.0, "strong", 0, seed=1)
    model = GammaRegression(support_size=[3], thread=1).fit(X, y)
    assert np.array_equal(np.flatnonzero(model.coef_), truth)
    ratios = _mean_ratio_by_bin(model.predict(X), y)
    assert np.all(np.abs(ratios - 1) < 0.05), ratios


def test_gamma_log_design_is_ours(bench):
    X, y, _, _, truth = bench.simulate("gamma-log", 2000, 50, 3, 0.0, "strong", 0, seed=0)
    assert np.array_equal(IHTRegressor(k=3, loss="gamma").fit(X, y).support_, truth)


def test_huber_design_has_gross_outliers_in_training_rows_only(bench):
    X, y, Xt, yt, truth = bench.simulate("huber", 400, 20, 3, 0.0, "strong", 400, seed=0)
    clean = IHTRegressor(k=3).fit(Xt, yt)  # test rows: y = X beta + N(0, 1)
    assert np.array_equal(clean.support_, truth)
    resid = y - clean.predict(X)
    assert np.sum(resid > 15) == 40  # 10 % of 400, shifted by 20 to 40 noise standard deviations
    assert np.max(np.abs(yt - clean.predict(Xt))) < 6
