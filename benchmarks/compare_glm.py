"""Counts, amounts and outliers at exact k: ``loss='poisson' | 'gamma' | 'huber'`` against abess, skglm, scikit-learn.

Synthetic grid (known supports). Rows of ``X`` are Gaussian with AR(1)
correlation ``corr(x_i, x_j) = rho^|i - j|``; ``k`` true features drawn at
random, coefficients of random sign and magnitude uniform on ``signal``
(``weak`` or ``strong``, in the units below); ``eta = X beta``:

* ``poisson``: ``y ~ Poisson(exp(eta + 0.5))``; magnitudes weak 0.1-0.2,
  strong 0.2-0.4 (log-mean units);
* ``gamma-log``: ``y ~ Gamma(shape 5, mean exp(eta))``, the log link of
  ``loss='gamma'`` and of scikit-learn's ``GammaRegressor``; same magnitudes;
* ``gamma-inverse``: ``y ~ Gamma(shape 5, mean -1 / (eta - c))`` with ``c =
  0.5 + max(eta)`` over the training and test rows (so ``eta - c <= -0.5``):
  the canonical (negative inverse) link, which is the link of abess's
  ``GammaRegression`` (``src/AlgorithmGLM.h``: ``inv_link_function`` is
  ``-1 / eta``, ``eta`` truncated below 0; its ``predict`` returns ``-1 /
  (X coef_ + intercept_)``). abess's Gamma model is correctly specified on
  these data only, ours and scikit-learn's (log link) on ``gamma-log`` only:
  both designs are run and the page says which is which;
* ``huber``: ``y = eta + N(0, 1)`` with 10 % of the training rows shifted by
  ``+U(20, 40)`` (gross outliers, one-sided); magnitudes weak 0.25-0.5,
  strong 0.5-1 (noise standard deviations). The test rows are clean.

Methods, each asked for ``k`` features (the true number):

* ours: ``IHTRegressor(k, loss=...)`` and ``IOBSRegressor(k, loss=...)``,
  default parameters; on ``huber`` also ``IHTRegressor(k)`` with the squared
  error, the fit that the outliers are meant to break;
* abess 0.4.11: ``PoissonRegression`` / ``GammaRegression(support_size=[k],
  thread=1)``;
* skglm: ``GeneralizedLinearEstimator`` with the ``Poisson`` (``ProxNewton``
  solver), ``Gamma`` (``ProxNewton``, L1 only) or ``Huber`` datafit
  (``AndersonCD``; its threshold ``delta = 1.35`` times the true noise
  standard deviation, an oracle, since skglm does not estimate a scale), with
  an intercept, and the ``L1`` or ``MCPenalty`` (``gamma=3``) penalty at the
  penalty that gives ``k`` non-zeros: geometric bisection between the
  smallest penalty that selects nothing (``alpha_max``, from the gradient at
  the null model) and ``alpha_max / 1000``, at most 30 fits, stopping at
  exactly ``k`` non-zeros; the penalty whose count is closest to ``k`` is
  kept (``nnz`` in the table says when ``k`` was not reached). That is an
  oracle tuning (it knows ``k``); ``time`` is one cold fit at the penalty
  found, ``time_tuning`` the whole search;
* scikit-learn: ``PoissonRegressor`` / ``GammaRegressor`` / ``HuberRegressor``
  on all features (the dense reference: ``f1`` is that of all ``p`` features);
  Poisson and Gamma with their l2 penalty ``alpha`` chosen by 3-fold
  ``GridSearchCV`` over ``1e-4, 1e-3, 1e-2, 1e-1, 1`` (mean deviance; ``time``
  is the whole search), ``HuberRegressor`` at its default ``alpha=1e-4`` (a
  search took several seconds per data set already at ``p = 100``).

Metrics per fit: ``f1`` of the non-zero coefficients against the true support,
``nnz``, held-out ``d2`` on fresh rows from the same model (D^2: the fraction
of Poisson or Gamma deviance explained, ``sklearn.metrics.d2_tweedie_score``;
for ``huber`` the R^2 on clean rows; a method whose predicted means are not
all positive gets no D^2 and is counted in ``invalid``), ``time``: wall time
of the fit with BLAS and OpenMP pinned to one thread (threadpoolctl; abess
``thread=1``), the minimum of up to 5 fits within 0.2 s
(``_bench_common.fit_quietly``), ``cpu`` the process's CPU time of the same
fits (their minimum: a fit preempted on a loaded machine keeps its CPU time,
not its wall time); the methods run in an order rotated with each
data set (interleaved), so that load on a shared machine hits all alike.
``conv_warn`` counts ConvergenceWarnings; a fit that raises is recorded in
``failed`` with its error.

Real data bundled with installable packages (no download), ``k`` in ``{5,
10}``, 5 random 70/30 splits, held-out D^2 (no known support):

* ``randhie`` (statsmodels; RAND Health Insurance Experiment): ``mdvis``, the
  number of outpatient visits, from the 9 covariates and their pairwise
  products and squares (54 columns after dropping the squares of binary
  columns, standardized), Poisson;
* ``diabetes`` (scikit-learn): disease progression, a positive right-skewed
  amount, from the 10 covariates, their products and squares (64 columns,
  standardized), Gamma;
* ``diabetes-outliers``: the same design, ``y`` standardized by its standard
  deviation, with 10 % of the training rows shifted by ``+U(20, 40)``
  standard deviations, Huber against the squared error; R^2 on the clean
  test rows.

If ``benchmarks/_cox_peers.py`` exists (the survival estimators' peers) and
``cox`` is among ``--families`` (the default), its ``cox_section()`` markdown
(``--cox-repeats`` data sets per setting, ``--cox-splits`` splits of each real
data set; by default ``_cox_peers.REPEATS`` and ``SPLITS``) is placed at the
end of the page; ``--families cox`` runs the Cox section alone and, when the
page (``--out``) exists, replaces only its Cox section (its other sections
and the CSV of the GLM fits stay as they were).

Run ``PYTHONPATH=. python benchmarks/compare_glm.py`` (8 data sets per
setting, ``--repeats``: 21 and 27 minutes in two runs on a shared machine) or
``--quick`` (fewer repeats and settings); writes ``doc/peers/glm.md``
(``--out``) and the raw per-fit rows to a CSV beside it.
"""

