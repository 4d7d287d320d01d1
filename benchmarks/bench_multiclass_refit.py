"""Cost of the debiasing refit with many classes: IHTClassifier with and without ``debias``.

The refit is Newton's method over ``k * n_classes`` coefficients (plus the
intercepts); this prints, per setting, the median fit time with
``debias=True`` and ``debias=False`` measured in the same run, and their
ratio (issue: 30 classes at 300 x 30 took 2.0 s against 0.13 s).

Usage::

    python benchmarks/bench_multiclass_refit.py [--repeats 3]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sparse_estimators import IHTClassifier  # noqa: E402

#: (classes, n, p, k, labels): labels from a sparse multinomial model, or at random (the issue's cases)
SETTINGS = [(3, 300, 30, 5, "model"), (10, 300, 30, 5, "model"), (30, 300, 30, 5, "model"),
            (100, 200, 100, 5, "model"), (30, 300, 30, 5, "random"), (100, 200, 100, 5, "random")]


def timed(est, X, y, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), est


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| classes | labels | n, p, k | debias=True (s) | debias=False (s) | ratio | n_iter_ |")
    print("|---|---|---|---|---|---|---|")
    for n_classes, n, p, k, labels in SETTINGS:
        rng = np.random.RandomState(0)
        X = rng.standard_normal((n, p))
        W = np.zeros((p, n_classes))
        W[:k] = rng.standard_normal((k, n_classes))
        y = np.argmax(X @ W + rng.gumbel(size=(n, n_classes)), axis=1)
        if labels == "random":
            y = rng.randint(0, n_classes, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_on, on = timed(IHTClassifier(k=k, debias=True), X, y, args.repeats)
            t_off, _ = timed(IHTClassifier(k=k, debias=False), X, y, args.repeats)
        print(f"| {n_classes} | {labels} | {n}, {p}, {k} | {t_on:.3f} | {t_off:.3f} | {t_on / t_off:.1f} "
              f"| {on.n_iter_} |")


if __name__ == "__main__":
    main()
