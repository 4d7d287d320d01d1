"""Run fancyimpute's SoftImpute and IterativeSVD on one matrix; called by ``compare_completion.py``.

Runs in the separate virtual environment that ``compare_completion.py``
builds (fancyimpute 0.7.0 needs scikit-learn < 1.6), so it imports neither
this package nor anything beyond fancyimpute's own dependencies.

Usage: ``python _fancyimpute_worker.py DATA.npz JOBS.json OUT.json``. ``DATA.npz``
holds ``X`` (the matrix with NaN at the missing entries), ``rows``, ``cols``
(the hidden entries to score) and ``truth`` (their true values). ``JOBS.json``
is a list of ``{"method": "SoftImpute" | "IterativeSVD", "params": {...}, "trace": bool}``;
SoftImpute's ``shrinkage_factor`` is a multiple of the largest singular value
of the zero-filled matrix (fancyimpute's default is 1/50). ``OUT.json``
receives one record per job: RMSE on the hidden entries, fit time (s) and
the tracemalloc peak (bytes) of a second, traced run (if ``trace``, default
true; None otherwise), plus the versions.
"""

import json
import platform
import sys
import time
import tracemalloc
import warnings

import numpy as np


def _run(job, X, sigma_max):
    from fancyimpute import IterativeSVD, SoftImpute

    params = dict(job["params"])
    if job["method"] == "SoftImpute":
        factor = params.pop("shrinkage_factor")
        imputer = SoftImpute(shrinkage_value=factor * sigma_max, verbose=False, **params)
    else:
        imputer = IterativeSVD(verbose=False, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return imputer.fit_transform(X)


def main():
    data_path, jobs_path, out_path = sys.argv[1:4]
    import fancyimpute
    import scipy
    import sklearn

    data = np.load(data_path)
    X, rows, cols, truth = data["X"], data["rows"], data["cols"], data["truth"]
    sigma_max = float(np.linalg.norm(np.where(np.isnan(X), 0.0, X), 2))  # (fancyimpute's own default scale)
    records = []
    for job in json.load(open(jobs_path)):
        X_in = X.copy()  # (the copies are made outside the timed and traced calls)
        start = time.perf_counter()
        out = _run(job, X_in, sigma_max)
        seconds = time.perf_counter() - start
        rmse = float(np.sqrt(np.mean((out[rows, cols] - truth) ** 2)))
        del out, X_in
        peak = None
        if job.get("trace", True):
            X_in = X.copy()
            tracemalloc.start()
            _run(job, X_in, sigma_max)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            del X_in
        records.append({**job, "rmse": rmse, "seconds": seconds, "peak_bytes": peak})
        print(json.dumps(records[-1]), flush=True)
    versions = {"fancyimpute": fancyimpute.__version__, "scikit-learn": sklearn.__version__,
                "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version()}
    json.dump({"versions": versions, "records": records}, open(out_path, "w"))


if __name__ == "__main__":
    main()
