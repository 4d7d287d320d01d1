"""Completion at a fixed rank: does each solver reach its tolerance, in how long, with which BLAS threads (issue 31).

Data: ``china.jpg`` from ``sklearn.datasets.load_sample_image``, grayscale
(mean of the three channels), its top-left 400 x 600 corner, 35 % of the
entries observed (uniform mask, seed 0), ``center=True``. Ranks 30 (the
issue's case: ``r (m + n - r) = 29100`` free parameters for 84 000 observed
entries) and 10 (a well-posed control). For each solver of
:func:`~sparse_estimators.impute.complete_matrix` at a fixed rank
(``'iht'``, ``'accelerated'``, ``'als'`` with ``alpha=0``, i.e. a hard rank)
and each tolerance (``1e-3``, ``LowRankImputer``'s default, and ``1e-5``,
``complete_matrix``'s), ``max_iter=300`` (``--max-iter``): iterations,
converged, wall time inside ``threadpool_limits(1)`` and with the process's
default BLAS threads, hidden-pixel RMSE, the objective
``1/2 sum_observed (M - A)^2``, ``||L||_F`` (the low-rank part, without
the column offsets), and the iterations and seconds (one thread) each fit
took to come within a relative ``1e-6`` of the lowest objective any solver
reached at ``tol=1e-5`` (a measure that does not depend on how far each
solver moves per iteration, unlike the stopping rule). The line ``oracle``
gives ``||L||_F`` and the RMSE of the best rank-``r`` approximation of the
whole centred matrix (all entries known). A control (``--no-synthetic``
skips it): the same mask on a rank-30 matrix plus noise (singular values
spread over a factor 10) of the photograph's mean and spread, at rank 30.

``--long`` adds, at rank 30, the same fits at ``max_iter`` 300, 1000 and 3000
(one thread, ``tol=0``): whether more iterations approach a point or the
objective keeps falling while ``||L||_F`` and the hidden error grow (the
infimum not attained: no tolerance on the change of the iterates can then be
met by a solver that keeps decreasing the objective).

fancyimpute's ``SoftImpute`` (its default shrinkage ``sigma_max / 50``, one
thread) runs on the same matrix in its own environment (see
``compare_completion.py``; ``--no-fancyimpute`` skips it). Timings on a
loaded machine are noisy: compare ratios within one run.

Run: ``PYTHONPATH=. python benchmarks/bench_fixed_rank.py [--max-iter 300] [--long] [--no-fancyimpute]``.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_sample_image
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_info, threadpool_limits

from sparse_estimators.impute import complete_matrix

sys.path.insert(0, str(Path(__file__).resolve().parent))

SOLVERS = ("iht", "accelerated", "als")
TOLS = (1e-3, 1e-5)


def data(share=0.35, seed=0):
    X = load_sample_image("china.jpg").astype(float).mean(axis=2)[:400, :600]
    observed = np.random.default_rng(seed).uniform(size=X.shape) < share
    return X, observed


def fit(X, observed, rank, solver, tol, max_iter, one_thread):
    rows, cols = np.nonzero(observed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        if one_thread:
            with threadpool_limits(1):
                result = complete_matrix((rows, cols, X[rows, cols]), rank, shape=X.shape, center=True,
                                         solver=solver, tol=tol, max_iter=max_iter)
        else:
            result = complete_matrix((rows, cols, X[rows, cols]), rank, shape=X.shape, center=True, solver=solver,
                                     tol=tol, max_iter=max_iter)
        seconds = time.perf_counter() - start
    dense = result.to_dense()
    rmse = float(np.sqrt(np.mean((dense - X)[~observed] ** 2)))
    residual = (dense - X)[observed]
    objective = 0.5 * float(residual @ residual)
    norm = float(np.linalg.norm(result.s))
    return {"seconds": seconds, "n_iter": result.n_iter, "converged": result.converged, "rmse": rmse,
            "objective": objective, "norm": norm, "losses": result.loss_curve,
            "setup": seconds - (result.time_curve[-1] if result.time_curve.size else 0.0),
            "times": result.time_curve}


def reach(record, target):
    """Iterations and seconds (one thread) until the objective is at most ``target``; None if never."""
    hits = np.flatnonzero(record["losses"] <= target)
    if not hits.size:
        return None
    return int(hits[0]) + 1, float(record["setup"] + record["times"][hits[0]])


def synthetic(observed, rank=30, seed=1):
    """A 400 x 600 matrix of rank ``rank`` plus noise, scaled like the photograph (the control at rank 30)."""
    rng = np.random.default_rng(seed)
    L = (rng.standard_normal((400, rank)) * np.geomspace(1, 0.1, rank)) @ rng.standard_normal((rank, 600))
    return 120 + 60 * L / L.std() + rng.standard_normal(L.shape)


def oracle(X, observed, rank):
    """The best rank-``rank`` approximation of the whole image after removing its column means."""
    mu = X.mean(axis=0)
    U, s, Vt = np.linalg.svd(X - mu, full_matrices=False)
    best = (U[:, :rank] * s[:rank]) @ Vt[:rank] + mu
    return float(np.linalg.norm(s[:rank])), float(np.sqrt(np.mean((best - X)[~observed] ** 2)))


def soft_impute(X, observed):
    """fancyimpute's SoftImpute at its default shrinkage, one thread, in its environment; (seconds, RMSE)."""
    import compare_completion as cc

    python = cc.fancyimpute_python()
    hidden = ~observed
    rows, cols = np.nonzero(hidden)
    jobs = [{"method": "SoftImpute", "params": {"shrinkage_factor": cc.SOFT_DEFAULT, "max_rank": None},
             "trace": False}]
    with tempfile.TemporaryDirectory() as tmp:
        data_file, job_file, out = (Path(tmp) / name for name in ("data.npz", "jobs.json", "out.json"))
        np.savez(data_file, X=np.where(hidden, np.nan, X), rows=rows, cols=cols, truth=X[rows, cols])
        job_file.write_text(json.dumps(jobs))
        subprocess.run([str(python), str(cc.WORKER), str(data_file), str(job_file), str(out)], check=True,
                       env={**os.environ, **cc.ONE_THREAD}, stdout=subprocess.DEVNULL)
        record = json.loads(out.read_text())["records"][0]
    return record["seconds"], record["rmse"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-iter", type=int, default=300)
    parser.add_argument("--ranks", type=int, nargs="+", default=[30, 10])
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--no-fancyimpute", action="store_true")
    parser.add_argument("--no-synthetic", action="store_true")
    args = parser.parse_args()
    X, observed = data()
    m, n = X.shape
    blas = [(lib["internal_api"], lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"]
    print(f"400 x 600 china.jpg, {observed.sum()} entries observed ({observed.mean():.1%}), center=True, "
          f"max_iter={args.max_iter}; BLAS (default threads): {blas}; load average {os.getloadavg()[0]:.1f}")
    if not args.no_fancyimpute:
        seconds, rmse = soft_impute(X, observed)
        print(f"fancyimpute SoftImpute (default lambda, one thread): {seconds:.2f} s, hidden RMSE {rmse:.2f}")
    header = (f"{'rank':>4} {'solver':12} {'tol':>6} {'iter':>5} {'conv':>5} {'1 thread':>9} {'default':>9} "
              f"{'def/1':>6} {'RMSE':>7} {'objective':>11} {'||L||_F':>9} {'to f*(1+1e-6)':>15}")
    cases = [("photograph", X, rank) for rank in args.ranks]
    if not args.no_synthetic:
        cases.append(("synthetic rank 30 + noise (control)", synthetic(observed), 30))
    for name, A, rank in cases:
        norm, err = oracle(A, observed, rank)
        print(f"\n{name}, rank {rank}: r (m + n - r) + n = {rank * (m + n - rank) + n} free parameters, "
              f"{observed.sum() / (rank * (m + n - rank) + n):.1f} observed entries per parameter; "
              f"oracle (all entries): ||L||_F = {norm:.4g}, hidden RMSE {err:.2f}")
        print(header)
        records = {}
        for solver in SOLVERS:
            for tol in TOLS:
                one = fit(A, observed, rank, solver, tol, args.max_iter, one_thread=True)
                default = fit(A, observed, rank, solver, tol, args.max_iter, one_thread=False)
                records[solver, tol] = (one, default)
        # the lowest objective any solver reached (tol=1e-5): iterations and time of each to come within 1e-6
        target = min(one["objective"] for (_, tol), (one, _) in records.items() if tol == TOLS[-1]) * (1 + 1e-6)
        for (solver, tol), (one, default) in records.items():
            hit = reach(one, target)
            hit = f"{hit[0]:5d} {hit[1]:7.2f}s" if hit else f"{'never':>15}"
            print(f"{rank:4d} {solver:12} {tol:6.0e} {one['n_iter']:5d} {str(one['converged']):>5} "
                  f"{one['seconds']:8.2f}s {default['seconds']:8.2f}s "
                  f"{default['seconds'] / one['seconds']:6.2f} {one['rmse']:7.2f} {one['objective']:11.5e} "
                  f"{one['norm']:9.4g} {hit}", flush=True)
    if args.long:
        rank = 30
        print(f"\nrank {rank}, tol=0 (every fit runs max_iter iterations), one thread: does the iterate settle?")
        print(f"{'solver':12} {'max_iter':>8} {'time':>8} {'RMSE':>7} {'objective':>11} {'||L||_F':>9}")
        for solver in ("accelerated", "als"):
            for max_iter in (300, 1000, 3000):
                out = fit(X, observed, rank, solver, 0.0, max_iter, one_thread=True)
                print(f"{solver:12} {max_iter:8d} {out['seconds']:7.2f}s {out['rmse']:7.2f} {out['objective']:11.5e} "
                      f"{out['norm']:9.4g}", flush=True)


if __name__ == "__main__":
    main()