import argparse
import platform
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import cli_args, fit_quietly, revision, to_markdown  # noqa: E402

DEFAULT_OUT = ROOT / "doc" / "peers" / "glm.md"
SIGNALS = {"poisson": {"weak": (0.1, 0.2), "strong": (0.2, 0.4)},
           "gamma-log": {"weak": (0.1, 0.2), "strong": (0.2, 0.4)},
           "gamma-inverse": {"weak": (0.1, 0.2), "strong": (0.2, 0.4)},
           "huber": {"weak": (0.25, 0.5), "strong": (0.5, 1.0)}}
FAMILIES = ("poisson", "gamma-log", "gamma-inverse", "huber", "cox")
GAMMA_SHAPE = 5.0
OUTLIER_FRACTION, OUTLIER_SHIFT = 0.1, (20.0, 40.0)
DENSE_ALPHAS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
TUNING_FITS, MCP_GAMMA = 30, 3.0


# ----------------------------------------------------------------------------------------------- data

def ar1_design(rng, n, p, rho):
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)  # AR(1) columns: corr(x_i, x_j) = rho^|i - j|
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    return X


def simulate(family, n, p, k, rho, signal, n_test, seed, outliers=False):
    """``(X, y, X_test, y_test, truth)`` for one synthetic data set (see the module docstring).

    ``outliers`` (``huber`` only): also the training ``y`` before the shift
    and the shifted rows' indices (``benchmarks/huber_ceiling.py``).
    """
    rng = np.random.RandomState(seed)
    X = ar1_design(rng, n + n_test, p, rho)
    truth = np.sort(rng.choice(p, k, replace=False))
    beta = np.zeros(p)
    lo, hi = SIGNALS[family][signal]
    beta[truth] = rng.choice([-1.0, 1.0], k) * rng.uniform(lo, hi, k)
    eta = X @ beta
    if family == "poisson":
        y = rng.poisson(np.exp(eta + 0.5)).astype(float)
    elif family == "gamma-log":
        y = rng.gamma(GAMMA_SHAPE, np.exp(eta) / GAMMA_SHAPE)
    elif family == "gamma-inverse":
        mean = -1.0 / (eta - (0.5 + eta.max()))
        y = rng.gamma(GAMMA_SHAPE, mean / GAMMA_SHAPE)
    else:
        y = eta + rng.standard_normal(n + n_test)
        bad = rng.choice(n, int(round(OUTLIER_FRACTION * n)), replace=False)
        clean = y[:n].copy()
        y[bad] += rng.uniform(*OUTLIER_SHIFT, bad.size)
        if outliers:
            return X[:n], y[:n], X[n:], y[n:], truth, clean, np.sort(bad)
    return X[:n], y[:n], X[n:], y[n:], truth


