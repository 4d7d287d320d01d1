"""Reduced-rank regression: ``ReducedRankRegressor`` against the closed form, PLS, CCA and ridge + truncated SVD.

Methods, each at the same rank ``r``:

* ours: ``ReducedRankRegressor(rank=r)`` (hard thresholding of the singular
  values, IHT), the same with ``solver='accelerated'``, and with
  ``thresholding='reciprocal'`` (Liu & Barber's reciprocal thresholding), all
  with their other defaults (``tol=1e-4``, ``debias=True``);
* ``closed form``: reduced-rank regression's global minimiser (the least-squares
  fit projected onto the top ``r`` right singular vectors of its fitted values,
  as ``tests/test_reduced_rank.py::closed_form``, with an intercept);
* scikit-learn ``PLSRegression(n_components=r)`` and ``CCA(n_components=r)``
  (defaults otherwise, ``scale=True``);
* ``ridge+svd``: ``RidgeCV`` (13 alphas from 1e-3 to 1e3, efficient leave-one-out,
  one alpha for all targets), its coefficient matrix projected onto its top
  ``r`` right singular vectors, the intercept refitted.

Problems:

* synthetic: rows of ``X`` i.i.d. ``N(0, Sigma)`` with ``Sigma_ij = 0.5^|i-j|``
  (AR(1)), truth ``B = U diag(3, 2, 1, 0.5, ...)[:r] V^T`` of rank ``r``
  (Gaussian ``U``, ``V`` with orthonormal columns, scaled so that the columns of
  ``X`` see unit-size effects), ``Y = X B + E`` with Gaussian noise whose
  variance makes ``||X B||_F^2 / ||E||_F^2 = SNR`` on average; a few sizes
  ``(n, p, m, r)`` and SNRs, test sets of ``--n-test`` rows; the methods are
  given the true rank;
* real: ``load_digits`` (shipped with scikit-learn, 1797 images of 8 x 8
  pixels): predict a block of 8 pixels from the other pixels: ``bottom``
  (rows 6-7, columns 2-5) and ``middle`` (rows 3-4, columns 2-5); pixels that
  are non-zero in fewer than 20 images (the empty left and right borders) are
  not used as features (47 features remain); random 70/30 train/test splits;
  ranks 1 to 4.

Metrics: test R^2 (``r2_score`` with ``multioutput='variance_weighted'``: the
fraction of the block's total variance explained; the uniform average is
dominated by target pixels that are nearly constant on a test split);
``obj_gap``: the training objective ``||Y - X W - b||_F^2 / (2 n)`` over the
closed form's, minus 1 (the closed form is the minimum among rank-``r``
matrices, so the gap is >= 0 up to rounding for every method); ``rank``: the
numerical rank of the coefficient matrix (singular values above 1e-10 times
the largest); ``time``: wall time of ``fit``
(``_bench_common.fit_quietly``: a fit shorter than 0.2 s is repeated, minimum
kept), BLAS pinned by threadpoolctl to ``--threads``; reported as medians and
as ratios to PLS's and to the closed form's median time in the same setting
of the same run.

Run ``python benchmarks/compare_rank.py`` (a few minutes) or ``--quick``.
Writes ``doc/peers/compare_rank.md`` (``--out``) and the raw per-fit rows to
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
from sklearn.cross_decomposition import CCA, PLSRegression
from sklearn.datasets import load_digits
from sklearn.linear_model import RidgeCV
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import cli_args, fit_quietly, revision, to_markdown  # noqa: E402
from _peer_designs import ar1_design  # noqa: E402

from sparse_estimators import ReducedRankRegressor  # noqa: E402

DEFAULT_OUT = ROOT / "doc" / "peers" / "compare_rank.md"
FULL = {"sizes": ((200, 30, 10, 2), (500, 100, 20, 3), (2000, 200, 50, 5)), "snrs": (0.25, 1.0, 4.0),
        "repeats": 5, "digit_ranks": (1, 2, 3, 4), "splits": 5}
QUICK = {"sizes": ((200, 30, 10, 2),), "snrs": (1.0,), "repeats": 2, "digit_ranks": (2,), "splits": 2}
BLOCKS = {"bottom": [8 * row + col for row in (6, 7) for col in (2, 3, 4, 5)],
          "middle": [8 * row + col for row in (3, 4) for col in (2, 3, 4, 5)]}
#: pixels with fewer non-zero values than this over the 1797 images are not used as features
MIN_INK = 20
SETTING = ["problem", "n", "p", "m", "r", "snr"]


class ClosedFormRRR:
    """Reduced-rank regression's minimiser: OLS projected onto the top ``r`` right singular vectors of its fit."""

    def __init__(self, rank):
        self.rank = rank

    def fit(self, X, Y):
        x_mean, y_mean = X.mean(axis=0), Y.mean(axis=0)
        Xc, Yc = X - x_mean, Y - y_mean
        W_ols = np.linalg.lstsq(Xc, Yc, rcond=None)[0]
        V = np.linalg.svd(Xc @ W_ols, full_matrices=False)[2][: self.rank].T
        self.coef_ = (W_ols @ V @ V.T).T
        self.intercept_ = y_mean - x_mean @ self.coef_.T
        return self

    def predict(self, X):
        return X @ self.coef_.T + self.intercept_


