"""How often the regressors' support is the best of all ``C(p, k)`` supports, on small enumerated problems.

For each loss (``squared_error``, ``poisson``, ``gamma``, ``huber``, and
``groups``: least squares with ``groups=np.arange(p)``, every group one
feature, the same problem as ``squared_error``) and each small data set of
``compare_glm.py``'s ``simulate`` (n 30 to 300, p 8 to 12, k 1 to 3, rho 0
and 0.7, weak and strong signal; least squares on the Huber designs' clean
``y``), ``IHTRegressor(k=k)`` is fitted and its support compared with the
best support by an independent refit of every support: the residual sum of
squares (numpy's least squares), scikit-learn's ``PoissonRegressor`` /
``GammaRegressor`` (``alpha=0``, the same minimiser as our losses), and for
Huber the loss at the fit's final scale (captured from
``HuberLoss.with_residual_scale``) minimised by scipy's L-BFGS. A fit is a hit
when its support's reference value is within ``1e-9`` (relative) of the
best; a miss is also counted when the best support's loss lies below ours by
more than the exchange gate (0.25 of ``d log(p) s / N`` for ``d`` exchanged
features, ``s`` the noise scale at our fit): such a miss is the search's, not
the gate's. ``--variant`` patches the estimators in this process so that
before/after run on the same data sets: ``swap=K`` (``splice``'s
``swap_candidates`` for every regressor loss), ``gmax=K`` (the groups'
``max_exchange``, ``_policy.GROUP_MAX_EXCHANGE``) or ``NAME=value`` for a value of ``_policy``, joined by
``+``.

    PYTHONPATH=. python benchmarks/best_subset_regressors.py --losses squared_error groups --variant base
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

from compare_glm import simulate  # noqa: E402

from sparse_estimators import IHTRegressor  # noqa: E402

SIZES = [(n, p, k) for n in (30, 60, 150, 300) for p in (8, 10, 12) for k in (1, 2, 3)]
DESIGNS = [(0.0, "weak"), (0.7, "weak"), (0.0, "strong"), (0.7, "strong")]
FAMILY = {"squared_error": "huber", "groups": "huber", "huber": "huber", "poisson": "poisson",
          "gamma": "gamma-log"}


def _patch(variant):
    """Apply a variant's patches (class attributes, policy values) in this process."""
    from sparse_estimators import _policy
    from sparse_estimators.linear_model._regressor import SparseRegressorBase

    for part in variant.split("+"):
        if part == "base":
            continue
        name, value = part.split("=")
        if name == "swap":
            SparseRegressorBase._splice_options = SparseRegressorBase._splice_options | {"swap_candidates": int(value)}
        elif name == "gmax":
            _policy.GROUP_MAX_EXCHANGE = int(value)
        elif hasattr(_policy, name):
            setattr(_policy, name, type(getattr(_policy, name))(eval(value)))
        else:
            raise ValueError(part)


def data(loss, n, p, k, rho, signal, seed):
    X, y, _, _, truth, *rest = simulate(FAMILY[loss], n, p, k, rho, signal, 0, seed,
                                        outliers=FAMILY[loss] == "huber")
    if loss in ("squared_error", "groups"):
        y = rest[0]  # (the clean y)
    return X, y


def huber_value(X, y, t, coef, intercept):
    r = np.abs(y - X @ coef - intercept)
    return float(np.mean(np.where(r <= t, 0.5 * r * r, t * r - 0.5 * t * t)))


