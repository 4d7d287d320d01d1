"""Bad input to the completion functions, and huge declared shapes with few entries (issue 31, item 4)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators.impute import LowRankImputer, _completion, choose_rank, complete_matrix


def _entries(m=6, n=5, seed=0):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((m, 2)) @ rng.standard_normal((2, n))
    rows, cols = np.nonzero(rng.uniform(size=M.shape) < 0.8)
    return rows, cols, M[rows, cols], M.shape


@pytest.mark.parametrize("case", ["col out of range", "row out of range", "negative row", "float rows",
                                  "string values", "list without shape"])
def test_complete_matrix_refuses_bad_observed_entries_naming_observed(case):
    rows, cols, values, shape = _entries()
    if case == "col out of range":
        observed = (rows, cols + 1, values)  # (the largest column becomes n)
    elif case == "row out of range":
        observed = (rows + 6, cols, values)
    elif case == "negative row":
        observed = (rows - 1, cols, values)
    elif case == "float rows":
        observed = (rows + 0.5, cols, values)
    elif case == "string values":
        observed = (rows, cols, values.astype(str))
    else:
        observed, shape = [rows, cols, values], None  # (read as a dense 3-row matrix before)
    with pytest.raises(ValueError, match="'observed'"):
        complete_matrix(observed, 1, shape=shape)
    if shape is not None:
        with pytest.raises(ValueError, match="'observed'"):
            choose_rank(observed, [1], shape=shape)


def test_a_list_with_shape_is_the_tuple_form():
    rows, cols, values, shape = _entries()
    a = complete_matrix([rows, cols, values], 2, shape=shape)
    b = complete_matrix((rows, cols, values), 2, shape=shape)
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())


@pytest.mark.parametrize("form", ["tuple", "coo", "dense-int16"])
def test_repeated_coordinates_of_small_integers_are_summed_as_floats(form):
    """int8 100 + 100 was summed in int8: -56."""
    rows, cols = np.array([0, 0, 1, 2, 2, 3]), np.array([0, 0, 1, 2, 0, 1])
    values = np.array([100, 100, 3, 4, 5, 6], dtype=np.int8)
    seen = {}

    def spy(obs, *args, **kwargs):
        seen["values"] = obs.values.copy()
        seen["cols"] = obs.cols.copy()
        raise RuntimeError("stop")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_completion, "_solve", spy)
        with pytest.raises(RuntimeError, match="stop"):
            if form == "tuple":
                complete_matrix((rows, cols, values), 1, shape=(4, 3))
            elif form == "coo":
                complete_matrix(sp.coo_matrix((values, (rows, cols)), shape=(4, 3)), 1)
            else:
                dense = np.zeros((4, 3), dtype=np.int16)
                dense[0, 0] = 200
                complete_matrix(dense, 1)
    assert seen["values"][0] == 200.0  # (row 0, column 0 comes first in CSR order)


@pytest.mark.parametrize("rows, cols", [([-1], [0]), ([0.5], [0]), ([7], [0]), ([0], [5]), ([0], [-2])])
def test_predict_refuses_negative_non_integer_and_out_of_range_indices(rows, cols):
    r, c, values, shape = _entries()
    result = complete_matrix((r, c, values), 2, shape=shape)
    with pytest.raises(ValueError, match="indices"):
        result.predict(rows, cols)
    np.testing.assert_allclose(result.predict([1, 5], [4, 0]), result.to_dense()[[1, 5], [4, 0]])


def test_huge_declared_shape_is_solved_at_the_size_of_its_entries(monkeypatch):
    """10^6 x 10^6 with 300 entries took minutes (O(m + n) work per iteration); the solve is now ~300 x 300."""
    rng = np.random.default_rng(3)
    size = 10**6
    rows, cols = rng.choice(size, 300, replace=False), rng.choice(size, 300, replace=False)
    values = rng.standard_normal(300)
    shapes = []
    solve = _completion._solve

    def spy(obs, *args, **kwargs):
        shapes.append(obs.shape)
        return solve(obs, *args, **kwargs)

    monkeypatch.setattr(_completion, "_solve", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = complete_matrix((rows, cols, values), 2, shape=(size, size), max_iter=20, center=True)
    assert shapes == [(300, 300)]
    assert result.U.shape == (size, 2) and result.Vt.shape == (2, size) and result.column_offsets.shape == (size,)
    # the same completion as on the compact matrix of the observed rows and columns
    r_order, c_order = np.argsort(np.argsort(rows)), np.argsort(np.argsort(cols))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        compact = complete_matrix((r_order, c_order, values), 2, shape=(300, 300), max_iter=20, center=True)
    np.testing.assert_allclose(result.predict(rows, cols), compact.predict(r_order, c_order), rtol=1e-10,
                               atol=1e-12)
    empty_row = np.setdiff1d(np.arange(10), rows)[0]
    empty_col = np.setdiff1d(np.arange(10), cols)[0]
    assert result.predict([empty_row], [empty_col])[0] == 0.0  # (no entry in its row or column: 0, as before)


def test_ordinary_matrices_are_not_restricted(monkeypatch):
    rows, cols, values, shape = _entries(30, 20, seed=4)
    shapes = []
    solve = _completion._solve
    monkeypatch.setattr(_completion, "_solve", lambda obs, *a, **k: shapes.append(obs.shape) or solve(obs, *a, **k))
    complete_matrix((rows, cols, values), 2, shape=shape)
    assert shapes == [shape]


def test_regularized_solver_with_soft_thresholding_is_refused_by_the_imputer_as_by_complete_matrix():
    rows, cols, values, shape = _entries()
    with pytest.raises(ValueError) as core:
        complete_matrix((rows, cols, values), 2, shape=shape, solver="regularized", thresholding="soft")
    X = np.full(shape, np.nan)
    X[rows, cols] = values
    with pytest.raises(ValueError) as imputer:
        LowRankImputer(rank=2, solver="regularized", thresholding="soft").fit(X)
    assert str(imputer.value) == str(core.value)


@pytest.mark.parametrize("solver", ["accelerated", "iht", "regularized", "als"])
@pytest.mark.parametrize("center", [False, True])
def test_rows_and_columns_without_an_entry_are_exactly_zero(solver, center):
    """The Notes' promise: exact zeros (plus the offset with ``center``), not rounding. Before, the range finder's
    QR left up to 3e-14 in them (measured 4e-15 to 3e-14 over the four solvers, 5 seeds)."""
    rng = np.random.default_rng(0)
    M = rng.standard_normal((60, 3)) @ rng.standard_normal((3, 40)) + (2.0 if center else 0.0)
    mask = rng.uniform(size=M.shape) < 0.5
    mask[[3, 17, 41], :] = False
    mask[:, [0, 22]] = False
    rows, cols = np.nonzero(mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = complete_matrix((rows, cols, M[rows, cols]), 3, shape=M.shape, solver=solver, center=center)
    dense = result.to_dense()
    offsets = result.column_offsets if center else np.zeros(40)
    assert np.all(dense[[3, 17, 41]] == offsets)
    assert np.all(dense[:, [0, 22]] == 0.0)
    assert np.abs(dense[mask] - M[mask]).max() < 1e-3 * np.abs(M).max()  # (the rest is still the completion)
