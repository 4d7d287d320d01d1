"""``LowRankImputer(rank=r)`` at a given rank: CPU time, iterations, exact sweeps, hidden-entry error, warnings.

Tables: ``load_diabetes``, ``load_wine``, ``load_breast_cancer``, ``load_iris`` (the complete tables are the
truth), a share of their entries hidden uniformly at random, ``rank`` from 1 to near the column count; and
synthetic tables of :source:`benchmarks/wide_imputer.py` (``F G + 1 c^T``, exact or with 5 % noise, 30 %
hidden) fit at their true rank and two above it. Per fit: CPU time of ``fit_transform`` (one BLAS thread),
``n_iter_``, how many of them are the final exact sweeps (``_als._exact_sweeps``, counted by a wrapper), the
root mean squared error of the imputed hidden entries against the true table in units of each column's
standard deviation (synthetic tables: of the root mean column variance, as ``wide_imputer.py``), and whether a
ConvergenceWarning was raised.

``--no-sweeps`` fits without the final sweeps (softImpute-ALS alone, the fits before the sweeps, without
the held-out check of whether they help); ``--json out.json`` writes every fit, ``--compare a.json b.json``
prints the changes of time, error and warnings per table and in total.

Run: ``python benchmarks/given_rank_imputer.py [--quick] [--seeds 3] [--no-sweeps] [--json out.json]``.
"""

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from sparse_estimators.impute import LowRankImputer, _als, _completion, _imputer

REAL = {"diabetes": load_diabetes, "wine": load_wine, "breast_cancer": load_breast_cancer, "iris": load_iris}
RANKS = {"diabetes": range(1, 10), "wine": range(1, 13), "iris": range(1, 4),
         "breast_cancer": (1, 2, 3, 5, 8, 12, 16, 20, 25, 29)}
SYNTHETIC = ((10, 500, 2), (20, 300, 3), (50, 200, 2), (500, 10, 2), (300, 20, 3), (200, 50, 1))


def cases(args):
    """``(name, truth, X, hidden, rank, spread)`` for each fit."""
    for name in args.data.split(","):
        if name in REAL:
            truth = REAL[name]().data.astype(float)
            for share in args.hidden:
                for seed in range(args.seeds):
                    hidden = np.random.default_rng(seed).uniform(size=truth.shape) < share
                    X = truth.copy()
                    X[hidden] = np.nan
                    for r in RANKS[name]:
                        yield f"{name} {share:.1f}", truth, X, hidden, r, truth.std(axis=0)
        elif name == "synthetic":
            for m, n, r0 in SYNTHETIC:
                for noise in (0.0, 0.05):
                    for seed in range(args.seeds):
                        rng = np.random.default_rng(seed)
                        truth = rng.standard_normal((m, r0)) @ rng.standard_normal((r0, n)) + 3 * rng.standard_normal(n)
                        X = truth + noise * np.sqrt(r0) * rng.standard_normal((m, n))
                        hidden = rng.uniform(size=(m, n)) < 0.3
                        X[hidden] = np.nan
                        for r in (r0, r0 + 2):
                            yield (f"{m}x{n} r{r0} n{noise:g}", truth, X, hidden, r,
                                   np.full(n, np.sqrt(np.mean(truth.var(axis=0)))))


def fit(X, r, max_iter):
    """``(Z, seconds, n_iter, sweeps, warned)``; the sweeps counted by a wrapper of ``_als._exact_sweeps``."""
    counted = []
    original = _als._exact_sweeps

    def counting(*a, **k):
        out = original(*a, **k)
        counted.append(len(out[3]))
        return out

    _als._exact_sweeps = counting
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.process_time()
            imp = LowRankImputer(rank=r, max_iter=max_iter)
            Z = imp.fit_transform(X)
            seconds = time.process_time() - t0
    finally:
        _als._exact_sweeps = original
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return Z, seconds, imp.n_iter_, sum(counted), warned


