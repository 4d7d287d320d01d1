"""LowRankImputer / complete_matrix against fancyimpute and scikit-learn: hidden-entry RMSE, fit time, peak memory.

Writes ``doc/peers/completion.md``.

Peers: fancyimpute 0.7.0's ``SoftImpute`` (shrinkage ``lambda = c
sigma_max`` of the zero-filled matrix for ``c`` in 0.001, 0.002, 0.005,
0.01, 0.02 (its default), 0.05, 0.1, 0.2, 0.5; exact SVD per iteration up to ``min(m, n) = 500``, else
its ``max_rank=50`` randomized SVD) and ``IterativeSVD`` (at the true rank
``r`` and at ``r + 1``, the rank of a rank-``r`` matrix plus column offsets,
which it does not centre; at the rank ``rank='auto'`` chose where there is
no true rank). fancyimpute fails with scikit-learn >= 1.6, so it runs in a
separate virtual environment that this script creates under
``~/.cache/sparse_estimators_bench/`` (or ``$SPARSE_ESTIMATORS_BENCH_CACHE``),
through ``benchmarks/_fancyimpute_worker.py`` (data passed as .npz, results
as JSON); the versions there are printed below the tables. In that
environment: ``pip install "fancyimpute==0.7.0" "scikit-learn<1.6"
"numpy<2"`` (fancyimpute 0.7.0 needs neither TensorFlow nor keras; cvxpy
and knnimpute come with it and are imported by its package but not used by
these two methods). scikit-learn's imputers run here: column means
(``SimpleImputer``), ``KNNImputer`` (5 neighbours) and ``IterativeImputer``
(BayesianRidge, 10 rounds; only up to 200 features, beyond which one fit
takes minutes).

Data: noisy rank-5 matrices (Gaussian factors, noise 0.1, column offsets
in [-5, 5]) with entries observed uniformly at random; a grayscale
photograph (``load_sample_image('china.jpg')``, 427 x 640, RGB mean, 50 %
observed); ``load_digits`` (1797 x 64, 70 % observed). The RMSE is over all
hidden entries, against their true (noisy) values: 0.1 is the noise floor of
the synthetic data. ``LowRankImputer`` runs at its defaults,
``LowRankImputer()`` (``solver='als', rank='auto'``: rank and ridge on the
factors chosen on held-out entries, the time including the choice; ``tol=1e-3``,
``max_iter=1000``), and, as a hard rank, with ``solver='accelerated',
max_iter=500`` (the default solver before version 0.1.0) at the true rank and
with ``rank='auto'``;
on the two real data sets, which have no sharp rank, a reference row gives the RMSE of the best
approximation of the *complete* matrix (column means plus truncated SVD,
hidden entries included) at the rank ``rank='auto'`` chose: what a model
of that rank could reach at best.
The 10000 x 5000 setting (5 % observed, 2.5 M entries) is built as a sparse
COO matrix (int32 indices) and completed by ``complete_matrix(...,
center=True)``, never dense; its RMSE is over 200000 random hidden entries.

Metrics: fit time (``fit_transform``, one BLAS thread, one run); peak
memory = the ``tracemalloc`` peak of a second, traced run of the same call
in the same process (Python and NumPy allocations, the input excluded, the
output included; BLAS workspaces not counted). For SoftImpute it is traced
at its default lambda only. ``SoftImpute, best lambda`` is chosen on the
hidden entries themselves (an oracle: favourable to the peer).

Run: ``python benchmarks/compare_completion.py`` (``--quick``: smallest setting
only, printed; ``--only TEXT``: the settings whose label contains TEXT, printed;
``--no-fancyimpute``: skip the separate environment).
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_sample_image
from sklearn.exceptions import ConvergenceWarning
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, KNNImputer, SimpleImputer
from threadpoolctl import threadpool_limits

from sparse_estimators.impute import LowRankImputer, choose_rank, complete_matrix

OUT = Path(__file__).resolve().parents[1] / "doc" / "peers" / "completion.md"
WORKER = Path(__file__).resolve().with_name("_fancyimpute_worker.py")
FANCY_REQUIREMENTS = ["fancyimpute==0.7.0", "scikit-learn<1.6", "numpy<2"]
SOFT_FACTORS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5]
SOFT_DEFAULT = 0.02
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
MB = 1e6


# -- the separate environment of fancyimpute ------------------------------------------------------------
def cache_dir():
    default = Path.home() / ".cache" / "sparse_estimators_bench"
    return Path(os.environ.get("SPARSE_ESTIMATORS_BENCH_CACHE", default))


def fancyimpute_python():
    """The Python of the fancyimpute environment, created (once) under the cache directory."""
    env_dir = cache_dir() / "fancyimpute-0.7.0"
    python = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    marker = env_dir / "installed.txt"
    wanted = " ".join(FANCY_REQUIREMENTS)
    if not (marker.exists() and marker.read_text() == wanted and python.exists()):
        print(f"creating the fancyimpute environment in {env_dir} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(env_dir)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *FANCY_REQUIREMENTS], check=True)
        marker.write_text(wanted)
    return python


def run_fancyimpute(python, X, hidden, ranks):
    """SoftImpute on the lambda grid and IterativeSVD at ``ranks``, in the worker; (records, versions)."""
    max_rank = None if min(X.shape) <= 500 else 50
    jobs = [{"method": "SoftImpute", "params": {"shrinkage_factor": c, "max_rank": max_rank},
             "trace": c == SOFT_DEFAULT} for c in SOFT_FACTORS]
    jobs += [{"method": "IterativeSVD", "params": {"rank": int(r)}} for r in ranks]
    rows, cols = np.nonzero(hidden)
    with tempfile.TemporaryDirectory() as tmp:
        data, job_file, out = (Path(tmp) / name for name in ("data.npz", "jobs.json", "out.json"))
        np.savez(data, X=np.where(hidden, np.nan, X), rows=rows, cols=cols, truth=X[rows, cols])
        job_file.write_text(json.dumps(jobs))
        subprocess.run([str(python), str(WORKER), str(data), str(job_file), str(out)], check=True,
                       env={**os.environ, **ONE_THREAD}, stdout=subprocess.DEVNULL)
        result = json.loads(out.read_text())
    return result["records"], result["versions"]


# -- data --------------------------------------------------------------------------------------------------
def synthetic(m, n, observed_share, seed, rank=5, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) + rng.uniform(-5, 5, n)
    X += noise * rng.standard_normal(X.shape)
    hidden = rng.uniform(size=X.shape) >= observed_share
    return X, hidden


def image(seed, observed_share=0.5):
    X = load_sample_image("china.jpg").astype(float).mean(axis=2)
    hidden = np.random.default_rng(seed).uniform(size=X.shape) >= observed_share
    return X, hidden


def digits(seed):
    X = load_digits().data.astype(float)
    hidden = np.random.default_rng(seed).uniform(size=X.shape) < 0.3
    return X, hidden


def big_sparse(m, n, observed_share, seed, rank=5, noise=0.1, n_test=200_000):
    """Observed entries of a noisy rank-``rank`` matrix plus offsets as COO (never dense), and test entries."""
    rng = np.random.default_rng(seed)
    A, B, mu = rng.standard_normal((m, rank)), rng.standard_normal((rank, n)), rng.uniform(-5, 5, n)
    nnz = int(observed_share * m * n)
    flat = np.unique(rng.integers(0, m * n, int(nnz * (1.05 + observed_share)), dtype=np.int64))
    flat = np.sort(rng.permutation(flat)[:nnz])
    rows, cols = (a.astype(np.int32) for a in np.divmod(flat, n))

    def values(r, c):
        out = np.empty(r.size)
        for s in range(0, r.size, 1 << 18):
            sl = slice(s, s + (1 << 18))
            out[sl] = np.einsum("ij,ij->i", A[r[sl]], B.T[c[sl]]) + mu[c[sl]]
        return out + noise * rng.standard_normal(r.size)

    observed = sp.coo_matrix((values(rows, cols), (rows, cols)), shape=(m, n))
    test = rng.integers(0, m * n, 2 * n_test, dtype=np.int64)
    test = test[~np.isin(test, flat)][:n_test]  # (hidden: not observed)
    t_rows, t_cols = np.divmod(test, n)
    return observed, (t_rows, t_cols, values(t_rows, t_cols))


# -- measuring ---------------------------------------------------------------------------------------------
def measure(fit):
    """``fit()``'s result, its time, and the tracemalloc peak (bytes) of a second call."""
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        out = fit()
        seconds = time.perf_counter() - start
        gc.collect()
        tracemalloc.start()
        fit()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return out, seconds, peak


