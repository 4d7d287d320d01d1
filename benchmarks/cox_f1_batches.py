"""Support F1 of the Cox models at exact k against abess on many data sets of the synthetic grid.

The grid and seeds of ``benchmarks/_cox_peers.py`` (data set ``rep`` of a
setting has seed ``1000 * rep + p + 10 * rho + n``; the page uses
``rep < 40``). For ``rep`` in ``[--start, --start + --repeats)`` each data
set is fitted by ``IHTCoxPHSurvivalAnalysis`` and ``IOBSCoxPHSurvivalAnalysis``
(defaults, ``k = 5``) and abess's ``CoxPHSurvivalAnalysis(support_size=[5])``.
Printed per setting: each method's mean F1; ours minus abess's, the mean
per-data-set difference +- its standard error, on how many data sets ours is
worse / better; on how many our support, refitted (Breslow, ``alpha=1e-4``),
has a higher / lower loss than abess's; and the ratio of the median fit
times (machine-dependent).

``python benchmarks/cox_f1_batches.py --start 0 --repeats 200``; the
changelog adds ``--start 200``.
"""

import argparse
import time
import warnings

import numpy as np
from _cox_peers import GRID, K_TRUE, _abess, design, f1

from sparse_estimators.losses import CoxLoss
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis

METHODS = {"IHT": lambda X, y: IHTCoxPHSurvivalAnalysis(k=K_TRUE).fit(X, y).coef_,
           "IOBS": lambda X, y: IOBSCoxPHSurvivalAnalysis(k=K_TRUE).fit(X, y).coef_,
           "abess": lambda X, y: _abess(X, y, K_TRUE)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=0, help="first data set (seed) index")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--settings", default="0,1,2,3", help="indices into _cox_peers.GRID")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for setting in (GRID[int(i)] for i in args.settings.split(",")):
        n, p, rho = setting
        f1s, losses, times = ({m: [] for m in METHODS} for _ in range(3))
        for rep in range(args.start, args.start + args.repeats):
            X, y, truth = design(n, p, rho, K_TRUE, seed=1000 * rep + p + int(10 * rho) + n)
            loss = CoxLoss(X, y["event"], y["time"], None, "breslow", 1e-4)
            for name, fit in METHODS.items():
                start = time.perf_counter()
                support = np.flatnonzero(fit(X, y))
                times[name].append(time.perf_counter() - start)
                f1s[name].append(f1(support, truth))
                losses[name].append(loss.value(*loss.refit(support, np.zeros((p, 1)), np.zeros(1))))
        print(f"n={n}, p={p}, rho={rho}, data sets {args.start}..{args.start + args.repeats - 1}: mean F1 "
              + ", ".join(f"{m} {np.mean(v):.3f}" for m, v in f1s.items()))
        ref_f1, ref_loss, ref_time = (np.asarray(d["abess"]) for d in (f1s, losses, times))
        for name in ("IHT", "IOBS"):
            d = np.asarray(f1s[name]) - ref_f1
            dl = np.asarray(losses[name]) - ref_loss
            print(f"  {name} - abess: F1 {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(d.size):.4f} (worse on "
                  f"{np.sum(d < 0)}, better on {np.sum(d > 0)}); refitted loss higher on {np.sum(dl > 1e-12)}, "
                  f"lower on {np.sum(dl < -1e-12)}; median time / abess's "
                  f"{np.median(times[name]) / np.median(ref_time):.2f}", flush=True)


if __name__ == "__main__":
    main()
