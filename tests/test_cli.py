"""Tests of the command-line interface (sparse_estimators._cli, python -m sparse_estimators).

End to end through ``main(argv)`` on CSV files written to ``tmp_path``: standard
output, standard error, exit status, saved models and their predictions.
"""

import csv
import json
import math
import os
import re
import struct
import subprocess
import sys

import joblib
import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sparse_estimators
from sparse_estimators import IHTClassifier, IHTRegressor, _cli
from sparse_estimators._cli import main


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def _read_csv(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


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


def _cv_scores(out):
    """Parse the cross-validated scores table: {name: (mean, sd)}."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Cross-validated scores ("))
    assert re.match(r"^Cross-validated scores \(\d+-fold, shuffled with seed \d+", lines[start]), lines[start]
    scores = {}
    for line in lines[start + 4:]:  # blank line, header, dashes
        if not line.strip():
            break
        *name, mean, sd = line.split()
        scores[" ".join(name)] = (float(mean), float(sd))
    return scores


def _criterion_table(out):
    """Parse the criterion table under 'k = ...: chosen automatically': list of (k, value, marked)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "chosen automatically" in line)
    rows = []
    for line in lines[start + 4:]:  # blank line, header, dashes
        if not line.strip():
            break
        parts = line.split()
        rows.append((int(parts[0]), float(parts[1]), "<- chosen" in line))
    return rows