def polynomial_design(X, rng=None):
    """Columns, pairwise products and squares of the non-binary columns, standardized (constant ones dropped)."""
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    binary = np.array([np.unique(c).size <= 2 for c in X.T])
    P = PolynomialFeatures(degree=2, include_bias=False).fit(X)
    keep = [j for j, powers in enumerate(P.powers_) if not (powers.max() == 2 and binary[powers.argmax()])]
    Z = P.transform(X)[:, keep]
    Z = Z[:, Z.std(axis=0) > 0]
    return StandardScaler().fit_transform(Z)


def real_data():
    """``{name: (family, X, y)}`` for the real data sets that can be loaded here (statsmodels is optional)."""
    from sklearn.datasets import load_diabetes

    sets = {}
    try:
        from statsmodels.datasets import randhie
        df = randhie.load_pandas().data
        sets["randhie"] = ("poisson", polynomial_design(df.drop(columns="mdvis").to_numpy(float)),
                           df["mdvis"].to_numpy(float))
    except ImportError:
        print("statsmodels is not installed: the randhie (Poisson) data set is skipped", flush=True)
    Xd, yd = load_diabetes(return_X_y=True)
    Xd = polynomial_design(Xd)
    sets["diabetes"] = ("gamma-log", Xd, yd)
    sets["diabetes-outliers"] = ("huber", Xd, yd / yd.std())
    return sets


# -------------------------------------------------------------------------------------------- methods

def null_gradient(family, X, y, delta=None):
    """The gradient of the mean datafit at the null model (intercept only): its sup norm is the l1 ``alpha_max``."""
    if family == "poisson":
        return X.T @ (y.mean() - y) / len(y)
    if family.startswith("gamma"):
        return X.T @ (1.0 - y / y.mean()) / len(y)
    r = y - np.median(y)
    return -X.T @ np.clip(r, -delta, delta) / len(y)


def skglm_factory(family, penalty, alpha, delta=None):
    from skglm import GeneralizedLinearEstimator
    from skglm.datafits import Gamma, Huber, Poisson
    from skglm.penalties import L1, MCPenalty
    from skglm.solvers import AndersonCD, ProxNewton

    pen = L1(alpha) if penalty == "L1" else MCPenalty(alpha, MCP_GAMMA)
    if family == "poisson":
        return GeneralizedLinearEstimator(Poisson(), pen, ProxNewton(fit_intercept=True, max_iter=50))
    if family.startswith("gamma"):
        return GeneralizedLinearEstimator(Gamma(), pen, ProxNewton(fit_intercept=True, max_iter=50))
    return GeneralizedLinearEstimator(Huber(delta), pen, AndersonCD(fit_intercept=True, max_iter=200))


