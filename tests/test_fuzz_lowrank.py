"""Fuzz round on the low-rank half, pruning and compose: invariances, rank semantics and contracts.

Every reference is computed independently (numpy least squares, scikit-learn's estimators and metrics); tolerances
are relative to the reference's size, never rounding-level equality on non-unique quantities.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import mean_poisson_deviance
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import IHTRegressor, ReducedRankClassifier, ReducedRankRegressor
from sparse_estimators.compose import GroupsFromTransformer
from sparse_estimators.impute import LowRankImputer, complete_matrix
from sparse_estimators.pruning import prune_layer, prune_mlp

TIGHT = dict(tol=1e-12, max_iter=5000)


def _rrr_data(seed=0, n=60, p=6, m=4, r=2, noise=0.3):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    Y = X @ rng.standard_normal((p, r)) @ rng.standard_normal((r, m)) + noise * rng.standard_normal((n, m)) + 2.0
    return X, Y


def _closed_form(X, Y, r, w=None):
    """Reduced-rank regression with intercept: weighted OLS projected on the top r right singular vectors of its fit."""
    w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=float)
    xm, ym = w @ X / w.sum(), w @ Y / w.sum()
    root = np.sqrt(w)[:, None]
    W = np.linalg.lstsq((X - xm) * root, (Y - ym) * root, rcond=None)[0]
    V = np.linalg.svd(((X - xm) * root) @ W, full_matrices=False)[2][:r].T
    W = W @ V @ V.T
    return W.T, ym - xm @ W


def _close(a, b, ref, rel=1e-8):
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * max(np.abs(ref).max(), 1e-300))


# -- ReducedRankRegressor -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["iht", "accelerated", "regularized"])
def test_rrr_permutations_scalings_and_shifts_transform_the_fit(solver):
    X, Y = _rrr_data()
    rng = np.random.RandomState(1)
    ps, pf, po = rng.permutation(X.shape[0]), rng.permutation(X.shape[1]), rng.permutation(Y.shape[1])
    base = ReducedRankRegressor(2, solver=solver, **TIGHT).fit(X, Y)
    coef, intercept = _closed_form(X, Y, 2)
    _close(base.coef_, coef, coef)
    _close(base.intercept_, intercept, intercept)
    # samples, features and outputs permuted: the coefficients permuted
    perm = ReducedRankRegressor(2, solver=solver, **TIGHT).fit(X[ps][:, pf], Y[ps][:, po])
    _close(perm.coef_, coef[po][:, pf], coef)
    _close(perm.intercept_, intercept[po], intercept)
    # Y scaled (also by extreme factors): coefficients and intercepts scaled
    for c in (-3.5, 1e-8, 1e8):
        scaled = ReducedRankRegressor(2, solver=solver, **TIGHT).fit(X, c * Y)
        _close(scaled.coef_, c * coef, c * coef)
        _close(scaled.intercept_, c * intercept, c * intercept)
    # X shifted with an intercept: the coefficients unchanged, the intercept absorbs the shift
    shift = rng.standard_normal(X.shape[1]) * 5
    shifted = ReducedRankRegressor(2, solver=solver, **TIGHT).fit(X + shift, Y)
    _close(shifted.coef_, coef, coef)
    _close(shifted.intercept_, intercept - coef @ shift, intercept, rel=1e-7)


def test_rrr_latent_directions_follow_the_documented_sign_convention():
    X, Y = _rrr_data(seed=7, m=5, r=3)
    model = ReducedRankRegressor(3, **TIGHT).fit(X, Y)
    U = model.y_loadings_
    # orthonormal loadings whose largest entry (in absolute value) is positive; x_rotations_ U^T is coef_^T
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-12)
    assert np.all(U[np.abs(U).argmax(axis=0), np.arange(3)] > 0)
    _close(model.x_rotations_ @ U.T, model.coef_.T, model.coef_, rel=1e-12)
    # -Y: the same loadings (signs fixed by the matrix, not by the SVD kernel), the rotations negated
    flipped = ReducedRankRegressor(3, **TIGHT).fit(X, -Y)
    _close(flipped.y_loadings_, U, U)
    _close(flipped.x_rotations_, -model.x_rotations_, model.x_rotations_)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_rrr_at_full_rank_is_multioutput_linear_regression(fit_intercept):
    X, Y = _rrr_data(seed=2, noise=1.0)
    reference = LinearRegression(fit_intercept=fit_intercept).fit(X, Y)
    model = ReducedRankRegressor(Y.shape[1], fit_intercept=fit_intercept, **TIGHT).fit(X, Y)
    assert model.rank_ == Y.shape[1]
    _close(model.coef_, reference.coef_, reference.coef_)
    _close(model.predict(X), reference.predict(X), Y)
    with pytest.warns(UserWarning, match="rank=9 is larger"):
        clipped = ReducedRankRegressor(9, fit_intercept=fit_intercept, **TIGHT).fit(X, Y)
    _close(clipped.coef_, reference.coef_, reference.coef_)


def test_rrr_predictions_have_the_asked_rank_and_wide_designs_reach_eckart_young():
    X, Y = _rrr_data(seed=3, p=8, m=6, r=6, noise=1.0)
    for r in (1, 2, 3):
        model = ReducedRankRegressor(r, **TIGHT).fit(X, Y)
        s = np.linalg.svd(model.predict(X) - model.intercept_, compute_uv=False)
        assert np.sum(s > 1e-9 * s[0]) == r == model.rank_
    # more features than samples: X W can be any centred matrix, so the best rank-r fit is the truncated SVD of the
    # centred targets, and the score is the share of their squared singular values kept
    rng = np.random.RandomState(4)
    Xw, Yw = rng.standard_normal((10, 20)), rng.standard_normal((10, 5))
    s = np.linalg.svd(Yw - Yw.mean(0), compute_uv=False)
    model = ReducedRankRegressor(2, tol=1e-12, max_iter=20000).fit(Xw, Yw)
    residual = Yw - model.predict(Xw)
    assert np.sum(residual ** 2) == pytest.approx(np.sum(s[2:] ** 2), rel=1e-6)


def test_rrr_weights_zero_drops_rows_and_scaling_changes_nothing():
    X, Y = _rrr_data(seed=5)
    w = np.random.RandomState(5).randint(0, 3, X.shape[0]).astype(float)
    coef, intercept = _closed_form(X, Y, 2, w)
    weighted = ReducedRankRegressor(2, **TIGHT).fit(X, Y, sample_weight=w)
    _close(weighted.coef_, coef, coef)
    _close(weighted.intercept_, intercept, intercept)
    dropped = ReducedRankRegressor(2, **TIGHT).fit(X[w > 0], Y[w > 0], sample_weight=w[w > 0])
    _close(dropped.coef_, coef, coef)
    scaled = ReducedRankRegressor(2, **TIGHT).fit(X, Y, sample_weight=7.3 * w)
    _close(scaled.coef_, coef, coef)


@pytest.mark.parametrize("Estimator", [ReducedRankRegressor, ReducedRankClassifier])
def test_reduced_rank_clone_pickle_and_feature_names(Estimator):
    X, Y = _rrr_data(seed=6)
    y = Y if Estimator is ReducedRankRegressor else np.argmax(Y - Y.mean(0), axis=1)
    model = Estimator(rank=1).fit(X, y)
    predict = model.predict if Estimator is ReducedRankRegressor else model.predict_proba
    np.testing.assert_array_equal(getattr(pickle.loads(pickle.dumps(model)), predict.__name__)(X), predict(X))
    np.testing.assert_array_equal(getattr(clone(model).fit(X, y), predict.__name__)(X), predict(X))
    assert model.n_features_in_ == X.shape[1] and not hasattr(model, "feature_names_in_")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    named = Estimator(rank=1).fit(frame, y)
    assert named.feature_names_in_.tolist() == list(frame.columns)
    np.testing.assert_allclose(getattr(named, predict.__name__)(frame), predict(X), rtol=1e-12, atol=1e-12)


# -- ReducedRankClassifier ------------------------------------------------------------------------------------------
def _classes(seed=0, n=300, p=6, K=5):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    centres = rng.standard_normal((K, 1)) @ rng.standard_normal((1, p))
    return X, np.argmax(2 * X @ centres.T + rng.gumbel(size=(n, K)), axis=1)


def test_rrc_relabelled_classes_and_permuted_samples_permute_the_fit():
    X, y = _classes()
    labels = np.array(["e", "d", "c", "b", "a"])  # (sorted classes_ reverse the order of y's codes)
    base = ReducedRankClassifier(rank=1, tol=1e-10, max_iter=5000).fit(X, y)
    relabelled = ReducedRankClassifier(rank=1, tol=1e-10, max_iter=5000).fit(X, labels[y])
    order = np.argsort(labels)
    _close(relabelled.coef_, base.coef_[order], base.coef_, rel=1e-7)
    _close(relabelled.predict_proba(X), base.predict_proba(X)[:, order], 1.0, rel=1e-7)
    ps, pf = np.random.RandomState(1).permutation(X.shape[0]), np.random.RandomState(2).permutation(X.shape[1])
    permuted = ReducedRankClassifier(rank=1, tol=1e-10, max_iter=5000).fit(X[ps][:, pf], y[ps])
    _close(permuted.coef_, base.coef_[:, pf], base.coef_, rel=1e-7)
    # the decision function minus the intercepts has rank 1
    s = np.linalg.svd(base.decision_function(X) - base.intercept_, compute_uv=False)
    assert np.sum(s > 1e-9 * s[0]) == 1


def test_rrc_at_full_rank_is_l2_logistic_regression_and_weights_are_repeated_rows():
    X, y = _classes(seed=3)
    n = X.shape[0]
    # (the package's penalty alpha/2 ||W||^2 on the mean loss is scikit-learn's C = 1 / (alpha n) on the summed one)
    reference = LogisticRegression(C=1 / (1e-3 * n), tol=1e-12, max_iter=10000).fit(X, y)
    # rank K - 1 is unconstrained too: the l2-regularized coefficients' rows sum to zero
    for rank in (4, 5):
        full = ReducedRankClassifier(rank=rank, alpha=1e-3, tol=1e-10, max_iter=5000).fit(X, y)
        assert full.rank_ == 4
        np.testing.assert_allclose(full.predict_proba(X), reference.predict_proba(X), atol=1e-5)
        _close(full.coef_, reference.coef_, reference.coef_, rel=1e-4)
    binary = ReducedRankClassifier(rank=1, alpha=1e-3, tol=1e-10, max_iter=5000)
    with pytest.warns(UserWarning, match="two classes"):
        binary.fit(X, y > 2)
    reference = LogisticRegression(C=1 / (1e-3 * n), tol=1e-12, max_iter=10000).fit(X, y > 2)
    _close(binary.coef_, reference.coef_, reference.coef_, rel=1e-4)
    counts = np.random.RandomState(3).randint(0, 3, n)
    weighted = ReducedRankClassifier(rank=1, tol=1e-10, max_iter=5000).fit(X, y, sample_weight=counts)
    repeated = ReducedRankClassifier(rank=1, tol=1e-10, max_iter=5000).fit(np.repeat(X, counts, 0),
                                                                           np.repeat(y, counts))
    scaled = ReducedRankClassifier(rank=1, tol=1e-10, max_iter=5000).fit(X, y, sample_weight=2.5 * counts)
    _close(weighted.coef_, repeated.coef_, repeated.coef_, rel=1e-7)
    _close(scaled.coef_, repeated.coef_, repeated.coef_, rel=1e-7)


# -- matrix completion and LowRankImputer ---------------------------------------------------------------------------
def _low_rank(seed, m=50, n=30, r=3, share=0.5):
    rng = np.random.RandomState(seed)
    M = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
    return M, rng.uniform(size=M.shape) < share


@pytest.mark.parametrize("seed", [0, 1, 5])
@pytest.mark.parametrize("center", [False, True])
def test_regularized_completion_recovers_a_noiseless_matrix_as_the_other_solvers(seed, center):
    """solver='regularized' stopped at a local minimum of its exchanges, reported converged: 0.14 %, 11 % and 19 %
    relative error on the missing entries of these noiseless rank-3 matrices (tol=1e-9; the other solvers: 1e-7).
    It is now finished by hard-rank alternating least squares from its result."""
    M, mask = _low_rank(seed)
    if center:
        M = M + np.random.RandomState(seed).uniform(-5, 5, M.shape[1])
    rows, cols = np.nonzero(mask)
    result = complete_matrix((rows, cols, M[mask]), 3, shape=M.shape, solver="regularized", center=center,
                             tol=1e-9, max_iter=3000)
    error = np.sqrt(np.mean((result.to_dense() - M)[~mask] ** 2) / np.mean(M[~mask] ** 2))
    assert error < 1e-6
    assert result.loss_curve[-1] <= 1e-10 * 0.5 * np.sum(M[mask] ** 2)
    assert result.n_iter == result.loss_curve.size


@pytest.mark.parametrize("solver", ["accelerated", "iht", "als", "regularized"])
def test_completion_of_the_transpose_is_the_transposed_completion(solver):
    M, mask = _low_rank(7, m=30, n=20, r=2)
    rows, cols = np.nonzero(mask)
    a = complete_matrix((rows, cols, M[mask]), 2, shape=M.shape, solver=solver, tol=1e-9, max_iter=3000)
    b = complete_matrix((cols, rows, M[mask]), 2, shape=M.T.shape, solver=solver, tol=1e-9, max_iter=3000)
    # (both recover M: the transposes agree to the recovery's accuracy)
    np.testing.assert_allclose(a.to_dense(), M, atol=1e-5 * np.abs(M).max())
    np.testing.assert_allclose(b.to_dense().T, a.to_dense(), atol=1e-5 * np.abs(M).max())


@pytest.mark.parametrize("solver", ["accelerated", "iht", "als", "regularized"])
def test_imputer_permutations_observed_entries_and_fit_then_transform(solver):
    M, mask = _low_rank(8, m=40, n=8, r=2, share=0.25)
    M = M + np.arange(M.shape[1])
    X = np.where(mask, np.nan, M)
    imputer = LowRankImputer(rank=2, solver=solver, tol=1e-6, max_iter=3000)
    out = imputer.fit_transform(X)
    np.testing.assert_array_equal(out[~mask], M[~mask])  # (observed entries returned unchanged, bit for bit)
    np.testing.assert_allclose(out, M, atol=1e-3 * np.abs(M).max())
    rng = np.random.RandomState(8)
    pr, pc = rng.permutation(X.shape[0]), rng.permutation(X.shape[1])
    permuted = clone(imputer).fit_transform(X[pr][:, pc])
    np.testing.assert_allclose(permuted, out[pr][:, pc], atol=1e-6 * np.abs(M).max())
    np.testing.assert_allclose(clone(imputer).fit(X).transform(X), out, rtol=1e-12, atol=1e-12)


def test_imputer_copy_false_fills_in_place_and_float32_is_kept():
    M, mask = _low_rank(9, m=30, n=6, r=2, share=0.25)
    X = np.where(mask, np.nan, M)
    reference = LowRankImputer(rank=2).fit_transform(X)
    inplace = X.copy()
    out = LowRankImputer(rank=2, copy=False).fit(inplace).transform(inplace)
    assert out is inplace and not np.isnan(inplace).any()
    np.testing.assert_array_equal(out, reference)
    out32 = LowRankImputer(rank=2).fit_transform(X.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_array_equal(out32[~mask], X.astype(np.float32)[~mask])
    np.testing.assert_allclose(out32, reference, atol=1e-5 * np.abs(M).max())


# -- pruning ---------------------------------------------------------------------------------------------------------
def _layer(seed=0, n=200, n_in=12, n_out=5):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, n_in)) @ rng.standard_normal((n_in, n_in)) * 0.5 + rng.standard_normal((n, n_in))
    return rng.standard_normal((n_out, n_in)), X


@pytest.mark.parametrize("method", ["obs", "iobs"])
@pytest.mark.parametrize("options, name", [(dict(blocksize=0), "'blocksize'"), (dict(blocksize=-1), "'blocksize'"),
                                           (dict(blocksize=2.5), "'blocksize'"), (dict(max_iter=-1), "'max_iter'"),
                                           (dict(tol=-1.0), "'tol'"), (dict(tol=np.nan), "'tol'")])
def test_prune_layer_refuses_bad_sweep_options_naming_them(method, options, name):
    """A negative blocksize made SparseGPT's sweep skip every column: W came back dense, without an error."""
    W, X = _layer()
    with pytest.raises(ValueError, match=name):
        prune_layer(W, X, 0.5, method=method, **options)


