"""The reproduction scripts of papers 001 (accelerated IHT) and 004 (I-OBS), on tiny configurations.

The scripts live in ``benchmarks/`` (not a package): they are imported by path.
Each test writes into a temporary directory, never into ``doc/reproduction``.
"""

import numpy as np
import pytest
from _benchmarks import BENCHMARKS, load_benchmark


def _load(name):
    if not (BENCHMARKS / f"{name}.py").exists():
        pytest.skip(f"{BENCHMARKS / name}.py not found")
    return load_benchmark(name)


@pytest.fixture(scope="module")
def paper001():
    return _load("reproduce_paper001")


@pytest.fixture(scope="module")
def paper004():
    return _load("reproduce_paper004")


def _claims_rows(text):
    """The rows of the claims table of a generated report."""
    section = text.split("## Claims", 1)[1].split("##", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and "paper's claim" not in line]


# -- paper 004 --------------------------------------------------------------------------


def test_paper004_fig1a_iobs_beats_iht_at_the_same_iteration(paper004, tmp_path):
    res = paper004.fig1a(tmp_path, n_runs=3, n_steps=60, d=32, n=64, k_true=4, k=16, seed=1)
    assert res["png"].exists() and res["png"].stat().st_size > 0
    errors = res["errors"]
    iht = errors["k-IHT (step 1/L)"]
    assert iht.shape == (3, 61)
    np.testing.assert_allclose(iht[:, 0], 1.0)  # zero start
    for name, E in errors.items():
        if name.startswith("top-k I-OBS"):
            # at iteration 10, every run of every I-OBS variant is closer to theta* than IHT's median
            assert np.all(E[:, 10] < np.median(iht[:, 10])), name
    # the undamped Newton point is theta* (n > d, noiseless): exact after one step
    exact = errors["top-k I-OBS, no correction, damping 0 (eq. 12)"]
    assert np.all(exact[:, 1] < 1e-10)
    # the recorded loss of IHT with step 1/L never increases
    assert np.all(np.diff(res["losses"]["k-IHT (step 1/L)"], axis=1) <= 1e-15)


def test_paper004_main_writes_reports_with_measured_numbers(paper004, tmp_path):
    a, b = paper004.main(["--quick", "--out", str(tmp_path)])
    for stem in ("paper004_fig1a", "paper004_fig1b"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
        text = (tmp_path / f"{stem}.md").read_text()
        assert "do not edit by hand" in text
        rows = _claims_rows(text)
        assert len(rows) >= 3
        assert all(row.count("|") == 4 for row in rows)
    # the numbers in the tables are the run's
    text = (tmp_path / "paper004_fig1b.md").read_text()
    t = b["checkpoints"][1]
    iht_err = b["summary"]["k-IHT (step 1/L)"]["at"][t]
    assert f"k-IHT {iht_err:.2e}" in text
    assert all(k % 2 == 0 and k <= 784 for k in b["ks"])  # k = 2 k*


# -- paper 001 --------------------------------------------------------------------------


def test_paper001_compressed_sensing_tiny(paper001, tmp_path):
    res = paper001.compressed_sensing(tmp_path, m=100, budget=3.0)
    assert res["png"].exists()
    assert (res["n"], res["k"], res["k_over"]) == (2667, 7, 33)  # the paper's ratios at m = 100
    for (_, step, name), run in res["runs"].items():
        times = [r[0] for r in run["records"]]
        gaps = np.array([r[1] for r in run["records"]])
        assert np.all(np.diff(times) >= 0)
        assert len(run["records"]) == run["n_iter"] or name == "AccIHT"  # AccIHT restarts are not iterates
        if step == 1.0 and name == "IHT":
            # projected gradient with step 1/L never increases a least-squares objective
            assert np.all(np.diff(gaps) <= 1e-12 * gaps[0])
    # with the adaptive step both methods solve the small, well-posed exact-k problem
    for name in ("IHT", "AccIHT"):
        run = res["runs"][("exact k", "auto", name)]
        assert run["final_gap"] <= 1e-8
        assert run["t_support"] is not None
    rows = paper001.cs_claims(res)
    assert len(rows) == 10
    # the paper's claims are judged on wall time and on iterations; our extensions are not judged
    assert [v for _, _, v in rows].count("n/a (no claim)") == 4
    assert sum("in wall time; " in v and v.endswith(" in iterations") for _, _, v in rows) == 4


def test_paper001_correlated_design_tiny(paper001, tmp_path):
    ks = tuple(range(1, 11))
    res = paper001.correlated_design(tmp_path, n_samples=200, n_features=50, k_true=5, ks=ks, n_repeats=1,
                                     snr=20.0, seed=3)
    assert res["png"].exists()
    mean = res["mean"]
    for name in paper001.FIG3_METHODS:
        auc = mean[name]["auc"]
        assert np.all((auc[~np.isnan(auc)] >= 0) & (auc[~np.isnan(auc)] <= 1))
    j = ks.index(10)
    # at k = 2 k*, with a strong signal, every method ranks the true support first and predicts well
    for name in paper001.FIG3_METHODS:
        assert mean[name]["r2"][j] > 0.9, name
        assert mean[name]["auc"][j] > 0.95, name
    # training fit improves with k for the least-squares refits
    assert np.all(np.diff(mean["OMP"]["mse"]) <= 1e-12)
    # the Lasso path, indexed by its number of non-zeros, covers most k
    assert np.count_nonzero(~np.isnan(mean["Lasso"]["r2"])) >= 7
    rows = paper001.fig3_claims(res)
    assert len(rows) == 9


@pytest.mark.slow
def test_paper001_main_quick_writes_both_reports(paper001, tmp_path):
    cs, cd = paper001.main(["--quick", "--out", str(tmp_path)])
    for stem in ("paper001_fig2_compressed_sensing", "paper001_fig3_correlated_design"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
        text = (tmp_path / f"{stem}.md").read_text()
        assert all(row.count("|") == 4 for row in _claims_rows(text))
    text = (tmp_path / "paper001_fig2_compressed_sensing.md").read_text()
    run = cs["runs"][("exact k", 1.0, "IHT")]
    assert f"| exact k = {run['k']} | 1.0 | IHT | {run['n_iter']} |" in text
