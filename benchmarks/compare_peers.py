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
import platform
import sys
import threading
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LassoCV, LogisticRegressionCV, OrthogonalMatchingPursuit
from threadpoolctl import threadpool_info, threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


# -- data ------------------------------------------------------------------------
def ar1_design(rng, n, p, rho):
    """Rows ``N(0, Sigma)``, ``Sigma_ij = rho^|i-j|``: ``x_j = rho x_{j-1} + sqrt(1 - rho^2) z_j``."""
    X = rng.standard_normal((n, p))
    if rho:
        c = np.sqrt(1.0 - rho * rho)
        for j in range(1, p):
            X[:, j] = rho * X[:, j - 1] + c * X[:, j]
    return X


def make_beta(p, s, beta_type):
    beta = np.zeros(p)
    if beta_type == 1:
        beta[np.round(np.linspace(0, p - 1, s)).astype(int)] = 1.0
    elif beta_type == 2:
        beta[:s] = 1.0
    else:
        raise ValueError(beta_type)
    return beta


def sigma_quad(d, rho):
    """``d^T Sigma d`` using only the non-zeros of ``d`` (no ``p x p`` matrix)."""
    idx = np.flatnonzero(d)
    if idx.size == 0:
        return 0.0
    S = rho ** np.abs(idx[:, None] - idx[None, :]).astype(float)
    v = d[idx]
    return float(v @ S @ v)


def simulate(task, n, p, s, rho, beta_type, snr, n_test, seed):
    rng = np.random.RandomState(seed)
    beta = make_beta(p, s, beta_type)
    power = sigma_quad(beta, rho)
    X = ar1_design(rng, n, p, rho)
    Xt = ar1_design(rng, n_test, p, rho)
    if task == "regression":
        sd = np.sqrt(power / snr)
        y = X @ beta + sd * rng.standard_normal(n)
        yt = Xt @ beta + sd * rng.standard_normal(n_test)
        return X, y, Xt, yt, beta
    coef = beta * np.sqrt(snr / power)
    y = (rng.uniform(size=n) < expit(X @ coef)).astype(int)
    yt = (rng.uniform(size=n_test) < expit(Xt @ coef)).astype(int)
    if np.unique(y).size < 2:  # vanishingly rare; keep both classes present
        y[0] = 1 - y[0]
    return X, y, Xt, yt, coef


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


#: a fit is repeated on the same data while the fits so far took less than this (s) ...
TIME_BUDGET = 0.2
#: ... at most this many times; the minimum wall and CPU times are kept
MAX_FIT_REPEATS = 5


def fit_quietly(factory, X, y):
    """Fit (repeatedly, if fast) and return ``(model, min wall time, min CPU time, ConvergenceWarnings)``.

    Short fits are repeated (same rule for every method) and the minimum is
    kept, so that a scheduler preemption on a shared machine does not double a
    10 ms measurement.
    """
    walls, cpus, spent = [], [], 0.0
    while len(walls) < MAX_FIT_REPEATS and (not walls or spent < TIME_BUDGET):
        model = factory()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c0, t0 = time.process_time(), time.perf_counter()
            model.fit(X, y)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        spent += walls[-1]
    n_conv = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return model, min(walls), min(cpus), n_conv


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
SETTING = ["task", "n", "p", "s", "rho", "beta_type", "snr"]


def aggregate(df, by):
    agg = df.groupby(by + ["method"], sort=False).agg(
        f1=("f1", "mean"), rel_risk=("rel_risk", "mean"), test=("test", "mean"), objective=("objective", "mean"),
        nnz=("nnz", "mean"), time=("time", "median"), cpu_time=("cpu_time", "median"), n_iter=("n_iter", "median"),
        conv_warn=("conv_warnings", "sum"), tm_peak_mib=("tm_peak_mib", "max"),
        rss_peak_mib=("rss_peak_mib", "max"), fits=("f1", "size")).reset_index()
    ref = agg[agg["method"] == "abess"].set_index(by)[["time", "cpu_time"]].add_prefix("abess_")
    agg = agg.join(ref, on=by)
    agg["time_vs_abess"] = agg["time"] / agg["abess_time"]
    agg["cpu_vs_abess"] = agg["cpu_time"] / agg["abess_cpu_time"]
    return agg.drop(columns=["abess_time", "abess_cpu_time"])


