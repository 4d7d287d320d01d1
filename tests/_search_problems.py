"""Data for the tests of choosing k (tests/test_model_selection.py, tests/test_search_api.py)."""

import numpy as np


def _regression(n=200, p=60, support=None, noise=0.3, seed=0, intercept=2.0):
    if support is None:  # four features spread over the columns
        support = (p // 20, p // 6, (5 * p) // 12, (2 * p) // 3)
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[list(support)] = np.linspace(1.0, 2.0, len(support)) * np.where(np.arange(len(support)) % 2, -1, 1)
    return X, X @ beta + intercept + noise * rng.standard_normal(n), np.array(support)


def _classification(n=600, p=30, support=(2, 9, 17), seed=0, n_classes=2):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    if n_classes == 2:
        z = X[:, list(support)] @ np.array([2.5, -2.0, 3.0])
        return X, (z + 0.3 * rng.standard_normal(n) > 0).astype(int), np.array(support)
    W = rng.standard_normal((len(support), n_classes)) * 3
    return X, np.argmax(X[:, list(support)] @ W, axis=1), np.array(support)


def _separated(seed, n=200, p=40, noise=0.3):
    """Four features with well-separated effects (4, -3, 2, -1.5): k* = 4 is clear."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[[2, 6, 16, 26]] = [4.0, -3.0, 2.0, -1.5]
    return X, X @ beta + 2.0 + noise * rng.standard_normal(n), np.array([2, 6, 16, 26])