@pytest.fixture
def sparse_csv(tmp_path):
    """y = 3 x2 - 2 x5 + noise among 10 numeric columns; target last."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 10))
    y = 3 * X[:, 2] - 2 * X[:, 5] + 0.1 * rng.standard_normal(150) + 1
    data = np.column_stack([X, y]).round(6)
    return _write_csv(tmp_path / "data.csv", [f"x{j}" for j in range(10)] + ["y"], data.tolist()), data


def _binary_data(seed=0, n=120):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 5)).round(5)
    y = np.where(X[:, 1] - X[:, 3] + 0.3 * rng.standard_normal(n) > 0, "yes", "no")
    return X, y


# -- fit mode: output ------------------------------------------------------------


def test_default_dataset_prints_cv_scores(capsys):
    assert main(["--cv", "3"]) == 0
    captured = capsys.readouterr()
    assert "diabetes" in captured.out
    assert "IHTRegressor" in captured.out
    scores = _cv_scores(captured.out)
    assert set(scores) == {"R^2", "RMSE"}
    assert 0 < scores["R^2"][0] < 1
    assert 30 < scores["RMSE"][0] < 80  # the diabetes target has sd 77; R^2 > 0 means an RMSE below it
    assert _selected_table(captured.out)  # at least one feature
    assert re.search(r"^k = \d+[ :]", captured.out, re.M)  # says which k was used
    # Progress on stderr: one line per fold and a final timing line.
    assert len(re.findall(r"fold \d/3: R\^2 -?[\d.]+, RMSE [\d.]+", captured.err)) == 3
    assert re.search(r"Done in [\d.]+ s", captured.err)


def test_csv_recovers_sparse_support(sparse_csv, capsys):
    path, data = sparse_csv
    assert main([path, "--k", "2", "--cv", "3"]) == 0
    out = capsys.readouterr().out
    rows = _selected_table(out)
    assert sorted(name for name, _ in rows) == ["x2", "x5"]
    coef = dict((name, c[0]) for name, c in rows)
    assert coef["x2"] > 2.5 and coef["x5"] < -1.5  # standardized, features have unit variance
    assert "Task:   regression" in out
    assert "k = 2 (--k 2)" in out
    assert "standardized scale" in out
    scores = _cv_scores(out)
    assert scores["R^2"][0] > 0.95
    assert scores["RMSE"][0] < 0.15  # the noise has sd 0.1
    intercept = float(re.search(r"^Intercept: +(\S+)$", out, re.M).group(1))
    assert intercept == pytest.approx(data[:, -1].mean(), abs=1e-3)  # standardized features have mean 0


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
    scores = _cv_scores(out)
    assert set(scores) == {"accuracy", "ROC AUC (macro one-vs-rest)", "log-loss"}
    assert scores["accuracy"][0] > 0.8
    assert scores["ROC AUC (macro one-vs-rest)"][0] > 0.9
    assert 0 < scores["log-loss"][0] < math.log(3)  # better than the uniform guess
    assert captured.err == ""  # --quiet


def test_binary_scores_are_scikit_learns_on_the_same_folds(tmp_path, capsys):
    X, y = _binary_data()
    path = _write_csv(tmp_path / "bin.csv", ["a", "b", "c", "d", "e", "label"],
                      [[*row, label] for row, label in zip(X.tolist(), y, strict=True)])
    assert main([path, "--k", "2", "--cv", "4", "--seed", "3", "--json", "-q"]) == 0
    result = json.loads(capsys.readouterr().out)
    # The same pipeline built by hand, scored by scikit-learn's cross_validate on the same folds.
    reference = cross_validate(make_pipeline(StandardScaler(), IHTClassifier(k=2)), X, y,
                               cv=StratifiedKFold(4, shuffle=True, random_state=3),
                               scoring=["accuracy", "roc_auc", "neg_log_loss"])
    scores = result["cv"]["scores"]
    assert scores["accuracy"]["folds"] == pytest.approx(reference["test_accuracy"], rel=1e-12)
    assert scores["roc_auc"]["folds"] == pytest.approx(reference["test_roc_auc"], rel=1e-12)
    assert scores["log_loss"]["folds"] == pytest.approx(-reference["test_neg_log_loss"], rel=1e-12)
    assert scores["roc_auc"]["mean"] == pytest.approx(reference["test_roc_auc"].mean(), rel=1e-12)
    assert scores["roc_auc"]["sd"] == pytest.approx(reference["test_roc_auc"].std(), rel=1e-12)
    assert result["classes"] == ["no", "yes"]
    assert sorted(entry["feature"] for entry in result["selected_features"]) == ["b", "d"]


def test_json_output(sparse_csv, capsys):
    path, data = sparse_csv
    assert main([path, "--k", "2", "--cv", "3", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # stdout holds the JSON object only
    X, y = data[:, :-1], data[:, -1]
    reference = make_pipeline(StandardScaler(), IHTRegressor(k=2)).fit(X, y)[-1]
    assert [entry["feature"] for entry in result["selected_features"]] == ["x2", "x5"]  # largest first
    assert [entry["column"] for entry in result["selected_features"]] == ["x2", "x5"]
    assert [entry["coef"] for entry in result["selected_features"]] == pytest.approx(reference.coef_[[2, 5]],
                                                                                     rel=1e-12)
    assert result["intercept"] == pytest.approx(reference.intercept_, rel=1e-12)
    assert result["k"]["value"] == 2 and result["k"]["requested"] == 2 and result["k"]["how"] == "--k"
    assert result["task"] == "regression"
    assert result["data"] | {"source": None} == {"source": None, "n_samples": 150, "n_columns": 10,
                                                 "n_features": 10, "target": "y", "text_columns": [],
                                                 "imputed": {}, "n_variables": 10, "count": "variables",
                                                 "grouped": False, "reference_categories": {}}
    cv = cross_validate(make_pipeline(StandardScaler(), IHTRegressor(k=2)), X, y,
                        cv=KFold(3, shuffle=True, random_state=0), scoring=["r2", "neg_root_mean_squared_error"])
    assert result["cv"]["scores"]["r2"]["folds"] == pytest.approx(cv["test_r2"], rel=1e-12)
    assert result["cv"]["scores"]["rmse"]["folds"] == pytest.approx(-cv["test_neg_root_mean_squared_error"],
                                                                    rel=1e-12)
    assert "fold 3/3" in captured.err  # progress still on stderr


def test_multiclass_json_coefficients_per_class(capsys):
    assert main(["--dataset", "wine", "--k", "3", "--cv", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["classes"] == ["class_0", "class_1", "class_2"]
    assert len(result["selected_features"]) == 3
    assert all(set(entry["coef"]) == set(result["classes"]) for entry in result["selected_features"])
    assert set(result["intercept"]) == set(result["classes"])
    assert result["cv"] is None


def test_coefficients_on_the_original_scale(tmp_path, capsys):
    rng = np.random.RandomState(3)
    X = rng.standard_normal((120, 5)) * [1, 10, 0.1, 5, 2] + [0, 50, -3, 7, 1]  # scales and means far from 1, 0
    y = 0.4 * X[:, 1] - 8 * X[:, 2] + 2 + 0.1 * rng.standard_normal(120)
    X, y = X.round(5), y.round(5)
    path = _write_csv(tmp_path / "scaled.csv", ["a", "b", "c", "d", "e", "y"], np.column_stack([X, y]).tolist())
    assert main([path, "--k", "2", "--cv", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sorted(result["selected_variables"]) == ["b", "c"]
    # debiased: the least-squares fit on the selected columns in their own units
    from sklearn.linear_model import LinearRegression

    ols = LinearRegression().fit(X[:, [1, 2]], y)
    coef = {entry["feature"]: entry["coef_original"] for entry in result["selected_features"]}
    assert [coef["b"], coef["c"]] == pytest.approx(ols.coef_, rel=1e-8)
    assert result["intercept_original"] == pytest.approx(ols.intercept_, rel=1e-8)
    assert main([path, "--k", "2", "--cv", "0"]) == 0
    out = capsys.readouterr().out
    rows = dict(_selected_table(out))
    assert rows["b"][1] == pytest.approx(ols.coef_[0], abs=1e-4)  # the 'original' column
    intercept = float(re.search(r"^Intercept on the original scale: +(\S+)$", out, re.M).group(1))
    assert intercept == pytest.approx(ols.intercept_, abs=1e-4)


def test_multiclass_coefficients_on_the_original_scale_give_the_decision_function(capsys):
    from sklearn.datasets import load_wine

    assert main(["--dataset", "wine", "--k", "3", "--cv", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    X = load_wine().data
    reference = make_pipeline(StandardScaler(), IHTClassifier(k=3)).fit(X, load_wine().target)
    names = list(load_wine().feature_names)
    columns = [names.index(entry["feature"]) for entry in result["selected_features"]]
    for c, label in enumerate(result["classes"]):
        coef = np.array([entry["coef_original"][label] for entry in result["selected_features"]])
        decision = X[:, columns] @ coef + result["intercept_original"][label]
        np.testing.assert_allclose(decision, reference.decision_function(X)[:, c], rtol=1e-9, atol=1e-9)


# -- task detection --------------------------------------------------------------


@pytest.mark.parametrize(
    ("y", "task"),
    [
        (np.array(["a", "b"] * 10, dtype=object), "classification"),
        (np.array(["0", "1", "2"] * 10, dtype=object), "classification"),
        (np.array(["1", "2", "3", "4", "5"] * 4, dtype=object), "classification"),  # 5: a handful of classes
        (np.array(["0", "1", "2", "3", "4", "5"] * 4, dtype=object), "regression"),  # 6 integers: counts
        (np.arange(30).astype(str).astype(object), "regression"),  # too many distinct values
        (np.array(["0.5", "1.5"] * 10, dtype=object), "regression"),  # not integers
        (np.array([0, 1, 2, 3]), "regression"),  # not fewer than half the rows
    ],
)
def test_infer_task(y, task):
    assert _cli._infer_task(y)[0] == task


def test_count_target_is_a_regression_with_a_note(tmp_path, capsys):
    # Issue #25: an integer count target (here 0..~20) must not become a many-class classification.
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 5))
    counts = rng.poisson(np.exp(1.5 + 0.5 * X[:, 0]))
    assert 6 <= np.unique(counts).size <= 20  # what the rule of earlier versions called 'classes'
    path = _write_csv(tmp_path / "counts.csv", ["a", "b", "c", "d", "e", "visits"],
                      [[*row, count] for row, count in zip(X.round(5).tolist(), counts, strict=True)])
    assert main([path, "--k", "1", "--cv", "3"]) == 0
    out = capsys.readouterr().out
    task_line = next(line for line in out.splitlines() if line.startswith("Task:"))
    assert task_line.startswith("Task:   regression (the target has")
    assert "distinct integer values" in task_line and "use --task classification" in task_line
    assert [name for name, _ in _selected_table(out)] == ["a"]
    assert "R^2" in _cv_scores(out)
    # --task classification still gives the classification
    assert main([path, "--k", "1", "--cv", "0", "--task", "classification"]) == 0
    assert "Task:   classification (--task)" in capsys.readouterr().out


class _BlockImport:
    """Meta-path finder that makes ``import <name>`` fail, as if the package were not installed."""

    def __init__(self, name):
        self.name = name

    def find_spec(self, name, path=None, target=None):
        if name == self.name or name.startswith(self.name + "."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None


def _block(monkeypatch, name):
    for module in [module for module in sys.modules if module == name or module.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(sys, "meta_path", [_BlockImport(name), *sys.meta_path])


def test_binary_integer_labels_and_no_pandas(tmp_path, capsys, monkeypatch):
    _block(monkeypatch, "pandas")
    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 5))
    y = (X[:, 4] > 0).astype(int)
    path = _write_csv(tmp_path / "bin.csv", ["a", "b", "c", "d", "e", "label"],
                      [[*row, label] for row, label in zip(X.round(5).tolist(), y, strict=True)])
    model = tmp_path / "bin.joblib"
    assert main([path, "--k", "1", "--cv", "2", "--method", "iht", "--output", str(model)]) == 0
    out = capsys.readouterr().out
    assert "the target has 2 distinct integer values, taken as class labels" in out
    assert "positive class: 1" in out
    assert [name for name, _ in _selected_table(out)] == ["e"]
    assert set(_cv_scores(out)) == {"accuracy", "ROC AUC", "log-loss"}
    assert main(["predict", str(model), path, "--output", str(tmp_path / "p.csv")]) == 0
    header, rows = _read_csv(tmp_path / "p.csv")
    assert header == ["label", "proba_0", "proba_1"]
    assert "pandas" not in sys.modules


# -- text columns and missing cells ----------------------------------------------


def _text_data(seed=0, n=150):
    """price = 2 a + 3 [city == Rome] - 1.5 [sunny == yes] + noise, with numeric distractors."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 3)).round(4)
    city = rng.choice(["Paris", "Rome", "Oslo"], n)
    sunny = rng.choice(["yes", "no"], n)
    y = 2 * X[:, 0] + 3 * (city == "Rome") - 1.5 * (sunny == "yes") + 0.05 * rng.standard_normal(n)
    return X, city, sunny, y


