"""The regressors' second search on synthetic and real designs: abess's threshold and the switch gate, paired.

The regressors' splicing runs abess's search from abess's start (exchanges
accepted when they lower the loss by more than abess's threshold ``tau = 0.01
k log(p) log(log N) / N`` times ``y``'s variance) and keep its result when its
loss is lower than the first search's by more than the switch gate (``0.1 d``
in units of ``log(p) s / N`` above 3 observations per ``k log(p - k)``).
abess itself counts ``tau`` in ``y``'s units (it does not rescale ``y``): on a
target of variance 5930 (``load_diabetes``) its threshold is 5930 times
smaller than ours, it accepts any decrease, and on the polynomial diabetes
design its supports predict better (``real_diagnosis.py``,
``compare_real.py``). This script measures variants of the two rules:

* ``tau x F``: abess's threshold times ``F`` (``F = 1``: today's);
* ``switch G``: the switch gate ``G`` above the limit (today 0.1; the gate
  0.25 below it is unchanged).

``--synthetic``: support F1 of ``IHTRegressor(k=s)`` (and ``IOBSRegressor``
with ``--iobs``) on fresh data sets of ``compare_peers.py``'s regression
designs (``_peer_designs.simulate``; rho 0, 0.35, 0.7, beta types 1 and 2,
SNR 0.5, 1, 3, 6; ``--repeats`` data sets per setting, seeds after the peer
table's) at n <= 500, and test R^2 on 1000 fresh rows: per variant the mean,
its paired difference with today's (mean +- standard error over the data
sets) and the data sets whose support changed. ``--real``: the held-out R^2
of the same variants and of abess on ``compare_real.py``'s least-squares data
sets and folds (paired difference with abess's, mean +- standard error).

Usage: ``OMP_NUM_THREADS=1 python benchmarks/abess_threshold_paired.py --synthetic --repeats 10``
"""

import argparse
import contextlib
import itertools
import os
import sys
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peer_designs import simulate  # noqa: E402

from sparse_estimators import IHTRegressor, IOBSRegressor  # noqa: E402
from sparse_estimators.linear_model._regressor import SparseRegressorBase  # noqa: E402
from sparse_estimators.solvers import _splice, _splice_abess  # noqa: E402

#: name: (threshold factor, switch gate above the limit)
VARIANTS = {"today": (1.0, 0.1), "tau x 0.001": (1e-3, 0.1), "tau x 0.001, switch 0": (1e-3, 0.0),
            "switch 0": (1.0, 0.0), "tau x 0.001, switch 0.05": (1e-3, 0.05), "tau x 0.1": (0.1, 0.1),
            "tau x 0.3": (0.3, 0.1), "tau x 0.1, switch 0.05": (0.1, 0.05)}
SIZES = ((100, 1000, 10), (500, 100, 5), (400, 400, 20))


@contextlib.contextmanager
def variant(factor, switch):
    """Fits inside use abess's threshold times ``factor`` and the switch gate ``switch`` above the limit."""
    threshold = _splice_abess._abess_threshold
    _splice._abess_functions()
    cached = _splice._ABESS
    kwargs = SparseRegressorBase._splice_kwargs

    def scaled(loss, k):
        return factor * threshold(loss, k)

    def splice_kwargs(self, loss, k):
        kw = kwargs(self, loss, k)
        if "switch_gate" in kw:  # (above the limit)
            kw["switch_gate"] = switch
        return kw

    _splice_abess._abess_threshold = scaled
    _splice._ABESS = (cached[0], scaled, cached[2])
    SparseRegressorBase._splice_kwargs = splice_kwargs
    try:
        yield
    finally:
        _splice_abess._abess_threshold = threshold
        _splice._ABESS = cached
        SparseRegressorBase._splice_kwargs = kwargs


def f1(support, beta):
    true = set(np.flatnonzero(beta).tolist())
    hit = len(true & set(support.tolist()))
    return 2 * hit / (len(true) + support.size)


