"""Splicing: the exchange search run after the sparse solvers (``splicing=True``)."""

import itertools
import warnings

import numpy as np
import pytest
from _problems import fig_1f_problem
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators import AcceleratedIHTRegressor, IHTClassifier, IHTRegressor, IOBSRegressor
from sparse_estimators.losses import LogisticLoss, MultinomialLoss, SquaredLoss
from sparse_estimators.solvers import splice
from sparse_estimators.solvers._splice import _explained, _least_cost


def _best_subset(X, y, k):
    """Brute force: the support of size k with the smallest least-squares residual (intercept fitted)."""
    Xc, yc = X - X.mean(0), y - y.mean()
    best, best_rss = None, np.inf
    for S in itertools.combinations(range(X.shape[1]), k):
        coef = np.linalg.lstsq(Xc[:, S], yc, rcond=None)[0]
        rss = float(np.sum((yc - Xc[:, S] @ coef) ** 2))
        if rss < best_rss:
            best, best_rss = np.array(S), rss
    return best


def _start_on(loss, support):
    W, b = loss.zeros()
    W[support] = 1.0
    return loss.refit(support, W, b)


@pytest.mark.parametrize("seed", range(5))
def test_finds_the_best_subset_from_a_wrong_start(seed):
    """From a support with no true feature, splicing reaches the brute-force best subset."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((40, 12))
    y = X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.1 * rng.standard_normal(40) + 3.0
    loss = SquaredLoss(X, y)
    W, b = _start_on(loss, np.array([9, 10, 11]))
    result = splice(loss, 3, W, b, screening_start=False)
    np.testing.assert_array_equal(result.support, _best_subset(X, y, 3))
    assert result.n_iter >= 1


def _losses(rng):
    X = rng.standard_normal((60, 40))
    z = X[:, :4] @ np.array([1.5, -1.0, 1.0, 0.8])
    yield SquaredLoss(X, z + rng.standard_normal(60))
    yield LogisticLoss(X, (rng.uniform(size=60) < 1 / (1 + np.exp(-z))).astype(int)[:, None], None, True, 1e-4)
    labels = np.digitize(z + 0.5 * rng.standard_normal(60), [-0.5, 0.5])
    yield MultinomialLoss(X, labels, 3, None, True, 1e-4)


@pytest.mark.parametrize("seed", range(3))
def test_never_increases_the_loss(seed):
    """Every accepted exchange lowers the refitted loss; the result keeps exactly k features."""
    rng = np.random.RandomState(seed)
    for loss in _losses(rng):
        start = rng.choice(40, 4, replace=False)
        W, b = _start_on(loss, start)
        f_start = loss.value(W, b)
        result = splice(loss, 4, W, b, gate=0.0)
        f = loss.value(result.coef, result.intercept)
        assert result.support.size == 4
        assert f <= f_start + 1e-12
        assert np.all(np.diff([f_start] + list(result.objective)) < 0) or result.n_iter == 0
        assert len(result.objective) == result.n_iter


def test_gate_refuses_exchanges_that_fit_noise():
    """On pure noise every support is as good as any other. gate=1 is the risk-inflation
    criterion (an exchange must cut the residual sum of squares by 2 log(p) noise variances
    per feature): it refuses nearly all the exchanges that gate=0 (plain abess splicing)
    accepts; a huge gate refuses all. (The default 0.25 is a compromise chosen on the peer
    benchmark and refuses fewer: 20 of 29 here.)"""
    accepted = {0.0: 0, 1.0: 0}
    for seed in range(10):
        rng = np.random.RandomState(seed)
        X, y = rng.standard_normal((50, 200)), rng.standard_normal(50)
        loss = SquaredLoss(X, y)
        W, b = _start_on(loss, np.arange(5))
        for gate in accepted:
            accepted[gate] += splice(loss, 5, W, b, gate=gate, screening_start=False).n_iter
        frozen = splice(loss, 5, W, b, gate=1e6)
        np.testing.assert_array_equal(frozen.support, np.arange(5))
        assert frozen.n_iter == 0
    assert accepted[0.0] >= 10 and accepted[1.0] <= accepted[0.0] / 10, accepted


def test_add_gate_refuses_exchanges_that_fit_noise_in_the_logistic_loss():
    """Labels independent of X: every exchange that lowers the deviance fits noise.
    Plain splicing (gate=0) accepts many; add_gate=1 (each added feature must be as
    significant as the best of p noise features typically is) refuses nearly all."""
    accepted = {0.0: 0, 1.0: 0}
    for seed in range(10):
        rng = np.random.RandomState(seed)
        X, y = rng.standard_normal((200, 200)), rng.randint(0, 2, 200)
        loss = LogisticLoss(X, y[:, None], None, True, 1e-4)
        W, b = _start_on(loss, np.arange(5))
        for add_gate in accepted:
            accepted[add_gate] += splice(loss, 5, W, b, gate=0.0, add_gate=add_gate, screening_start=False).n_iter
    assert accepted[0.0] >= 10 and accepted[1.0] <= accepted[0.0] / 10, accepted


@pytest.mark.parametrize("seed", range(5))
def test_add_gate_still_swaps_noise_for_strong_features(seed):
    """From a support holding two noise features in place of two true ones, the gated
    search (the classifiers' setting) exchanges them for the true ones."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((300, 100))
    z = X[:, :4] @ np.array([1.5, -1.5, 1.2, 1.0])
    y = (rng.uniform(size=300) < 1 / (1 + np.exp(-z))).astype(int)
    loss = LogisticLoss(X, y[:, None], None, True, 1e-4)
    W, b = _start_on(loss, np.array([0, 1, 50, 60]))
    result = splice(loss, 4, W, b, gate=0.0, add_gate=1.0, screening_start=False)
    np.testing.assert_array_equal(result.support, np.arange(4))


def test_classifier_splicing_auto_follows_the_sample_size():
    """splicing='auto' (the classifiers' default) splices only when n > 2 k log(p - k):
    below, it is splicing=False; above, splicing=True."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 200))
    z = X[:, [0, 40, 80, 120, 160]] @ np.array([1.5, -1.5, 1.2, 1.0, 0.8])
    y = (rng.uniform(size=300) < 1 / (1 + np.exp(-z))).astype(int)
    k = 5
    for n in (50, 300):  # 2 k log(p - k) = 52.7
        auto = IHTClassifier(k=k).fit(X[:n], y[:n])
        same = IHTClassifier(k=k, splicing=n > 2 * k * np.log(200 - k)).fit(X[:n], y[:n])
        np.testing.assert_array_equal(auto.coef_, same.coef_)
        assert auto.n_exchanges_ == same.n_exchanges_
    assert IHTClassifier(k=k, splicing=False).fit(X[:50], y[:50]).n_exchanges_ == 0


def test_estimator_splicing_recovers_where_the_solver_stalls():
    """Paper 000's Fig. 1(f) problem (100 x 800, k* = 22, noiseless): IHT's fixed points
    miss the support in half of the draws; spliced, it recovers at least 2 more."""
    wins = {False: 0, True: 0}
    for seed in range(8):
        A, b, S = fig_1f_problem(seed)
        fits = {}
        for splicing in wins:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fits[splicing] = IHTRegressor(k=22, max_iter=240, splicing=splicing).fit(A, b)
            wins[splicing] += np.array_equal(fits[splicing].support_, S)
        assert fits[False].n_exchanges_ == 0
    assert wins[True] >= wins[False] + 2, wins


def _correlated_logistic(seed):
    """300 x 60 logistic design, neighbouring columns correlated (0.5), 5 true features."""
    rng = np.random.RandomState(seed)
    Z = rng.standard_normal((300, 61))
    X = 0.7 * Z[:, 1:] + 0.7 * Z[:, :-1]
    w = np.zeros(60)
    w[[3, 17, 30, 44, 52]] = [1.0, -1.0, 0.8, -0.7, 0.6]
    return X, (rng.rand(300) < 1 / (1 + np.exp(-X @ w))).astype(int)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_weights_normalised_to_one_splice_like_no_weights(task):
    """Splicing's thresholds count observations, not weight: weights 1/n act like none.

    As frequency weights they would stand for a single observation, and every
    exchange would fail the significance gates (the spliced supports below
    need at least one exchange).
    """
    if task == "regression":
        X, y, _ = fig_1f_problem(0)
        make = lambda: IHTRegressor(k=22, max_iter=240)  # noqa: E731
    else:
        X, y = _correlated_logistic(0)
        make = lambda: IHTClassifier(k=5)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = make().fit(X, y)
        weighted = make().fit(X, y, sample_weight=np.full(len(y), 1.0 / len(y)))
    assert plain.n_exchanges_ >= 1
    assert weighted.n_exchanges_ == plain.n_exchanges_
    np.testing.assert_array_equal(weighted.support_, plain.support_)
    np.testing.assert_allclose(weighted.coef_, plain.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("Estimator", [IHTRegressor, AcceleratedIHTRegressor, IOBSRegressor])
def test_splicing_switches(Estimator):
    """splicing=False keeps the solver's support; debias=False turns splicing off too."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 300))
    y = X[:, [0, 50, 100, 150, 200]].sum(1) + rng.standard_normal(100)
    plain = Estimator(k=5, splicing=False).fit(X, y)
    raw = Estimator(k=5, debias=False).fit(X, y)
    assert plain.n_exchanges_ == 0 and raw.n_exchanges_ == 0
    np.testing.assert_array_equal(raw.support_, plain.support_)
    spliced = Estimator(k=5).fit(X, y)
    assert spliced.support_.size == 5
    residual = lambda m: np.mean((y - m.predict(X)) ** 2)  # noqa: E731
    assert residual(spliced) <= residual(plain) + 1e-12


def test_fewer_than_k_features_are_left_alone():
    """A solution with fewer than k features (soft thresholding on few signals) is refitted, not spliced."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 30))
    y = 3 * X[:, 0] + 0.01 * rng.standard_normal(80)
    loss = SquaredLoss(X, y)
    W, b = _start_on(loss, np.array([0]))
    result = splice(loss, 4, W, b)
    np.testing.assert_array_equal(result.support, [0])
    assert result.n_iter == 0


def test_classifier_splicing_never_worse_in_training_loss():
    """For the logistic loss the spliced fit's training log-loss is at most the plain refit's."""
    from sklearn.metrics import log_loss

    rng = np.random.RandomState(3)
    X = rng.standard_normal((150, 400))
    z = X[:, [3, 30, 300]] @ np.array([2.0, -2.0, 1.5])
    y = (rng.uniform(size=150) < 1 / (1 + np.exp(-z))).astype(int)
    plain = IHTClassifier(k=3, splicing=False).fit(X, y)
    spliced = IHTClassifier(k=3, splicing=True).fit(X, y)
    assert log_loss(y, spliced.predict_proba(X)) <= log_loss(y, plain.predict_proba(X)) + 1e-9


def test_a_search_joining_an_earlier_path_ends_where_it_did():
    """The search from a support depends only on the support: from any support an earlier
    search passed through it ends at that search's result, so the second start stops there."""
    from sparse_estimators.solvers._splice import _exchange

    rng = np.random.RandomState(2)  # weak signal: several local optima of the exchange search
    X = rng.standard_normal((40, 30))
    y = X[:, [0, 5, 9, 14]] @ np.array([1.0, -0.8, 0.6, 0.7]) + rng.standard_normal(40)
    loss = SquaredLoss(X, y)
    h = loss.coordinate_curvatures()
    options = (h, h > 0, np.log(30) / 40, 5, 20, 0.25, 0.0)

    def search(support, known=frozenset()):
        W, b = _start_on(loss, support)
        return _exchange(loss, 4, support, W, b, loss.value(W, b), loss.linear_predictor(W, b), *options,
                         known=known)[:2]

    first, visited = search(np.array([20, 21, 22, 23]))
    assert first.n_iter >= 2 and len(visited) == first.n_iter + 1
    path = [np.frombuffer(key, dtype=np.intp) for key in visited]
    for support in path:
        again, _ = search(support)
        np.testing.assert_array_equal(again.support, first.support)
        assert again.objective[-1] == pytest.approx(first.objective[-1], rel=1e-12)
        assert search(support, known=visited)[0] is None
    # other starts stop exactly when their own search would cross the path
    outcomes = set()
    for seed in range(12):
        start = np.sort(np.random.RandomState(seed).choice(30, 4, replace=False))
        alone, own = search(start)
        joined = search(start, known=visited)[0]
        crosses = bool(own & visited)
        assert (joined is None) == crosses
        if not crosses:
            np.testing.assert_array_equal(joined.support, alone.support)
        outcomes.add(crosses)
    assert outcomes == {True, False}


def _ar1_regression(n, p, s, rho, snr, seed):
    """Rows N(0, Sigma) with Sigma_ij = rho^|i-j|, s unit coefficients spread evenly, the given SNR."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    for j in range(1, p):  # AR(1) columns
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * X[:, j]
    beta = np.zeros(p)
    beta[np.linspace(0, p - 1, s).astype(int)] = 1.0
    signal = X @ beta
    return X, signal + np.sqrt(signal.var() / snr) * rng.standard_normal(n)


@pytest.mark.parametrize(("n", "p", "s"), [(60, 300, 5), (100, 1000, 10), (200, 120, 5)])
def test_important_search_is_abess(n, p, s):
    """screening_start='abess' runs abess's own search (0.4's important search, its
    threshold and exchange order): from the same screening start it ends on the support
    abess.linear.LinearRegression(support_size=[s]) returns, on every design tried. abess's
    threshold is in absolute units, ours in y's variance (SquaredLoss.value_unit): abess
    fits y over its standard deviation, on which the two make the same decisions."""
    abess = pytest.importorskip("abess")
    from sparse_estimators.solvers._splice import _forward_gain, _top
    from sparse_estimators.solvers._splice_abess import _important_search

    for seed, (rho, snr) in enumerate(itertools.product((0.0, 0.35, 0.7), (0.5, 3.0))):
        X, y = _ar1_regression(n, p, s, rho, snr, seed)
        loss = SquaredLoss(X, y)
        W0, b0 = loss.zeros()
        h = loss.coordinate_curvatures()
        start = np.sort(_top(_forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, h > 0), s))
        ours = _important_search(loss, s, start, W0, b0, h, h > 0, 5, 20)
        theirs = abess.linear.LinearRegression(support_size=[s], thread=1).fit(X, y / y.std())
        np.testing.assert_array_equal(ours.support, np.flatnonzero(theirs.coef_))
        assert np.all(np.diff(ours.objective) < 0)  # every accepted exchange lowers the loss


def test_screening_start_abess_is_kept_only_when_clearly_better():
    """The regressors' second search (abess's rules): the spliced support's loss is at most
    the first search's alone, and the result is one of the two searches' supports."""
    X, y = _ar1_regression(100, 1000, 10, 0.35, 3.0, 11)
    loss = SquaredLoss(X, y)
    fit = IHTRegressor(k=10, splicing=False).fit(X, y)
    W, b = fit.coef_[:, None].copy(), np.zeros(1)
    first = splice(loss, 10, W, b, screening_start=False)
    both = splice(loss, 10, W, b, screening_start="abess")
    assert loss.value(both.coef, both.intercept) <= loss.value(first.coef, first.intercept) + 1e-12
    from sparse_estimators.solvers._splice import _forward_gain, _top
    from sparse_estimators.solvers._splice_abess import _important_search

    W0, b0 = loss.zeros()
    h = loss.coordinate_curvatures()
    start = np.sort(_top(_forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, h > 0), 10))
    other = _important_search(loss, 10, start, W0, b0, h, h > 0, 5, 20)
    assert any(np.array_equal(both.support, r.support) for r in (first, other))


def test_switch_gate_decides_between_the_two_searches():
    """switch_gate sets how much lower the second search's loss must be to replace the first's:
    at 0 the lower of the two wins, at a large value the first search's result stays, and None
    is the exchange gate."""
    X, y = _ar1_regression(200, 300, 8, 0.0, 0.5, 4)
    loss = SquaredLoss(X, y)
    fit = IHTRegressor(k=8, splicing=False).fit(X, y)
    W, b = fit.coef_[:, None].copy(), np.zeros(1)
    first = splice(loss, 8, W, b, screening_start=False)
    f_first = loss.value(first.coef, first.intercept)
    lowest = splice(loss, 8, W, b, screening_start="abess", switch_gate=0.0)
    assert not np.array_equal(lowest.support, first.support)  # the two searches end apart here
    assert loss.value(lowest.coef, lowest.intercept) < f_first
    kept = splice(loss, 8, W, b, screening_start="abess", switch_gate=100.0)
    np.testing.assert_array_equal(kept.support, first.support)
    np.testing.assert_allclose(loss.value(kept.coef, kept.intercept), f_first, rtol=1e-10)
    for gate in (0.0, 100.0):
        default = splice(loss, 8, W, b, screening_start="abess", gate=gate)
        explicit = splice(loss, 8, W, b, screening_start="abess", gate=gate, switch_gate=gate)
        np.testing.assert_array_equal(default.support, explicit.support)
    # the regressors: the exchange gate with few observations per k log(p - k), 0.1 with more
    rng = np.random.RandomState(0)
    for n, gate in ((100, None), (500, 0.1)):
        wide = SquaredLoss(rng.standard_normal((n, 1000)), rng.standard_normal(n))
        assert IHTRegressor(k=10)._splice_kwargs(wide, 10).get("switch_gate") == gate
        assert IHTClassifier(k=10)._splice_kwargs(wide, 10).get("switch_gate") is None  # classifiers: gate


def test_screening_start_values_are_checked():
    X, y = _ar1_regression(40, 30, 3, 0.0, 3.0, 0)
    loss = SquaredLoss(X, y)
    W, b = _start_on(loss, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="screening_start"):
        splice(loss, 3, W, b, screening_start="abbess")


def _moderate_fifth_feature(correlated):
    """Logistic labels from four strong features and a moderate fifth (feature 4), n = 1000, p = 50.

    With ``correlated``, feature 49 is 0.9 feature 0 plus independent noise
    (correlation 0.9), so that the kept feature 0 explains most of it.
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((1000, 50))
    if correlated:
        X[:, 49] = 0.9 * X[:, 0] + np.sqrt(1 - 0.81) * X[:, 49]
    z = X[:, :5] @ np.array([1.0, -1.0, 1.0, -1.0, 0.17])
    y = (rng.uniform(size=1000) < 1 / (1 + np.exp(-z))).astype(int)
    return LogisticLoss(X, y[:, None], None, True, 1e-4)


