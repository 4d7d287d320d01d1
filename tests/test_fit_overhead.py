"""The direct routes of small fits (validation, labels, Newton solves) give what the general routes give."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.validation import validate_data

from sparse_estimators import IHTClassifier, IHTRegressor, _policy
from sparse_estimators.linear_model._scaling import _power_of_two_scale
from sparse_estimators.linear_model._validation import _finite, validated_classification, validated_regression
from sparse_estimators.losses._design import (
    LinearDesign,
    column_extremes,
    shared_extremes,
    weighted_column_sums,
)
from sparse_estimators.losses._numerics import _norm, cholesky_newton_solve


def _data(seed=0, n=60, p=12):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.3 * rng.standard_normal(n)
    return X, y


def _same_fit(a, b):
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    assert np.array_equal(a.support_, b.support_)


def test_plain_arrays_fit_as_lists_do():
    """ndarray input (direct route) and the same values as lists (scikit-learn's validation): identical fits."""
    X, y = _data()
    _same_fit(IHTRegressor(k=3).fit(X, y), IHTRegressor(k=3).fit(X.tolist(), y.tolist()))
    labels = np.where(y > 0, "yes", "no")
    for target in (labels, (y > 0).astype(int) + 3, y > 0):
        direct = IHTClassifier(k=3).fit(X, target)
        general = IHTClassifier(k=3).fit(X.tolist(), list(target))
        _same_fit(direct, general)
        assert np.array_equal(direct.classes_, LabelEncoder().fit(target).classes_)
        assert np.array_equal(direct.predict(X), general.predict(X))


def test_fortran_ordered_x_fits_as_c_ordered():
    X, y = _data(1)
    _same_fit(IHTRegressor(k=3).fit(np.asfortranarray(X), y), IHTRegressor(k=3).fit(X, y))
    _same_fit(IHTClassifier(k=3).fit(np.asfortranarray(X), y > 0), IHTClassifier(k=3).fit(X, y > 0))


def test_direct_route_returns_validate_data_result():
    X, y = _data(2)
    est = IHTRegressor()
    Xv, yv = validated_regression(est, X, y)
    assert Xv is X and yv is y and est.n_features_in_ == X.shape[1]
    Xs, ys = validate_data(IHTRegressor(), X, y, dtype=[np.float64, np.float32], order="C", multi_output=True,
                           y_numeric=True)
    assert np.array_equal(Xs, Xv) and np.array_equal(ys, yv)
    Xf = np.asfortranarray(X)
    Xc, _ = validated_classification(IHTClassifier(), Xf, (y > 0).astype(int))
    assert Xc.flags.c_contiguous and np.array_equal(Xc, X)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_rejected_with_scikit_learns_messages(bad):
    X, y = _data(3)
    Xb = X.copy()
    Xb[4, 2] = bad
    with pytest.raises(ValueError, match="Input X contains"):
        IHTRegressor(k=2).fit(Xb, y)
    with pytest.raises(ValueError, match="Input X contains"):
        IHTClassifier(k=2).fit(Xb, y > 0)
    yb = y.copy()
    yb[0] = bad
    with pytest.raises(ValueError, match="Input y contains"):
        IHTRegressor(k=2).fit(X, yb)


def test_continuous_labels_still_refused():
    X, y = _data(4)
    with pytest.raises(ValueError, match="Unknown label type"):
        IHTClassifier(k=2).fit(X, y)


def test_feature_names_forgotten_on_array_refit():
    pd = pytest.importorskip("pandas")
    X, y = _data(5)
    est = IHTRegressor(k=2).fit(pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]), y)
    assert hasattr(est, "feature_names_in_")
    est.fit(X[:, :8], y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 8


def test_extremes_not_kept_after_the_fit():
    """X changed in place between fits: the second fit sees the new values (its scale), as a fresh array."""
    X, y = _data(6)
    est = IHTRegressor(k=3).fit(X, y)
    X *= 2.0 ** 40  # (outside the scale range: the fit rescales)
    X[:, 5] = 1.0  # (a constant column)
    _same_fit(est.fit(X, y), IHTRegressor(k=3).fit(X.copy(), y))
    with shared_extremes(X):
        high, low = column_extremes(X)
        assert column_extremes(X)[0] is high
    assert column_extremes(X)[0] is not high and np.array_equal(column_extremes(X)[0], X.max(axis=0))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(1, 5), (2, 3), (201, 100), (400, 400), (100, 1000)])
