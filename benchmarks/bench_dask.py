"""Out of core on a LocalCluster: exact-k fits on a dask X against dask-ml's L1 fits, in the same run.

X (n x p float64) is generated lazily in blocks of rows (``map_blocks``; block ``i`` from
``np.random.default_rng((seed, i))``, uniform with unit variance: about three times cheaper to draw
than normal values, so that a pass costs the estimators' work more than the generator's), so it is
never stored anywhere: every pass over it regenerates its blocks on the workers, whose total memory
limit is below the size of X. For
each estimator the script reports the wall time, the passes over X (blocks of X generated on the
workers, counted in a log each generation appends to, divided by the number of
blocks: a pass regenerates every block unless a peer persisted X), the peak growth of the client's RSS during the fit,
the support F1 against the true coefficients, and the wall time per pass.

Peers: dask-ml's ``LinearRegression`` / ``LogisticRegression`` with
``penalty='l1'``, at the penalty that gives k non-zeros. For least squares
that penalty is found from the Gram statistics of IHTRegressor's pass (a lasso by
coordinate descent on the p x p matrix, bisected on the penalty); for logistic
regression by bisecting C of scikit-learn's L1 ``LogisticRegression``
(liblinear) on an in-memory subsample of the first rows until it has k
non-zeros, the penalty per row then transferred to the n rows, so dask-ml's
count is near k, not exactly k. dask-ml's iterations are capped
(``--dml-max-iter``); the iterations they ran are counted (calls of the L1
proximal operator for ADMM, of the gradient for proximal_grad), and a fit
that reached the cap is marked as such: its time is a lower bound.

``--dml-time-cap`` stops a dask-ml fit at its first iteration past that many
seconds (in the client, from the same counters). y is computed once and kept
on the workers before the fits.

Every row is appended to ``--rows`` (JSON lines) as it is measured;
``--render`` rebuilds the page from that file.

Usage::

    nice python benchmarks/bench_dask.py --n 10000000 --rows /tmp/rows.jsonl --out doc/peers/dask.md
"""

import argparse
import json
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
    """Block ``i`` of X (seeded by ``(seed, i)``); each generation appends a line to ``log`` (passes).

    Uniform on [-sqrt(3), sqrt(3)] (mean 0, variance 1), drawn in place.
    """
    i = block_id[0]
    with open(f"{log}.{os.getpid()}", "a") as fh:
        fh.write("x\n")
    x = np.random.default_rng((seed, i)).random((min(chunk, n - i * chunk), p))
    x -= 0.5
    x *= 2 * np.sqrt(3.0)
    return x


def _noise_block(block_id=None, *, n, chunk, seed, uniform):
    i = block_id[0]
    rng = np.random.default_rng([seed, i, 1])
    rows = min(chunk, n - i * chunk)
    return rng.uniform(size=rows) if uniform else rng.standard_normal(rows)


def make_data(n, p, k, chunk, seed, task, log):
    """Lazy X (uniform, unit variance, blocks of ``chunk`` rows), y, and the true support."""
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


class TimeCap(Exception):
    """Raised in the client by :class:`Iterations` once a fit has run past its time cap."""


class Iterations:
    """dask-glm's iterations, counted in the client: L1 proximal steps (ADMM) and gradients (proximal_grad).

    With ``cap`` seconds, the first iteration to end after the cap raises :class:`TimeCap` (ADMM: after its
    proximal step, ``check_prox``; proximal_grad: at its next gradient, its line search done); ``last`` is
    then the output of the last proximal step (the current iterate, the intercept last).
    """

    def __init__(self, cap=None, check_prox=True):
        self.cap, self.check_prox, self.prox, self.grad, self.last = cap, check_prox, 0, 0, None

    def _check(self):
        if self.cap is not None and time.perf_counter() - self.start > self.cap:
            raise TimeCap

    def __enter__(self):
        from dask_glm import families, regularizers

        self.start = time.perf_counter()
        self._saved = [(regularizers.L1, "proximal_operator", regularizers.L1.proximal_operator)]
        self._saved += [(fam, "gradient", fam.__dict__["gradient"]) for fam in (families.Normal, families.Logistic)]

        def prox(obj, beta, t, _f=regularizers.L1.proximal_operator):
            self.prox += 1
            self.last = _f(obj, beta, t)
            if self.check_prox:  # (ADMM: after its z-update, which ``last`` keeps)
                self._check()
            return self.last

        regularizers.L1.proximal_operator = prox
        for fam, _, method in self._saved[1:]:
            def grad(Xbeta, X, y, _f=method.__func__):
                self._check()
                self.grad += 1
                return _f(Xbeta, X, y)

            fam.gradient = staticmethod(grad)
        return self

    def __exit__(self, *exc):
        for owner, name, value in self._saved:
            setattr(owner, name, value)


