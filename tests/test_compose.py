"""GroupsFromTransformer: groups from the fitted transformer's output names, so sparse one-hot output works (issue 32
item 17)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.compose import GroupsFromTransformer
from sparse_estimators.model_selection import SparsityCV
from sparse_estimators.structures import groups_from_feature_names


def _table(seed=0, n=300):
    """Two categorical variables (one with a category in a single row), three numeric ones; y uses color and a."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame({
        "color": np.r_[["violet"], rng.choice(["red", "green", "blue"], n - 1, p=[0.4, 0.3, 0.3])],
        "shape": rng.choice(["round", "square", "flat"], n),
        "a": rng.standard_normal(n), "b": rng.standard_normal(n), "c": rng.standard_normal(n),
    })
    effect = X["color"].map({"red": 2.0, "green": -1.0, "blue": 0.5, "violet": 1.0}).to_numpy()
    y = effect + 1.5 * X["a"].to_numpy() + 0.3 * rng.standard_normal(n)
    return X, y


def _columns(sparse):
    onehot = OneHotEncoder(sparse_output=sparse, handle_unknown="ignore")
    columns = ColumnTransformer([("onehot", onehot, ["color", "shape"]), ("num", StandardScaler(), ["a", "b", "c"])],
                                sparse_threshold=1.0 if sparse else 0.0)
    return columns if sparse else columns.set_output(transform="pandas")


@pytest.mark.parametrize("Estimator", [IHTRegressor, IHTClassifier])
def test_sparse_one_hot_output_gives_the_dense_pipelines_model(Estimator):
    """The groups come from the fitted transformer's names: sparse output fits the model the dense pandas one does."""
    X, y = _table()
    if Estimator is IHTClassifier:
        y = (y > np.median(y)).astype(int)
    groups = groups_from_feature_names(X.columns)
    dense = make_pipeline(_columns(False), Estimator(k=2, groups=groups)).fit(X, y)
    model = GroupsFromTransformer(_columns(True), Estimator(k=2, groups=groups)).fit(X, y)
    assert sp.issparse(model.transformer_.transform(X))  # (the estimator was fitted on sparse input)
    reference = dense[-1]
    assert model.estimator_.groups_support_.tolist() == reference.groups_support_.tolist() == ["a", "color"]
    names = model.get_feature_names_out()
    assert names.tolist() == reference.feature_names_in_.tolist()
    assert names[model.estimator_.support_].tolist() == reference.feature_names_in_[reference.support_].tolist()
    assert model.groups_.tolist() == groups(names).tolist()
    np.testing.assert_allclose(model.estimator_.coef_, reference.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.predict(X), dense.predict(X), rtol=1e-6, atol=1e-8)
    assert model.score(X, y) == pytest.approx(dense.score(X, y), rel=1e-9)
    assert model.n_features_in_ == 5 and model.feature_names_in_.tolist() == list(X.columns)
    if Estimator is IHTClassifier:
        np.testing.assert_array_equal(model.classes_, [0, 1])
        np.testing.assert_allclose(model.predict_proba(X), dense.predict_proba(X), rtol=1e-6, atol=1e-8)
    # a plain Pipeline with sparse output has no names to give: the error points here
    with pytest.raises(ValueError, match="GroupsFromTransformer"):
        make_pipeline(_columns(True), Estimator(k=2, groups=groups)).fit(X, y)


def test_groups_follow_each_folds_categories_in_a_search():
    """The rare category ('violet') is missing from some training folds: each fold resolves its own names."""
    X, y = _table(seed=1)
    model = GroupsFromTransformer(_columns(True), IHTRegressor(groups=groups_from_feature_names(X.columns)))
    search = GridSearchCV(model, {"estimator__k": [1, 2, 3]}, cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)
    n_columns = [GroupsFromTransformer(_columns(True), IHTRegressor(k=1)).fit(X.iloc[train], y[train])
                 .get_feature_names_out().size for train, _ in KFold(5, shuffle=True, random_state=0).split(X)]
    assert len(set(n_columns)) > 1  # (the folds do differ in their dummy columns)
    assert search.best_params_ == {"estimator__k": 2}
    assert search.best_estimator_.estimator_.groups_support_.tolist() == ["a", "color"]
    # through a search of this package: the wrapped estimator's groups are resolved alike
    cv = GroupsFromTransformer(_columns(True), SparsityCV(IHTRegressor(groups=groups_from_feature_names(X.columns)),
                                                          k_grid=[1, 2, 3], cv=3)).fit(X, y)
    assert cv.estimator_.best_estimator_.groups_support_.tolist() == ["a", "color"]
    assert cv.groups_.tolist() == groups_from_feature_names(X.columns)(cv.get_feature_names_out()).tolist()


def test_groups_from_transformer_is_a_scikit_learn_estimator():
    """scikit-learn's checks, with a transformer that has output names and an estimator without callable groups."""
    from sklearn.preprocessing import FunctionTransformer

    check_estimator(GroupsFromTransformer(StandardScaler(), IHTRegressor(k=2)))
    X, y = _table()
    with pytest.raises(TypeError, match="get_feature_names_out"):  # (FunctionTransformer() names nothing)
        GroupsFromTransformer(FunctionTransformer(), IHTRegressor(k=1, groups=lambda names: names)).fit(
            X[["a", "b"]].to_numpy(), y)
