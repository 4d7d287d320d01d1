"""Shared data generators and the automatic discovery of the public estimators.

In a test module that sets ``PARAMETRIZE_OVER_PUBLIC_ESTIMATORS = True``, the
tests that take an argument named ``Estimator``, ``Regressor`` or
``Classifier`` are parametrized over every public estimator class of
:mod:`sparse_estimators` of that kind (found through ``__all__``), so an
estimator added to the package is tested with no edit. Other modules (which
may use these names for their own parametrizations) are left alone.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _cli_helpers import _write_csv
from scipy.special import expit
from sklearn.base import BaseEstimator, is_classifier, is_regressor

import sparse_estimators

try:  # the fuzz suite's profiles (tests/test_fuzz.py): bounded and deterministic in CI, thousands on demand
    import os

    from hypothesis import settings

    settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True)
    settings.register_profile("fuzz", max_examples=2000, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # the test extra installs hypothesis
    pass


def public_estimator_classes():
    """Every exact-k estimator of ``sparse_estimators.__all__``: a scikit-learn estimator with a parameter ``k``.

    (``ReducedRankRegressor``, whose level is a rank, has its own tests and
    the scikit-learn checks of ``test_common.py``.)
    """
    classes = []
    for name in sparse_estimators.__all__:
        obj = getattr(sparse_estimators, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator) and "k" in obj().get_params():
            classes.append(obj)
    return classes


def _ids(classes):
    return [cls.__name__ for cls in classes]


def _explicitly_parametrized(metafunc):
    names = set()
    for marker in metafunc.definition.iter_markers("parametrize"):
        argnames = marker.args[0] if marker.args else marker.kwargs["argnames"]
        if isinstance(argnames, str):
            argnames = [name.strip() for name in argnames.split(",")]
        names.update(argnames)
    return names


def pytest_generate_tests(metafunc):
    if not getattr(metafunc.module, "PARAMETRIZE_OVER_PUBLIC_ESTIMATORS", False):
        return
    explicit = _explicitly_parametrized(metafunc)
    classes = public_estimator_classes()
    kinds = {
        "Estimator": classes,
        "Regressor": [cls for cls in classes if is_regressor(cls())],
        "Classifier": [cls for cls in classes if is_classifier(cls())],
    }
    for name, selected in kinds.items():
        if name in metafunc.fixturenames and name not in explicit:
            metafunc.parametrize(name, selected, ids=_ids(selected))


def sparse_coef(rng, p, true_support, low=1.0, high=3.0):
    """A coefficient vector supported on ``true_support``, magnitudes in [low, high], random signs."""
    w = np.zeros(p)
    w[true_support] = rng.choice([-1.0, 1.0], len(true_support)) * rng.uniform(low, high, len(true_support))
    return w


@pytest.fixture
def make_regression():
    """Factory: Gaussian design, ``y = X w + intercept + noise`` with ``w`` supported on ``k_true`` features.

    With ``shift`` the columns get non-zero means (so that centering matters).
    Returns ``X, y, w, true_support`` (``true_support`` sorted).
    """

    def make(n=100, p=30, k_true=3, *, noise=0.0, intercept=0.0, shift=False, n_targets=None,
             sparse=False, seed=0):
        rng = np.random.RandomState(seed)
        X = rng.standard_normal((n, p))
        if shift:
            X += rng.uniform(-3.0, 3.0, p)
        true_support = np.sort(rng.choice(p, k_true, replace=False))
        if n_targets is None:
            w = sparse_coef(rng, p, true_support)
            y = X @ w + intercept + noise * rng.standard_normal(n)
        else:
            w = np.column_stack([sparse_coef(rng, p, true_support) for _ in range(n_targets)])
            y = X @ w + intercept + noise * rng.standard_normal((n, n_targets))
        if sparse:
            X = sp.csr_matrix(X)
        return X, y, w, true_support

    return make


@pytest.fixture
def make_classification():
    """Factory: labels drawn from a sparse logistic (or multinomial) model with a large signal.

    Binary: ``P(y = 1) = expit(X w + intercept)`` with ``|w_j|`` in [2, 3] on
    ``k_true`` features, so most samples are far from the decision boundary.
    Multiclass (``n_classes > 2``): the class of largest ``X W + noise``, all
    classes depending on the same ``k_true`` features.
    Returns ``X, y, true_support``.
    """

    def make(n=400, p=20, k_true=3, *, n_classes=2, intercept=0.0, shift=False, sparse=False, seed=0):
        rng = np.random.RandomState(seed)
        Z = rng.standard_normal((n, p))
        true_support = np.sort(rng.choice(p, k_true, replace=False))
        if n_classes == 2:
            w = sparse_coef(rng, p, true_support, 2.0, 3.0)
            y = (rng.uniform(size=n) < expit(Z @ w + intercept)).astype(int)
        else:
            W = np.column_stack([sparse_coef(rng, p, true_support, 2.0, 3.0) for _ in range(n_classes)])
            y = np.argmax(Z @ W + 0.5 * rng.standard_normal((n, n_classes)), axis=1)
        X = Z + rng.uniform(-3.0, 3.0, p) if shift else Z
        if sparse:
            X = sp.csr_matrix(X)
        return X, y, true_support

    return make


@pytest.fixture
def sparse_csv(tmp_path):
    """The command-line tests' CSV file and its data: y = 3 x2 - 2 x5 + noise among 10 numeric columns, target last."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 10))
    y = 3 * X[:, 2] - 2 * X[:, 5] + 0.1 * rng.standard_normal(150) + 1
    data = np.column_stack([X, y]).round(6)
    return _write_csv(tmp_path / "data.csv", [f"x{j}" for j in range(10)] + ["y"], data.tolist()), data
