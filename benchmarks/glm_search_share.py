"""Where a small Poisson / Gamma fit spends its time in abess's search, and how many Newton refits it runs.

``IHTRegressor(loss='poisson' | 'gamma')`` runs abess's search (the
"important search", ``solvers/_splice_abess.py``) after its own; its
candidates are screened by their quadratic model (the weighted
least-squares surrogate at the current fit, ``losses/_pointwise_newton.py``)
and the survivors refitted by Newton's method. On fresh data sets of
:source:`benchmarks/compare_glm.py`'s designs (as
:source:`benchmarks/glm_route_paired.py`'s), this prints per family the
mean CPU time of a fit, of abess's search within it, and of that search's
Newton refits (the start's refit and the candidates'), with their number
per fit: the most that a cheaper candidate evaluation could save.
``--variant``: one of ``glm_route_paired.py``'s, applied in this process.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/glm_search_share.py --size 200,100,5 --datasets 400
"""

import argparse
import contextlib
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_glm import simulate  # noqa: E402
from glm_route_paired import DESIGNS, FAMILIES, variant  # noqa: E402

import sparse_estimators.losses._pointwise_newton as newton_module  # noqa: E402
import sparse_estimators.solvers._splice_abess as abess_module  # noqa: E402
from sparse_estimators import IHTRegressor  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="200,100,5", help="n,p,k")
    parser.add_argument("--datasets", type=int, default=400, help="data sets per family")
    parser.add_argument("--seed", type=int, default=7000, help="first data set's seed")
    parser.add_argument("--variant", default=None, help="a variant of glm_route_paired.py (default: none)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    n, p, k = (int(v) for v in args.size.split(","))
    totals = {"search": 0.0, "newton": 0.0, "refits": 0}
    inside = [False]
    newton = newton_module._PointwiseNewtonRefit._newton
    search = None  # (abess's search as the variant leaves it, read below)

    def timed_search(*a, **kw):
        inside[0], start = True, time.process_time()
        try:
            return search(*a, **kw)
        finally:
            totals["search"] += time.process_time() - start
            inside[0] = False

    def timed_newton(self, *a, **kw):
        if not inside[0]:
            return newton(self, *a, **kw)
        start = time.process_time()
        try:
            return newton(self, *a, **kw)
        finally:
            totals["newton"] += time.process_time() - start
            totals["refits"] += 1

    print(f"n={n} p={p} k={k}; {args.datasets} data sets, seeds from {args.seed}; variant {args.variant}")
    print(f"{'family':14s} {'fit ms':>7s} {'search ms':>9s} {'Newton ms':>9s} {'refits/fit':>10s}")
    with variant(args.variant) if args.variant else contextlib.nullcontext():
        search = abess_module._important_search  # (the variant's, if it patches it)
        abess_module._important_search = timed_search
        newton_module._PointwiseNewtonRefit._newton = timed_newton
        try:
            for family in FAMILIES:
                loss = "poisson" if family == "poisson" else "gamma"
                data = []
                for i in range(args.datasets):
                    rho, signal = DESIGNS[i % len(DESIGNS)]
                    data.append(simulate(family, n, p, k, rho, signal, 1, args.seed + i)[:2])
                totals.update(search=0.0, newton=0.0, refits=0)
                start = time.process_time()
                for X, y in data:
                    IHTRegressor(k=k, loss=loss).fit(X, y)
                fit = time.process_time() - start
                m = len(data)
                print(f"{family:14s} {1e3 * fit / m:7.3f} {1e3 * totals['search'] / m:9.3f} "
                      f"{1e3 * totals['newton'] / m:9.3f} {totals['refits'] / m:10.2f}", flush=True)
        finally:
            newton_module._PointwiseNewtonRefit._newton = newton
            abess_module._important_search = search


if __name__ == "__main__":
    main()