def timed(label, X, log, fit):
    """Fit, timed: wall time, passes over X (generated blocks / blocks), peak client RSS growth, load."""
    before = generations(log)
    load = os.getloadavg()[0]
    with PeakRSS() as rss:
        start = time.perf_counter()
        est = fit()
        wall = time.perf_counter() - start
    passes = (generations(log) - before) / X.numblocks[0]
    return est, {"label": label, "wall": wall, "passes": passes, "per_pass": wall / max(passes, 1e-9),
                 "rss": rss.growth_mb, "load": (load + os.getloadavg()[0]) / 2}


def _record(rows, row, path, args):
    row = dict(row, n=args.n, chunk=args.chunk, memory_limit=args.memory_limit, workers=args.workers,
               dml_max_iter=args.dml_max_iter, dml_time_cap=args.dml_time_cap, run=args.run_id)
    rows.append(row)
    print(row, flush=True)
    if path:
        with open(path[0], "a") as fh:
            fh.write(json.dumps(row) + "\n")


def _peer(rows, args, task, X, y, truth, log, C):
    """dask-ml's L1 fits (its default solver, ADMM, and proximal_grad) at ``C``, iterations capped."""
    import dask_ml.linear_model as dml

    Est = dml.LinearRegression if task == "least_squares" else dml.LogisticRegression
    for solver in args.dml_solvers:
        label = f"dask-ml {Est.__name__}(penalty='l1', solver='{solver}'{', the default' if solver == 'admm' else ''})"
        timed_out = False

        def fit(solver=solver):
            nonlocal timed_out
            try:
                return np.ravel(Est(penalty="l1", C=C, solver=solver, max_iter=args.dml_max_iter).fit(X, y).coef_)
            except TimeCap:  # (the iterate of the last proximal step; dask-ml puts the intercept last)
                timed_out = True
                last = it.last.compute() if hasattr(it.last, "compute") else it.last  # (p + 1 values)
                return np.ravel(last)[:-1] if last is not None else np.zeros(X.shape[1])

        with Iterations(args.dml_time_cap, check_prox=solver == "admm") as it:
            coef, row = timed(label, X, log, fit)
        iters = it.prox if solver == "admm" else it.grad
        _record(rows, dict(row, task=task, f1=f1(coef != 0, truth), nnz=int(np.count_nonzero(coef)), ours_passes=None,
                           iterations=iters, capped=timed_out or iters >= args.dml_max_iter, timed_out=timed_out,
                           C=C), args.rows, args)


def logistic_C(X, y, k, rows):
    """dask-glm's C (per n rows) giving about ``k`` non-zeros: C of liblinear's L1 fit bisected on the first rows."""
    from sklearn.linear_model import LogisticRegression

    Xs, ys = X[:rows].compute(), y[:rows].compute()
    low, high = -4.0, 2.0  # log10 C; more non-zeros as C grows
    for _ in range(40):
        mid = 0.5 * (low + high)
        nnz = np.count_nonzero(LogisticRegression(penalty="l1", C=10 ** mid, solver="liblinear").fit(Xs, ys).coef_)
        if nnz == k:
            break
        low, high = (mid, high) if nnz < k else (low, mid)
    # sklearn: C * sum of the m losses + ||w||_1; dask-glm: sum of the n losses + ||w||_1 / C: same penalty per row
    return 10 ** mid * rows / X.shape[0]


