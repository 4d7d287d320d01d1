"""Tests of the command-line interface (sparse_estimators._cli, python -m sparse_estimators).

End to end through ``main(argv)`` on CSV files written to ``tmp_path``: standard
output, standard error, exit status, saved models and their predictions.
"""

import json
import math
import re
import subprocess
import sys

import joblib
import numpy as np
import pytest
from _cli_helpers import (
    _binary_data,
    _block,
    _cv_scores,
    _read_csv,
    _selected_table,
    _text_data,
    _write_csv,
)
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sparse_estimators
from sparse_estimators import IHTClassifier, IHTRegressor, _cli
from sparse_estimators._cli import main

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
