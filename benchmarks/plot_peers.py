"""Plots and a plain-words summary of the peer comparison, from its CSV.

Reads ``doc/peers/comparison.csv`` (written by ``compare_peers.py``; this
script does not re-run it) and writes, into ``doc/peers/``:

* ``plot_f1.png``: mean support F1 against problem size, one line per method,
  regression and classification side by side;
* ``plot_time.png``: median fit time against problem size, log scale;
* ``plot_time_vs_abess.png``: the median per-setting ratio of fit time to
  abess's, log scale;
* ``summary_plain.md``: the per-size means of those plots as a table with
  plain column names.

Usage: ``python benchmarks/plot_peers.py [--csv PATH] [--out DIR]``.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["IHT", "AccelIHT", "RegIHT", "IOBS", "abess", "OMP", "LassoCV", "L1LogRegCV"]
LABELS = {"IHT": "IHT (ours)", "AccelIHT": "accelerated IHT (ours)", "RegIHT": "regularized IHT (ours)",
          "IOBS": "I-OBS (ours)", "abess": "abess", "OMP": "OMP (scikit-learn)",
          "LassoCV": "LassoCV (scikit-learn)", "L1LogRegCV": "L1 logistic CV (scikit-learn)"}
TASKS = ["regression", "classification"]


def per_size(df):
    """Mean F1, median time and median time ratio to abess per task, size and method."""
    keys = ["task", "n", "p", "s", "rho", "beta_type", "snr"]
    setting = df.groupby(keys + ["method"], as_index=False).agg(f1=("f1", "mean"), time=("time", "median"))
    abess = setting[setting.method == "abess"][keys + ["time"]].rename(columns={"time": "abess_time"})
    setting = setting.merge(abess, on=keys, how="left")
    setting["ratio"] = setting["time"] / setting["abess_time"]
    out = setting.groupby(["task", "n", "p", "s", "method"], as_index=False).agg(
        f1=("f1", "mean"), time=("time", "median"), ratio=("ratio", "median"))
    out["size"] = out.apply(lambda r: f"n={r.n}\np={r.p}", axis=1)
    return out


def _plot(table, column, ylabel, path, log):
    sizes = table[["n", "p"]].drop_duplicates().sort_values(["p", "n"])
    order = [f"n={n}\np={p}" for n, p in zip(sizes.n, sizes.p, strict=True)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=not log)
    for ax, task in zip(axes, TASKS, strict=True):
        sub = table[table.task == task]
        for method in METHODS:
            rows = sub[sub.method == method].set_index("size").reindex(order)
            if rows[column].notna().any():
                ax.plot(range(len(order)), rows[column].to_numpy(), marker="o", label=LABELS[method],
                        color=f"C{METHODS.index(method)}")
        ax.set_xticks(range(len(order)), order)
        ax.set_title(task)
        ax.set_xlabel("problem size (samples n, features p)")
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_summary(table, path):
    """The per-size table with plain column names (Markdown)."""
    lines = ["| task | samples (n) | features (p) | true features (s) | method | mean support F1 "
             "| median fit time (s) | fit time / abess's (median) |", "|---|---|---|---|---|---|---|---|"]
    rank = {m: i for i, m in enumerate(METHODS)}
    table = table.assign(order=table.method.map(rank), task_order=table.task.map(TASKS.index))
    for r in table.sort_values(["task_order", "p", "n", "order"]).itertuples():
        lines.append(f"| {r.task} | {r.n} | {r.p} | {r.s} | {LABELS[r.method]} | {r.f1:.3f} | {r.time:.4f} "
                     f"| {r.ratio:.2f} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=ROOT / "doc" / "peers" / "comparison.csv")
    parser.add_argument("--out", type=Path, default=ROOT / "doc" / "peers")
    args = parser.parse_args(argv)
    table = per_size(pd.read_csv(args.csv))
    _plot(table, "f1", "mean support F1", args.out / "plot_f1.png", log=False)
    _plot(table, "time", "median fit time (s), log scale", args.out / "plot_time.png", log=True)
    _plot(table, "ratio", "fit time / abess's, log scale", args.out / "plot_time_vs_abess.png", log=True)
    write_summary(table, args.out / "summary_plain.md")


if __name__ == "__main__":
    main()