def test_add_gate_uncorrelated_lets_in_a_moderate_feature_for_an_unexplained_one():
    """From the support {0, 1, 2, 3, 49}, the exchange 49 -> 4 adds a feature whose
    significance is between half and all of the risk-inflation level (checked below).
    add_gate=1 refuses it. With add_gate_uncorrelated=0.5 it is accepted when feature 49
    is independent of the kept features, and still refused when the kept feature 0
    explains 81 % of it, although plain add_gate=0.5 would accept that one too."""
    start = np.r_[0:4, 49]
    for correlated in (False, True):
        loss = _moderate_fifth_feature(correlated)
        W_true, b_true = _start_on(loss, np.arange(5))
        significance = _least_cost(loss, [4], W_true, loss.linear_predictor(W_true, b_true)) / (np.log(50) / 1000)
        assert 0.5 < significance < 1.0  # the precondition: feature 4 is between the two levels
        W, b = _start_on(loss, start)

        def support(loss=loss, W=W, b=b, **options):
            return splice(loss, 5, W, b, gate=0.0, screening_start=False, **options).support

        np.testing.assert_array_equal(support(add_gate=1.0), start)
        np.testing.assert_array_equal(support(add_gate=0.5), np.arange(5))
        relaxed = support(add_gate=1.0, add_gate_uncorrelated=0.5)
        np.testing.assert_array_equal(relaxed, start if correlated else np.arange(5))


