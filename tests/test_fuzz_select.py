"""Invariances and contracts of the classifiers, the k selectors and the Cox models, against independent references.

The classifiers: relabelling the classes (strings, permuted and
non-contiguous integers) permutes ``classes_`` and the probability columns
and keeps the support; predictions, probabilities and decision values agree
with each other as in scikit-learn; integer weights equal repeated rows,
``class_weight`` equals the weights it stands for; permuted features permute
``coef_``; scikit-learn's meta-estimators (``SelectFromModel``,
``GridSearchCV``) work. The selectors: ``SparsityCV``'s scores are the
fold-by-fold fits' scores (own ``score`` or a scorer, ``groups`` routed to a
group-aware splitter), ``SparsityIC``'s criterion is the log-likelihood
computed by hand plus the documented penalty. The Cox models: their
coefficients on a support are scikit-survival's ``CoxPHSurvivalAnalysis``
refitted on it, the target is checked as documented, the predicted functions
do not depend on where the features are centred, a monotone likelihood fails
clearly, and the model works in scikit-learn's searches. The data have a high signal, so that the supports
are unique; coefficients are compared to the solvers' tolerance, never to
rounding.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _loss_problems import cox_data
from _problems import CLASSIFIERS
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import gammaln, log_softmax
from sklearn.feature_selection import SelectFromModel
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.class_weight import compute_sample_weight

from sparse_estimators import (
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    support_importance,
)
from sparse_estimators.model_selection import SparsityCV, SparsityIC, one_standard_error, sparsity_path
from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)

COX = [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
       IOBSCoxPHSurvivalAnalysis]
# the solvers stop at a relative change of 1e-4: fits of the same problem agree to about that
RTOL, ATOL = 1e-3, 1e-4


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (k clipped and such: not what these tests judge)
        yield


def _class_data(n_classes, seed=0, n=240, p=15):
    """Gaussian ``X``; labels 0..n_classes-1 drawn from a softmax of 3 features (in 3 groups of 3) of high signal."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    support = np.sort(3 * rng.choice(p // 3, 3, replace=False) + rng.randint(0, 3, 3))
    B = np.zeros((p, n_classes))
    B[support] = rng.choice([-1.0, 1.0], (3, n_classes)) * rng.uniform(1.5, 2.5, (3, n_classes))
    if n_classes == 2:
        B[:, 0] = 0.0
    logits = X @ B
    prob = np.exp(log_softmax(logits, axis=1))
    y = np.array([rng.choice(n_classes, p=row) for row in prob])
    return X, y, support


def _proba_of_codes(model, X, labels):
    """``predict_proba``'s columns in the order of ``labels`` (the classes of codes 0, 1, ...)."""
    order = [int(np.flatnonzero(model.classes_ == label)[0]) for label in labels]
    return model.predict_proba(X)[:, order]


# -- the classifiers -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_relabelled_classes_permute_the_columns_and_keep_the_support(Est, n_classes):
    X, y, support = _class_data(n_classes)
    model = Est(k=3).fit(X, y)
    assert_array_equal(model.support_, support)
    proba = model.predict_proba(X)
    # (floats must be integral: scikit-learn refuses others as continuous targets)
    for labels in (np.array(["zebra", "ant", "moth"][:n_classes]), np.array([7, -2, 30][:n_classes]),
                   np.array([2, 0, 1][:n_classes]), np.array([5.0, -1.0, 3.0][:n_classes])):
        relabelled = Est(k=3).fit(X, labels[y])
        assert_array_equal(relabelled.classes_, np.sort(labels))
        assert_array_equal(relabelled.support_, support)
        assert_allclose(_proba_of_codes(relabelled, X, labels), proba, rtol=RTOL, atol=ATOL)
        assert relabelled.predict(X).dtype == labels.dtype
        # the predictions are the relabelled ones except where a probability ties at the solvers' tolerance
        sure = np.max(proba, axis=1) - np.sort(proba, axis=1)[:, -2] > 1e-2
        assert_array_equal(relabelled.predict(X)[sure], labels[model.predict(X)][sure])


