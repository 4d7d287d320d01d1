"""``LowRankImputer()`` at its defaults against SoftImpute at its oracle lambda, interleaved, medians.

The data sets, settings and SoftImpute of :source:`benchmarks/compare_completion.py`
(fancyimpute 0.7.0 in its own environment, one BLAS thread), but only these
two fits, alternated ``--repeats`` times (one of ours, then one SoftImpute
fit in a fresh worker process, ...), so that a loaded machine slows both
alike; prints each one's median wall-clock and CPU seconds (CPU: ours only,
the worker reports wall-clock) and the ratio of the medians. SoftImpute runs
at the lambda factor ``c`` given per data set (the oracle of
``doc/peers/completion.md``: the best on the hidden entries).

Run: ``python benchmarks/bench_als_vs_softimpute.py [--only TEXT] [--repeats 5]``.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from compare_completion import ONE_THREAD, WORKER, digits, fancyimpute_python, image, synthetic
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from sparse_estimators.impute import LowRankImputer

#: (label, data, SoftImpute's oracle factor c in doc/peers/completion.md)
SETS = [("synthetic 300 x 200, 50 % observed", lambda: synthetic(300, 200, 0.5, 0), 0.005),
        ("synthetic 300 x 200, 20 % observed", lambda: synthetic(300, 200, 0.2, 1), 0.05),
        ("synthetic 2000 x 1000, 10 % observed", lambda: synthetic(2000, 1000, 0.1, 2), 0.02),
        ("synthetic 2000 x 1000, 5 % observed", lambda: synthetic(2000, 1000, 0.05, 4), 0.1),
        ("china.jpg grayscale 427 x 640, 50 % observed", lambda: image(5), 0.005),
        ("load_digits 1797 x 64, 70 % observed", lambda: digits(3), 0.02)]


def soft_impute(python, X, hidden, c):
    """One SoftImpute fit at ``lambda = c sigma_max`` in the worker: (RMSE, seconds)."""
    rows, cols = np.nonzero(hidden)
    job = {"method": "SoftImpute", "params": {"shrinkage_factor": c, "max_rank": None if min(X.shape) <= 500 else 50},
           "trace": False}
    with tempfile.TemporaryDirectory() as tmp:
        data, job_file, out = (Path(tmp) / name for name in ("data.npz", "jobs.json", "out.json"))
        np.savez(data, X=np.where(hidden, np.nan, X), rows=rows, cols=cols, truth=X[rows, cols])
        job_file.write_text(json.dumps([job]))
        subprocess.run([str(python), str(WORKER), str(data), str(job_file), str(out)], check=True,
                       env={**os.environ, **ONE_THREAD}, stdout=subprocess.DEVNULL)
        record = json.loads(out.read_text())["records"][0]
    return record["rmse"], record["seconds"]


def ours(X, hidden):
    """One ``fit_transform``: (RMSE, wall seconds, CPU seconds, rank, alpha)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        wall, cpu = time.perf_counter(), time.process_time()
        imputer = LowRankImputer()  # (every parameter at its default: what a user gets)
        out = imputer.fit_transform(np.where(hidden, np.nan, X))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return float(np.sqrt(np.mean((out[hidden] - X[hidden]) ** 2))), wall, cpu, imputer.rank_, imputer.alpha_


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", metavar="TEXT", help="only the data sets whose label contains TEXT")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    python = fancyimpute_python()
    print(f"load average at the start: {os.getloadavg()[0]:.1f} (the figures below are medians of "
          f"{args.repeats} alternated runs)")
    with threadpool_limits(1):
        for label, make, c in SETS:
            if args.only and args.only not in label:
                continue
            X, hidden = make()
            mine, theirs = [], []
            for _ in range(args.repeats):
                mine.append(ours(X, hidden))
                theirs.append(soft_impute(python, X, hidden, c))
            wall = float(np.median([r[1] for r in mine]))
            cpu = float(np.median([r[2] for r in mine]))
            soft = float(np.median([r[1] for r in theirs]))
            print(f"{label}: ours RMSE {mine[-1][0]:.4f} (rank {mine[-1][3]}, alpha {mine[-1][4]:.3g}) wall "
                  f"{wall:.3f} s (CPU {cpu:.3f} s); SoftImpute c = {c} RMSE {theirs[-1][0]:.4f} wall {soft:.3f} s; "
                  f"ratio of medians {wall / soft:.2f}; load average now {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