def rmse(out, X, hidden):
    return float(np.sqrt(np.mean((out[hidden] - X[hidden]) ** 2)))


def row(label, name, error, seconds, peak, note=""):
    return {"data": label, "imputer": name, "rmse": error, "seconds": seconds, "peak": peak, "note": note}


def run_dense(label, X, hidden, true_rank, python):
    X_missing = np.where(hidden, np.nan, X)
    rows, ours = [], {}

    def add(name, make, key=None):
        imputer = None

        def fit():
            nonlocal imputer
            imputer = make()
            return imputer.fit_transform(X_missing)

        out, seconds, peak = measure(fit)
        if out.shape != X.shape:
            rows.append(row(label, name, None, seconds, peak, "dropped a column"))
        else:
            rows.append(row(label, name.format(imputer=imputer), rmse(out, X, hidden), seconds, peak))
        if key:
            ours[key] = rows[-1]
        print(rows[-1], flush=True)
        return imputer

    if true_rank is not None:
        add(f"LowRankImputer, solver='accelerated', true rank {true_rank}",
            lambda: LowRankImputer(rank=true_rank, solver="accelerated", max_iter=500), "true")
    auto = add("LowRankImputer, solver='accelerated', rank='auto' (chose {imputer.rank_})",
               lambda: LowRankImputer(rank="auto", solver="accelerated", max_iter=500), "auto")
    add("LowRankImputer, solver='als' (default), rank='auto' (chose rank {imputer.rank_}, alpha {imputer.alpha_:.3g})",
        LowRankImputer, "als")  # (what a user gets: every parameter at its default)
    if true_rank is None:
        # how far a rank-k model itself is from the hidden entries: the best rank-k approximation of the
        # complete (centred) matrix, which sees the hidden entries (a bound on what rank k can do, not an imputer)
        k = auto.rank_
        mean = X.mean(axis=0)
        U, s, Vt = np.linalg.svd(X - mean, full_matrices=False)
        best_k = mean + (U[:, :k] * s[:k]) @ Vt[:k]
        rows.append(row(label, f"(reference, not an imputer) rank-{k} SVD of the complete matrix",
                        rmse(best_k, X, hidden), None, None, "sees the hidden entries"))
    peers = []
    for name, make in [("column means", SimpleImputer), ("KNNImputer", KNNImputer)]:
        add(name, make)
        peers.append(rows[-1])
    if X.shape[1] <= 200:
        add("IterativeImputer", lambda: IterativeImputer(random_state=0))
        peers.append(rows[-1])
    else:
        rows.append(row(label, "IterativeImputer", None, None, None, "not run (> 200 features)"))
    soft = None
    if python is not None:
        r = true_rank if true_rank is not None else auto.rank_
        records, _ = run_fancyimpute(python, X, hidden, [r, r + 1])
        softs = [rec for rec in records if rec["method"] == "SoftImpute"]
        default = next(rec for rec in softs if rec["params"]["shrinkage_factor"] == SOFT_DEFAULT)
        best = min(softs, key=lambda rec: rec["rmse"])
        for rec, what in [(default, "default lambda = sigma_max / 50"), (best, "best lambda (oracle)")]:
            c = rec["params"]["shrinkage_factor"]
            peak = default["peak_bytes"]
            rows.append(row(label, f"fancyimpute SoftImpute, {what}: c = {c}", rec["rmse"], rec["seconds"], peak,
                            "peak at the default lambda" if rec is not default else ""))
            print(rows[-1], flush=True)
        soft = rows[-1]
        soft["grid_seconds"] = sum(rec["seconds"] for rec in softs)
        peers.append(soft)
        for rec in records:
            if rec["method"] == "IterativeSVD":
                rows.append(row(label, f"fancyimpute IterativeSVD, rank {rec['params']['rank']}", rec["rmse"],
                                rec["seconds"], rec["peak_bytes"]))
                peers.append(rows[-1])
                print(rows[-1], flush=True)
    return rows, ours, peers, soft