def run(args):
    from distributed import Client, LocalCluster, wait

    from sparse_estimators import IHTClassifier, IHTRegressor
    from sparse_estimators.model_selection import SparsityIC

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                           memory_limit=args.memory_limit, dashboard_address=":0")
    client = Client(cluster)
    # the workers import the libraries before the first timed fit
    client.run(lambda: [__import__(m) for m in ("sparse_estimators", "dask_ml.linear_model", "sklearn.linear_model")])
    rows = []
    n, p, k = args.n, args.p, args.k
    x_gb = n * p * 8 / 1e9
    print(f"X: {n} x {p} float64 = {x_gb:.2f} GB in blocks of {args.chunk} rows; {args.workers} workers x "
          f"{args.memory_limit} memory limit", flush=True)
    import tempfile

    log = os.path.join(tempfile.mkdtemp(prefix="bench_dask_"), "generated")
    for task in args.tasks:
        X, y, truth, beta = make_data(n, p, k, args.chunk, args.seed, task, log)
        # y is computed once and kept on the workers (8 n bytes): a y recomputed from X in a fit would
        # regenerate X's blocks a second time wherever the scheduler fuses them into y's tasks
        y = y.persist()
        wait(y)
        if task == "least_squares":
            # (the loss our fit builds from its pass is kept, for dask-ml's penalty below)
            from sparse_estimators.linear_model import _regressor

            setup, kept = _regressor.dask_regression_setup, []
            _regressor.dask_regression_setup = (
                lambda *a, _f=setup, _kept=kept, **kw: _kept.append(_f(*a, **kw)) or _kept[-1])
            try:
                est, row = timed(f"IHTRegressor(k={k})", X, log, lambda X=X, y=y: IHTRegressor(k=k).fit(X, y))
            finally:
                _regressor.dask_regression_setup = setup
            _record(rows, dict(row, task=task, f1=f1(est.coef_, truth), nnz=int(np.count_nonzero(est.coef_)),
                               ours_passes=est.n_passes_), args.rows, args)
            ic, row = timed("SparsityIC(IHTRegressor())", X, log, lambda X=X, y=y: SparsityIC(IHTRegressor()).fit(X, y))
            _record(rows, dict(row, task=task, f1=f1(ic.best_estimator_.coef_, truth), nnz=int(ic.k_),
                               ours_passes=ic.n_passes_), args.rows, args)
            # the penalty that gives k non-zeros, from the Gram statistics of IHTRegressor's pass
            loss, _ = kept[0]
            lam = penalty_for_k(loss.gram, loss.C[:, 0], k)  # (X is not rescaled: its extremes are within 2)
            C = 1.0 / (2 * loss.sw_sum * lam)  # dask-glm: ||y - X b||^2 + ||b||_1 / C
            _peer(rows, args, task, X, y, truth, log, C)
        else:
            est, row = timed(f"IHTClassifier(k={k})", X, log, lambda X=X, y=y: IHTClassifier(k=k).fit(X, y))
            _record(rows, dict(row, task=task, f1=f1(est.coef_[0], truth), nnz=int(np.count_nonzero(est.coef_)),
                               ours_passes=est.n_passes_), args.rows, args)
            _peer(rows, args, task, X, y, truth, log, logistic_C(X, y, k, min(n, args.subsample)))
    client.close()
    cluster.close()
    return rows


def _bytes(text):
    """``'2GB'`` as a number of bytes (dask's units)."""
    from dask.utils import parse_bytes

    return parse_bytes(text)


def _with_runs(path, rows):
    """Each row's invocation (``run``): recorded since the field exists; in older files, a new one starts at each
    of our fits that follows a dask-ml fit (an invocation appends our fits of a task, then dask-ml's)."""
    segment, after_peer = 0, False
    for r in rows:
        if r["ours_passes"] is not None and after_peer:
            segment += 1
        after_peer = r["ours_passes"] is None
        r.setdefault("run", f"{path}#{segment}")
    return rows


