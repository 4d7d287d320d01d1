"""Refits of the losses on a support.

Against scikit-learn's LinearRegression / LogisticRegression; restricted losses; candidate refits.
"""

import tracemalloc

import numpy as np
import pytest
from _loss_problems import (
    FORMATS,
    K,
    N,
    P,
    Problem,
    build,
    make_data,
    targets,
    to_format,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import softmax
from sklearn.linear_model import LinearRegression, LogisticRegression

from sparse_estimators.losses import (
    GramSquaredLoss,
    LogisticLoss,
    MultinomialLoss,
    SquaredLoss,
)


# --------------------------------------------------------------------------
# refit on a support
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("kind", ["squared", "squared2", "gram", "gram2"])
def test_squared_refit_matches_linear_regression(fmt, fit_intercept, weighted, kind):
    pb = Problem(kind, fmt, fit_intercept, weighted)
    S = np.array([0, 2, 3])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    assert W.shape == pb.W.shape
    assert np.all(W[[1, 4, 5]] == 0.0)
    lr = LinearRegression(fit_intercept=fit_intercept).fit(pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
    coef = lr.coef_.T if pb.y.ndim == 2 else lr.coef_[:, None]
    assert_allclose(W[S], coef, rtol=1e-8, atol=1e-10)
    lr_intercept = np.atleast_1d(lr.intercept_) if fit_intercept else np.zeros(pb.m)
    assert_allclose(pb.loss.intercept(W, b), lr_intercept, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("Loss", [SquaredLoss, GramSquaredLoss])
def test_squared_refit_nearly_collinear_columns(fmt, weighted, Loss):
    # a column equal to another one (the minimum-norm solution splits the
    # coefficient) and one nearly equal (R^2 = 1 - 1e-9: the normal
    # equations would lose most digits, the refit must not)
    X, ys, sw = make_data(3)
    y = ys["squared"]
    rng = np.random.RandomState(4)
    near = X[:, [2]] + 1e-4 * X[:, [2]].std() * rng.standard_normal((N, 1))
    Xx = np.hstack([X, X[:, [1]], near])
    loss = Loss(to_format(Xx, fmt), y, sample_weight=sw if weighted else None)
    W, _ = loss.refit(np.array([0, 1, P]), *loss.zeros())
    W1, _ = SquaredLoss(to_format(X, fmt), y, sample_weight=sw if weighted else None).refit(
        np.array([0, 1]), *loss.zeros())
    assert_allclose(W[[1, P], 0], [W1[1, 0] / 2] * 2, rtol=1e-8)
    assert_allclose(W[0, 0], W1[0, 0], rtol=1e-8)
    S = np.array([0, 2, P + 1])
    W, _ = loss.refit(S, *loss.zeros())
    lr = LinearRegression().fit(Xx[:, S], y, sample_weight=sw if weighted else None)
    assert_allclose(W[S, 0], lr.coef_, rtol=1e-6)


def test_squared_refit_empty_support():
    pb = Problem("squared", "csr")
    W, b = pb.loss.refit(np.array([], dtype=int), pb.W, pb.b)
    assert np.all(W == 0)
    assert_allclose(pb.loss.intercept(W, b), [np.average(pb.y, weights=pb.sw)], rtol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("kind", ["squared", "squared2", "gram", "gram2"])
def test_squared_refit_candidates_match_linear_regression(fmt, fit_intercept, weighted, kind):
    # the batched normal equations against one LinearRegression per candidate
    pb = Problem(kind, fmt, fit_intercept, weighted)
    supports = [np.array([0, 2, 3]), np.array([1, 2, 5]), np.array([0, 4, 5])]
    fits = pb.loss.refit_candidates(supports, pb.W, pb.b)
    assert len(fits) == 3
    for S, (W, b, value, Z) in zip(supports, fits, strict=True):
        assert_allclose(Z, pb.loss.linear_predictor(W, b), rtol=1e-10, atol=1e-10)
        assert np.all(np.delete(W, S, axis=0) == 0.0)
        lr = LinearRegression(fit_intercept=fit_intercept).fit(pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
        coef = lr.coef_.T if pb.y.ndim == 2 else lr.coef_[:, None]
        assert_allclose(W[S], coef, rtol=1e-8, atol=1e-10)
        residual = (pb.y - lr.predict(pb.Xd[:, S])).reshape(N, -1)
        expected = 0.5 * np.sum(pb.sw[:, None] * residual**2) / pb.sw.sum()
        assert value == pytest.approx(expected, rel=1e-10)


def test_squared_refit_candidates_equal_weights_are_no_weights():
    # equal weights take the unweighted products; the mean they define is the same
    pb = Problem("squared2")
    supports = [np.array([0, 2, 3]), np.array([1, 2, 5])]
    plain = SquaredLoss(pb.Xd, pb.y).refit_candidates(supports, pb.W, pb.b)
    weighted = SquaredLoss(pb.Xd, pb.y, sample_weight=np.full(N, 3.0)).refit_candidates(supports, pb.W, pb.b)
    assert SquaredLoss(pb.Xd, pb.y, sample_weight=np.full(N, 3.0)).uniform_weights
    assert not SquaredLoss(pb.Xd, pb.y, sample_weight=np.arange(1.0, N + 1)).uniform_weights
    for (W1, _, v1, Z1), (W2, _, v2, Z2) in zip(plain, weighted, strict=True):
        assert_allclose(W2, W1, rtol=1e-12, atol=1e-14)
        assert v2 == pytest.approx(v1, rel=1e-12)
        assert_allclose(Z2, Z1, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("Loss", [SquaredLoss, GramSquaredLoss])
def test_squared_refit_candidates_fall_back_on_singular_and_mixed_sizes(Loss):
    pb = Problem("squared")
    X = np.column_stack([pb.Xd, pb.Xd[:, 2]])  # column 6 duplicates column 2
    loss = Loss(X, pb.y, sample_weight=pb.sw)
    W, b = loss.zeros()
    for supports in ([np.array([1, 2, 6]), np.array([0, 1, 3])], [np.array([1, 2]), np.array([0, 1, 3])]):
        fits = loss.refit_candidates(supports, W, b)
        for S, (W_c, b_c, value, Z_c) in zip(supports, fits, strict=True):
            assert_allclose(Z_c, loss.linear_predictor(W_c, b_c), rtol=1e-10, atol=1e-10)
            lr = LinearRegression().fit(X[:, S], pb.y, sample_weight=pb.sw)
            residual = pb.y - lr.predict(X[:, S])
            assert value == pytest.approx(0.5 * np.average(residual**2, weights=pb.sw), rel=1e-8)
            # the minimum-norm solution: duplicated columns share their coefficient
            assert_allclose(W_c[S, 0], lr.coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["squared", "logistic_l2", "multinomial"])
def test_restrict_in_x_dtype_is_the_loss_on_those_columns(kind, fmt):
    """restrict(U, dtype=None) (the splicing search within U) keeps a float32 X in float32, and its
    values and gradients are the full loss's at coefficients that are zero outside U."""
    X, ys, sw = make_data(4)
    X32 = to_format(X.astype(np.float32), fmt)
    loss, _ = build(kind, X32, targets(kind, ys), sw, True)
    U = np.array([0, 2, 3, 5])
    sub = loss.restrict(U, dtype=None)
    assert sub.design.X.dtype == np.float32 and sub.n_features == U.size
    assert loss.restrict(U).design.X.dtype == np.float64  # the default: float64 columns for refits
    rng = np.random.RandomState(0)
    W, b = loss.zeros()
    W[U] = rng.standard_normal((U.size, loss.n_outputs))
    b += 0.3
    f, gW, _ = loss.value_and_gradient(W, b)
    f_sub, gW_sub, _ = sub.value_and_gradient(W[U], b)
    assert_allclose(f_sub, f, rtol=1e-6)
    assert_allclose(gW_sub, gW[U], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("weighted", [True, False])
def test_gram_restrict_is_the_loss_on_those_columns_without_copying_them(weighted):
    """GramSquaredLoss.restrict(U) (the splicing search within U): its values, gradients,
    refits and Hessian are the full loss's at coefficients zero outside U, and it copies
    none of X's columns (which SquaredLoss.restrict does)."""
    rng = np.random.RandomState(5)
    n, p = 20000, 60
    X = rng.standard_normal((n, p)) + 3.0
    y = X[:, [3, 10, 40]] @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(n)
    loss = GramSquaredLoss(X, y, sample_weight=rng.uniform(0.5, 2.0, n) if weighted else None)
    U = np.arange(0, p, 2)  # 30 columns: a copy would take 4.8 MB
    tracemalloc.start()
    sub = loss.restrict(U)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.5e6 < n * U.size * 8
    W, b = loss.zeros()
    W[U] = 0.2 * rng.standard_normal((U.size, 1))
    f, gW, _ = loss.value_and_gradient(W, b)
    f_sub, gW_sub, _ = sub.value_and_gradient(W[U], b)
    assert_allclose(f_sub, f, rtol=1e-12)
    assert_allclose(gW_sub, gW[U], rtol=1e-10, atol=1e-12)
    assert_allclose(sub.hessian(), loss.hessian()[np.ix_(U, U)], rtol=1e-12)
    S = np.array([1, 5, 20])  # positions in U: features U[S]
    W_sub, _ = sub.refit(S, W[U], b)
    W_full, _ = loss.refit(U[S], W, b)
    assert_allclose(W_sub, W_full[U], rtol=1e-10, atol=1e-12)
    (W_c, _, f_c, _), = sub.refit_candidates([S], W[U], b)
    assert_allclose(W_c, W_full[U], rtol=1e-10, atol=1e-12)
    assert f_c == pytest.approx(loss.value(W_full, b), rel=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
def test_gram_loss_keeps_precision_with_large_column_means(fmt):
    """The Gram matrix is formed from centered blocks: columns of mean 1e4 and unit spread
    give the same fit as without the offset (an uncentered X^T X would lose 8 digits)."""
    rng = np.random.RandomState(6)
    X = rng.standard_normal((500, 8))
    y = X @ rng.standard_normal(8) + 0.5 * rng.standard_normal(500)
    S = np.array([0, 3, 5])
    reference, _ = GramSquaredLoss(X, y).refit(S, *GramSquaredLoss(X, y).zeros())
    shifted = X.copy()
    shifted[:, S] += 1e4
    loss = GramSquaredLoss(to_format(shifted, fmt), y) if fmt == "dense" else None
    if loss is None:  # sparse X: the uncentered product is corrected (documented); only dense is claimed
        return
    W, _ = loss.refit(S, *loss.zeros())
    assert_allclose(W, reference, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["logistic_l2", "multinomial"])
def test_glm_refit_candidates_are_refits(kind):
    pb = Problem(kind)
    supports = [np.array([1, 2, 4]), np.array([0, 3, 5])]
    for S, (W, b, value, Z) in zip(supports, pb.loss.refit_candidates(supports, pb.W, pb.b), strict=True):
        assert_allclose(Z, pb.loss.linear_predictor(W, b), rtol=1e-12, atol=1e-12)
        start = np.where(np.isin(np.arange(P), S)[:, None], pb.W, 0.0)
        W_ref, b_ref = pb.loss.refit(S, start, pb.b)
        # candidates stop Newton's method early (precise=False): the value is
        # within 1e-12 of the minimum, the point within about its square root
        f_ref = pb.loss.value(W_ref, b_ref)
        assert f_ref - 1e-15 <= value <= f_ref * (1 + 1e-12)
        assert_allclose(W, W_ref, atol=1e-5)
        assert_allclose(b, b_ref, atol=1e-5)
        assert np.all(W[np.setdiff1d(np.arange(P), S)] == 0.0)


@pytest.mark.parametrize("kind", ["logistic", "multinomial"])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_glm_imprecise_refit_is_near_the_minimum_for_fewer_hessians(kind, fmt, monkeypatch):
    # precise=False (the splicing candidates) stops Newton's method after the
    # full step that follows a decrement of 1e-6: the value is within 1e-12 of
    # the minimum's, and it takes fewer Hessians than iterating to rounding
    import sparse_estimators.losses._base as base_module
    import sparse_estimators.losses._logistic as logistic_module

    calls = []
    original = base_module.newton_minimise

    def counting(fun, hessian, theta, **kwargs):
        def counted(t):
            calls[-1] += 1
            return hessian(t)
        calls.append(0)
        return original(fun, counted, theta, **kwargs)

    monkeypatch.setattr(base_module, "newton_minimise", counting)
    monkeypatch.setattr(logistic_module, "newton_minimise", counting)
    pb = Problem(kind, fmt)
    S = np.array([0, 2, 3, 5])
    start = np.zeros_like(pb.W)
    W_p, b_p = pb.loss.refit(S, start, pb.b)
    W_i, b_i = pb.loss.refit(S, start, pb.b, precise=False)
    precise_hessians, imprecise_hessians = calls
    f_p, f_i = pb.loss.value(W_p, b_p), pb.loss.value(W_i, b_i)
    assert f_p - 1e-15 <= f_i <= f_p * (1 + 1e-12)
    assert imprecise_hessians < precise_hessians
    assert_allclose(W_i, W_p, atol=1e-5)


@pytest.mark.parametrize("kind", ["squared", "logistic", "multinomial"])
def test_n_observations(kind):
    """Frequency weights count their sum, relative weights the rows of positive weight."""
    X, ys, _ = make_data()
    y = ys[kind]

    def n_obs(sw):
        return build(kind, X, y, sw, True)[0].n_observations

    assert n_obs(None) == N
    integer = np.r_[np.zeros(4), np.full(N - 4, 3.0)]  # zeros drop rows, 3 repeats them
    assert n_obs(integer) == 3.0 * (N - 4)
    assert n_obs(integer / integer.sum()) == N - 4  # normalised to sum 1: the 36 rows
    assert n_obs(np.full(N, 0.5)) == N


GLM_KINDS = ["logistic", "logistic_l2", "multinomial", "multinomial_l2"]


@pytest.mark.parametrize("kind", GLM_KINDS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_glm_refit_zero_restricted_gradient(kind, fmt, fit_intercept, weighted):
    pb = Problem(kind, fmt, fit_intercept, weighted)
    S = np.array([1, 2, 4])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    assert W.shape == pb.W.shape and b.shape == pb.b.shape
    assert np.all(W[[0, 3, 5]] == 0.0)
    _, gW, gb = pb.loss.value_and_gradient(W, b)
    assert np.max(np.abs(gW[S])) < 1e-8
    if fit_intercept:
        assert np.max(np.abs(gb)) < 1e-8
    else:
        assert_array_equal(b, pb.b)  # not a variable: returned untouched
    # and it is a minimum on the support: better than the start
    assert pb.loss.value(W, b) < pb.loss.value(np.where(np.isin(np.arange(P), S)[:, None], pb.W, 0), pb.b)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_logistic_refit_matches_sklearn_with_l2(fmt, fit_intercept, weighted):
    # ours:    sum_i s_i l_i / S + alpha/2 ||w||^2
    # sklearn: C sum_i s_i l_i + 1/2 ||w||^2, the same minimiser when C = 1 / (alpha S)
    pb = Problem("logistic_l2", fmt, fit_intercept, weighted)
    S = np.array([0, 3, 5])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    C = 1.0 / (pb.alpha * pb.sw.sum())
    clf = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000,
                             fit_intercept=fit_intercept).fit(pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
    assert_allclose(W[S, 0], clf.coef_[0], rtol=0, atol=1e-5)
    if fit_intercept:
        assert_allclose(pb.loss.intercept(W, b), clf.intercept_, rtol=0, atol=1e-5)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [True, False])
def test_multinomial_refit_matches_sklearn_with_l2(fmt, weighted):
    pb = Problem("multinomial_l2", fmt, True, weighted)
    S = np.array([0, 1, 4])
    W, b = pb.loss.refit(S, pb.W, pb.b)
    C = 1.0 / (pb.alpha * pb.sw.sum())
    clf = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(
        pb.Xd[:, S], pb.y, sample_weight=pb.sw_arg)
    assert_allclose(W[S], clf.coef_.T, rtol=0, atol=1e-5)
    assert_allclose(pb.loss.intercept(W, b), clf.intercept_ - clf.intercept_.mean(), rtol=0, atol=1e-5)


def test_multinomial_refit_is_unique():
    X, ys, _ = make_data(1)
    y = ys["multinomial"]
    rng = np.random.RandomState(11)
    counts = rng.randint(0, 4, size=N)
    rows = np.repeat(np.arange(N), counts)
    W = 0.3 * rng.standard_normal((P, K))
    b = 0.5 * rng.standard_normal(K)
    for fit_intercept in [True, False]:
        for S in [np.array([0, 2, 5]), np.array([1, 3, 4])]:
            fits = []
            for fmt in FORMATS:
                for loss in [MultinomialLoss(to_format(X, fmt), y, K, sample_weight=counts.astype(float),
                                             fit_intercept=fit_intercept),
                             MultinomialLoss(to_format(X[rows], fmt), y[rows], K, fit_intercept=fit_intercept)]:
                    fits.append(loss.refit(S, W, b)[0])
            for other in fits[1:]:
                assert_allclose(other, fits[0], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("kind", ["logistic", "multinomial"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_glm_refit_empty_support_is_intercept_only_model(kind, fmt):
    pb = Problem(kind, fmt)
    W, b = pb.loss.refit(np.array([], dtype=int), pb.W, pb.b)
    assert np.all(W == 0)
    freq = np.array([np.average(pb.y == c, weights=pb.sw) for c in range(pb.m if kind == "multinomial" else 2)])
    if kind == "logistic":
        assert_allclose(b, [np.log(freq[1] / freq[0])], rtol=1e-8)
    else:
        assert_allclose(softmax(b), freq, rtol=1e-8)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_logistic_refit_duplicated_column_splits_the_coefficient(fmt, fit_intercept):
    # a singular Hessian (two equal columns): the minimum-norm Newton step
    # gives each copy half of the coefficient of the column fitted alone
    X, ys, sw = make_data(2)
    y = ys["logistic"]
    twice = LogisticLoss(to_format(np.hstack([X, X[:, [1]]]), fmt), y, sample_weight=sw, fit_intercept=fit_intercept)
    once = LogisticLoss(to_format(X, fmt), y, sample_weight=sw, fit_intercept=fit_intercept)
    W2, b2 = twice.refit(np.array([0, 1, P]), *twice.zeros())
    W1, b1 = once.refit(np.array([0, 1]), *once.zeros())
    assert_allclose(W2[[1, P], 0], [W1[1, 0] / 2] * 2, rtol=1e-8)
    assert_allclose(W2[0], W1[0], rtol=1e-8)
    assert_allclose(b2, b1, rtol=1e-8, atol=1e-12)
