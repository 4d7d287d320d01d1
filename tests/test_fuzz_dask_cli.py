"""Fuzz round on the dask path and the command line: contracts a user meets, against independent references.

Dask: a fit on a row-chunked dask ``X`` equals the NumPy fit whatever the
chunks (one block, uneven blocks, a block of one row), keeps float32, scores
and predicts as on NumPy data with targets and weights of any container, and
refuses bad input with errors naming it. Command line: the printed and saved
models are the Python API's fit of the same table, and a header that names
two used columns alike is refused.
"""

import contextlib
import io
import json
import warnings

import numpy as np
import pytest
from _cli_helpers import _write_csv
from sklearn.preprocessing import StandardScaler

from sparse_estimators import IHTClassifier, IHTRegressor, IOBSRegressor
from sparse_estimators._cli import main

# -- data ------------------------------------------------------------------------


def _problem(n=160, p=10, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[[1, 4, 7]] = [1.5, -1.0, 0.8]
    eta = X @ beta
    targets = {
        "squared_error": eta + 0.3 * rng.standard_normal(n),
        "poisson": rng.poisson(np.exp(0.4 * eta)).astype(float),
        "gamma": rng.gamma(2.0, np.exp(0.3 * eta) / 2.0),
        "huber": eta + 0.3 * rng.standard_t(2, n),
        "binary": np.where(eta + 0.5 * rng.standard_normal(n) > 0, "yes", "no"),
        "multinomial": np.array(["a", "b", "c"])[np.argmax(np.column_stack([eta, -eta, 0 * eta])
                                                           + rng.gumbel(size=(n, 3)), axis=1)],
    }
    return X, targets, rng.uniform(0.5, 2.0, n)


def _same_model(expected, got, rtol=1e-7):
    """Same support; coefficients and intercept to optimisation tolerance (relative to the largest coefficient)."""
    np.testing.assert_array_equal(got.support_, expected.support_)
    scale = np.abs(np.asarray(expected.coef_, dtype=float)).max()
    np.testing.assert_allclose(np.asarray(got.coef_, dtype=float), np.asarray(expected.coef_, dtype=float),
                               rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(np.asarray(got.intercept_, dtype=float),
                               np.asarray(expected.intercept_, dtype=float), rtol=0, atol=rtol * scale)


# -- dask ------------------------------------------------------------------------

CHUNKINGS = {"one_block": lambda n: (n,), "uneven_with_a_row": lambda n: (70, 1, 29, n - 100),
             "last_row_alone": lambda n: (n - 1, 1)}


def _dask():
    return pytest.importorskip("dask.array"), pytest.importorskip("dask")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (the same on both: compared)
@pytest.mark.parametrize("chunking", list(CHUNKINGS))
@pytest.mark.parametrize("loss, params", [
    ("squared_error", {"k": None, "always_select": [0]}), ("poisson", {"k": 2, "groups": np.arange(10) // 2}),
    ("gamma", {"k": 3, "positive": True}), ("huber", {"k": 3, "fit_intercept": False}),
    ("binary", {"k": None}), ("multinomial", {"k": 3}),
])
def test_dask_fit_does_not_depend_on_the_row_chunks(loss, params, chunking):
    da, dask = _dask()
    X, targets, sw = _problem()
    y = targets[loss]
    chunks = CHUNKINGS[chunking](len(y))
    if loss in ("binary", "multinomial"):
        est = IHTClassifier(**params)
    else:
        est = IHTRegressor(loss=loss, **params)
    expected = est.fit(X, y, sample_weight=sw)
    with dask.config.set(scheduler="sync"):
        got = type(est)(**est.get_params()).fit(da.from_array(X, chunks=(chunks, X.shape[1])),
                                                 da.from_array(y, chunks=(chunks,)), sample_weight=sw)
    _same_model(expected, got)
    assert got.n_passes_ >= 1


@pytest.mark.parametrize("est", [IHTRegressor(k=3, loss="poisson"), IHTRegressor(k=3, loss="gamma"),
                                 IHTRegressor(k=3, loss="huber"), IOBSRegressor(k=3, loss="poisson"),
                                 IHTRegressor(k=3), IHTClassifier(k=3)], ids=repr)
def test_float32_dask_X_gives_float32_coefficients_as_numpy(est):
    # The larger-than-memory guide: "A float32 X gives float32 coefficients, as on NumPy data". The Poisson,
    # Gamma and Huber regressors gave float64 on dask X.
    da, dask = _dask()
    X, targets, _ = _problem()
    y = targets["binary" if isinstance(est, IHTClassifier) else est.loss]
    X32 = X.astype(np.float32)
    expected = type(est)(**est.get_params()).fit(X32, y)
    with dask.config.set(scheduler="sync"):
        got = type(est)(**est.get_params()).fit(da.from_array(X32, chunks=((60, 100), 10)), y)
    assert expected.coef_.dtype == np.float32
    assert got.coef_.dtype == np.float32
    assert np.asarray(got.intercept_).dtype == np.float32
    _same_model(expected, got, rtol=1e-5)


@pytest.mark.parametrize("family", ["binary", "multinomial", "squared_error", "poisson"])
@pytest.mark.parametrize("container", ["pandas", "numpy", "dask"])
def test_score_and_predictions_on_dask_X_take_any_target_container(family, container):
    # A classifier's score on a dask X with a pandas Series y (or weights) raised NotImplementedError.
    da, dask = _dask()
    pd = pytest.importorskip("pandas")
    X, targets, sw = _problem()
    y = targets[family]
    est = IHTClassifier(k=3) if family in ("binary", "multinomial") else IHTRegressor(k=3, loss=family)
    chunks = (70, 1, 89)
    fitted = est.fit(X, y)
    Xd = da.from_array(X, chunks=(chunks, 10))
    wrap = {"pandas": pd.Series, "numpy": np.asarray, "dask": lambda v: da.from_array(v, chunks=(chunks,))}[container]
    with dask.config.set(scheduler="sync"):
        score = fitted.score(Xd, wrap(y), sample_weight=wrap(sw))
        plain = fitted.score(Xd, wrap(y))
        pred = fitted.predict(Xd)
        assert isinstance(pred, da.Array)
        if family in ("binary", "multinomial"):
            np.testing.assert_array_equal(pred.compute(), fitted.predict(X))
            proba = fitted.predict_proba(Xd)
            assert isinstance(proba, da.Array)
            np.testing.assert_allclose(proba.compute(), fitted.predict_proba(X), rtol=1e-12)
        else:
            np.testing.assert_allclose(pred.compute(), fitted.predict(X), rtol=1e-12)
    # independent references: sklearn's metrics on the NumPy predictions
    if family in ("binary", "multinomial"):
        from sklearn.metrics import accuracy_score
        reference = accuracy_score(y, fitted.predict(X), sample_weight=sw)
        assert plain == pytest.approx(accuracy_score(y, fitted.predict(X)), abs=1e-12)
    elif family == "poisson":
        from sklearn.metrics import d2_tweedie_score
        reference = d2_tweedie_score(y, fitted.predict(X), sample_weight=sw, power=1)
    else:
        from sklearn.metrics import r2_score
        reference = r2_score(y, fitted.predict(X), sample_weight=sw)
    assert score == pytest.approx(reference, rel=1e-10)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # (the clear error alone: the pass zeroes bad values)
@pytest.mark.parametrize("loss", ["squared_error", "poisson", "gamma", "huber"])
def test_bad_targets_and_X_on_dask_raise_naming_them(loss):
    da, dask = _dask()
    X, targets, _ = _problem()
    y = targets[loss].copy()
    chunks = (60, 100)
    Xd = da.from_array(X, chunks=(chunks, 10))
    with dask.config.set(scheduler="sync"):
        y_nan = y.copy()
        y_nan[100] = np.nan  # (in the second block)
        with pytest.raises(ValueError, match=r"y contains NaN"):
            IHTRegressor(k=3, loss=loss).fit(Xd, da.from_array(y_nan, chunks=(chunks,)))
        if loss in ("poisson", "gamma"):
            y_neg = y.copy()
            y_neg[3] = -1.0
            with pytest.raises(ValueError, match=r"value\(s\) of y"):
                IHTRegressor(k=3, loss=loss).fit(Xd, da.from_array(y_neg, chunks=(chunks,)))
        X_bad = X.copy()
        X_bad[150, 2] = np.inf
        with pytest.raises(ValueError, match=r"Input X contains NaN or infinity"):
            IHTRegressor(k=3, loss=loss).fit(da.from_array(X_bad, chunks=(chunks, 10)), y)


@pytest.mark.parametrize("chunks", [(0, 70, 0, 90), (160, 0)], ids=["leading_and_middle", "trailing"])
@pytest.mark.parametrize("family", ["squared_error", "poisson", "huber", "binary"])
def test_blocks_without_rows_are_fitted_predicted_and_scored(family, chunks):
    # Blocks of 0 rows (a filtered DataFrame's partitions) failed: reshape or concatenate errors in the fits of
    # the losses read at every step, check_array's "0 sample(s)" in predict and score.
    da, dask = _dask()
    X, targets, sw = _problem()
    y = targets[family]
    est = IHTClassifier(k=3) if family == "binary" else IHTRegressor(k=3, loss=family)
    expected = type(est)(**est.get_params()).fit(X, y, sample_weight=sw)
    Xd = da.from_array(X, chunks=(chunks, 10))
    with dask.config.set(scheduler="sync"):
        got = type(est)(**est.get_params()).fit(Xd, da.from_array(y, chunks=(chunks,)),
                                                 sample_weight=da.from_array(sw, chunks=(chunks,)))
        pred = got.predict(Xd)
        assert pred.chunks[0] == chunks  # (in X's row chunks, as documented)
        pred = pred.compute()
        score = got.score(Xd, y, sample_weight=sw)
        if family == "binary":
            np.testing.assert_allclose(got.predict_proba(Xd).compute(), expected.predict_proba(X), rtol=1e-9)
    _same_model(expected, got)
    if family == "binary":
        np.testing.assert_array_equal(pred, expected.predict(X))
    else:
        np.testing.assert_allclose(pred, expected.predict(X), rtol=1e-9)
    assert score == pytest.approx(expected.score(X, y, sample_weight=sw), rel=1e-9)


def test_filtered_dask_dataframe_with_an_empty_partition():
    da, dask = _dask()
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, targets, _ = _problem()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(10)]).assign(y=targets["poisson"])
    keep = np.arange(len(frame)) >= 60  # (the first of 3 partitions of about 54 rows: all dropped)
    frame["keep"] = keep
    lazy = dd.from_pandas(frame, npartitions=3)
    lazy = lazy[lazy["keep"]]
    features = lazy[[f"f{j}" for j in range(10)]]
    with dask.config.set(scheduler="sync"):
        assert 0 in features.to_dask_array(lengths=True).chunks[0]
        got = IHTRegressor(k=3, loss="poisson").fit(features, lazy["y"])
        pred = got.predict(features).compute()
    subset = frame[keep]
    expected = IHTRegressor(k=3, loss="poisson").fit(subset[[f"f{j}" for j in range(10)]], subset["y"])
    _same_model(expected, got)
    np.testing.assert_allclose(pred, expected.predict(subset[[f"f{j}" for j in range(10)]]), rtol=1e-9)


def test_empty_X_and_scores_of_too_few_targets_are_named():
    # No rows was reported as weights of zero sum (no weights given); a score's y of the wrong length as a
    # broadcast or chunking error: now as on NumPy data, the input named.
    da, dask = _dask()
    X, targets, _ = _problem()
    with dask.config.set(scheduler="sync"):
        for loss in ("squared_error", "poisson", "huber"):
            with pytest.raises(ValueError, match="minimum of 1 sample"):
                IHTRegressor(k=1, loss=loss).fit(da.ones((0, 10), chunks=(0, 10)), np.ones(0))
        Xd = da.from_array(X, chunks=((60, 100), 10))
        for est, y in [(IHTClassifier(k=3), targets["binary"]), (IHTRegressor(k=3), targets["squared_error"])]:
            est.fit(X, y)
            with pytest.raises(ValueError, match=r"inconsistent numbers of samples.*\by\b"):
                est.score(Xd, y[:-1])
            with pytest.raises(ValueError, match=r"inconsistent numbers of samples.*sample_weight"):
                est.score(Xd, y, sample_weight=np.ones(len(y) + 1))


def test_unknown_and_column_chunks_are_refused_with_the_remedy():
    da, dask = _dask()
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, targets, _ = _problem()
    y = targets["squared_error"]
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"f{j}" for j in range(10)]), npartitions=3)
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match="unknown chunk sizes"):
            IHTRegressor(k=3).fit(frame.values, y)
        with pytest.raises(ValueError, match=r"chunked by rows only.*rechunk"):
            IHTRegressor(k=3, loss="poisson").fit(da.from_array(X, chunks=(80, 5)), targets["poisson"])
        # the DataFrame itself is converted with its partitions' lengths: the NumPy fit, with feature names
        got = IHTRegressor(k=3, loss="gamma").fit(frame, dd.from_pandas(pd.Series(targets["gamma"]),
                                                                         npartitions=3))
    expected = IHTRegressor(k=3, loss="gamma").fit(pd.DataFrame(X, columns=[f"f{j}" for j in range(10)]),
                                                   targets["gamma"])
    _same_model(expected, got)
    np.testing.assert_array_equal(got.feature_names_in_, expected.feature_names_in_)