@pytest.mark.parametrize("weighted", [False, True])
def test_explained_share_is_the_r2_on_the_other_features(weighted):
    """For least squares the share of a removed feature's curvature that the rest of the
    support explains is its (weighted, centred) R^2 on the other features, here from
    scikit-learn's LinearRegression; for the logistic loss it is the R^2 of the regression
    weighted by the Hessian weights p (1 - p) with the intercept among the regressors,
    its total sum of squares about the sample-weighted mean (the loss centres X there, and
    the intercept is a variable of the fit)."""
    from sklearn.linear_model import LinearRegression

    rng = np.random.RandomState(1)
    X = rng.standard_normal((80, 6))
    X[:, 5] += 0.8 * X[:, 0] - 0.5 * X[:, 2]
    sw = rng.uniform(0.5, 2.0, 80) if weighted else np.ones(80)
    support, removed = np.array([0, 2, 3, 5]), np.array([3, 5])
    rest = np.array([0, 2])

    def r2(target, weights, centre):
        model = LinearRegression().fit(X[:, rest], target, sample_weight=weights)
        rss = np.sum(weights * (target - model.predict(X[:, rest])) ** 2)
        return 1 - rss / np.sum(weights * (target - centre) ** 2)

    loss = SquaredLoss(X, X[:, 1], sample_weight=sw)
    share = _explained(loss.restrict(support).hessian(), 1, np.searchsorted(support, removed))
    np.testing.assert_allclose(share, [r2(X[:, j], sw, np.average(X[:, j], weights=sw)) for j in removed],
                               rtol=1e-10)

    y = (X[:, 1] > 0).astype(int)
    loss = LogisticLoss(X, y[:, None], sw, True, 0.0)
    W, b = _start_on(loss, support)
    prob = 1 / (1 + np.exp(-loss.linear_predictor(W, b)[:, 0]))
    weights = sw * prob * (1 - prob)
    share = _explained(loss.restrict(support).hessian(W[support], b), 1, np.searchsorted(support, removed))
    np.testing.assert_allclose(share, [r2(X[:, j], weights, np.average(X[:, j], weights=sw)) for j in removed],
                               rtol=1e-8)


