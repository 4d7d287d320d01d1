"""Out of core on a LocalCluster: exact-k fits on a dask X against dask-ml's L1 fits, in the same run.

X (n x p float64) is generated lazily in blocks of rows (``map_blocks``, NumPy's
generator seeded per block), so it is never stored anywhere: every pass over it regenerates its
blocks on the workers, whose total memory limit is below the size of X. For
each estimator the script reports the wall time, the passes over X (blocks of X generated on the
workers, counted in a log each generation appends to, divided by the number of
blocks: a pass regenerates every block unless a peer persisted X), the peak growth of the client's RSS during the fit,
and the support F1 against the true coefficients.

Peers: dask-ml's ``LinearRegression`` / ``LogisticRegression`` with
``penalty='l1'``, at the penalty that gives k non-zeros. For least squares
that penalty is found from the Gram statistics of our one pass (a lasso by
coordinate descent on the p x p matrix, bisected on the penalty; no pass over
X); for logistic regression from scikit-learn's L1 ``LogisticRegression`` on
an in-memory subsample of 20 000 rows (the penalty per row transferred to n
rows), so its number of non-zeros is near k, not exactly k.

Usage::

    python benchmarks/bench_dask.py --n 1000000 --out doc/peers/dask.md
"""

import argparse
import os
import platform
import subprocess
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


class PeakRSS:
    """The largest growth of this process's RSS while the block runs (sampled every 20 ms)."""

    def __enter__(self):
        import psutil

        self._proc = psutil.Process()
        self.base = self.peak = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._proc.memory_info().rss)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._proc.memory_info().rss)
        self.growth_mb = (self.peak - self.base) / 2 ** 20


def f1(support, truth):
    support, truth = set(np.flatnonzero(support).tolist()), set(truth.tolist())
    hits = len(support & truth)
    return 0.0 if not hits else 2 * hits / (len(support) + len(truth))


def _x_block(block_id=None, *, n, p, chunk, seed, log):
    """Block ``i`` of X (seeded by ``(seed, i)``); each generation appends a line to ``log`` (passes)."""
    i = block_id[0]
    with open(f"{log}.{os.getpid()}", "a") as fh:
        fh.write("x\n")
    return np.random.default_rng([seed, i]).standard_normal((min(chunk, n - i * chunk), p))


def _noise_block(block_id=None, *, n, chunk, seed, uniform):
    i = block_id[0]
    rng = np.random.default_rng([seed, i, 1])
    rows = min(chunk, n - i * chunk)
    return rng.uniform(size=rows) if uniform else rng.standard_normal(rows)


def make_data(n, p, k, chunk, seed, task, log):
    """Lazy X (standard normal, blocks of ``chunk`` rows), y, and the true support."""
    import dask.array as da

    rng = np.random.RandomState(seed)
    truth = np.sort(rng.choice(p, k, replace=False))
    beta = np.zeros(p)
    beta[truth] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 1.5, k)
    rows = tuple(min(chunk, n - s) for s in range(0, n, chunk))
    X = da.map_blocks(_x_block, chunks=(rows, (p,)), dtype=float, n=n, p=p, chunk=chunk, seed=seed, log=log,
                      meta=np.empty((0, 0)))
    noise = da.map_blocks(_noise_block, chunks=(rows,), dtype=float, n=n, chunk=chunk, seed=seed,
                          uniform=task != "least_squares", meta=np.empty((0,)))
    eta = X @ beta
    if task == "least_squares":  # SNR 1: noise variance ||beta||^2
        y = eta + np.linalg.norm(beta) * noise
    else:
        y = (noise < 1 / (1 + np.exp(-eta))).astype(float)
    return X, y, truth, beta


def generations(log):
    """Blocks of X generated so far (lines of the workers' logs)."""
    import glob

    return sum(sum(1 for _ in open(f)) for f in glob.glob(f"{log}.*"))


