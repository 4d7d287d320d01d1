"""SparsityCV (warm-started paths) against GridSearchCV over k, same folds, same process.

Target: the same k, and at most a third of GridSearchCV's time on n = 500,
p = 1000, k_grid = 1..40, 5 folds, ``IHTRegressor`` with its defaults.
Run: ``python benchmarks/bench_sparsity_cv.py [--repeats 4]``.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold
from threadpoolctl import threadpool_limits

from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor
from sparse_estimators.model_selection import SparsityCV


def make_data(n=500, p=1000, s=10, snr=3.0, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[np.linspace(0, p - 1, s).astype(int)] = 1.0
    signal = X @ beta
    return X, signal + rng.standard_normal(n) * np.sqrt(signal.var() / snr)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--p", type=int, default=1000)
    parser.add_argument("--kmax", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for both searches")
    args = parser.parse_args()
    threadpool_limits(args.threads)
    grid = list(range(1, args.kmax + 1))
    cv = KFold(5, shuffle=True, random_state=0)
    print(f"n={args.n} p={args.p} k_grid=1..{args.kmax} 5 folds, {args.repeats} data set(s), "
          f"{args.threads} BLAS thread(s)")
    print("| estimator | seed | SparsityCV k | GridSearchCV k | SparsityCV s | GridSearchCV s | time ratio |")
    print("|---|---|---|---|---|---|---|")
    for cls in (IHTRegressor, AcceleratedIHTRegressor):
        for seed in range(args.repeats):
            X, y = make_data(args.n, args.p, seed=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                t0 = time.perf_counter()
                ours = SparsityCV(cls(), k_grid=grid, cv=cv).fit(X, y)
                t1 = time.perf_counter()
                ref = GridSearchCV(cls(), {"k": grid}, cv=cv).fit(X, y)
                t2 = time.perf_counter()
            print(f"| {cls.__name__} | {seed} | {ours.k_} | {ref.best_params_['k']} | {t1 - t0:.2f} | "
                  f"{t2 - t1:.2f} | {(t1 - t0) / (t2 - t1):.2f} |", flush=True)


if __name__ == "__main__":
    main()
