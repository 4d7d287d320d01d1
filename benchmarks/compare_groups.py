"""Group sparsity at exactly g groups: ours (``groups=``) against abess, skglm and the group-lasso package.

Designs with group structure:

* ``p`` features in contiguous groups of random sizes, uniform on 2 .. 10
  (the last group adjusted so that the sizes add up to ``p``);
* correlation within and between groups: ``x_j = sqrt(rho_w) f_{G(j)} +
  sqrt(1 - rho_w) z_j``, with one latent factor ``f`` per group following an
  AR(1) recursion over the groups with parameter ``rho_b``; so
  ``corr(x_i, x_j) = rho_w`` in a group and ``rho_w rho_b^|G(i) - G(j)|``
  between groups (no ``p x p`` matrix is formed);
* group-sparse truth: ``g`` groups drawn at random, every coefficient of a
  drawn group ``+-1`` (random signs), all others 0;
* regression: ``y = X beta + eps``, ``Var(eps) = beta^T Sigma beta / SNR``;
  logistic: ``y ~ Bernoulli(sigmoid(c X beta))`` with ``c = sqrt(SNR /
  beta^T Sigma beta)``, as in ``benchmarks/compare_peers.py``.

Methods, each asked for ``g`` groups (the true number):

* ours: ``IHTRegressor(k=g, groups=labels)`` / ``IHTClassifier(...)`` and the
  accelerated variants, default hyperparameters;
* abess: ``abess.linear.LinearRegression(support_size=[g], group=labels)`` /
  ``LogisticRegression(...)``, ``thread`` = the BLAS thread count;
* skglm: the group lasso (``WeightedGroupL2`` with weights ``sqrt(group size)``,
  ``QuadraticGroup`` / ``LogisticGroup`` datafit, with an intercept; solver
  ``GroupBCD`` for regression and ``GroupProxNewton`` for logistic regression:
  ``GroupBCD`` on the logistic datafit took up to 7 s for one alpha at n = 200,
  p = 500 at its default tolerance where ``GroupProxNewton`` takes milliseconds),
  tuned to ``g`` groups along a regularization path: geometric
  grid from the smallest alpha that selects nothing, warm-started, down to the
  first alpha selecting at least ``g`` groups, then up to 8 geometric
  bisection steps between the last two alphas; the alpha whose number of
  groups is closest to ``g`` is kept (ties: the larger number). That is an
  oracle tuning (it knows ``g``), the most favourable to the group lasso;
* group-lasso: the ``group-lasso`` package's ``GroupLasso`` /
  ``LogisticGroupLasso`` (``l1_reg=0``, ``group_reg`` tuned the same way,
  warm-started), only on designs with ``p <= --group-lasso-max-p`` (default
  500): its FISTA path takes 25 to 100 s per data set at n = 500, p = 1000
  (measured on one core), a thousand times abess's fit, which would take the
  whole time budget of this script.

Metrics per fit: ``group_f1``, the F1 of the selected groups (groups with a
non-zero coefficient) against the true groups; ``n_groups`` selected; test R^2
or accuracy on ``--n-test`` fresh rows; ``time``: wall time, all methods
pinned by threadpoolctl to ``--threads`` BLAS/OpenMP threads. Ours and abess:
``_bench_common.fit_quietly`` (a fit shorter than 0.2 s is repeated, minimum
kept). The penalized peers: the whole tuning path (one measurement; that is
what it costs to get ``g`` groups from them) as ``time``, and one cold fit at
the alpha it found as ``time_one``. skglm's numba compilation is done by a
warm-up fit before any timing. Ratios are to abess's median time in the same
setting of the same run.

Run ``python benchmarks/compare_groups.py`` (the grid: n = 200, p = 500, g = 5
and n = 500, p = 1000, g = 10 with 10 data sets per setting, n = 2000,
p = 10000, g = 20 with 2; about 15 minutes on one core) or ``--quick`` (a few
minutes); ``--sizes 500,1000,10`` runs only the sizes given (``n,p,g``);
``--merge a.csv b.csv`` writes the report from the rows of earlier runs.
Writes ``doc/peers/compare_groups.md`` (``--out``) and the raw per-fit rows to
a CSV beside it.
"""

import argparse
import itertools
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from threadpoolctl import threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import cli_args, fit_quietly, merge_runs, revision, to_markdown  # noqa: E402

from sparse_estimators import (  # noqa: E402
    AcceleratedIHTClassifier,
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
)