def reference(loss, X, y, S, scale=None):
    """The independent refit's loss value on support ``S``."""
    from scipy.optimize import minimize
    from sklearn.linear_model import GammaRegressor, PoissonRegressor

    Xs = X[:, list(S)]
    if loss in ("squared_error", "groups"):
        A = np.column_stack([Xs, np.ones(len(y))])
        r = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
        return float(r @ r)
    if loss in ("poisson", "gamma"):
        Est = PoissonRegressor if loss == "poisson" else GammaRegressor
        m = Est(alpha=0.0, tol=1e-12, max_iter=10000).fit(Xs, y)
        z = Xs @ m.coef_ + m.intercept_
        return float(np.mean(np.exp(z) - y * z) if loss == "poisson" else np.mean(y * np.exp(-z) + z))
    t = 1.35 * scale

    def f(v):
        r = y - Xs @ v[:-1] - v[-1]
        a = np.abs(r)
        psi = np.clip(r, -t, t)
        value = np.mean(np.where(a <= t, 0.5 * r * r, t * a - 0.5 * t * t))
        return value, -np.append(Xs.T @ psi, psi.sum()) / len(y)

    start = np.append(np.zeros(len(S)), np.median(y))
    res = minimize(f, start, jac=True, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 10000})
    return float(res.fun)


def fit(loss, X, y, k):
    """Our support, and the Huber loss's final scale (None for the others)."""
    from sparse_estimators.losses import HuberLoss

    scales = []
    original = HuberLoss.with_residual_scale

    def spy(self, W, b):
        out = original(self, W, b)
        scales.append(out.scale)
        return out

    HuberLoss.with_residual_scale = spy
    try:
        if loss == "groups":
            model = IHTRegressor(k=k, groups=np.arange(X.shape[1])).fit(X, y)
        else:
            model = IHTRegressor(k=k, loss=loss).fit(X, y)
    finally:
        HuberLoss.with_residual_scale = original
    return tuple(np.flatnonzero(model.coef_).tolist()), (scales[-1] if scales else None)


GATE = 0.25  # (splice's exchange gate for the regressors)


def gap(loss, X, y, k, ours, best, differ, scale):
    """The best support's decrease below ours in the gates' units, ``differ * log(p) * s / N`` at our fit."""
    from sparse_estimators.losses import GammaLoss, PoissonLoss

    n, p = X.shape
    if loss in ("squared_error", "groups"):
        decrease, s = (ours - best) / (2 * n), ours / (n - k - 1)
    elif loss == "huber":
        decrease, s = ours - best, scale ** 2
    else:
        decrease = ours - best
        s = (PoissonLoss if loss == "poisson" else GammaLoss)(X, y).noise_scale(ours, k)
    return decrease / (differ * np.log(p) * s / n)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--losses", nargs="+", default=list(FAMILY))
    parser.add_argument("--variant", default="base", help="'base' or patches joined by '+', e.g. swap=5")
    parser.add_argument("--seeds", type=int, default=1, help="data sets per size and design")
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    _patch(args.variant)
    with threadpool_limits(1):
        for loss in args.losses:
            hits, total, beyond, misses = 0, 0, 0, []
            for (n, p, k), (rho, signal), s in itertools.product(SIZES, DESIGNS, range(args.seeds)):
                seed = args.first_seed + s + 1000 * n + 10 * p + k
                X, y = data(loss, n, p, k, rho, signal, seed)
                support, scale = fit(loss, X, y, k)
                values = {S: reference(loss, X, y, S, scale) for S in itertools.combinations(range(p), k)}
                best = min(values, key=values.get)
                ok = values[support] <= values[best] + 1e-9 * abs(values[best]) + 1e-12
                hits += ok
                total += 1
                if not ok:
                    units = gap(loss, X, y, k, values[support], values[best], len(set(best) - set(support)),
                                scale)
                    beyond += units > GATE
                    misses.append(f"n={n} p={p} k={k} rho={rho} {signal} seed={seed}: {support} "
                                  f"{values[support]:.6g} vs best {best} {values[best]:.6g} (gap {units:.3f})")
            print(f"{args.variant} {loss}: {hits} of {total} at the global optimum, {beyond} misses by more than "
                  f"the gate", flush=True)
            for m in misses:
                print("  miss", m)


if __name__ == "__main__":
    main()