@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predictions_probabilities_and_decision_values_agree(Est, n_classes):
    X, y, _ = _class_data(n_classes)
    labels = np.array(["b", "c", "a"][:n_classes])
    model = Est(k=3).fit(X, labels[y])
    proba, decision = model.predict_proba(X), model.decision_function(X)
    assert proba.shape == (X.shape[0], n_classes)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all((proba >= 0) & (proba <= 1))
    assert_allclose(model.predict_log_proba(X), np.log(proba), rtol=1e-10, atol=1e-12)
    assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])
    eta = X @ model.coef_.T + model.intercept_  # (coef_ (1 or n_classes, p), as scikit-learn's)
    if n_classes == 2:
        assert decision.shape == (X.shape[0],) and model.coef_.shape == (1, X.shape[1])
        assert_allclose(decision, eta[:, 0], rtol=1e-10, atol=1e-12)
        assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-decision)), rtol=1e-10)
    else:
        assert decision.shape == (X.shape[0], n_classes) and model.coef_.shape == (n_classes, X.shape[1])
        assert_allclose(decision, eta, rtol=1e-10, atol=1e-12)
        assert_allclose(proba, np.exp(log_softmax(decision, axis=1)), rtol=1e-10)
    assert model.score(X, labels[y]) == pytest.approx(accuracy_score(labels[y], model.predict(X)))


@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_weights_equal_repeated_rows_and_class_weight(Est, n_classes):
    X, y, support = _class_data(n_classes)
    rng = np.random.RandomState(1)
    counts = rng.randint(0, 4, X.shape[0])
    rows = np.repeat(np.arange(X.shape[0]), counts)
    weighted, repeated = Est(k=3).fit(X, y, sample_weight=counts), Est(k=3).fit(X[rows], y[rows])
    assert_array_equal(weighted.support_, repeated.support_)
    assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), rtol=RTOL, atol=ATOL)
    # class_weight: the factor of each row's class, multiplied into sample_weight; names as in y
    labels = np.array(["x", "y", "z"][:n_classes])
    factors = {"x": 2.0, "y": 0.5, "z": 3.0}
    factors = {label: factors[label] for label in labels}
    by_dict = Est(k=3, class_weight=factors).fit(X, labels[y], sample_weight=counts)
    by_hand = Est(k=3).fit(X, labels[y], sample_weight=counts * np.array([factors[c] for c in labels[y]]))
    assert_array_equal(by_dict.support_, by_hand.support_)
    assert_allclose(by_dict.predict_proba(X), by_hand.predict_proba(X), rtol=RTOL, atol=ATOL)
    balanced = Est(k=3, class_weight="balanced").fit(X, labels[y])
    by_hand = Est(k=3).fit(X, labels[y], sample_weight=compute_sample_weight("balanced", labels[y]))
    assert_allclose(balanced.predict_proba(X), by_hand.predict_proba(X), rtol=RTOL, atol=ATOL)
    assert_array_equal(balanced.support_, support)


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_a_class_present_only_with_weight_zero(Est):
    """Three labels in ``y``, one only on rows of weight 0: the two others' model is the binary fit without them.

    Without the l2 term (``alpha=0``): the multinomial's penalty on the two live columns,
    ``(w0, w1) = (-d/2, d/2)``, is half the binary model's on ``d``.
    """
    X, y, _ = _class_data(2)
    y3 = y.copy()
    y3[:20] = 2
    weights = np.ones(X.shape[0])
    weights[:20] = 0.0
    model = Est(k=3, alpha=0.0).fit(X, y3, sample_weight=weights)
    binary = Est(k=3, alpha=0.0).fit(X[20:], y[20:])
    assert_array_equal(model.classes_, [0, 1, 2])
    assert_array_equal(model.support_, binary.support_)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    proba = model.predict_proba(X)
    assert proba[:, 2].max() < 1e-3
    assert_allclose(proba[:, :2], binary.predict_proba(X), rtol=RTOL, atol=ATOL)
    assert set(model.predict(X)) <= {0, 1}


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_single_class_and_k_beyond_the_features(Est):
    X, y, _ = _class_data(2)
    for labels in (np.zeros(X.shape[0], int), np.full(X.shape[0], "a")):
        with pytest.raises(ValueError, match="class"):
            Est(k=3).fit(X, labels)
    weights = (y == 1).astype(float)  # (two classes, one of them only at weight 0)
    with pytest.raises(ValueError, match="class"):
        Est(k=3).fit(X, y, sample_weight=weights)
    small = X[:, :4]
    clipped, full = Est(k=10).fit(small, y), Est(k=4).fit(small, y)
    assert clipped.k_ == 4
    assert_array_equal(clipped.support_, np.arange(4))
    assert_allclose(clipped.predict_proba(small), full.predict_proba(small), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_separable_classes_give_finite_models(Est, n_classes):
    """Perfectly separated classes: the l2 term (``alpha``) keeps the coefficients finite and the labels right."""
    X, y, support = _class_data(n_classes)
    X = X.copy()
    X[:, support[0]] += 8.0 * y  # (a feature that alone separates the classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Est(k=3).fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    assert support[0] in model.support_
    assert model.score(X, y) == 1.0
    assert np.all(np.isfinite(model.predict_proba(X)))


@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_permuted_features_groups_and_always_select(Est, n_classes):
    X, y, support = _class_data(n_classes)
    p = X.shape[1]
    model = Est(k=3).fit(X, y)
    perm = np.random.RandomState(2).permutation(p)
    permuted = Est(k=3).fit(X[:, perm], y)
    assert_array_equal(np.sort(perm[permuted.support_]), support)
    coef = np.empty_like(permuted.coef_)
    coef[:, perm] = permuted.coef_
    assert_allclose(coef, model.coef_, rtol=RTOL, atol=ATOL)
    sparse = Est(k=3).fit(sp.csr_matrix(X), y)
    assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), model.predict_proba(X), rtol=RTOL, atol=ATOL)
    groups = np.arange(p) // 3
    grouped = Est(k=3, groups=np.array([f"g{g}" for g in groups])).fit(X, y)
    assert_array_equal(grouped.support_, np.flatnonzero(np.isin(groups, groups[support])))
    assert_array_equal(grouped.groups_support_, np.array([f"g{g}" for g in groups[support]]))
    extra = np.setdiff1d(np.arange(p), support)[:2]
    forced = Est(k=5, always_select=extra).fit(X, y)
    assert_array_equal(forced.support_, np.union1d(extra, support))


