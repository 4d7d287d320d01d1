"""Paired study of cheaper routes for small Poisson / Gamma fits: support F1, test deviance and CPU time.

``IHTRegressor(loss='poisson' | 'gamma')`` runs IHT (hard thresholding, with
its support jump), then the splicing search from IHT's support with our
rules, then abess's search ("important search") from abess's start (the
``k`` features of largest gain at zero), keeping that result when its loss
is lower by more than ``switch_gate``. Each ``--variant`` changes one piece,
applied in this process to the unchanged library (nothing in the package
reads it):

* ``from-zero``: no IHT; both searches start from abess's start (the route
  of ``_policy.GROUP_SEARCH_FROM_ZERO`` for groups);
* ``from-zero-ours``: no IHT; our search alone from abess's start;
* ``iht-from-start``: IHT (and its support jump) starts from the refit on
  abess's start instead of from zero, stopping at once where that is a
  fixed point; then both searches as now;
* ``no-second-search``: no abess search (``screening_start=False``);
* ``no-first-search``: IHT's refitted support competes with abess's search
  directly (our search from IHT's support accepts nothing);
* ``patience-1``, ``patience-2``: IHT's support jump after 1 or 2
  unchanged supports instead of 3;
* ``screen-second-X`` (X a number, e.g. ``screen-second-0.25``): abess's
  search refits (Newton) only the candidates whose quadratic model (the
  weighted least-squares surrogate at the current fit, see
  ``losses/_pointwise_newton.py``) predicts a decrease of at least ``X``
  times abess's threshold; the current rule refits every candidate whose
  model does not raise the loss by more than ``SCREEN_MARGIN`` (0.5) times
  that threshold. The first search is unchanged;
* ``surrogate-gate``: before abess's search, the same search runs on the
  weighted least-squares surrogate of the loss at the first search's fit
  (working response ``z - l'/l''``, weights ``l''``, scaled so that its
  decreases are the quadratic model's); when it ends at the first search's
  support, abess's search is skipped (it could switch only to another
  support), else it runs as now.

On fresh data sets of :source:`benchmarks/compare_glm.py`'s designs (rho 0
/ 0.7, weak / strong signal cycling; Poisson, Gamma with the log link,
gamma-inverse data fitted with the log link), the current fit and the
variant fit the same data in one process, one after the other (order
alternating). Printed per family and size: the mean and standard error over
data sets of the difference variant minus current in support F1 and in
held-out mean deviance (Poisson or Gamma, lower is better), the share of
data sets whose support changed, and the median over data sets of the CPU
time ratio variant / current (each fit timed once).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/glm_route_paired.py --variant from-zero \\
        --size 200,100,5 --size 500,1000,10 --datasets 200
"""

import argparse
import contextlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_glm import simulate  # noqa: E402

import sparse_estimators.solvers._splice as splice_module  # noqa: E402
import sparse_estimators.solvers._splice_abess as abess_module  # noqa: E402
from sparse_estimators import IHTRegressor, _policy  # noqa: E402
from sparse_estimators.linear_model._regressor import SparseRegressorBase  # noqa: E402
from sparse_estimators.losses._squared import SquaredLoss  # noqa: E402
from sparse_estimators.solvers._base import SolverResult  # noqa: E402

FAMILIES = ("poisson", "gamma-log", "gamma-inverse")
DESIGNS = ((0.0, "weak"), (0.0, "strong"), (0.7, "weak"), (0.7, "strong"))


def _abess_start(loss, operator, k, *, W0, b0, **_):
    """A stand-in solver: the refit on the ``k`` features of largest gain at zero (splice's second start)."""
    h = loss.coordinate_curvatures()
    gain = splice_module._forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, h > loss.alpha)
    start = np.sort(splice_module._top_set(gain, k))
    W, b = loss.refit(start, W0, b0)
    return SolverResult(W, b, start, 0, [loss.value(W, b)], converged=True, refitted=True)


def _iht_from_start(loss, operator, k, *, W0, b0, **options):
    """IHT (with its support jump) started from :func:`_abess_start`'s refit, not from zero."""
    from sparse_estimators.solvers import iht

    first = _abess_start(loss, operator, k, W0=W0, b0=b0)
    result = iht(loss, operator, k, W0=first.coef, b0=first.intercept, refitted_start=True, **options)
    result.start_gradient = None  # (its first gradient is not the one at zero that splice may reuse)
    return result



def _surrogate_gated(important):
    """abess's search ``important``, skipped when its run on the loss's quadratic surrogate ends where ours did."""
    def search(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, important_search=128, gain=None,
               settled=None):
        design = loss.design
        if settled is None or not loss.fit_intercept or not isinstance(getattr(design, "X", None), np.ndarray):
            return important(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, important_search,
                             gain=gain, settled=settled)
        ours = settled[0]
        entry = loss.__dict__.get("_candidate_cache", {}).get(ours.tobytes())
        if entry is not None and entry[0] is not None:
            z = entry[3][:, 0]
        else:  # (our search's result is its start: refitted by the solver, not among the candidates)
            W, b = loss.refit(ours, W0, b0, precise=False)
            z = loss.linear_predictor(W, b)[:, 0]
        _, d, curvature = loss._parts(z)
        weight = loss._sample_share[:, 0] * curvature
        response = (z - d / curvature) * np.sqrt(weight.sum())
        surrogate = SquaredLoss(design.X, response, sample_weight=weight, fit_intercept=loss.fit_intercept)
        W_s, b_s = surrogate.zeros()
        h_s = surrogate.coordinate_curvatures()
        # (a set U of one feature fewer than all when U would hold every feature: the search then runs on
        # U's Gram columns, _gram_rounds, instead of refitting the candidates on their columns)
        size = min(important_search, loss.n_features - k - 1)
        result = important(surrogate, k, start, W_s, b_s, h_s, usable & (h_s > 0), max_exchange, max_rounds, size)
        if np.array_equal(np.sort(result.support), np.sort(ours)):
            return None
        return important(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, important_search, gain=gain,
                         settled=settled)
    return search


