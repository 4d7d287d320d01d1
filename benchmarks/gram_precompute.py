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
``precompute='auto'`` (dense ``X``, at least 10 samples per feature, and at
most 150 features or a Gram matrix cheaper than the products of a fit through
``X``) is chosen from it. ``--omp`` adds scikit-learn's
``OrthogonalMatchingPursuit(n_nonzero_coefs=s)`` (which works through the Gram
matrix when ``n > p``) and the time of ``precompute='auto'`` against it.

``--calibrate`` measures the two constants of the cost model of
``precompute='auto'`` (``GRAM_PRODUCTS_PER_FEATURE``, ``X_FIT_PRODUCTS`` in
``sparse_estimators/_policy.py``), in units of one product with
``X`` (``X @ w`` and ``X^T r``, averaged) timed in the same process: the time
of forming the Gram matrix divided by ``p`` such products, and the time of a
``precompute=False`` fit divided by one product, medians over tall designs.

Usage::

    python benchmarks/gram_precompute.py            # the whole grid (a few minutes)
    python benchmarks/gram_precompute.py --quick    # three sizes
    python benchmarks/gram_precompute.py --sizes 500,100 5000,150   # n,p of your choice
    python benchmarks/gram_precompute.py --calibrate                # the cost model's constants
    python benchmarks/gram_precompute.py --omp --no-abess --repeats 1 --sizes 100000,400 200000,400
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peer_designs import simulate  # noqa: E402

from sparse_estimators import IHTRegressor  # noqa: E402
from sparse_estimators.losses._design import LinearDesign  # noqa: E402

#: tall designs of the calibration (n, p)
CALIBRATION = [(20000, 200), (50000, 200), (100000, 200), (50000, 400), (100000, 400), (50000, 800)]

GRID = [(n, p) for n in (1000, 5000, 20000, 100000) for p in (20, 50, 100, 200, 400) if n >= 5 * p]
QUICK = [(5000, 50), (20000, 100), (20000, 400)]


#: fewest fits per median (``--fits``)
FEWEST = [3]


def best_time(fit, budget=0.5, most=7):
    """Median of ``most`` fits, or of those that fit in ``budget`` seconds (at least ``FEWEST[0]``)."""
    times, start = [], time.perf_counter()
    most = max(most, FEWEST[0])
    while len(times) < most and (len(times) < FEWEST[0] or time.perf_counter() - start < budget):
        t = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def measure(n, p, s, seed, abess, omp=False):
    """``[time precompute=False, time True, time abess, same support, time OMP, F1 ours, F1 OMP]`` on one data set.

    (abess's and OMP's times are nan when left out.)
    """
    X, y, _, _, beta = simulate("regression", n, p, s, 0.35, 1, 1.0, 10, seed)
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
    truth = np.flatnonzero(beta)
    if omp:
        from sklearn.linear_model import OrthogonalMatchingPursuit

        peer = {}
        row.append(best_time(lambda: peer.setdefault("omp", OrthogonalMatchingPursuit(n_nonzero_coefs=s).fit(X, y))))
        ours = fits[IHTRegressor(k=s)._uses_gram(X)]
        row += [_f1(ours.support_, truth), _f1(np.flatnonzero(peer["omp"].coef_), truth)]
    else:
        row += [np.nan, np.nan, np.nan]
    return row


def _f1(selected, truth):
    tp = len(set(np.asarray(selected).tolist()) & set(truth.tolist()))
    return 2 * tp / (len(selected) + len(truth))