def synthetic(repeats, first, estimators, sizes):
    for n, p, s in sizes:
        results = {(e.__name__, v): [] for e in estimators for v in VARIANTS}
        for rho, beta_type, snr in itertools.product((0.0, 0.35, 0.7), (1, 2), (0.5, 1.0, 3.0, 6.0)):
            for rep in range(first, first + repeats):
                seed = int(np.random.SeedSequence([n, p, s, int(rho * 100), beta_type, int(snr * 10), rep,
                                                   True]).generate_state(1)[0])
                X, y, Xt, yt, beta = simulate("regression", n, p, s, rho, beta_type, snr, 1000, seed)
                for Est, (name, (factor, switch)) in itertools.product(estimators, VARIANTS.items()):
                    with variant(factor, switch):
                        m = Est(k=s).fit(X, y)
                    S = np.sort(np.flatnonzero(m.coef_))
                    results[Est.__name__, name].append((f1(S, beta), m.score(Xt, yt), S.tobytes()))
        print(f"\n### n = {n}, p = {p}, s = {s}: {24 * repeats} data sets\n", flush=True)
        print("| estimator | variant | F1 | F1 - today | test R^2 - today | supports changed |")
        print("|---|---|---|---|---|---|")
        for Est in estimators:
            base = results[Est.__name__, "today"]
            for name in VARIANTS:
                r = results[Est.__name__, name]
                d1 = np.array([a[0] - b[0] for a, b in zip(r, base, strict=True)])
                d2 = np.array([a[1] - b[1] for a, b in zip(r, base, strict=True)])
                changed = sum(a[2] != b[2] for a, b in zip(r, base, strict=True))
                se = lambda d: d.std(ddof=1) / np.sqrt(d.size)  # noqa: E731
                print(f"| {Est.__name__} | {name} | {np.mean([a[0] for a in r]):.4f} | {d1.mean():+.4f} +- "
                      f"{se(d1):.4f} | {d2.mean():+.5f} +- {se(d2):.5f} | {changed} |", flush=True)


def real(repeats, estimators):
    import abess
    from compare_real import KS, load_sets
    from sklearn.model_selection import KFold

    sets = load_sets()
    for name in ("diabetes", "diabetes-poly"):
        _, X, y = sets[name]
        folds = [s for rep in range(repeats) for s in KFold(5, shuffle=True, random_state=rep).split(X)]
        print(f"\n### {name}: {len(folds)} folds\n\n| k | estimator | variant | test R^2 | - abess |")
        print("|---|---|---|---|---|")
        for k in KS[name]:
            ref = [abess.LinearRegression(support_size=[k], thread=1).fit(X[tr], y[tr]).score(X[te], y[te])
                   for tr, te in folds]
            for Est, (vname, (factor, switch)) in itertools.product(estimators, VARIANTS.items()):
                with variant(factor, switch):
                    sc = [Est(k=k).fit(X[tr], y[tr]).score(X[te], y[te]) for tr, te in folds]
                d = np.array(sc) - np.array(ref)
                print(f"| {k} | {Est.__name__} | {vname} | {np.mean(sc):.4f} | {d.mean():+.4f} +- "
                      f"{d.std(ddof=1) / np.sqrt(d.size):.4f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--iobs", action="store_true", help="IOBSRegressor too")
    ap.add_argument("--repeats", type=int, default=10, help="data sets per setting (--real: 5-fold repetitions)")
    ap.add_argument("--variants", nargs="+", choices=list(VARIANTS), help="these only (and today's)")
    ap.add_argument("--sizes", nargs="+", metavar="N,P,S", help="these synthetic sizes only")
    ap.add_argument("--first", type=int, default=2000, help="first repeat index of the synthetic data sets")
    args = ap.parse_args()
    estimators = (IHTRegressor, IOBSRegressor) if args.iobs else (IHTRegressor,)
    if args.variants:
        for name in set(VARIANTS) - {"today", *args.variants}:
            del VARIANTS[name]
    sizes = [tuple(int(v) for v in x.split(",")) for x in args.sizes] if args.sizes else SIZES
    warnings.simplefilter("ignore")
    with threadpool_limits(1):
        if args.real:
            real(args.repeats, estimators)
        if args.synthetic:
            synthetic(args.repeats, args.first, estimators, sizes)


if __name__ == "__main__":
    main()
