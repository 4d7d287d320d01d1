"""``k=None``: the automatic choice of k against abess's default, LassoCV and L1 logistic CV.

On the designs of ``benchmarks/compare_peers.py`` (AR(1) correlation rho,
two coefficient patterns, four SNRs, sizes up to n = 2000, p = 10000; its
``simulate``), for each data set:

* ours: ``IHTRegressor()`` / ``IHTClassifier()`` with their defaults
  (``k=None``: EBIC along a warm-started hard-thresholding path, then the
  estimator's own fit at the chosen level), and the same estimators choosing
  with the other criteria (``'aic'``, ``'bic'``, ``'gic'``: abess's
  generalised information criterion), so the default can be justified;
* the cost of the automatic choice: its fit time over the time of one fit at
  the chosen ``k`` (``IHTRegressor(k=k_)``), both on this data set;
* abess's default (``support_size=None``: its path ``0 .. n / (log log n
  log p)`` tuned by its EBIC);
* references that do not fix k: ``LassoCV(cv=5)`` and ``LogisticRegressionCV``
  with an L1 penalty (liblinear, 10 values of C, log-loss), up to
  ``p = 1000`` (each takes about a minute at p = 10000).

Metrics: support F1 against the true support, the chosen number of features,
fit time (minimum over repeated fits of short ones, ``_bench_common.fit_quietly``),
one BLAS thread for everybody. Writes ``doc/auto_k.md`` (``--out``) and the raw
rows to a CSV beside it.

Run: ``python benchmarks/auto_k.py`` (the full grid: about 40 minutes on an
idle machine), ``--quick`` (two sizes, a few minutes), or ``--sizes`` to
choose the sizes.
"""

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LassoCV, LogisticRegressionCV
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import fit_quietly, to_markdown  # noqa: E402
from _peer_designs import simulate  # noqa: E402
from compare_peers import FULL, QUICK  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor  # noqa: E402

DEFAULT_OUT = ROOT / "doc" / "auto_k.md"
OURS = {"regression": IHTRegressor, "classification": IHTClassifier}
CRITERIA = ("ebic", "aic", "bic", "gic")


def with_criterion(cls, criterion):
    """``cls`` choosing k by ``criterion`` (the default is ``cls._k_criterion``)."""
    if criterion == cls._k_criterion:
        return cls
    return type(f"{cls.__name__}_{criterion}", (cls,), {"_k_criterion": criterion})


def f1_score(support, truth):
    hits = np.intersect1d(support, truth).size
    return 2.0 * hits / (support.size + truth.size) if hits else 0.0


def support_of(model):
    return np.flatnonzero(np.any(np.atleast_2d(np.asarray(model.coef_)) != 0, axis=0))


def methods(task, p):
    import abess.linear

    out = {f"IHT k=None ({c})": (lambda c=c: with_criterion(OURS[task], c)()) for c in CRITERIA}
    out["abess default"] = ((lambda: abess.linear.LinearRegression()) if task == "regression"
                            else (lambda: abess.linear.LogisticRegression()))
    if p <= 1000:
        out["LassoCV" if task == "regression" else "L1 LogisticRegressionCV"] = (
            (lambda: LassoCV(cv=5)) if task == "regression" else
            (lambda: LogisticRegressionCV(Cs=10, l1_ratios=(1.0,), solver="liblinear", cv=5, scoring="neg_log_loss",
                                          use_legacy_attributes=False, max_iter=1000)))
    return out


def run(task, grid, repeats, log):
    rows = []
    largest = max(grid["sizes"], key=lambda size: size[0] * size[1])
    for (n, p, s), rho, beta_type, snr in itertools.product(grid["sizes"], grid["rhos"], grid["beta_types"],
                                                             grid["snrs"]):
        start = time.perf_counter()
        for rep in range(min(repeats, grid["largest_repeats"]) if (n, p, s) == largest else repeats):
            seed = int(np.random.SeedSequence([n, p, s, int(rho * 100), beta_type, int(snr * 10), rep, 24]
                                              ).generate_state(1)[0])
            X, y, _, _, b_true = simulate(task, n, p, s, rho, beta_type, snr, 10, seed)
            truth = np.flatnonzero(b_true)
            base = {"task": task, "n": n, "p": p, "s": s, "rho": rho, "beta_type": beta_type, "snr": snr,
                    "repeat": rep}
            for name, factory in methods(task, p).items():
                model, elapsed, _, _ = fit_quietly(factory, X, y)
                support = support_of(model)
                row = dict(base, method=name, f1=f1_score(support, truth), k=support.size, time=elapsed)
                if name == f"IHT k=None ({OURS[task]._k_criterion})":
                    k_ = model.k_
                    _, one, _, _ = fit_quietly(lambda k_=k_: OURS[task](k=k_), X, y)
                    row.update(time_one_fit=one, cost_vs_one_fit=elapsed / one, path_levels=model.k_path_.size)
                rows.append(row)
        log(f"[{task}] n={n} p={p} rho={rho} beta={beta_type} snr={snr}: {time.perf_counter() - start:.1f} s")
    return pd.DataFrame(rows)