class PenaltyAtK:
    """A skglm estimator at the penalty giving ``k`` non-zeros (geometric bisection); a factory for ``fit_quietly``."""

    def __init__(self, family, penalty, k, delta=None):
        self.family, self.penalty, self.k, self.delta = family, penalty, k, delta
        self.alpha = None
        self.tuning_time = np.nan

    def tune(self, X, y):
        start = time.perf_counter()
        hi = float(np.max(np.abs(null_gradient(self.family, X, y, self.delta))))
        lo = hi / 1000.0
        best = None  # (|nnz - k|, -nnz, alpha)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(TUNING_FITS):
                alpha = np.sqrt(lo * hi)
                nnz = np.count_nonzero(skglm_factory(self.family, self.penalty, alpha, self.delta).fit(X, y).coef_)
                cand = (abs(nnz - self.k), -nnz, alpha)
                best = cand if best is None or cand < best else best
                if nnz == self.k:
                    break
                if nnz > self.k:
                    lo = alpha
                else:
                    hi = alpha
        self.alpha = best[2]
        self.tuning_time = time.perf_counter() - start
        return self

    def __call__(self):
        return skglm_factory(self.family, self.penalty, self.alpha, self.delta)


def dense_factory(family):
    from sklearn.linear_model import GammaRegressor, HuberRegressor, PoissonRegressor
    from sklearn.model_selection import GridSearchCV

    if family == "poisson":
        est, scoring = PoissonRegressor(max_iter=1000), "neg_mean_poisson_deviance"
    elif family.startswith("gamma"):
        est, scoring = GammaRegressor(max_iter=1000), "neg_mean_gamma_deviance"
    else:  # a search would take minutes per data set at p = 1000: the default alpha
        return lambda: HuberRegressor(max_iter=1000)
    return lambda: GridSearchCV(est, {"alpha": DENSE_ALPHAS}, cv=3, scoring=scoring)


def methods(family, k, delta=None):
    """``{name: factory or PenaltyAtK}`` for one family."""
    from abess.linear import GammaRegression, PoissonRegression

    from sparse_estimators import IHTRegressor, IOBSRegressor

    loss = "poisson" if family == "poisson" else ("gamma" if family.startswith("gamma") else "huber")
    out = {"IHT": lambda: IHTRegressor(k=k, loss=loss), "IOBS": lambda: IOBSRegressor(k=k, loss=loss)}
    if family == "huber":
        out["IHT squared_error"] = lambda: IHTRegressor(k=k)
    elif family == "poisson":
        out["abess"] = lambda: PoissonRegression(support_size=[k], thread=1)
    else:
        out["abess"] = lambda: GammaRegression(support_size=[k], thread=1)
    out["skglm L1"] = PenaltyAtK(family, "L1", k, delta)
    if not family.startswith("gamma"):
        out["skglm MCP"] = PenaltyAtK(family, "MCP", k, delta)
    out["sklearn dense"] = dense_factory(family)
    return out


def predicted_mean(name, model, X):
    """The predicted mean of ``y``: every method's own ``predict`` (abess's Gamma: ``-1 / (X coef_ + b)``)."""
    if hasattr(model, "best_estimator_"):
        model = model.best_estimator_
    return np.asarray(model.predict(X), dtype=float).ravel()


def coefficients(model):
    if hasattr(model, "best_estimator_"):
        model = model.best_estimator_
    return np.asarray(model.coef_, dtype=float).ravel()


def held_out_score(family, y, mu):
    from sklearn.metrics import d2_tweedie_score, r2_score

    if family == "huber":
        return r2_score(y, mu), False
    if not (np.all(np.isfinite(mu)) and np.all(mu > 0)):
        return np.nan, True
    return d2_tweedie_score(y, mu, power=1 if family == "poisson" else 2), False


def f1(found, truth):
    hit = np.intersect1d(found, truth).size
    return 0.0 if hit == 0 else 2 * hit / (found.size + truth.size)


