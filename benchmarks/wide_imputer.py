"""``LowRankImputer()`` at its defaults on wide tables of low rank, and on the same tables transposed (tall).

Each table is ``F G + 1 c^T`` (``F``: m x r, ``G``: r x n, standard normal; column offsets ``c`` of standard
deviation 3), exact or plus Gaussian noise of 5 % of the low-rank part's entry spread (``--noise``), with a
share of the entries hidden uniformly at random. Printed per case (mean over the seeds): the rank chosen, the
completion's iterations, the root mean squared error of the imputed hidden entries against the noiseless
table in units of the column spread (the root mean of the columns' variances: the column means score about
1; a column's own standard deviation, near 0 for some columns of a rank-1 table, would let those dominate),
the same on the *determined* hidden entries only (in a column with at least ``r + 1`` observed entries, for its ``r``
loadings and its offset, and a row with at least ``r``: the others cannot be recovered from the
observations by any method), and the time of ``fit_transform`` (one BLAS thread); ``SimpleImputer`` and
``KNNImputer`` (5 neighbours) as references (``--no-peers`` leaves them out).

Run: ``python benchmarks/wide_imputer.py`` (``--quick``: two seeds, 30 % hidden; ``--shapes 10x500,20x300``;
``--tall``: the transposed tables too; ``--params '{"tol": 1e-5}'``: ``LowRankImputer``'s parameters, JSON).
"""

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.impute import KNNImputer, SimpleImputer
from threadpoolctl import threadpool_limits

from sparse_estimators.impute import LowRankImputer


def table(m, n, r, share, seed, noise):
    """The noiseless table, the observed one with NaN at the hidden entries, and the hidden entries' mask."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) + 3.0 * rng.standard_normal(n)
    X = truth + noise * np.sqrt(r) * rng.standard_normal((m, n))
    hidden = rng.uniform(size=(m, n)) < share
    X[hidden] = np.nan
    return truth, X, hidden


def errors(Z, truth, hidden, r):
    """Hidden-entry RMSE in units of the column spread: all hidden entries, and the determined ones."""
    E = (Z - truth) / np.sqrt(np.mean(truth.var(axis=0)))
    observed = ~hidden
    determined = hidden & (observed.sum(axis=0) >= r + 1)[None, :] & (observed.sum(axis=1) >= r)[:, None]
    rmse = float(np.sqrt(np.mean(E[hidden] ** 2)))
    return rmse, float(np.sqrt(np.mean(E[determined] ** 2))) if determined.any() else np.nan


def run(imputer, truth, X, hidden, r):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        Z = imputer.fit_transform(X)
        elapsed = time.process_time() - t0
    if Z.shape != X.shape:  # (an empty column dropped by a peer: not comparable)
        return None
    return (*errors(Z, truth, hidden, r), elapsed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--shapes", default="10x500,20x300,30x1000,50x200")
    parser.add_argument("--ranks", default="1,2,3,4")
    parser.add_argument("--shares", default=None, help="hidden shares, e.g. 0.1,0.3,0.5")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--noise", default="0,0.05")
    parser.add_argument("--tall", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--params", default="{}")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    ranks = [int(v) for v in args.ranks.split(",")]
    shares = [float(v) for v in (args.shares or ("0.3" if args.quick else "0.1,0.3,0.5")).split(",")]
    seeds = range(args.seeds or (2 if args.quick else 3))
    noises = [float(v) for v in args.noise.split(",")]
    params = json.loads(args.params)
    orientations = ["wide", "tall"] if args.tall else ["wide"]
    imputers = {"LowRank": lambda: LowRankImputer(**params)}
    if not args.no_peers:
        imputers.update(Simple=SimpleImputer, KNN=KNNImputer)
    print(f"LowRankImputer({params}); RMSE of the hidden entries in units of the column spread "
          "(all / determined), mean over seeds")
    header = f"{'table':>9} {'r':>2} {'hidden':>6} {'noise':>5} | {'rank_':>5} {'iter':>5} {'all':>8} {'determ.':>8} " \
             f"{'time':>6}"
    if not args.no_peers:
        header += " | simple all / det. | KNN all / det."
    print(header)
    totals = {name: [] for name in imputers}
    with threadpool_limits(1):
        for orient in orientations:
            for m, n in shapes:
                rows, cols = (m, n) if orient == "wide" else (n, m)
                for r in ranks:
                    for share in shares:
                        for noise in noises:
                            stats = {name: [] for name in imputers}
                            found = []
                            for seed in seeds:
                                truth, X, hidden = table(rows, cols, r, share, seed, noise)
                                for name, make in imputers.items():
                                    imp = make()
                                    out = run(imp, truth, X, hidden, r)
                                    if out is not None:
                                        stats[name].append(out)
                                    if name == "LowRank":
                                        found.append((imp.rank_, imp.n_iter_))
                            mean = {k: np.nanmean(np.asarray(v), axis=0) if v else [np.nan] * 3
                                    for k, v in stats.items()}
                            for k, v in stats.items():
                                totals[k].extend((orient, noise, *x) for x in v)
                            ranks_found = "/".join(str(f[0]) for f in found)
                            iters = np.mean([f[1] for f in found])
                            line = (f"{rows:>4}x{cols:<4} {r:>2} {share:>6.1f} {noise:>5.2f} | {ranks_found:>5} "
                                    f"{iters:>5.0f} {mean['LowRank'][0]:>8.1e} {mean['LowRank'][1]:>8.1e} "
                                    f"{mean['LowRank'][2]:>6.2f}")
                            if not args.no_peers:
                                line += (f" | {mean['Simple'][0]:>6.3f} {mean['Simple'][1]:>6.3f}    "
                                         f"| {mean['KNN'][0]:>6.3f} {mean['KNN'][1]:>6.3f}")
                            print(line, flush=True)
    print("\nsummary (median over cases and seeds of the determined-entry RMSE; total time):")
    for name, rows_ in totals.items():
        for orient in orientations:
            for noise in noises:
                sel = [x for x in rows_ if x[0] == orient and x[1] == noise]
                if sel:
                    det = np.array([x[3] for x in sel], dtype=float)
                    print(f"  {name:>8} {orient:>4} noise {noise:.2f}: median {np.nanmedian(det):.2e}, "
                          f"90th pct {np.nanpercentile(det, 90):.2e}, max {np.nanmax(det):.2e}, "
                          f"time {sum(x[4] for x in sel):.1f} s")


if __name__ == "__main__":
    main()
