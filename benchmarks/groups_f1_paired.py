"""Group F1 of ours minus abess's, paired on fresh data sets of ``compare_groups.py``'s designs.

``compare_groups.py`` reports means over 10 data sets per setting, where one
group in one data set moves a mean F1 by 0.01 to 0.02: too few to tell a
deficit against abess from noise. This script fits only ``IHTRegressor`` /
``IHTClassifier`` (``k=g, groups=labels``, default parameters) and abess's
``LinearRegression`` / ``LogisticRegression`` (``support_size=[g],
group=labels``) on many data sets per setting (seeds offset by 100000, apart
from those of ``compare_groups.py``) and prints, per setting, both mean group
F1s and their paired difference with its standard error. One BLAS thread.

Run ``python benchmarks/groups_f1_paired.py --sizes 500,1000,10 --repeats 80``
(``--task``, ``--start`` to continue with further seeds; ``--rows FILE``
appends the per-data-set rows as JSON lines, and ``--summary FILE ...``
prints the table from such files instead of fitting).
"""

import argparse
import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_groups import FULL, group_f1, simulate_groups  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor  # noqa: E402


def one(task, n, p, g, rho_w, rho_b, snr, seed):
    import abess.linear

    X, y, _, _, labels, true = simulate_groups(task, n, p, g, rho_w, rho_b, snr, 10, seed)
    ours = (IHTRegressor if task == "regression" else IHTClassifier)(k=g, groups=labels).fit(X, y)
    peer = abess.linear.LinearRegression if task == "regression" else abess.linear.LogisticRegression
    theirs = peer(support_size=[g], group=labels, thread=1).fit(X, y)
    return {"task": task, "n": n, "p": p, "g": g, "rho_w": rho_w, "snr": snr, "seed": seed,
            "ours": group_f1(np.asarray(ours.groups_support_), true),
            "abess": group_f1(np.unique(labels[np.ravel(theirs.coef_) != 0]), true)}


def summary(rows):
    df = pd.DataFrame(rows)
    df["diff"] = df.ours - df.abess
    by = ["task", "n", "p", "g", "rho_w", "snr"]
    table = df.groupby(by).agg(data_sets=("diff", "size"), ours=("ours", "mean"), abess=("abess", "mean"),
                               diff=("diff", "mean"), se=("diff", lambda d: d.std(ddof=1) / np.sqrt(d.size)),
                               worse=("diff", lambda d: int((d < 0).sum())),
                               better=("diff", lambda d: int((d > 0).sum())))
    overall = df.groupby(["task", "n"]).agg(diff=("diff", "mean"),
                                            se=("diff", lambda d: d.std(ddof=1) / np.sqrt(d.size)))
    return table.round(4).to_string() + "\n\nover all settings:\n" + overall.round(4).to_string()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["500,1000,10"], metavar="N,P,G")
    parser.add_argument("--task", choices=("regression", "classification", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--start", type=int, default=0, help="first data set index (continue a run)")
    parser.add_argument("--rows", type=Path, help="append the per-data-set rows to this file (JSON lines)")
    parser.add_argument("--summary", type=Path, nargs="+", help="print the table from such files; no fits")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary([json.loads(line) for path in args.summary for line in path.read_text().splitlines()]))
        return
    warnings.simplefilter("ignore")
    tasks = ("regression", "classification") if args.task == "both" else (args.task,)
    sizes = [tuple(int(v) for v in s.split(",")) for s in args.sizes]
    rows = []
    with threadpool_limits(1):
        for task, (n, p, g), (rho_w, rho_b), snr in itertools.product(tasks, sizes, FULL["corrs"], FULL["snrs"]):
            for i in range(args.start, args.start + args.repeats):
                seed = 100000 + 1000 * i + 7 * n + p + int(100 * rho_w) + int(10 * snr)
                rows.append(one(task, n, p, g, rho_w, rho_b, snr, seed))
                if args.rows:
                    with args.rows.open("a") as fh:
                        fh.write(json.dumps(rows[-1]) + "\n")
    print(summary(rows))


if __name__ == "__main__":
    main()