def test_set_up_products_by_dot_as_by_matmul(shape, order):
    """The set-up's column sums and moments by ``ndarray.dot`` equal the ``@`` forms they replace, bit for bit."""
    rng = np.random.RandomState(shape[1])
    X = np.asarray(rng.standard_normal(shape), order=order)
    X[rng.rand(*shape) < 0.2] = -0.0  # (signed zeros: a single product's zero sign is where dot and @ could differ)
    for w in (np.ones(shape[0]), rng.rand(shape[0])):
        expected = np.asarray(X.T @ w.astype(X.dtype), dtype=float).ravel()
        assert weighted_column_sums(X, w).tobytes() == expected.tobytes()
        assert weighted_column_sums(X.astype(np.float32), w).tobytes() == np.asarray(
            X.astype(np.float32).T @ w.astype(np.float32), dtype=float).tobytes()
        offset = expected / w.sum()
        moments = LinearDesign(X, offset).column_moments(w / w.sum())
        rows = min(256, max(8, shape[0] // 8))
        second = np.zeros(shape[1])
        for start in range(0, shape[0], rows):
            block = X[start:start + rows]
            second += (block * block).T @ (w / w.sum())[start:start + rows]
        first = X.T @ (w / w.sum())
        centred = second - 2 * offset * first + offset * offset * (w / w.sum()).sum()
        kept = ~(np.abs(second) > _policy.CANCELLATION_RATIO * np.abs(centred))  # (the others: from centred columns)
        assert kept.sum() >= (shape[1] if shape[0] > 2 else 0)
        assert moments[kept].tobytes() == centred[kept].tobytes()


def test_finite_and_scale_tests_as_numpys():
    """``_finite`` of a target and the power-of-two scale of an array, by ufunc reductions, as the direct forms."""
    y = np.linspace(-3.0, 5.0, 11)
    assert _finite(y) and _finite(np.full(4, 1e308))  # (a sum that overflows: still finite entries)
    for bad in (np.nan, np.inf, -np.inf):
        yb = y.copy()
        yb[3] = bad
        assert not _finite(yb)
    low, high = _policy.SCALE_RANGE
    for A in (y, 1e200 * y, -1e-200 * y, np.arange(6), np.zeros(3), np.array([[3.0, -1e30], [2.0, 0.5]])):
        top = max(float(A.max()), -float(A.min()))  # (the largest magnitude, as the wrappers give it)
        scale = _power_of_two_scale(A)
        if top == 0.0 or low <= top <= high:
            assert scale == 1.0
        elif A.ndim == 1:
            assert 1.0 <= top * scale < 2.0
        else:  # (the middle, in exponents, of the columns' largest magnitudes)
            assert scale == 2.0 ** -50


@pytest.mark.parametrize("shape", [(500, 100), (203, 7), (1000, 256), (60, 12), (400, 400), (97, 30)])
def test_column_extremes_of_narrow_arrays_as_numpys(shape):
    """The blocked reduction of narrow arrays (_policy.EXTREME_ROW_WIDTH) gives X.max(axis=0) and X.min(axis=0)."""
    rng = np.random.RandomState(shape[0])
    X = rng.standard_normal(shape)
    X[rng.randint(shape[0], size=shape[1]), np.arange(shape[1])] = 7.5  # (ties at the maxima)
    X[-1, 0] = -9.0  # (an extreme in the last rows, outside the blocks)
    X[:, 1] = 3.0  # (a constant column)
    high, low = column_extremes(X)
    assert high.tobytes() == X.max(axis=0).tobytes() and low.tobytes() == X.min(axis=0).tobytes()
    X[5, 2] = np.nan
    assert np.isnan(column_extremes(X)[0][2]) and np.isnan(column_extremes(X)[1][2])


def test_parameter_names_per_class():
    class Extra(IHTRegressor):
        def __init__(self, k=None, *, extra=1, **kwargs):
            super().__init__(k, **kwargs)
            self.extra = extra

    assert "extra" in Extra().get_params() and "extra" not in IHTRegressor().get_params()
    assert "alpha" in IHTClassifier().get_params() and "loss" not in IHTClassifier().get_params()


def test_newton_solve_and_norm_as_scipy_and_numpy():
    rng = np.random.RandomState(7)
    for d in (1, 3, 11):
        A = rng.standard_normal((40, d))
        H, g = A.T @ A + 0.1 * np.eye(d), rng.standard_normal(d)
        L = np.linalg.cholesky(H)
        assert np.array_equal(cholesky_newton_solve(H, g), scipy.linalg.cho_solve((L, True), g))
        assert _norm(g) == np.linalg.norm(g)


def test_parameter_check_remembers_only_values_that_passed():
    """The scalars a fit's parameter check remembers (check_parameters) never let another value through:
    after fits with valid values, the same names with invalid values, or equal values of a refused type
    (5.0 for max_iter after 5, True for k after 1), still raise scikit-learn's InvalidParameterError."""
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = _data(7)
    IHTRegressor(k=1, max_iter=5, tol=1e-4).fit(X, y)
    IHTRegressor(k=1, max_iter=5, tol=1e-4).fit(X, y)  # (the values are remembered now)
    for bad in ({"max_iter": 5.0}, {"tol": -1e-4}, {"k": 0}, {"splicing": "yes"}, {"step_size": 0.0}):
        with pytest.raises(InvalidParameterError, match=f"The '{next(iter(bad))}' parameter of IHTRegressor"):
            IHTRegressor(**({"k": 1} | bad)).fit(X, y)
    with pytest.raises((InvalidParameterError, ValueError), match="'k' parameter"):
        IHTRegressor(k=True).fit(X, y)


def test_splice_from_the_solvers_state_ends_where_it_would_without():
    """splice's start_state (the linear predictor, value and gradient where the solver's support jump
    ended) replaces only their computation: the search accepts the same exchanges and returns the same
    fit as when it computes them itself, on designs where it exchanges features."""
    from sparse_estimators.losses import SquaredLoss
    from sparse_estimators.solvers import iht, splice
    from sparse_estimators.thresholding import Hard

    exchanged = 0
    for seed in range(6):
        rng = np.random.RandomState(seed)
        X = rng.standard_normal((100, 400))
        for j in range(1, 400):  # AR(1) columns, rho 0.35: the solver's support can improve
            X[:, j] = 0.35 * X[:, j - 1] + np.sqrt(1 - 0.35**2) * X[:, j]
        signal = X[:, np.linspace(0, 399, 10).astype(int)].sum(axis=1)
        y = signal + np.sqrt(signal.var() / 3) * rng.standard_normal(100)
        loss = SquaredLoss(X, y)
        W0, b0 = loss.zeros()
        result = iht(loss, Hard(), 10, W0=W0, b0=b0, support_refit=3)
        assert result.refitted and result.linear_predictor is not None
        state = (result.linear_predictor, result.objective[-1], result.gradient)
        given = splice(loss, 10, result.coef, result.intercept, refitted=True, start_state=state)
        own = splice(loss, 10, result.coef, result.intercept, refitted=True)
        np.testing.assert_array_equal(given.support, own.support)
        np.testing.assert_array_equal(given.coef, own.coef)
        assert given.n_iter == own.n_iter and given.objective == own.objective
        exchanged += given.n_iter > 0
    assert exchanged  # (the state also served searches that moved)



def _count_data(seed=0, n=200, p=100):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    mu = np.exp(0.5 + X[:, [3, 17, 40, 71, 90]] @ np.array([0.4, -0.3, 0.3, 0.25, -0.35]))
    return X, rng.poisson(mu).astype(float), rng.gamma(2.0, mu / 2.0)


def _gradients_at_zero(monkeypatch, loss_class):
    """Count the calls of ``loss_class.gradient_from_z`` at ``W = 0`` (a constant linear predictor)."""
    calls = []
    own = loss_class.gradient_from_z

    def counted(self, Z, W):
        calls.append(not W.any() and bool(np.all(Z == Z.flat[0])))
        return own(self, Z, W)

    monkeypatch.setattr(loss_class, "gradient_from_z", counted)
    return calls


@pytest.mark.parametrize("name", ["IHTRegressor", "IOBSRegressor", "AcceleratedIHTRegressor",
                                  "RegularizedIHTRegressor"])
@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_splicing_second_start_reuses_the_solvers_gradient_at_zero(monkeypatch, name, family):
    """From a zero start, the splicing search's second start (marginal gains at zero) takes the
    gradient of the solver's first iteration: one gradient at zero per fit, not two, and the same fit."""
    import sparse_estimators
    from sparse_estimators.losses import GammaLoss, PoissonLoss

    X, counts, amounts = _count_data()
    y = counts if family == "poisson" else amounts
    Est = getattr(sparse_estimators, name)
    calls = _gradients_at_zero(monkeypatch, PoissonLoss if family == "poisson" else GammaLoss)
    fit = Est(k=5, loss=family, splicing=True).fit(X, y)
    assert sum(calls) == 1 and len(calls) > 1
    calls.clear()
    warm = Est(k=5, loss=family, splicing=True).fit(X, y, coef_init=np.zeros(X.shape[1]))
    assert sum(calls) == 1  # (a zero coef_init is a zero start too)
    _same_fit(fit, warm)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_splice_with_the_gradient_at_zero_ends_where_it_would_without(family):
    """splice's zero_gradient replaces only the second start's gradient: the same fit as without it."""
    from sparse_estimators.losses import GammaLoss, PoissonLoss
    from sparse_estimators.solvers import iht, splice
    from sparse_estimators.thresholding import Hard

    for seed in range(4):
        X, counts, amounts = _count_data(seed)
        loss = PoissonLoss(X, counts) if family == "poisson" else GammaLoss(X, amounts)
        W0, b0 = loss.zeros()
        b0 = loss.initial_intercept()
        result = iht(loss, Hard(), 5, W0=W0, b0=b0, support_refit=3)
        np.testing.assert_array_equal(result.start_gradient, loss.gradient_from_z(loss.linear_predictor(W0, b0), W0)[0])
        given = splice(loss, 5, result.coef, result.intercept, zero_gradient=result.start_gradient)
        own = splice(loss, 5, result.coef, result.intercept)
        np.testing.assert_array_equal(given.support, own.support)
        np.testing.assert_array_equal(given.coef, own.coef)
        assert given.objective == own.objective


def _spread_signal(seed=0, n=400, p=40):
    """A well-posed n > p design whose true features are not the first ones (the start's support is 0 .. k-1)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = X[:, [5, 17, 31]] @ np.array([2.0, -1.5, 1.0]) + 0.5 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("name", ["IHTRegressor", "AcceleratedIHTRegressor"])
def test_least_squares_jumps_after_one_settled_support(name, monkeypatch):
    """Least squares jumps to the refit once its support is unchanged for one iteration: the fit of patience 3.

    The refit on a support does not depend on the iterate it starts from, so
    the earlier jump gives the same coefficients where the support is found
    at once, in 2 iterations instead of 4.
    """
    import sparse_estimators
    from sparse_estimators import _policy

    cls = getattr(sparse_estimators, name)
    X, y = _spread_signal()
    # (the solver's route: 400 / (3 log 37) = 37 observations per selection would skip it, see
    # _policy.SEARCH_FROM_ZERO_MIN_SAMPLES)
    monkeypatch.setattr(_policy, "SEARCH_FROM_ZERO_MIN_SAMPLES", np.inf)
    fast = cls(k=3).fit(X, y)
    monkeypatch.setattr(_policy, "SQUARED_SUPPORT_REFIT_PATIENCE", 3)
    slow = cls(k=3).fit(X, y)
    np.testing.assert_array_equal(fast.support_, [5, 17, 31])
    _same_fit(fast, slow)
    assert fast.n_iter_ == 2 and slow.n_iter_ == 4


def test_support_jump_patience_per_loss_and_structure():
    """Patience 1 for least squares on features (plain and Gram paths) with enough observations per selection.

    60 samples for k = 2 of 6 features: 21.6 observations per ``k log(p - k)``,
    above the limit; 30 samples for k = 10 of 200: 0.57, below (patience 3).
    The other losses and groups keep theirs.
    """
    from sparse_estimators import _policy
    from sparse_estimators.losses import GramSquaredLoss, PoissonLoss, SquaredLoss
    from sparse_estimators.structures import Groups, Rows
    from sparse_estimators.thresholding import Hard

    X, y = _data(1, n=60, p=6)
    est = IHTRegressor(k=2)
    rows, groups = Rows(Hard()), Groups(Hard(), np.repeat([0, 1, 2], 2))
    for loss in (SquaredLoss(X, y), GramSquaredLoss(X, y)):
        assert est._refit_patience(loss, rows, 2) == _policy.SQUARED_SUPPORT_REFIT_PATIENCE == 1
        assert est._refit_patience(loss, groups, 2) == 2
    assert est._refit_patience(PoissonLoss(X, np.exp(y / 4)), rows, 2) == 3
    assert IHTClassifier(k=2)._refit_patience(SquaredLoss(X, y), rows, 2) == 1
    wide, target = _data(2, n=30, p=200)
    assert _policy.SQUARED_PATIENCE_MIN_SAMPLES > 30 / (10 * np.log(190))
    assert est._refit_patience(SquaredLoss(wide, target), Rows(Hard()), 10) == 3


@pytest.mark.parametrize("shape", [(40, 1), (12, 3), (5, 1)])
def test_cold_start_projection_as_the_partition(shape):
    """IHT's cold start: its first k rows (signed zeros kept), the same array and support as projecting the zeros."""
    from sparse_estimators.solvers._base import project
    from sparse_estimators.solvers._iht import _cold_projection
    from sparse_estimators.structures import get_structure
    from sparse_estimators.thresholding import Hard

    structure = get_structure(Hard())
    W0 = np.zeros(shape)
    W0[1, 0] = W0[3, -1] = -0.0  # (the copy must keep their sign, as the projection's does)
    for k in (0, 1, 2, 4, shape[0], shape[0] + 3):
        W, support = _cold_projection(W0, k)
        W_ref, support_ref = project(structure, k, W0)
        assert W.tobytes() == W_ref.tobytes() and W.shape == W_ref.shape
        assert support.dtype == support_ref.dtype and np.array_equal(support, support_ref)


def test_marginal_gains_without_masks_as_with():
    """The gains when every feature is usable: the bytes of the masked form (and -inf where one is not)."""
    from sparse_estimators._utils import row_squares
    from sparse_estimators.solvers._splice import _forward_gain

    rng = np.random.RandomState(3)
    for m in (1, 3):
        g = rng.standard_normal((50, m))
        h = rng.uniform(0.1, 2.0, 50)
        usable = np.ones(50, dtype=bool)
        masked = np.where(usable, 0.5 * row_squares(g) / np.where(usable, h, 1.0), -np.inf)
        assert _forward_gain(None, None, None, h, usable, g).tobytes() == masked.tobytes()
        usable[[4, 17]] = False
        gain = _forward_gain(None, None, None, h, usable, g)
        assert np.all(gain[[4, 17]] == -np.inf) and np.all(np.isfinite(np.delete(gain, [4, 17])))


def test_top_set_as_the_single_partition():
    """The splicing searches' top sets: the set of the single-kth partition, ties, infinities and NaN included."""
    from sparse_estimators.solvers._splice import _top_set

    rng = np.random.RandomState(5)
    for trial in range(400):
        p = rng.randint(1, 160)
        s = rng.standard_normal(p)
        if trial % 4 == 1:  # (ties: the fallback's choice among them)
            s = rng.randint(0, 4, p).astype(float)
        elif trial % 4 == 2:
            s[rng.rand(p) < 0.3] = -np.inf
            s[rng.rand(p) < 0.05] = np.inf
        elif trial % 4 == 3:
            s[rng.rand(p) < 0.1] = np.nan
        for c in {0, 1, 2, rng.randint(0, p + 2), p - 1, p, p + 1}:
            expected = (-s).argpartition(min(c, p) - 1)[:c] if c < p else np.arange(p)
            got = _top_set(s, c)
            assert got.dtype == expected.dtype and sorted(got.tolist()) == sorted(expected.tolist())


def test_kth_pair_partitions_as_the_tuple():
    """argpartition with the cached ``kth`` pair places what it places with the tuple; the pair is shared, read-only."""
    from sparse_estimators.thresholding._selection import kth_pair

    rng = np.random.RandomState(7)
    for trial in range(200):
        p = rng.randint(2, 300)
        a = rng.standard_normal(p) if trial % 2 else rng.randint(0, 5, p).astype(float)  # (ties: every other one)
        i = rng.randint(0, p - 1)
        got, expected = a.argpartition(kth_pair(i)), a.argpartition((i, i + 1))
        assert np.array_equal(a[got[i:i + 2]], a[expected[i:i + 2]])
        assert np.all(a[got[:i]] <= a[got[i]]) and np.all(a[got[i + 2:]] >= a[got[i + 1]])
    pair = kth_pair(3)
    assert pair is kth_pair(3) and pair.tolist() == [3, 4] and not pair.flags.writeable


@pytest.mark.parametrize("name, value", [("max_iter", np.int64(50)), ("tol", np.float64(1e-3)), ("tol", 0),
                                         ("step_size", np.float32(0.5)), ("verbose", np.int32(0))])
def test_numpy_scalar_parameters_still_accepted(name, value):
    """The plain-int and plain-float shortcuts of the parameter checks leave NumPy scalars to the general test."""
    X, y = _data()
    plain = value.item() if hasattr(value, "item") else value
    _same_fit(IHTRegressor(k=3, **{name: value}).fit(X, y), IHTRegressor(k=3, **{name: plain}).fit(X, y))


@pytest.mark.parametrize("name, value", [("max_iter", True), ("tol", float("nan")), ("tol", float("inf")),
                                         ("step_size", -0.5), ("max_iter", 0), ("tol", -1e-9)])
def test_plain_scalar_parameters_still_refused(name, value):
    """bool, non-finite and out-of-range plain scalars are refused as before the shortcuts (a ValueError names them)."""
    X, y = _data()
    with pytest.raises(ValueError, match=f"'{name}'"):
        IHTRegressor(k=3, **{name: value}).fit(X, y)


def test_observations_per_selection_as_the_formula():
    """The memoised observations per ``k log(p - k)``: the formula's value, for int and NumPy int levels."""
    from sparse_estimators.linear_model._base import _samples_per_selection
    from sparse_estimators.losses._squared import SquaredLoss

    X, y = _data(n=50, p=12)
    loss = SquaredLoss(X, y)
    for k in (1, 3, np.int64(5), 10, 11):
        assert _samples_per_selection(loss, k) == 50 / (k * np.log(max(12 - k, 2)))
