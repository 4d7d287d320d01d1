"""Structures: row sparsity (the default) and feature groups, through every estimator and the path."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from _problems import CLASSIFIERS, REGRESSORS
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.model_selection import SparsityCV, SparsityIC, sparsity_path
from sparse_estimators.structures import Groups, Rows, get_structure, groups_from_feature_names
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft

ALL = REGRESSORS + CLASSIFIERS
OPERATORS = [Hard(), Soft(), Reciprocal(0.0), Reciprocal(0.5), Lq(2 / 3)]


def _group_data(classification=False, seed=0, n=300):
    """30 features in 10 groups of 3 (labels 'g0'..'g9'); groups g1 and g4 carry the signal."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 30))
    groups = np.repeat([f"g{i}" for i in range(10)], 3)
    beta = np.zeros(30)
    beta[[3, 4, 5, 12, 13, 14]] = [1.5, -1.0, 1.0, 2.0, 1.0, -1.5]
    y = X @ beta + 0.3 * rng.standard_normal(n)
    return X, ((y > 0).astype(int) if classification else y), groups


@pytest.mark.parametrize("operator", OPERATORS, ids=repr)
def test_singleton_groups_are_the_vector_operator(operator):
    """Groups of one feature each threshold exactly like the operator on the vector (and on rows)."""
    rng = np.random.RandomState(1)
    z = rng.standard_normal(12)
    labels = rng.permutation(12)  # any labels: one feature per group
    out, support = Groups(operator, labels)(z, 4, return_support=True)
    np.testing.assert_allclose(out, operator(z, 4))
    np.testing.assert_array_equal(support, operator.support(z, 4))
    W = rng.standard_normal((12, 3))
    np.testing.assert_allclose(Groups(operator, labels)(W, 4), Rows(operator)(W, 4))


@pytest.mark.parametrize("operator", OPERATORS, ids=repr)
def test_group_projection_thresholds_group_norms(operator):
    """The kept groups are the k of largest l2 norm; their norms are the operator applied to the group norms."""
    rng = np.random.RandomState(2)
    codes = rng.randint(0, 7, size=25)
    codes[:7] = np.arange(7)  # every group present
    W = rng.standard_normal((25, 2))
    norms = np.array([np.linalg.norm(W[codes == g]) for g in range(7)])
    out, support = Groups(operator, codes)(W, 3, return_support=True)
    top = np.sort(np.argsort(-norms)[:3])
    np.testing.assert_array_equal(support, np.flatnonzero(np.isin(codes, top)))
    new_norms = np.array([np.linalg.norm(out[codes == g]) for g in range(7)])
    np.testing.assert_allclose(new_norms, operator(norms, 3), atol=1e-12)
    for g in top:  # a kept group is rescaled as a whole (direction unchanged)
        rows = codes == g
        if new_norms[g] > 0:
            np.testing.assert_allclose(out[rows] / new_norms[g], W[rows] / norms[g], atol=1e-12)


def test_expand_adds_whole_groups_by_gradient_norm():
    s = Groups(Hard(), [0, 0, 1, 1, 2, 2, 3])
    G = np.array([[0.0], [0.0], [1.0], [1.0], [0.0], [1.5], [1.2]])  # group norms 0, 1.41, 1.5, 1.2
    mask = np.array([True, True, False, False, False, False, False])
    np.testing.assert_array_equal(np.flatnonzero(s.expand(G, mask, 1)), [0, 1, 4, 5])
    np.testing.assert_array_equal(np.flatnonzero(s.expand(G, mask, 2)), [0, 1, 2, 3, 4, 5])
    rows = Rows(Hard())
    np.testing.assert_array_equal(np.flatnonzero(rows.expand(G, mask, 2)), [0, 1, 5, 6])


