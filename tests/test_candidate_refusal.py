"""The logistic splicing search stops the refits of candidates that cannot pass (REJECT_DECREMENTS)."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.special import expit

import sparse_estimators.losses._pointwise_newton as pointwise_newton
from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.losses import LogisticLoss


def logistic_data(n, p, support, seed, rho=0.5):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[:, 1:] = rho * X[:, :-1] + np.sqrt(1 - rho ** 2) * X[:, 1:]  # (neighbours correlated: exchanges happen)
    coef = np.zeros(p)
    coef[list(support)] = rng.choice([-1.0, 1.0], len(support)) * rng.uniform(0.5, 1.5, len(support))
    y = (rng.uniform(size=n) < expit(X @ coef)).astype(int)
    return X, y


def count_solves(monkeypatch):
    calls = []
    solve = pointwise_newton.cholesky_solve

    def counted(H, g):
        calls.append(1)
        return solve(H, g)

    monkeypatch.setattr(pointwise_newton, "cholesky_solve", counted)
    return calls


@pytest.mark.parametrize("n, p, k", [(200, 60, 5), (100, 300, 8)])
def test_refusals_keep_every_fit_and_save_newton_steps(n, p, k, monkeypatch):
    # the fits with the refusals are bit for bit those refitting every candidate to its end, in fewer steps
    calls = count_solves(monkeypatch)
    steps = _same_fits_with_and_without_refusals(
        monkeypatch, LogisticLoss, calls,
        lambda: [IHTClassifier(k=k, splicing=True).fit(*logistic_data(n, p, range(0, 4 * k, 4), seed))
                 for seed in range(4)])
    assert steps[True] < 0.9 * steps[False]


def _same_fits_with_and_without_refusals(monkeypatch, loss_class, calls, fit_all):
    """The fits of ``fit_all()`` with ``loss_class``'s refusals and without, asserted bit for bit equal (and at
    least one exchange made); returns the number of ``calls`` (Newton solves) of each, keyed by refusals on."""
    fits, steps = {}, {}
    for rejects in (True, False):
        monkeypatch.setattr(loss_class, "rejects_candidates", rejects)
        calls.clear()
        fits[rejects] = fit_all()
        steps[rejects] = len(calls)
    for a, b in zip(fits[True], fits[False], strict=True):
        assert_array_equal(a.coef_, b.coef_)
        assert_array_equal(a.intercept_, b.intercept_)
        assert a.n_exchanges_ == b.n_exchanges_
    assert any(fit.n_exchanges_ for fit in fits[True])  # (accepted exchanges: their refits are kept too)
    return steps


def test_refused_candidate_resumes_to_the_same_refit():
    # a candidate refused under a limit (value inf) and read again without one ends where a refit without
    # limits ends, bit for bit: its stopped Newton iterations are resumed, not restarted
    X, y = logistic_data(300, 40, (3, 11, 25), seed=0)
    loss = LogisticLoss(X, y, alpha=1e-4)
    W, b = loss.refit(np.array([3, 11, 25]), *loss.zeros())
    f = loss.value(W, b)
    candidates = [np.array([1, 11, 25]), np.array([3, 11, 26]), np.array([1, 2, 25])]  # (losing 3 costs most)
    refused = loss.refit_candidates(candidates, W, b, limits=[f] * 3)
    values = [r[2] for r in refused]
    assert np.isinf(values[0]) and np.isinf(values[2])
    fresh = LogisticLoss(X, y, alpha=1e-4).refit_candidates(candidates, W, b)
    again = loss.refit_candidates(candidates, W, b)
    for value, (W_a, b_a, f_a, Z_a), (W_f, b_f, f_f, Z_f) in zip(values, again, fresh, strict=True):
        assert f_a == f_f
        if np.isinf(value):  # (refused: it could not get below the limit)
            assert f_f >= f
        assert_array_equal(W_a, W_f)
        assert_array_equal(b_a, b_f)
        assert_array_equal(Z_a, Z_f)


def ar1_regression(seed, n=300, p=300, k=15, rho=0.5, snr=2.0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * X[:, j]
    beta = np.zeros(p)
    beta[np.arange(0, p, p // k)[:k]] = 1.0
    y = X @ beta
    return X, y + np.sqrt(y.var() / snr) * rng.standard_normal(n)


def test_abess_search_stops_at_the_settled_support_within_a_partial_set(monkeypatch):
    # p > k + 128 (abess's set U holds only some features): where abess's search (the regressors' second) reaches
    # the support where the first search refused every exchange size, with those exchanges' added features in
    # its U, it stops there; the fits are those of running it to its end, for fewer candidate refits
    import sparse_estimators.solvers._splice_abess as abess_module
    from sparse_estimators.losses import SquaredLoss
    from sparse_estimators.losses._squared_search import LazyGramSquaredLoss

    refits = []
    refit_candidates, refit_support = SquaredLoss.refit_candidates, LazyGramSquaredLoss.refit_support

    def counted(self, supports, W, b):
        refits.append(len(supports))
        return refit_candidates(self, supports, W, b)

    def counted_one(self, support):  # (abess's search at small n refits its candidates one by one)
        refits.append(1)
        return refit_support(self, support)

    monkeypatch.setattr(SquaredLoss, "refit_candidates", counted)
    monkeypatch.setattr(LazyGramSquaredLoss, "refit_support", counted_one)
    stays = abess_module._abess_search_stays
    fits, counts = {}, {}
    for shortcut in (True, False):
        monkeypatch.setattr(abess_module, "_abess_search_stays",
                            lambda *a, on=shortcut, **kw: (on or not kw.get("every_size")) and stays(*a, **kw))
        refits.clear()
        fits[shortcut] = [IHTRegressor(k=15).fit(*ar1_regression(seed)) for seed in range(4)]
        counts[shortcut] = sum(refits)
    for a, b in zip(fits[True], fits[False], strict=True):
        assert_array_equal(a.coef_, b.coef_)
        assert_array_equal(a.intercept_, b.intercept_)
    assert counts[True] < counts[False]


def softmax_data(n, p, support, n_classes, seed, rho=0.5, scale=4.0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[:, 1:] = rho * X[:, :-1] + np.sqrt(1 - rho ** 2) * X[:, 1:]
    W = np.zeros((p, n_classes))
    W[list(support)] = rng.standard_normal((len(support), n_classes))
    Z = X @ W
    Z *= scale / Z.std()  # (large: nearly separable classes, long candidate refits)
    return X, np.argmax(Z + rng.gumbel(size=Z.shape), axis=1)


def count_softmax_steps(monkeypatch):
    import sparse_estimators.losses._softmax_newton as softmax_newton

    calls = []
    solve = softmax_newton.FrozenNewtonSolver.__call__

    def counted(self, H, g):
        calls.append(1)
        return solve(self, H, g)

    monkeypatch.setattr(softmax_newton.FrozenNewtonSolver, "__call__", counted)
    return calls


def test_multinomial_refusal_stops_a_losing_candidate_early(monkeypatch):
    # a candidate without the strongest feature cannot get below the current value: its Newton iterations stop
    # (value inf) in fewer steps; the other candidates' refits are those without limits, bit for bit
    from sparse_estimators.losses import MultinomialLoss

    X, y = softmax_data(300, 30, (3, 11, 25), 3, seed=0)
    support = np.array([3, 11, 25])
    loss = MultinomialLoss(X, y, 3)
    W, b = loss.refit(support, *loss.zeros())
    f = loss.value(W, b)
    strongest = support[np.argmax(np.linalg.norm(W[support], axis=1))]
    candidates = [np.sort(np.append(support[support != strongest], 0)), np.array([3, 11, 26]),
                  np.array([3, 12, 25])]
    calls = count_softmax_steps(monkeypatch)
    full = loss.refit_candidates(candidates, W, b)
    steps_full = len(calls)
    calls.clear()
    limits = [f - 1e-3] * 3
    stopped = loss.refit_candidates(candidates, W, b, limits=limits)
    assert full[0][2] > f + 0.05  # (losing the strongest feature costs far more than the limit allows)
    assert np.isinf(stopped[0][2])
    assert len(calls) < steps_full
    for (W_s, b_s, f_s, Z_s), (W_f, b_f, f_f, Z_f), limit in zip(stopped, full, limits, strict=True):
        if np.isinf(f_s):  # (refused: its refit to the end does not get below the limit)
            assert f_f > limit
        else:
            assert f_s == f_f
            assert_array_equal(W_s, W_f)
            assert_array_equal(b_s, b_f)
            assert_array_equal(Z_s, Z_f)


@pytest.mark.parametrize("n_classes", [3, 5])
def test_multinomial_refusals_keep_every_fit(n_classes, monkeypatch):
    # the multinomial fits with the refusals are bit for bit those refitting every candidate to its end
    from sparse_estimators.losses import MultinomialLoss

    calls = count_softmax_steps(monkeypatch)
    steps = _same_fits_with_and_without_refusals(
        monkeypatch, MultinomialLoss, calls,
        lambda: [IHTClassifier(k=5).fit(*softmax_data(200, 40, range(0, 20, 4), n_classes, seed))
                 for seed in range(3)])
    assert steps[True] < 0.85 * steps[False]
