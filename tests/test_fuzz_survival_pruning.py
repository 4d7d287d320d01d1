"""Fuzz round on survival, pruning and the command line: results a user reads, against independent references.

Survival: the Cox models' public baseline (``cum_baseline_hazard_``, ``baseline_survival_``) far from
``X coef_ = 0`` against scikit-survival's ``CoxPHSurvivalAnalysis`` fitted on centred features; the partial
likelihood where its risk sets underflow against ``scipy.special.logsumexp`` (it must never come out -inf);
``debias=False`` on a monotone likelihood; coefficients, baseline, predicted functions and their domain
against scikit-survival (integer weights as repeated rows, tied times, one event, a time-constant feature)
and the concordance against ``sksurv.metrics.concordance_index_censored``. Pruning: the N:M and per-output
structures counted on the result, whatever the ``blocksize``, with float32 weights and fewer calibration
rows than inputs. Command line: the range of ``--seed``, the file ``--plot`` writes, the names in messages,
class labels beyond int64, the advice on too few rows, and predictions read back against the Python API.
"""

import contextlib
import csv
import io
import json

import numpy as np
import pytest
from _cli_helpers import _write_csv
from _loss_problems import cox_data
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from sparse_estimators.losses import CoxLoss
from sparse_estimators.pruning import prune_layer
from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)

sksurv = pytest.importorskip("sksurv")
from sksurv.linear_model import CoxPHSurvivalAnalysis  # noqa: E402
from sksurv.metrics import concordance_index_censored  # noqa: E402
from sksurv.util import Surv  # noqa: E402


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        from sparse_estimators._cli import main

        status = main(argv)
    return status, out.getvalue(), err.getvalue()


# -- survival --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
@pytest.mark.parametrize("offset", [-900.0, 900.0])
def test_public_baseline_far_from_zero_is_finite_and_gives_scikit_survivals_hazards(Est, offset):
    """Training ``X coef_`` moved by +-900 (uncentred features): the baseline at 0 leaves float range.

    Before, ``cum_baseline_hazard_`` was silently inf (offset -900) or 0 (+900), and
    ``baseline_survival_`` 0 or 1. Now they are the baseline at ``baseline_risk_score_`` (the
    largest training risk score), with a warning, and ``exp(x coef_ - baseline_risk_score_)``
    times it is the cumulative hazard scikit-survival gives on the centred features.
    """
    X, y, _, support = cox_data(seed=3, n=120, p=9)
    ref = CoxPHSurvivalAnalysis(alpha=0.0).fit(X[:, support], y)
    coef = np.zeros(X.shape[1])
    coef[support] = ref.coef_
    shift = np.zeros(X.shape[1])
    shift[support] = offset / (3.0 * coef[support])
    with pytest.warns(UserWarning, match="baseline_risk_score_"):
        model = Est(k=3, alpha=0.0).fit(X + shift, y)
    assert_array_equal(model.support_, support)
    assert_allclose(model.coef_, coef, rtol=1e-5, atol=1e-8)
    r = model.baseline_risk_score_
    assert abs(r - float(np.max((X + shift) @ coef))) <= 1e-6 * abs(offset)
    H0 = model.cum_baseline_hazard_.y
    assert np.all(np.isfinite(H0)) and H0[-1] > 0 and np.all(np.diff(H0) >= 0)
    assert_allclose(model.baseline_survival_.y, np.exp(-H0), rtol=1e-12)
    hazards = np.exp((X[:8] + shift) @ model.coef_ - r)[:, None] * H0[None, :]
    expected = ref.predict_cumulative_hazard_function(X[:8, support], return_array=True)
    assert_allclose(hazards, expected, rtol=1e-5)
    assert_allclose(model.predict_cumulative_hazard_function(X[:8] + shift, return_array=True), expected, rtol=1e-5)


