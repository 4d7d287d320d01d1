"""Least squares from zero (``_policy.SEARCH_FROM_ZERO_MIN_SAMPLES``): support F1 and test MSE, new minus old, paired.

On fresh data sets of ``compare_peers.py``'s regression designs (rho 0, 0.35,
0.7; beta types 1, 2; SNR 0.5, 1, 3, 6; seeds offset by 200000, apart from
those of ``compare_peers.py``), ``IHTRegressor(k=s)`` with default parameters
is fitted twice in one process: with the solver skipped (the splicing
searches from abess's start alone: the policy constant at 0) and with the
solver first (the constant at infinity: the previous behaviour). Prints per
size the mean F1 of both, the paired differences of F1 and of the test MSE
(relative to the old one) with their standard errors, how many data sets
changed support, abess's mean F1, and the CPU time of both routes. One BLAS
thread.

Run ``python benchmarks/search_from_zero_paired.py --sizes 500,100,5 --repeats 10``
(``--repeats`` data sets per design and size, ``--start`` further seeds).
"""

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _peer_designs import simulate  # noqa: E402

from sparse_estimators import IHTRegressor, _policy  # noqa: E402

DESIGNS = list(itertools.product((0.0, 0.35, 0.7), (1, 2), (0.5, 1.0, 3.0, 6.0)))


def f1(support, true):
    hit = np.intersect1d(support, true).size
    return 2 * hit / (support.size + true.size) if support.size + true.size else 1.0


def fit(X, y, k, gate):
    old = _policy.SEARCH_FROM_ZERO_MIN_SAMPLES
    _policy.SEARCH_FROM_ZERO_MIN_SAMPLES = gate
    try:
        c0 = time.process_time()
        model = IHTRegressor(k=k).fit(X, y)
        return model, time.process_time() - c0
    finally:
        _policy.SEARCH_FROM_ZERO_MIN_SAMPLES = old


def run(n, p, s, repeats, start, peer):
    import abess.linear

    rows = []
    for r in range(start, start + repeats):
        for d, (rho, beta_type, snr) in enumerate(DESIGNS):
            seed = 200000 + 1000 * r + d
            X, y, Xt, yt, beta = simulate("regression", n, p, s, rho, beta_type, snr, 1000, seed)
            true = np.flatnonzero(beta)
            if (r + d) % 2:  # (alternate which runs first: a data set's first fit warms the caches)
                new, t_new = fit(X, y, s, 0.0)
                old, t_old = fit(X, y, s, np.inf)
            else:
                old, t_old = fit(X, y, s, np.inf)
                new, t_new = fit(X, y, s, 0.0)
            mse_new = np.mean((new.predict(Xt) - yt) ** 2)
            mse_old = np.mean((old.predict(Xt) - yt) ** 2)
            row = [f1(new.support_, true), f1(old.support_, true), mse_new / mse_old - 1,
                   not np.array_equal(new.support_, old.support_), t_new, t_old]
            if peer:
                theirs = abess.linear.LinearRegression(support_size=[s], thread=1).fit(X, y)
                row.append(f1(np.flatnonzero(theirs.coef_), true))
            rows.append(row)
    return np.array(rows, dtype=float)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["100,1000,10", "500,100,5", "400,400,20", "500,1000,10"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'size':>13s} {'N/klog':>6s} {'sets':>5s} {'F1 new':>7s} {'F1 old':>7s} {'dF1':>8s} {'se':>7s} "
          f"{'dMSE rel':>9s} {'se':>7s} {'changed':>7s} {'abess':>6s} {'ms new':>7s} {'ms old':>7s}")
    with threadpool_limits(1):
        for size in args.sizes:
            n, p, s = map(int, size.split(","))
            a = run(n, p, s, args.repeats, args.start, not args.no_peer)
            m = a.shape[0]
            d, e = a[:, 0] - a[:, 1], a[:, 2]
            se = lambda v: v.std(ddof=1) / np.sqrt(v.size)  # noqa: E731
            peer = a[:, 6].mean() if a.shape[1] > 6 else float("nan")
            print(f"{size:>13s} {n / (s * np.log(p - s)):6.2f} {m:5d} {a[:, 0].mean():7.4f} {a[:, 1].mean():7.4f} "
                  f"{d.mean():+8.4f} {se(d):7.4f} {e.mean():+9.5f} {se(e):7.5f} {int(a[:, 3].sum()):7d} "
                  f"{peer:6.4f} {1e3 * np.median(a[:, 4]):7.2f} {1e3 * np.median(a[:, 5]):7.2f}", flush=True)


if __name__ == "__main__":
    main()
