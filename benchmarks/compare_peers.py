"""Head-to-head at exact-k sparse regression and classification: ours against abess and scikit-learn.

Simulation in the style of Hastie, Tibshirani & Tibshirani (2020), "Best subset,
forward stepwise or lasso?":

* rows of ``X`` are i.i.d. ``N(0, Sigma)`` with ``Sigma_ij = rho^|i-j|`` (generated
  exactly as an AR(1) recursion over the columns, so ``p = 10000`` needs no
  ``p x p`` matrix);
* ``beta`` type 1: ``s`` ones at (roughly) equally spaced indices; type 2: the
  first ``s`` entries are one;
* regression: ``y = X beta + eps``, ``Var(eps) = beta^T Sigma beta / SNR``;
* classification: ``y ~ Bernoulli(sigmoid(c * X beta))`` with the scale
  ``c = sqrt(SNR / beta^T Sigma beta)``, i.e. the linear predictor has variance
  ``SNR`` (sd 1 at SNR 1: Bayes accuracy about 0.70; sd 2.45 at SNR 6: about
  0.84). The true coefficient vector is ``c * beta``.

Every method is fitted on the raw ``X`` (its columns have unit population
variance, so no scaler is used), with its defaults except for the sparsity:

* ours: the four regressors / classifiers at ``k = s``, default hyperparameters;
* abess: ``abess.linear.LinearRegression(support_size=[s])`` /
  ``LogisticRegression(support_size=[s])`` (``thread`` = the BLAS thread count);
* scikit-learn ``OrthogonalMatchingPursuit(n_nonzero_coefs=s)`` (regression only);
* references (not exact k): ``LassoCV(cv=5)`` (100 alphas) and ``LogisticRegressionCV``
  with an L1 penalty (liblinear, 10 values of C, 5 folds, log-loss scoring); with
  ``--quick`` 3 folds, 30 alphas and 6 values of C (LassoCV alone would otherwise take
  most of the run). Their memory is not measured.

Metrics per fit (coefficients ``b_hat`` and intercept as returned by each method):

* ``f1``: F1 of the support ``{j: b_hat_j != 0}`` against the true support;
* ``rel_risk``: ``(b_hat - b)^T Sigma (b_hat - b) / b^T Sigma b``;
* ``test``: R^2 (regression) or accuracy (classification) on a fresh test set of
  ``--n-test`` rows drawn the same way;
* ``objective``: training objective of the returned model, computed here the same
  way for every method: ``mean((y - X b_hat - b0)^2) / 2`` or the mean log-loss of
  ``sigmoid(X b_hat + b0)`` (no penalty term);
* ``time``: wall time of ``fit`` (``time.perf_counter``), all methods in this
  process with BLAS *and* OpenMP pinned by threadpoolctl to ``--threads``
  (default 1). A fit shorter than 0.2 s is repeated on the same data (up to 5
  fits in 0.2 s, the same rule for every method) and the minimum is kept, which
  filters scheduler preemptions on a shared machine; ``cpu_time`` likewise with
  ``time.process_time``. The tables report the median over repeats (data sets)
  and the ratio to abess's median time in the same run. abess's time on small
  problems depends on the process's malloc state (n = 100, p = 1000: 1.9 ms when
  freed memory stays mapped, as after earlier large frees have raised glibc's
  dynamic mmap and trim thresholds (or with ``MALLOC_MMAP_THRESHOLD_=33554432
  MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_TOP_PAD_=268435456``), which the
  grid's 2.1 ms indicates; 3.1 ms in a fresh process); ours does not;
* memory (first repeat of each setting only, in one extra fit per method made by a
  forked worker process on the same data, so that neither tracemalloc nor the
  allocator setting below touches the timings): ``tm_peak_mib``, the tracemalloc
  peak of Python-visible allocations during ``fit`` (numpy arrays included; the
  C/C++ heap of abess, liblinear or BLAS is *not* seen), and ``rss_peak_mib``, the
  peak resident set size during ``fit`` minus the RSS just before it, sampled from
  ``/proc/self/statm`` every millisecond by a background thread. It sees native
  allocations too, but only memory that is touched, misses spikes shorter than
  the sampling period, and under-counts memory re-used from the allocator's free
  lists; to limit the last, the worker fixes glibc's mmap threshold at 128 KiB
  (``mallopt(M_MMAP_THRESHOLD)``), so every array above that size is mapped on
  allocation and unmapped on free. The X passed to ``fit`` is not counted by
  either (it exists before the fit); a copy of it made inside ``fit`` is.

Run ``python benchmarks/compare_peers.py --quick`` (a few minutes) or ``--full``
(``--sizes 100,1000,10 ...``: only those problem sizes). Writes a Markdown table
(``--out``, default ``doc/peers/comparison.md``) and the
raw per-fit rows to a CSV beside it.

``--recheck doc/peers/comparison.csv [--repeats 40]`` re-runs the settings where
the recommended estimator was more than 0.01 below the best peer's F1 in that run, on fresh data sets
(the misses were picked on the old ones, so their deficits are biased upward) and
writes ``recheck.md`` (and its CSV) beside ``--out``: per setting, the paired
difference of F1 between ours and the best peer, with its standard error and a
verdict (more than 0.01 below, within 0.01, or undecided at two standard errors).
"""

