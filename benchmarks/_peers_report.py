"""The report of ``compare_peers.py``: aggregates, targets against the peers, the Markdown page, the README table."""

import os
import platform

import numpy as np
import pandas as pd
from _bench_common import cli_args, to_markdown
from threadpoolctl import threadpool_info


def _ours(df, task):
    """Our estimators' names in ``df``'s rows of ``task``, in the order they were run."""
    return list(dict.fromkeys(df.loc[(df.task == task) & (df.family == "ours"), "method"]))


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
        for ours in _ours(df, task):
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
        row.update({f"F1 {m}": r[m] for m in _ours(df, task) + list(peers)})
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


FMT = {"deficit": ".3f", "ratio": ".2f", "worst_f1_deficit": ".3f", "median_time_vs_abess": ".2f",
       "worst_time_vs_abess": ".2f", "peak_alloc_over_X": ".2f", "time_met": ".0f",
       "f1": ".3f", "rel_risk": ".3f", "test": ".3f", "objective": ".4g", "time": ".4f", "cpu_time": ".4f",
       "time_vs_abess": ".2f", "cpu_vs_abess": ".2f",
       "max_time_vs_abess": ".2f", "obj_gap": ".4f", "f1_ge_abess": ".2f", "nnz": ".1f", "n_iter": ".0f",
       "tm_peak_mib": ".1f", "rss_peak_mib": ".1f", "rho": ".2f", "snr": ".1f"}


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