def summary(df):
    """Per task and method over all settings: means, and the median over settings of the per-setting time ratio."""
    per_setting = aggregate(df, SETTING)
    best_obj = per_setting.groupby(SETTING)["objective"].transform(
        lambda v: v[per_setting.loc[v.index, "method"] != "LassoCV"].min())
    per_setting["obj_gap"] = per_setting["objective"] / best_obj - 1.0
    wins = per_setting.copy()
    wins["f1_ge_abess"] = wins["f1"] >= wins.join(
        wins[wins.method == "abess"].set_index(SETTING)["f1"].rename("fa"), on=SETTING)["fa"] - 1e-12
    out = wins.groupby(["task", "method"], sort=False).agg(
        f1=("f1", "mean"), rel_risk=("rel_risk", "mean"), test=("test", "mean"),
        obj_gap=("obj_gap", "mean"), f1_ge_abess=("f1_ge_abess", "mean"),
        time=("time", "median"), time_vs_abess=("time_vs_abess", "median"),
        max_time_vs_abess=("time_vs_abess", "max"), cpu_vs_abess=("cpu_vs_abess", "median"),
        n_iter=("n_iter", "median"),
        conv_warn=("conv_warn", "sum"), rss_peak_mib=("rss_peak_mib", "max"),
        tm_peak_mib=("tm_peak_mib", "max")).reset_index()
    return out


#: the estimator the README recommends per task, and the peers its targets compare it with
RECOMMENDED = {"regression": ("IHT", ("abess", "OMP")), "classification": ("IHT", ("abess",))}


def targets(df):
    """Per task, problem size and estimator of ours: in how many settings it meets the issue's targets.

    F1: mean F1 >= the best peer's mean F1 - 0.01; time (settings with p >= 1000):
    median fit time <= abess's; memory: peak traced allocation over the size of X.
    Returns the summary table and the settings where the recommended estimator misses.
    """
    per = aggregate(df, SETTING)
    rows, misses = [], []
    for task, (recommended, peers) in RECOMMENDED.items():
        sub = per[per.task == task]
        if sub.empty:
            continue
        wide = sub.pivot_table(index=SETTING, columns="method", values=["f1", "time", "tm_peak_mib"],
                               aggfunc="first")
        best_peer = wide["f1"][list(peers)].max(axis=1)
        x_mib = np.array([n * p * 8 / 2**20 for (_, n, p, *_rest) in wide.index])
        for ours in OURS[task]:
            frame = pd.DataFrame({"deficit": best_peer - wide["f1"][ours],
                                  "ratio": wide["time"][ours] / wide["time"]["abess"],
                                  # no memory column after --no-memory (pivot_table drops all-NaN columns)
                                  "mem": (wide["tm_peak_mib"][ours] / x_mib if "tm_peak_mib" in wide
                                          else np.nan)}).reset_index()
            for (n, p, s_), g in frame.groupby(["n", "p", "s"], sort=False):
                timed = g[g.p >= 1000]
                rows.append({"task": task, "n": n, "p": p, "s": s_,
                             "estimator": ours + (" (recommended)" if ours == recommended else ""),
                             "vs": "+".join(peers), "settings": len(g),
                             "f1_met": int((g.deficit <= 0.01 + 1e-12).sum()),
                             "worst_f1_deficit": g.deficit.max(),
                             "time_met": int((timed.ratio <= 1.0).sum()) if len(timed) else np.nan,
                             "median_time_vs_abess": g.ratio.median(), "worst_time_vs_abess": g.ratio.max(),
                             "peak_alloc_over_X": g.mem.max()})
            if ours == recommended:
                bad = frame[(frame.deficit > 0.01 + 1e-12) | ((frame.p >= 1000) & (frame.ratio > 1.0))]
                misses.append(bad.assign(task=task))
    table = pd.DataFrame(rows).sort_values(["task", "n", "p"], kind="stable", ascending=[False, True, True])
    return table, (pd.concat(misses, ignore_index=True) if misses else pd.DataFrame())


README_MARKERS = ("<!-- peers-table -->", "<!-- /peers-table -->")