@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_select_from_model_and_grid_search(Est, n_classes):
    X, y, support = _class_data(n_classes)
    selector = SelectFromModel(Est(k=3)).fit(X, y)  # (prefit=False: the selector fits a clone)
    assert_array_equal(np.flatnonzero(selector.get_support()), support)
    assert selector.transform(X).shape == (X.shape[0], 3)
    by_support = SelectFromModel(Est(k=4), importance_getter=support_importance).fit(X, y)
    assert by_support.get_support().sum() == 4
    cv = StratifiedKFold(2, shuffle=True, random_state=0)
    grid = {"k": [2, 3], "thresholding": ["hard", "soft"]}  # (small: RegularizedIHT runs ~700 iterations a fit)
    search = GridSearchCV(Est(), grid, cv=cv).fit(X, y)
    expected = {(k, t): cross_val_score(Est(k=k, thresholding=t), X, y, cv=cv).mean()
                for k in grid["k"] for t in grid["thresholding"]}
    for params, mean in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True):
        assert mean == pytest.approx(expected[params["k"], params["thresholding"]], abs=1e-12)
    best = max(expected.values())
    assert search.best_score_ == pytest.approx(best, abs=1e-12)


# -- the k selectors -------------------------------------------------------------------------------------------------
def _fold_scores(make, X, y, splits, sample_weight=None, scorer=None):
    """Each fold's score of a cold fit ``make()`` on its training rows: ``score`` or ``scorer(est, X, y)``."""
    scores = []
    for train, test in splits:
        sw = None if sample_weight is None else sample_weight[train]
        est = make().fit(X[train], y[train], sample_weight=sw)
        tw = None if sample_weight is None else sample_weight[test]
        if scorer is None:
            scores.append(est.score(X[test], y[test], sample_weight=tw))
        else:
            scores.append(scorer(est, X[test], y[test], tw))
    return np.array(scores)


def _neg_log_loss(est, X, y, sample_weight):
    return -log_loss(y, est.predict_proba(X), labels=est.classes_, sample_weight=sample_weight)