def render(rows, args):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    p = args.p
    defaults = {"n": args.n, "chunk": args.chunk, "memory_limit": args.memory_limit, "workers": args.workers,
                "dml_max_iter": args.dml_max_iter, "dml_time_cap": args.dml_time_cap}
    rows = [{**defaults, **r} for r in rows]
    runs = []
    for r in rows:
        key = (r["task"], r["n"], r["chunk"], r["workers"], r["memory_limit"], r["dml_max_iter"], r["dml_time_cap"])
        if key not in runs:
            runs.append(key)
    lines = [
        "# Larger than memory: exact-k fits on a dask X against dask-ml (L1)", "",
        f"Generated by `python benchmarks/bench_dask.py {' '.join(sys.argv[1:])}` at commit {commit or '?'} "
        "from the rows the script wrote as it measured them "
        f"({platform.machine()}, {os.cpu_count()} cores shared with other jobs: wall times are noisy; compare "
        "ratios within a task; the load column is the mean 1-minute load average at the start and end "
        "of each fit). "
        "X is float64, uniform with unit variance, generated lazily "
        "block by block (`map_blocks`, NumPy's generator seeded by (seed, block)) on a `LocalCluster` of worker "
        f"processes ({args.threads} thread each); k = {args.k} true coefficients (least squares at SNR 1). "
        "Passes: blocks of X generated on the workers divided by the number of blocks (every pass regenerates "
        "every block); `n_passes_` is our estimators' own count. Client RSS: peak growth of the client "
        "process during the fit (psutil, sampled every 20 ms). dask-ml's penalty is the one giving k "
        "non-zeros: least squares from the Gram statistics of IHTRegressor's pass (a lasso bisected on its "
        "penalty); logistic by bisecting liblinear's C on the first rows in memory (at most "
        f"{args.subsample}), transferred per row, so its count is near k. dask-ml's fits stop at `max_iter` "
        "or at their first iteration after a time cap (non-zeros and F1 then from the iterate of the last "
        "proximal step); a fit that reached a cap did not converge and its time is a lower bound on a "
        "converged fit's. y is computed once and kept on the workers before the fits (a y recomputed from X "
        "would regenerate X's blocks a second time).", "", "Runs:", "",
    ]
    for task, n, chunk, workers, memory, max_iter, cap in runs:
        total = workers * _bytes(memory)
        lines.append(f"- {task}: X {n} x {p} ({n * p * 8 / 1e9:.2f} GB) in blocks of {chunk} rows "
                     f"({chunk * p * 8 / 1e6:.0f} MB); {workers} workers with a memory limit of {memory} each "
                     f"({total / 1e9:.1f} GB in all: {'below' if total < n * p * 8 else 'NOT below'} the size of "
                     f"X); dask-ml's max_iter={max_iter}"
                     + (f", time cap {cap:.0f} s." if cap else "."))
    lines += [
        "",
        "| task | n | estimator | wall (s) | passes over X | n_passes_ | s per pass | client RSS growth (MB) | "
        "non-zeros | support F1 | iterations | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours = "" if r["ours_passes"] is None else str(r["ours_passes"])
        label = r["label"] if r["ours_passes"] is None or not r.get("before") else \
            f"{r['label']}, before (code of {r['before']})"
        iters = "" if r.get("iterations") is None else f"{r['iterations']}" + (
            " (time cap: stopped)" if r.get("timed_out") else " (max_iter reached)" if r["capped"] else "")
        lines.append(f"| {r['task']} | {r['n']:.0e} | {label} | {r['wall']:.1f} | {r['passes']:.1f} | {ours} | "
                     f"{r['per_pass']:.1f} | {r['rss']:.0f} | {r['nnz']} | {r['f1']:.3f} | {iters} | "
                     f"{r['load']:.1f} |")
    lines += ["", "Checks (each compares fits of the same run):", ""]
    # (rows of an earlier version of our code, marked "before" (its commit): compared in RSS only)
    earlier = [r for r in rows if r["ours_passes"] is not None and r.get("before")]
    ours_rows = [r for r in rows if r["ours_passes"] is not None and not r.get("before")]
    def run_of(r):
        return (r["task"], r["n"], r["chunk"], r["workers"], r["memory_limit"], r["dml_max_iter"], r["dml_time_cap"],
                r["run"])

    # (one invocation's fits only: the same settings measured in several invocations are not paired across them)
    for key in dict.fromkeys(run_of(r) for r in rows):
        task, n = key[:2]
        mine = [r for r in rows if r["ours_passes"] is not None and run_of(r) == key]
        peers = [r for r in rows if r["ours_passes"] is None and run_of(r) == key]
        if task == "least_squares" and mine:
            worst = max(r["passes"] for r in mine)
            lines.append(f"- n = {n}, least squares at most one pass, fixed k and the whole IC path: "
                         f"{'holds' if worst <= 1 else 'does not hold'} (at most {worst:.1f} passes).")
        for r in mine:
            for peer in peers:
                if task == "least_squares":
                    verdict = "holds" if r["wall"] < peer["wall"] else \
                        "not shown (the capped fit stopped first)" if peer["capped"] else "does not hold"
                    lines.append(f"- n = {n}, {r['label']} faster than {peer['label']}: {verdict} "
                                 f"({r['wall']:.1f} s against {peer['wall']:.1f} s"
                                 f"{', a capped fit: a lower bound on a converged fit' if peer['capped'] else ''}; "
                                 f"ratio {r['wall'] / peer['wall']:.2f}).")
                else:
                    lines.append(f"- n = {n}, {r['label']} no slower per pass than {peer['label']}: "
                                 f"{'holds' if r['per_pass'] <= peer['per_pass'] else 'does not hold'} "
                                 f"({r['per_pass']:.1f} s against {peer['per_pass']:.1f} s per pass; whole fits "
                                 f"{r['wall']:.1f} s in {r['passes']:.0f} passes against {peer['wall']:.1f} s in "
                                 f"{peer['passes']:.0f}{', capped' if peer['capped'] else ''}).")
    for r in earlier:
        now = [o for o in ours_rows if (o["task"], o["n"], o["chunk"], o["label"])
               == (r["task"], r["n"], r["chunk"], r["label"])]
        if now:
            lines.append(f"- n = {r['n']}, {r['label']}: client RSS growth {r['rss']:.0f} MB with the code of "
                         f"{r['before']}, {now[0]['rss']:.0f} MB now ({r['ours_passes']} and "
                         f"{now[0]['ours_passes']} passes).")
    if ours_rows:
        worst = max(r["rss"] for r in ours_rows)
        lines.append(f"- Client RSS growth under 400 MB in our fits (rows not marked 'before'): "
                     f"{'holds' if worst < 400 else 'does not hold'} "
                     f"(at most {worst:.0f} MB).")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=125_000, help="rows per block (125 000 x 100: 100 MB)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--memory-limit", default="2GB", help="per worker")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="+", default=["least_squares", "logistic"])
    parser.add_argument("--dml-solvers", nargs="+", default=["admm", "proximal_grad"])
    parser.add_argument("--dml-max-iter", type=int, default=100)
    parser.add_argument("--dml-time-cap", type=float, default=None,
                        help="stop a dask-ml fit at its first iteration after this many seconds")
    parser.add_argument("--subsample", type=int, default=50_000, help="rows for the logistic penalty's calibration")
    parser.add_argument("--rows", nargs="+", default=None,
                        help="append each measured row to the first of these files (JSON lines)")
    parser.add_argument("--render", action="store_true",
                        help="only render the page from the rows of --rows (PATH@key=value,... sets what a file's rows "
                             "did not record; then the other options)")
    parser.add_argument("--out", default=None, help="write the markdown page here (e.g. doc/peers/dask.md)")
    args = parser.parse_args()
    if args.render:
        rows = []
        for entry in args.rows:  # (path@key=value,...: settings of that file's rows that did not record them)
            path, _, given = entry.partition("@")
            given = dict(item.split("=", 1) for item in given.split(",") if item)
            given = {key: json.loads(value) if key != "memory_limit" else value for key, value in given.items()}
            with open(path) as fh:
                rows += _with_runs(path, [{**given, **json.loads(line)} for line in fh if line.strip()])
    else:
        args.run_id = time.strftime("%Y-%m-%dT%H:%M:%S")
        rows = run(args)
    page = render(rows, args)
    print(page)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(page)


if __name__ == "__main__":
    main()
