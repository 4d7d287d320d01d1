"""Multinomial exact-k fits: ``IHTClassifier`` against abess's ``MultinomialRegression``, interleaved.

Data: ``X`` with AR(1) columns (rho 0.35, unit variance), ``k`` true features
equally spaced, each with one coefficient per class drawn ``N(0, 1)`` and
scaled so that the linear predictors have standard deviation ``--scale``
(default 1.5); labels ``y_i = argmax_a (x_i W_a + Gumbel)`` (a softmax
model). Both fit at the true ``k`` (ours ``IHTClassifier(k=k)`` with its
defaults, abess ``MultinomialRegression(support_size=[k], thread=1)``), in
this process with BLAS and OpenMP pinned to one thread by threadpoolctl; each
repeat draws a new data set and fits ours and abess on it one after the
other, alternating which goes first. The table gives median fit times over
the repeats, the median of the per-repeat ratios ours / abess, and the mean
support F1 of each against the true support.

Usage::

    python benchmarks/compare_multinomial.py                   # the grid, 3 repeats, prints Markdown
    python benchmarks/compare_multinomial.py --out doc/peers/multinomial.md
    python benchmarks/compare_multinomial.py --settings 10,20000,500,20 --repeats 5
"""

import argparse
import os
import subprocess
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sparse_estimators import IHTClassifier  # noqa: E402

#: (classes, n, p, k)
GRID = [(3, 20000, 500, 20), (5, 20000, 500, 20), (10, 20000, 500, 20), (20, 20000, 500, 20),
        (10, 5000, 500, 10), (10, 50000, 200, 20)]


def simulate(m, n, p, k, scale, seed):
    """``(X, y, true support)`` of the softmax model described in the module docstring."""
    rng = np.random.RandomState(seed)
    X = np.empty((n, p))
    X[:, 0] = rng.standard_normal(n)
    rho = 0.35
    for j in range(1, p):  # AR(1) across columns: corr(x_j, x_l) = rho^|j - l|
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * rng.standard_normal(n)
    support = np.round(np.linspace(0, p - 1, k)).astype(int)
    W = np.zeros((p, m))
    W[support] = rng.standard_normal((k, m))
    Z = X @ W
    Z *= scale / Z.std()
    y = np.argmax(Z + rng.gumbel(size=(n, m)), axis=1)
    return X, y, support


def f1(selected, truth):
    tp = len(set(selected.tolist()) & set(truth.tolist()))
    return 2 * tp / (len(selected) + len(truth)) if len(selected) + len(truth) else 1.0


def fit_ours(X, y, k):
    start = time.perf_counter()
    est = IHTClassifier(k=k).fit(X, y)
    return time.perf_counter() - start, np.asarray(est.support_)


def fit_abess(X, y, k):
    import abess.linear

    start = time.perf_counter()
    est = abess.linear.MultinomialRegression(support_size=[k], thread=1).fit(X, y)
    elapsed = time.perf_counter() - start
    return elapsed, np.flatnonzero(np.any(np.asarray(est.coef_) != 0, axis=1))


def run(setting, repeats, scale):
    m, n, p, k = setting
    rows = []
    for r in range(repeats):
        X, y, truth = simulate(m, n, p, k, scale, seed=1000 * m + r)
        order = (fit_ours, fit_abess) if r % 2 == 0 else (fit_abess, fit_ours)
        out = {fit: fit(X, y, k) for fit in order}
        (t_ours, s_ours), (t_abess, s_abess) = out[fit_ours], out[fit_abess]
        rows.append((t_ours, t_abess, t_ours / t_abess, f1(s_ours, truth), f1(s_abess, truth)))
    R = np.array(rows)
    return (np.median(R[:, 0]), np.median(R[:, 1]), np.median(R[:, 2]), R[:, 2].min(), R[:, 2].max(),
            R[:, 3].mean(), R[:, 4].mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.5, help="standard deviation of the linear predictors")
    parser.add_argument("--settings", nargs="+", metavar="M,N,P,K", help="these (classes, n, p, k) only")
    parser.add_argument("--out", help="also write the table (with a header) to this Markdown file")
    args = parser.parse_args()
    settings = [tuple(int(v) for v in s.split(",")) for s in args.settings] if args.settings else GRID
    warnings.simplefilter("ignore")
    load = os.getloadavg()
    started = time.time()
    lines = ["| classes | n | p | k | ours (s) | abess (s) | ours / abess (median) | (min, max) | F1 ours | F1 abess |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    with threadpool_limits(1):
        for setting in settings:
            t_o, t_a, ratio, low, high, f_o, f_a = run(setting, args.repeats, args.scale)
            line = (f"| {setting[0]} | {setting[1]} | {setting[2]} | {setting[3]} | {t_o:.3f} | {t_a:.3f} | "
                    f"{ratio:.2f} | ({low:.2f}, {high:.2f}) | {f_o:.3f} | {f_a:.3f} |")
            print(line, flush=True)
            lines.append(line)
    if args.out:
        try:
            rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                 cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        except OSError:
            rev = "unknown"
        import abess
        import sklearn

        command = "python benchmarks/compare_multinomial.py " + " ".join(sys.argv[1:])
        header = [
            "# Multinomial exact-k fits against abess",
            "",
            f"Generated by `{command.strip()}` (git {rev} and its working tree; {time.time() - started:.0f} s), "
            f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, abess {abess.__version__}; "
            f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start (other jobs shared the machine: "
            "compare the ratios, measured on the same data one fit after the other, not the times). "
            "One BLAS/OpenMP thread (threadpoolctl), abess `thread=1`.",
            "",
            "The design and model are in the script's docstring: AR(1) columns (rho 0.35), k true features, "
            f"class coefficients N(0, 1) scaled to linear predictors of sd {args.scale}, softmax labels. "
            f"{args.repeats} data sets per row; times are medians, the ratio is the median of the per-data-set "
            "ratios (min and max beside it), F1 of the selected features against the true ones, mean over "
            "the data sets.",
            "",
        ]
        with open(args.out, "w") as fh:
            fh.write("\n".join(header + lines) + "\n")


if __name__ == "__main__":
    main()