import argparse
import itertools
import multiprocessing
import os
import sys
import threading
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import log_expit
from sklearn.linear_model import LassoCV, LogisticRegressionCV, OrthogonalMatchingPursuit
from threadpoolctl import threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import cli_args, fit_quietly, merge_runs, revision, to_markdown  # noqa: E402
from _peer_designs import sigma_quad, simulate  # noqa: E402
from _peers_report import FMT, RECOMMENDED, SETTING, targets, update_readme, write_report  # noqa: E402

from sparse_estimators import (  # noqa: E402
    AcceleratedIHTClassifier,
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)

FULL = {
    "rhos": (0.0, 0.35, 0.7),
    "sizes": ((100, 1000, 10), (500, 100, 5), (500, 1000, 10), (2000, 10000, 20)),
    "beta_types": (1, 2),
    "snrs": (0.5, 1.0, 3.0, 6.0),
    "repeats": 5,
    "ref_cv": 5,
    "ref_grid": (100, 10),
    # at (2000, 10000) one LassoCV or L1 logistic CV fit takes about a minute on one
    # core (measured: 63 s and 57 s), 90 % of the grid's time: the references (not
    # exact-k, not part of the targets) run up to this p, and the largest size gets
    # fewer repeats
    "reference_max_p": 1000,
    "largest_repeats": 3,
}
QUICK = {
    "rhos": (0.0, 0.7),
    "sizes": ((100, 1000, 10), (500, 1000, 10)),
    "beta_types": (1, 2),
    "snrs": (1.0, 6.0),
    "repeats": 2,
    "ref_cv": 3,
    "ref_grid": (30, 6),
    "reference_max_p": 1000,
    "largest_repeats": 2,
}

OURS = {
    "regression": {"IHT": IHTRegressor, "AccelIHT": AcceleratedIHTRegressor,
                   "RegIHT": RegularizedIHTRegressor, "IOBS": IOBSRegressor},
    "classification": {"IHT": IHTClassifier, "AccelIHT": AcceleratedIHTClassifier,
                       "RegIHT": RegularizedIHTClassifier, "IOBS": IOBSClassifier},
}


# -- methods -----------------------------------------------------------------------
def make_methods(task, k, threads, ref_cv=5, ref_grid=(100, 10), references=True):
    """``{name: (family, factory)}``; family is 'ours', 'peer' or 'reference'.

    ``ref_cv`` folds and ``ref_grid`` = (number of alphas of LassoCV, number of Cs of
    the L1 logistic CV) for the references; ``references=False`` leaves them out.
    """
    import abess.linear

    methods = {name: ("ours", (lambda c=cls: c(k=k))) for name, cls in OURS[task].items()}
    if task == "regression":
        methods["abess"] = ("peer", lambda: abess.linear.LinearRegression(support_size=[k], thread=threads))
        methods["OMP"] = ("peer", lambda: OrthogonalMatchingPursuit(n_nonzero_coefs=k))
        if references:
            methods["LassoCV"] = ("reference", lambda: LassoCV(cv=ref_cv, alphas=ref_grid[0]))
    else:
        methods["abess"] = ("peer", lambda: abess.linear.LogisticRegression(support_size=[k], thread=threads))
        if references:
            methods["L1LogRegCV"] = ("reference", lambda: LogisticRegressionCV(
                Cs=ref_grid[1], l1_ratios=(1.0,), solver="liblinear", cv=ref_cv, scoring="neg_log_loss",
                use_legacy_attributes=False, max_iter=1000))
    return methods