def lasso_gram(G, c, lam, max_iter=2000, tol=1e-10):
    """Minimiser of ``w^T G w / 2 - c^T w + lam ||w||_1`` by coordinate descent (G the centred Gram / n)."""
    w = np.zeros(c.size)
    d = np.diag(G)
    for _ in range(max_iter):
        delta = 0.0
        for j in range(c.size):
            r = c[j] - G[j] @ w + d[j] * w[j]
            new = np.sign(r) * max(abs(r) - lam, 0.0) / d[j]
            delta = max(delta, abs(new - w[j]))
            w[j] = new
        if delta < tol:
            break
    return w


def penalty_for_k(G, c, k):
    """A lasso penalty (sklearn's scale, per row) giving exactly ``k`` non-zeros, by bisection."""
    high, low = float(np.abs(c).max()), 0.0
    for _ in range(60):
        lam = 0.5 * (high + low)
        nnz = np.count_nonzero(lasso_gram(G, c, lam))
        if nnz == k:
            return lam
        high, low = (lam, low) if nnz < k else (high, lam)
    return lam


def timed(label, X, log, fit):
    before = generations(log)
    with PeakRSS() as rss:
        start = time.perf_counter()
        est = fit()
        wall = time.perf_counter() - start
    return est, {"label": label, "wall": wall, "passes": (generations(log) - before) / X.numblocks[0],
                 "rss": rss.growth_mb}


def run(args):
    import dask_ml.linear_model as dml
    from distributed import Client, LocalCluster

    from sparse_estimators import IHTClassifier, IHTRegressor
    from sparse_estimators.model_selection import SparsityIC

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           memory_limit=args.memory_limit, dashboard_address=":0")
    client = Client(cluster)
    rows = []
    n, p, k = args.n, args.p, args.k
    x_gb = n * p * 8 / 1e9
    print(f"X: {n} x {p} float64 = {x_gb:.2f} GB in blocks of {args.chunk} rows; {args.workers} workers x "
          f"{args.memory_limit} memory limit", flush=True)
    import tempfile

    log = os.path.join(tempfile.mkdtemp(prefix="bench_dask_"), "generated")
    for task in args.tasks:
        X, y, truth, beta = make_data(n, p, k, args.chunk, args.seed, task, log)
        if task == "least_squares":
            est, row = timed(f"IHTRegressor(k={k})", X, log, lambda X=X, y=y: IHTRegressor(k=k).fit(X, y))
            rows.append(dict(row, task=task, f1=f1(est.coef_, truth), nnz=int(np.count_nonzero(est.coef_)),
                             ours_passes=est.n_passes_))
            print(rows[-1], flush=True)
            ic, row = timed("SparsityIC(IHTRegressor())", X, log, lambda X=X, y=y: SparsityIC(IHTRegressor()).fit(X, y))
            rows.append(dict(row, task=task, f1=f1(ic.best_estimator_.coef_, truth), nnz=int(ic.k_),
                             ours_passes=ic.n_passes_))
            print(rows[-1], flush=True)
            # the penalty that gives k non-zeros, from our statistics (no pass over X)
            from sparse_estimators.linear_model._dask import dask_regression_setup

            loss, _ = dask_regression_setup(IHTRegressor(), X, y, None)
            lam = penalty_for_k(loss.gram, loss.C[:, 0], k)
            C = 1.0 / (2 * loss.sw_sum * lam)  # dask-glm: ||y - X b||^2 + ||b||_1 / C
            for solver in args.dml_solvers:
                peer, row = timed(f"dask-ml LinearRegression(penalty='l1', solver='{solver}')", X, log,
                                  lambda X=X, y=y, C=C, solver=solver: dml.LinearRegression(
                                      penalty="l1", C=C, solver=solver, max_iter=args.dml_max_iter).fit(X, y))
                coef = np.where(np.abs(peer.coef_) > 1e-6 * np.abs(peer.coef_).max(), peer.coef_, 0.0)
                rows.append(dict(row, task=task, f1=f1(coef, truth), nnz=int(np.count_nonzero(coef)),
                                 ours_passes=None))
                print(rows[-1], flush=True)
        else:
            est, row = timed(f"IHTClassifier(k={k})", X, log, lambda X=X, y=y: IHTClassifier(k=k).fit(X, y))
            rows.append(dict(row, task=task, f1=f1(est.coef_[0], truth), nnz=int(np.count_nonzero(est.coef_)),
                             ours_passes=est.n_passes_))
            print(rows[-1], flush=True)
            from sklearn.linear_model import LogisticRegression

            sub = min(n, 20000)
            Xs, ys = X[:sub].compute(), y[:sub].compute()
            grid = np.logspace(-3, 1, 40)
            counts = [np.count_nonzero(LogisticRegression(penalty="l1", C=c, solver="liblinear").fit(Xs, ys).coef_)
                      for c in grid]
            C_sub = grid[int(np.argmin(np.abs(np.array(counts) - k)))]
            C = C_sub  # (sklearn's C multiplies the summed loss, as dask-glm's 1 / lambda does: the same per row)
            for solver in args.dml_solvers:
                peer, row = timed(f"dask-ml LogisticRegression(penalty='l1', solver='{solver}')", X, log,
                                  lambda X=X, y=y, C=C, solver=solver: dml.LogisticRegression(
                                      penalty="l1", C=C, solver=solver, max_iter=args.dml_max_iter).fit(X, y))
                coef = np.ravel(peer.coef_)
                coef = np.where(np.abs(coef) > 1e-6 * np.abs(coef).max(), coef, 0.0)
                rows.append(dict(row, task=task, f1=f1(coef, truth), nnz=int(np.count_nonzero(coef)),
                                 ours_passes=None))
                print(rows[-1], flush=True)
    client.close()
    cluster.close()
    return rows


