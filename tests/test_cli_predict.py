"""Command-line tests of saved models and the predict mode (python -m sparse_estimators predict ...)."""

import os
import re
import subprocess
import sys

import joblib
import numpy as np
import pytest
from _cli_helpers import (
    _binary_data,
    _read_csv,
    _selected_table,
    _text_data,
    _write_csv,
)

from sparse_estimators._cli import main

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