def coef_intercept(model):
    coef = np.ravel(np.asarray(model.coef_, dtype=float))
    intercept = float(np.ravel(np.asarray(model.intercept_, dtype=float))[0]) if np.size(model.intercept_) else 0.0
    return coef, intercept


# -- measurement ---------------------------------------------------------------------
def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class RSSSampler:
    """Peak RSS above the value at start, sampled by a background thread."""

    def __init__(self, period=1e-3):
        self.period = period

    def __enter__(self):
        self.base = self.peak = _rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_bytes())
            time.sleep(self.period)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())
        self.delta = self.peak - self.base


def measure_memory(factory, X, y):
    """``(tracemalloc peak, sampled RSS peak increase)`` of one fit, in MiB."""
    model = factory()
    with RSSSampler() as rss:
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak / 2**20, rss.delta / 2**20


_LIMITS = None


def _memory_worker_init(threads):
    """Memory-measuring worker: fixed mmap threshold (large arrays are unmapped on free), pinned threads."""
    global _LIMITS
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD: fixed, no dynamic raise
    except (OSError, AttributeError):
        pass
    _LIMITS = threadpool_limits(limits=threads)


def _memory_job(task, n, p, s, rho, beta_type, snr, n_test, seed, threads):
    X, y, *_ = simulate(task, n, p, s, rho, beta_type, snr, n_test, seed)
    return {name: measure_memory(factory, X, y)
            for name, (family, factory) in make_methods(task, s, threads, references=False).items()}


def evaluate(task, model, X, y, Xt, yt, b_true, rho):
    coef, b0 = coef_intercept(model)
    support = np.flatnonzero(coef)
    true = np.flatnonzero(b_true)
    hits = np.intersect1d(support, true).size
    precision = hits / support.size if support.size else 0.0
    recall = hits / true.size
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    rel_risk = sigma_quad(coef - b_true, rho) / sigma_quad(b_true, rho)
    z, zt = X @ coef + b0, Xt @ coef + b0
    if task == "regression":
        objective = 0.5 * float(np.mean((y - z) ** 2))
        test = 1.0 - float(np.sum((yt - zt) ** 2) / np.sum((yt - yt.mean()) ** 2))
    else:
        objective = -float(np.mean(np.where(y == 1, log_expit(z), log_expit(-z))))
        test = float(np.mean((zt > 0).astype(int) == yt))
    return {"nnz": support.size, "f1": f1, "rel_risk": rel_risk, "test": test, "objective": objective}


def recheck(df, repeats, n_test, threads, log):
    """Re-run the settings where the recommended estimator was over 0.01 below the best peer's F1, on fresh data.

    The misses of ``df`` (an earlier run's rows) were picked on those rows, so
    their deficits are biased upward (the settings that looked worst are the
    ones kept); new data sets (repeat indices after the earlier ones, the
    same seed rule) give an unbiased estimate. Only the recommended estimator
    and its peers are fitted, once each (F1 needs no timing repeats).
    Returns the new rows and, per setting, the paired difference of F1 (ours
    minus the peer with the best mean on the new data) with its standard error.
    """
    _, missed = targets(df)
    rows, verdicts = [], []
    for _, miss in missed[missed.deficit > 0.01 + 1e-12].iterrows():
        task, n, p, s, rho, beta_type, snr = (miss[c] for c in SETTING)
        n, p, s, beta_type = int(n), int(p), int(s), int(beta_type)
        ours, peers = RECOMMENDED[task]
        methods = {name: entry for name, entry in make_methods(task, s, threads, references=False).items()
                   if name == ours or name in peers}
        first = int(df[(df[SETTING[1:]] == [n, p, s, rho, beta_type, snr]).all(axis=1)
                       & (df.task == task)].repeat.max()) + 1
        t0 = time.perf_counter()
        for rep in range(first, first + repeats):
            seed = int(np.random.SeedSequence([n, p, s, int(rho * 100), beta_type, int(snr * 10), rep,
                                               task == "regression"]).generate_state(1)[0])
            X, y, Xt, yt, b_true = simulate(task, n, p, s, rho, beta_type, snr, n_test, seed)
            for name, (family, factory) in methods.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = factory().fit(X, y)
                rows.append({"task": task, "n": n, "p": p, "s": s, "rho": rho, "beta_type": beta_type, "snr": snr,
                             "repeat": rep, "method": name, "family": family}
                            | evaluate(task, model, X, y, Xt, yt, b_true, rho))
        new = pd.DataFrame(rows[-repeats * len(methods):]).pivot(index="repeat", columns="method", values="f1")
        best = new[list(peers)].mean().idxmax()
        diff = new[ours] - new[best]
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        verdicts.append({"task": task, "n": n, "p": p, "s": s, "rho": rho, "beta_type": beta_type, "snr": snr,
                         "deficit_before": miss.deficit, "repeats": len(diff), "f1_ours": new[ours].mean(),
                         "best_peer": best, "f1_peer": new[best].mean(), "diff": diff.mean(), "se": se,
                         "verdict": ("below by > 0.01" if diff.mean() + 2 * se < -0.01 else
                                     "within 0.01" if diff.mean() - 2 * se >= -0.01 else "undecided")})
        log(f"[recheck] {task} n={n} p={p} rho={rho} beta={beta_type} snr={snr}: diff {diff.mean():+.3f} "
            f"+- {se:.3f} ({time.perf_counter() - t0:.1f} s)")
    return pd.DataFrame(rows), pd.DataFrame(verdicts)