def calibrate(sizes, repeats):
    """Print the cost model's constants: Gram formation per feature and a plain fit, in products with ``X``."""
    print("| n | p | s | product (ms) | Gram (s) | Gram / (p products) | fit precompute=False (s) | fit / product |")
    print("|---|---|---|---|---|---|---|---|")
    per_feature, per_fit = [], []
    for n, p in sizes:
        s = max(2, min(20, p // 10))
        X, y, *_ = simulate("regression", n, p, s, 0.35, 1, 1.0, 10, 1000 * n + p)
        design = LinearDesign(X, X.mean(axis=0))
        w, r, sw = np.ones((p, 1)), np.ones((n, 1)), np.full(n, 1.0 / n)
        products, grams, fits = [], [], []
        for _ in range(repeats):  # (interleaved, so that the machine's load weighs on all three alike)
            start = time.perf_counter()
            design.matvec(w)
            design.rmatvec(r)
            products.append((time.perf_counter() - start) / 2)
            start = time.perf_counter()
            design.weighted_gram(sw)
            grams.append(time.perf_counter() - start)
            start = time.perf_counter()
            IHTRegressor(k=s, precompute=False).fit(X, y)
            fits.append(time.perf_counter() - start)
        product, gram, fit = (float(np.median(v)) for v in (products, grams, fits))
        per_feature.append(gram / (p * product))
        per_fit.append(fit / product)
        print(f"| {n} | {p} | {s} | {product * 1e3:.1f} | {gram:.2f} | {per_feature[-1]:.3f} | {fit:.2f} | "
              f"{per_fit[-1]:.1f} |", flush=True)
    print(f"\nGRAM_PRODUCTS_PER_FEATURE = {np.median(per_feature):.3f}  (median)")
    print(f"X_FIT_PRODUCTS = {np.median(per_fit):.0f}  (median)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three sizes")
    parser.add_argument("--repeats", type=int, default=2, help="data sets per size")
    parser.add_argument("--no-abess", action="store_true", help="leave abess out")
    parser.add_argument("--sizes", nargs="+", metavar="N,P", help="these sizes instead of the grid")
    parser.add_argument("--omp", action="store_true", help="add scikit-learn's OMP and 'auto' against it")
    parser.add_argument("--calibrate", action="store_true", help="measure the constants of the cost model")
    parser.add_argument("--fits", type=int, default=3, help="fewest fits per timing (1 for the largest sizes)")
    args = parser.parse_args()
    FEWEST[0] = args.fits
    sizes = [tuple(int(v) for v in size.split(",")) for size in args.sizes] if args.sizes else None
    if args.calibrate:
        with threadpool_limits(1):
            calibrate(sizes or CALIBRATION, max(args.repeats, 3))
        return
    abess = None
    if not args.no_abess:
        try:
            import abess.linear
        except ImportError:
            print("abess is not installed (pip install -e '.[bench]'): its column is left empty")
    warnings.simplefilter("ignore")
    omp = ("| OMP (ms) | auto / OMP | F1 auto | F1 OMP " if args.omp else "", "|---|---|---|---" if args.omp else "")
    print("| n | p | s | auto | precompute=False (ms) | True (ms) | True / False | abess (ms) | True / abess "
          f"| same support {omp[0]}|")
    print(f"|---|---|---|---|---|---|---|---|---|---{omp[1]}|")
    with threadpool_limits(1):
        for n, p in sizes or (QUICK if args.quick else GRID):
            s = max(2, min(20, p // 10))
            rows = [measure(n, p, s, 1000 * n + p + repeat, abess, args.omp) for repeat in range(args.repeats)]
            R = np.array(rows, dtype=float)
            off, on, ab = (np.median(R[:, j]) * 1e3 for j in range(3))
            auto = IHTRegressor(k=s)._uses_gram(np.empty((n, p)))
            extra = ""
            if args.omp:
                t_omp = np.median(R[:, 4]) * 1e3
                extra = (f"| {t_omp:.2f} | {(on if auto else off) / t_omp:.2f} | {R[:, 5].mean():.3f} "
                         f"| {R[:, 6].mean():.3f} ")
            print(f"| {n} | {p} | {s} | {'Gram' if auto else 'X'} | {off:.2f} | {on:.2f} | {on / off:.2f} | "
                  f"{ab:.2f} | {on / ab:.2f} | {int(R[:, 3].sum())}/{len(rows)} {extra}|", flush=True)


if __name__ == "__main__":
    main()
