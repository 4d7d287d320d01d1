"""When does working through the Gram matrix pay? ``precompute=True`` against ``False``, and abess.

For tall designs (``n_samples`` much larger than ``n_features``) a regressor can
form ``G = X^T X`` once and never touch ``X`` again
(:class:`sparse_estimators.losses.GramSquaredLoss`). Forming it costs as much
as ``p / 15`` to ``p / 4`` products with ``X`` (measured: 7 at 50000 x 100, 27 at
5000 x 100, where ``X`` fits in cache); a fit makes a few dozen. This script
measures, on the AR(1) designs of ``compare_peers.py`` (rho 0.35, beta type 1,
SNR 1, ``s`` true features, ``k = s``), the median fit time of
``IHTRegressor(k=s, precompute=...)`` with ``True`` and ``False`` and of abess's
``LinearRegression(support_size=[s])`` in the same process (1 BLAS thread), and
checks that both of ours select the same support. The table gives the ratios;
``precompute='auto'`` (dense ``X``, at most 150 features and at least 10
samples per feature) is chosen from it.

Usage::

    python benchmarks/gram_precompute.py            # the whole grid (a few minutes)
    python benchmarks/gram_precompute.py --quick    # three sizes
    python benchmarks/gram_precompute.py --sizes 500,100 5000,150   # n,p of your choice
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import simulate  # noqa: E402

from sparse_estimators import IHTRegressor  # noqa: E402
from sparse_estimators.linear_model._base import _GRAM_AUTO_MAX_FEATURES, _GRAM_AUTO_RATIO  # noqa: E402

GRID = [(n, p) for n in (1000, 5000, 20000, 100000) for p in (20, 50, 100, 200, 400) if n >= 5 * p]
QUICK = [(5000, 50), (20000, 100), (20000, 400)]


def best_time(fit, budget=0.5, most=7):
    """Median of ``most`` fits, or of those that fit in ``budget`` seconds (at least 3)."""
    times, start = [], time.perf_counter()
    while len(times) < most and (len(times) < 3 or time.perf_counter() - start < budget):
        t = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def measure(n, p, s, seed, abess):
    """``[time precompute=False, time True, time abess (nan without it), same support]`` on one data set."""
    X, y, *_ = simulate("regression", n, p, s, 0.35, 1, 1.0, 10, seed)
    fits, row = {}, []
    for precompute in (False, True):
        def fit(precompute=precompute):
            fits[precompute] = IHTRegressor(k=s, precompute=precompute).fit(X, y)
        row.append(best_time(fit))
    if abess is not None:
        row.append(best_time(lambda: abess.linear.LinearRegression(support_size=[s], thread=1).fit(X, y)))
    else:
        row.append(np.nan)
    row.append(np.array_equal(fits[False].support_, fits[True].support_))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three sizes")
    parser.add_argument("--repeats", type=int, default=2, help="data sets per size")
    parser.add_argument("--no-abess", action="store_true", help="leave abess out")
    parser.add_argument("--sizes", nargs="+", metavar="N,P", help="these sizes instead of the grid")
    args = parser.parse_args()
    abess = None
    if not args.no_abess:
        try:
            import abess.linear
        except ImportError:
            print("abess is not installed (pip install -e '.[bench]'): its column is left empty")
    warnings.simplefilter("ignore")
    print("| n | p | s | auto | precompute=False (ms) | True (ms) | True / False | abess (ms) | True / abess "
          "| same support |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        sizes = [tuple(int(v) for v in size.split(",")) for size in args.sizes] if args.sizes else None
        for n, p in sizes or (QUICK if args.quick else GRID):
            s = max(2, min(20, p // 10))
            rows = [measure(n, p, s, 1000 * n + p + repeat, abess) for repeat in range(args.repeats)]
            R = np.array(rows, dtype=float)
            off, on, ab = (np.median(R[:, j]) * 1e3 for j in range(3))
            auto = n >= _GRAM_AUTO_RATIO * p and p <= _GRAM_AUTO_MAX_FEATURES
            print(f"| {n} | {p} | {s} | {'Gram' if auto else 'X'} | {off:.2f} | {on:.2f} | {on / off:.2f} | "
                  f"{ab:.2f} | {on / ab:.2f} | {int(R[:, 3].sum())}/{len(rows)} |")


if __name__ == "__main__":
    main()