DEFAULT_OUT = ROOT / "doc" / "peers" / "compare_groups.md"
FULL = {
    "sizes": ((200, 500, 5), (500, 1000, 10), (2000, 10000, 20)),
    "corrs": ((0.3, 0.0), (0.7, 0.5)),
    "snrs": (0.5, 1.5, 6.0),
    "repeats": 10,
    # one data set at n = 2000, p = 10000 takes 5 to 10 s (skglm's path most of it): fewer repeats there
    "largest_repeats": 2,
}
QUICK = {"sizes": ((200, 500, 5),), "corrs": ((0.3, 0.0), (0.7, 0.5)), "snrs": (1.5,), "repeats": 2,
         "largest_repeats": 2}
#: the largest size of the full grid
FULL_LARGEST = (2000, 10000)
OURS = {
    "regression": {"IHT": IHTRegressor, "AccelIHT": AcceleratedIHTRegressor},
    "classification": {"IHT": IHTClassifier, "AccelIHT": AcceleratedIHTClassifier},
}
PEERS = ("abess", "skglm", "group-lasso")
SETTING = ["task", "n", "p", "g", "rho_w", "rho_b", "snr"]


# -- data ------------------------------------------------------------------------
def group_sizes(rng, p, low=2, high=10):
    sizes = []
    while sum(sizes) < p:
        sizes.append(int(rng.randint(low, high + 1)))
    sizes[-1] -= sum(sizes) - p
    while sizes[-1] < low:  # take the missing features from the largest earlier group
        j = int(np.argmax(sizes[:-1]))
        sizes[j] -= 1
        sizes[-1] += 1
    return np.array(sizes)


def group_design(rng, n, labels, rho_w, rho_b):
    n_groups = labels.max() + 1
    F = rng.standard_normal((n, n_groups))
    if rho_b:
        c = np.sqrt(1.0 - rho_b * rho_b)
        for j in range(1, n_groups):
            F[:, j] = rho_b * F[:, j - 1] + c * F[:, j]
    return np.sqrt(rho_w) * F[:, labels] + np.sqrt(1.0 - rho_w) * rng.standard_normal((n, labels.size))


def sigma_quad(d, labels, rho_w, rho_b):
    """``d^T Sigma d`` from the non-zeros of ``d``."""
    idx = np.flatnonzero(d)
    gi = labels[idx]
    S = rho_w * rho_b ** np.abs(gi[:, None] - gi[None, :]).astype(float)
    np.fill_diagonal(S, 1.0)
    return float(d[idx] @ S @ d[idx])


def simulate_groups(task, n, p, g, rho_w, rho_b, snr, n_test, seed):
    """``X, y, Xt, yt, labels, true_groups``."""
    rng = np.random.RandomState(seed)
    labels = np.repeat(np.arange(len(sizes := group_sizes(rng, p))), sizes)
    true = np.sort(rng.choice(sizes.size, g, replace=False))
    beta = np.where(np.isin(labels, true), rng.choice([-1.0, 1.0], p), 0.0)
    power = sigma_quad(beta, labels, rho_w, rho_b)
    X = group_design(rng, n, labels, rho_w, rho_b)
    Xt = group_design(rng, n_test, labels, rho_w, rho_b)
    if task == "regression":
        sd = np.sqrt(power / snr)
        return X, X @ beta + sd * rng.standard_normal(n), Xt, Xt @ beta + sd * rng.standard_normal(n_test), \
            labels, true
    coef = beta * np.sqrt(snr / power)
    y = (rng.uniform(size=n) < expit(X @ coef)).astype(int)
    yt = (rng.uniform(size=n_test) < expit(Xt @ coef)).astype(int)
    if np.unique(y).size < 2:
        y[0] = 1 - y[0]
    return X, y, Xt, yt, labels, true


# -- tuning the penalized peers to g groups -----------------------------------------
def tune_to_groups(fit_at, alpha_max, g, n_grid=40, ratio=1e-3, n_bisect=8):
    """Path from ``alpha_max`` down to ``g`` selected groups, then bisection; ``(alpha, selected)``.

    ``fit_at(alpha)`` fits (warm-started by the caller) and returns the selected
    groups. Keeps the alpha with the number of groups closest to ``g`` (ties:
    the larger number).
    """
    best = None

    def consider(alpha, sel):
        nonlocal best
        key = (abs(sel.size - g), -sel.size)
        if best is None or key < best[0]:
            best = (key, alpha, sel)

    above, below = alpha_max, None  # alphas with fewer / at least g groups
    for alpha in alpha_max * np.geomspace(1.0, ratio, n_grid)[1:]:
        sel = fit_at(alpha)
        consider(alpha, sel)
        if sel.size == g:
            return alpha, sel
        if sel.size > g:
            below = alpha
            break
        above = alpha
    if below is not None:
        for _ in range(n_bisect):
            alpha = np.sqrt(above * below)
            sel = fit_at(alpha)
            consider(alpha, sel)
            if sel.size == g:
                break
            above, below = (alpha, below) if sel.size < g else (above, alpha)
    return best[1], best[2]