def render(rows, args):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    n, p = args.n, args.p
    lines = [
        "# Larger than memory: exact-k fits on a dask X against dask-ml (L1)", "",
        f"Generated by `python benchmarks/bench_dask.py {' '.join(sys.argv[1:])}` at commit {commit or '?'} "
        f"({platform.machine()}, {os.cpu_count()} cores shared with other jobs: wall times are noisy; compare "
        "ratios within this table). "
        f"X is {n} x {p} float64 ({n * p * 8 / 1e9:.2f} GB), standard normal, generated lazily block by "
        f"block (`map_blocks`, NumPy's generator seeded per block) in blocks of {args.chunk} rows on a "
        f"`LocalCluster` of {args.workers} worker "
        f"processes with a memory limit of {args.memory_limit} each (below the size of X); k = {args.k} true "
        "coefficients (least squares at SNR 1). Passes: blocks of X generated on the workers divided by the "
        "number of blocks (every pass regenerates every block; `n_passes_` is our estimators' own count). "
        "Client RSS: peak growth of the client process during the fit. The dask-ml penalty is the one giving "
        "k non-zeros (least squares: from the Gram statistics; logistic: from an L1 fit on a 20 000-row "
        "subsample, so its count is near k).", "",
        "| task | estimator | wall (s) | passes over X | n_passes_ | client RSS growth (MB) | non-zeros | "
        "support F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours = "" if r["ours_passes"] is None else str(r["ours_passes"])
        lines.append(f"| {r['task']} | {r['label']} | {r['wall']:.1f} | {r['passes']:.1f} | {ours} | "
                     f"{r['rss']:.0f} | {r['nnz']} | {r['f1']:.3f} |")
    by_task = {}
    for r in rows:
        by_task.setdefault(r["task"], []).append(r)
    lines.append("")
    for task, group in by_task.items():
        ours, peers = group[0], [r for r in group if r["label"].startswith("dask-ml")]
        for peer in peers:
            lines.append(f"- {task}: {ours['label']} took {ours['wall'] / peer['wall']:.2f} times the wall time of "
                         f"{peer['label']}; per pass over X {ours['wall'] / max(ours['passes'], 1):.1f} s against "
                         f"{peer['wall'] / max(peer['passes'], 1):.1f} s.")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="600MB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="+", default=["least_squares", "logistic"])
    parser.add_argument("--dml-solvers", nargs="+", default=["admm", "proximal_grad"])
    parser.add_argument("--dml-max-iter", type=int, default=100)
    parser.add_argument("--out", default=None, help="write the markdown page here (e.g. doc/peers/dask.md)")
    args = parser.parse_args()
    rows = run(args)
    page = render(rows, args)
    print(page)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(page)


if __name__ == "__main__":
    main()
