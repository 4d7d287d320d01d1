"""Shared test problems and helpers."""

import functools

import numpy as np

from sparse_estimators import (
    AcceleratedIHTClassifier,
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)

#: the four algorithms' estimators, for tests parametrized over them
REGRESSORS = [IHTRegressor, AcceleratedIHTRegressor, RegularizedIHTRegressor, IOBSRegressor]
CLASSIFIERS = [IHTClassifier, AcceleratedIHTClassifier, RegularizedIHTClassifier, IOBSClassifier]


def fig_1f_problem(seed):
    """Paper 000, Fig. 1(f): noiseless Gaussian sparse recovery, A (100 x 800), 22 non-zeros.

    Returns ``(A, b, S)`` with ``b = A x`` and ``S`` the sorted support of ``x``.
    """
    rng = np.random.RandomState(seed)
    A = rng.standard_normal((100, 800))
    S = np.sort(rng.choice(800, 22, replace=False))
    x = np.zeros(800)
    x[S] = rng.standard_normal(22)
    return A, A @ x, S


def one_large_group(seed=0, n=20):
    """``n`` training and ``n`` test rows; group 0 holds features 0..49 (it fits any ``n`` rows), groups 1..10 one
    feature each (50..59); y depends on feature 50. Returns ``X, y, X_test, y_test, groups``."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((2 * n, 60))
    y = 2 * X[:, 50] + 0.5 * rng.standard_normal(2 * n)
    groups = np.r_[np.zeros(50, dtype=int), np.arange(1, 11)]
    return X[:n], y[:n], X[n:], y[n:], groups


def recording_solver(cls, monkeypatch):
    """Replace the estimator class ``cls``'s solver by one that records its calls; returns the list of their ``W0``."""
    solver = cls._solver
    calls = []

    @functools.wraps(solver)
    def recording(*args, **kwargs):
        calls.append(kwargs.get("W0"))
        return solver(*args, **kwargs)

    monkeypatch.setattr(cls, "_solver", staticmethod(recording))
    return calls