def test_get_structure():
    assert isinstance(get_structure(Hard()), Rows)
    structure = get_structure(Hard(), ["a", "b", "a"])
    assert isinstance(structure, Groups) and get_structure(structure) is structure
    np.testing.assert_array_equal(structure.labels, ["a", "b"])
    assert structure.with_operator(Soft()).operator == Soft() and structure.operator == Hard()


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("thresholding", ["hard", "reciprocal"])
def test_every_estimator_selects_the_true_groups(cls, thresholding):
    classification = cls.__name__.endswith("Classifier")
    X, y, groups = _group_data(classification)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (ConvergenceWarning of the regularized solver's default budget)
        est = cls(k=2, groups=groups, thresholding=thresholding).fit(X, y)
    np.testing.assert_array_equal(est.groups_support_, ["g1", "g4"])
    np.testing.assert_array_equal(est.support_, [3, 4, 5, 12, 13, 14])
    coef = np.atleast_2d(est.coef_)
    assert np.all(np.any(coef[:, est.support_] != 0, axis=0))
    assert np.all(coef[:, np.setdiff1d(np.arange(30), est.support_)] == 0)
    assert est.k_ == 2


def test_multinomial_groups_share_one_support_across_classes():
    X, y, groups = _group_data()
    y3 = np.digitize(y, [-1.0, 1.0])
    est = IHTClassifier(k=2, groups=groups).fit(X, y3)
    np.testing.assert_array_equal(est.groups_support_, ["g1", "g4"])
    assert est.coef_.shape == (3, 30) and np.all(est.coef_[:, [0, 1, 2]] == 0)


def test_groups_choose_k_and_path_and_searches():
    X, y, groups = _group_data()
    assert IHTRegressor(groups=groups).fit(X, y).k_ == 2  # k=None: EBIC over groups
    path = sparsity_path(IHTRegressor(groups=groups), X, y, k_grid=[1, 2, 3])
    assert [np.unique(groups[s]).size for s in path.supports] == [1, 2, 3]
    assert set(groups[path.supports[1]]) == {"g1", "g4"}
    assert SparsityIC(IHTRegressor(groups=groups), k_grid=range(1, 6)).fit(X, y).k_ == 2
    cv = SparsityCV(IHTRegressor(groups=groups), k_grid=range(1, 6), cv=3).fit(X, y)
    np.testing.assert_array_equal(cv.best_estimator_.groups_support_, ["g1", "g4"])


def test_groups_bad_input_is_named():
    X, y, groups = _group_data()
    with pytest.raises(ValueError, match="'groups'.*one label per feature"):
        IHTRegressor(k=2, groups=groups[:-1]).fit(X, y)
    with pytest.raises(ValueError, match="'groups'"):
        IHTRegressor(k=2, groups=[[i] for i in range(30)]).fit(X, y)  # unhashable labels
    with pytest.raises(ValueError, match="'groups' parameter is a callable"):
        IHTRegressor(k=2, groups=groups_from_feature_names(["a"])).fit(X, y)  # X without names
    with pytest.warns(UserWarning, match="larger than the number of groups=10"):
        est = IHTRegressor(k=12, groups=groups).fit(X, y)
    assert est.k_ == 10 and est.support_.size == 30
    est = IHTRegressor(k=2, groups=groups)
    with pytest.raises(ValueError):
        est.fit(X, y[:-1])
    assert not hasattr(est, "coef_") and not hasattr(est, "groups_support_")


def test_groups_support_is_removed_by_a_fit_without_groups():
    X, y, groups = _group_data()
    est = IHTRegressor(k=2, groups=groups).fit(X, y)
    est.set_params(groups=None).fit(X, y)
    assert not hasattr(est, "groups_support_")


def _diabetes_with_categories():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    X["sex"] = X["sex"].map({1: "a", 2: "b"}).astype("category")
    X["age_band"] = pd.cut(X.pop("age"), [0, 30, 45, 60, 100], labels=["<30", "30-45", "45-60", "60+"])
    return X, y


def test_column_transformer_groups_select_k_original_variables_in_grid_search():
    X, y = _diabetes_with_categories()
    categorical = ["sex", "age_band"]
    numeric = [c for c in X.columns if c not in categorical]
    ct = ColumnTransformer([("onehot", OneHotEncoder(sparse_output=False), categorical),
                            ("num", StandardScaler(), numeric)]).set_output(transform="pandas")
    pipe = make_pipeline(ct, IHTRegressor(groups=groups_from_feature_names(X.columns)))
    search = GridSearchCV(pipe, {"ihtregressor__k": [2, 4, 6]}, cv=3).fit(X, y)
    est = search.best_estimator_[-1]
    k = search.best_params_["ihtregressor__k"]
    assert len(est.groups_support_) == k  # k original variables, however many dummy columns
    names = est.feature_names_in_[est.support_]
    labels = groups_from_feature_names(X.columns)(est.feature_names_in_)
    for variable in est.groups_support_:  # each selected variable brings all its columns
        assert set(np.flatnonzero(labels == variable)) <= set(est.support_)
    assert len(names) >= k
    pickle.loads(pickle.dumps(search))
    clone(pipe)


def test_groups_from_feature_names_prefers_the_longest_variable():
    g = groups_from_feature_names(["s", "s1", "sex"])
    assert g(["a__s1", "a__sex_m", "a__s_x", "s"]).tolist() == ["s1", "sex", "s", "s"]
    with pytest.raises(ValueError, match="comes from none"):
        g(["a__bmi"])


def _forced_data(classification=False):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 30))
    y = X[:, 3] - 2 * X[:, 7] + X[:, 11] + 0.3 * rng.standard_normal(200)
    return X, ((y > 0).astype(int) if classification else y)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("thresholding", ["hard", "reciprocal"])
