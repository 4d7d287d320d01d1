"""Property-based fuzzing of the estimators, SparsityCV / SparsityIC and the command-line tool.

The property, for any input: a valid model (finite ``coef_``, at most ``k``
selected features, predictions of the right shape, finite) or a clear
scikit-learn style error (``ValueError`` / ``TypeError`` with a message), never
an ``IndexError`` / ``AttributeError`` / ``ZeroDivisionError`` from deep
inside, never a half-fitted estimator. The CLI: exit status 0 with output, or
a non-zero status with a message on standard error, never a traceback.

The ``ci`` hypothesis profile (the default, see ``conftest.py``) tries a
bounded, derandomised number of examples; ``HYPOTHESIS_PROFILE=fuzz`` runs
thousands.
"""

import io
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
import scipy.sparse as sp
from _problems import CLASSIFIERS, REGRESSORS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import is_classifier

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators._cli import main
from sparse_estimators.model_selection import SparsityCV, SparsityIC

ESTIMATORS = REGRESSORS + CLASSIFIERS
SPARSE = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.dok_matrix, sp.bsr_matrix, sp.dia_matrix,
          sp.csr_array, sp.csc_array, sp.coo_array]
CLEAR_ERRORS = (ValueError, TypeError)
INT_TYPES = [int, np.int32, np.int64, np.uint16]


