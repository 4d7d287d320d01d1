"""Poisson and Gamma regression at exact k against abess, on a small synthetic grid.

Prints, per setting (n, p, rho, family), the mean support F1 of
``IHTRegressor(k, loss=...)`` and of abess's ``PoissonRegression`` /
``GammaRegression`` at ``support_size=[k]``, and the ratio of their median fit
times measured in the same run. Designs: Gaussian rows with correlation
``rho ** |i - j|``, ``k`` true features spread evenly with coefficients of
random sign and magnitude 0.3 to 0.6 on the log-mean, intercept 0.5; Gamma
shape 5.

abess 0.4.11's ``GammaRegression`` found almost none of the true features
on these log-link data (mean F1 0.00 to 0.08 in the first run): its model
may use another link; not investigated, so its Gamma column is not a fair
comparison yet.

Usage: ``PYTHONPATH=. python benchmarks/compare_glm.py [--repeats 5]``
(needs ``abess``; the issue's full peer comparison is not this script).
"""

import argparse
import time
import warnings

import numpy as np


def design(n, p, rho, k, family, seed):
    rng = np.random.RandomState(seed)
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)  # AR(1) columns: corr(x_i, x_j) = rho^|i - j|
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    beta = np.zeros(p)
    truth = np.linspace(0, p - 1, k + 2)[1:-1].astype(int)
    beta[truth] = rng.choice([-1, 1], k) * rng.uniform(0.3, 0.6, k)
    eta = X @ beta + 0.5
    y = rng.poisson(np.exp(eta)).astype(float) if family == "poisson" else rng.gamma(5.0, np.exp(eta) / 5.0)
    return X, y, np.sort(truth)


def f1(found, truth):
    hit = np.intersect1d(found, truth).size
    return 0.0 if hit == 0 else 2 * hit / (found.size + truth.size)


def timed(model, X, y):
    """The support of ``model`` fitted on ``(X, y)`` and the fit's wall time."""
    start = time.perf_counter()
    coef = model.fit(X, y).coef_
    return np.flatnonzero(coef), time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from abess.linear import GammaRegression, PoissonRegression

    from sparse_estimators import IHTRegressor

    peers = {"poisson": PoissonRegression, "gamma": GammaRegression}
    k = 5
    print("| family | n | p | rho | F1 IHT | F1 abess | time IHT / abess |")
    print("|---|---|---|---|---|---|---|")
    for family in ("poisson", "gamma"):
        for n, p in ((200, 100), (500, 500)):
            for rho in (0.0, 0.5):
                ours, theirs, t_ours, t_theirs = [], [], [], []
                for seed in range(args.repeats):
                    X, y, truth = design(n, p, rho, k, family, seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        s, t = timed(IHTRegressor(k=k, loss=family), X, y)
                        ours.append(f1(s, truth))
                        t_ours.append(t)
                        s, t = timed(peers[family](support_size=[k]), X, y)
                        theirs.append(f1(s, truth))
                        t_theirs.append(t)
                print(f"| {family} | {n} | {p} | {rho} | {np.mean(ours):.3f} | {np.mean(theirs):.3f} | "
                      f"{np.median(t_ours) / np.median(t_theirs):.2f} |", flush=True)


if __name__ == "__main__":
    main()
