"""The classifiers' l2 term ``alpha/2 ||coef||^2`` on data of extreme magnitude (rescaled by a power of two).

Data whose magnitudes (the columns' ranges, with an intercept) lie outside
``_policy.SCALE_RANGE`` are fitted on ``X * x_scale``; the l2 term was applied
to that problem's coefficients, ``coef_ / x_scale``, so that its strength on
``coef_`` was ``alpha / x_scale^2`` rather than ``alpha`` (up to ``2^48`` times
the documented one for values of ``1e7``). The ridge term is not scale-free:
the fit of ``X * c`` with ``alpha * c^2`` is the fit of ``X`` with ``alpha``,
its coefficients divided by ``c``. Every check below is such an identity of
the data, or the fit of the unscaled data, never a value copied from the
package.
"""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from _problems import CLASSIFIERS
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from sparse_estimators import (
    IHTClassifier,
    IOBSClassifier,
)
from sparse_estimators.linear_model._scaling import _rescaled_alpha
from sparse_estimators.model_selection import SparsityCV, SparsityIC

ALPHA = 1e-4  # (the default)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(n_classes, n=300, p=10, seed=0):
    """Standard normal columns; the labels depend on columns 1, 4 (and 2 with three classes) and noise."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    if n_classes == 2:
        y = (2 * X[:, 1] - 2.5 * X[:, 4] + rng.standard_normal(n) > 0).astype(int)
    else:
        y = (np.c_[2 * X[:, 1], -2 * X[:, 4], 1.5 * X[:, 2]] + rng.standard_normal((n, 3))).argmax(axis=1)
    return X, y


def _as(X, sparse):
    return sp.csr_matrix(X) if sparse else X


def _assert_scaled_fit(model, reference, factor, Xm, X):
    """``model`` (fitted on ``Xm``) is ``reference`` (fitted on ``X``) with its coefficients divided by ``factor``."""
    assert_array_equal(model.support_, reference.support_)
    top = np.abs(reference.coef_).max()
    assert_allclose(model.coef_ * factor, reference.coef_, rtol=1e-8, atol=1e-9 * top)
    # (the probabilities: the multinomial intercepts are defined up to a constant shared by the classes)
    assert_allclose(model.predict_proba(Xm), reference.predict_proba(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("j", [30, -30])
def test_fit_of_scaled_x_with_scaled_alpha_is_the_scaled_fit(Est, n_classes, sparse, j):
    """``X * 2^j`` with ``alpha * 4^j``: the fit of ``X`` with ``alpha``, coefficients over ``2^j``.

    Before, ``X * 2^30`` gave coefficients of 1e-16 (the l2 term ``2^60``
    times too strong), ``X * 2^-30`` about 0.1 off (``2^-60`` times too weak).
    """
    X, y = _data(n_classes)
    reference = Est(k=3, alpha=ALPHA).fit(_as(X, sparse), y)
    Xm = X * 2.0 ** j
    model = Est(k=3, alpha=ALPHA * 4.0 ** j).fit(_as(Xm, sparse), y)
    _assert_scaled_fit(model, reference, 2.0 ** j, _as(Xm, sparse), _as(X, sparse))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("pair", [(30, 300), (-24, -300)])
def test_two_rescaled_problems_are_one_bit_for_bit(Est, n_classes, pair):
    """``X * 2^a`` and ``X * 2^b`` (alpha scaled) are rescaled to the same problem: the same digits.

    Powers of two change no digit, so the two fits solve one problem, with one
    l2 strength: coefficients in the exact ratio ``2^(b - a)``, equal
    intercepts. Before, the l2 strengths of the two problems differed.
    """
    X, y = _data(n_classes)
    a, b = pair
    first = Est(k=3, alpha=ALPHA * 4.0 ** a).fit(X * 2.0 ** a, y)
    second = Est(k=3, alpha=ALPHA * 4.0 ** b).fit(X * 2.0 ** b, y)
    assert_array_equal(second.coef_ * 2.0 ** (b - a), first.coef_)
    assert_array_equal(second.intercept_, first.intercept_)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
def test_an_informative_column_in_large_units_keeps_the_fit(Est, n_classes, sparse):
    """Column 1 in units of ``1e-7`` (``1e7 z``): the support and accuracy of the fit of ``z``.

    Before, the whole design was rescaled by about ``2^-14`` for that column,
    and the l2 term shrank the other columns' coefficients ``2^28`` times
    harder: the binary fit took column 9 for column 5 with an accuracy of
    0.68 against 0.89 (0.53 against 0.77 with three classes).
    """
    X, y = _data(n_classes)
    reference = Est(k=3).fit(_as(X, sparse), y)
    Xm = X.copy()
    Xm[:, 1] *= 1e7
    model = Est(k=3).fit(_as(Xm, sparse), y)
    assert_array_equal(model.support_, reference.support_)
    assert abs(model.score(_as(Xm, sparse), y) - reference.score(_as(X, sparse), y)) <= 0.01
    # (the l2 term on column 1's coefficient, 1e-14 of the reference's, is all that differs)
    C = model.coef_.copy()
    C[:, 1] *= 1e7
    assert_allclose(C, reference.coef_, rtol=0, atol=0.05 * np.abs(reference.coef_).max())


def _support_optimum(X, y, support, alpha, units):
    """The minimiser of the mean softmax loss plus ``alpha/2 ||W||^2`` on ``X``'s ``support`` (intercepts free).

    Solved by L-BFGS on the columns ``X / units`` (of unit scale, well conditioned), the l2 term
    ``alpha / units^2`` on their coefficients: ``W = V / units``. Returns ``W`` of shape (classes, support).
    """
    A = X[:, support] / units[support]
    n, K, k = A.shape[0], int(y.max()) + 1, support.size
    Y = np.eye(K)[y]
    penalty = (alpha / units[support] ** 2)[:, None]

    def fun(theta):
        V, b = theta[:k * K].reshape(k, K), theta[k * K:]
        Z = A @ V + b
        lse = logsumexp(Z, axis=1)
        R = np.exp(Z - lse[:, None]) - Y
        value = np.mean(lse - np.sum(Z * Y, axis=1)) + 0.5 * np.sum(penalty * V * V)
        return value, np.concatenate([(A.T @ R / n + penalty * V).ravel(), R.mean(axis=0)])

    theta = scipy.optimize.minimize(fun, np.zeros((k + 1) * K), jac=True, method="L-BFGS-B",
                                    options={"maxiter": 10000, "gtol": 1e-14, "ftol": 1e-16}).x
    return (theta[:k * K].reshape(k, K) / units[support][:, None]).T


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("factor", [1e7, 1e8])
def test_three_classes_with_a_column_in_large_units_reach_the_optimum(Est, sparse, factor):
    """Three classes, column 1 in units of ``1 / factor``: the support's optimum, the accuracy of the fit of ``z``.

    Along a coefficient row's softmax shift the Hessian's curvature is
    ``alpha`` alone, below the Cholesky pivot test next to column 1's
    curvature; the SVD solve that took over cut the other columns'
    directions (``1e-14`` of column 1's curvature). Before, the refit stopped
    at ``5e-4`` above the optimum with coefficients 6 % off (``1e7``), or left
    them at 0 (``1e8``: accuracy 0.53 against 0.77).
    """
    X, y = _data(3)
    reference = Est(k=3).fit(_as(X, sparse), y)
    Xm = X.copy()
    Xm[:, 1] *= factor
    model = Est(k=3).fit(_as(Xm, sparse), y)
    assert_array_equal(model.support_, reference.support_)
    assert abs(model.score(_as(Xm, sparse), y) - reference.score(_as(X, sparse), y)) <= 0.01
    units = np.ones(X.shape[1])
    units[1] = factor
    optimum = _support_optimum(Xm, y, model.support_, ALPHA, units)
    C = model.coef_[:, model.support_] * units[model.support_]
    V = optimum * units[model.support_]
    assert_allclose(C, V, rtol=1e-6, atol=1e-6 * np.abs(V).max())


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("factor", [1e7, 1e8])
def test_dask_three_classes_with_a_column_in_large_units_equal_numpy(Est, factor, weighted):
    """The case above on a dask ``X`` (blocks of 77 rows; the refit's Hessian summed over blocks): NumPy's fit.

    Both end with a Newton refit on their support, solved to its optimum (they agree to about ``1e-13``):
    ``1e-6`` of the largest coefficient, far below the solvers' ``tol`` (``1e-4``), and the support's optimum.
    """
    da = pytest.importorskip("dask.array")
    X, y = _data(3)
    Xm = X.copy()
    Xm[:, 1] *= factor
    sw = np.random.RandomState(1).randint(0, 4, y.size).astype(float) if weighted else None
    reference = Est(k=3).fit(Xm, y, sample_weight=sw)
    model = Est(k=3).fit(da.from_array(Xm, chunks=(77, 10)), da.from_array(y, chunks=77),
                         sample_weight=None if sw is None else da.from_array(sw, chunks=77))
    assert_array_equal(model.support_, reference.support_)
    units = np.ones(X.shape[1])
    units[1] = factor
    C, R = model.coef_ * units, reference.coef_ * units  # (in the units of z: comparable entries)
    assert_allclose(C, R, rtol=0, atol=1e-6 * np.abs(R).max())
    assert_allclose(model.intercept_, reference.intercept_, rtol=0, atol=1e-6 * np.abs(R).max())
    if not weighted:
        V = _support_optimum(Xm, y, model.support_, ALPHA, units) * units[model.support_]
        assert_allclose(C[:, model.support_], V, rtol=1e-6, atol=1e-6 * np.abs(V).max())


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("j, offset", [(0, 1e7), (30, 2.0 ** 50)])
def test_a_large_offset_shifts_only_the_intercept(Est, n_classes, sparse, j, offset):
    """``X * 2^j + offset`` with an intercept (``alpha * 4^j``): the fit of ``X``, the intercept shifted.

    The scale comes from the columns' ranges, so ``X + 1e7`` is not rescaled
    (it was not before either); ``X * 2^30 + 2^50`` is, and its l2 term was
    ``2^60`` times too strong before.
    """
    X, y = _data(n_classes)
    reference = Est(k=3).fit(_as(X, sparse), y)
    factor = 2.0 ** j
    Xm = X * factor + offset
    model = Est(k=3, alpha=ALPHA * factor ** 2).fit(_as(Xm, sparse), y)
    assert_array_equal(model.support_, reference.support_)
    top = np.abs(reference.coef_).max()
    # (X + 1e7 holds X to 1e-9: the fit moves by that much, and up to a few times the solvers' tol (1e-4) more on
    # scipy.sparse's centring, by CPU: 6.6e-4 of the largest coefficient for a multinomial RIHT fit on one)
    assert_allclose(model.coef_ * factor, reference.coef_, rtol=0, atol=(1e-3 if j == 0 else 1e-4) * top)
    assert_allclose(model.predict_proba(_as(Xm, sparse)), reference.predict_proba(_as(X, sparse)), rtol=0, atol=1e-4)


@pytest.mark.parametrize("Search", [SparsityIC, SparsityCV])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_searches_over_k_choose_as_on_unscaled_data(Search, n_classes):
    """``SparsityIC`` / ``SparsityCV`` on ``X * 2^30`` (alpha scaled): the level and fit of ``X``.

    Before, both chose ``k = 1`` on ``X`` with a column of ``1e7 z``
    (``k = 2``, ``3`` on ``X``), with an accuracy of 0.68 (0.53).
    """
    X, y = _data(n_classes)
    reference = Search(IHTClassifier()).fit(X, y)
    model = Search(IHTClassifier(alpha=ALPHA * 4.0 ** 30)).fit(X * 2.0 ** 30, y)
    assert model.k_ == reference.k_
    _assert_scaled_fit(model.best_estimator_, reference.best_estimator_, 2.0 ** 30, X * 2.0 ** 30, X)
    Xm = X.copy()
    Xm[:, 1] *= 1e7
    column = Search(IHTClassifier()).fit(Xm, y)
    assert column.k_ == reference.k_
    assert_array_equal(column.best_estimator_.support_, reference.best_estimator_.support_)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", [IHTClassifier, IOBSClassifier], ids=lambda c: c.__name__)
def test_dask_arrays_take_the_same_l2_strength(Est, n_classes):
    """A dask ``X`` (rescaled from its blocks' extremes in the set-up's pass) as NumPy's: both cases above."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, y = _data(n_classes)
    Xm = X.copy()
    Xm[:, 1] *= 1e7
    yd = da.from_array(y, chunks=(100,))
    reference = Est(k=3).fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        scaled = Est(k=3, alpha=ALPHA * 4.0 ** 30).fit(da.from_array(X * 2.0 ** 30, chunks=(100, 10)), yd)
        column = Est(k=3).fit(da.from_array(Xm, chunks=(100, 10)), yd)
    assert_array_equal(scaled.support_, reference.support_)
    assert_allclose(scaled.coef_ * 2.0 ** 30, reference.coef_, rtol=1e-8, atol=1e-9 * np.abs(reference.coef_).max())
    assert_array_equal(column.support_, reference.support_)
    assert np.mean(np.asarray(column.predict(Xm)) == y) >= reference.score(X, y) - 0.01


def test_rescaled_alpha_is_exact_and_finite():
    """``alpha x_scale^2``, exact; ``alpha`` itself at scale 1; capped (finite) where it leaves float range."""
    assert _rescaled_alpha(1e-4, 1.0) == 1e-4 and _rescaled_alpha(0.0, 2.0 ** 600) == 0.0
    assert _rescaled_alpha(1e-4, 2.0 ** -30) == 1e-4 * 2.0 ** -60
    assert _rescaled_alpha(1e-4, 2.0 ** 30) == 1e-4 * 2.0 ** 60
    for scale in (2.0 ** 600, 2.0 ** 1000):  # ((2.0 ** 600) ** 2 raises OverflowError in Python)
        value = _rescaled_alpha(1e-4, scale)
        assert np.isfinite(value) and value >= 1e-4 * 2.0 ** 800
    assert _rescaled_alpha(1e300, 2.0 ** 600) >= 1e300  # (never weaker than the user's alpha on the user's scale)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
def test_tiny_data_are_fitted_under_a_dominant_penalty(Est, n_classes):
    """``X * 2^-600``: the l2 term outweighs the loss ``2^1000`` times (capped), finite, no warning.

    The fit is the limit of a large ``alpha``: the support of ``alpha=1e10`` on
    ``X`` (the largest gradients at the null model), coefficients near 0.
    """
    X, y = _data(n_classes)
    limit = Est(k=2, alpha=1e10).fit(X, y)
    Xm = X * 2.0 ** -600
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = Est(k=2).fit(Xm, y)
    assert_array_equal(model.support_, limit.support_)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    assert np.abs(model.coef_ * 2.0 ** -600).max() < 1e-200


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("alpha", [1e307, 1.7e308])
@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("Est", CLASSIFIERS, ids=lambda c: c.__name__)
def test_a_huge_alpha_gives_zero_coefficients_without_a_warning(Est, n_classes, alpha, sparse):
    """``alpha`` near the largest float: the mean diagonal of the Hessian (I-OBS's damping, the multinomial
    refit's shift) overflowed in its sum ("overflow encountered in reduce"); no warning now, and at the
    optimum ``alpha coef = -gradient``, whose entries are at most ``max |X|``: ``|coef| <= max |X| / alpha``.
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 60))  # (60 features: 60 alpha's already exceed float range)
    scores = np.c_[2 * X[:, 1], -2 * X[:, 4], 1.5 * X[:, 2], X[:, 3], -X[:, 5]][:, :max(n_classes, 2)]
    y = (scores + rng.standard_normal(scores.shape)).argmax(axis=1) % n_classes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = Est(k=3, alpha=alpha).fit(_as(X, sparse), y)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    assert np.abs(model.coef_).max() <= 1.01 * np.abs(X).max() / alpha


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_an_l2_term_far_above_the_datas_curvature_keeps_the_gradients_top_features(Est, n_classes):
    """Tiny data with the default ``alpha``: the l2 term is 1e15 and more times the data's curvature, so the loss
    of every support of ``k`` features is the null model's up to rounding. Before, the splicing search's second
    start (its marginal gains ``g^2 / h`` vanish: ``h`` absorbed the data's curvature into ``alpha``) replaced the
    first search's support whenever rounding made its loss lower: the first ``k`` columns, on some CPUs and not
    others. The optimum is ``coef ~ -gradient(0) / alpha`` (the loss is near-quadratic at 0, the l2 term dominates
    its curvature), so the right support is that of the ``k`` largest gradients at zero (rows of classes)."""
    rng = np.random.default_rng(0)
    n, p = 120, 15
    X = np.round(rng.standard_normal((n, p)) * 64) / 64
    noisy = X[:, 1] - 0.8 * X[:, 4] + 0.6 * X[:, 7] + rng.logistic(size=n)
    y = (noisy > 0).astype(int) if n_classes == 2 else np.digitize(noisy, [-0.7, 0.7])
    Y = np.eye(n_classes)[y]
    G = X.T @ (Y - Y.mean(axis=0))  # (the gradient at zero coefficients and the null intercept, up to a factor)
    G = G[:, 1:] if n_classes == 2 else G  # (binary: one column)
    top = np.sort(np.argsort(-np.linalg.norm(G, axis=1), kind="stable")[:3])
    assert np.linalg.norm(G[top], axis=1).min() > 1.5 * np.sort(np.linalg.norm(G, axis=1))[-4]  # (no near-tie)
    for j in (-40, -60, -100):
        model = Est(k=3).fit(X * 2.0**j, y)
        assert_array_equal(model.support_, top)