@pytest.mark.parametrize("debias", [True, False])
def test_always_select_is_kept_and_counts_towards_k(cls, thresholding, debias):
    X, y = _forced_data(cls.__name__.endswith("Classifier"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free = cls(k=2, thresholding=thresholding, debias=debias).fit(X, y)
        est = cls(k=3, always_select=[20], thresholding=thresholding, debias=debias).fit(X, y)
    assert 20 in est.support_ and est.support_.size == 3
    assert np.all(np.atleast_2d(est.coef_)[:, 20] != 0) or not debias  # refitted: a real coefficient
    # feature 20 is pure noise: the two other slots go where k=2 without it puts them
    np.testing.assert_array_equal(np.setdiff1d(est.support_, [20]), free.support_)


def test_forced_projection_keeps_forced_units_unshrunk():
    rng = np.random.RandomState(4)
    W = rng.standard_normal((10, 2))
    W[6] *= 1e-3  # a forced row far below the threshold
    structure = Rows(Reciprocal(0.0)).with_forced([6])
    out, support = structure(W, 3, return_support=True)
    norms = np.linalg.norm(W, axis=1)
    others = np.setdiff1d(np.arange(10), [6])
    top = others[np.argsort(-norms[others])[:2]]
    np.testing.assert_array_equal(support, np.sort(np.r_[top, 6]))
    np.testing.assert_array_equal(out[6], W[6])
    tau = np.sort(norms[others])[::-1][2]  # the largest norm left out, among the free rows
    expected = Reciprocal(0.0).shrink(norms[top], tau)
    np.testing.assert_allclose(np.linalg.norm(out[top], axis=1), expected)


def test_always_select_with_groups_choose_k_and_splicing():
    X, y, groups = _group_data()
    est = IHTRegressor(k=3, groups=groups, always_select=["g9"]).fit(X, y)
    np.testing.assert_array_equal(est.groups_support_, ["g1", "g4", "g9"])
    auto = IHTRegressor(always_select=[29]).fit(X, y)  # k=None: the path starts at one feature, the forced one
    assert 29 in auto.support_
    rng = np.random.RandomState(5)
    Xs = rng.standard_normal((100, 200))
    ys = Xs[:, :5] @ np.array([2.0, -1.5, 1.0, 1.0, -1.0]) + 0.5 * rng.standard_normal(100)
    spliced = IHTRegressor(k=6, always_select=[150]).fit(Xs, ys)  # splicing never exchanges 150 out
    assert 150 in spliced.support_
    np.testing.assert_array_equal(np.setdiff1d(spliced.support_, [150]), np.arange(5))


def test_always_select_bad_input_is_named():
    X, y = _forced_data()
    cases = [(dict(k=2, always_select=[1, 2, 3]), "more than k=2"),
             (dict(k=2, always_select=[30]), r"indices in \[0, 30\)"),
             (dict(k=2, always_select=["a"]), "X has no feature names"),  # (names need a DataFrame's columns)
             (dict(k=2, always_select=[0.5]), "feature indices"),
             (dict(k=2, always_select=[[1, 2]]), "1-D"),
             (dict(k=2, groups=np.repeat(np.arange(10), 3), always_select=[11]), "not in 'groups'")]
    for params, message in cases:
        est = IHTRegressor(**params)
        with pytest.raises(ValueError, match=message):
            est.fit(X, y)
        assert not hasattr(est, "coef_")


def test_excluded_units_are_never_selected_expanded_or_exchanged_in():
    """``with_excluded``: the projection, the expansion and the unit splicing search skip the units (issue 32)."""
    from sparse_estimators.losses import SquaredLoss
    from sparse_estimators.solvers import splice

    s = Groups(Hard(), [0, 0, 1, 1, 2, 2, 3]).with_excluded([2])
    W = np.array([[1.0], [1.0], [0.5], [0.5], [3.0], [3.0], [0.1]])  # group norms 1.41, 0.71, 4.24, 0.1
    out, support = s(W, 2, return_support=True)
    np.testing.assert_array_equal(support, [0, 1, 2, 3])
    np.testing.assert_array_equal(out[4:6], 0)
    forced = s.with_forced([3])
    np.testing.assert_array_equal(forced.support(W, 2), [0, 1, 6])
    mask = np.array([True, True, False, False, False, False, False])
    np.testing.assert_array_equal(np.flatnonzero(s.expand(W, mask, 1)), [0, 1, 2, 3])
    rows = Rows(Hard()).with_excluded([4, 5])
    np.testing.assert_array_equal(rows.support(W, 2), [0, 1])
    # the splicing search: group 2 explains y alone, but it is excluded
    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 7))
    y = 3 * X[:, 4] - 3 * X[:, 5] + X[:, 0] + 0.1 * rng.standard_normal(100)
    loss = SquaredLoss(X, y, None, True)
    W0, b0 = loss.zeros()
    W0[[6]] = 1.0
    result = splice(loss, 1, W0, loss.initial_intercept(), structure=s)
    np.testing.assert_array_equal(result.support, [0, 1])
    free = splice(loss, 1, W0, loss.initial_intercept(), structure=Groups(Hard(), [0, 0, 1, 1, 2, 2, 3]))
    np.testing.assert_array_equal(free.support, [4, 5])