@pytest.mark.parametrize("method", ["magnitude", "wanda", "obs", "iobs"])
@pytest.mark.parametrize("sparsity, pattern", [(0.5, None), (0.75, None), (None, "2:4"), (None, "1:3")])
def test_prune_layer_rows_are_independent_and_scale_with_w(method, sparsity, pattern):
    W, X = _layer(seed=1)
    out = prune_layer(W, X, sparsity, method=method, pattern=pattern)
    perm = np.random.RandomState(1).permutation(W.shape[0])
    np.testing.assert_allclose(prune_layer(W[perm], X, sparsity, method=method, pattern=pattern), out[perm],
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(prune_layer(-2.0 * W, X, sparsity, method=method, pattern=pattern), -2.0 * out,
                               rtol=1e-10, atol=1e-12)
    assert out.shape == W.shape and out.dtype == np.float64


def _poisson_mlp():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 8))
    y = rng.poisson(np.exp(0.5 * X[:, 0] - 0.5 * X[:, 1] + 0.5))
    try:
        MLPRegressor(loss="poisson")._validate_params()
    except (TypeError, ValueError):
        pytest.skip("MLPRegressor has no Poisson loss in this scikit-learn")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPRegressor(hidden_layer_sizes=(8,), loss="poisson", max_iter=500, random_state=0).fit(X, y)
    return mlp, X, y