def run_one(family, X, y, Xt, yt, truth, k, order_seed, meta, log):
    """Fit every method of ``family`` on one data set, in an order rotated by ``order_seed``; one row each."""
    # skglm's Huber threshold: 1.35 noise standard deviations (the synthetic noise's; on the real set, the
    # standard deviation of the clean y, its unit): an oracle, as skglm does not estimate a scale
    ms = methods(family, k, 1.35 if family == "huber" else None)
    names = list(ms)
    shift = order_seed % len(names)
    rows = []
    for name in names[shift:] + names[:shift]:
        factory = ms[name]
        row = dict(meta, family=family, method=name, k=k)
        try:
            if isinstance(factory, PenaltyAtK):
                factory.tune(X, y)
                row["time_tuning"] = factory.tuning_time
            model, wall, cpu, n_conv = fit_quietly(factory, X, y)
            coef = coefficients(model)
            support = np.flatnonzero(coef)
            mu = predicted_mean(name, model, Xt)
            d2, invalid = held_out_score(family, yt, mu)
            row.update(nnz=support.size, d2=d2, invalid=int(invalid), time=wall, cpu=cpu, conv_warn=n_conv, failed=0,
                       f1=f1(support, truth) if truth is not None else np.nan)
        except Exception as exc:  # a peer that fails is recorded, not fatal
            row.update(failed=1, error=f"{type(exc).__name__}: {exc}"[:200])
            log(f"  {name} failed on {meta}: {row['error']}")
            log(traceback.format_exc(limit=2))
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------- report

def aggregate(df, by):
    def agg(g):
        ok = g[g["failed"] == 0]
        return pd.Series({
            "f1": ok["f1"].mean(), "nnz": ok["nnz"].mean(), "d2": ok["d2"].mean(),
            "time": ok["time"].median(), "cpu": ok["cpu"].median() if "cpu" in ok else np.nan,
            "time_tuning": ok["time_tuning"].median() if "time_tuning" in ok else np.nan,
            "fits": len(g), "failed": int(g["failed"].sum()), "invalid": int(ok["invalid"].sum()),
            "conv_warn": int(ok["conv_warn"].sum())})

    out = df.groupby(by, sort=False).apply(agg, include_groups=False).reset_index()
    ref = out[out["method"] == "abess"].set_index([c for c in by if c != "method"])["time"]
    if len(ref):
        keys = out[[c for c in by if c != "method"]].apply(tuple, axis=1)
        out["time_vs_abess"] = [t / ref.get(key if len(key) > 1 else key[0], np.nan)
                                for t, key in zip(out["time"], keys, strict=True)]
        ref_cpu = out[out["method"] == "abess"].set_index([c for c in by if c != "method"])["cpu"]
        out["cpu_vs_abess"] = [t / ref_cpu.get(key if len(key) > 1 else key[0], np.nan)
                               for t, key in zip(out["cpu"], keys, strict=True)]
    return out


FMT = {"f1": ".3f", "nnz": ".1f", "d2": ".3f", "time": ".4f", "cpu": ".4f", "time_tuning": ".3f",
       "time_vs_abess": ".2f", "cpu_vs_abess": ".2f",
       "rho": ".2f", "fits": ".0f", "failed": ".0f", "invalid": ".0f", "conv_warn": ".0f"}


