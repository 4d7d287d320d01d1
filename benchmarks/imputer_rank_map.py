"""``LowRankImputer()``'s ``rank_`` against the true rank, on tall and wide noisy tables of low rank.

Each table is ``F G / sqrt(r) + 1 c^T + noise`` (``F``: m x r, ``G``: r x n, standard normal, so the low-rank
part's entries have unit spread; column offsets ``c`` of standard deviation 3; Gaussian noise of standard
deviation ``noise``, a share of the low-rank part's spread), with a share of the entries hidden uniformly at
random. Per case (shape, true rank, noise, hidden share, seed): ``rank_``, the root mean squared error of the
imputed hidden entries against the table with its noise (what a user's held-out entries are) and against the
noiseless table, both in units of the column spread (the root mean of the noisy table's column variances: the
column means score about 1), the time of ``fit_transform`` (one BLAS thread), and ``gap``: the true rank's
smallest singular value of the low-rank part over the noise's spectral edge ``noise (sqrt(m) + sqrt(n))``
(identifiable: clearly above 1).

Run: ``python benchmarks/imputer_rank_map.py`` (``--quick``: one seed; ``--shapes 2000x30,10x500``;
``--ranks 1,2``; ``--noise 0,0.05,0.2``; ``--hidden 0.2,0.3``; ``--seeds 3``; ``--params '{"solver": "accelerated"}'``;
``--json out.json``: every case, for a before/after comparison with ``--compare before.json after.json``).
"""

import argparse
import json
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from sparse_estimators.impute import LowRankImputer


def table(m, n, r, noise, share, seed):
    """The noiseless table, the noisy one, the noisy one with NaN at the hidden entries, the mask, the gap."""
    rng = np.random.default_rng(seed)
    low = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) / np.sqrt(r)
    truth = low + 3.0 * rng.standard_normal(n)
    full = truth + noise * rng.standard_normal((m, n))
    hidden = rng.uniform(size=(m, n)) < share
    X = full.copy()
    X[hidden] = np.nan
    smallest = np.linalg.svd(low, compute_uv=False)[r - 1]
    gap = smallest / (noise * (np.sqrt(m) + np.sqrt(n))) if noise else np.inf
    return truth, full, X, hidden, float(gap)


def case(m, n, r, noise, share, seed, params):
    truth, full, X, hidden, gap = table(m, n, r, noise, share, seed)
    spread = np.sqrt(np.mean(full.var(axis=0)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        imp = LowRankImputer(**params)
        Z = imp.fit_transform(X)
        elapsed = time.process_time() - t0
    err = float(np.sqrt(np.mean((Z - full)[hidden] ** 2)) / spread)
    err_clean = float(np.sqrt(np.mean((Z - truth)[hidden] ** 2)) / spread)
    return {"shape": f"{m}x{n}", "r": r, "noise": noise, "hidden": share, "seed": seed, "rank_": int(imp.rank_),
            "err": err, "err_clean": err_clean, "time": elapsed, "gap": gap}


def summary(rows):
    """Per (shape, r, noise, hidden): the ranks over the seeds, the mean errors and time."""
    groups = {}
    for x in rows:
        groups.setdefault((x["shape"], x["r"], x["noise"], x["hidden"]), []).append(x)
    print(f"{'table':>9} {'r':>2} {'noise':>5} {'hid':>4} | {'rank_':>9} {'err':>7} {'clean':>7} {'time':>6} "
          f"{'gap':>7}")
    for (shape, r, noise, share), xs in groups.items():
        print(f"{shape:>9} {r:>2} {noise:>5.2f} {share:>4.1f} | {'/'.join(str(x['rank_']) for x in xs):>9} "
              f"{np.mean([x['err'] for x in xs]):>7.4f} {np.mean([x['err_clean'] for x in xs]):>7.4f} "
              f"{np.mean([x['time'] for x in xs]):>6.2f} {min(x['gap'] for x in xs):>7.1f}", flush=True)


def compare(before, after):
    """Case by case: rank_ and error before -> after, and the totals."""
    a = {(x["shape"], x["r"], x["noise"], x["hidden"], x["seed"]): x for x in after}
    right = [0, 0]
    worse = []
    ratios, times = [], [0.0, 0.0]
    for x in before:
        y = a[(x["shape"], x["r"], x["noise"], x["hidden"], x["seed"])]
        right[0] += x["rank_"] == x["r"]
        right[1] += y["rank_"] == y["r"]
        ratios.append(y["err"] / x["err"])
        times[0] += x["time"]
        times[1] += y["time"]
        if y["err"] > x["err"] * 1.01:
            worse.append((x, y))
    print(f"cases: {len(before)}; rank_ == r: {right[0]} -> {right[1]}; error ratio after/before: "
          f"median {np.median(ratios):.4f}, geometric mean {np.exp(np.mean(np.log(ratios))):.4f}, "
          f"max {max(ratios):.4f}, min {min(ratios):.4f}; time {times[0]:.1f} s -> {times[1]:.1f} s")
    for x, y in worse:
        print(f"  worse by > 1 %: {x['shape']} r={x['r']} noise={x['noise']} hidden={x['hidden']} seed={x['seed']}: "
              f"rank_ {x['rank_']} -> {y['rank_']}, err {x['err']:.4f} -> {y['err']:.4f} (gap {x['gap']:.1f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--shapes", default="2000x30,500x20,10x500,20x300")
    parser.add_argument("--ranks", default="1,2,3,4,5")
    parser.add_argument("--noise", default="0,0.05,0.2")
    parser.add_argument("--hidden", default="0.2,0.3")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--params", default="{}")
    parser.add_argument("--json", default=None)
    parser.add_argument("--compare", nargs=2, default=None)
    args = parser.parse_args()
    if args.compare:
        before, after = (json.load(open(path)) for path in args.compare)
        compare(before, after)
        return
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    params = json.loads(args.params)
    rows = []
    with threadpool_limits(1):
        for m, n in shapes:
            for r in (int(v) for v in args.ranks.split(",")):
                for noise in (float(v) for v in args.noise.split(",")):
                    for share in (float(v) for v in args.hidden.split(",")):
                        for seed in range(args.seeds or (1 if args.quick else 3)):
                            rows.append(case(m, n, r, noise, share, seed, params))
    summary(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
