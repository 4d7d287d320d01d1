"""Groups and always_select through fit, k=None and the searches (issue 32, items 3, 5, 7, 8 and 9)."""

import numpy as np
import pandas as pd
import pytest

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.structures import Groups
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
    """A mask is not read as group labels (False == 0, True == 1): a ValueError, as without groups."""
    X, y = _data()
    groups = np.repeat(np.arange(3), 4)
    est = IHTRegressor(k=2, groups=groups, always_select=mask)
    with pytest.raises(ValueError, match="'always_select'.*group labels.*booleans"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(ValueError, match="'always_select'.*feature indices"):  # the rule without groups
        IHTRegressor(k=2, always_select=np.zeros(12, dtype=bool)).fit(X, y)


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
    with pytest.raises(ValueError, match="'groups'.*all numbers or all strings.*1 and '1'"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(TypeError, match="all numbers or all strings"):
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