def test_text_columns_are_one_hot_encoded(tmp_path, capsys):
    X, city, sunny, y = _text_data()
    path = _write_csv(tmp_path / "text.csv", ["a", "b", "city", "c", "sunny", "price"],
                      [[x[0], x[1], c, x[2], s, v] for x, c, s, v in zip(X, city, sunny, y.round(4), strict=True)])
    assert main([path, "--k", "3", "--count", "columns", "--cv", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["data"]["text_columns"] == ["city", "sunny"]
    assert result["data"]["n_features"] == 3 + 3 + 1  # 3 numeric, 3 cities, one dummy for a 2-category column
    selected = {entry["feature"]: entry["column"] for entry in result["selected_features"]}
    assert selected == {"a": "a", "city_Rome": "city", "sunny_yes": "sunny"}
    assert result["cv"]["scores"]["r2"]["mean"] > 0.99
    assert main([path, "--k", "3", "--count", "columns", "--cv", "0"]) == 0
    out = capsys.readouterr().out
    assert "text columns one-hot encoded: city, sunny" in out
    assert "Selected features: 3 of 7 (the 5 columns give 7 after one-hot encoding)" in out
    assert sorted(name for name, _ in _selected_table(out)) == ["a", "city_Rome", "sunny_yes"]


def test_identifier_text_column_is_refused(tmp_path, capsys):
    rng = np.random.RandomState(0)
    rows = [[f"id{i}", rng.standard_normal(), rng.standard_normal()] for i in range(20)]
    path = _write_csv(tmp_path / "ids.csv", ["id", "a", "y"], rows)
    assert main([path, "--cv", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "column 'id' holds text" in captured.err and "20 distinct values in 20 rows" in captured.err
    assert "--drop 'id'" in captured.err
    assert main([path, "--cv", "0", "--drop", "id"]) == 0


def test_missing_cells_are_refused_or_imputed(tmp_path, capsys):
    X, city, sunny, y = _text_data()
    rows = [[x[0], x[1], c, x[2], s, v] for x, c, s, v in zip(X, city, sunny, y.round(4), strict=True)]
    rows[4][1] = ""
    rows[9][1] = "NA"
    rows[7][2] = ""
    path = _write_csv(tmp_path / "holes.csv", ["a", "b", "city", "c", "sunny", "price"], rows)
    assert main([path, "--k", "3", "--cv", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "column 'b' has 2 missing value(s) (and 1 other column(s))" in captured.err
    assert "--impute" in captured.err

    model_path = tmp_path / "holes.joblib"
    assert main([path, "--k", "3", "--cv", "0", "--impute", "--output", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert "missing cells imputed: b (2), city (1)" in out
    # k = 3 variables: a, city (its dummies against the reference category Oslo) and sunny
    assert sorted(name for name, _ in _selected_table(out)) == ["a", "city_Paris", "city_Rome", "sunny_yes"]
    # The median of the column's present values, and the most frequent city, learnt on the training rows.
    b = np.array([row[1] for row in rows if row[1] not in ("", "NA")], dtype=float)
    numeric_imputer = joblib.load(model_path).named_steps["preprocess"].named_transformers_["numeric"][0]
    assert numeric_imputer.statistics_[1] == pytest.approx(np.median(b))
    text_imputer = joblib.load(model_path).named_steps["preprocess"].named_transformers_["text"][0]
    present = [c for i, c in enumerate(city) if i != 7]
    assert text_imputer.statistics_[0] == max(set(present), key=present.count)


def test_missing_target_is_refused(sparse_csv, tmp_path, capsys):
    _, data = sparse_csv
    rows = data.tolist()
    rows[3][-1] = ""
    path = _write_csv(tmp_path / "t.csv", [f"x{j}" for j in range(10)] + ["y"], rows)
    assert main([path, "--impute"]) == 2
    assert "the target column 'y' has 1 missing value(s) (first at line 5" in capsys.readouterr().err


def _region_data(tmp_path, seed=0, n=200):
    """y = 2 x0 + 1.5 x1 + x2 + effect[region] + noise; x3, x4 noise; region of 4 categories (east is 2)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 5)).round(4)
    region = rng.choice(["east", "north", "south", "west"], n)
    effect = {"east": 2.0, "north": 0.0, "south": 1.0, "west": 4.0}
    y = 2 * X[:, 0] + 1.5 * X[:, 1] + X[:, 2] + np.array([effect[r] for r in region]) + 0.05 * rng.standard_normal(n)
    path = _write_csv(tmp_path / "regions.csv", ["x0", "x1", "x2", "x3", "x4", "region", "y"],
                      [[*x, r, v] for x, r, v in zip(X.tolist(), region, y.round(4), strict=True)])
    return path, X, region, y


def test_k_counts_original_variables_with_a_categorical_column(tmp_path, capsys):
    path, X, region, y = _region_data(tmp_path)
    assert main([path, "--k", "4", "--cv", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["data"]["grouped"] and result["data"]["n_variables"] == 6
    # the 4 variables of the model: region's dummy columns selected together, against its first category
    assert sorted(result["selected_variables"]) == ["region", "x0", "x1", "x2"]
    coef = {entry["feature"]: entry["coef_original"] for entry in result["selected_features"]}
    assert sorted(coef) == ["region_north", "region_south", "region_west", "x0", "x1", "x2"]
    assert result["data"]["reference_categories"] == {"region": "east"}
    # per unit of a dummy: the effect of the region relative to east (north -2, south -1, west +2)
    assert [coef["region_north"], coef["region_south"], coef["region_west"]] == pytest.approx([-2, -1, 2], abs=0.05)
    assert main([path, "--k", "4", "--cv", "0"]) == 0
    out = capsys.readouterr().out
    assert "k = 4 (--k 4)" in out and "k counts variables" in out
    assert "from 4 of the 6 variables" in out and "reference category: region = east" in out
    # --count columns: k counts the encoded columns (all four region dummies, the first not dropped)
    assert main([path, "--k", "4", "--count", "columns", "--cv", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert not result["data"]["grouped"] and result["data"]["n_features"] == 5 + 4
    assert len(result["selected_features"]) == 4


def test_k_above_the_number_of_features_is_one_error(tmp_path, sparse_csv, capsys):
    path, _ = sparse_csv
    assert main([path, "--k", "11"]) == 2  # cross-validated too: one message, no warning per fold
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [captured.err.strip()]
    assert "--k 11 is more than the data have: 10 features; use --k 10 or fewer" in captured.err
    assert main([path, "--k", "10", "--cv", "2"]) == 0
    assert "Warning" not in capsys.readouterr().err
    # with a text column: k counts variables (6 here), or the encoded columns (9) with --count columns
    regions, *_ = _region_data(tmp_path)
    assert main([regions, "--k", "7", "--cv", "0"]) == 2
    assert "6 variables (a text column counts once; --count columns counts its 8 encoded columns)" in \
        capsys.readouterr().err
    assert main([regions, "--k", "10", "--count", "columns", "--cv", "0"]) == 2
    assert "9 features after one-hot encoding" in capsys.readouterr().err
    assert main([regions, "--k", "9", "--count", "columns", "--cv", "0"]) == 0


# -- automatic choice of k -------------------------------------------------------


class FakeAutoRegressor(IHTRegressor):
    """Stands in for the automatic choice of k (issue #24) until the estimators have it.

    With ``k=None`` it evaluates a fixed criterion (minimum at k = 2) on
    k = 1..8, fits with that k and sets the attributes the estimators will
    set: ``k_``, ``k_path_``, ``criterion_path_``, ``k_criterion_``.
    """

    def fit(self, X, y, sample_weight=None, coef_init=None):
        requested = self.k
        path = np.arange(1, 9)
        criterion = 10.0 * (path - 2.0) ** 2 + 100.0
        self.k = int(path[np.argmin(criterion)]) if requested is None else requested
        try:
            super().fit(X, y, sample_weight=sample_weight, coef_init=coef_init)
        finally:
            self.k = requested
        self.k_ = int(np.asarray(self.support_).size)
        if requested is None:
            self.k_path_, self.criterion_path_, self.k_criterion_ = path, criterion, "ebic"
        return self


class FakeDefaultRegressor(IHTRegressor):
    """An estimator that records no automatic choice (no ``k_path_``): ``k=None`` means 10 % of the features."""

    def fit(self, X, y, sample_weight=None, coef_init=None):
        requested = self.k
        self.k = max(1, X.shape[1] // 10) if requested is None else requested
        try:
            super().fit(X, y, sample_weight=sample_weight, coef_init=coef_init)
        finally:
            self.k = requested
        return self


@pytest.fixture
def fake_methods(monkeypatch):
    monkeypatch.setitem(_cli._METHOD_PREFIXES, "fakeauto", "FakeAuto")
    monkeypatch.setitem(_cli._METHOD_PREFIXES, "fakedefault", "FakeDefault")
    monkeypatch.setattr(sparse_estimators, "FakeAutoRegressor", FakeAutoRegressor, raising=False)
    monkeypatch.setattr(sparse_estimators, "FakeDefaultRegressor", FakeDefaultRegressor, raising=False)


@pytest.mark.parametrize("k_option", [[], ["--k", "auto"], ["--k", "AUTO"]])
def test_automatic_k_is_reported_with_its_criterion(sparse_csv, capsys, fake_methods, k_option):
    path, _ = sparse_csv
    assert main([path, "--method", "fakeauto", "--cv", "3", *k_option]) == 0
    out = capsys.readouterr().out
    assert "Model:  StandardScaler -> FakeAutoRegressor()" in out  # the estimator got k=None
    # The text says that the table shows a window around the chosen k, not the whole path.
    assert ("k = 2: chosen automatically by ebic (lower is better), evaluated at 8 values of k from 1 to 8; "
            "below, the 5 values around the chosen k (--json or --plot give them all):") in out
    # The criterion around the chosen k (3 rows each side where there are), the chosen row marked.
    assert _criterion_table(out) == [(1, 110.0, False), (2, 100.0, True), (3, 110.0, False), (4, 140.0, False),
                                     (5, 190.0, False)]
    assert sorted(name for name, _ in _selected_table(out)) == ["x2", "x5"]
    # Cross-validation repeats the choice in each training fold.
    assert "k chosen again in each fold: 2, 2, 2" in out


@pytest.mark.parametrize(
    ("path", "chosen", "shown"),
    [
        ([1], 1, [1]),  # a path of one level
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1, [1, 2, 3, 4]),  # chosen at the start
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 9, [6, 7, 8, 9, 10]),  # near the end
        ([2, 4, 6], 5, [2, 4, 6]),  # chosen k not on the path: centred on the lowest criterion
    ],
)
def test_criterion_table_window(path, chosen, shown):
    k_info = {"value": chosen, "criterion": "bic",
              "path": [{"k": k, "criterion": float((k - chosen) ** 2)} for k in path]}
    lines = _cli._criterion_table(k_info)
    assert lines[0].split() == ["k", "bic"]
    assert [int(line.split()[0]) for line in lines[2:]] == shown
    assert [line.endswith("<- chosen") for line in lines[2:]] == [k == chosen for k in shown]


def test_forced_k_is_passed_and_reported(sparse_csv, capsys, fake_methods):
    path, _ = sparse_csv
    assert main([path, "--method", "fakeauto", "--k", "3", "--cv", "0"]) == 0
    out = capsys.readouterr().out
    assert "FakeAutoRegressor(k=3)" in out
    assert "k = 3 (--k 3)" in out
    assert "chosen automatically" not in out
    assert len(_selected_table(out)) == 3


def test_automatic_k_in_json(sparse_csv, capsys, fake_methods):
    path, _ = sparse_csv
    assert main([path, "--method", "fakeauto", "--cv", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["k"] == {"value": 2, "requested": None, "how": "automatic", "criterion": "ebic",
                           "path": [{"k": k, "criterion": 10.0 * (k - 2) ** 2 + 100.0} for k in range(1, 9)]}
    assert result["cv"]["k_per_fold"] == [2, 2]


def test_estimator_without_a_recorded_choice(sparse_csv, capsys, fake_methods):
    path, _ = sparse_csv
    assert main([path, "--method", "fakedefault", "--cv", "0"]) == 0
    out = capsys.readouterr().out
    assert len(_selected_table(out)) == 1  # 10 % of 10 features
    assert "k = 1 (the estimator's default for k=None" in out and "choose one with --k" in out


def _png_size(path):
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_plot_of_the_criterion(sparse_csv, tmp_path, capsys, fake_methods):
    pytest.importorskip("matplotlib")
    path, _ = sparse_csv
    plot = tmp_path / "criterion.png"
    assert main([path, "--method", "fakeauto", "--cv", "0", "--plot", str(plot)]) == 0
    assert f"Criterion plot saved to {plot}" in capsys.readouterr().out
    assert _png_size(plot) == (600, 400)  # 6 x 4 inches at 100 dpi


def test_plot_errors(sparse_csv, tmp_path, capsys, fake_methods, monkeypatch):
    path, _ = sparse_csv
    plot = str(tmp_path / "criterion.png")
    # --plot draws the automatic choice: refused with a forced k, before any fit.
    assert main([path, "--method", "fakeauto", "--k", "3", "--plot", plot]) == 2
    captured = capsys.readouterr()
    assert "--plot draws the automatic choice of k; it cannot be combined with --k 3" in captured.err
    assert captured.out == "" and "Fitting" not in captured.err
    # An estimator that records no criterion path: the plot cannot be drawn, nothing is printed.
    assert main([path, "--method", "fakedefault", "--cv", "0", "--plot", plot]) == 1
    captured = capsys.readouterr()
    assert "records no criterion path" in captured.err and captured.out == ""
    assert not os.path.exists(plot)
    # Without matplotlib: a clear message before the fit.
    _block(monkeypatch, "matplotlib")
    assert main([path, "--method", "fakeauto", "--plot", plot]) == 2
    captured = capsys.readouterr()
    assert "--plot needs matplotlib, which is not installed" in captured.err and "Fitting" not in captured.err


def _has_automatic_k():
    X = np.random.RandomState(0).standard_normal((30, 5))
    return hasattr(IHTRegressor().fit(X, X[:, 0]), "k_path_")


@pytest.mark.skipif(not _has_automatic_k(),
                    reason="the estimators do not choose k automatically yet (no k_path_ after a fit with k=None; "
                           "issue #24, in progress)")
def test_automatic_k_end_to_end(sparse_csv, capsys):
    path, data = sparse_csv
    assert main([path, "--cv", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    reference = make_pipeline(StandardScaler(), IHTRegressor()).fit(data[:, :-1], data[:, -1])[-1]
    assert result["k"]["how"] == "automatic"
    assert result["k"]["value"] == reference.k_ == 2  # two strong features, noise sd 0.1
    assert result["k"]["criterion"] == reference.k_criterion_
    assert [entry["k"] for entry in result["k"]["path"]] == [int(k) for k in reference.k_path_]
    assert [entry["criterion"] for entry in result["k"]["path"]] == pytest.approx(reference.criterion_path_)
    assert sorted(entry["feature"] for entry in result["selected_features"]) == ["x2", "x5"]
    assert main([path, "--cv", "0"]) == 0
    out = capsys.readouterr().out
    assert f"chosen automatically by {reference.k_criterion_}" in out
    assert [row for row in _criterion_table(out) if row[2]][0][0] == 2


# -- saved models and the predict mode -------------------------------------------


def test_saved_model_round_trip(tmp_path, capsys):
    X, city, sunny, y = _text_data()
    header = ["a", "b", "city", "c", "sunny", "price"]
    train = [[x[0], x[1], c, x[2], s, v] for x, c, s, v in zip(X[:120], city, sunny, y.round(4), strict=False)]
    path = _write_csv(tmp_path / "train.csv", header, train)
    model_path = str(tmp_path / "model.joblib")
    assert main([path, "--k", "3", "--cv", "0", "--output", model_path]) == 0
    assert f"Model saved to {model_path}" in capsys.readouterr().out

    # New rows: other column order, an extra identifier column, no target.
    new = [[f"row{i}", s, c, x[2], x[1], x[0]]
           for i, (x, c, s) in enumerate(zip(X[120:], city[120:], sunny[120:], strict=True))]
    new_path = _write_csv(tmp_path / "new.csv", ["id", "sunny", "city", "c", "b", "a"], new)
    out_path = tmp_path / "predictions.csv"
    assert main(["predict", model_path, new_path, "--output", str(out_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Ignoring the column(s) 'id'" in captured.err
    out_header, rows = _read_csv(out_path)
    assert out_header == ["price"]
    predicted = np.array([float(row[0]) for row in rows])
    # The model is the right one: close to the noiseless function on rows it never saw.
    truth = 2 * X[120:, 0] + 3 * (city[120:] == "Rome") - 1.5 * (sunny[120:] == "yes")
    assert np.max(np.abs(predicted - truth)) < 0.2
    # Standard output gives the same CSV.
    assert main(["predict", model_path, new_path, "-q"]) == 0
    assert capsys.readouterr().out.splitlines() == [",".join(row) for row in [out_header, *rows]]

    # Plain joblib.load: a scikit-learn Pipeline that takes an array in feature_names_in_ order...
    model = joblib.load(model_path)
    assert list(model.feature_names_in_) == ["a", "b", "city", "c", "sunny"]
    array = np.array([[x[0], x[1], c, x[2], s] for x, c, s in zip(X[120:], city[120:], sunny[120:], strict=True)],
                     dtype=object)
    np.testing.assert_allclose(model.predict(array), predicted, rtol=0, atol=1e-5)  # printed with 5 decimals
    # ... or a DataFrame, columns found by name.
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(new_path)
    np.testing.assert_allclose(model.predict(frame), predicted, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['city'\]"):
        model.predict(frame.drop(columns="city"))


def test_saved_classifier_predicts_labels_and_probabilities(tmp_path, capsys):
    X, y = _binary_data(n=160)
    header = ["a", "b", "c", "d", "e", "label"]
    path = _write_csv(tmp_path / "train.csv", header,
                      [[*row, label] for row, label in zip(X[:120].tolist(), y, strict=False)])
    new_path = _write_csv(tmp_path / "new.csv", header[:-1], X[120:].tolist())
    model_path = str(tmp_path / "clf.joblib")
    assert main([path, "--k", "2", "--cv", "0", "--output", model_path]) == 0
    capsys.readouterr()
    assert main(["predict", model_path, new_path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "label,proba_no,proba_yes"
    labels = [line.split(",")[0] for line in lines[1:]]
    proba = np.array([[float(v) for v in line.split(",")[1:]] for line in lines[1:]])
    assert proba.shape == (40, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=2e-6)  # 6 decimals
    assert labels == [["no", "yes"][i] for i in np.argmax(proba, axis=1)]
    assert np.mean(np.array(labels) == y[120:]) > 0.8  # held-out accuracy of a two-feature rule
    model = joblib.load(model_path)
    assert list(model.predict(X[120:])) == labels
    np.testing.assert_allclose(model.predict_proba(X[120:]), proba, rtol=0, atol=5e-7 + 1e-15)


def test_predict_errors(tmp_path, capsys, sparse_csv):
    path, data = sparse_csv
    model_path = str(tmp_path / "model.joblib")
    assert main([path, "--k", "2", "--cv", "0", "--output", model_path]) == 0
    capsys.readouterr()
    # a column the model uses (x2, x5) is missing
    kept = [j for j in range(10) if j != 5]
    missing = _write_csv(tmp_path / "missing.csv", [f"x{j}" for j in kept], data[:5, kept].tolist())
    assert main(["predict", model_path, missing]) == 2
    captured = capsys.readouterr()
    assert "lacks the column(s) the model uses: 'x5'" in captured.err and captured.out == ""
    # a missing cell, and the model was fitted without --impute
    rows = data[:5, :10].tolist()
    rows[2][5] = "NA"
    holes = _write_csv(tmp_path / "holes.csv", [f"x{j}" for j in range(10)], rows)
    assert main(["predict", model_path, holes]) == 2
    assert "column 'x5' of" in capsys.readouterr().err
    # text in a numeric column
    rows[2][5] = "abc"
    text = _write_csv(tmp_path / "text.csv", [f"x{j}" for j in range(10)], rows)
    assert main(["predict", model_path, text]) == 2
    assert "column 'x5' is not numeric" in capsys.readouterr().err
    # --id names no column
    assert main(["predict", model_path, path, "--id", "name"]) == 2
    assert "--id 'name' is not a column of" in capsys.readouterr().err
    # no such model file; a joblib file that is not a model of this tool; a file that is not joblib
    assert main(["predict", str(tmp_path / "absent.joblib"), path]) == 2
    assert "model file not found" in capsys.readouterr().err
    joblib.dump({"a": 1}, tmp_path / "dict.joblib")
    assert main(["predict", str(tmp_path / "dict.joblib"), path]) == 2
    assert "is not a model saved by" in capsys.readouterr().err
    assert main(["predict", path, path]) == 2
    assert "cannot load" in capsys.readouterr().err
    # usage
    assert main(["predict", model_path]) == 2
    assert "the following arguments are required: CSV" in capsys.readouterr().err


def test_unknown_category_is_reported_by_column(tmp_path, capsys):
    X, city, sunny, y = _text_data()
    header = ["a", "b", "city", "c", "sunny", "price"]
    path = _write_csv(tmp_path / "train.csv", header,
                      [[x[0], x[1], c, x[2], s, v] for x, c, s, v in zip(X, city, sunny, y.round(4), strict=True)])
    model_path = str(tmp_path / "model.joblib")
    assert main([path, "--k", "3", "--cv", "0", "--output", model_path]) == 0
    capsys.readouterr()
    new_path = _write_csv(tmp_path / "new.csv", header[:-1], [[0.5, 0, "Berlin", 0, "no"], [0.5, 0, "Rome", 0, "no"]])
    assert main(["predict", model_path, new_path]) == 0
    captured = capsys.readouterr()
    assert "column 'city': 1 row(s) hold a category not seen in training (first 'Berlin', line 2)" in captured.err
    assert "Found unknown categories" not in captured.err
    berlin, rome = (float(line) for line in captured.out.splitlines()[1:])
    assert rome - berlin == pytest.approx(3, abs=0.2)  # the Rome effect, absent for an unknown city


def test_a_csv_file_named_predict_is_fitted(sparse_csv, tmp_path, capsys, monkeypatch):
    _, data = sparse_csv
    monkeypatch.chdir(tmp_path)
    _write_csv(tmp_path / "predict", [f"x{j}" for j in range(10)] + ["y"], data.tolist())
    assert main(["./predict", "--k", "2", "--cv", "0"]) == 0
    assert sorted(name for name, _ in _selected_table(capsys.readouterr().out)) == ["x2", "x5"]
    # As the first argument, 'predict' is the predict mode (which has no --k); the error says how to fit the file.
    assert main(["predict", "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --k" in err or "required" in err
    assert re.search(r"to fit the CSV file 'predict' of this directory, write '(sparse-estimators|python -m "
                     r"sparse_estimators) \./predict'", err), err


def test_output_directory_must_exist(sparse_csv, tmp_path, capsys):
    path, _ = sparse_csv
    assert main([path, "--output", str(tmp_path / "nowhere" / "m.joblib")]) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "Fitting" not in captured.err and captured.out == ""


def test_predict_needs_only_the_used_columns_and_copies_an_id(tmp_path, capsys, sparse_csv):
    path, data = sparse_csv
    model_path = str(tmp_path / "model.joblib")
    assert main([path, "--k", "2", "--cv", "0", "--output", model_path]) == 0
    capsys.readouterr()
    # only the two columns the model uses (x2, x5), and an identifier
    names = [f"row{i}" for i in range(20)]
    new = _write_csv(tmp_path / "new.csv", ["name", "x5", "x2"],
                     [[name, x5, x2] for name, x5, x2 in zip(names, data[:20, 5], data[:20, 2], strict=True)])
    assert main(["predict", model_path, new, "--id", "name"]) == 0
    captured = capsys.readouterr()
    assert "Ignoring" not in captured.err
    lines = captured.out.splitlines()
    assert lines[0] == "name,y"
    assert [line.split(",")[0] for line in lines[1:]] == names
    reference = joblib.load(model_path).predict(data[:20, :10])
    # 6 significant digits of the largest prediction (|y| < 10 here): 5 decimals on every row
    cells = [line.split(",")[1] for line in lines[1:]]
    assert max(abs(reference)) < 10 and all(re.fullmatch(r"-?\d\.\d{5}", cell) for cell in cells), cells
    np.testing.assert_allclose([float(cell) for cell in cells], reference, rtol=0, atol=5e-6 + 1e-12)


def _closed_pipe_run(args):
    """Run the command with its standard output a pipe whose reading end is already closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "sparse_estimators", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    finally:
        os.close(write_end)


def test_closed_standard_output_exits_quietly(tmp_path, sparse_csv):
    path, data = sparse_csv
    model_path = str(tmp_path / "model.joblib")
    assert main([path, "--k", "2", "--cv", "0", "--output", model_path, "-q"]) == 0
    for args in (["predict", model_path, path, "-q"], [path, "--k", "2", "--cv", "0", "-q"]):
        result = _closed_pipe_run(args)  # as '... | head' once head has exited
        assert result.returncode == 141, result.stderr
        assert result.stderr == ""  # no traceback, no 'Exception ignored'


# -- issue #26 item 10: accurate messages, non-zero exit when nothing useful is produced --


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


# -- usage -----------------------------------------------------------------------


def test_missing_target_column(sparse_csv, capsys):
    assert main([sparse_csv[0], "--target", "nope"]) == 2
    err = capsys.readouterr().err
    assert "error: --target 'nope' is not a column" in err
    assert "'x0'" in err  # lists the available columns


def test_missing_file(tmp_path, capsys):
    assert main([str(tmp_path / "absent.csv")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_regression_on_text_target_is_an_error(tmp_path, capsys):
    path = _write_csv(tmp_path / "t.csv", ["a", "y"], [[1, "x"], [2, "y"]] * 5)
    assert main([path, "--task", "regression"]) == 2
    assert "numeric target" in capsys.readouterr().err


def test_forced_classification_of_a_continuous_target(capsys):
    assert main(["--task", "classification", "--cv", "2"]) == 2
    assert "use --task regression" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_invalid_k(value, capsys):
    assert main(["--k", value]) == 2
    assert "expected a positive integer or 'auto'" in capsys.readouterr().err


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
    out = capsys.readouterr().out
    assert "--thresholding" in out and "--output" in out and "--json" in out and "--plot" in out
    assert "predict MODEL CSV" in out and "./predict" in out
    assert main(["predict", "--help"]) == 0
    out = capsys.readouterr().out
    assert "MODEL" in out and "--output" in out and "./predict" in out


def test_python_dash_m_entry_point():
    result = subprocess.run([sys.executable, "-m", "sparse_estimators", "--dataset", "breast_cancer", "--k", "3",
                             "--cv", "2"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "IHTClassifier(k=3)" in result.stdout
    assert len(_selected_table(result.stdout)) == 3
    assert set(_cv_scores(result.stdout)) == {"accuracy", "ROC AUC", "log-loss"}
    assert "fold 2/2" in result.stderr
