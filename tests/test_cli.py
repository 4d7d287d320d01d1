"""Tests of the command-line interface (sparse_estimators._cli, python -m sparse_estimators)."""

import csv
import re
import subprocess
import sys

import numpy as np
import pytest

import sparse_estimators
from sparse_estimators import _cli
from sparse_estimators._cli import main


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def _selected_table(out):
    """Parse the selected-features table: list of (feature, [coefficients])."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Selected features:"))
    header = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("feature"))
    n_columns = len(lines[header].split()) - 1
    rows = []
    for line in lines[header + 2:]:  # skip the header and the dashes
        if not line.strip():
            break
        *name, = line.split()
        rows.append((" ".join(name[:-n_columns]), [float(v) for v in name[-n_columns:]]))
    return rows


def _cv_score(out):
    match = re.search(r"^Cross-validated (R\^2|accuracy) \(\d+-fold.*\): (-?[\d.]+) ± ([\d.]+)$", out, re.M)
    assert match, out
    return match.group(1), float(match.group(2)), float(match.group(3))


@pytest.fixture
def sparse_csv(tmp_path):
    """y = 3 x2 - 2 x5 + noise among 10 numeric columns; target last."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 10))
    y = 3 * X[:, 2] - 2 * X[:, 5] + 0.1 * rng.standard_normal(150) + 1
    data = np.column_stack([X, y]).round(6)
    return _write_csv(tmp_path / "data.csv", [f"x{j}" for j in range(10)] + ["y"], data.tolist()), data[:, -1]


def test_default_dataset_prints_cv_score(capsys):
    assert main(["--cv", "3"]) == 0
    captured = capsys.readouterr()
    assert "diabetes" in captured.out
    assert "IHTRegressor" in captured.out
    metric, mean, std = _cv_score(captured.out)
    assert metric == "R^2" and 0 < mean < 1 and std >= 0
    assert _selected_table(captured.out)  # at least one feature
    # Progress on stderr: one line per fold and a final timing line.
    assert len(re.findall(r"fold \d/3", captured.err)) == 3
    assert re.search(r"Done in [\d.]+ s", captured.err)


def test_csv_recovers_sparse_support(sparse_csv, capsys):
    path, y = sparse_csv
    assert main([path, "--k", "2", "--cv", "3"]) == 0
    out = capsys.readouterr().out
    rows = _selected_table(out)
    assert sorted(name for name, _ in rows) == ["x2", "x5"]
    coef = dict((name, c[0]) for name, c in rows)
    assert coef["x2"] > 2.5 and coef["x5"] < -1.5  # standardized, features have unit variance
    assert "Task:   regression" in out
    assert "standardized scale" in out
    assert _cv_score(out)[1] > 0.95
    intercept = float(re.search(r"^Intercept: +(\S+)$", out, re.M).group(1))
    assert intercept == pytest.approx(y.mean(), abs=1e-3)  # standardized features have mean 0


def test_csv_without_scaling_and_target_in_the_middle(tmp_path, capsys):
    rng = np.random.RandomState(1)
    X = rng.standard_normal((80, 4))
    y = 5 * X[:, 1] + 0.01 * rng.standard_normal(80)
    rows = [[f"id{i}", X[i, 0], y[i], X[i, 1], X[i, 2], X[i, 3]] for i in range(80)]
    path = _write_csv(tmp_path / "mid.csv", ["id", "a", "price", "b", "c", "d"], rows)
    assert main([path, "--target", "price", "--drop", "id", "--k", "1", "--no-scale", "--cv", "0"]) == 0
    out = capsys.readouterr().out
    assert [name for name, _ in _selected_table(out)] == ["b"]
    assert abs(_selected_table(out)[0][1][0] - 5) < 0.05
    assert "units of the data" in out
    assert "Cross-validated" not in out