@pytest.mark.parametrize("Est", [IHTClassifier, IOBSClassifier])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparsity_cv_classifier_scores_are_the_fold_fits_scores(Est, n_classes):
    X, y, support = _class_data(n_classes)
    weights = np.random.RandomState(3).randint(1, 4, X.shape[0]).astype(float)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    splits = list(cv.split(X, y))
    grid = [1, 2, 3, 5]
    for scoring, scorer in ((None, None), ("neg_log_loss", _neg_log_loss)):
        search = SparsityCV(Est(), k_grid=grid, cv=cv, scoring=scoring).fit(X, y, sample_weight=weights)
        expected = _fold_scores(lambda: Est(k=3), X, y, splits, weights, scorer)
        for i, value in enumerate(expected):
            assert search.cv_results_[f"split{i}_test_score"][2] == pytest.approx(value, rel=1e-3, abs=1e-3)
        mean = search.cv_results_["mean_test_score"]
        assert search.k_ == grid[search.best_index_] == grid[int(np.argmax(np.round(mean, 12)))]
        assert search.best_score_ == mean[search.best_index_]
        assert search.cv_results_["rank_test_score"][search.best_index_] == 1
        refit = Est(k=search.k_).fit(X, y, sample_weight=weights)
        assert_array_equal(search.best_estimator_.support_, refit.support_)
        assert_allclose(search.predict_proba(X), refit.predict_proba(X), rtol=RTOL, atol=ATOL)
        assert_array_equal(search.classes_, np.unique(y))
    # an int cv: stratified folds, as GridSearchCV's (no shuffling)
    search = SparsityCV(Est(), k_grid=[3], cv=3).fit(X, y)
    expected = _fold_scores(lambda: Est(k=3), X, y, StratifiedKFold(3).split(X, y))
    assert search.cv_results_["mean_test_score"][0] == pytest.approx(expected.mean(), abs=1e-3)