def summary_lines(syn, df_syn):
    """Per synthetic setting: our IHT's F1 and time against abess's, and Huber's F1 against the squared error.

    ``df_syn`` (the per-fit rows) adds the paired count over data sets: on how many IHT's F1 is above, below
    abess's.
    """
    lines = []
    keys = ["n", "p", "k", "rho", "signal"]
    for family in ("poisson", "gamma-log", "gamma-inverse"):
        sub = syn[syn["family"] == family]
        if not len(sub):
            continue
        ours = sub[sub["method"] == "IHT"].set_index(keys)
        theirs = sub[sub["method"] == "abess"].set_index(keys)
        f1_ok = (ours["f1"] >= theirs["f1"] - 1e-12)
        t_ratio = ours["time"] / theirs["time"]
        c_ratio = ours["cpu"] / theirs["cpu"]
        big = t_ratio[t_ratio.index.get_level_values("p") >= 1000]
        rows = df_syn[df_syn["family"] == family]
        paired = rows.pivot_table(index=keys + ["seed"], columns="method", values="f1")
        above, below = int((paired["IHT"] > paired["abess"]).sum()), int((paired["IHT"] < paired["abess"]).sum())
        lines.append(f"* **{family}**: IHT's mean F1 >= abess's in {int(f1_ok.sum())} of {len(f1_ok)} settings "
                     f"(largest deficit {max(0.0, float((theirs['f1'] - ours['f1']).max())):.3f}); over the "
                     f"{len(paired)} data sets, mean F1 {paired['IHT'].mean():.3f} against "
                     f"{paired['abess'].mean():.3f}, IHT's above abess's on {above}, below on {below}. "
                     f"IHT's median fit time / abess's: median {float(t_ratio.median()):.2f} over all settings, "
                     f"at most 1 in {int((t_ratio <= 1).sum())} of {len(t_ratio)}"
                     + (f"; at p >= 1000: median {float(big.median()):.2f}, worst {float(big.max()):.2f}"
                        if len(big) else "")
                     + (f"; at p < 1000: from {float(t_ratio[t_ratio.index.get_level_values('p') < 1000].min()):.1f}"
                        f" to {float(t_ratio[t_ratio.index.get_level_values('p') < 1000].max()):.1f}"
                        if len(big) < len(t_ratio) else "")
                     + f"; CPU time / abess's: at most 1 in {int((c_ratio <= 1).sum())} of {len(c_ratio)}, from "
                     f"{float(c_ratio.min()):.2f} to {float(c_ratio.max()):.2f}"
                     + (f" (at p < 1000: {float(c_ratio[c_ratio.index.get_level_values('p') < 1000].min()):.1f} to "
                        f"{float(c_ratio[c_ratio.index.get_level_values('p') < 1000].max()):.1f})"
                        if len(big) < len(c_ratio) else "") + ".")
    sub = syn[syn["family"] == "huber"]
    if len(sub):
        h = sub[sub["method"] == "IHT"].set_index(keys)
        s = sub[sub["method"] == "IHT squared_error"].set_index(keys)
        peers = sub[sub["method"].str.startswith("skglm")].groupby(keys)["f1"].max().reindex(h.index)
        lines.append(f"* **huber** (10 % gross outliers): IHT with `loss='huber'` mean F1 from {h['f1'].min():.3f} to "
                     f"{h['f1'].max():.3f} over the settings (>= 0.9 in {int((h['f1'] >= 0.9).sum())} of {len(h)}; "
                     f"below: " + ", ".join(f"n={i[0]} p={i[1]} rho={i[3]} {i[4]} ({v:.3f})"
                                            for i, v in h["f1"][h["f1"] < 0.9].items())
                     + f"); the squared error from {s['f1'].min():.3f} to {s['f1'].max():.3f}; "
                     f"IHT's F1 >= the better skglm penalty's in {int((h['f1'] >= peers - 1e-12).sum())} of {len(h)}.")
    return lines


def cox_markdown(log, repeats=None, splits=None):
    try:
        from _cox_peers import REPEATS, SPLITS, cox_section
    except ImportError:
        return None
    try:
        return cox_section(REPEATS if repeats is None else repeats, SPLITS if splits is None else splits)
    except Exception as exc:  # the survival helper's section failing must not lose the GLM page
        log(f"cox_section() failed: {type(exc).__name__}: {exc}")
        return (f"## Survival (Cox)\n\n`benchmarks/_cox_peers.py`'s `cox_section()` failed: "
                f"{type(exc).__name__}: {exc}\n")


