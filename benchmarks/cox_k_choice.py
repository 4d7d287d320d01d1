"""Choosing k for the Cox model: information criteria against cross-validated concordance.

20 simulated data sets: n = 200, p = 25 standard normal features, three of
them with log hazard ratios 1, -0.8 and 0.7, exponential event times with
rate ``exp(x beta)`` censored by independent exponential times of mean 2
(about 37 % censored). ``IHTCoxPHSurvivalAnalysis`` with ``k=None`` (EBIC
along the path), ``SparsityIC`` (its default criterion), and
``SparsityCV`` (5 folds, the held-out concordance index, the estimator's
``score``) with its default refit (the best mean score) and with
``refit=one_standard_error``. Prints the chosen ``k`` per data set and how
often it is the true 3.

Run: ``python benchmarks/cox_k_choice.py [--datasets 20]``.
"""

import argparse
import warnings

import numpy as np
from sklearn.model_selection import KFold

from sparse_estimators.model_selection import SparsityCV, SparsityIC, one_standard_error
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis


def data(seed):
    """One data set: ``X`` and the structured survival target ``y``."""
    rng = np.random.RandomState(seed)
    n, p = 200, 25
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[[1, 5, 9]] = [1.0, -0.8, 0.7]
    event_time = rng.exponential(np.exp(-X @ beta))
    censoring = rng.exponential(2.0, n)
    y = np.zeros(n, dtype=[("event", bool), ("time", float)])
    y["event"] = event_time < censoring
    y["time"] = np.minimum(event_time, censoring)
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=20)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    est = IHTCoxPHSurvivalAnalysis
    chosen = {"k=None (EBIC)": [], "SparsityIC": [], "SparsityCV (concordance)": [],
              "SparsityCV (one_standard_error)": []}
    censored = []
    for seed in range(args.datasets):
        X, y = data(seed)
        censored.append(1 - y["event"].mean())
        cv = KFold(5, shuffle=True, random_state=0)
        chosen["k=None (EBIC)"].append(est(k=None).fit(X, y).k_)
        chosen["SparsityIC"].append(SparsityIC(est()).fit(X, y).k_)
        chosen["SparsityCV (concordance)"].append(SparsityCV(est(), cv=cv).fit(X, y).k_)
        chosen["SparsityCV (one_standard_error)"].append(
            SparsityCV(est(), cv=cv, refit=one_standard_error).fit(X, y).k_)
    print(f"{args.datasets} data sets, n = 200, p = 25, true k = 3, "
          f"{100 * np.mean(censored):.0f} % censored on average")
    for name, ks in chosen.items():
        print(f"{name:34s} true k in {sum(k == 3 for k in ks):2d} of {len(ks)}; chosen: {ks}")


if __name__ == "__main__":
    main()
