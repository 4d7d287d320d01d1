"""CPU time of ``IHTRegressor(loss=...)`` against abess on ``compare_glm.py``'s small designs (and an older revision).

For each family (``poisson``, ``gamma-log``, ``gamma-inverse``, ``huber``)
and each setting of ``benchmarks/compare_glm.py`` at ``n = 200, p = 100, k =
5`` (correlation 0 or 0.7, weak or strong effects), 4 data sets: the CPU
time (``time.process_time``, the minimum of 7 fits: load on a shared machine
preempts a fit of a few milliseconds, which its wall time counts and its CPU
time does not) of ``IHTRegressor(k, loss=...)`` and of abess's
``PoissonRegression`` / ``GammaRegression(support_size=[k], thread=1)``, one
BLAS thread; the median over the data sets per setting, and the ratio.

``--old DIR``: also time the package found in ``DIR`` (for instance
``git archive <rev> sparse_estimators | tar -x -C DIR``), imported under
another name in the same process, so that both revisions meet the same load
(its modules that import ``sparse_estimators`` by absolute name take those
from this checkout).

Run ``PYTHONPATH=. python benchmarks/glm_refit_time.py [--old DIR]``.
"""

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_glm import simulate  # noqa: E402

LOSS = {"poisson": "poisson", "gamma-log": "gamma", "gamma-inverse": "gamma", "huber": "huber"}


def cpu_time(fit, repeats=7):
    """The minimum CPU time of ``repeats`` calls of ``fit``."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fit()
        times.append(time.process_time() - start)
    return min(times)


def old_estimator(directory):
    """``IHTRegressor`` of the package in ``directory``, imported as ``sparse_estimators_old``."""
    target = Path(tempfile.mkdtemp())
    shutil.copytree(Path(directory) / "sparse_estimators", target / "sparse_estimators_old")
    sys.path.insert(0, str(target))
    return importlib.import_module("sparse_estimators_old").IHTRegressor


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default="poisson,gamma-log,gamma-inverse,huber")
    parser.add_argument("--old", default=None, help="directory holding an older sparse_estimators/")
    parser.add_argument("--datasets", type=int, default=4)
    args = parser.parse_args(argv)
    from abess.linear import GammaRegression, PoissonRegression

    from sparse_estimators import IHTRegressor

    Old = old_estimator(args.old) if args.old else None
    n, p, k = 200, 100, 5
    with threadpool_limits(1):
        for family in args.families.split(","):
            loss = LOSS[family]
            Abess = None if family == "huber" else (PoissonRegression if family == "poisson" else GammaRegression)
            for rho in (0.0, 0.7):
                for signal in ("weak", "strong"):
                    rows = []
                    for seed in range(args.datasets):
                        X, y, *_ = simulate(family, n, p, k, rho, signal, 1000, seed)
                        new = cpu_time(lambda: IHTRegressor(k=k, loss=loss).fit(X, y))  # noqa: B023
                        old = cpu_time(lambda: Old(k=k, loss=loss).fit(X, y)) if Old else np.nan  # noqa: B023
                        peer = (cpu_time(lambda: Abess(support_size=[k], thread=1).fit(X, y))  # noqa: B023
                                if Abess else np.nan)
                        rows.append((new, old, peer))
                    new, old, peer = 1000 * np.median(np.array(rows), axis=0)
                    print(f"{family} n={n} p={p} rho={rho} {signal}: IHT {new:.2f} ms, old {old:.2f} ms, "
                          f"abess {peer:.2f} ms; IHT/abess {new / peer:.2f}, old/abess {old / peer:.2f}, "
                          f"IHT/old {new / old:.2f}", flush=True)


if __name__ == "__main__":
    main()
