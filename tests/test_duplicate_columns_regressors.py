"""A duplicated or rescaled column is one feature: the regressors and Cox models never spend two of their k on it.

Design of ``benchmarks/duplicate_columns.py``: 150 x 10 Gaussian, features 0 and 1 strong and 2 weak, column 9 a
copy of column 0 (or 2.54 times it). Before, ``IHTRegressor(k=3)`` kept both copies in 1 of 40 least-squares,
3 of 40 Poisson, 1 of 40 Gamma and 5 of 40 Cox data sets (the seeds below, and rescaled copies found in seeds 40
to 399): the splicing search ranked each copy by its own removal cost, after a weaker feature, and its gate
refused the exchanges that would have dropped one. A support with both copies spans what the support without
one of them spans, so any distinct feature does at least as well; the references for "better" are independent
refits on each support: scikit-learn's ``LinearRegression``, ``PoissonRegressor`` / ``GammaRegressor``
(``alpha=0``) and ``HuberRegressor``, and scikit-survival's ``CoxPHSurvivalAnalysis`` at the Cox models' l2 term.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _benchmarks import load_benchmark
from sklearn.linear_model import GammaRegressor, HuberRegressor, LinearRegression, PoissonRegressor
from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance

from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor, IOBSRegressor, RegularizedIHTRegressor
from sparse_estimators.solvers import _splice
from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)

REGRESSORS = [IHTRegressor, AcceleratedIHTRegressor, RegularizedIHTRegressor, IOBSRegressor]
COX = [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
       IOBSCoxPHSurvivalAnalysis]
#: (seed, scale of the copy) where IHTRegressor kept both copies before
CASES = {"squared_error": [(24, 1.0), (70, 2.54)], "poisson": [(1, 1.0), (31, 1.0)],
         "gamma": [(21, 1.0), (68, 2.54)], "huber": [(24, 1.0)]}


_problem = load_benchmark("duplicate_columns").problem  # (150 x 10; column 9 is scale times column 0)


def _objective(family, X, y, support):
    """The loss of an independent refit on ``support`` (lower is better)."""
    A = X[:, list(support)]
    if family == "squared_error":
        r = y - LinearRegression().fit(A, y).predict(A)
        return float(r @ r) / y.size
    if family == "poisson":
        return mean_poisson_deviance(y, PoissonRegressor(alpha=0, tol=1e-10, max_iter=10000).fit(A, y).predict(A))
    if family == "gamma":
        return mean_gamma_deviance(y, GammaRegressor(alpha=0, tol=1e-10, max_iter=10000).fit(A, y).predict(A))
    # Huber's loss with the scale estimated jointly (scikit-learn's objective, sum of sigma + H(r / sigma) sigma)
    model = HuberRegressor(epsilon=1.35, alpha=0, tol=1e-10, max_iter=10000).fit(A, y)
    z = np.abs(y - model.predict(A)) / model.scale_
    return model.scale_ * float(np.mean(1.0 + np.where(z < 1.35, z * z, 2.7 * z - 1.35 ** 2)))


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", list(CASES))
def test_one_copy_of_a_duplicated_column(Est, loss):
    for seed, scale in CASES[loss]:
        X, y = _problem(loss, seed, scale)
        support = Est(k=3, loss=loss).fit(X, y).support_
        assert not {0, 9} <= set(support.tolist()), (seed, scale, support)
        assert _objective(loss, X, y, support) < _objective(loss, X, y, [0, 1, 9]), (seed, scale, support)


@pytest.mark.parametrize("Est", COX)
def test_cox_one_copy_of_a_duplicated_column(Est):
    sksurv = pytest.importorskip("sksurv.linear_model")
    from sksurv.linear_model.coxph import CoxPHOptimizer

    def objective(X, y, support):  # mean negative partial log-likelihood + alpha / 2 ||coef||^2 (alpha = 1e-4)
        alphas = np.full(len(support), 1e-4 * y.size)  # (scikit-survival's penalty is alpha / (2 n) ||coef||^2)
        A = X[:, list(support)]
        coef = sksurv.CoxPHSurvivalAnalysis(alpha=alphas, tol=1e-12, n_iter=1000).fit(A, y).coef_
        return CoxPHOptimizer(A, y["event"], y["time"], alphas, "breslow").nlog_likelihood(coef)

    for seed in (6, 19):  # (before: both copies in each)
        X, y = _problem("cox", seed)
        support = Est(k=3).fit(X, y).support_
        assert not {0, 9} <= set(support.tolist()), (seed, support)
        assert objective(X, y, support) < objective(X, y, [0, 1, 9]), (seed, support)


def test_sparse_float32_positive_and_a_forced_copy():
    X, y = _problem("squared_error", 24)
    for data in (sp.csr_matrix(X), X.astype(np.float32)):
        assert not {0, 9} <= set(IHTRegressor(k=3).fit(data, y).support_.tolist())
    # positive=True: its refits test no pivot, so the search always looks for redundant features
    assert not {0, 9} <= set(IHTRegressor(k=3, positive=True).fit(X, y).support_.tolist())
    # the forced copy stays, the other goes
    support = IHTRegressor(k=3, always_select=[9]).fit(X, y).support_
    assert 9 in support and 0 not in support


def test_the_copy_is_kept_when_nothing_else_is_left():
    """k equal to the number of distinct columns plus one: a copy must fill the last place."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    X = np.column_stack([X, 2.0 * X[:, 0]])
    y = X[:, :3] @ [1.0, -1.0, 0.5] + rng.standard_normal(200)
    assert IHTRegressor(k=4).fit(X, y).support_.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("loss", ["squared_error", "poisson", "huber"])
def test_no_redundancy_check_without_a_collinear_refit(loss, monkeypatch):
    """Designs without (nearly) collinear supports pay nothing: the Gram matrix of the check is never formed."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 30))
    eta = X[:, :4] @ [0.6, -0.5, 0.4, 0.3]
    y = rng.poisson(np.exp(eta)).astype(float) if loss == "poisson" else eta + rng.standard_normal(200)
    calls = []
    monkeypatch.setattr(_splice, "_redundant", lambda *args: calls.append(args) or args[1][:0])
    IHTRegressor(k=4, loss=loss).fit(X, y)
    assert not calls
    # a copy that the solver selects twice: the refits on that support fall back, and the check runs
    IHTRegressor(k=3, loss=loss).fit(*_problem(loss, *CASES[loss][0]))
    assert calls
