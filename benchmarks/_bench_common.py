"""What the benchmark scripts share: repeated timed fits, Markdown tables, and where a report came from.

``fit_quietly`` times a fit as every comparison script does (short fits
repeated, the minimum kept); ``to_markdown`` writes their tables;
``cli_args`` and ``revision`` name the command and the git commit a report
was made by (file paths shortened to their names: no machine paths in
reports); ``merge_runs`` joins the raw rows of runs made in parallel.
"""

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

ROOT = Path(__file__).resolve().parent.parent


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


def merge_runs(paths, write_report, out):
    """``--merge``: the rows of earlier runs' csv files (their ``.meta`` revisions joined), reported and saved."""
    df = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
    meta = [path.with_suffix(".meta").read_text().strip() for path in paths if path.with_suffix(".meta").exists()]
    write_report(df, "; ".join(meta) or "see the merged runs")
    df.to_csv(out.with_suffix(".csv"), index=False)
    return df
