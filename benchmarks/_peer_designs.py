"""The simulated designs of ``compare_peers.py`` (Hastie, Tibshirani & Tibshirani, 2020), shared by other benchmarks.

AR(1) Gaussian rows, ``beta`` of type 1 (spread-out ones) or 2 (the first
``s``), regression at a signal-to-noise ratio or logistic classification with
a linear predictor of variance ``SNR``: see ``compare_peers.py``'s docstring.
"""

import numpy as np
from scipy.special import expit


def ar1_design(rng, n, p, rho):
    """Rows ``N(0, Sigma)``, ``Sigma_ij = rho^|i-j|``: ``x_j = rho x_{j-1} + sqrt(1 - rho^2) z_j``."""
    X = rng.standard_normal((n, p))
    if rho:
        c = np.sqrt(1.0 - rho * rho)
        for j in range(1, p):
            X[:, j] = rho * X[:, j - 1] + c * X[:, j]
    return X


def make_beta(p, s, beta_type):
    beta = np.zeros(p)
    if beta_type == 1:
        beta[np.round(np.linspace(0, p - 1, s)).astype(int)] = 1.0
    elif beta_type == 2:
        beta[:s] = 1.0
    else:
        raise ValueError(beta_type)
    return beta


def sigma_quad(d, rho):
    """``d^T Sigma d`` using only the non-zeros of ``d`` (no ``p x p`` matrix)."""
    idx = np.flatnonzero(d)
    if idx.size == 0:
        return 0.0
    S = rho ** np.abs(idx[:, None] - idx[None, :]).astype(float)
    v = d[idx]
    return float(v @ S @ v)


def simulate(task, n, p, s, rho, beta_type, snr, n_test, seed):
    rng = np.random.RandomState(seed)
    beta = make_beta(p, s, beta_type)
    power = sigma_quad(beta, rho)
    X = ar1_design(rng, n, p, rho)
    Xt = ar1_design(rng, n_test, p, rho)
    if task == "regression":
        sd = np.sqrt(power / snr)
        y = X @ beta + sd * rng.standard_normal(n)
        yt = Xt @ beta + sd * rng.standard_normal(n_test)
        return X, y, Xt, yt, beta
    coef = beta * np.sqrt(snr / power)
    y = (rng.uniform(size=n) < expit(X @ coef)).astype(int)
    yt = (rng.uniform(size=n_test) < expit(Xt @ coef)).astype(int)
    if np.unique(y).size < 2:  # vanishingly rare; keep both classes present
        y[0] = 1 - y[0]
    return X, y, Xt, yt, coef