def test_public_baseline_below_the_shift_stays_at_zero_as_scikit_survival():
    """Moderately uncentred features (``X coef_`` about -10): the baseline at 0, no warning, as scikit-survival's."""
    X, y, _, support = cox_data(seed=3, n=120, p=9)
    X = X + 3.0
    ref = CoxPHSurvivalAnalysis(alpha=0.0).fit(X[:, support], y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model = IHTCoxPHSurvivalAnalysis(k=3, alpha=0.0).fit(X, y)
    assert model.baseline_risk_score_ == 0.0
    assert_allclose(model.cum_baseline_hazard_.y, ref.cum_baseline_hazard_.y, rtol=1e-5)
    assert_allclose(model.baseline_survival_.y, ref.baseline_survival_.y, rtol=1e-5, atol=1e-12)


def test_partial_likelihood_with_underflowing_risk_sets_is_never_minus_infinity():
    """``X w`` spanning 800: the risk sets of the late events underflow relative to the largest ``exp``.

    The exact value (``logsumexp`` per risk set) is finite and positive; before, the loss returned
    -inf (and a NaN gradient), which a step-size search accepts as a decrease.
    """
    rng = np.random.RandomState(0)
    n = 30
    x = rng.standard_normal(n)
    time = np.exp(-x)  # x orders the times: the monotone likelihood
    order = np.argsort(time)
    event = np.ones(n, bool)
    eta = 800.0 * (x - x.min()) / np.ptp(x)
    exact = sum(logsumexp(eta[order[i:]]) - eta[order[i]] for i in range(n)) / n
    assert np.isfinite(exact) and exact >= 0
    loss = CoxLoss(x[:, None], event, time)
    with pytest.raises(ValueError, match="monotone likelihood"):
        loss._eta_value(eta)  # (the late events have the smallest risk scores: their risk sets underflow)
    # a range the exponentials hold: the value is the exact one
    small = eta / 20.0
    assert_allclose(loss._eta_value(-small),
                    sum(logsumexp(-small[order[i:]]) + small[order[i]] for i in range(n)) / n, rtol=1e-10)


@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis,
                                 RegularizedIHTCoxPHSurvivalAnalysis])
