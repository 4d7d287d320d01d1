"""Shared test problems."""

import numpy as np


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
