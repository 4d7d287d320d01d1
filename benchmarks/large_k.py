"""Large k against abess: support F1, held-out R^2 and fit time at ``k`` = 100, 500 and 1000 features.

The design is the AR(1) regression of ``compare_peers.py``
(``_peer_designs.simulate``) at one large size:

* ``n = 5000`` training rows, ``p = 10000`` features, rows i.i.d.
  ``N(0, Sigma)`` with ``Sigma_ij = rho^|i-j|``, ``rho = 0.6`` (``--rho``);
* ``beta`` type 1: ``s`` coefficients equal to one at (roughly) equally
  spaced indices ``round(linspace(0, p - 1, s))`` (every 100th, 20th and 10th
  feature at ``s`` = 100, 500, 1000), the others zero;
* ``y = X beta + eps``, ``Var(eps) = beta^T Sigma beta / SNR``, ``SNR = 4``;
* ``--n-test`` (default 2000) fresh rows drawn the same way for the held-out
  R^2 (``simulate`` draws them before the noise of ``y``: another
  ``--n-test`` gives other data sets).

Each estimator is asked for the true ``k = s``: ``IHTRegressor(k=s)`` with its
defaults, abess's ``LinearRegression(support_size=[s], thread=1)`` and, with
``--accel``, ``AcceleratedIHTRegressor(k=s)``. ``--repeats`` data sets per
``s`` (default 3; seeds from ``(n, p, s, rho, SNR, repeat)``); on each data set
the methods are fitted one after the other (abess first on even repeats,
ours first on odd ones), in this process, with BLAS and OpenMP pinned to one
thread by threadpoolctl.

Metrics per fit:

* ``f1``: F1 of the support ``{j: b_hat_j != 0}`` against the true support;
* ``r2``: R^2 of the fitted model's predictions on the held-out rows;
* ``rel_risk``: ``(b_hat - b)^T Sigma (b_hat - b) / b^T Sigma b``;
* ``loss``: the training loss ``mean((y - X b_hat - b0)^2) / 2``, computed here
  the same way for every method;
* ``time`` and ``cpu``: wall (``time.perf_counter``) and CPU
  (``time.process_time``) time of ``fit``, one fit each (a fit here takes
  seconds: no repeated short fits as in ``_bench_common.fit_quietly``);
* ``n_iter`` and ``n_exchanges``: our ``n_iter_`` and ``n_exchanges_``
  (exchanges accepted by the splicing search at the end of the fit).

The summary per ``s`` gives the mean F1 of ours and abess's, the mean paired
difference (ours minus abess, per data set) with its standard error, and the
median over data sets of the ratio of our CPU time to abess's.

Run: ``OMP_NUM_THREADS=1 python benchmarks/large_k.py`` (3 data sets per
``s``, about 6 min: abess takes 80 s a fit at ``s = 1000``; writes
``doc/peers/large_k.md`` (``--out``) and the raw rows to a CSV beside it).
``--ks 100 500`` runs a subset; ``--first-repeat 5 --out other.md`` then
``--merge doc/peers/large_k.csv other.csv`` adds data sets to an earlier run.
"""

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info, threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import cli_args, revision, to_markdown  # noqa: E402
from _peer_designs import sigma_quad, simulate  # noqa: E402

from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor  # noqa: E402

N, P = 5000, 10000
KS = (100, 500, 1000)
DEFAULT_OUT = ROOT / "doc" / "peers" / "large_k.md"


def make_methods(k, accel):
    """``{name: factory}`` in the order of the first (even) repeat."""
    import abess.linear

    methods = {"abess": lambda: abess.linear.LinearRegression(support_size=[k], thread=1),
               "IHT": lambda: IHTRegressor(k=k)}
    if accel:
        methods["AccelIHT"] = lambda: AcceleratedIHTRegressor(k=k)
    return methods


def evaluate(model, X, y, Xt, yt, beta, rho):
    coef = np.ravel(np.asarray(model.coef_, dtype=float))
    b0 = float(np.ravel(np.asarray(model.intercept_, dtype=float))[0]) if np.size(model.intercept_) else 0.0
    support, true = np.flatnonzero(coef), np.flatnonzero(beta)
    hits = np.intersect1d(support, true).size
    f1 = 2 * hits / (support.size + true.size) if hits else 0.0
    zt = Xt @ coef + b0
    return {"nnz": support.size, "f1": f1,
            "r2": 1.0 - float(np.sum((yt - zt) ** 2) / np.sum((yt - yt.mean()) ** 2)),
            "rel_risk": sigma_quad(coef - beta, rho) / sigma_quad(beta, rho),
            "loss": 0.5 * float(np.mean((y - X @ coef - b0) ** 2))}


def run(ks, repeats, rho, snr, n_test, accel, log, first=0):
    rows = []
    for s in ks:
        methods = make_methods(s, accel)
        for rep in range(first, first + repeats):
            seed = int(np.random.SeedSequence([N, P, s, int(rho * 100), int(snr * 10), rep]).generate_state(1)[0])
            t0 = time.perf_counter()
            X, y, Xt, yt, beta = simulate("regression", N, P, s, rho, 1, snr, n_test, seed)
            log(f"s={s} repeat {rep}: data in {time.perf_counter() - t0:.1f} s")
            order = list(methods) if rep % 2 == 0 else list(methods)[::-1]
            for name in order:
                model = methods[name]()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    c0, t0 = time.process_time(), time.perf_counter()
                    model.fit(X, y)
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                row = {"s": s, "repeat": rep, "method": name, "time": wall, "cpu": cpu,
                       "n_iter": np.nan if name == "abess" else model.n_iter_,
                       "n_exchanges": getattr(model, "n_exchanges_", np.nan), "warnings": len(caught)}
                row.update(evaluate(model, X, y, Xt, yt, beta, rho))
                rows.append(row)
                log(f"  {name}: f1 {row['f1']:.3f} r2 {row['r2']:.4f} loss {row['loss']:.4f} "
                    f"cpu {cpu:.1f} s wall {wall:.1f} s n_iter {row['n_iter']} n_exchanges {row['n_exchanges']}")
            del X, Xt
    return pd.DataFrame(rows)


