"""Where the Cox models' splicing search stops, against abess: refitted partial likelihoods and support F1.

On the synthetic grid of ``benchmarks/_cox_peers.py`` (same designs and
seeds: ``1000 * rep + p + 10 * rho + n``), each data set is fitted by abess
(``CoxPHSurvivalAnalysis(support_size=[k])``) and by ours with several
splicing options; every support is refitted by ``CoxLoss`` (Breslow, no
penalty) and its minus twice log partial likelihood compared with abess's.
Printed per setting and variant: the mean F1 minus abess's +- its standard
error, and on how many data sets our support's likelihood is worse / better
than abess's. The variants (options of ``splice``; the regressors' are
``screening_start='abess'`` and ``switch_gate=0.1`` on this grid):

* ``old``: the regressors' options (the Cox models' before ``swap_candidates``);
* ``swap5``: plus ``swap_candidates=5`` (the Cox models' default now);
* ``swap5-gates0``: plus ``gate=0, switch_gate=0`` (every decrease accepted).

``python benchmarks/cox_splicing_search.py --start 0 --repeats 40`` uses the
page's data sets; the changelog's figures add ``--start 100``, ``200`` and
``300``. ``--cpu`` instead prints the CPU time of a fit with ``swap5`` over
``old`` (median over 15 data sets at rho = 0.5, seeds 5000 on, the least of
3 fits each, the two interleaved).
"""

import argparse
import sys
import time
import warnings

import numpy as np
from _cox_peers import GRID, K_TRUE, _abess, design, f1

from sparse_estimators.losses import CoxLoss
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis

REGRESSORS = {"screening_start": "abess", "switch_gate": 0.1}
VARIANTS = {"old": REGRESSORS, "swap5": REGRESSORS | {"swap_candidates": 5},
            "swap5-gates0": REGRESSORS | {"swap_candidates": 5, "gate": 0.0, "switch_gate": 0.0}}
ALGORITHMS = {"IHT": IHTCoxPHSurvivalAnalysis, "IOBS": IOBSCoxPHSurvivalAnalysis}


def with_options(cls, options):
    """``cls`` with its splicing options replaced by ``options``."""
    return type(cls.__name__, (cls,), {"_splice_kwargs": lambda self, loss, k: dict(options)})


def deviance(loss, support):
    """Minus twice the log partial likelihood of the unpenalized refit on ``support``."""
    W, b = loss.refit(np.asarray(support), np.zeros((loss.n_features, 1)), np.zeros(1))
    return 2 * loss.n_samples * loss.value(W, b)


def cpu_ratios(repeats=15):
    """CPU time of a fit with ``swap5`` over ``old`` (see the module docstring)."""
    for n, p, rho in [(200, 100, 0.5), (300, 500, 0.5)]:
        for algorithm, cls in ALGORITHMS.items():
            times = {"old": [], "swap5": []}
            for rep in range(repeats):
                X, y, _ = design(n, p, rho, K_TRUE, seed=5000 + rep)
                order = ("old", "swap5") if rep % 2 else ("swap5", "old")
                for variant in order:
                    model, best = with_options(cls, VARIANTS[variant])(k=K_TRUE), np.inf
                    for _ in range(3):
                        start = time.process_time()
                        model.fit(X, y)
                        best = min(best, time.process_time() - start)
                    times[variant].append(best)
            ratio = np.asarray(times["swap5"]) / np.asarray(times["old"])
            print(f"n={n} p={p} rho={rho} {algorithm}: CPU swap5 / old median {np.median(ratio):.3f} "
                  f"(min {ratio.min():.2f}, max {ratio.max():.2f}); old median {1e3 * np.median(times['old']):.0f} ms",
                  flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=0, help="first repetition (seed) index")
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--algorithms", default="IHT,IOBS")
    parser.add_argument("--cpu", action="store_true", help="CPU time of swap5 over old instead")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.cpu:
        return cpu_ratios()
    for n, p, rho in GRID:
        diffs, worse, better = {}, {}, {}
        for rep in range(args.start, args.start + args.repeats):
            X, y, truth = design(n, p, rho, K_TRUE, seed=1000 * rep + p + int(10 * rho) + n)
            loss = CoxLoss(X, y["event"], y["time"], None, "breslow", 0.0)
            ref = np.flatnonzero(_abess(X, y, K_TRUE))
            ref_f1, ref_dev = f1(ref, truth), deviance(loss, ref)
            for algorithm in args.algorithms.split(","):
                for variant, options in VARIANTS.items():
                    key = f"{algorithm} {variant}"
                    support = with_options(ALGORITHMS[algorithm], options)(k=K_TRUE).fit(X, y).support_
                    diffs.setdefault(key, []).append(f1(support, truth) - ref_f1)
                    gap = deviance(loss, support) - ref_dev
                    worse[key] = worse.get(key, 0) + int(gap > 1e-6)
                    better[key] = better.get(key, 0) + int(gap < -1e-6)
        print(f"n={n} p={p} rho={rho} ({args.repeats} data sets from repetition {args.start})")
        for key, d in diffs.items():
            d = np.asarray(d)
            print(f"  {key:18s} F1 - abess {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(d.size):.4f}; "
                  f"likelihood worse than abess's on {worse[key]}, better on {better[key]}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