def test_prune_mlp_rounds_on_a_poisson_network_never_raise_its_deviance():
    """The rounds took MLPRegressor(loss='poisson')'s exp output for the identity and its loss for squared error:
    5 rounds raised the calibration Poisson deviance of the pruned network from 1.19 to 37.5 (dense: 1.03)."""
    mlp, X, y = _poisson_mlp()
    projected = prune_mlp(mlp, X, 0.5)
    rounds = prune_mlp(mlp, X, 0.5, y=y, n_rounds=5)
    assert [float((W == 0).mean()) for W in rounds.coefs_] == [0.5, 0.5]
    assert mean_poisson_deviance(y, rounds.predict(X)) <= mean_poisson_deviance(y, projected.predict(X))


def test_poisson_mlp_gradient_matches_differences_of_scikit_learns_deviance():
    from sparse_estimators.pruning._mlp import _gradient, _targets

    mlp, X, y = _poisson_mlp()
    net = prune_mlp(mlp, X, 0.5)
    X, y = X[:100], y[:100]

    def loss():  # (scikit-learn's Poisson loss is half the deviance; its l2 term alpha ||W||^2 / (2 n))
        penalty = 0.5 * net.alpha * sum(np.vdot(W, W) for W in net.coefs_) / X.shape[0]
        return 0.5 * mean_poisson_deviance(y, net.predict(X)) + penalty

    g_coef, g_int = _gradient(net, X, _targets(net, y))
    h = 1e-6
    for layer, (i, j) in ((0, (2, 3)), (0, (0, 5)), (1, (4, 0))):
        net.coefs_[layer][i, j] += h
        up = loss()
        net.coefs_[layer][i, j] -= 2 * h
        down = loss()
        net.coefs_[layer][i, j] += h
        assert (up - down) / (2 * h) == pytest.approx(g_coef[layer][i, j], rel=1e-4, abs=1e-8)
    net.intercepts_[1][0] += h
    up = loss()
    net.intercepts_[1][0] -= 2 * h
    down = loss()
    net.intercepts_[1][0] += h
    assert (up - down) / (2 * h) == pytest.approx(g_int[1][0], rel=1e-4, abs=1e-8)


# -- compose ---------------------------------------------------------------------------------------------------------
def test_groups_from_transformer_routes_sample_weight_and_round_trips():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 5))
    y = 2 * X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(80)
    w = np.r_[np.ones(40), np.zeros(40)]
    model = GroupsFromTransformer(StandardScaler(), IHTRegressor(k=2)).fit(X, y, sample_weight=w)
    reference = make_pipeline(StandardScaler(), IHTRegressor(k=2)).fit(X, y, ihtregressor__sample_weight=w)
    np.testing.assert_allclose(model.predict(X), reference.predict(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
    np.testing.assert_array_equal(clone(model).fit(X, y, sample_weight=w).predict(X), model.predict(X))
    assert model.n_features_in_ == 5
