"""Choosing k by cross-validation for ``loss='huber'`` when the test folds hold outliers too.

Two designs, 20 data sets each: (1) n = 200, p = 30, four features of
coefficients 0.4 to 0.6, noise sd 0.3, 10 % of ``y`` shifted by +20;
(2) n = 300, p = 100, four features of about 1.5, noise sd 0.3, 20 % of
``y`` shifted by uniform(5, 30). ``SparsityCV(IHTRegressor(loss='huber'),
cv=5)`` with the estimator's own score (D^2 of Huber's loss) against
``scoring='r2'`` and ``'neg_mean_absolute_error'``, and ``k=None``.
Prints the chosen ``k`` per data set and how often it is the true 4.

Run: ``python benchmarks/huber_k_choice.py [--datasets 20]``.
"""

import argparse
import warnings

import numpy as np

from sparse_estimators import IHTRegressor
from sparse_estimators.model_selection import SparsityCV


def data(design, seed):
    """One data set of ``design`` (1 or 2): ``X``, ``y``."""
    if design == 1:
        rng = np.random.RandomState(seed)
        n, p, coef, shift = 200, 30, [0.6, -0.5, 0.4, 0.5], 0.1
    else:
        rng = np.random.RandomState(100 + seed)
        n, p, coef, shift = 300, 100, [1.6, -1.5, 1.4, 1.5], 0.2
    X = rng.standard_normal((n, p))
    y = X[:, [0, 4, 8, 12]] @ coef + 0.3 * rng.standard_normal(n)
    outliers = rng.rand(n) < shift
    y = y + outliers * (20.0 if design == 1 else rng.uniform(5, 30, n))
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=20)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for design in (1, 2):
        chosen = {}
        for seed in range(args.datasets):
            X, y = data(design, seed)
            for name in ("own score (D^2 of Huber's loss)", "r2", "neg_mean_absolute_error"):
                scoring = None if name.startswith("own") else name
                search = SparsityCV(IHTRegressor(loss="huber"), cv=5, scoring=scoring).fit(X, y)
                chosen.setdefault(name, []).append(search.k_)
            chosen.setdefault("k=None", []).append(IHTRegressor(loss="huber", k=None).fit(X, y).k_)
        print(f"design {design}:")
        for name, ks in chosen.items():
            print(f"  {name:>32}: true k in {sum(k == 4 for k in ks):2d} of {len(ks)}; chosen {ks}")


if __name__ == "__main__":
    main()
