"""Support F1 and CPU time of two variants of the regressors' splicing search, paired on the same data sets.

Variants (patched in this process, fitted one after the other on each data
set, the order alternating between data sets):

* ``base``: the estimators as they are;
* ``swap=K``: the first splicing search of ``IHTRegressor`` / ``IOBSRegressor`` with a loss other than least
  squares (Poisson, Gamma, Huber) tries ``K`` single exchanges per round (``splice``'s ``swap_candidates``);
* ``swapall=K``: the same for every loss, least squares included.

Designs: ``compare_glm.py``'s ``simulate`` (``--families`` poisson, gamma-log,
gamma-inverse, huber; rho 0 and 0.7, weak and strong signal) and
``_peer_designs.py``'s ``simulate`` (``regression``: AR(1) rho 0.35 / 0.7,
beta types 1 and 2, SNR 1 and 5). Printed per family, size and variant pair:
mean F1 of each, the paired difference (new - base) with its standard error,
fits changed up / down, and the CPU time ratio new / base (median over data
sets of the per-data-set ratio, and the ratio of the totals).

    PYTHONPATH=. python benchmarks/swap_candidates_paired.py --families huber poisson --sizes 200,100,5 --repeats 20
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

from _peer_designs import simulate as simulate_peer  # noqa: E402
from compare_glm import simulate as simulate_glm  # noqa: E402

from sparse_estimators import IHTRegressor, IOBSRegressor  # noqa: E402

LOSS = {"poisson": "poisson", "gamma-log": "gamma", "gamma-inverse": "gamma", "huber": "huber",
        "regression": "squared_error"}


def f1(support, truth):
    hit = len(set(support) & set(truth))
    return 2 * hit / (len(support) + len(truth)) if hit else 0.0


def _with_swaps(count, every_loss=False):
    """``SparseRegressorBase._splice_kwargs`` adding ``swap_candidates=count`` (the losses other than least squares)."""
    from sparse_estimators.linear_model._regressor import SparseRegressorBase
    from sparse_estimators.losses import GammaLoss, HuberLoss, PoissonLoss

    original = SparseRegressorBase._splice_kwargs

    def kwargs(self, loss, k):
        out = original(self, loss, k)
        if every_loss or isinstance(loss, (PoissonLoss, GammaLoss, HuberLoss)):
            out = out | {"swap_candidates": count}
        return out

    return kwargs


def run(variant, Est, X, y, k, loss):
    """One fit under ``variant``: its support and CPU time."""
    from sparse_estimators.linear_model._regressor import SparseRegressorBase

    name, _, value = variant.partition("=")
    saved = SparseRegressorBase._splice_kwargs
    if name in ("swap", "swapall"):
        SparseRegressorBase._splice_kwargs = _with_swaps(int(value), every_loss=name == "swapall")
    try:
        start = time.process_time()
        model = Est(k=k, loss=loss).fit(X, y)
        elapsed = time.process_time() - start
    finally:
        SparseRegressorBase._splice_kwargs = saved
    return np.flatnonzero(model.coef_), elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="+", default=["huber", "poisson", "gamma-log", "gamma-inverse"])
    parser.add_argument("--sizes", nargs="+", default=["200,100,5"], metavar="N,P,K")
    parser.add_argument("--variants", nargs=2, default=["base", "swap=5"])
    parser.add_argument("--estimators", nargs="+", default=["IHT"], choices=["IHT", "IOBS"])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=500000)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    ests = {"IHT": IHTRegressor, "IOBS": IOBSRegressor}
    with threadpool_limits(1):
        for family, size, est in itertools.product(args.families, args.sizes, args.estimators):
            n, p, k = (int(v) for v in size.split(","))
            if family == "regression":
                designs = list(itertools.product((0.35, 0.7), (1, 2), (1.0, 5.0)))
            else:
                designs = list(itertools.product((0.0, 0.7), ("weak", "strong")))
            scores, times = {v: [] for v in args.variants}, {v: [] for v in args.variants}
            for i, design in itertools.product(range(args.repeats), designs):
                seed = args.first_seed + 1000 * i + designs.index(design)
                if family == "regression":
                    rho, beta_type, snr = design
                    X, y, _, _, beta = simulate_peer("regression", n, p, k, rho, beta_type, snr, 0, seed)
                    truth = np.flatnonzero(beta)
                else:
                    rho, signal = design
                    X, y, _, _, truth = simulate_glm(family, n, p, k, rho, signal, 0, seed)
                order = args.variants if (i + designs.index(design)) % 2 == 0 else args.variants[::-1]
                for v in order:
                    support, elapsed = run(v, ests[est], X, y, k, LOSS[family])
                    scores[v].append(f1(support, truth))
                    times[v].append(elapsed)
            a, b = (np.array(scores[v]) for v in args.variants)
            ta, tb = (np.array(times[v]) for v in args.variants)
            d = b - a
            print(f"{family} n={n} p={p} k={k} {est} ({d.size} data sets): F1 {args.variants[0]} {a.mean():.4f} "
                  f"{args.variants[1]} {b.mean():.4f} diff {d.mean():+.4f} (se {d.std(ddof=1) / np.sqrt(d.size):.4f};"
                  f" {int((d > 0).sum())} up, {int((d < 0).sum())} down); CPU ratio median "
                  f"{np.median(tb / ta):.3f}, totals {tb.sum() / ta.sum():.3f}", flush=True)


if __name__ == "__main__":
    main()