RIDGE_ALPHAS = tuple(np.logspace(-3, 3, 13))


class RidgeSVD:
    """``RidgeCV``, its coefficient matrix projected onto its top ``r`` right singular vectors, intercept refitted."""

    def __init__(self, rank, alphas=RIDGE_ALPHAS):
        self.rank, self.alphas = rank, alphas

    def fit(self, X, Y):
        ridge = RidgeCV(alphas=self.alphas).fit(X, Y)
        W = ridge.coef_.T  # (p, m)
        V = np.linalg.svd(W, full_matrices=False)[2][: self.rank].T
        self.coef_ = (W @ V @ V.T).T
        self.intercept_ = Y.mean(axis=0) - X.mean(axis=0) @ self.coef_.T
        self.alpha_ = ridge.alpha_
        return self

    def predict(self, X):
        return X @ self.coef_.T + self.intercept_


def make_methods(r):
    return {
        "RRR hard": lambda: ReducedRankRegressor(rank=r),
        "RRR hard accel": lambda: ReducedRankRegressor(rank=r, solver="accelerated"),
        "RRR regularized": lambda: ReducedRankRegressor(rank=r, solver="regularized"),
        "RRR reciprocal": lambda: ReducedRankRegressor(rank=r, thresholding="reciprocal"),
        "closed form": lambda: ClosedFormRRR(r),
        "PLS": lambda: PLSRegression(n_components=r),
        "CCA": lambda: CCA(n_components=r),
        "ridge+svd": lambda: RidgeSVD(r),
    }


def coef_matrix(model, X, Y):
    """The ``(p, m)`` coefficient matrix and intercept of a fitted linear model, read from its predictions."""
    if isinstance(model, (PLSRegression, CCA)):  # their coef_ acts on scaled X: recover the map from predictions
        b = model.predict(np.zeros((1, X.shape[1])))[0]
        W = model.predict(np.eye(X.shape[1])) - b
        return W, b
    return np.asarray(model.coef_).T, np.asarray(model.intercept_)


def numerical_rank(W):
    s = np.linalg.svd(W, compute_uv=False)
    return int(np.sum(s > 1e-10 * s[0])) if s.size and s[0] > 0 else 0


def run_problem(X, Y, Xt, Yt, r, setting, seed):
    rows = []
    f_star = None
    for name, factory in make_methods(r).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, wall, _, n_conv = fit_quietly(factory, X, Y)
            W, b = coef_matrix(model, X, Y)
            pred = model.predict(Xt).reshape(Yt.shape)
        f = 0.5 * float(np.sum((Y - X @ W - b) ** 2)) / X.shape[0]
        if name == "closed form":
            f_star = f
        rows.append({"method": name, "test_r2": r2_score(Yt, pred, multioutput="variance_weighted"), "objective": f,
                     "rank": numerical_rank(W),
                     "time": wall, "n_iter": model.n_iter_ if isinstance(model, ReducedRankRegressor) else np.nan,
                     "conv_warn": n_conv, "seed": seed, **setting})
    for row in rows:
        row["obj_gap"] = row["objective"] / f_star - 1.0
    return rows


def synthetic(n, p, m, r, snr, n_test, seed):
    rng = np.random.RandomState(seed)
    U = np.linalg.qr(rng.standard_normal((p, r)))[0]
    V = np.linalg.qr(rng.standard_normal((m, r)))[0]
    B = np.sqrt(p) * U @ np.diag((3.0, 2.0, 1.0, 0.5, 0.25, 0.125)[:r]) @ V.T / np.sqrt(r)
    X, Xt = ar1_design(rng, n, p, 0.5), ar1_design(rng, n_test, p, 0.5)
    signal = X @ B
    sd = np.sqrt(np.mean(signal ** 2) / snr)
    return X, signal + sd * rng.standard_normal((n, m)), Xt, Xt @ B + sd * rng.standard_normal((n_test, m))


def digits_problem(block, seed):
    data = load_digits().data.astype(float)
    targets = BLOCKS[block]
    ink = np.count_nonzero(data, axis=0)
    features = [j for j in range(64) if j not in targets and ink[j] >= MIN_INK]
    return train_test_split(data[:, features], data[:, targets], test_size=0.3, random_state=seed)


# -- report -----------------------------------------------------------------------------
FMT = {"test_r2": ".3f", "obj_gap": ".2e", "time": ".4f", "time_vs_pls": ".2f", "time_vs_closed_form": ".2f",
       "rank": ".1f", "n_iter": ".0f", "snr": ".2f", "r2_minus_best_peer": "+.3f", "r2_minus_closed_form": "+.3f"}