COX_HEADING = "## Cox proportional hazards (survival)"


def replace_cox_section(out, cox, elapsed, rev):
    """Replace the Cox section of an existing page (it is the last one) with ``cox``, saying how it was made."""
    text = out.read_text()
    head = text[:text.index(COX_HEADING)]
    lines = cox.rstrip().split("\n")
    lines.insert(1, f"\nThis section alone regenerated by `python benchmarks/compare_glm.py {cli_args()}` "
                    f"(git {rev}, {elapsed / 60:.1f} min).")
    out.write_text(head + "\n".join(lines) + "\n")


def write_report(df_syn, df_real, out, args, elapsed, rev, cox):
    import abess
    import skglm
    import sklearn

    import sparse_estimators

    try:
        import statsmodels
        sm = f", statsmodels {statsmodels.__version__}"
    except ImportError:
        sm = ", statsmodels not installed (randhie skipped)"
    keys = ["family", "n", "p", "k", "rho", "signal", "method"]
    syn = aggregate(df_syn, keys) if len(df_syn) else pd.DataFrame()
    lines = [
        "# Counts, amounts and outliers at exact k: Poisson, Gamma and Huber against abess, skglm and scikit-learn",
        "",
        f"Generated by `python benchmarks/compare_glm.py {cli_args()}` (git {rev}, {elapsed / 60:.1f} min). "
        f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
        f"abess {abess.__version__}, skglm {skglm.__version__}{sm}, sparse_estimators {sparse_estimators.__version__}; "
        "every fit with BLAS and OpenMP pinned to one thread (abess `thread=1`), methods interleaved. "
        "The machine was shared with other jobs: compare times within a setting (ratios), not across runs.",
        "",
        "See the docstring of `benchmarks/compare_glm.py` for the designs, the methods and the definition of each "
        "column. `f1`, `nnz`, `d2` are means over the data sets (`d2`: held-out D^2, R^2 on clean rows for Huber), "
        "`time` the median fit time in seconds, `time_vs_abess` that median over abess's in the same setting, "
        "`cpu` and `cpu_vs_abess` the same for the process's CPU time (less sensitive to a loaded machine); "
        "`time_tuning` (skglm) is the search for the penalty giving k non-zeros; `sklearn dense` uses all "
        "features (its `time` includes its 3-fold search of `alpha`). `failed` counts fits that raised, "
        "`invalid` fits whose predicted means were not all positive (no D^2), `conv_warn` ConvergenceWarnings.",
        "",
        "**Gamma and abess's link.** abess's `GammaRegression` uses the canonical link, mean `-1 / (X coef_ + "
        "intercept_)`, not the log link of `loss='gamma'` and scikit-learn's `GammaRegressor`. `gamma-log` data "
        "follow the log link (ours, scikit-learn's and skglm's `Gamma` correctly specified, abess's not); "
        "`gamma-inverse` data follow abess's link (abess correctly specified, the others not). Both are shown.",
        "",
        "## Summary: against abess, skglm and the squared error (synthetic grid)",
        "",
    ]
    if len(syn):
        lines += summary_lines(syn, df_syn) + ["", "## Synthetic grid", ""]
        for family in syn["family"].unique():
            lines += [f"### {family}", "", to_markdown(syn[syn["family"] == family].drop(columns="family"), FMT), ""]
    if len(df_real):
        real = aggregate(df_real, ["data", "family", "n", "p", "k", "method"])
        lines += ["## Real data", "",
                  "Held-out D^2 (R^2 on the clean test rows for `diabetes-outliers`) over 5 random 70/30 splits; "
                  "no known support (`f1` empty). Data sets and designs: see the docstring.", "",
                  to_markdown(real.drop(columns=["f1"]), FMT), ""]
    errors = pd.concat([df_syn, df_real], ignore_index=True)
    if "error" in errors and errors["error"].notna().any():
        lines += ["## Failures", "", "| method | family | error | count |", "|---|---|---|---|"]
        for (m, fam, e), g in errors[errors["error"].notna()].groupby(["method", "family", "error"]):
            lines.append(f"| {m} | {fam} | {e} | {len(g)} |")
        lines.append("")
    if cox:
        lines += [cox.rstrip(), ""]
    out.write_text("\n".join(lines))
    pd.concat([df_syn.assign(data="synthetic"), df_real], ignore_index=True).to_csv(out.with_suffix(".csv"),
                                                                                    index=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=8, help="data sets per synthetic setting")
    parser.add_argument("--quick", action="store_true", help="3 repeats, one size, strong signal only")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="comma-separated, among " + ", ".join(FAMILIES) + " (cox: the survival section)")
    parser.add_argument("--no-real", action="store_true", help="skip the real data sets")
    parser.add_argument("--cox-repeats", type=int, default=None, help="data sets per Cox setting")
    parser.add_argument("--cox-splits", type=int, default=None, help="held-out splits per real survival set")
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    families = args.families.split(",")
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; choose among {', '.join(FAMILIES)}")
    glm = [family for family in families if family != "cox"]

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    sizes = [(200, 100, 5), (500, 1000, 10)]
    signals = ["weak", "strong"]
    rhos = [0.0, 0.7]
    repeats = args.repeats
    if args.quick:
        sizes, signals, repeats = [(200, 100, 5)], ["strong"], 3
    start, rows = time.perf_counter(), []
    with threadpool_limits(1):
        warm = simulate("poisson", 100, 20, 3, 0.0, "strong", 10, 0)  # numba compilation of skglm, not timed
        for fam in ("poisson", "huber", "gamma-log") if glm else ():
            for fac in methods(fam, 3, 1.35).values():
                if isinstance(fac, PenaltyAtK):
                    Xw, yw = warm[0], (warm[1] + 1.0 if fam != "huber" else warm[1])
                    fac.tune(Xw, yw)
        for family in glm:
            for n, p, k in sizes:
                for rho in rhos:
                    for signal in signals:
                        t0 = time.perf_counter()
                        for seed in range(repeats):
                            X, y, Xt, yt, truth = simulate(family, n, p, k, rho, signal, args.n_test, seed)
                            meta = dict(n=n, p=p, rho=rho, signal=signal, seed=seed)
                            rows += run_one(family, X, y, Xt, yt, truth, k, seed, meta, log)
                        log(f"{family} n={n} p={p} rho={rho} {signal}: {time.perf_counter() - t0:.1f} s")
        df_syn = pd.DataFrame(rows)
        real_rows = []
        if not args.no_real:
            from sklearn.model_selection import train_test_split
            for name, (family, X, y) in real_data().items():
                if family not in glm:
                    continue
                t0 = time.perf_counter()
                for k in (5, 10):
                    for split in range(2 if args.quick else 5):
                        Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=split)
                        if family == "huber":
                            rng = np.random.RandomState(split)
                            ya = ya.copy()
                            bad = rng.choice(len(ya), int(round(OUTLIER_FRACTION * len(ya))), replace=False)
                            ya[bad] += rng.uniform(*OUTLIER_SHIFT, bad.size)
                        meta = dict(data=name, n=X.shape[0], p=X.shape[1], seed=split)
                        real_rows += run_one(family, Xa, ya, Xb, yb, None, k, split, meta, log)
                log(f"{name}: {time.perf_counter() - t0:.1f} s")
        df_real = pd.DataFrame(real_rows)
        cox = cox_markdown(log, args.cox_repeats, args.cox_splits) if "cox" in families else None
    elapsed = time.perf_counter() - start
    if not glm and cox and args.out.exists() and COX_HEADING in args.out.read_text():
        replace_cox_section(args.out, cox, elapsed, revision())
        print(args.out.read_text())
        return
    write_report(df_syn, df_real, args.out, args, elapsed, revision(), cox)
    print(args.out.read_text())


if __name__ == "__main__":
    main()
