"""CPU time of ``IHTRegressor`` or ``IOBSRegressor(loss=...)`` against abess on ``compare_glm.py``'s small designs.

For each family (``poisson``, ``gamma-log``, ``gamma-inverse``, ``huber``)
and each setting of ``benchmarks/compare_glm.py`` at ``n = 200, p = 100, k =
5`` (correlation 0 or 0.7, weak or strong effects), 4 data sets: the CPU
time (``time.process_time``, the minimum of 7 fits: load on a shared machine
preempts a fit of a few milliseconds, which its wall time counts and its CPU
time does not) of ``IHTRegressor(k, loss=...)`` (``--estimator IOBS``:
``IOBSRegressor``) and of abess's ``PoissonRegression`` /
``GammaRegression(support_size=[k], thread=1)``, one BLAS thread, the
methods' fits alternated; the median over the data sets per setting, and the
ratio. ``paired``: the median over data sets and rounds of the ratio of this
checkout's fit time to ``--old``'s fit in the same round (less noisy on a
loaded machine than the ratio of minima). ``--patience`` / ``--decrement``
change this checkout's fits only (the studies of the support-jump patience
and the candidate-refit decrement).

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


def cpu_times(fits, repeats=7):
    """The CPU times of ``repeats`` rounds of calls of each of ``fits`` (None: nan), one list per fit.

    The order rotates from one round to the next: the fit after another method's (its data evicted from
    the caches) took up to 20 % longer than the same fit after itself, in a run timing one revision twice.
    """
    times = [[np.nan] * repeats for _ in fits]
    for r in range(repeats):
        for i in range(len(fits)):
            j = (i + r) % len(fits)
            if fits[j] is not None:
                start = time.process_time()
                fits[j]()
                times[j][r] = time.process_time() - start
    return times


def old_estimator(directory, name="IHTRegressor"):
    """The estimator ``name`` of the package in ``directory``, imported as ``sparse_estimators_old``."""
    target = Path(tempfile.mkdtemp())
    shutil.copytree(Path(directory) / "sparse_estimators", target / "sparse_estimators_old")
    sys.path.insert(0, str(target))
    return getattr(importlib.import_module("sparse_estimators_old"), name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default="poisson,gamma-log,gamma-inverse,huber")
    parser.add_argument("--old", default=None, help="directory holding an older sparse_estimators/")
    parser.add_argument("--datasets", type=int, default=4)
    parser.add_argument("--estimator", choices=("IHT", "IOBS"), default="IHT")
    parser.add_argument("--rounds", type=int, default=7, help="alternated fits of each method per data set")
    parser.add_argument("--patience", type=int, default=None,
                        help="the support-jump patience of this checkout's fits (default: the estimator's)")
    parser.add_argument("--decrement", type=float, default=None,
                        help="_policy.CANDIDATE_DECREMENT in this checkout's fits (default: as it is)")
    args = parser.parse_args(argv)
    from abess.linear import GammaRegression, PoissonRegression

    import sparse_estimators

    name = f"{args.estimator}Regressor"
    Est = getattr(sparse_estimators, name)
    Old = old_estimator(args.old, name) if args.old else None
    if args.decrement is not None:
        sparse_estimators._policy.CANDIDATE_DECREMENT = args.decrement
    if args.patience is not None:  # (the _policy constant the estimator names: this checkout's fits only)
        setattr(sparse_estimators._policy, Est._support_refit_patience, args.patience)
    ours = Est
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
                        rows.append(cpu_times([
                            lambda: ours(k=k, loss=loss).fit(X, y),  # noqa: B023
                            (lambda: Old(k=k, loss=loss).fit(X, y)) if Old else None,  # noqa: B023
                            (lambda: Abess(support_size=[k], thread=1).fit(X, y)) if Abess else None],  # noqa: B023
                            args.rounds))
                    rows = np.array(rows)  # (data set, method, round)
                    new, old, peer = 1000 * np.median(rows.min(axis=2), axis=0)
                    paired = np.median(rows[:, 0] / rows[:, 1])  # (the rounds' adjacent fits: the same load)
                    e = args.estimator
                    print(f"{family} n={n} p={p} rho={rho} {signal}: {e} {new:.2f} ms, old {old:.2f} ms, "
                          f"abess {peer:.2f} ms; {e}/abess {new / peer:.2f}, old/abess {old / peer:.2f}, "
                          f"{e}/old {new / old:.2f}, paired {paired:.3f}", flush=True)

if __name__ == "__main__":
    main()
