"""Command-line tests of failures: accurate messages and a non-zero exit status when nothing useful is produced."""

import re

import numpy as np
import pytest
from _cli_helpers import (
    _cv_scores,
    _selected_table,
    _write_csv,
)

import sparse_estimators
from sparse_estimators import IHTRegressor, _cli
from sparse_estimators._cli import main

# -- accurate messages, non-zero exit when nothing useful is produced ------------


@pytest.fixture
def small_regression():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((40, 4))
    y = 2 * X[:, 0] + 0.1 * rng.standard_normal(40)
    return X, y


def test_target_beyond_float_range(tmp_path, capsys, small_regression):
    X, y = small_regression
    rows = [[*x, v] for x, v in zip(X.tolist(), y.tolist(), strict=True)]
    rows[3][-1] = "1e400"
    path = _write_csv(tmp_path / "big.csv", ["a", "b", "c", "d", "y"], rows)
    assert main([path, "--cv", "3"]) == 2
    captured = capsys.readouterr()
    assert "the target column 'y' holds 1e400" in captured.err and "line 5" in captured.err
    assert "beyond the range of floating-point numbers" in captured.err
    assert "repeated labels" not in captured.err and captured.out == ""


@pytest.mark.parametrize("scale", [[], ["--no-scale"]])
@pytest.mark.parametrize("where", ["target", "feature"])
def test_values_too_large_for_the_fit(tmp_path, capsys, small_regression, scale, where):
    X, y = small_regression
    if where == "target":
        y = y * 1e200
    else:
        X = X.copy()
        X[:, 1] *= 1e200
    path = _write_csv(tmp_path / "huge.csv", ["a", "b", "c", "d", "y"],
                      [[*x, v] for x, v in zip(X.tolist(), y.tolist(), strict=True)])
    assert main([path, "--cv", "3", *scale]) == 2
    captured = capsys.readouterr()
    name = "the target 'y'" if where == "target" else "column 'b'"
    assert re.search(name + r" has values up to [\d.]+e\+200 in magnitude", captured.err), captured.err
    assert "rescale" in captured.err
    assert "NaN" not in captured.err and captured.out == ""
    # The same data a factor 1e-60 smaller (1e140: squares 1e280, well within range) fits fine.
    small = [[*x, v] for x, v in zip((X * 1e-60).tolist(), (y * 1e-60).tolist(), strict=True)]
    assert main([_write_csv(tmp_path / "ok.csv", ["a", "b", "c", "d", "y"], small), "--k", "1", "--cv", "3",
                 *scale]) == 0
    assert [name for name, _ in _selected_table(capsys.readouterr().out)] == ["a"]


def test_class_with_one_row(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((40, 4))
    labels = ["a"] * 20 + ["b"] * 19 + ["c"]
    path = _write_csv(tmp_path / "one.csv", ["f1", "f2", "f3", "f4", "y"],
                      [[*x, label] for x, label in zip(X.tolist(), labels, strict=True)])
    assert main([path, "--cv", "5"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing printed before the failure
    assert "5-fold stratified cross-validation needs at least 5 rows of every class" in captured.err
    assert "class 'c' (1 row)" in captured.err and "--cv 0" in captured.err
    # With 3 rows of the smallest class, the message gives the largest usable number of folds.
    labels = ["a"] * 20 + ["b"] * 17 + ["c"] * 3
    path = _write_csv(tmp_path / "three.csv", ["f1", "f2", "f3", "f4", "y"],
                      [[*x, label] for x, label in zip(X.tolist(), labels, strict=True)])
    assert main([path, "--cv", "5"]) == 2
    assert "use --cv 3 or fewer" in capsys.readouterr().err
    assert main([path, "--cv", "3", "--k", "2"]) == 0


def test_binary_class_with_one_row_fits_without_cross_validation(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((40, 4))
    labels = ["a"] * 39 + ["b"]
    path = _write_csv(tmp_path / "one.csv", ["f1", "f2", "f3", "f4", "y"],
                      [[*x, label] for x, label in zip(X.tolist(), labels, strict=True)])
    assert main([path]) == 2
    captured = capsys.readouterr()
    assert "class 'b' (1 row)" in captured.err
    assert captured.out == ""  # the model is not printed before a failing cross-validation
    assert main([path, "--cv", "0", "--k", "1"]) == 0


def test_more_folds_than_a_regression_can_score(tmp_path, capsys, small_regression):
    X, y = small_regression
    path = _write_csv(tmp_path / "ten.csv", ["a", "b", "c", "d", "y"],
                      [[*x, v] for x, v in zip(X[:10].tolist(), y[:10].tolist(), strict=True)])
    assert main([path, "--cv", "10"]) == 2
    captured = capsys.readouterr()
    assert "--cv 10 on 10 rows leaves test folds of 1 row" in captured.err
    assert "use --cv 5 or fewer" in captured.err and "nan" not in captured.out + captured.err
    assert main([path, "--cv", "5", "--k", "1"]) == 0
    assert np.isfinite(_cv_scores(capsys.readouterr().out)["R^2"][0])


def test_undefined_cv_score_is_a_failure(sparse_csv, capsys, monkeypatch):
    # Safety net behind the checks above: a score that is NaN in some fold is reported, not printed as nan.
    from sklearn.metrics import make_scorer

    monkeypatch.setitem(_cli._SCORES, "regression",
                        [("r2", "R^2", "r2", 1), ("odd", "odd score", make_scorer(lambda y, p: np.nan), 1)])
    path, _ = sparse_csv
    assert main([path, "--k", "2", "--cv", "3"]) == 1
    captured = capsys.readouterr()
    assert "cross-validation gave no odd score in fold(s) 1, 2, 3 of 3" in captured.err
    assert captured.out == ""


def test_fit_without_any_feature_is_a_failure(sparse_csv, capsys, monkeypatch):
    class EmptyRegressor(IHTRegressor):  # a solver that diverged and kept the zero model
        def fit(self, X, y, **kwargs):
            super().fit(X, y, **kwargs)
            self.coef_ = np.zeros_like(self.coef_)
            self.support_ = np.array([], dtype=int)
            return self

    monkeypatch.setitem(_cli._METHOD_PREFIXES, "empty", "Empty")
    monkeypatch.setattr(sparse_estimators, "EmptyRegressor", EmptyRegressor, raising=False)
    path, _ = sparse_csv
    assert main([path, "--method", "empty", "--k", "2"]) == 1
    captured = capsys.readouterr()
    assert "the fit selected no feature" in captured.err and captured.out == ""


def test_constant_target_and_single_class(tmp_path, capsys):
    rows = [[i, i % 3, 7.0] for i in range(20)]
    path = _write_csv(tmp_path / "const.csv", ["a", "b", "y"], rows)
    assert main([path]) == 2
    assert "the target 'y' is constant (7 in every row)" in capsys.readouterr().err
    assert main([path, "--task", "classification"]) == 2
    assert "classification needs at least 2 classes" in capsys.readouterr().err