# -- driver ------------------------------------------------------------------------
def run(task, grid, repeats, n_test, threads, pool, log):
    rows = []
    settings = list(itertools.product(grid["sizes"], grid["rhos"], grid["beta_types"], grid["snrs"]))
    largest = max(grid.get("all_sizes", grid["sizes"]), key=lambda size: size[0] * size[1])
    for i, ((n, p, s), rho, beta_type, snr) in enumerate(settings):
        t_setting = time.perf_counter()
        methods = make_methods(task, s, threads, grid["ref_cv"], grid["ref_grid"],
                               references=p <= grid["reference_max_p"])
        n_rep = min(repeats, grid["largest_repeats"]) if (n, p, s) == largest else repeats
        for rep in range(n_rep):
            seed = int(np.random.SeedSequence([n, p, s, int(rho * 100), beta_type, int(snr * 10), rep,
                                               task == "regression"]).generate_state(1)[0])
            X, y, Xt, yt, b_true = simulate(task, n, p, s, rho, beta_type, snr, n_test, seed)
            memory = {}
            if pool is not None and rep == 0:
                memory = pool.apply(_memory_job, (task, n, p, s, rho, beta_type, snr, n_test, seed, threads))
            for name, (family, factory) in methods.items():
                model, elapsed, cpu, n_conv = fit_quietly(factory, X, y)
                row = {"task": task, "n": n, "p": p, "s": s, "rho": rho, "beta_type": beta_type, "snr": snr,
                       "repeat": rep, "method": name, "family": family, "time": elapsed, "cpu_time": cpu,
                       "conv_warnings": n_conv, "n_iter": model.n_iter_ if family == "ours" else np.nan}
                row.update(evaluate(task, model, X, y, Xt, yt, b_true, rho))
                if name in memory:
                    row["tm_peak_mib"], row["rss_peak_mib"] = memory[name]
                rows.append(row)
        log(f"[{task}] {i + 1}/{len(settings)} n={n} p={p} s={s} rho={rho} beta={beta_type} snr={snr}: "
            f"{time.perf_counter() - t_setting:.1f} s")
    return pd.DataFrame(rows)