def run_big(label, m, n, share, true_rank, grid):
    observed, (t_rows, t_cols, truth) = big_sparse(m, n, share, seed=7)
    nnz = observed.nnz
    input_bytes = observed.data.nbytes + observed.row.nbytes + observed.col.nbytes
    rows, ours = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        chosen = choose_rank(observed, grid, center=True, max_iter=500, tol=1e-3).best_rank
        choice_seconds = time.perf_counter() - start
    for key, rank, name in [("true", true_rank, f"complete_matrix, true rank {true_rank}"),
                            ("auto", chosen, f"complete_matrix, rank chosen by choose_rank over {grid}, "
                                             f"tol 1e-3 ({chosen})")]:
        result, seconds, peak = measure(lambda r=rank: complete_matrix(observed, r, center=True, max_iter=500))
        factors = 8 * ((m + n) * rank + rank + n)
        note = (f"{result.n_iter} iterations; peak / (observed data + factors) = {peak / (input_bytes + factors):.2f}"
                + (f"; rank choice {choice_seconds:.1f} s more" if key == "auto" else ""))
        err = float(np.sqrt(np.mean((result.predict(t_rows, t_cols) - truth) ** 2)))
        rows.append(row(label, name, err, seconds, peak, note))
        ours[key] = rows[-1]
        print(rows[-1], flush=True)

    def means():
        counts = np.bincount(observed.col, minlength=n)
        return np.bincount(observed.col, weights=observed.data, minlength=n) / np.maximum(counts, 1)

    mu, seconds, peak = measure(means)
    rows.append(row(label, "column means (from the sparse entries)", float(np.sqrt(np.mean((mu[t_cols] - truth) ** 2))),
                    seconds, peak))
    peers = [rows[-1]]
    dense = m * n * 8 / MB
    for name in ["KNNImputer", "IterativeImputer", "fancyimpute SoftImpute / IterativeSVD"]:
        rows.append(row(label, name, None, None, None, f"not run: needs the dense matrix ({dense:.0f} MB per float64 "
                                                     "copy, several copies)"))
    info = {"nnz": nnz, "input_bytes": input_bytes, "dense_bytes": m * n * 8, "shape": (m, n), "share": share,
            "factor_bytes": 8 * ((m + n) * true_rank + true_rank + n), "peak": ours["true"]["peak"],
            "seconds": ours["true"]["seconds"]}
    return rows, ours, peers, info