def report(df, command, elapsed):
    default = {task: f"IHT k=None ({cls._k_criterion})" for task, cls in OURS.items()}
    lines = ["# Choosing k automatically (`k=None`)", "",
             f"Written by `{command}` in {elapsed / 60:.0f} min (one BLAS thread). Designs of "
             "`benchmarks/compare_peers.py`; every estimator with its defaults, the true number of features `s` "
             "unknown to all of them. Support F1 against the true support (mean over data sets), chosen number of "
             "features (mean), and median fit time.", ""]
    for task, g in df.groupby("task", sort=False):
        lines += [f"## {task}", ""]
        size = g.groupby(["method", "n", "p", "s"], sort=False).agg(f1=("f1", "mean"), k=("k", "mean"),
                                                                     time=("time", "median")).reset_index()
        wide = size.pivot_table(index="method", columns=["n", "p", "s"], values=["f1", "k"], aggfunc="first")
        table = pd.DataFrame(index=wide.index)
        for (n, p, s) in size[["n", "p", "s"]].drop_duplicates().itertuples(index=False):
            table[f"F1 {n}x{p}"] = wide[("f1", n, p, s)]
            table[f"k {n}x{p} (s={s})"] = wide[("k", n, p, s)]
        table["mean F1"] = g.groupby("method").f1.mean()
        per_setting = g.groupby(["method", "n", "p", "rho", "beta_type", "snr"]).f1.mean().unstack("method")
        deficit = per_setting.sub(per_setting["abess default"], axis=0)
        table["settings > 0.01 below abess"] = (deficit < -0.01).sum()
        table["worst vs abess"] = deficit.min()
        order = [default[task]] + [m for m in table.index if m != default[task]]
        table = table.loc[order].reset_index()
        lines += [to_markdown(table, {c: (".1f" if c.startswith("k ") else ".3f") for c in table.columns}), ""]
        ours = g[g.method == default[task]]
        cost = ours.groupby(["n", "p"]).agg(median=("cost_vs_one_fit", "median"), worst=("cost_vs_one_fit", "max"),
                                            levels=("path_levels", "median"), time=("time", "median"),
                                            one=("time_one_fit", "median")).reset_index()
        abess_time = g[g.method == "abess default"].groupby(["n", "p"]).time.median().rename("abess").reset_index()
        cost = cost.merge(abess_time, on=["n", "p"]).astype({"n": int, "p": int}).astype({"n": str, "p": str})
        cost["abess / ours"] = cost["abess"] / cost["time"]
        lines += [f"Cost of `{default[task]}`: its fit time over the time of one fit at the chosen k (same data "
                  "set; median and worst over data sets), the median number of path levels, and the median "
                  "times (s).", "",
                  to_markdown(cost.rename(columns={"median": "cost median", "worst": "cost worst",
                                                   "levels": "path levels", "time": "s auto", "one": "s one fit",
                                                   "abess": "s abess default"}),
                              {"cost median": ".2f", "cost worst": ".2f", "path levels": ".0f", "s auto": ".4f",
                               "s one fit": ".4f", "s abess default": ".4f", "abess / ours": ".2f"}), ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="two sizes, fewer settings")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--task", choices=("regression", "classification", "both"), default="both")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--sizes", default=None,
                        help="problem sizes 'n,p,s;n,p,s' (default: the grid's, up to 2000 x 10000)")
    args = parser.parse_args(argv)
    threadpool_limits(1)
    grid = dict(QUICK if args.quick else FULL)
    if args.sizes:
        grid["sizes"] = tuple(tuple(int(v) for v in size.split(",")) for size in args.sizes.split(";"))
    tasks = ("regression", "classification") if args.task == "both" else (args.task,)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = pd.concat([run(task, grid, args.repeats, lambda m: print(m, file=sys.stderr, flush=True))
                        for task in tasks], ignore_index=True)
    command = "python benchmarks/auto_k.py" + (" --quick" if args.quick else "") + (
        f" --repeats {args.repeats}" if args.repeats != 5 else "") + (
        f" --task {args.task}" if args.task != "both" else "") + (f" --sizes '{args.sizes}'" if args.sizes else "")
    text = report(df, command, time.perf_counter() - start)
    args.out.write_text(text + "\n")
    df.to_csv(args.out.with_suffix(".csv"), index=False)
    print(text)


if __name__ == "__main__":
    main()