def readme_table(df):
    """Compact per-size table for the README: mean F1 of every exact-k method, and the recommended one's targets."""
    by_size = aggregate(df, ["task", "n", "p", "s"])
    f1 = by_size.pivot_table(index=["task", "n", "p", "s"], columns="method", values="f1", aggfunc="first")
    met = targets(df)[0]
    rows = []
    f1 = f1.sort_index(level=[1, 2]).sort_index(level=0, ascending=False, sort_remaining=False)
    for (task, n, p, s_), r in f1.iterrows():
        ours, peers = RECOMMENDED[task]
        t = met[(met.task == task) & (met.n == n) & (met.p == p) & met.estimator.str.endswith("(recommended)")].iloc[0]
        row = {"task": task, "n, p, s": f"{n}, {p}, {s_}"}
        row.update({f"F1 {m}": r[m] for m in list(OURS[task]) + list(peers)})
        row.update({"F1 within 0.01 of best peer": f"{t.f1_met}/{t.settings}",
                    "median time / abess": t.median_time_vs_abess,
                    "time <= abess": "" if np.isnan(t.time_met) else f"{int(t.time_met)}/{t.settings}"})
        rows.append(row)
    table = pd.DataFrame(rows)
    first = [c for c in table.columns if not c.startswith("F1 ") or c == "F1 within 0.01 of best peer"]
    table = table[first[:2] + [c for c in table.columns if c not in first] + first[2:]]
    return to_markdown(table.fillna(np.nan), {c: ".3f" for c in table.columns if c.startswith("F1 ")}
                       | {"median time / abess": ".2f"})


def update_readme(df, readme, command):
    """Replace the block between README_MARKERS in ``readme`` (if present) with :func:`readme_table`."""
    text = readme.read_text()
    start, end = README_MARKERS
    if start not in text or end not in text:
        return False
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    block = (f"{start}\n\nMean support F1 per problem size (over rho, beta type and SNR) and, for the "
             f"recommended estimator (`IHT`: `IHTRegressor` / `IHTClassifier`), the settings within 0.01 of the best "
             f"peer's F1 and at most abess's time, written by `{command}`; "
             "every setting in `doc/peers/comparison.md`.\n\n" + readme_table(df) + f"\n\n{end}")
    readme.write_text(head + block + tail)
    return True


def cli_args(argv=None):
    """The command-line arguments, with file paths shortened to their names (no machine paths in reports)."""
    return " ".join(Path(a).name if os.sep in a else a for a in (sys.argv[1:] if argv is None else argv))


def to_markdown(df, floatfmt):
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, (float, np.floating)):
                cells.append("" if np.isnan(v) else format(v, floatfmt.get(c, ".3g")))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


FMT = {"deficit": ".3f", "ratio": ".2f", "worst_f1_deficit": ".3f", "median_time_vs_abess": ".2f",
       "worst_time_vs_abess": ".2f", "peak_alloc_over_X": ".2f", "time_met": ".0f",
       "f1": ".3f", "rel_risk": ".3f", "test": ".3f", "objective": ".4g", "time": ".4f", "cpu_time": ".4f",
       "time_vs_abess": ".2f", "cpu_vs_abess": ".2f",
       "max_time_vs_abess": ".2f", "obj_gap": ".4f", "f1_ge_abess": ".2f", "nnz": ".1f", "n_iter": ".0f",
       "tm_peak_mib": ".1f", "rss_peak_mib": ".1f", "rho": ".2f", "snr": ".1f"}


