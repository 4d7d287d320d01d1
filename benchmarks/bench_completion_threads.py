"""Completion at a fixed rank: iterations, time, and BLAS threads (issue 31, item 1).

Rank-30 completion of a 400 x 600 grayscale photograph (``china.jpg``,
top-left corner) with 35 % of its entries observed, ``center=True``, default
``tol=1e-5``, ``max_iter=300`` (``--max-iter``): ``solver='accelerated'`` (hard rank) and
``solver='als'`` (ridge on the factors, ``alpha`` = 0.01 times the largest
singular value of the zero-filled centred observations). Each fit runs
(a) with the process's default BLAS threads, (b) inside
``threadpool_limits(1)``, and (c) with the completion's own thread limit
switched off (``_policy.BLAS_THREADS = None``, the behaviour before
issue 31) under the default threads. fancyimpute's ``SoftImpute`` (its
default shrinkage, one thread, in its own environment as in
``compare_completion.py``) runs in the same process for a time ratio.
Timings on a loaded machine are noisy: compare ratios within one run.

Run: ``python benchmarks/bench_completion_threads.py [--repeats 2] [--max-iter 300] [--no-fancyimpute]``.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_sample_image
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_info, threadpool_limits

from sparse_estimators import _policy
from sparse_estimators.impute import complete_matrix

sys.path.insert(0, str(Path(__file__).resolve().parent))


def data(share=0.35, seed=0):
    X = load_sample_image("china.jpg").astype(float).mean(axis=2)[:400, :600]
    observed = np.random.default_rng(seed).uniform(size=X.shape) < share
    return X, observed


def fit(X, observed, solver, alpha, max_iter):
    rows, cols = np.nonzero(observed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        result = complete_matrix((rows, cols, X[rows, cols]), 30, shape=X.shape, center=True, solver=solver,
                                 alpha=alpha, max_iter=max_iter)
        seconds = time.perf_counter() - start
    err = float(np.sqrt(np.mean((result.to_dense() - X)[~observed] ** 2)))
    return seconds, result.n_iter, result.converged, err


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-fancyimpute", action="store_true")
    parser.add_argument("--max-iter", type=int, default=300)
    args = parser.parse_args()
    X, observed = data()
    rows, cols = np.nonzero(observed)
    mu = np.bincount(cols, X[rows, cols], minlength=X.shape[1]) / np.bincount(cols, minlength=X.shape[1])
    top = np.linalg.norm(np.where(observed, X - mu, 0.0), 2)
    blas = [(lib["internal_api"], lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"]
    print(f"BLAS libraries (default threads): {blas}")
    for rep in range(args.repeats):
        print(f"-- repeat {rep + 1}")
        soft = None
        if not args.no_fancyimpute:
            import compare_completion as cc

            records, _ = cc.run_fancyimpute(cc.fancyimpute_python(), X, ~observed, [])
            soft = next(r for r in records if r["params"]["shrinkage_factor"] == cc.SOFT_DEFAULT)
            print(f"fancyimpute SoftImpute (default lambda, 1 thread): {soft['seconds']:.2f} s, "
                  f"hidden RMSE {soft['rmse']:.2f}")
        for solver, alpha in [("accelerated", 0.0), ("als", 0.01 * top)]:
            times = {}
            for mode in ("default threads", "threadpool_limits(1)", "no internal limit"):
                saved = _policy.BLAS_THREADS
                try:
                    if mode == "no internal limit":
                        _policy.BLAS_THREADS = None
                    if mode == "threadpool_limits(1)":
                        with threadpool_limits(1):
                            out = fit(X, observed, solver, alpha, args.max_iter)
                    else:
                        out = fit(X, observed, solver, alpha, args.max_iter)
                finally:
                    _policy.BLAS_THREADS = saved
                times[mode] = out[0]
                ratio = f", {out[0] / soft['seconds']:.2f} x SoftImpute" if soft else ""
                print(f"{solver:12s} alpha={alpha:8.2f} {mode:22s}: {out[0]:6.2f} s{ratio}, {out[1]} iterations, "
                      f"converged {out[2]}, hidden RMSE {out[3]:.2f}")
            print(f"{solver:12s} default / one thread = {times['default threads'] / times['threadpool_limits(1)']:.2f};"
                  f" no internal limit / one thread = "
                  f"{times['no internal limit'] / times['threadpool_limits(1)']:.2f}")


if __name__ == "__main__":
    main()
