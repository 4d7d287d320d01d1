"""CPU time of the I-OBS fits of the Poisson, Gamma and Cox losses against abess, alternated in one run.

For each setting, ``--repeats`` data sets (``compare_glm.simulate``'s Poisson
and Gamma (log link) designs, strong signal; ``_cox_peers.design`` for Cox);
on each, the fits of ``IOBSRegressor(k, loss=...)`` (or
``IOBSCoxPHSurvivalAnalysis(k)``), abess's ``PoissonRegression`` /
``GammaRegression`` / ``CoxPHSurvivalAnalysis(support_size=[k], thread=1)``
and ``IHTRegressor(k, loss=...)`` alternate, ``--fits`` rounds each, with
BLAS pinned to one thread. Printed: the median over data sets of each
method's median process CPU time (ms), its ratio to abess's (the median of the
per-data-set ratios) and the mean number of I-OBS iterations. Ratios within
one run survive a loaded machine; absolute times do not. ``--previous-route``
adds ``IOBS prev``: ``IOBSRegressor`` (Poisson, Gamma) on the Hessian route
'auto' chose before the screened (Poisson) and fisher (Gamma) routes
('woodbury' at n < p + 1, else 'dense'), in the same alternation: before and
after in one run. ``--baseline DIR`` adds ``IOBS baseline``: ``IOBSRegressor``
of another checkout's package (``DIR/sparse_estimators``, e.g. a ``git
archive`` of main, imported beside this one as ``_baseline_sparse_estimators``)
in the same alternation, with ``new / baseline`` (the median of the per-data-set
ratios) and the number of data sets where both found the same support.
As ``small_fits.py``, the script runs itself again in glibc malloc's
"fast-malloc" state (``benchmarks/_malloc.py``), in which abess's small fits
run inside ``compare_peers.py``; ``--malloc-default`` keeps the environment as
it is. The first line says which state ran.

    PYTHONPATH=. python benchmarks/iobs_glm_time.py [--repeats 5] [--fits 7] [--previous-route] [--baseline DIR]
        [--malloc-default]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _malloc import ensure_fast_malloc, malloc_state  # noqa: E402

SETTINGS = [(200, 100, 5, 0.0), (200, 100, 5, 0.5), (500, 1000, 10, 0.0), (500, 1000, 10, 0.5)]


def data(family, n, p, k, rho, seed):
    if family == "cox":
        from _cox_peers import design

        X, y, _ = design(n, p, rho, k, seed)
        return X, y, np.column_stack([y["time"], y["event"].astype(float)])
    from compare_glm import simulate

    X, y, *_ = simulate("poisson" if family == "poisson" else "gamma-log", n, p, k, rho, "strong", 1, seed)
    return X, y, y


def baseline_package(directory):
    """Another checkout's ``sparse_estimators``, copied and imported as ``_baseline_sparse_estimators``."""
    import importlib
    import shutil
    import tempfile

    target = Path(tempfile.mkdtemp()) / "_baseline_sparse_estimators"
    shutil.copytree(Path(directory) / "sparse_estimators", target)
    sys.path.insert(0, str(target.parent))
    return importlib.import_module("_baseline_sparse_estimators")


def methods(family, k, n=None, p=None, previous=False, baseline=None):
    from abess.linear import CoxPHSurvivalAnalysis, GammaRegression, PoissonRegression

    from sparse_estimators import IHTRegressor, IOBSRegressor
    from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis

    if family == "cox":
        return {"IOBS": lambda: IOBSCoxPHSurvivalAnalysis(k=k), "IHT": lambda: IHTCoxPHSurvivalAnalysis(k=k),
                "abess": lambda: CoxPHSurvivalAnalysis(support_size=[k], thread=1)}
    peer = PoissonRegression if family == "poisson" else GammaRegression
    out = {"IOBS": lambda: IOBSRegressor(k=k, loss=family), "IHT": lambda: IHTRegressor(k=k, loss=family),
           "abess": lambda: peer(support_size=[k], thread=1)}
    if previous:
        route = "woodbury" if n < p + 1 else "dense"
        out["IOBS prev"] = lambda: IOBSRegressor(k=k, loss=family, hessian=route)
    if baseline is not None:
        out["IOBS baseline"] = lambda: baseline.IOBSRegressor(k=k, loss=family)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="data sets per setting")
    parser.add_argument("--fits", type=int, default=7, help="alternated fits of each method per data set")
    parser.add_argument("--families", default="poisson,gamma,cox")
    parser.add_argument("--previous-route", action="store_true",
                        help="also time I-OBS on the route 'auto' chose before the screened and fisher routes")
    parser.add_argument("--baseline", default=None,
                        help="a checkout whose IOBSRegressor is timed beside this one's ('IOBS baseline')")
    parser.add_argument("--malloc-default", action="store_true",
                        help="keep the environment's malloc settings (default: re-run in the fast-malloc state)")
    args = parser.parse_args(argv)
    if not args.malloc_default:
        ensure_fast_malloc(__file__, sys.argv[1:] if argv is None else list(argv))
    print(f"malloc state: {malloc_state()}")
    warnings.simplefilter("ignore")
    prev = args.previous_route
    baseline = None if args.baseline is None else baseline_package(args.baseline)
    print("family | n | p | k | rho | IOBS ms | IHT ms | abess ms | IOBS / abess | IHT / abess | IOBS iterations"
          + (" | IOBS prev / abess" if prev else "")
          + (" | IOBS baseline / abess | IOBS / baseline | same supports" if baseline else ""))
    with threadpool_limits(1):
        for family in args.families.split(","):
            for n, p, k, rho in SETTINGS:
                ms = methods(family, k, n, p, prev and family != "cox", baseline if family != "cox" else None)
                times = {name: [] for name in ms}
                iters, same = [], 0
                for seed in range(args.repeats):
                    X, y, y_peer = data(family, n, p, k, rho, seed)
                    per = {name: [] for name in ms}
                    supports = {}
                    for _ in range(args.fits):
                        for name, make in ms.items():
                            target = y_peer if name == "abess" else y
                            c = time.process_time()
                            model = make().fit(X, target)
                            per[name].append(time.process_time() - c)
                            if name == "IOBS":
                                iters.append(model.n_iter_)
                            if name in ("IOBS", "IOBS baseline"):
                                supports[name] = np.flatnonzero(model.coef_)
                    if len(supports) == 2:
                        same += np.array_equal(supports["IOBS"], supports["IOBS baseline"])
                    for name in ms:
                        times[name].append(np.median(per[name]))
                med = {name: 1e3 * np.median(v) for name, v in times.items()}
                ratio = {name: np.median(np.array(times[name]) / np.array(times["abess"])) for name in ms}
                print(f"{family} | {n} | {p} | {k} | {rho} | {med['IOBS']:.2f} | {med['IHT']:.2f} | "
                      f"{med['abess']:.2f} | {ratio['IOBS']:.2f} | {ratio['IHT']:.2f} | {np.mean(iters):.1f}"
                      + (f" | {ratio['IOBS prev']:.2f}" if "IOBS prev" in ratio else "")
                      + (f" | {ratio['IOBS baseline']:.2f} | "
                         f"{np.median(np.array(times['IOBS']) / np.array(times['IOBS baseline'])):.3f} | "
                         f"{same}/{args.repeats}" if "IOBS baseline" in ratio else ""), flush=True)


if __name__ == "__main__":
    main()