def test_debias_false_on_a_monotone_likelihood_fails_clearly(Est):
    """``debias=False``, ``alpha=0``, a feature that orders the event times: the coefficient grows without bound.

    Before: "Cannot threshold: the magnitudes contain NaN (a NaN in the input or a diverged
    iterate)" after RuntimeWarnings; now the message ``debias=True`` gives (monotone likelihood,
    standardise or increase alpha).
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((30, 5))
    y = Surv.from_arrays(np.ones(30, bool), np.exp(-X[:, 0]))
    model = Est(k=1, alpha=0.0, debias=False)
    with pytest.raises(ValueError, match="monotone likelihood.*Standardise the features"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_cox_against_scikit_survival_with_weights_ties_one_event_and_constant_features(ties):
    """Coefficients, baseline, functions and concordance against scikit-survival on the found support."""
    X, y, _, _ = cox_data(seed=5, n=100, p=9, tied=True)
    X[:, 1] = 2.5  # a time-constant feature: never selected, coefficient 0
    counts = np.random.RandomState(1).randint(1, 4, X.shape[0]) if ties == "breslow" else np.ones(100, int)
    rows = np.repeat(np.arange(X.shape[0]), counts)
    model = IHTCoxPHSurvivalAnalysis(k=3, ties=ties, alpha=0.0).fit(X, y, sample_weight=counts.astype(float))
    assert model.coef_[1] == 0.0
    S = model.support_
    ref = CoxPHSurvivalAnalysis(ties=ties, alpha=0.0).fit(X[rows][:, S], y[rows])
    assert_allclose(model.coef_[S], ref.coef_, rtol=1e-5, atol=1e-8)
    assert_allclose(model.cum_baseline_hazard_.y, ref.cum_baseline_hazard_.y, rtol=1e-5)
    surv = model.predict_survival_function(X[:6], return_array=True)
    assert_allclose(surv, ref.predict_survival_function(X[:6, S], return_array=True), rtol=1e-5, atol=1e-10)
    assert np.all((surv >= 0) & (surv <= 1)) and np.all(np.diff(surv, axis=1) <= 0)
    # the step functions' domain and values before the first time, as scikit-survival's
    ours, theirs = model.predict_survival_function(X[:1])[0], ref.predict_survival_function(X[:1, S])[0]
    assert ours.domain == theirs.domain
    inside = [0.0, 0.5 * ours.x[0], ours.x[-1]]
    assert_allclose(ours(inside), theirs(inside), rtol=1e-5)
    for outside in (-1.0, ours.x[-1] + 1.0):
        for f in (ours, theirs):
            with pytest.raises(ValueError, match="x must be within"):
                f(outside)
    # the concordance of the weighted fit on the repeated rows
    assert model.score(X[rows], y[rows]) == concordance_index_censored(y["event"][rows], y["time"][rows],
                                                                       model.predict(X[rows]))[0]
    # all censored but one event
    event = np.zeros(X.shape[0], bool)
    event[np.argsort(y["time"])[10]] = True
    y1 = Surv.from_arrays(event, y["time"])
    one = IHTCoxPHSurvivalAnalysis(k=1, ties=ties).fit(X, y1)
    ref1 = CoxPHSurvivalAnalysis(ties=ties, alpha=1e-4 * X.shape[0]).fit(X[:, one.support_], y1)
    assert_allclose(one.coef_[one.support_], ref1.coef_, rtol=1e-5)
    assert_allclose(one.predict_survival_function(X[:4], return_array=True),
                    ref1.predict_survival_function(X[:4, one.support_], return_array=True), rtol=1e-6)


# -- pruning ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["obs", "iobs", "wanda", "magnitude"])
@pytest.mark.parametrize("blocksize", [1, 3, 5, 6, 128])
def test_pruned_layers_keep_the_structure_whatever_the_blocksize(method, blocksize):
    """N:M: N non-zeros in each group of M inputs of each row; per-output: k per row (continuous data: no exact 0).

    With ``blocksize`` not a multiple of M, 'obs' chose a group split by two blocks in part
    twice: 3 or 4 non-zeros in groups of a 2:4 pattern, 2 in groups of 1:2; at blocksize 1
    every column started a group of its own and was pruned (all weights 0).
    """
    rng = np.random.default_rng(blocksize)
    for n_samples, n_in, dtype in ((60, 24, np.float64), (10, 24, np.float32)):  # (10 < 24: H singular)
        X = rng.normal(size=(n_samples, n_in)).astype(dtype)
        W = rng.normal(size=(5, n_in)).astype(dtype)
        for n, m in ((2, 4), (1, 2), (3, 4), (1, 4)):
            W_hat = prune_layer(W, X, None, method=method, pattern=f"{n}:{m}", blocksize=blocksize)
            assert W_hat.dtype == np.float64 and np.all(np.isfinite(W_hat))
            assert_array_equal((W_hat.reshape(5, n_in // m, m) != 0).sum(axis=2), n)
        for sparsity in (0.25, 0.5, 0.7):
            W_hat = prune_layer(W, X, sparsity, method=method, blocksize=blocksize)
            keep = n_in - int(round(sparsity * n_in))
            assert_array_equal((W_hat != 0).sum(axis=1), keep)


def test_nm_sweep_with_a_block_of_part_groups_equals_whole_groups():
    """The pattern's blocks hold whole groups: the sweep at blocksize 5 is the one at 8 (5 rounded up to 2:4's M)."""
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(80, 16)), rng.normal(size=(4, 16))
    assert_allclose(prune_layer(W, X, None, method="obs", pattern="2:4", blocksize=5),
                    prune_layer(W, X, None, method="obs", pattern="2:4", blocksize=8), rtol=1e-12, atol=1e-12)


# -- command line ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", ["-1", str(2 ** 32)])
def test_seed_outside_numpys_range_is_a_usage_error(seed):
    """Before: exit 1 after the fit, "Seed must be between 0 and 2**32 - 1" (NumPy's words, not the option's)."""
    status, out, err = _run(["--seed", seed, "-q"])
    assert status == 2 and out == ""
    assert "--seed" in err and "4294967295" in err
    assert _run(["--seed", str(2 ** 32 - 1), "--cv", "2", "-q", "--k", "2"])[0] == 0


def test_plot_without_an_extension_writes_the_reported_file(tmp_path):
    """Before: "Criterion plot saved to crit" while matplotlib wrote crit.png."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "crit"
    status, out, _ = _run(["--cv", "0", "-q", "--plot", str(path)])
    assert status == 0 and f"Criterion plot saved to {path}" in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "crit.png").exists()


