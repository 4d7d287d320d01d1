"""Peak memory of LowRankImputer.fit_transform against complete_matrix on the same observed entries.

A dense ``m x n`` array with a share ``density`` of its entries observed
(NaN elsewhere; a rank-5 matrix plus noise) is built first; then, in a
fresh subprocess per measurement, the peak of the memory traced by
``tracemalloc`` (NumPy's buffers included) from the call's start to its
end, so the input is excluded:

- ``imputer``: ``LowRankImputer(rank=5, solver='accelerated', max_iter=10,
  tol=0).fit_transform(X)`` (the other parameters at their defaults; the
  solver of ``complete_matrix``'s default, the imputer's until version
  0.1.0);
- ``complete_matrix``: ``complete_matrix((rows, cols, values), 5,
  shape=X.shape, center=True, max_iter=10, tol=0)`` on the same observed
  entries (their coordinates built before the measurement, as a caller
  holding them would have them).

The imputer must also produce its output (``m x n`` float64, the size of
the input), so its overhead is its peak minus the output's size; the goal
is that overhead within the completion's peak plus the factors. One BLAS
thread; time is wall-clock on a possibly loaded machine (compare the two
in the same run).

Run: ``python benchmarks/bench_imputer_memory.py`` (``--m 20000 --n 5000
--density 0.02`` is the default size; ``--m 2000 --n 500`` a small one).
"""

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

RANK, MAX_ITER = 5, 10


def make(m, n, density, seed=0):
    """The dense array with NaN at the hidden entries (built in row blocks: no second m x n temporary)."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((m, RANK)), rng.standard_normal((RANK, n))
    X = np.empty((m, n))
    for start in range(0, m, 1000):
        block = A[start:start + 1000] @ B
        block += 0.1 * rng.standard_normal(block.shape)
        block[rng.uniform(size=block.shape) >= density] = np.nan
        X[start:start + 1000] = block
    return X


def measure(case, m, n, density):
    """Peak traced bytes and seconds of one case, the input excluded."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sparse_estimators.impute import LowRankImputer, complete_matrix

    X = make(m, n, density)
    if case == "complete_matrix":
        rows, cols = np.nonzero(~np.isnan(X))
        values = X[rows, cols]
        del X
        run = lambda: complete_matrix((rows, cols, values), RANK, shape=(m, n), center=True,  # noqa: E731
                                      max_iter=MAX_ITER, tol=0)
    else:
        run = lambda: LowRankImputer(rank=RANK, solver="accelerated", max_iter=MAX_ITER,  # noqa: E731
                                     tol=0).fit_transform(X)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (tol=0: the fixed number of iterations warns)
        tracemalloc.start()
        start = time.perf_counter()
        out = run()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    del out
    return {"case": case, "peak": peak, "seconds": seconds, "input": m * n * 8}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=20000)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--density", type=float, default=0.02)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(measure(args.case, args.m, args.n, args.density)))
        return
    results = {}
    for case in ("complete_matrix", "imputer"):
        out = subprocess.run([sys.executable, __file__, "--case", case, "--m", str(args.m), "--n", str(args.n),
                              "--density", str(args.density)], capture_output=True, text=True, check=True)
        results[case] = json.loads(out.stdout.strip().splitlines()[-1])
    mb = 2.0 ** 20
    size = args.m * args.n * 8
    comp, imp = results["complete_matrix"], results["imputer"]
    print(f"{args.m} x {args.n}, {args.density:.0%} observed, input {size / mb:.0f} MB, rank {RANK}, "
          f"{MAX_ITER} iterations, one BLAS thread")
    print(f"complete_matrix: peak {comp['peak'] / mb:.0f} MB ({comp['peak'] / size:.3f}x the input), "
          f"{comp['seconds']:.2f} s")
    print(f"LowRankImputer.fit_transform: peak {imp['peak'] / mb:.0f} MB ({imp['peak'] / size:.3f}x the input), "
          f"overhead beyond the output {(imp['peak'] - size) / mb:.0f} MB "
          f"({(imp['peak'] - size) / max(comp['peak'], 1):.2f}x complete_matrix's peak), {imp['seconds']:.2f} s "
          f"({imp['seconds'] / comp['seconds']:.2f}x complete_matrix's time)")


if __name__ == "__main__":
    main()