def test_explained_share_in_the_multinomial_loss():
    """The multinomial Hessian is singular (adding a constant to a feature's coefficients in
    every class changes nothing): a feature duplicated in the support is fully explained, an
    independent one hardly at all."""
    rng = np.random.RandomState(2)
    X = rng.standard_normal((300, 5))
    X[:, 4] = X[:, 1]
    labels = np.digitize(X[:, 0] + 0.5 * rng.standard_normal(300), [-0.5, 0.5])
    loss = MultinomialLoss(X, labels, 3, None, True, 0.0)
    support = np.array([0, 1, 3, 4])
    W, b = _start_on(loss, support)
    H = loss.restrict(support).hessian(W[support], b)
    share = _explained(H, 3, np.array([3]))  # feature 4, a copy of the kept feature 1
    np.testing.assert_allclose(share, [1.0], atol=1e-8)
    share = _explained(H, 3, np.array([2]))  # feature 3, independent of 0, 1 (and 4)
    assert 0.0 <= share[0] < 0.05


def _abess_start(X, y, k):
    """A squared loss on (X, y), its curvatures, usable columns, zero point, marginal gains there and abess's
    start (the k largest gains)."""
    from sparse_estimators.solvers._splice import _forward_gain, _top

    loss = SquaredLoss(X, y)
    h = loss.coordinate_curvatures()
    usable = h > 0
    W0, b0 = loss.zeros()
    gain = _forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, usable)
    return loss, h, usable, W0, b0, gain, np.sort(_top(gain, k))


