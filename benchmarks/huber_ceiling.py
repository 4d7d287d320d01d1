"""How much of the Huber fits' support F1 the outliers cost, against fits that never see them.

On ``compare_glm.py``'s ``huber`` designs (10 % of the training rows shifted
by ``+U(20, 40)`` noise standard deviations; n = 200, p = 100, k = 5 by
default), per setting (rho, signal) over ``--repeats`` data sets, the mean
support F1 of:

* ``huber``: ``IHTRegressor(k, loss='huber')`` on the data with outliers
  (the page's fit);
* ``squared error, clean y``: ``IHTRegressor(k)`` on the same rows before
  the shift (no outliers at all: a ceiling for any method given the
  outliers' rows too);
* ``squared error, clean rows``: ``IHTRegressor(k)`` on the rows that were
  not shifted only (an oracle that knows the outliers);
* ``abess, clean y``: abess's ``LinearRegression(support_size=[k])`` on the
  clean ``y``.

Then, among the data sets where the Huber fit misses the true support, how
often its support has a lower Huber loss than the true support's (both
refitted, at the scale of the fit's residuals, ``inlier_scale``): those
misses are the loss's (the data), the others the search's.

Run: ``python benchmarks/huber_ceiling.py [--repeats 200] [--n 200 --p 100 --k 5]``.
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_glm import f1, simulate  # noqa: E402

from sparse_estimators import IHTRegressor  # noqa: E402
from sparse_estimators.losses import HuberLoss  # noqa: E402
from sparse_estimators.losses._robust import inlier_scale  # noqa: E402


def loss_prefers_found(X, y, model, truth):
    """Whether the Huber loss (at the fitted ``model``'s residual scale) is lower on its support than on ``truth``."""
    n, p = X.shape
    found = model.support_
    loss = HuberLoss(X, y, scale=inlier_scale(y - model.predict(X), np.full(n, 1.0 / n)))
    values = []
    for support in (found, truth):
        W, b = loss.refit(support, np.zeros((p, 1)), np.array([np.median(y)]))
        values.append(loss.value(W, b))
    return values[0] < values[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    import abess.linear

    warnings.simplefilter("ignore")
    n, p, k = args.n, args.p, args.k
    print(f"n = {n}, p = {p}, k = {k}, {args.repeats} data sets per setting; mean support F1")
    print("rho  signal  huber  sq.err clean y  sq.err clean rows  abess clean y  misses  of them the loss's")
    for rho in (0.0, 0.7):
        for signal in ("weak", "strong"):
            scores, misses, lossy = [], 0, 0
            for seed in range(args.repeats):
                X, y, _, _, truth, clean, bad = simulate("huber", n, p, k, rho, signal, 1, seed, outliers=True)
                good = np.setdiff1d(np.arange(n), bad)
                model = IHTRegressor(k=k, loss="huber").fit(X, y)
                huber = model.support_
                peer = abess.linear.LinearRegression(support_size=[k], thread=1).fit(X, clean)
                scores.append((f1(huber, truth), f1(IHTRegressor(k=k).fit(X, clean).support_, truth),
                               f1(IHTRegressor(k=k).fit(X[good], y[good]).support_, truth),
                               f1(np.flatnonzero(peer.coef_), truth)))
                if scores[-1][0] < 1:
                    misses += 1
                    lossy += loss_prefers_found(X, y, model, truth)
            m = np.mean(scores, axis=0)
            print(f"{rho:<4} {signal:<7} {m[0]:.3f}  {m[1]:.3f}           {m[2]:.3f}              {m[3]:.3f}"
                  f"          {misses:<7} {lossy}")


if __name__ == "__main__":
    main()