def test_messages_name_the_columns_of_a_bundled_dataset_as_text(tmp_path):
    """Before: "column np.str_('mean radius') is not numeric" (scikit-learn's names are NumPy strings)."""
    model = str(tmp_path / "m.joblib")
    assert _run(["--dataset", "breast_cancer", "--k", "2", "--cv", "0", "-q", "--output", model])[0] == 0
    from sklearn.datasets import load_breast_cancer

    header = [str(name) for name in load_breast_cancer().feature_names]
    bad = _write_csv(tmp_path / "bad.csv", header, [["x"] * len(header)])
    status, _, err = _run(["predict", model, bad, "-q"])
    assert status == 2 and "np.str_" not in err and "error: column '" in err


def test_class_labels_beyond_int64_keep_their_values(tmp_path):
    """Integer labels 0 and 10**30: before, cast to int64 they became -2**63 (a RuntimeWarning), "positive class: 0"."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2))
    label = np.where(x[:, 0] > 0, "1" + "0" * 30, "0")
    path = _write_csv(tmp_path / "t.csv", ["x1", "x2", "y"], [[a, b, c] for (a, b), c in zip(x, label, strict=True)])
    status, out, err = _run([path, "--cv", "0", "-q", "--json", "--k", "1"])
    assert status == 0 and "RuntimeWarning" not in err
    result = json.loads(out)
    assert result["classes"] == ["0", "1" + "0" * 30]
    assert result["selected_features"][0]["feature"] == "x1" and result["selected_features"][0]["coef"] > 0


def test_advice_on_too_few_rows_for_cross_validation_is_an_accepted_option(tmp_path):
    """3 rows, ``--cv 3``: before, "use --cv 1 or fewer", which the parser refuses."""
    path = _write_csv(tmp_path / "t.csv", ["x1", "x2", "y"], [[0.1, 1.0, 2.0], [0.5, -1.0, 3.0], [0.9, 0.3, 1.0]])
    status, _, err = _run([path, "--cv", "3", "-q"])
    assert status == 2 and "--cv 1" not in err and "--cv 0" in err


@pytest.mark.parametrize("dataset, method, options", [
    ("breast_cancer", "iobs", ["--thresholding", "soft", "--k", "4"]),
    ("wine", "regularized", ["--no-scale", "--k", "auto"]),
    ("diabetes", "accelerated", ["--thresholding", "reciprocal", "--k", "3"]),
])
def test_saved_model_predictions_read_back_are_the_python_apis(tmp_path, dataset, method, options):
    """A bundled dataset fitted and saved, its rows predicted from CSV: the Python API's pipeline, to 6 digits."""
    import sklearn.datasets
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import sparse_estimators

    bunch = getattr(sklearn.datasets, f"load_{dataset}")()
    model = str(tmp_path / "m.joblib")
    assert _run(["--dataset", dataset, "--method", method, *options, "--cv", "0", "-q", "--output", model])[0] == 0
    data = _write_csv(tmp_path / "d.csv", [str(name) for name in bunch.feature_names],
                      [[repr(float(v)) for v in row] for row in bunch.data])
    predictions = str(tmp_path / "p.csv")
    assert _run(["predict", model, data, "-q", "--output", predictions])[0] == 0
    with open(predictions, newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    prefix = {"iobs": "IOBS", "regularized": "RegularizedIHT", "accelerated": "AcceleratedIHT"}[method]
    k = options[options.index("--k") + 1]
    thresholding = options[options.index("--thresholding") + 1] if "--thresholding" in options else "hard"
    if dataset == "diabetes":
        estimator = getattr(sparse_estimators, prefix + "Regressor")(k=int(k), thresholding=thresholding)
        api = make_pipeline(StandardScaler(), estimator).fit(bunch.data, bunch.target)
        expected = api.predict(bunch.data)
        got = np.array([float(row[0]) for row in rows])
        assert np.abs(got - expected).max() <= 1e-5 * np.abs(expected).max()
        return
    estimator = getattr(sparse_estimators, prefix + "Classifier")(k=None if k == "auto" else int(k),
                                                                   thresholding=thresholding)
    api = make_pipeline(*([] if "--no-scale" in options else [StandardScaler()]), estimator)
    api.fit(bunch.data, np.asarray(bunch.target_names)[bunch.target])
    assert_array_equal([row[0] for row in rows], api.predict(bunch.data))
    assert np.abs(np.array([[float(v) for v in row[1:]] for row in rows]) - api.predict_proba(bunch.data)).max() \
        <= 1e-6


def test_unexpected_exceptions_are_not_turned_into_input_errors(monkeypatch):
    """Only the command line's own input errors (exit 2) and ValueErrors (exit 1) get a one-line message.

    Every CSV cell is parsed by the command line itself (no pandas), so a TypeError from inside
    is a defect: it keeps its traceback rather than a message that would hide it.
    """
    import sparse_estimators._cli as cli

    def broken(*args, **kwargs):
        raise TypeError("a defect")

    monkeypatch.setattr(cli, "_run_fit", broken)
    with pytest.raises(TypeError, match="a defect"):
        _run(["-q"])


def _table_with_text(tmp_path, name, sparse_numeric=False, sparse_text=False):
    rng = np.random.default_rng(0)
    n = 40
    x = rng.normal(size=(n, 2))
    city = rng.choice(["a", "b", "c"], n)
    y = 2.0 * x[:, 0] + 1.5 * (city == "b") + 0.1 * rng.normal(size=n)
    header = ["x1", "x2", "city", "t", "y"]
    rows = [[x[i, 0], x[i, 1], city[i], "q" if i == 0 or not sparse_text else "", y[i]] for i in range(n)]
    if sparse_numeric:
        header.insert(2, "s")
        for i, row in enumerate(rows):
            row.insert(2, 5.0 if i == 0 else "")
    return _write_csv(tmp_path / name, header, rows)


def test_a_single_category_text_column_beside_a_grouped_one(tmp_path):
    """A constant text column beside one of 3 categories (k counts variables): before, exit 1 with
    scikit-learn's "The following categories were supposed to be dropped, but were not found in the
    training data. Category: 1, Feature: None" (a None in the encoder's list of dropped categories)."""
    path = _table_with_text(tmp_path, "t.csv")
    status, out, err = _run([path, "--cv", "3", "-q", "--json", "--k", "2"])
    assert status == 0, err
    result = json.loads(out)
    assert result["selected_variables"] == ["x1", "city"]
    assert result["cv"]["scores"]["r2"]["mean"] > 0.9


def test_imputed_columns_without_a_value_in_a_training_fold(tmp_path):
    """One observed cell in 40: a numeric column is kept (as zeros) where a training fold has none of
    its values (before, beside a grouped text column: "The 'groups' parameter must have one label per
    feature: got 5 labels for 4 features", exit 1); a text column is refused, naming it (before:
    scikit-learn's dropped-category or "Shape mismatch" errors, exit 1)."""
    path = _table_with_text(tmp_path, "n.csv", sparse_numeric=True)
    status, out, err = _run([path, "--cv", "3", "-q", "--impute", "--json", "--k", "2"])
    assert status == 0, err
    assert json.loads(out)["selected_variables"] == ["x1", "city"]
    path = _table_with_text(tmp_path, "t.csv", sparse_text=True)
    for options in ([], ["--count", "columns"]):
        status, out, err = _run([path, "--cv", "3", "-q", "--impute", *options])
        assert status == 2 and out == "" and "column 't' has 1 value(s)" in err and "--cv 0" in err
    assert _run([path, "--cv", "0", "-q", "--impute"])[0] == 0


def test_cox_score_checks_its_sample_weight_as_fit_does():
    """Before: NumPy's "operands could not be broadcast" for a wrong length, and "y has no comparable
    pair" for negative, NaN or all-zero weights (the weights, not ``y``, were at fault)."""
    X, y, _, _ = cox_data(seed=0, n=60, p=9)
    model = IHTCoxPHSurvivalAnalysis(k=2).fit(X, y)
    for weights, match in ((np.ones(5), "shape"), (-np.ones(60), "Negative"), (np.full(60, np.nan), "NaN"),
                           (np.zeros(60), "non-zero|positive sum")):
        with pytest.raises(ValueError, match=match):
            model.score(X, y, sample_weight=weights)
    counts = np.random.RandomState(0).randint(1, 4, 60)
    rows = np.repeat(np.arange(60), counts)
    assert model.score(X, y, sample_weight=list(counts)) == pytest.approx(
        concordance_index_censored(y["event"][rows], y["time"][rows], model.predict(X[rows]))[0], rel=1e-12)