def aggregate(df, by):
    agg = df.groupby(by + ["method"], sort=False, dropna=False).agg(
        test_r2=("test_r2", "mean"), obj_gap=("obj_gap", "mean"), rank=("rank", "mean"), time=("time", "median"),
        n_iter=("n_iter", "median"), conv_warn=("conv_warn", "sum"), fits=("seed", "size")).reset_index()
    for ref, col in (("PLS", "time_vs_pls"), ("closed form", "time_vs_closed_form")):
        t = agg[by].merge(agg.loc[agg.method == ref, by + ["time"]], on=by, how="left")["time"].to_numpy()
        agg[col] = agg["time"].to_numpy() / t
    return agg


def write_report(df, out, args, grid, elapsed, rev):
    import sklearn

    per_setting = aggregate(df, SETTING)
    summary = aggregate(df.assign(kind=np.where(df.problem == "synthetic", "synthetic", "digits")), ["kind"])
    # ours against the best peer (PLS, CCA, ridge+svd) and the closed form, per setting
    peers = per_setting[per_setting.method.isin(["PLS", "CCA", "ridge+svd"])]
    best = peers.loc[peers.groupby(SETTING, dropna=False).test_r2.idxmax()]
    closed = per_setting[per_setting.method == "closed form"]
    cmp = per_setting[per_setting.method == "RRR hard"][SETTING + ["test_r2", "obj_gap", "time_vs_pls"]].merge(
        best[SETTING + ["method", "test_r2"]].rename(columns={"method": "best_peer", "test_r2": "peer_r2"}),
        on=SETTING).merge(closed[SETTING + ["test_r2"]].rename(columns={"test_r2": "closed_r2"}), on=SETTING)
    cmp["r2_minus_best_peer"] = cmp.test_r2 - cmp.peer_r2
    cmp["r2_minus_closed_form"] = cmp.test_r2 - cmp.closed_r2
    cmp = cmp.drop(columns=["peer_r2", "closed_r2"])
    command = f"python benchmarks/compare_rank.py {cli_args()}".strip()
    lines = [
        "# Reduced-rank regression against the closed form, PLS, CCA and ridge + truncated SVD",
        "",
        f"Generated by `{command}` at git {rev} in {elapsed / 60:.1f} min; "
        f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}; all fits "
        f"with BLAS and OpenMP pinned to {args.threads} thread(s).",
        "",
        f"Synthetic: (n, p, m, r) {grid['sizes']}, SNR {grid['snrs']}, {grid['repeats']} data sets each, test sets "
        f"of {args.n_test} rows. Digits: blocks {list(BLOCKS)} (8 target pixels each), ranks {grid['digit_ranks']}, "
        f"{grid['splits']} random 70/30 splits (`n`, `p` are the training rows and kept features). See the module "
        "docstring of `benchmarks/compare_rank.py` for the designs and the methods. `test_r2`, `obj_gap` (training "
        "objective over the closed form's, minus 1), `rank` are means over data sets / splits; `time` is the median "
        "fit time in seconds, `time_vs_pls` and `time_vs_closed_form` that median over PLS's / the closed form's "
        "in the same setting of this run.",
        "",
        "## Summary (over all settings of each kind)",
        "",
        to_markdown(summary.drop(columns=["fits"]), FMT),
        "",
        "## `RRR hard` against the best of PLS, CCA and ridge+svd (`best_peer`, by test R^2) and the closed form",
        "",
        to_markdown(cmp, FMT),
        "",
        "## Per setting",
        "",
        to_markdown(per_setting.drop(columns=["fits"]), FMT),
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    return per_setting, cmp


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one size, one SNR, one rank (under a minute)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    grid = dict(QUICK if args.quick else FULL)
    rev = revision()
    start = time.perf_counter()
    rows = []
    with threadpool_limits(limits=args.threads):
        for (n, p, m, r), snr in itertools.product(grid["sizes"], grid["snrs"]):
            t0 = time.perf_counter()
            for rep in range(grid["repeats"]):
                seed = 1000 * rep + n + p + m + int(100 * snr)
                X, Y, Xt, Yt = synthetic(n, p, m, r, snr, args.n_test, seed)
                setting = {"problem": "synthetic", "n": n, "p": p, "m": m, "r": r, "snr": snr}
                rows += run_problem(X, Y, Xt, Yt, r, setting, seed)
            print(f"synthetic n={n} p={p} m={m} r={r} snr={snr}: {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
        for block, r in itertools.product(BLOCKS, grid["digit_ranks"]):
            t0 = time.perf_counter()
            for split in range(grid["splits"]):
                X, Xt, Y, Yt = digits_problem(block, split)
                setting = {"problem": f"digits {block}", "n": X.shape[0], "p": X.shape[1], "m": Y.shape[1], "r": r,
                           "snr": np.nan}
                rows += run_problem(X, Y, Xt, Yt, r, setting, split)
            print(f"digits {block} r={r}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    per_setting, cmp = write_report(df, out, args, grid, time.perf_counter() - start, rev)
    print(to_markdown(per_setting.drop(columns=["fits"]), FMT))
    print()
    print(to_markdown(cmp, FMT))
    print(f"\nwrote {out.name} and {out.with_suffix('.csv').name} in {out.parent.name}/", file=sys.stderr)


if __name__ == "__main__":
    main()