def fmt(value, spec):
    return "" if value is None else format(value, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-fancyimpute", action="store_true")
    parser.add_argument("--no-big", action="store_true")
    parser.add_argument("--only", metavar="TEXT", help="only the settings whose label contains TEXT (printed, "
                        "doc/peers/completion.md not written)")
    args = parser.parse_args()
    python = None if args.no_fancyimpute else fancyimpute_python()
    versions = None
    if python is not None:
        versions = json.loads(subprocess.run(
            [str(python), "-c", "import json, platform, fancyimpute, sklearn, numpy; print(json.dumps({"
             "'fancyimpute': fancyimpute.__version__, 'scikit-learn': sklearn.__version__, "
             "'numpy': numpy.__version__, 'python': platform.python_version()}))"],
            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    settings = [("synthetic 300 x 200, 50 % observed", synthetic(300, 200, 0.5, 0), 5)]
    if not args.quick:
        settings += [
            ("synthetic 300 x 200, 20 % observed", synthetic(300, 200, 0.2, 1), 5),
            ("synthetic 2000 x 1000, 10 % observed", synthetic(2000, 1000, 0.1, 2), 5),
            ("synthetic 2000 x 1000, 5 % observed", synthetic(2000, 1000, 0.05, 4), 5),
            ("china.jpg grayscale 427 x 640, 50 % observed", image(5), None),
            ("load_digits 1797 x 64, 70 % observed", digits(3), None),
        ]
    if args.only:
        settings = [s for s in settings if args.only in s[0]]
    all_rows, targets = [], []
    with threadpool_limits(1):
        for label, (X, hidden), true_rank in settings:
            rows, ours, peers, soft = run_dense(label, X, hidden, true_rank, python)
            all_rows += rows
            targets.append((label, ours, peers, soft))
        big = None
        if not (args.quick or args.no_big or args.only):
            label = "synthetic 10000 x 5000, 5 % observed (sparse)"
            rows, ours, peers, big = run_big(label, 10000, 5000, 0.05, 5, [2, 3, 4, 5, 6, 8])
            all_rows += rows
            targets.append((label, ours, peers, None))
    text = report(all_rows, targets, versions, big)
    if not (args.quick or args.only):
        OUT.write_text(text)
    print(text)


def report(all_rows, targets, versions, big):
    header = ["data", "imputer", "RMSE on hidden entries", "fit time (s)", "peak memory (MB)", "note"]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in all_rows:
        table.append("| " + " | ".join([r["data"], r["imputer"], fmt(r["rmse"], ".4f"), fmt(r["seconds"], ".3f"),
                                        fmt(None if r["peak"] is None else r["peak"] / MB, ".1f"), r["note"]]) + " |")
    head = ["data", "best peer (RMSE)", "ours, true rank (accelerated)",
            "ours, rank='auto': default solver='als' (accelerated)", "RMSE <= best peer's (accelerated)",
            "time ours / SoftImpute (best lambda)", "time <= half"]
    shrink_head = ["data", "SoftImpute, best lambda (oracle)", "solver='als', rank='auto' (rank, alpha)",
                   "RMSE <= SoftImpute oracle's", "time / SoftImpute at its best lambda",
                   "time / SoftImpute's 9-lambda grid"]
    shrink = ["| " + " | ".join(shrink_head) + " |", "|" + "---|" * len(shrink_head)]
    goal = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, ours, peers, soft in targets:
        scored = [p for p in peers if p["rmse"] is not None]
        best = min(scored, key=lambda p: p["rmse"])
        # (the default, solver='als', where it ran, else the hard rank's choice; the hard rank's verdict in brackets)
        default = ours.get("als", ours["auto"])
        mine = [ours[k] for k in ("true", "als" if "als" in ours else "auto") if k in ours]
        verdict = "yes" if all(o["rmse"] <= best["rmse"] for o in mine) else "no"
        chosen = f"{default['rmse']:.4f}"
        if "als" in ours:
            chosen += f" ({ours['auto']['rmse']:.4f})"
            verdict += " (" + ("yes" if ours["auto"]["rmse"] <= best["rmse"] else "no") + ")"
        cells = [label, f"{best['imputer']} ({best['rmse']:.4f})",
                 fmt(ours["true"]["rmse"], ".4f") if "true" in ours else "(no true rank)", chosen, verdict]
        if soft is not None:
            fast = ours.get("true", default)
            ratio = fast["seconds"] / soft["seconds"]
            equal = fast["rmse"] <= soft["rmse"]
            cells += [f"{ratio:.2f} ({fast['seconds']:.2f} s / {soft['seconds']:.2f} s)",
                      ("yes" if ratio <= 0.5 else "no") if equal else "n/a (less accurate)"]
        else:
            cells += ["SoftImpute not run", ""]
        goal.append("| " + " | ".join(cells) + " |")
        if soft is not None and "als" in ours:
            a = ours["als"]
            shrink.append("| " + " | ".join([
                label, f"{soft['rmse']:.4f} ({soft['seconds']:.2f} s)",
                f"{a['rmse']:.4f} ({a['imputer'].split('(')[-1]}",
                "yes" if a["rmse"] <= soft["rmse"] else "no",
                f"{a['seconds'] / soft['seconds']:.2f} ({a['seconds']:.2f} s)",
                f"{a['seconds'] / soft['grid_seconds']:.2f} ({soft['grid_seconds']:.2f} s)"]) + " |")
    lines = ["# LowRankImputer against fancyimpute and scikit-learn's imputers", "",
             "Generated by `python benchmarks/compare_completion.py`; do not edit by hand (rerun the command).", "",
             __doc__.split("\n\n", 2)[2].split("\n\nRun:")[0], "", "## Against the peers", "",
             "Whether ours (the hard rank at the true rank where there is one, and the default "
             "`LowRankImputer()`; in brackets the hard rank's `rank='auto'`) has at "
             "most the best peer's RMSE, and whether ours at the true rank (else the default, validation "
             "included) takes at most half SoftImpute's time at its best lambda, when at least as accurate.",
             "", *goal, "",
             "Shrinkage: the default `LowRankImputer()` (the rank and the ridge on the "
             "factors chosen on held-out observed entries; time includes the choice) against SoftImpute at its "
             "best lambda (chosen on the hidden entries: an oracle), and against the time of SoftImpute's whole "
             "grid of 9 lambdas (what choosing lambda costs it when there is no oracle).", "", *shrink, ""]
    if big is not None:
        (m, n), data = big["shape"], big["input_bytes"] + big["factor_bytes"]
        lines += [f"Memory, {m} x {n} with {big['share']:.0%} observed: {big['nnz']} observed entries, "
                  f"{big['input_bytes'] / MB:.1f} MB as COO (float64 values, int32 indices), factors and offsets at "
                  f"the true rank {big['factor_bytes'] / MB:.2f} MB; a dense float64 copy of the matrix would be "
                  f"{big['dense_bytes'] / MB:.0f} MB. Measured: tracemalloc peak of complete_matrix at the true "
                  f"rank {big['peak'] / MB:.0f} MB ({big['peak'] / data:.2f} x the observed data and factors), fit "
                  f"time {big['seconds']:.1f} s.", ""]
    lines += ["## All results", "", *table, ""]
    if versions is not None:
        lines += ["fancyimpute ran in its own virtual environment (created by this script under the cache "
                  "directory): " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