@pytest.mark.parametrize("p", [60, 300])
def test_abess_search_is_skipped_only_where_it_would_not_move(p):
    """The certificate that abess's search from the first search's support would accept nothing
    (``_abess_search_stays``, which skips that search) holds only where the search itself returns
    its start unchanged; on weak signals it holds in some data sets and not in others."""
    from sparse_estimators.solvers._splice import _exchange
    from sparse_estimators.solvers._splice_abess import _abess_search_stays, _important_search

    k, n = 5, 120
    outcomes = []
    for seed in range(30):
        rng = np.random.RandomState(seed)
        X = rng.standard_normal((n, p))
        y = X[:, :k] @ rng.uniform(0.1, 0.5, k) + rng.standard_normal(n)
        loss, h, usable, W0, b0, gain, start = _abess_start(X, y, k)
        W, b = loss.refit(start, W0, b0)
        options = (h, usable, loss.n_outputs * np.log(p) / n, 5, 20, 0.25, 0.0)
        first, _, last = _exchange(loss, k, start, W, b, loss.value(W, b), loss.linear_predictor(W, b), *options)
        stays = _abess_search_stays(loss, k, start, first.support, last, gain, usable, 5)
        other = _important_search(loss, k, start, W0, b0, h, usable, 5, 20, gain=gain)
        moved = other.n_iter > 0 or not np.array_equal(other.support, start)
        if stays:
            assert not moved, seed
        outcomes.append((stays, moved))
    assert (True, False) in outcomes and (False, True) in outcomes