def test_csv_classification_with_string_labels(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 6))
    score = np.column_stack([X[:, 0], X[:, 3], -X[:, 0] - X[:, 3]])
    labels = np.array(["cat", "dog", "eel"])[np.argmax(score, axis=1)]
    path = _write_csv(tmp_path / "animals.csv", [f"f{j}" for j in range(6)] + ["animal"],
                      [[*row, label] for row, label in zip(X.round(5).tolist(), labels, strict=True)])
    assert main([path, "--k", "2", "--cv", "3", "--quiet"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "Task:   classification (the target is not numeric)" in out
    assert re.search(r"^\s+feature\s+cat\s+dog\s+eel$", out, re.M)
    rows = _selected_table(out)
    assert sorted(name for name, _ in rows) == ["f0", "f3"]
    assert all(len(coefs) == 3 for _, coefs in rows)
    metric, mean, _ = _cv_score(out)
    assert metric == "accuracy" and mean > 0.8
    assert captured.err == ""  # --quiet


@pytest.mark.parametrize(
    ("y", "task"),
    [
        (np.array(["a", "b"] * 10, dtype=object), "classification"),
        (np.array(["0", "1", "2"] * 10, dtype=object), "classification"),
        (np.arange(30).astype(str).astype(object), "regression"),  # too many distinct values
        (np.array(["0.5", "1.5"] * 10, dtype=object), "regression"),  # not integers
        (np.array([0, 1, 2, 3]), "regression"),  # not fewer than half the rows
    ],
)
def test_infer_task(y, task):
    assert _cli._infer_task(y)[0] == task


class _BlockPandas:
    """Meta-path finder that makes ``import pandas`` fail, as if it were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None


def test_binary_integer_labels_and_no_pandas(tmp_path, capsys, monkeypatch):
    for name in [name for name in sys.modules if name == "pandas" or name.startswith("pandas.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_BlockPandas(), *sys.meta_path])
    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 5))
    y = (X[:, 4] > 0).astype(int)
    path = _write_csv(tmp_path / "bin.csv", ["a", "b", "c", "d", "e", "label"],
                      [[*row, label] for row, label in zip(X.round(5).tolist(), y, strict=True)])
    assert main([path, "--k", "1", "--cv", "2", "--method", "iht"]) == 0
    out = capsys.readouterr().out
    assert "distinct integer values" in out
    assert "positive class: 1" in out
    assert [name for name, _ in _selected_table(out)] == ["e"]
    assert "pandas" not in sys.modules


def test_missing_target_column(sparse_csv, capsys):
    assert main([sparse_csv[0], "--target", "nope"]) == 2
    err = capsys.readouterr().err
    assert "error: --target 'nope' is not a column" in err
    assert "'x0'" in err  # lists the available columns


def test_missing_file(tmp_path, capsys):
    assert main([str(tmp_path / "absent.csv")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_non_numeric_feature_column(tmp_path, capsys):
    path = _write_csv(tmp_path / "text.csv", ["a", "city", "y"], [[1, "Paris", 1.0], [2, "Rome", 2.0]] * 5)
    assert main([path, "--cv", "0"]) == 2
    err = capsys.readouterr().err
    assert "column 'city' is not numeric" in err and "--drop" in err


def test_regression_on_text_target_is_an_error(tmp_path, capsys):
    path = _write_csv(tmp_path / "t.csv", ["a", "y"], [[1, "x"], [2, "y"]] * 5)
    assert main([path, "--task", "regression"]) == 2
    assert "numeric target" in capsys.readouterr().err


def test_forced_classification_of_a_continuous_target(capsys):
    assert main(["--task", "classification", "--cv", "2"]) == 2
    assert "use --task regression" in capsys.readouterr().err


def test_unknown_method_is_a_usage_error(capsys):
    assert main(["--method", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "--method" in err and "invalid choice: 'bogus'" in err


def test_methods_are_discovered_at_run_time(monkeypatch, capsys):
    class FakeRegressor(sparse_estimators.IHTRegressor):
        pass

    monkeypatch.setitem(_cli._METHOD_PREFIXES, "fake", "FakeIHT")
    monkeypatch.setitem(_cli._METHOD_PREFIXES, "missing", "NoSuchIHT")
    monkeypatch.setattr(sparse_estimators, "FakeIHTRegressor", FakeRegressor, raising=False)
    methods = _cli.available_methods()
    assert "iht" in methods and "fake" in methods and "missing" not in methods
    assert main(["--method", "fake", "--k", "2", "--cv", "0"]) == 0
    assert "FakeRegressor(k=2)" in capsys.readouterr().out
    # A family without a classifier is reported clearly for a classification task.
    assert main(["--method", "fake", "--dataset", "wine", "--cv", "0"]) == 2
    assert "no classification estimator (FakeIHTClassifier)" in capsys.readouterr().err


def test_help(capsys):
    assert main(["--help"]) == 0
    assert "--thresholding" in capsys.readouterr().out


def test_python_dash_m_entry_point():
    result = subprocess.run([sys.executable, "-m", "sparse_estimators", "--dataset", "breast_cancer", "--k", "3",
                             "--cv", "2"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "IHTClassifier(k=3)" in result.stdout
    assert len(_selected_table(result.stdout)) == 3
    assert _cv_score(result.stdout)[0] == "accuracy"
    assert "fold 2/2" in result.stderr
