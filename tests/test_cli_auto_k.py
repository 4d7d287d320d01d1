"""Command-line tests of the automatic choice of k: the criterion table, --k auto, its plot and JSON."""

import json
import os
import struct

import numpy as np
import pytest
from _cli_helpers import (
    _block,
    _criterion_table,
    _selected_table,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sparse_estimators
from sparse_estimators import IHTRegressor, _cli
from sparse_estimators._cli import main

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
