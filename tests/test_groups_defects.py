"""Groups and always_select through fit, k=None and the searches (issue 32, items 3, 5, 7, 8 and 9)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _problems import one_large_group
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sparse_estimators import (
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSRegressor,
    RegularizedIHTRegressor,
)
from sparse_estimators.model_selection import SparsityCV, SparsityIC, sparsity_path
from sparse_estimators.structures import Groups, groups_from_feature_names
from sparse_estimators.thresholding import Hard


def _data(n=120, p=12, seed=0):
    """Features 0, 1 and 5 carry the signal (1 negatively)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = X[:, 0] - 2 * X[:, 1] - X[:, 5] + 0.1 * rng.standard_normal(n)
    return X, y


# -- item 5: a boolean always_select with groups -------------------------------------------------

@pytest.mark.parametrize("mask", [[False, False, True], np.array([False, True, False])])
def test_boolean_always_select_with_groups_is_refused(mask):
    """A mask is not read as group labels (False == 0, True == 1): a ValueError (without groups it is a mask)."""
    X, y = _data()
    groups = np.repeat(np.arange(3), 4)
    est = IHTRegressor(k=2, groups=groups, always_select=mask)
    with pytest.raises(ValueError, match="'always_select'.*group labels.*booleans"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    # without groups a mask of one entry per feature is read as scikit-learn reads column masks: its True entries
    mask = np.zeros(12, dtype=bool)
    mask[7] = True
    np.testing.assert_array_equal(IHTRegressor(k=2, always_select=mask).fit(X, y).support_,
                                  IHTRegressor(k=2, always_select=[7]).fit(X, y).support_)


def test_always_select_labels_are_compared_as_given():
    """Labels name groups by equality of the labels themselves: 1 is not '1', and boolean labels work."""
    X, y = _data()
    est = IHTRegressor(k=2, groups=np.repeat(["0", "1", "2"], 4), always_select=["2"]).fit(X, y)
    np.testing.assert_array_equal(est.groups_support_, ["0", "2"])  # group '0' holds features 0 and 1
    with pytest.raises(ValueError, match="not in 'groups': \\[2\\]"):
        IHTRegressor(k=2, groups=np.repeat(["0", "1", "2"], 4), always_select=[2]).fit(X, y)
    flags = np.repeat([True, False], 6)  # boolean labels: a boolean always_select names them
    est = IHTRegressor(k=1, groups=flags, always_select=[False]).fit(X, y)
    np.testing.assert_array_equal(est.groups_support_, [False])
    np.testing.assert_array_equal(est.support_, np.arange(6, 12))


# -- item 8: mixed integer / string group labels ---------------------------------------------------

@pytest.mark.parametrize("as_array", [False, True])
def test_mixed_number_and_string_group_labels_are_refused(as_array):
    """[1, '1', 2, ...] would be merged into group '1' by numpy's conversion: refused, lists and object arrays."""
    X, y = _data()
    labels = [1, "1"] + list(range(2, 12))
    groups = np.array(labels, dtype=object) if as_array else labels
    est = IHTRegressor(k=2, groups=groups)
    with pytest.raises(ValueError, match=r"'groups'.*mix numbers and strings \(1 and '1'\)"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(TypeError, match="mix numbers and strings"):
        Groups(Hard(), groups)


def test_object_arrays_of_one_kind_of_label_are_groups():
    """Object arrays (e.g. a pandas column) of strings, or of numbers, group as the same labels in a list do."""
    X, y = _data()
    names = [f"g{i // 2}" for i in range(12)]
    numbers = [i // 2 for i in range(12)]
    for labels in (names, numbers):
        reference = IHTRegressor(k=2, groups=labels).fit(X, y)
        for groups in (np.array(labels, dtype=object), pd.Series(labels, dtype=object)):
            est = IHTRegressor(k=2, groups=groups).fit(X, y)
            np.testing.assert_array_equal(est.support_, reference.support_)
            np.testing.assert_array_equal(est.groups_support_, reference.groups_support_)
    # features 0, 1 (group 0) and 5 (group 2) carry the signal
    np.testing.assert_array_equal(IHTRegressor(k=2, groups=numbers).fit(X, y).support_, [0, 1, 4, 5])
    # numbers are compared by value: 0 and 0.0 are one group
    est = IHTRegressor(k=1, groups=[0, 0.0] + list(range(1, 11))).fit(X, y)
    np.testing.assert_array_equal(est.support_, [0, 1])
    clf = IHTClassifier(k=1, groups=np.array(numbers, dtype=object)).fit(X, y > 0)
    assert clf.groups_support_.size == 1


# -- item 3: k=None counts the features inside the selected groups --------------------------------



def test_criterion_levels_count_features_inside_groups():
    """floor(20 / log(60)) = 4 features: the 50-feature group is out, 4 singleton groups fit (or the forced group)."""
    from sparse_estimators.model_selection._criteria import criterion_levels

    groups = np.r_[np.zeros(50, dtype=int), np.arange(1, 11)]
    bound, admissible, top = criterion_levels(Groups(Hard(), groups), 20, 60)
    assert (bound, top) == (4, 4)
    np.testing.assert_array_equal(admissible, np.arange(11) > 0)
    bound, admissible, top = criterion_levels(Groups(Hard(), groups).with_forced([0]), 20, 60)
    assert (bound, top) == (50, 1)  # the forced group alone: the smallest model a fit allows
    np.testing.assert_array_equal(admissible, np.arange(11) == 0)
    sizes = np.repeat(np.arange(6), [1, 2, 3, 1, 1, 8])  # 16 features, sizes 1 2 3 1 1 8
    bound, admissible, top = criterion_levels(Groups(Hard(), sizes), 20, 16)
    assert bound == 7  # floor(20 / log(16))
    np.testing.assert_array_equal(admissible, [True, True, True, True, True, False])
    assert top == 4  # 1 + 1 + 1 + 2 <= 7 < 1 + 1 + 1 + 2 + 3


@pytest.mark.parametrize("cls", [IHTRegressor, AcceleratedIHTRegressor, RegularizedIHTRegressor, IOBSRegressor],
                         ids=lambda c: c.__name__)
def test_k_none_never_selects_a_group_larger_than_the_criterion_can_judge(cls):
    """The 50-feature group saturates 20 rows (training R^2 1, test R^2 -1 before): the signal's group is chosen."""
    X, y, X_test, y_test, groups = one_large_group()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (ConvergenceWarning of the regularized solver's default budget)
        est = cls(groups=groups).fit(X, y)
    assert est.support_.size <= 4 and 0 not in est.groups_support_
    np.testing.assert_array_equal(est.support_, [50])
    assert est.score(X_test, y_test) > 0.8


def test_k_none_with_every_group_too_large_is_an_error():
    X, y, _, _, _ = one_large_group()
    est = IHTRegressor(groups=np.repeat([0, 1], 30))
    with pytest.raises(ValueError, match="k=None cannot choose k: every group has more than 4 features"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    assert IHTRegressor(k=1, groups=np.repeat([0, 1], 30)).fit(X, y).k_ == 1  # (a given k is fitted)


def test_sparsity_ic_does_not_choose_a_level_whose_groups_are_too_large():
    """Levels whose fit has more features than n / log(p) get criterion_ = inf; none judged is an error."""
    rng = np.random.RandomState(1)
    X = rng.standard_normal((60, 45))
    y = 3 * X[:, 0] + 3 * X[:, 1] + X[:, 2:32] @ (0.3 * rng.standard_normal(30)) + 0.3 * rng.standard_normal(60)
    groups = np.r_[0, 0, np.ones(30, dtype=int), np.arange(2, 15)]  # sizes 2, 30 and 13 singletons
    bound = int(np.floor(60 / np.log(45)))  # 15
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search = SparsityIC(IHTRegressor(groups=groups), k_grid=[1, 2, 3]).fit(X, y)
    assert search.k_ == 1 and search.best_estimator_.support_.size <= bound
    np.testing.assert_array_equal(np.isinf(search.criterion_), [False, True, True])
    over = [1 in e.groups_support_ for e in sparsity_path(IHTRegressor(groups=groups), X, y, [1, 2, 3]).estimators]
    assert over == [False, True, True]  # (the fits at 2 and 3 take the 30-feature group)
    X, y, _, _, groups = one_large_group()  # every fit of the solver alone takes the 50-feature group
    # (the group search from zero prices that group out: GROUP_SEARCH_FROM_ZERO)
    with pytest.raises(ValueError, match="more than 4 features"):
        SparsityIC(IHTRegressor(groups=groups, splicing=False)).fit(X, y)


# -- item 7: the paths and searches start at the number of forced units ---------------------------

def test_paths_leave_out_levels_below_the_forced_units_and_carry_fit_attributes():
    X, y = _data()
    est = IHTRegressor(always_select=[3, 4, 6])
    with pytest.warns(UserWarning, match="below the number of 'always_select'.*left out \\(\\[1, 2\\]\\)"):
        path = sparsity_path(est, X, y, k_grid=[1, 2, 3, 4])
    np.testing.assert_array_equal(path.k_grid, [3, 4])
    assert [e.k_ for e in path.estimators] == [3, 4]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sparsity_path(est, X, y).k_grid[0] == 3  # the default grid starts there
        assert SparsityIC(est).fit(X, y).k_grid_[0] == 3
    with pytest.raises(ValueError, match="Every value of k_grid is below"):
        sparsity_path(est, X, y, k_grid=[1, 2])
    with pytest.warns(UserWarning, match="below the number of 'always_select'"):
        search = SparsityCV(est, k_grid=range(1, 6), cv=3).fit(X, y)
    assert [p["k"] for p in search.cv_results_["params"]] == [3, 4, 5]
    for k in (3, 4):  # fit refuses the levels below: the same rule
        assert IHTRegressor(k=k, always_select=[3, 4, 6]).fit(X, y).k_ == k
    with pytest.raises(ValueError, match="more than k=2"):
        IHTRegressor(k=2, always_select=[3, 4, 6]).fit(X, y)


def test_path_estimators_have_the_groups_support_of_fit():
    X, y = _data()
    groups = np.repeat(["a", "b", "c", "d"], 3)
    path = sparsity_path(IHTRegressor(groups=groups, always_select=["d"]), X, y, k_grid=[1, 2, 3])
    for k, est in zip([1, 2, 3], path.estimators, strict=True):
        fit = IHTRegressor(k=k, groups=groups, always_select=["d"]).fit(X, y)
        assert est.k_ == fit.k_ == k
        np.testing.assert_array_equal(est.groups_support_, fit.groups_support_)
    np.testing.assert_array_equal(path.estimators[1].groups_support_, ["a", "d"])  # features 0, 1 in group a


# -- item 9: SparsityCV's grid counts groups ------------------------------------------------------

def test_sparsity_cv_default_grid_counts_groups():
    X, y = _data()
    groups = np.repeat(np.arange(4), 3)  # features 0, 1 in group 0, feature 5 in group 1
    search = SparsityCV(IHTRegressor(groups=groups), cv=3).fit(X, y)
    assert [p["k"] for p in search.cv_results_["params"]] == [1, 2, 3, 4]
    np.testing.assert_array_equal(search.best_estimator_.groups_support_[:2], [0, 1])
    with pytest.warns(UserWarning, match="above the number of groups=4"):
        clipped = SparsityCV(IHTRegressor(groups=groups), k_grid=[1, 2, 5], cv=3).fit(X, y)
    assert [p["k"] for p in clipped.cv_results_["params"]] == [1, 2, 4]


def test_sparsity_cv_in_the_column_transformer_pipeline_with_groups_from_feature_names():
    rng = np.random.RandomState(0)
    n = 150
    X = pd.DataFrame({"region": rng.choice(["n", "s", "e", "w"], n), "size": rng.choice(["S", "M", "L"], n)}
                     | {f"x{i}": rng.standard_normal(n) for i in range(6)})
    y = 2 * X["x0"] + 3 * (X["region"] == "w") - 3 * (X["region"] == "e") + 0.3 * rng.standard_normal(n)
    categorical = ["region", "size"]
    numeric = [f"x{i}" for i in range(6)]
    ct = ColumnTransformer([("onehot", OneHotEncoder(sparse_output=False), categorical),
                            ("num", StandardScaler(), numeric)]).set_output(transform="pandas")
    search = SparsityCV(IHTRegressor(groups=groups_from_feature_names(X.columns)), cv=3)
    pipe = make_pipeline(ct, search).fit(X, y)
    assert [p["k"] for p in search.cv_results_["params"]] == list(range(1, 9))  # 8 variables, 13 columns
    assert set(search.best_estimator_.groups_support_) >= {"region", "x0"}
    assert pipe.score(X, y) > 0.9


# -- NaN group labels ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["float array", "object array", "list", "series"])
def test_nan_group_labels_are_refused(kind):
    """NaN is no label: np.unique merged a float array's NaNs into one group (features 2 and 5 fit together,
    ``support_`` of 3 features at k=2) and kept an object array's apart; refused with the features named."""
    X, y = _data()
    labels = [i // 2 for i in range(12)]
    labels[2] = labels[9] = np.nan
    groups = {"float array": np.array(labels, dtype=float), "object array": np.array(labels, dtype=object),
              "list": labels, "series": pd.Series(labels)}[kind]
    est = IHTRegressor(k=2, groups=groups)
    with pytest.raises(ValueError, match=r"'groups' parameter has NaN labels \(features 2, 9\)"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(ValueError, match="NaN labels"):
        Groups(Hard(), groups)