def test_abess_search_over_every_feature_makes_one_gradient_pass_per_round(monkeypatch):
    # with p <= k + 128 abess's set U holds every feature: the gains that would rebuild it are not computed,
    # so each round's ranking is the search's only pass over X^T (the search still moves and ends the same)
    from sparse_estimators.solvers import _splice_abess
    from sparse_estimators.solvers._splice_abess import _important_search

    k, n, p = 5, 120, 60
    moved = 0
    for seed in range(6):
        rng = np.random.RandomState(seed)
        X = rng.standard_normal((n, p))
        X[:, 1::2] += 0.9 * X[:, 0::2]
        y = X[:, :k] @ rng.uniform(0.3, 0.6, k) + rng.standard_normal(n)
        loss, h, usable, W0, b0, gain, start = _abess_start(X, y, k)
        passes, rounds = [], []
        rmatvec, ranked = loss.design.rmatvec, _splice_abess._ranked
        monkeypatch.setattr(loss.design, "rmatvec", lambda R, _f=rmatvec, _c=passes: _c.append(1) or _f(R))
        monkeypatch.setattr(_splice_abess, "_ranked",
                            lambda *a, _f=ranked, _c=rounds, **kw: _c.append(1) or _f(*a, **kw))
        result = _important_search(loss, k, start, W0, b0, h, usable, 5, 20, gain=gain)
        monkeypatch.undo()
        moved += result.n_iter > 0
        assert len(passes) == len(rounds)
    assert moved >= 2