def revision():
    """The package's git commit and whether ``sparse_estimators/`` has uncommitted changes (read-only git)."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "sparse_estimators"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown revision"
    return head + (" + uncommitted changes in sparse_estimators/" if dirty else " (clean sparse_estimators/)")


def write_report(df, out, args, grid, elapsed, rev):
    import abess
    import sklearn

    import sparse_estimators

    blas = ", ".join(f"{i['internal_api']} {i.get('version', '')} ({i['num_threads']} threads at start)"
                     for i in threadpool_info())
    # a merged report takes the number of repeats from its rows (not from this command's --repeats)
    repeats = args.repeats if np.isfinite(elapsed) else int(df["repeat"].nunique())
    lines = [
        "# Head-to-head: exact-k sparse regression and classification",
        "",
        (f"Generated by `python benchmarks/compare_peers.py {cli_args()}` in {elapsed / 60:.1f} min."
         if np.isfinite(elapsed) else
         f"Merged by `python benchmarks/compare_peers.py {cli_args()}` from these runs (arguments, "
         f"revision, duration): {rev}."),
        f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
        f"abess {abess.__version__}, sparse_estimators {getattr(sparse_estimators, '__version__', '?')} "
        "at "
        + (f"git {rev} (read when the run started); " if np.isfinite(elapsed) else
           "the revisions above (runs merged here may have run at the same time, one per core); ")
        +
        f"{os.cpu_count()} CPUs; BLAS: {blas}; all fits run with BLAS and OpenMP pinned to "
        f"{args.threads} thread(s) by threadpoolctl (abess `thread={args.threads}`); `cpu_time` is the CPU "
        "time of the fit.",
        "",
        f"Grid: rho {grid['rhos']}, (n, p, s) {grid['sizes']}, beta types {grid['beta_types']}, "
        f"SNR {grid['snrs']}, {repeats} repeat(s) per setting ({min(repeats, grid['largest_repeats'])} "
        f"at the largest size), test sets of {args.n_test} rows; references (only where p <= "
        f"{grid['reference_max_p']}) with {grid['ref_cv']}-fold CV over {grid['ref_grid'][0]} alphas / "
        f"{grid['ref_grid'][1]} Cs.",
        "See the module docstring of `benchmarks/compare_peers.py` for the design, the classification scale and "
        "the exact definition of each metric. `f1`, `rel_risk`, `test`, `objective` are means over repeats, "
        "`time` is the median fit time in seconds (each the minimum of up to 5 fits within 0.2 s), "
        "`time_vs_abess` is that median over abess's median in the same "
        "setting; `tm_peak_mib` is the tracemalloc peak (Python/numpy allocations) and `rss_peak_mib` the sampled "
        "peak RSS increase during one fit (first repeat), in MiB. `conv_warn` counts ConvergenceWarnings.",
        "",
        "## Summary per method (over all settings)",
        "",
        "`obj_gap`: mean relative excess of the training objective over the best exact-k method of the setting "
        "(LassoCV excluded from the best); `f1_ge_abess`: fraction of settings where the mean F1 is at least "
        "abess's; `time_vs_abess`: median over settings of the per-setting ratio, `max_time_vs_abess` the worst; "
        "`cpu_vs_abess` the same median ratio for CPU time.",
        "",
    ]
    summ = summary(df)
    lines += [to_markdown(summ, FMT), ""]
    met, missed = targets(df)
    lines += ["## Against the peers, per estimator of ours", "",
              "`f1_met`: settings where its mean F1 is at least the best peer's minus 0.01; `time_met`: settings "
              "(p >= 1000 only) where its median fit time is at most abess's; `peak_alloc_over_X`: largest "
              "tracemalloc peak during a fit over the size of X (a copy of X would add 1).", "",
              to_markdown(met, FMT), ""]
    if len(missed):
        lines += ["Settings where the recommended estimator is more than 0.01 below the best peer's F1 or slower "
                  "than abess (`deficit`: best peer's F1 "
                  "minus ours; `ratio`: time over abess's):", "",
                  to_markdown(missed[["task"] + SETTING[1:] + ["deficit", "ratio"]], FMT), ""]
    by_size = aggregate(df, ["task", "n", "p", "s"])
    lines += ["## Per problem size (over rho, beta type, SNR)", "",
              to_markdown(by_size.drop(columns=["objective", "conv_warn"]), FMT), ""]
    lines += ["## Per setting", ""]
    full = aggregate(df, SETTING).drop(columns=["tm_peak_mib", "fits"])
    lines += [to_markdown(full, FMT), ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    return summ, by_size


def merge_runs(paths, write_report, out):
    """``--merge``: the rows of earlier runs' csv files (their ``.meta`` revisions joined), reported and saved."""
    df = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
    meta = [path.with_suffix(".meta").read_text().strip() for path in paths if path.with_suffix(".meta").exists()]
    write_report(df, "; ".join(meta) or "see the merged runs")
    df.to_csv(out.with_suffix(".csv"), index=False)
    return df


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
