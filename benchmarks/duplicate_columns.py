"""How often the regressors and Cox models keep both copies of a duplicated column, against abess.

The design of ``tests/test_duplicate_columns.py``: 150 x 10 standard Gaussian
``X``, true features 0 and 1 strong and 2 weak, column 9 a copy of column 0
(or 2.54 times it: the same length in inches and centimetres). A support
holding 0 and 9 spends two of its ``k = 3`` places on one direction: its
refit is the refit on ``{0, 1}``, which any distinct third feature improves.
``y`` per family (the linear predictor ``X[:, :3] @ beta`` with ``beta``
strong, strong, weak):

* ``squared_error``: ``y = X[:, :3] @ (1.5, 1.0, 0.15) + N(0, 1)``;
* ``huber``: the same ``y`` with 5 % of its entries shifted by 5 to 10;
* ``poisson``: counts, ``y ~ Poisson(exp(0.5 + X[:, :3] @ (0.6, 0.4, 0.1)))``;
* ``gamma``: amounts, shape 2 and mean ``exp(X[:, :3] @ (0.6, 0.4, 0.1))``
  (log link);
* ``cox``: exponential event times of hazard ``exp(X[:, :3] @ (0.8, 0.5, 0.1))``,
  independent exponential censoring (about a quarter censored).

For each family, each estimator (the four regressors with that ``loss``, the
four Cox models) and abess (``LinearRegression``, ``PoissonRegression``,
``GammaRegression``, ``CoxPHSurvivalAnalysis`` at ``support_size=[3]``;
none for Huber) the script counts the data sets (``--seeds``, from 0) whose
support holds both copies, for the exact and the rescaled copy.

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/duplicate_columns.py [--seeds 40] [--families ...]
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sparse_estimators import (  # noqa: E402
    AcceleratedIHTRegressor,
    IHTRegressor,
    IOBSRegressor,
    RegularizedIHTRegressor,
)
from sparse_estimators.survival import (  # noqa: E402
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)

FAMILIES = ("squared_error", "huber", "poisson", "gamma", "cox")
REGRESSORS = (IHTRegressor, AcceleratedIHTRegressor, RegularizedIHTRegressor, IOBSRegressor)
COX = (IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
       IOBSCoxPHSurvivalAnalysis)
SCALES = (1.0, 2.54)


def problem(family, seed, scale=1.0, n=150, p=10):
    """``(X, y)``: features 0, 1 strong and 2 weak; column 9 is ``scale`` times column 0."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[:, p - 1] = scale * X[:, 0]
    if family in ("squared_error", "huber"):
        y = X[:, :3] @ [1.5, 1.0, 0.15] + rng.standard_normal(n)
        if family == "huber":
            bad = rng.choice(n, n // 20, replace=False)
            y[bad] += rng.uniform(5.0, 10.0, bad.size)
    elif family == "poisson":
        y = rng.poisson(np.exp(0.5 + X[:, :3] @ [0.6, 0.4, 0.1])).astype(float)
    elif family == "gamma":
        y = rng.gamma(2.0, np.exp(X[:, :3] @ [0.6, 0.4, 0.1]) / 2.0)
    else:
        t = rng.exponential(np.exp(-(X[:, :3] @ [0.8, 0.5, 0.1])))
        c = rng.exponential(3.0 * np.median(t), n)
        y = np.array(list(zip(t <= c, np.minimum(t, c), strict=True)), dtype=[("event", bool), ("time", float)])
    return X, y


def ours(family):
    """``{name: factory}`` of our estimators for one family."""
    if family == "cox":
        return {cls.__name__: (lambda cls=cls: cls(k=3)) for cls in COX}
    return {cls.__name__: (lambda cls=cls: cls(k=3, loss=family)) for cls in REGRESSORS}


def abess_support(family, X, y):
    """abess's support at ``k = 3`` (None: abess has no such model, or is not installed)."""
    try:
        from abess.linear import CoxPHSurvivalAnalysis, GammaRegression, LinearRegression, PoissonRegression
    except ImportError:
        return None
    models = {"squared_error": LinearRegression, "poisson": PoissonRegression, "gamma": GammaRegression,
              "cox": CoxPHSurvivalAnalysis}
    if family not in models:
        return None
    if family == "cox":
        y = np.column_stack([y["time"], y["event"].astype(float)])  # (abess: time first, then the event)
    model = models[family](support_size=[3], thread=1).fit(X, y)
    return np.flatnonzero(np.ravel(model.coef_))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    args = parser.parse_args()
    print(f"data sets with both copies {{0, 9}} in the support at k = 3, of {args.seeds} per column")
    print(f"{'family':<14} {'estimator':<38}" + "".join(f" {'copy x ' + str(s):>10}" for s in SCALES))
    for family in args.families:
        counts = {}
        for scale in SCALES:
            for seed in range(args.seeds):
                X, y = problem(family, seed, scale)
                fits = ours(family)
                for name, make in fits.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        support = make().fit(X, y).support_
                    both = {0, 9} <= set(support.tolist())
                    counts.setdefault(name, {}).setdefault(scale, []).append(seed) if both else None
                    counts.setdefault(name, {}).setdefault(scale, [])
                support = abess_support(family, X, y)
                if support is not None:
                    seeds = counts.setdefault("abess", {}).setdefault(scale, [])
                    if {0, 9} <= set(support.tolist()):
                        seeds.append(seed)
        for name, by_scale in counts.items():
            print(f"{family:<14} {name:<38}" + "".join(f" {len(by_scale[s]):>10}" for s in SCALES)
                  + "   seeds: " + "; ".join(f"{by_scale[s]}" for s in SCALES), flush=True)


if __name__ == "__main__":
    main()