@st.composite
def problems(draw, classification):
    """(X, y, sample_weight) with the unusual but legal (and some illegal) shapes and values."""
    n = draw(st.integers(1, 40))
    p = draw(st.integers(1, 10))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    kind = draw(st.sampled_from(["plain", "constant", "duplicate", "integer", "binary", "nonfinite", "wide"]))
    if kind == "constant":
        X[:, draw(st.integers(0, p - 1))] = draw(st.sampled_from([0.0, 1.0, -3.5]))
    elif kind == "duplicate" and p > 1:
        X[:, 1] = X[:, 0]
    elif kind == "integer":
        X = np.round(3 * X)
    elif kind == "binary":
        X = (X > 0).astype(float)
    elif kind == "nonfinite":
        X[rng.randint(n), rng.randint(p)] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    elif kind == "wide":
        X = rng.standard_normal((n, p + 30))
    # any scale within float range (issue 26 item 3; results' invariance: tests/test_input_defects.py)
    X = X * 10.0 ** draw(st.integers(-150, 150))
    if draw(st.booleans()):
        X = draw(st.sampled_from(SPARSE))(X)
    signal = np.nan_to_num(np.asarray(X.todense() if sp.issparse(X) else X), posinf=0, neginf=0)[:, 0]
    if classification:
        n_classes = draw(st.integers(1, 4))
        labels = draw(st.sampled_from(["int", "str", "bool"]))
        codes = (np.argsort(np.argsort(signal + rng.standard_normal(n))) * n_classes // max(n, 1)).astype(int)
        y = {"int": codes, "str": np.array(["cat", "dog", "eel", "fox"])[codes], "bool": codes % 2 == 1}[labels]
        if draw(st.booleans()):  # separable classes
            X = X if sp.issparse(X) else X + 10.0 * codes[:, None]
    else:
        y = signal + rng.standard_normal(n) * draw(st.sampled_from([0.0, 0.1, 1.0]))
        y = y * 10.0 ** draw(st.integers(-150, 150))
        if draw(st.booleans()) and n > 0:
            y = np.column_stack([y, -y + rng.standard_normal(n)])
    # Positive weights only: negative and all-zero ones are rejected (tests/test_input_defects.py).
    weight = draw(st.sampled_from([None, "random", "integer"]))
    sw = None if weight is None else (rng.uniform(0.1, 2, n) if weight == "random" else rng.randint(1, 4, n))
    return X, y, sw


def _params(draw_from, cls, n_features):
    k = draw_from(st.one_of(st.none(), st.integers(1, n_features + 2)))
    int_type = draw_from(st.sampled_from(INT_TYPES))
    params = {"k": None if k is None else int_type(k), "max_iter": int_type(draw_from(st.integers(1, 60)))}
    params["thresholding"] = draw_from(st.sampled_from(["hard", "soft", "reciprocal", "lq"]))
    params["fit_intercept"] = draw_from(st.booleans())
    return params


def _check_fitted(est, X, y, k_max):
    coef = np.asarray(est.coef_)
    assert np.all(np.isfinite(coef)), "coef_ is not finite"
    assert np.all(np.isfinite(est.intercept_)), "intercept_ is not finite"
    assert (0 if est.k is None else 1) <= est.k_ <= k_max  # (k=None on a constant target: the null model, k_ 0)
    assert est.support_.size <= est.k_
    pred = est.predict(X)
    assert pred.shape[0] == X.shape[0]
    if is_classifier(est):
        np.testing.assert_array_equal(est.classes_, np.unique(y))
        assert set(np.unique(pred)) <= set(est.classes_)
        proba = est.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    else:
        assert pred.shape == np.shape(y)
        assert np.all(np.isfinite(pred)), "predictions are not finite"


def _fit_or_clear_error(est, X, y, sw):
    """Fit; return True if fitted, False on a clear error (checked: message, nothing half-fitted)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, sample_weight=sw)
    except CLEAR_ERRORS as exc:
        assert str(exc), f"{type(exc).__name__} without a message"
        assert not hasattr(est, "coef_") and not hasattr(est, "best_estimator_"), "half-fitted after an error"
        return False
    return True


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_estimators_fit_or_fail_clearly(cls, data):
    classification = cls.__name__.endswith("Classifier")
    X, y, sw = data.draw(problems(classification))
    params = _params(data.draw, cls, X.shape[1])
    est = cls(**params)
    if _fit_or_clear_error(est, X, y, sw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _check_fitted(est, X, y, X.shape[1])


@pytest.mark.parametrize("search", ["cv", "ic"])
@pytest.mark.parametrize("cls", [IHTRegressor, IHTClassifier], ids=lambda c: c.__name__)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
          max_examples=max(10, settings.default.max_examples // 4))  # (a search is many fits)
@given(data=st.data())
def test_searches_fit_or_fail_clearly(search, cls, data):
    X, y, sw = data.draw(problems(cls is IHTClassifier))
    grid = data.draw(st.lists(st.integers(1, X.shape[1] + 2), min_size=1, max_size=5, unique=True))
    est = (SparsityCV(cls(max_iter=50), k_grid=sorted(grid), cv=2) if search == "cv"
           else SparsityIC(cls(max_iter=50), k_grid=sorted(grid)))
    if _fit_or_clear_error(est, X, y, sw):
        assert est.k_ in set(min(k, X.shape[1]) for k in grid) | set(grid)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = est.predict(X)
        assert pred.shape[0] == X.shape[0]
        if not is_classifier(est):
            assert np.all(np.isfinite(pred))


_CELLS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32).map(repr), st.integers().map(str),
                   st.sampled_from(["", "NA", "nan", "a", "b", "1e400", "-", "x,y", '"q"', " ", "TRUE"]))


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          max_examples=max(10, settings.default.max_examples // 2))
@given(header=st.lists(st.sampled_from(["a", "b", "c", "target", "", "a"]), min_size=0, max_size=4),
       rows=st.lists(st.lists(_CELLS, min_size=0, max_size=4), min_size=0, max_size=12),
       raw=st.one_of(st.none(), st.binary(max_size=40)),
       options=st.sampled_from([[], ["--k", "1"], ["--k", "auto"], ["--cv", "0"], ["--impute"],
                                ["--task", "classification"], ["--json"]]))
def test_cli_on_corrupt_csv_exits_cleanly(tmp_path_factory, header, rows, raw, options):
    path = tmp_path_factory.mktemp("csv") / "data.csv"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            status = main([str(path), "--quiet", "--cv", "2", *options])
        except SystemExit as exc:  # argparse's own errors
            status = exc.code
    assert "Traceback" not in err.getvalue()
    if status == 0:
        assert out.getvalue().strip(), "exit status 0 with no output"
    else:
        assert err.getvalue().strip(), f"exit status {status} with no message"