DEFAULT_OUT = ROOT / "doc" / "peers" / "comparison.md"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small subset (a few minutes)")
    mode.add_argument("--full", action="store_true", help="the whole grid (default)")
    parser.add_argument("--repeats", type=int, default=None, help="data sets per setting")
    parser.add_argument("--task", choices=("regression", "classification", "both"), default="both")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="Markdown report (the README's table is updated only when this is the default)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS / OpenMP threads for every method")
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--no-memory", action="store_true", help="skip the instrumented memory fits")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="CSV",
                        help="write the report from the raw rows of earlier runs (e.g. one run per --task "
                             "in two processes) instead of fitting")
    parser.add_argument("--sizes", nargs="+", metavar="N,P,S",
                        help="only these problem sizes of the grid (e.g. 100,1000,10), for re-running part of it "
                             "after a change that affects only those; --merge the rows with the rest")
    parser.add_argument("--recheck", type=Path, metavar="CSV",
                        help="re-run, on --repeats fresh data sets (default 40), the settings where the "
                             "recommended estimator was more than 0.01 below the best peer's F1 in this earlier "
                             "run's CSV, and report the paired F1 differences with standard errors")
    args = parser.parse_args(argv)
    grid = dict(QUICK if args.quick else FULL)
    if args.sizes:
        sizes = {tuple(int(v) for v in size.split(",")) for size in args.sizes}
        if not sizes <= set(grid["sizes"]):
            parser.error(f"--sizes must be among the grid's {grid['sizes']}; got {args.sizes}")
        grid["all_sizes"] = grid["sizes"]  # (the largest keeps its fewer repeats)
        grid["sizes"] = tuple(size for size in grid["sizes"] if size in sizes)
    if args.recheck:
        with threadpool_limits(limits=args.threads):
            start = time.perf_counter()
            rows, verdicts = recheck(pd.read_csv(args.recheck), args.repeats or 40, args.n_test, args.threads,
                                     lambda msg: print(msg, file=sys.stderr, flush=True))
        table = to_markdown(verdicts, FMT | {"deficit_before": ".3f", "f1_ours": ".3f", "f1_peer": ".3f",
                                             "diff": "+.3f", "se": ".3f"})
        out = args.out.with_name("recheck.md")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join([
            "# Re-check of the settings where the recommended estimator was more than 0.01 below the best peer's "
            "F1", "",
            f"Generated by `python benchmarks/compare_peers.py {cli_args()}` at git {revision()} in "
            f"{(time.perf_counter() - start) / 60:.1f} min: fresh data sets (repeat indices after those of "
            f"`{args.recheck.name}`), the recommended estimator and its peers only. `deficit_before`: best peer's "
            "mean F1 minus ours in the earlier run; `diff`: mean over the new data sets of ours minus the peer "
            "with the best mean F1 on them (`best_peer`), `se` its standard error; verdict at two standard "
            "errors against a margin of 0.01 below the best peer.", "", table, ""]))
        rows.to_csv(out.with_suffix(".csv"), index=False)
        print(table)
        return
    if args.repeats is None:
        args.repeats = grid["repeats"]
    tasks = ("regression", "classification") if args.task == "both" else (args.task,)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.merge:
        df = merge_runs(args.merge, lambda df, meta: write_report(df, args.out, args, grid, float("nan"), meta),
                        args.out)
        if args.out == DEFAULT_OUT:
            update_readme(df, ROOT / "README.md", f"python benchmarks/compare_peers.py {cli_args()}")
        print(to_markdown(targets(df)[0], FMT))
        return

    rev = revision()

    log(f"sparse_estimators at {rev}")
    start = time.perf_counter()
    # the memory worker is forked before any BLAS call of this process
    pool = None if args.no_memory else multiprocessing.get_context("fork").Pool(
        1, initializer=_memory_worker_init, initargs=(args.threads,))
    frames = []
    try:
        with threadpool_limits(limits=args.threads):
            for task in tasks:
                frames.append(run(task, grid, args.repeats, args.n_test, args.threads, pool, log))
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    df = pd.concat(frames, ignore_index=True)
    for col in ("tm_peak_mib", "rss_peak_mib"):
        if col not in df:
            df[col] = np.nan
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)  # the raw rows first: kept if a report step fails
    summ, by_size = write_report(df, out, args, grid, time.perf_counter() - start, rev)
    if out == DEFAULT_OUT:
        update_readme(df, ROOT / "README.md", f"python benchmarks/compare_peers.py {cli_args()}")
    out.with_suffix(".meta").write_text(
        f"{cli_args()}: git {rev}, {(time.perf_counter() - start) / 60:.1f} min\n")
    print(to_markdown(summ, FMT))
    print()
    print(to_markdown(targets(df)[0], FMT))
    print()
    print(to_markdown(by_size.drop(columns=["objective", "conv_warn"]), FMT))
    print(f"\nwrote {out} and {out.with_suffix('.csv')}", file=sys.stderr)


if __name__ == "__main__":
    main()