@contextlib.contextmanager
def variant(name):
    """The library patched for ``name`` (see the module docstring) inside the block."""
    saved = {attr: SparseRegressorBase.__dict__.get(attr) for attr in ("_splice_kwargs", "_refit_patience",
                                                                        "_sparse_solver")}
    exchange = splice_module._exchange
    important = abess_module._important_search
    kwargs = saved["_splice_kwargs"]
    try:
        if name == "surrogate-gate":
            abess_module._important_search = _surrogate_gated(important)
        if name.startswith("screen-second-"):
            margin = -float(name.rsplit("-", 1)[1])  # (screened: a model change above -X tau)

            def screened_search(*args, **kw):
                saved_margin = _policy.SCREEN_MARGIN
                _policy.SCREEN_MARGIN = margin
                try:
                    return important(*args, **kw)
                finally:
                    _policy.SCREEN_MARGIN = saved_margin
            abess_module._important_search = screened_search
        if name == "iht-from-start":
            SparseRegressorBase._sparse_solver = lambda self: _iht_from_start
        if name in ("from-zero", "from-zero-ours"):
            SparseRegressorBase._sparse_solver = lambda self: _abess_start
        if name in ("from-zero-ours", "no-second-search"):
            SparseRegressorBase._splice_kwargs = lambda self, loss, k: kwargs(self, loss, k) | {
                "screening_start": False}
        if name.startswith("patience-"):
            level = int(name.split("-")[1])
            SparseRegressorBase._refit_patience = lambda self, loss, operator, k: level
        if name == "no-first-search":
            def first_refuses(loss, k, support, W, b, f, Z, *args, known=frozenset(), **kw):
                if known:  # (a search from the second start with our rules: not this route's)
                    return exchange(loss, k, support, W, b, f, Z, *args, known=known, **kw)
                return SolverResult(W, b, support, 0, [f], converged=True), {support.tobytes()}, None
            splice_module._exchange = first_refuses
        yield
    finally:
        for attr, value in saved.items():
            if value is None:
                if attr in SparseRegressorBase.__dict__:
                    delattr(SparseRegressorBase, attr)
            else:
                setattr(SparseRegressorBase, attr, value)
        splice_module._exchange = exchange
        abess_module._important_search = important


def f1(support, truth):
    hits = np.intersect1d(support, truth).size
    return 2 * hits / (support.size + truth.size)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True,
                        help="from-zero, from-zero-ours, iht-from-start, no-second-search, no-first-search, "
                             "patience-1, patience-2, surrogate-gate or screen-second-X (see the module docstring)")
    parser.add_argument("--size", action="append", default=[], help="n,p,k (repeatable; default 200,100,5)")
    parser.add_argument("--datasets", type=int, default=200, help="data sets per family and size")
    parser.add_argument("--seed", type=int, default=10_000, help="first data set's seed")
    args = parser.parse_args(argv)
    names = ("from-zero", "from-zero-ours", "iht-from-start", "no-second-search", "no-first-search", "patience-1",
             "patience-2", "surrogate-gate")
    if args.variant not in names and not args.variant.startswith("screen-second-"):
        parser.error(f"unknown --variant {args.variant!r}")
    warnings.simplefilter("ignore")
    sizes = [tuple(int(v) for v in size.split(",")) for size in (args.size or ["200,100,5"])]
    print(f"variant {args.variant}; {args.datasets} data sets per row, seeds from {args.seed}")
    print(f"{'family':14s} {'n x p':10s} {'dF1 mean':>9s} {'+- se':>7s} {'ddev mean':>10s} {'+- se':>8s} "
          f"{'changed':>8s} {'cpu new/old':>11s}")
    for n, p, k in sizes:
        for family in FAMILIES:
            loss = "poisson" if family == "poisson" else "gamma"
            deviance = mean_poisson_deviance if loss == "poisson" else mean_gamma_deviance
            dF1, ddev, changed, ratio = [], [], [], []
            for i in range(args.datasets):
                rho, signal = DESIGNS[i % len(DESIGNS)]
                X, y, X_test, y_test, truth = simulate(family, n, p, k, rho, signal, 1000, args.seed + i)
                out = {}
                for new in ((False, True) if i % 2 == 0 else (True, False)):
                    with variant(args.variant) if new else contextlib.nullcontext():
                        start = time.process_time()
                        model = IHTRegressor(k=k, loss=loss).fit(X, y)
                        out[new] = model, time.process_time() - start
                (old, t_old), (new, t_new) = out[False], out[True]
                dF1.append(f1(new.support_, truth) - f1(old.support_, truth))
                ddev.append(deviance(y_test, new.predict(X_test)) - deviance(y_test, old.predict(X_test)))
                changed.append(not np.array_equal(new.support_, old.support_))
                ratio.append(t_new / t_old)
            se = lambda v: np.std(v, ddof=1) / np.sqrt(len(v))  # noqa: E731
            print(f"{family:14s} {f'{n}x{p}':10s} {np.mean(dF1):+9.4f} {se(dF1):7.4f} {np.mean(ddev):+10.5f} "
                  f"{se(ddev):8.5f} {np.mean(changed):8.2f} {np.median(ratio):11.2f}", flush=True)


if __name__ == "__main__":
    main()
