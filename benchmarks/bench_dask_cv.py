"""Passes over a dask X of SparsityCV read at every step: the folds in lockstep against one by one.

Prints, per loss, the search's ``n_passes_`` (the folds' share and the
refit's), the passes the folds take fitted one after the other (the same
search with the folds run one by one) and the most one fold takes, with the
wall times of both searches, measured in the same run. ``--read-delay``
makes each read of a block of ``X`` sleep that many seconds (a block read
from disk or over the network; 0: in memory). The family ``squared_wide``
is least squares read at every iteration (``precompute=False``: the path
taken above 4096 features with ``precompute='auto'``), the others the
classifiers' and GLM losses'.

    PYTHONPATH=. python benchmarks/bench_dask_cv.py --n 20000 --p 50 --chunk 5000 --folds 5 --k-max 5
"""

import argparse
import time
import warnings

import numpy as np


def _data(n, p, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    coef = np.zeros(p)
    coef[[1, 4, 9]] = [1.0, -1.5, 0.8]
    eta = X @ coef
    return X, {
        "logistic": (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int),
        "multinomial": np.argmax(np.column_stack([eta, -eta, 0.5 * eta]) + rng.gumbel(size=(n, 3)), axis=1),
        "poisson": rng.poisson(np.exp(0.3 * eta)).astype(float),
        "gamma": rng.gamma(2.0, np.exp(0.3 * eta) / 2.0),
        "huber": eta + rng.standard_t(2, n),
        "squared_wide": eta + rng.standard_normal(n),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--p", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=5000)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--k-max", type=int, default=5)
    parser.add_argument("--scheduler", default="synchronous")
    parser.add_argument("--families", default="logistic,multinomial,poisson,gamma,huber,squared_wide")
    parser.add_argument("--read-delay", type=float, default=0.0)
    args = parser.parse_args()

    import dask
    import dask.array as da

    from sparse_estimators import IHTClassifier, IHTRegressor, _policy
    from sparse_estimators.model_selection import SparsityCV

    warnings.simplefilter("ignore")
    X, targets = _data(args.n, args.p)
    Xd = da.from_array(X, chunks=(args.chunk, args.p))
    if args.read_delay:
        def read(block):
            time.sleep(args.read_delay)
            return block

        Xd = Xd.map_blocks(read, dtype=X.dtype)
    print(f"n={args.n} p={args.p} chunk={args.chunk} folds={args.folds} k_grid=1..{args.k_max} "
          f"scheduler={args.scheduler} read delay={args.read_delay} s per block")
    print("| loss | n_passes_ | folds in lockstep | folds one by one | most for one fold | refit | time lockstep (s) "
          "| time one by one (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for family in args.families.split(","):
        if family in ("logistic", "multinomial"):
            est = IHTClassifier()
        elif family == "squared_wide":  # (per-iteration passes, as above DASK_GRAM_MAX_FEATURES)
            est = IHTRegressor(precompute=False)
        else:
            est = IHTRegressor(loss=family)
        y = da.from_array(targets[family], chunks=(args.chunk,))
        runs = {}
        for lockstep in (True, False):
            _policy.LOCKSTEP = lockstep
            with dask.config.set(scheduler=args.scheduler):
                start = time.perf_counter()
                search = SparsityCV(est, k_grid=range(1, args.k_max + 1), cv=args.folds).fit(Xd, y)
                runs[lockstep] = (search, time.perf_counter() - start)
        _policy.LOCKSTEP = True
        (search, lock_time), (alone, alone_time) = runs[True], runs[False]
        assert alone.k_ == search.k_ and sum(alone._n_passes_alone) == sum(search._n_passes_alone)
        refit = search.best_estimator_.n_passes_
        print(f"| {family} | {search.n_passes_} | {search.n_passes_ - refit} | {alone.n_passes_ - refit} "
              f"| {max(search._n_passes_alone)} | {refit} | {lock_time:.1f} | {alone_time:.1f} |", flush=True)


if __name__ == "__main__":
    main()