def _se(d):
    """Standard error of the mean of the paired differences ``d`` (nan for one data set)."""
    return d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")


def summarize(df):
    """Per ``s`` and method: means, paired differences with abess and the median time ratio."""
    by = df.groupby(["s", "method"], sort=False).agg(
        fits=("f1", "size"), f1=("f1", "mean"), r2=("r2", "mean"), rel_risk=("rel_risk", "mean"),
        loss=("loss", "mean"), cpu=("cpu", "median"), time=("time", "median"), n_iter=("n_iter", "median"),
        n_exchanges=("n_exchanges", "median")).reset_index()
    lines = []
    for s, group in df.groupby("s"):
        wide = {col: group.pivot(index="repeat", columns="method", values=col) for col in ("f1", "r2", "cpu")}
        for name in [m for m in group.method.unique() if m != "abess"]:
            d_f1 = wide["f1"][name] - wide["f1"]["abess"]
            d_r2 = wide["r2"][name] - wide["r2"]["abess"]
            ratio = wide["cpu"][name] / wide["cpu"]["abess"]
            n = len(d_f1)
            lines.append(
                f"- k = {s}, {name}: F1 {wide['f1'][name].mean():.3f} vs abess {wide['f1']['abess'].mean():.3f}, "
                f"paired difference {d_f1.mean():+.4f} +- {_se(d_f1):.4f}; held-out R^2 difference "
                f"{d_r2.mean():+.4f} +- {_se(d_r2):.4f}; CPU time ratio {ratio.median():.2f} "
                f"(median of {n}; range {ratio.min():.2f} to {ratio.max():.2f}).")
    return by, lines


def versions():
    import abess
    import scipy
    import sklearn

    blas = [f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info() if i.get("user_api") == "blas"]
    return (f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"scikit-learn {sklearn.__version__}, abess {abess.__version__}, BLAS {', '.join(blas) or '?'}")


def write_page(df, out, command, provenance, rho, snr, n_test):
    """The Markdown page; ``provenance``: the git revision, duration and load average of the run(s)."""
    by, lines = summarize(df)
    fmt = {"f1": ".3f", "r2": ".4f", "rel_risk": ".4f", "loss": ".4g", "cpu": ".2f", "time": ".2f",
           "n_iter": ".0f", "n_exchanges": ".0f"}
    text = "\n".join([
        "# Large k against abess", "",
        f"Generated by `{command}` {provenance}; {versions()}; one BLAS / OpenMP thread.", "",
        f"Design (see the script's docstring): n = {N}, p = {P}, AR(1) correlation rho = {rho}, "
        f"beta type 1 (s ones at equally spaced indices), SNR {snr}, held-out R^2 on {n_test} fresh rows; "
        "every method asked for the true k = s. `f1`: support F1; `r2`: held-out R^2; `rel_risk`: "
        "prediction risk relative to the signal's variance; `loss`: training loss (half mean squared "
        "residual); `cpu` / `time`: median CPU / wall time of a fit in seconds; `n_iter`, `n_exchanges`: "
        "median of our `n_iter_` and `n_exchanges_`.", "",
        to_markdown(by, fmt), "",
        "Per k, ours against abess on the same data sets (paired difference: mean +- standard error; "
        "time ratio: median over data sets of our CPU time over abess's):", "",
        *lines, ""])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ks", type=int, nargs="+", default=list(KS), help="true sizes s (= k) to run")
    parser.add_argument("--repeats", type=int, default=3, help="data sets per s")
    parser.add_argument("--first-repeat", type=int, default=0,
                        help="index of the first data set (more data sets for a run to --merge with an earlier one)")
    parser.add_argument("--rho", type=float, default=0.6)
    parser.add_argument("--snr", type=float, default=4.0)
    parser.add_argument("--n-test", type=int, default=2000)
    parser.add_argument("--accel", action="store_true", help="also fit AcceleratedIHTRegressor(k)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--merge", type=Path, nargs="+", metavar="CSV",
                        help="write the page from the raw rows of earlier runs instead of fitting")
    args = parser.parse_args(argv)
    command = f"python benchmarks/large_k.py {cli_args(argv)}".strip()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.merge:
        df = pd.concat([pd.read_csv(path) for path in args.merge], ignore_index=True)
        meta = "; ".join(path.with_suffix(".meta").read_text().strip() for path in args.merge
                         if path.with_suffix(".meta").exists())
        print(write_page(df, args.out, command, f"from the rows of the runs `{meta}`", args.rho, args.snr,
                         args.n_test))
        df.to_csv(args.out.with_suffix(".csv"), index=False)
        return
    rev = revision()
    load0 = os.getloadavg()[0]
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        df = run(args.ks, args.repeats, args.rho, args.snr, args.n_test, args.accel, log, args.first_repeat)
    minutes = (time.perf_counter() - start) / 60
    df.to_csv(args.out.with_suffix(".csv"), index=False)
    provenance = (f"at git {rev} in {minutes:.1f} min, load average {load0:.2f} at the start and "
                  f"{os.getloadavg()[0]:.2f} at the end")
    args.out.with_suffix(".meta").write_text(f"{command}: {provenance}\n")
    print(write_page(df, args.out, command, provenance, args.rho, args.snr, args.n_test))


if __name__ == "__main__":
    main()
