"""Are the fixed-k Poisson fits' supports local optima under single exchanges? Brute force, exact refits.

On :source:`benchmarks/compare_glm.py`'s Poisson designs (its ``simulate``,
seeds ``--first-seed`` on), each estimator (``IHTRegressor``,
``AcceleratedIHTRegressor``, ``IOBSRegressor``, ``RegularizedIHTRegressor``,
``loss='poisson'``) is fitted at the true ``k`` and its support ``S``
checked against every single exchange (one feature of ``S`` out, one other
in: ``k (p - k)`` supports, each refitted exactly by ``PoissonLoss.refit``).
Printed per setting and estimator:

* the mean support F1, its paired difference to abess's
  ``PoissonRegression(support_size=[k])`` (with its standard error) and the
  number of data sets where the estimator's refitted loss is below / above
  abess's;
* ``gap bins``: the data sets whose best exchange lowers the loss, by the
  size of that decrease in units of ``log(p) / n`` (the units of
  ``splice``'s gates: the regressors' exchange gate is 0.25, the switch gate
  0.1; abess's own threshold is ``0.01 k log(log n)``, 0.083 at k = 5,
  n = 200): bins ``[0, 0.033)``, ``[0.033, 0.1)``, ``[0.1, 0.25)``,
  ``[0.25, inf)``; a
  decrease in the last bin is one that the first search's gate would have
  accepted, had the search tried it;
* ``swap search g``: the exact best-improvement exchange search from ``S``
  (the best single exchange accepted while it lowers the loss by more than
  ``g`` units, to a local optimum), F1 of its end minus F1 of ``S``, and the
  data sets where it is higher / lower;
* with ``--ranks``: for each data set whose best exchange would pass the
  gate (last bin) and each estimator, the rank of the removed feature among
  the selected ones by the search's removal cost, of the added one among
  the others by its marginal gain (both at the search's coordinate
  curvatures, ``_ranked`` of ``solvers/_splice.py``), and the rank of that
  exchange among all ``k (p - k)`` on the quadratic model of the loss at
  the refit on ``S`` (gradient and full Hessian over the support, the
  intercept and the added feature) with the model's and the exact
  decrease.

    PYTHONPATH=. python benchmarks/swap_optimality.py --repeats 100 \
        --settings 200,100,5,0.7,strong 200,100,5,0.0,weak
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

BINS = (0.0, 0.033, 0.1, 0.25, np.inf)
GATES = (0.0, 0.1, 0.25)


class Refits:
    """The exact refitted loss of a support (cached)."""

    def __init__(self, loss):
        self.loss, self.values = loss, {}

    def __call__(self, support):
        key = tuple(sorted(int(j) for j in support))
        if key not in self.values:
            p = self.loss.n_features
            W, b = self.loss.refit(np.array(key, dtype=np.intp), np.zeros((p, 1)), self.loss.initial_intercept())
            self.values[key] = float(self.loss.value(W, b))
        return self.values[key]


def best_exchange(value, support, p):
    """``(loss of support, least loss of a single exchange, that exchange's support)``."""
    support = sorted(int(j) for j in support)
    best, arg = np.inf, None
    for i in range(len(support)):
        for a in range(p):
            if a not in support:
                other = support[:i] + [a] + support[i + 1:]
                f = value(other)
                if f < best:
                    best, arg = f, other
    return value(support), best, arg


def swap_search(value, support, p, gate, unit):
    """The exact best-improvement exchange search from ``support`` at ``gate`` (see the module docstring)."""
    support = sorted(int(j) for j in support)
    for _ in range(50):
        f, best, other = best_exchange(value, support, p)
        if not f - best > gate * unit:
            break
        support = sorted(other)
    return np.array(support)


def quadratic_exchanges(X, y, support, W, b):
    """The change of the Poisson loss from each exchange ``(support[i] out, a in)`` on its quadratic model
    at the refit ``(W, b)`` on ``support``, shape ``(k, p)`` (``inf`` where ``a`` is selected)."""
    n = X.shape[0]
    Xc = X - X.mean(axis=0)
    mu = np.exp(Xc[:, support] @ W[support, 0] + b[0])
    g = Xc.T @ (mu - y) / n
    A = np.column_stack([Xc[:, support], np.ones(n)])  # the support's variables, then the intercept
    H_T = (A * mu[:, None]).T @ Xc / n
    M = np.linalg.inv((A * mu[:, None]).T @ A / n)
    U = M @ H_T
    s = (Xc * Xc * mu[:, None]).sum(axis=0) / n - np.einsum("tp,tp->p", H_T, U)  # Schur complements
    k = len(support)
    w = W[support, 0][:, None] + U[:k] * (g / s)[None, :]  # after adding a
    change = w ** 2 / (2 * (np.diag(M)[:k, None] + U[:k] ** 2 / s[None, :])) - (g ** 2 / (2 * s))[None, :]
    change[:, support] = np.inf
    return change


def ranks(loss, X, y, support, other, value, unit):
    """The ``--ranks`` line of one data set (see the module docstring)."""
    from sparse_estimators.solvers._splice import _ranked

    p = X.shape[1]
    j = [f for f in support if f not in other][0]
    a = [f for f in other if f not in support][0]
    W, b = loss.refit(support, np.zeros((p, 1)), loss.initial_intercept())
    h = loss.coordinate_curvatures()
    kept, forward = _ranked(loss, support, W, loss.linear_predictor(W, b), h, h > loss.alpha)
    change = quadratic_exchanges(X, y, support, W, b)
    order = np.argsort(change, axis=None, kind="stable")
    position = int(np.flatnonzero(order == list(support).index(j) * p + a)[0])
    return (f"out {j} (rank {list(kept).index(j)} of {support.size} by removal cost), in {a} (rank "
            f"{list(np.argsort(-forward, kind='stable')).index(a)} by marginal gain); rank {position} on the "
            f"quadratic model, decrease {-change.ravel()[order[position]] / unit:.2f} (model) "
            f"{(value(support) - value(other)) / unit:.2f} (exact) units")


def run_setting(n, p, k, rho, signal, repeats, first_seed, methods, show_ranks):
    from abess.linear import PoissonRegression
    from compare_glm import f1, simulate

    from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor, IOBSRegressor, RegularizedIHTRegressor
    from sparse_estimators.losses import PoissonLoss

    estimators = {"IHT": IHTRegressor, "AIHT": AcceleratedIHTRegressor, "IOBS": IOBSRegressor,
                  "RIHT": RegularizedIHTRegressor}
    bins = {m: np.zeros(len(BINS) - 1, dtype=int) for m in methods}
    moved = {m: {g: [] for g in GATES} for m in methods}
    scores = {m: [] for m in (*methods, "abess")}
    losses = {m: [] for m in (*methods, "abess")}
    unit = np.log(p) / n
    for seed in range(first_seed, first_seed + repeats):
        X, y, *_, truth = simulate("poisson", n, p, k, rho, signal, 10, seed)
        loss = PoissonLoss(X, y)
        value = Refits(loss)
        peer = np.flatnonzero(PoissonRegression(support_size=[k], thread=1).fit(X, y).coef_)
        scores["abess"].append(f1(peer, truth))
        losses["abess"].append(value(peer))
        for m in methods:
            support = np.flatnonzero(estimators[m](k=k, loss="poisson").fit(X, y).coef_)
            scores[m].append(f1(support, truth))
            losses[m].append(value(support))
            f, best, other = best_exchange(value, support, p)
            gap = max(f - best, 0.0) / unit
            if gap > 1e-7:
                bins[m][np.searchsorted(BINS, gap, side="right") - 1] += 1
            if show_ranks and gap > 0.25:
                print(f"  seed {seed} {m}: " + ranks(loss, X, y, support, other, value, unit), flush=True)
            for g in GATES:
                moved[m][g].append(f1(swap_search(value, support, p, g, unit), truth) - f1(support, truth))
    print(f"poisson n={n} p={p} k={k} rho={rho} {signal}: {repeats} data sets (seeds from {first_seed}); "
          f"abess F1 {np.mean(scores['abess']):.4f}", flush=True)
    for m in methods:
        d = np.array(scores[m]) - np.array(scores["abess"])
        below = int(np.sum(np.array(losses[m]) < np.array(losses["abess"]) - 1e-9))
        above = int(np.sum(np.array(losses[m]) > np.array(losses["abess"]) + 1e-9))
        line = (f"  {m}: F1 {np.mean(scores[m]):.4f}, - abess {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(d.size):.4f}"
                f" (loss below / above abess's {below} / {above}); gap bins {bins[m].tolist()}")
        for g in GATES:
            dd = np.array(moved[m][g])
            line += (f"; swap search g={g:g}: {dd.mean():+.4f} +- {dd.std(ddof=1) / np.sqrt(dd.size):.4f} "
                     f"(+{int(np.sum(dd > 0))} / -{int(np.sum(dd < 0))})")
        print(line, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--methods", nargs="+", default=["IHT", "AIHT", "IOBS", "RIHT"])
    parser.add_argument("--ranks", action="store_true", help="print where each missed exchange ranks")
    parser.add_argument("--settings", nargs="+", default=None,
                        help="n,p,k,rho,signal each (default: compare_glm.py's 4 settings at p = 100)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    settings = ([(int(n), int(p), int(k), float(rho), s) for n, p, k, rho, s in (x.split(",") for x in args.settings)]
                if args.settings else [(200, 100, 5, rho, s) for rho in (0.0, 0.7) for s in ("weak", "strong")])
    with threadpool_limits(1):
        for n, p, k, rho, signal in settings:
            run_setting(n, p, k, rho, signal, args.repeats, args.first_seed, args.methods, args.ranks)


if __name__ == "__main__":
    main()