def test_resident_fits_and_scores_on_a_local_cluster():
    da, dask = _dask()
    distributed = pytest.importorskip("distributed")
    pd = pytest.importorskip("pandas")
    X, targets, sw = _problem()
    chunks = (70, 1, 89)
    Xd = da.from_array(X, chunks=(chunks, 10))
    expected_poisson = IHTRegressor(k=None, loss="poisson").fit(X, targets["poisson"], sample_weight=sw)
    expected_clf = IHTClassifier(k=3).fit(X, targets["multinomial"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster):
            poisson = IHTRegressor(k=None, loss="poisson").fit(
                Xd, da.from_array(targets["poisson"], chunks=(chunks,)),
                sample_weight=da.from_array(sw, chunks=(chunks,)))
            clf = IHTClassifier(k=3).fit(Xd, da.from_array(targets["multinomial"], chunks=(chunks,)))
            accuracy = clf.score(Xd, pd.Series(targets["multinomial"]))
    _same_model(expected_poisson, poisson)
    _same_model(expected_clf, clf)
    assert accuracy == pytest.approx(np.mean(expected_clf.predict(X) == targets["multinomial"]), abs=1e-12)


# -- command line ----------------------------------------------------------------


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def table_csv(tmp_path):
    """A CSV with a header, a column with missing cells, a 3-category text column and the target in the middle."""
    rng = np.random.RandomState(1)
    n = 90
    a, b, c, d = rng.standard_normal((4, n))
    city = np.array(["Paris", "Lyon", "Nice"])[np.arange(n) % 3]
    price = 2 * a - 1.5 * c + 3.0 * (city == "Nice") + 0.2 * rng.standard_normal(n)
    rows = [[f"{a[i]:.5f}", "" if i % 13 == 0 else f"{b[i]:.5f}", f"{price[i]:.5f}", f"{c[i]:.5f}", city[i],
             f"{d[i]:.5f}"] for i in range(n)]
    path = _write_csv(tmp_path / "table.csv", ["a", "b", "price", "c", "city", "d"], rows)
    return path, {"a": a, "b": np.array([np.nan if i % 13 == 0 else float(f"{b[i]:.5f}") for i in range(n)]),
                  "c": c, "d": d, "city": city, "price": price}


def _reference_design(cols):
    """The CLI's documented preprocessing, written independently: medians, dummies (first one dropped), z-scores."""
    b = np.where(np.isnan(cols["b"]), np.nanmedian(cols["b"]), cols["b"])
    levels = sorted(set(cols["city"]))  # reference category: the first
    dummies = [(cols["city"] == level).astype(float) for level in levels[1:]]
    raw = np.column_stack([np.round(cols["a"], 5), b, np.round(cols["c"], 5), *dummies, np.round(cols["d"], 5)])
    return raw, StandardScaler().fit_transform(raw), levels


def test_cli_fit_of_a_table_is_the_python_api_fit(table_csv, tmp_path):
    path, cols = table_csv
    model_path = str(tmp_path / "model.joblib")
    status, out, err = _run([path, "--target", "price", "--impute", "--k", "3", "--cv", "0", "--json", "-q",
                             "-o", model_path])
    assert status == 0, err
    result = json.loads(out)
    raw, Z, levels = _reference_design(cols)
    price = np.array([float(f"{v:.5f}") for v in cols["price"]])
    # feature order of the CLI: numeric columns, then the text column's dummies (one group), see --count
    names = [f["feature"] for f in result["selected_features"]]
    assert set(result["selected_variables"]) == {"a", "c", "city"}
    # the API: the same design, k counts variables (the city's dummies one group)
    order = [0, 1, 2, 5, 3, 4]  # a, b, c, d, city_Nice, city_Paris
    expected = IHTRegressor(k=3, groups=[0, 1, 2, 3, 4, 4]).fit(Z[:, order], price)
    coef = {f["feature"]: f["coef"] for f in result["selected_features"]}
    reference = dict(zip(["a", "b", "c", "d"] + [f"city_{level}" for level in levels[1:]], expected.coef_,
                         strict=True))
    assert set(names) == {name for name, value in reference.items() if value != 0}
    for name in names:
        assert coef[name] == pytest.approx(reference[name], rel=1e-8)
    assert result["intercept"] == pytest.approx(expected.intercept_, rel=1e-8)
    # the original scale: coef / sd per unit, as a least-squares fit of the raw columns on that support
    original = {f["feature"]: f["coef_original"] for f in result["selected_features"]}
    sd = raw.std(axis=0)
    assert original["a"] == pytest.approx(reference["a"] / sd[0], rel=1e-8)
    # the saved model predicts what the printed model says
    status, out, err = _run(["predict", model_path, path, "-q"])
    assert status == 0, err
    predictions = np.array([float(v) for v in out.split()[1:]])
    np.testing.assert_allclose(predictions, expected.predict(Z[:, order]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dataset, cls", [("diabetes", IHTRegressor), ("wine", IHTClassifier)])
def test_cli_bundled_dataset_with_automatic_k_is_the_api_fit(dataset, cls):
    from sklearn import datasets

    status, out, err = _run(["--dataset", dataset, "--k", "auto", "--cv", "0", "--json", "-q"])
    assert status == 0, err
    result = json.loads(out)
    X, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    expected = cls(k=None).fit(StandardScaler().fit_transform(X), y)
    names = getattr(datasets, f"load_{dataset}")().feature_names
    assert result["k"]["how"] == "automatic" and result["k"]["value"] == expected.k_
    assert {f["feature"] for f in result["selected_features"]} == {names[j] for j in expected.support_}
    for f in result["selected_features"]:
        j = list(names).index(f["feature"])
        got = f["coef"] if np.ndim(expected.coef_) == 1 else [f["coef"][str(label)] for label in result["classes"]]
        want = expected.coef_[j] if np.ndim(expected.coef_) == 1 else expected.coef_[:, j]
        np.testing.assert_allclose(got, want, rtol=1e-8)
    if cls is IHTRegressor:  # the coefficients per unit of the raw columns give the same predictions
        raw = sum(f["coef_original"] * X[:, list(names).index(f["feature"])] for f in result["selected_features"])
        np.testing.assert_allclose(result["intercept_original"] + raw,
                                   expected.predict(StandardScaler().fit_transform(X)), rtol=1e-9)


def test_cli_errors_exit_2_and_write_nothing(table_csv, tmp_path):
    path, _ = table_csv
    model_path = tmp_path / "model.joblib"
    status, out, err = _run([path, "--target", "nope", "--cv", "0", "-o", str(model_path)])
    assert status == 2 and out == "" and "'nope' is not a column" in err and not model_path.exists()
    status, out, err = _run([path, "--target", "price", "--cv", "0", "-q"])  # missing cells without --impute
    assert status == 2 and out == "" and "'b'" in err and "--impute" in err
    # two used columns of one name: the printed table, the saved model and the predict mode would confuse them
    rows = [[f"{v:.3f}" for v in r] for r in np.random.RandomState(0).standard_normal((20, 3))]
    dup = _write_csv(tmp_path / "dup.csv", ["x", "x", "y"], rows)
    status, out, err = _run([dup, "--cv", "0", "-q", "-o", str(model_path)])
    assert status == 2 and out == "" and "several columns named 'x'" in err and not model_path.exists()


@pytest.mark.parametrize("seed", [1, 11, 14])
def test_constant_column_with_fewer_finite_gains_than_exchanges(seed):
    # Found through the command line (a constant column, --cv): the splicing search's exchange size became a
    # NumPy integer when fewer candidates than exchanges had a finite gain, and the fit crashed with
    # AttributeError ('numpy.int64' object has no attribute 'bit_length'). The best pair by exhaustive search.
    from itertools import combinations

    rng = np.random.RandomState(seed)
    X = rng.standard_normal((40, 4))
    X[:, 2] = 0.0
    y = 2 * X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(40)
    got = IHTRegressor(k=2).fit(X, y)

    def rss(pair):
        design = np.column_stack([np.ones(40), X[:, pair]])
        return np.inf if np.linalg.matrix_rank(design) < 3 else np.linalg.lstsq(design, y, rcond=None)[1].sum()

    assert tuple(got.support_) == min(combinations(range(4), 2), key=rss)


def test_cli_cross_validates_a_table_with_a_constant_column(tmp_path):
    rng = np.random.RandomState(11)
    X = rng.standard_normal((60, 3))
    y = 2 * X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(60)
    rows = [[f"{a:.5f}", f"{b:.5f}", "5", f"{c:.5f}", f"{t:.5f}"] for (a, b, c), t in zip(X, y, strict=True)]
    path = _write_csv(tmp_path / "const.csv", ["a", "b", "const", "c", "y"], rows)
    status, out, err = _run([path, "--k", "2", "--cv", "3", "--json", "-q"])
    assert status == 0, err
    result = json.loads(out)
    assert result["selected_variables"][0] == "a" and "const" not in result["selected_variables"]
    assert len(result["cv"]["scores"]["r2"]["folds"]) == 3