def test_sparsity_cv_routes_groups_and_equals_grid_search():
    X, y, support = _class_data(2)
    groups = np.random.RandomState(4).randint(0, 9, X.shape[0])
    weights = np.random.RandomState(5).uniform(0.5, 2.0, X.shape[0])
    cv = GroupKFold(3)
    search = SparsityCV(IHTClassifier(), k_grid=[2, 3, 4], cv=cv).fit(X, y, sample_weight=weights, groups=groups)
    splits = list(cv.split(X, y, groups))
    for train, test in splits:  # (the folds really are the groups')
        assert not set(groups[train]) & set(groups[test])
    expected = _fold_scores(lambda: IHTClassifier(k=3), X, y, splits, weights)
    assert search.cv_results_["mean_test_score"][1] == pytest.approx(expected.mean(), rel=1e-3)
    grid = GridSearchCV(IHTClassifier(), {"k": [2, 3, 4]}, cv=cv).fit(X, y, sample_weight=weights, groups=groups)
    assert search.cv_results_["mean_test_score"][1] == pytest.approx(grid.cv_results_["mean_test_score"][1],
                                                                      rel=1e-3)
    with pytest.raises(ValueError, match="groups"):
        SparsityCV(IHTClassifier(), k_grid=[2, 3], cv=cv).fit(X, y)
    # deterministic, and the one-standard-error rule computed by hand from cv_results_
    again = SparsityCV(IHTClassifier(), k_grid=[2, 3, 4], cv=cv).fit(X, y, sample_weight=weights, groups=groups)
    assert_array_equal(again.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"])
    rule = SparsityCV(IHTClassifier(), k_grid=[1, 2, 3, 4, 6], cv=cv, refit=one_standard_error).fit(
        X, y, groups=groups)
    mean, std = rule.cv_results_["mean_test_score"], rule.cv_results_["std_test_score"]
    best = int(np.nanargmax(mean))
    within = np.flatnonzero(mean >= mean[best] - std[best] / np.sqrt(3))
    assert rule.k_ == [1, 2, 3, 4, 6][within.min()]


def test_selectors_in_a_pipeline_and_support_importance():
    X, y, support = _class_data(3)
    X = X * np.linspace(0.5, 20.0, X.shape[1])  # (features of unequal scales: the scaler's job)
    pipe = make_pipeline(StandardScaler(), SparsityCV(IHTClassifier(), k_grid=[2, 3, 4], cv=3)).fit(X, y)
    assert pipe[-1].k_ == 3
    assert_array_equal(pipe[-1].best_estimator_.support_, support)
    assert_array_equal(np.flatnonzero(support_importance(pipe)), support)
    assert_array_equal(pipe.predict(X), pipe[-1].best_estimator_.predict(StandardScaler().fit_transform(X)))
    ic = make_pipeline(StandardScaler(), SparsityIC(IHTClassifier(), k_grid=[1, 2, 3, 4, 5])).fit(X, y)
    assert ic[-1].k_ == 3
    assert_array_equal(np.flatnonzero(support_importance(ic[-1])), support)
    selector = SelectFromModel(SparsityCV(IHTClassifier(), k_grid=[2, 3, 4], cv=3),
                               importance_getter=support_importance).fit(StandardScaler().fit_transform(X), y)
    assert_array_equal(np.flatnonzero(selector.get_support()), support)


def test_an_unsorted_grid_permutes_the_results():
    """The path is solved in increasing ``k`` whatever the grid's order; results follow the grid's order."""
    X, y, _ = _class_data(3)
    order, grid = [5, 2, 3], [2, 3, 5]
    unsorted, ordered = (SparsityIC(IHTClassifier(), k_grid=g).fit(X, y) for g in (order, grid))
    assert_array_equal(unsorted.k_grid_, order)
    assert_allclose(unsorted.criterion_, ordered.criterion_[[2, 0, 1]], rtol=1e-10)
    assert unsorted.k_ == ordered.k_
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    unsorted, ordered = (SparsityCV(IHTClassifier(), k_grid=g, cv=cv).fit(X, y) for g in (order, grid))
    assert [p["k"] for p in unsorted.cv_results_["params"]] == order
    assert_allclose(unsorted.cv_results_["mean_test_score"], ordered.cv_results_["mean_test_score"][[2, 0, 1]],
                    rtol=1e-10)


def _deviance(model, X, y, weights):
    """Twice the weighted log-loss of a fitted classifier, computed from its probabilities."""
    proba = model.predict_proba(X)
    codes = np.searchsorted(model.classes_, y)
    return -2.0 * float(weights @ np.log(proba[np.arange(y.size), codes]))


def _ebic_penalty(df, n, p, k, gamma=1.0):
    return df * np.log(n) + 2.0 * gamma * (gammaln(p + 1) - gammaln(k + 1) - gammaln(p - k + 1))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("criterion", ["ebic", "bic", "aic"])
def test_sparsity_ic_is_the_criterion_computed_by_hand(n_classes, criterion):
    """The deviance of each level's model, from its probabilities, plus the penalty: as differences between levels.

    The levels' models are the warm-started path's (:func:`sparsity_path`); up to the true
    level they are the cold fits' too (beyond it the path may take other noise features,
    as documented, usually at a lower training loss).
    """
    X, y, support = _class_data(n_classes, n=200)
    n, p = X.shape
    counts = np.random.RandomState(6).randint(1, 4, n).astype(float)  # (frequency weights: N = their sum)
    grid = [1, 2, 3, 4, 6]
    search = SparsityIC(IHTClassifier(), k_grid=grid, criterion=criterion).fit(X, y, sample_weight=counts)
    path = sparsity_path(IHTClassifier(), X, y, k_grid=grid, sample_weight=counts)
    N, per = counts.sum(), n_classes - 1
    hand = []
    for k, model in zip(grid, path.estimators, strict=True):
        assert model.support_.size == k
        if k <= 3:
            assert_array_equal(model.support_, IHTClassifier(k=k).fit(X, y, sample_weight=counts).support_)
        df = k * per
        penalty = {"ebic": _ebic_penalty(df, N, p, k), "bic": df * np.log(N), "aic": 2.0 * df}[criterion]
        hand.append(_deviance(model, X, y, counts) + penalty)
    hand = np.array(hand)
    assert_array_equal(search.k_grid_, grid)
    assert_allclose(search.criterion_ - search.criterion_[2], hand - hand[2], rtol=1e-6, atol=1e-6)
    assert search.k_ == grid[int(np.argmin(hand))]
    assert_array_equal(search.best_estimator_.support_, IHTClassifier(k=search.k_).fit(X, y, sample_weight=counts)
                       .support_)
    # integer weights are repeated rows; weights normalised to sum to 1 count each row once
    rows = np.repeat(np.arange(n), counts.astype(int))
    repeated = SparsityIC(IHTClassifier(), k_grid=grid, criterion=criterion).fit(X[rows], y[rows])
    assert_allclose(repeated.criterion_, search.criterion_, rtol=1e-4)
    plain = SparsityIC(IHTClassifier(), k_grid=grid, criterion=criterion).fit(X, y)
    relative = SparsityIC(IHTClassifier(), k_grid=grid, criterion=criterion).fit(
        X, y, sample_weight=np.full(n, 1.0 / n))
    assert_allclose(relative.criterion_, plain.criterion_, rtol=1e-4)


def test_sparsity_ic_least_squares_by_hand():
    rng = np.random.RandomState(7)
    X = rng.standard_normal((120, 20))
    y = X[:, [2, 9, 14]] @ np.array([1.0, -0.8, 0.6]) + 0.5 * rng.standard_normal(120)
    grid = [1, 2, 3, 4, 5]
    search = SparsityIC(IHTRegressor(), k_grid=grid, criterion="bic").fit(X, y)
    path = sparsity_path(IHTRegressor(), X, y, k_grid=grid)
    hand = []
    for k, model in zip(grid, path.estimators, strict=True):
        rss = float(np.sum((y - model.predict(X)) ** 2))
        hand.append(120 * np.log(rss / 120) + k * np.log(120))
        if k <= 3:
            assert_allclose(model.coef_, IHTRegressor(k=k).fit(X, y).coef_, rtol=RTOL, atol=ATOL)
        else:  # (beyond the truth the path reaches at least the cold fit's training loss)
            cold = IHTRegressor(k=k).fit(X, y)
            assert rss <= float(np.sum((y - cold.predict(X)) ** 2)) * (1 + 1e-9)
    hand = np.array(hand)
    assert_allclose(search.criterion_ - search.criterion_[2], hand - hand[2], rtol=1e-6, atol=1e-6)
    assert search.k_ == 3 == grid[int(np.argmin(hand))]
    assert_array_equal(search.best_estimator_.support_, [2, 9, 14])


# -- the Cox models --------------------------------------------------------------------------------------------------
def _cox_data(seed=0, n=150, p=15, tied=False, binary=False):
    """:func:`_loss_problems.cox_data` (15 features) without ``beta``."""
    X, y, _, support = cox_data(seed, n, p, tied, binary)
    return X, y, support


@pytest.mark.parametrize("Est", COX)
@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_cox_coefficients_are_scikit_survival_refitted_on_the_support(Est, ties):
    from sksurv.linear_model import CoxPHSurvivalAnalysis

    X, y, support = _cox_data(tied=True)
    model = Est(k=3, alpha=0.0, ties=ties).fit(X, y)
    assert_array_equal(model.support_, support)
    reference = CoxPHSurvivalAnalysis(alpha=0.0, ties=ties).fit(X[:, support], y)
    assert_allclose(model.coef_[support], reference.coef_, rtol=RTOL, atol=ATOL)
    assert np.count_nonzero(model.coef_) == 3
    if ties == "breslow":  # (scikit-survival's baseline is Breslow's whatever the ties)
        times = model.unique_times_
        ours = model.predict_survival_function(X[:10], return_array=True)
        theirs = np.array([f(times) for f in reference.predict_survival_function(X[:10, support])])
        assert_allclose(ours, theirs, atol=1e-3)
        assert_allclose(model.predict_cumulative_hazard_function(X[:10], return_array=True),
                        np.array([f(times) for f in reference.predict_cumulative_hazard_function(X[:10, support])]),
                        rtol=1e-2, atol=1e-3)


def test_cox_target_formats():
    """Integer times are accepted; the other layouts users try are refused naming the structured array.

    (Numeric ``y``, other field types and counts, bad times and no events: ``tests/test_survival.py``.)
    """
    from sksurv.util import Surv

    X, y, support = _cox_data()
    event, time = y["event"], y["time"]
    int_time = Surv.from_arrays(event, np.ceil(10 * time).astype(int))
    assert_array_equal(IHTCoxPHSurvivalAnalysis(k=3).fit(X, int_time).support_, support)
    reversed_fields = np.array(list(zip(time, event, strict=True)), dtype=[("time", float), ("event", bool)])
    pandas = pytest.importorskip("pandas")
    for bad in (reversed_fields, (event, time), np.column_stack([event, time]),
                pandas.DataFrame({"event": event, "time": time}), pandas.DataFrame({"time": time, "event": event})):
        with pytest.raises(ValueError, match="structured array"):
            IHTCoxPHSurvivalAnalysis(k=3).fit(X, bad)
        with pytest.raises(ValueError, match="structured array"):
            SparsityCV(IHTCoxPHSurvivalAnalysis(), k_grid=[2, 3], cv=3).fit(X, bad)


@pytest.mark.parametrize("Est", COX)
def test_cox_score_with_tied_risks_is_scikit_survivals_concordance(Est):
    from sksurv.metrics import concordance_index_censored

    X, y, _ = _cox_data(binary=True, tied=True)
    model = Est(k=3).fit(X, y)
    risk = model.predict(X)
    assert np.unique(risk).size <= 8 < risk.size  # (3 binary features: at most 8 distinct risks, many ties)
    assert model.score(X, y) == pytest.approx(concordance_index_censored(y["event"], y["time"], risk)[0],
                                              rel=1e-12)
    Xt = X[:40]
    assert model.score(Xt, y[:40]) == pytest.approx(
        concordance_index_censored(y["event"][:40], y["time"][:40], model.predict(Xt))[0], rel=1e-12)


def test_cox_in_scikit_learn_searches_and_selectors():
    from sksurv.metrics import concordance_index_censored

    X, y, support = _cox_data(n=180)
    cv = KFold(3, shuffle=True, random_state=0)
    splits = list(cv.split(X))

    def cindex(est, Xt, yt, sw):
        return concordance_index_censored(yt["event"], yt["time"], est.predict(Xt))[0]

    expected = _fold_scores(lambda: IHTCoxPHSurvivalAnalysis(k=3), X, y, splits, scorer=cindex)
    assert_allclose(cross_val_score(IHTCoxPHSurvivalAnalysis(k=3), X, y, cv=cv), expected, rtol=1e-12)
    grid = GridSearchCV(IHTCoxPHSurvivalAnalysis(), {"k": [1, 2, 3, 5]}, cv=cv).fit(X, y)
    assert grid.cv_results_["mean_test_score"][2] == pytest.approx(expected.mean(), rel=1e-12)
    search = SparsityCV(IHTCoxPHSurvivalAnalysis(), k_grid=[1, 2, 3, 5], cv=cv).fit(X, y)
    assert search.cv_results_["mean_test_score"][2] == pytest.approx(expected.mean(), rel=1e-6)
    assert search.k_ == [1, 2, 3, 5][search.best_index_]
    assert_array_equal(search.best_estimator_.support_,
                       IHTCoxPHSurvivalAnalysis(k=search.k_).fit(X, y).support_)
    # weights (some 0): to the fits, and to the concordance of the test rows, as GridSearchCV passes them
    weights = np.random.RandomState(10).randint(0, 3, X.shape[0]).astype(float)
    weighted = SparsityCV(IHTCoxPHSurvivalAnalysis(), k_grid=[2, 3], cv=cv, return_train_score=True).fit(
        X, y, sample_weight=weights)
    by_grid = GridSearchCV(IHTCoxPHSurvivalAnalysis(), {"k": [2, 3]}, cv=cv, return_train_score=True).fit(
        X, y, sample_weight=weights)
    assert_allclose(weighted.cv_results_["mean_test_score"][1], by_grid.cv_results_["mean_test_score"][1], rtol=1e-6)
    assert_allclose(weighted.cv_results_["mean_train_score"][1], by_grid.cv_results_["mean_train_score"][1], rtol=1e-6)
    times = search.best_estimator_.unique_times_[[5, 40, 90]]
    assert_allclose([f(times) for f in search.predict_survival_function(X[:5])],
                    [f(times) for f in search.best_estimator_.predict_survival_function(X[:5])], rtol=1e-12)
    # SparsityIC: minus twice Breslow's log partial likelihood of the path's models, by hand, plus EBIC's penalty
    grid_k = [1, 2, 3, 4, 6]
    ic = SparsityIC(IHTCoxPHSurvivalAnalysis(), k_grid=grid_k).fit(X, y)
    path = sparsity_path(IHTCoxPHSurvivalAnalysis(), X, y, k_grid=grid_k)
    event, time = y["event"], y["time"]
    hand = []
    for k, model in zip(grid_k, path.estimators, strict=True):
        eta = X @ model.coef_
        at_risk = np.array([np.log(np.sum(np.exp(eta[time >= t]))) for t in time[event]])
        hand.append(-2.0 * np.sum(eta[event] - at_risk) + _ebic_penalty(k, X.shape[0], X.shape[1], k))
    hand = np.array(hand)
    assert_allclose(ic.criterion_ - ic.criterion_[2], hand - hand[2], rtol=1e-6, atol=1e-6)
    assert ic.k_ == grid_k[int(np.argmin(hand))] == 3
    assert_array_equal(ic.best_estimator_.support_, support)
    # a pipeline, SelectFromModel
    pipe = make_pipeline(StandardScaler(), IHTCoxPHSurvivalAnalysis(k=3)).fit(X * 7.0, y)
    assert_array_equal(pipe[-1].support_, support)
    assert pipe.score(X * 7.0, y) == pytest.approx(cindex(pipe, X * 7.0, y, None), rel=1e-12)
    selector = SelectFromModel(IHTCoxPHSurvivalAnalysis(k=3)).fit(X, y)
    assert_array_equal(np.flatnonzero(selector.get_support()), support)


@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
@pytest.mark.parametrize("offset", [-10.0, 30.0, -900.0, 900.0])
def test_cox_functions_do_not_depend_on_where_the_features_are_centred(Est, offset):
    """Features shifted so that the training ``X coef_`` moves by ``offset``: the same model, the same functions.

    The partial likelihood and the predicted functions depend on differences of ``X coef_``
    only. (Computed as ``S0 ** exp(X coef_)``, the survival function underflowed to 0 at
    offset -10, ``S0 = exp(-H0)`` with ``H0`` about 10^5, and rounded to 1 at +60; beyond
    about 709, ``exp(X coef_)`` itself left float range: functions NaN, or 1 from a zero baseline.)
    """
    X, y, support = _cox_data()
    model = Est(k=3).fit(X, y)
    shift = np.zeros(X.shape[1])
    shift[support] = offset / (3.0 * model.coef_[support])
    shifted = Est(k=3).fit(X + shift, y)
    assert_array_equal(shifted.support_, support)
    assert_allclose(shifted.coef_, model.coef_, rtol=RTOL, atol=ATOL)
    S = shifted.predict_survival_function(X[:20] + shift, return_array=True)
    H = shifted.predict_cumulative_hazard_function(X[:20] + shift, return_array=True)
    assert_allclose(S, np.exp(-H), rtol=1e-12, atol=1e-300)
    assert_allclose(S, model.predict_survival_function(X[:20], return_array=True), atol=1e-3)
    times = model.unique_times_[::10]
    assert_allclose([f(times) for f in shifted.predict_survival_function(X[:3] + shift)],
                    [f(times) for f in model.predict_survival_function(X[:3])], atol=1e-3)


@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
@pytest.mark.parametrize("alpha, scale", [(0.0, 1.0), (1e-4, 100.0)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the underflow itself)
def test_cox_monotone_likelihood_fails_clearly(Est, alpha, scale):
    """A feature that orders the event times exactly: the coefficient grows without bound.

    Without the l2 term, or with the default one on a feature of scale 100 (the term is not
    scale-free), ``X coef_`` came to span more than about 700 and the Newton solve failed with
    LAPACK's "illegal value in 4-th argument of internal gelsd" (scikit-survival's
    ``CoxPHSurvivalAnalysis`` also raises there). Standardised, the default ``alpha`` keeps it finite.
    """
    from sksurv.util import Surv

    rng = np.random.RandomState(0)
    X = rng.standard_normal((30, 5))
    y = Surv.from_arrays(np.ones(30, bool), np.exp(-X[:, 0]))
    model = Est(k=1, alpha=alpha)
    with pytest.raises(ValueError, match="monotone likelihood.*Standardise the features"):
        model.fit(X * scale, y)
    assert not hasattr(model, "coef_")
    finite = Est(k=1).fit(X, y)
    assert_array_equal(finite.support_, [0]) and np.all(np.isfinite(finite.coef_))
    assert finite.score(X, y) == 1.0