def test_a_single_exchange_above_the_add_gate_is_accepted_where_the_quadratic_cost_is_below_it():
    """Multinomial fit of load_digits (61 standardized pixels, 10 classes), k = 10, on the training
    rows of a shuffled 5-fold split: from the support below (where the classifiers' search stopped
    before), a single exchange lowers the penalised log-loss by more than add_gate = 1 unit
    (m log(p) / N, m = 9), checked with scikit-learn's refits, while the quadratic estimate of the
    added feature's removal cost falls below 1 unit (the Hauck-Donner effect). Removing the one
    added feature leaves 9 of the start's features, so its exact cost is at least the decrease:
    the exchange must be accepted (the search's first round leaves the start, to a loss lower by > 1 unit)."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    X, y = load_digits(return_X_y=True)
    X = X[:, X.std(axis=0) > 0]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    train = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[1][0]
    X, y = X[train], y[train]
    alpha, N = 1e-4, X.shape[0]
    loss = MultinomialLoss(X, y, 10, None, True, alpha)
    unit = 9 * np.log(X.shape[1]) / N
    start = np.array([19, 20, 25, 27, 31, 32, 34, 39, 40, 57])

    def objective(S):  # scikit-learn's refit: the mean log-loss plus alpha / 2 ||W||^2 (C = 1 / (N alpha))
        model = LogisticRegression(C=1.0 / (N * alpha), max_iter=10000).fit(X[:, S], y)  # (1e-4 of a unit close)
        P = model.predict_proba(X[:, S])
        return -np.mean(np.log(P[np.arange(N), y])) + 0.5 * alpha * np.sum(model.coef_ ** 2)

    W, b = _start_on(loss, start)
    result = splice(loss, 10, W, b, gate=0.0, add_gate=1.0, add_gate_uncorrelated=0.5, screening_start=False,
                    max_rounds=1)
    assert not np.array_equal(np.sort(result.support), start)
    assert objective(start) - objective(np.sort(result.support)) > unit
    added = np.setdiff1d(result.support, start)  # the precondition: its quadratic cost is below the gate
    W_c, b_c = _start_on(loss, np.sort(result.support))
    assert added.size == 1 and _least_cost(loss, added, W_c, loss.linear_predictor(W_c, b_c)) < unit