def compare(a, b):
    A, B = json.load(open(a)), json.load(open(b))
    keyed = {(x["table"], x["seed"], x["rank"]): x for x in A}
    groups = {}
    for y in B:
        x = keyed.get((y["table"], y["seed"], y["rank"]))
        if x is not None:
            groups.setdefault(y["table"], []).append((x, y))
    print(f"{'table':>22} {'fits':>4} | {'time a':>7} {'time b':>7} | {'err a':>7} {'err b':>7} {'max |d|':>8} "
          f"{'worse':>5} | {'warn a':>6} {'warn b':>6}")
    total = [0.0, 0.0, 0, 0, 0.0, 0]
    for table, pairs in groups.items():
        ta, tb = sum(p[0]["seconds"] for p in pairs), sum(p[1]["seconds"] for p in pairs)
        ea, eb = np.mean([p[0]["rmse"] for p in pairs]), np.mean([p[1]["rmse"] for p in pairs])
        d = max(abs(p[1]["rmse"] - p[0]["rmse"]) for p in pairs)
        worse = sum(p[1]["rmse"] > p[0]["rmse"] + 1e-3 for p in pairs)
        wa, wb = sum(p[0]["warned"] for p in pairs), sum(p[1]["warned"] for p in pairs)
        total = [total[0] + ta, total[1] + tb, total[2] + wa, total[3] + wb, max(total[4], d), total[5] + worse]
        print(f"{table:>22} {len(pairs):>4} | {ta:>7.2f} {tb:>7.2f} | {ea:>7.4f} {eb:>7.4f} {d:>8.1e} {worse:>5} | "
              f"{wa:>6} {wb:>6}")
    print(f"{'total':>22} {'':>4} | {total[0]:>7.2f} {total[1]:>7.2f} | {'':>7} {'':>7} {total[4]:>8.1e} "
          f"{total[5]:>5} | {total[2]:>6} {total[3]:>6}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="diabetes,wine,breast_cancer,iris,synthetic")
    parser.add_argument("--hidden", default="0.2,0.4")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--max-iter", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="diabetes and wine, 20 %% hidden, one seed")
    parser.add_argument("--no-sweeps", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--compare", nargs=2, default=None)
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    if args.quick:
        args.data, args.hidden, args.seeds = "diabetes,wine", "0.2", 1
    args.hidden = [float(v) for v in args.hidden.split(",")]
    if args.no_sweeps:  # (softImpute-ALS alone: the final fit without its exact sweeps)
        solve_als = _completion._solve_als
        _completion._solve_als = lambda *a, **k: solve_als(*a, **{**k, "finish": False})
        _imputer.sweeps_help = lambda *a, **k: False  # (nor the held-out check of whether the sweeps help)
    print(f"{'table':>22} {'seed':>4} {'rank':>4} | {'time':>6} {'n_iter':>6} {'sweeps':>6} {'rmse':>7} warned")
    rows, seeds = [], {}
    with threadpool_limits(1):
        for table, truth, X, hidden, r, spread in cases(args):
            seed = seeds[(table, r)] = seeds.get((table, r), -1) + 1
            Z, seconds, n_iter, sweeps, warned = fit(X, r, args.max_iter)
            rmse = float(np.sqrt(np.mean((((Z - truth) / spread)[hidden]) ** 2)))
            rows.append(dict(table=table, seed=seed, rank=r, seconds=seconds, n_iter=int(n_iter), sweeps=int(sweeps),
                             rmse=rmse, warned=bool(warned)))
            print(f"{table:>22} {seed:>4} {r:>4} | {seconds:>6.3f} {n_iter:>6} {sweeps:>6} {rmse:>7.4f} "
                  f"{'yes' if warned else ''}", flush=True)
    print(f"total CPU {sum(x['seconds'] for x in rows):.2f} s, {len(rows)} fits, "
          f"{sum(x['warned'] for x in rows)} ConvergenceWarnings")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
