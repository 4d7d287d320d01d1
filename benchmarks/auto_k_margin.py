"""``k=None``'s margin: exact recovery on easy designs against support F1 on the peer designs.

For each margin (``_policy.K_MARGIN``: the chosen level is the smallest whose
criterion is within the margin of the path's minimum) and for abess's default
(EBIC along its own path):

* easy designs: ``n x p`` Gaussian designs with ``s`` strong coefficients
  (magnitudes uniform in [1, 2], random signs), noise sd 0.5 (least squares)
  or Bernoulli labels (logistic); the count of data sets whose support is
  recovered exactly;
* the designs of ``benchmarks/compare_peers.py`` (sizes 100 x 1000, 500 x 100,
  500 x 1000; every rho, beta type and SNR; two data sets each): mean support
  F1, and per size.

Run: ``python benchmarks/auto_k_margin.py [--task classification] [--seeds 100]
[--margins 0,2,3,4] [--criterion gic]``. The figures are in doc/changelog.rst (``k=None``).
"""

import argparse
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _peer_designs import simulate  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor, _policy  # noqa: E402

SIZES = ((100, 1000, 10), (500, 100, 5), (500, 1000, 10))


def easy(seed, n, p, s, task):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    true = np.sort(rng.choice(p, s, replace=False))
    beta[true] = rng.choice([-1, 1], s) * rng.uniform(1, 2, s)
    if task == "classification":
        return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ beta))).astype(int), true
    return X, X @ beta + 0.5 * rng.standard_normal(n), true


def f1(support, true):
    tp = np.intersect1d(support, true).size
    return 0.0 if tp == 0 else 2 * tp / (support.size + true.size)


def selector(method, task, criterion="ebic"):
    if method == "abess":
        import abess

        peer = abess.LinearRegression if task == "regression" else abess.LogisticRegression
        return lambda X, y: np.flatnonzero(peer(thread=1).fit(X, y).coef_)
    base = IHTRegressor if task == "regression" else IHTClassifier
    cls = type(f"{base.__name__}_{criterion}", (base,), {"_k_criterion": criterion})

    def fit(X, y):  # (with _policy.K_MARGIN set to the margin)
        kept = _policy.K_MARGIN
        _policy.K_MARGIN = float(method)
        try:
            return cls().fit(X, y).support_
        finally:
            _policy.K_MARGIN = kept

    return fit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=("regression", "classification"), default="regression")
    parser.add_argument("--seeds", type=int, default=30, help="data sets per easy design")
    parser.add_argument("--margins", default="0,2,3,4")
    parser.add_argument("--criterion", default="ebic", choices=("aic", "bic", "gic", "ebic"))
    args = parser.parse_args(argv)
    easy_sizes = ((120, 30, 4), (200, 50, 5), (100, 20, 3)) if args.task == "regression" else (
        (400, 30, 4), (600, 50, 5), (300, 20, 3))
    warnings.simplefilter("ignore")
    print(f"task {args.task}, criterion {args.criterion}; easy designs {easy_sizes}, {args.seeds} data sets each")
    with threadpool_limits(1):
        for method in args.margins.split(",") + ["abess"]:
            fit = selector(method, args.task, args.criterion)
            exact = [sum(np.array_equal(fit(*easy(seed, n, p, s, args.task)[:2]), easy(seed, n, p, s, args.task)[2])
                         for seed in range(args.seeds)) for n, p, s in easy_sizes]
            scores = {}
            for (n, p, s), rho, beta_type, snr in itertools.product(SIZES, (0.0, 0.35, 0.7), (1, 2),
                                                                    (0.5, 1.0, 3.0, 6.0)):
                for seed in (7, 8):
                    X, y, _, _, beta = simulate(args.task, n, p, s, rho, beta_type, snr, 10, seed)
                    scores.setdefault((n, p), []).append(f1(fit(X, y), np.flatnonzero(beta)))
            every = np.concatenate(list(scores.values()))
            per_size = ", ".join(f"{n}x{p}: {np.mean(v):.3f}" for (n, p), v in scores.items())
            label = "abess default" if method == "abess" else f"margin {method}"
            print(f"{label:>14}: exact {exact} of {args.seeds}; peer designs mean F1 {every.mean():.4f} ({per_size})",
                  flush=True)


if __name__ == "__main__":
    main()