def _alpha_max(X, y, labels, weights):
    """Smallest group-lasso alpha selecting no group (mean loss, intercept fitted)."""
    grad = X.T @ (y - y.mean()) / X.shape[0]
    return float(np.max(np.sqrt(np.bincount(labels, weights=grad ** 2)) / weights))


class SkglmPath:
    """skglm group lasso: ``WeightedGroupL2`` + ``GroupBCD``, warm-started along the tuning path."""

    def __init__(self, task, labels):
        from skglm.datafits import LogisticGroup, QuadraticGroup
        from skglm.utils.data import grp_converter

        self.task, self.labels = task, labels
        p = labels.size
        self.grp_indices, self.grp_ptr = grp_converter(
            [np.flatnonzero(labels == j).tolist() for j in range(labels.max() + 1)], p)
        self.weights = np.sqrt(np.diff(self.grp_ptr)).astype(float)
        self.datafit = (QuadraticGroup if task == "regression" else LogisticGroup)(self.grp_ptr, self.grp_indices)

    def fit_at(self, X, y, alpha, w_init=None):
        from skglm.penalties import WeightedGroupL2
        from skglm.solvers import GroupBCD, GroupProxNewton

        penalty = WeightedGroupL2(alpha, self.weights, self.grp_ptr, self.grp_indices)
        X = np.ascontiguousarray(X, dtype=float)
        y_fit = np.ascontiguousarray(y, dtype=float) if self.task == "regression" else np.where(y == 1, 1.0, -1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a warm start needs the linear predictor too (GroupBCD does not compute it)
            xw_init = None if w_init is None else X @ w_init[:-1] + w_init[-1]
            solver = (GroupBCD if self.task == "regression" else GroupProxNewton)(fit_intercept=True)
            w = solver.solve(X, y_fit, self.datafit, penalty, w_init=None if w_init is None
                                                   else w_init.copy(), Xw_init=xw_init)[0]
        return w

    def tune(self, X, y, g):
        state = {"w": None}

        def fit_at(alpha):
            state["w"] = self.fit_at(X, y, alpha, state["w"])
            return np.unique(self.labels[state["w"][:-1] != 0])

        return tune_to_groups(fit_at, _alpha_max(X, y, self.labels, self.weights), g)

    def coef(self, X, y, alpha):
        return self.fit_at(X, y, alpha)


class GroupLassoPath:
    """The ``group-lasso`` package (``l1_reg=0``), warm-started along the tuning path."""

    def __init__(self, task, labels):
        self.task, self.labels = task, labels

    def _model(self):
        from group_lasso import GroupLasso, LogisticGroupLasso

        cls = GroupLasso if self.task == "regression" else LogisticGroupLasso
        return cls(groups=self.labels, group_reg=1.0, l1_reg=0.0, fit_intercept=True, warm_start=True,
                   supress_warning=True)

    def _fit(self, model, X, y, alpha):
        model.set_params(group_reg=alpha)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        coef = np.asarray(model.coef_, dtype=float).reshape(self.labels.size, -1)
        return np.unique(self.labels[np.any(coef != 0, axis=1)])

    def tune(self, X, y, g):
        model = self._model()
        # its penalty is group_reg * sqrt(group size) * ||w_g||; the path search absorbs any scale mismatch
        weights = np.sqrt(np.bincount(self.labels))
        return tune_to_groups(lambda alpha: self._fit(model, X, y, alpha), _alpha_max(X, y, self.labels, weights), g)

    def selected(self, X, y, alpha):
        return self._fit(self._model(), X, y, alpha)


# -- one data set ----------------------------------------------------------------------
def group_f1(selected, true):
    hits = np.intersect1d(selected, true).size
    if not hits:
        return 0.0
    precision, recall = hits / len(selected), hits / len(true)
    return 2 * precision * recall / (precision + recall)


def test_score(task, Xt, yt, coef, b0):
    z = Xt @ coef + b0
    if task == "regression":
        return 1.0 - float(np.sum((yt - z) ** 2) / np.sum((yt - yt.mean()) ** 2))
    return float(np.mean((z > 0).astype(int) == yt))


def one_dataset(task, n, p, g, rho_w, rho_b, snr, seed, n_test, threads, group_lasso_max_p):
    import abess.linear

    X, y, Xt, yt, labels, true = simulate_groups(task, n, p, g, rho_w, rho_b, snr, n_test, seed)
    rows = []

    def record(method, family, selected, time_, time_one=np.nan, test=np.nan, n_iter=np.nan, cpu=np.nan):
        rows.append({"method": method, "family": family, "group_f1": group_f1(selected, true),
                     "n_groups": len(selected), "test": test, "time": time_, "time_one": time_one,
                     "cpu_time": cpu, "n_iter": n_iter})

    for name, cls in OURS[task].items():
        model, wall, cpu, _ = fit_quietly(lambda c=cls: c(k=g, groups=labels), X, y)
        coef = np.ravel(model.coef_)
        record(name, "ours", np.asarray(model.groups_support_), wall, wall,
               test_score(task, Xt, yt, coef, float(np.ravel(model.intercept_)[0])), model.n_iter_, cpu)
    abess_cls = abess.linear.LinearRegression if task == "regression" else abess.linear.LogisticRegression
    model, wall, cpu, _ = fit_quietly(lambda: abess_cls(support_size=[g], group=labels, thread=threads), X, y)
    coef = np.ravel(model.coef_)
    record("abess", "peer", np.unique(labels[coef != 0]), wall, wall,
           test_score(task, Xt, yt, coef, float(np.ravel(model.intercept_)[0])), cpu=cpu)

    path = SkglmPath(task, labels)
    t0 = time.perf_counter()
    alpha, selected = path.tune(X, y, g)
    elapsed = time.perf_counter() - t0
    t0 = time.perf_counter()
    w = path.coef(X, y, alpha)
    one = time.perf_counter() - t0
    record("skglm", "peer", selected, elapsed, one, test_score(task, Xt, yt, w[:-1], w[-1]))

    if p <= group_lasso_max_p:
        path = GroupLassoPath(task, labels)
        t0 = time.perf_counter()
        alpha, selected = path.tune(X, y, g)
        elapsed = time.perf_counter() - t0
        t0 = time.perf_counter()
        path.selected(X, y, alpha)
        one = time.perf_counter() - t0
        record("group-lasso", "peer", selected, elapsed, one)
    for row in rows:
        row.update(dict(zip(SETTING, (task, n, p, g, rho_w, rho_b, snr), strict=True)), seed=seed)
    return rows


def warm_up():
    """Compile skglm's numba code (both datafits and solvers, cold and warm) before anything is timed."""
    rng = np.random.RandomState(0)
    labels = np.repeat(np.arange(5), 2)
    X = rng.standard_normal((30, 10))
    for task in ("regression", "classification"):
        y = (X[:, 0] > 0).astype(int) if task == "classification" else X[:, 0]
        path = SkglmPath(task, labels)
        path.fit_at(X, y, 0.01, None)
        path.fit_at(X, y, 0.01, path.fit_at(X, y, 0.1, None))


# -- report ---------------------------------------------------------------------------
FMT = {"group_f1": ".3f", "n_groups": ".1f", "test": ".3f", "time": ".4f", "time_one": ".4f",
       "time_vs_abess": ".2f", "one_vs_abess": ".2f", "n_iter": ".0f", "rho_w": ".1f", "rho_b": ".1f",
       "snr": ".1f", "best_peer_f1": ".3f", "IHT_f1": ".3f", "deficit": ".3f", "worst_deficit": ".3f", "mean_f1": ".3f",
       "median_time_vs_abess": ".2f", "worst_time_vs_abess": ".2f", "cpu_time": ".4f", "cpu_vs_abess": ".2f"}


def aggregate(df, by):
    agg = df.groupby(by + ["method"], sort=False).agg(
        group_f1=("group_f1", "mean"), n_groups=("n_groups", "mean"), test=("test", "mean"),
        time=("time", "median"), time_one=("time_one", "median"), cpu_time=("cpu_time", "median"),
        fits=("seed", "size")).reset_index()
    ref = agg[by].merge(agg.loc[agg.method == "abess", by + ["time", "cpu_time"]], on=by, how="left")
    agg["time_vs_abess"] = agg["time"].to_numpy() / ref["time"].to_numpy()
    agg["one_vs_abess"] = agg["time_one"].to_numpy() / ref["time"].to_numpy()
    agg["cpu_vs_abess"] = agg["cpu_time"].to_numpy() / ref["cpu_time"].to_numpy()
    return agg


def targets(per_setting):
    """Per estimator of ours: F1 within 0.01 of the best peer, mean F1 above every peer, time at most abess's."""
    rows = []
    for (task, method), mine in per_setting[per_setting.method.isin(["IHT", "AccelIHT"])].groupby(
            ["task", "method"], sort=False):
        peers = per_setting[(per_setting.task == task) & per_setting.method.isin(PEERS)]
        best = peers.groupby(SETTING).group_f1.max()
        mine = mine.set_index(SETTING)
        deficit = best.reindex(mine.index) - mine.group_f1
        peer_means = peers.groupby("method").group_f1.mean()
        rows.append({"task": task, "estimator": method, "settings": len(mine),
                     "f1_met": int((deficit <= 0.01 + 1e-12).sum()), "worst_deficit": float(deficit.max()),
                     "mean_f1": float(mine.group_f1.mean()),
                     "best_peer_mean_f1": f"{peer_means.max():.3f} ({peer_means.idxmax()})",
                     "mean_above_every_peer": bool(mine.group_f1.mean() > peer_means.max()),
                     "time_met": int((mine.time_vs_abess <= 1.0).sum()),
                     "median_time_vs_abess": float(mine.time_vs_abess.median()),
                     "worst_time_vs_abess": float(mine.time_vs_abess.max())})
    return pd.DataFrame(rows)


def misses(per_setting):
    out = []
    for task in per_setting.task.unique():
        sub = per_setting[per_setting.task == task]
        peers = sub[sub.method.isin(PEERS)]
        best = peers.loc[peers.groupby(SETTING).group_f1.idxmax()].set_index(SETTING)
        mine = sub[sub.method == "IHT"].set_index(SETTING)
        for idx, r in mine.iterrows():
            b = best.loc[idx]
            deficit = b.group_f1 - r.group_f1
            if deficit > 0.01 + 1e-12 or r.time_vs_abess > 1.0:
                out.append(dict(zip(SETTING, idx, strict=True), IHT_f1=r.group_f1, best_peer=b.method,
                                best_peer_f1=b.group_f1, deficit=deficit, time_vs_abess=r.time_vs_abess))
    return pd.DataFrame(out)


def write_report(df, out, args, grid, elapsed, rev):
    import abess
    import numpy

    versions = [f"Python {platform.python_version()}", f"numpy {numpy.__version__}", f"abess {abess.__version__}"]
    for mod in ("skglm", "group_lasso", "sklearn"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} not installed")
    per_setting = aggregate(df, SETTING)
    summ = aggregate(df, ["task"])
    tg = targets(per_setting)
    command = f"python benchmarks/compare_groups.py {cli_args()}".strip()
    lines = [
        "# Group sparsity: exactly g groups against abess, skglm and group-lasso",
        "",
        (f"Generated by `{command}` at git {rev} in {elapsed / 60:.1f} min; " if np.isfinite(elapsed) else
         f"Merged by `{command}` from these runs (arguments, revision, duration): {rev}; ")
        + ", ".join(versions) + f"; all fits with BLAS and OpenMP pinned to {args.threads} thread(s) "
        f"(abess `thread={args.threads}`).",
        "",
        f"Grid: (n, p, g) {grid['sizes']}, (rho_w, rho_b) {grid['corrs']}, SNR {grid['snrs']}, "
        f"{args.repeats} data set(s) per setting ({min(args.repeats, grid['largest_repeats'])} where p >= 10000), "
        f"group sizes uniform on 2..10, test sets of {args.n_test} rows; "
        f"group-lasso only where p <= {args.group_lasso_max_p}. See the module docstring of "
        "`benchmarks/compare_groups.py` for the design, the tuning of the penalized peers to g groups (an oracle "
        "path search, most favourable to them) and the metrics. `group_f1`, `n_groups`, `test` are means over data "
        "sets; `time` is the median fit time in seconds (for skglm and group-lasso: the whole tuning path; "
        "`time_one`: one cold fit at the alpha found); `time_vs_abess` / `one_vs_abess`: those medians over "
        "abess's in the same setting of this run; `cpu_time` / `cpu_vs_abess`: the same for the CPU time of "
        "ours and abess's fits (the minimum over the repeated fits), which a loaded machine disturbs less than "
        "the wall time of a few-millisecond fit.",
        "",
        "## Against the peers",
        "",
        "Per estimator of ours: the settings where its group-level F1 is within 0.01 of the best peer's (`f1_met` "
        "of `settings`), whether its mean F1 is above every peer's, the settings where its fit time is at most "
        "abess's (`time_met` of `settings`).",
        "",
        to_markdown(tg, FMT),
        "",
    ]
    largest = max(grid["sizes"], key=lambda size: size[1])
    if largest[:2] < FULL_LARGEST:
        lines += [f"Not run: the full grid goes up to n = {FULL_LARGEST[0]}, p = {FULL_LARGEST[1]}; this run "
                  f"stops at n = {largest[0]}, p = {largest[1]} (see the command line).", ""]
    lines += ["Ours splice whole groups, as abess does with `group=` (the splicing search of "
              "`sparse_estimators/solvers/_splice_groups.py`, `_unit_splice`: block Newton gains, groups priced by "
              "size), with the estimators' default splicing options; these fits from zero run the search alone, "
              "from the g groups of largest gain at zero, without the solver (`GROUP_SEARCH_FROM_ZERO`).", ""]
    miss = misses(per_setting)
    if len(miss):
        lines += ["Settings where `IHT` is more than 0.01 below the best peer's F1 or slower than abess:", "",
                  to_markdown(miss, FMT), ""]
    lines += ["## Summary per method (over all settings)", "",
              "`time_vs_abess`: the method's median time over all its fits over abess's median. group-lasso "
              f"ran only where p <= {args.group_lasso_max_p}, so its means are over those (smaller) settings only.",
              "",
              to_markdown(summ.drop(columns=["fits"]), FMT), "",
              "## Per setting", "", to_markdown(per_setting, FMT), ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    return per_setting, tg


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one size, one SNR, two repeats (a few minutes)")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--largest-repeats", type=int, default=None,
                        help="data sets per setting where p >= 10000 (default 2: 5 to 10 s each)")
    parser.add_argument("--sizes", nargs="+", metavar="N,P,G", help="problem sizes instead of the grid's")
    parser.add_argument("--task", choices=("regression", "classification", "both"), default="both")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--group-lasso-max-p", type=int, default=500)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--merge", type=Path, nargs="+", metavar="CSV",
                        help="write the report from the rows of earlier runs (their CSVs; the grid is the full one, "
                             "each run described by the .meta file beside its CSV) instead of running")
    args = parser.parse_args(argv)
    grid = dict(QUICK if args.quick else FULL)
    if args.sizes:
        grid["sizes"] = tuple(tuple(int(v) for v in s.split(",")) for s in args.sizes)
    if args.repeats is None:
        args.repeats = grid["repeats"]
    if args.largest_repeats is not None:
        grid["largest_repeats"] = args.largest_repeats
    tasks = ("regression", "classification") if args.task == "both" else (args.task,)
    if args.merge:
        merge_runs(args.merge, lambda df, meta: write_report(df, args.out, args, grid, float("nan"), meta), args.out)
        return
    rev = revision()
    start = time.perf_counter()
    rows = []
    with threadpool_limits(limits=args.threads):
        warm_up()
        for task, (n, p, g), (rho_w, rho_b), snr in itertools.product(tasks, grid["sizes"], grid["corrs"],
                                                                       grid["snrs"]):
            t0 = time.perf_counter()
            for rep in range(args.repeats if p < 10000 else min(args.repeats, grid["largest_repeats"])):
                seed = 1000 * rep + 7 * n + p + int(100 * rho_w) + int(10 * snr)
                rows += one_dataset(task, n, p, g, rho_w, rho_b, snr, seed, args.n_test, args.threads,
                                    args.group_lasso_max_p)
            print(f"{task} n={n} p={p} g={g} rho=({rho_w}, {rho_b}) snr={snr}: {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    per_setting, tg = write_report(df, out, args, grid, time.perf_counter() - start, rev)
    out.with_suffix(".meta").write_text(f"{cli_args()}: git {rev}, {(time.perf_counter() - start) / 60:.1f} min\n")
    print(to_markdown(per_setting, FMT))
    print()
    print(to_markdown(tg, FMT))
    print(f"\nwrote {out.name} and {out.with_suffix('.csv').name} in {out.parent.name}/", file=sys.stderr)


if __name__ == "__main__":
    main()
