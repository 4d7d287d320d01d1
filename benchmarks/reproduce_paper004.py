"""Reproduce Fig. 1 of Wu et al., *The Iterative Optimal Brain Surgeon* (paper 004).

Writes ``doc/reproduction/paper004_fig1a.{png,md}`` and
``doc/reproduction/paper004_fig1b.{png,md}`` (generated: do not edit them).

* Fig. 1a: d = 128, theta* ~ N(0, I) on 16 random entries, n = 256, X entries
  N(0, 1/n), noiseless, k = 64, 750 steps, 20 runs: relative error
  ||theta_t - theta*|| / ||theta*|| and loss per iteration for k-IHT (step
  1/lambda_max(H)) and top-k I-OBS (eq. 12, with and without the OBS
  correction), medians and quartile bands over the runs.
* Fig. 1b: the paper uses an MNIST image (d = 784) as the signal. MNIST is not
  shipped offline; we use scikit-learn's ``load_digits`` 8x8 images, upsampled
  3x (nearest neighbour, 24x24) and padded by 2 pixels to 28x28, d = 784, pixel
  values rescaled to [0, 255]; n = 2d, k = 2 k* (k* = the image's non-zeros).

Run: ``python benchmarks/reproduce_paper004.py`` (``--quick`` for a small smoke run).
BLAS is limited to one thread (``--blas-threads``): on a shared 2-core machine a
multi-threaded OpenBLAS spends milliseconds per level-1 call waiting for threads.
"""

import argparse
import contextlib
import platform
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sparse_estimators.losses import SquaredLoss  # noqa: E402
from sparse_estimators.solvers import IterationMonitor, iht, iobs  # noqa: E402
from sparse_estimators.thresholding import Hard  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "doc" / "reproduction"

# method name -> (solver, options); all with hard thresholding, no intercept, zero start
METHODS = {
    "k-IHT (step 1/L)": (iht, {"step_size": 1.0}),
    "top-k I-OBS, no correction, damping 0 (eq. 12)": (iobs, {"correction": False, "damping": 0.0}),
    "top-k I-OBS, no correction, damping 1e-2": (iobs, {"correction": False, "damping": 1e-2}),
    "top-k I-OBS + OBS correction, damping 1e-2": (iobs, {"correction": True, "damping": 1e-2}),
}
COLORS = ["tab:blue", "tab:red", "tab:orange", "tab:green"]
#: a run stops once an iteration moves the iterate by at most this much (relative); the curve is then flat
STALLED = 1e-14


@contextlib.contextmanager
def record_iterates(probe, stalled=STALLED):
    """Record ``probe(W)`` for every accepted iterate of any solver (patches ``IterationMonitor.update``).

    Yields a list that receives ``(f, probe(W))`` per iteration, in order. The
    solver is stopped once an iteration moves the iterate by at most
    ``stalled`` relative (rounding level): the rest of the curve is flat.
    """
    records = []
    original = IterationMonitor.update

    def update(self, it, W_old, b_old, W, b, f, support, *more):  # (more: the solver's optional arguments)
        records.append((float(f), probe(W)))
        stop = original(self, it, W_old, b_old, W, b, f, support, *more)
        return stop or bool(np.linalg.norm(W - W_old) <= stalled * np.linalg.norm(W))

    IterationMonitor.update = update
    try:
        yield records
    finally:
        IterationMonitor.update = original


def run_trajectory(solver, options, X, y, theta, k, n_steps, snapshots=()):
    """Loss and relative error at iterations 0..n_steps (padded with the last value if the solver stops).

    Returns ``(loss, rel_error, images)``, ``images[t]`` the iterate at each iteration in ``snapshots``.
    """
    loss = SquaredLoss(X, y, None, False)
    W0, b0 = loss.zeros()
    norm = np.linalg.norm(theta)
    iterates = {}

    def probe(W):
        return float(np.linalg.norm(W[:, 0] - theta) / norm), W[:, 0].copy() if snapshots else None

    with record_iterates(probe) as records:
        solver(loss, Hard(), k, W0=W0, b0=b0, max_iter=n_steps, tol=0.0, **options)
    f = [loss.value(W0, b0)] + [r[0] for r in records]
    err = [1.0] + [r[1][0] for r in records]
    for t in snapshots:
        if t == 0:
            iterates[t] = np.zeros_like(theta)
        else:
            iterates[t] = records[min(t, len(records)) - 1][1][1]
    pad = n_steps + 1 - len(f)
    return np.array(f + [f[-1]] * pad), np.array(err + [err[-1]] * pad), iterates


def gaussian_problem(rng, d, n, k_true):
    theta = np.zeros(d)
    theta[rng.choice(d, k_true, replace=False)] = rng.standard_normal(k_true)
    X = rng.standard_normal((n, d)) / np.sqrt(n)
    return X, X @ theta, theta


def digit_signals(n_images, rng, upsample=3, pad=2):
    """``load_digits`` images as flattened signals in [0, 255] (upsampled and padded)."""
    images = load_digits().images
    idx = rng.choice(len(images), n_images, replace=False)
    out = []
    for i in idx:
        img = np.kron(images[i], np.ones((upsample, upsample))) * (255.0 / 16.0)
        out.append(np.pad(img, pad))
    return out, idx


def first_below(curve, level):
    hits = np.flatnonzero(curve <= level)
    return int(hits[0]) if hits.size else None


def run_experiment(problems, k_of, n_steps, snapshot_run=None, snapshots=()):
    """Trajectories of every method on every ``(X, y, theta)``; returns per-method arrays and snapshots."""
    losses = {m: [] for m in METHODS}
    errors = {m: [] for m in METHODS}
    times = {m: 0.0 for m in METHODS}
    shots = {}
    for r, (X, y, theta) in enumerate(problems):
        for name, (solver, options) in METHODS.items():
            start = time.perf_counter()
            want = snapshots if r == snapshot_run else ()
            f, e, images = run_trajectory(solver, options, X, y, theta, k_of(theta), n_steps, want)
            times[name] += time.perf_counter() - start
            losses[name].append(f)
            errors[name].append(e)
            if images:
                shots[name] = images
    return ({m: np.array(v) for m, v in losses.items()}, {m: np.array(v) for m, v in errors.items()},
            times, shots)


def summarize(errors, levels, checkpoints):
    """Per method: median iterations to each relative-error level and median error at checkpoints."""
    rows = {}
    for name, E in errors.items():
        hits = {}
        for level in levels:
            its = [first_below(e, level) for e in E]
            reached = [i for i in its if i is not None]
            hits[level] = (float(np.median([np.inf if i is None else i for i in its])), len(reached), len(its))
        rows[name] = {"hits": hits, "at": {t: float(np.median(E[:, t])) for t in checkpoints}}
    return rows


def fmt_iters(h):
    med, reached, total = h
    med_s = "never" if not np.isfinite(med) else f"{med:.0f}"
    return f"{med_s} ({reached}/{total} runs reach it)"


def plot_bands(ax, curves, label, color):
    q1, med, q3 = np.percentile(curves, [25, 50, 75], axis=0)
    t = np.arange(curves.shape[1])
    ax.plot(t, med, color=color, label=label)
    ax.fill_between(t, q1, q3, color=color, alpha=0.2)


def figure_curves(losses, errors, title, path):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for (name, E), color in zip(errors.items(), COLORS, strict=True):
        floor = 1e-17
        plot_bands(axes[0], np.maximum(losses[name], floor), name, color)
        plot_bands(axes[1], np.maximum(E, floor), name, color)
    axes[0].set(yscale="log", xlabel="iteration", ylabel="training loss (1/2n)||y - X theta||^2", title="loss")
    axes[1].set(yscale="log", xlabel="iteration", ylabel="||theta_t - theta*|| / ||theta*||",
                title="relative error (median, quartile band)")
    axes[1].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def verdict(ok):
    return "yes" if ok else "**no**"


def header(title, args_line, elapsed, setup_lines):
    lines = [f"# {title}", "",
             "Generated by `benchmarks/reproduce_paper004.py`; do not edit by hand.", "",
             f"- command: `{args_line}`",
             f"- wall time of the whole script run that produced this file: {elapsed:.1f} s "
             f"(python {platform.python_version()}, numpy {np.__version__})"]
    return lines + [f"- {s}" for s in setup_lines] + [""]


def fig1a(out, n_runs=20, n_steps=750, d=128, n=256, k_true=16, k=64, seed=0):
    rng = np.random.RandomState(seed)
    problems = [gaussian_problem(rng, d, n, k_true) for _ in range(n_runs)]
    losses, errors, times, _ = run_experiment(problems, lambda theta: k, n_steps)
    levels = (1e-4, 1e-8)
    checkpoints = sorted({min(10, n_steps), min(100, n_steps), n_steps})
    summary = summarize(errors, levels, checkpoints)
    png = out / "paper004_fig1a.png"
    figure_curves(losses, errors, f"Paper 004 Fig. 1a: d={d}, n={n}, k*={k_true}, k={k}, {n_runs} runs", png)
    return {"summary": summary, "levels": levels, "checkpoints": checkpoints, "times": times,
            "errors": errors, "losses": losses, "png": png,
            "setup": [f"d = {d}, n = {n}, k* = {k_true}, k = {k}, X_ij ~ N(0, 1/n), theta* ~ N(0, I) on k* "
                      f"random entries, y = X theta* (noiseless), {n_steps} steps, {n_runs} runs, seed {seed}",
                      "loss (1/2n)||y - X theta||^2, Hessian H = X^T X / n (same scale as the loss: notes §5)",
                      "I-OBS: `sparse_estimators.solvers.iobs` with hard top-k; it adds a safeguard (the Newton "
                      "fraction is halved if an iteration would raise the loss) that the paper does not have",
                      f"a run stops once an iteration moves the iterate by at most {STALLED:g} relative (rounding "
                      "level); its last values are carried forward to the last step"]}


def fig1b(out, n_runs=20, n_steps=4000, seed=0, upsample=3, pad=2, snapshot_at=(5, 20)):
    rng = np.random.RandomState(seed)
    signals, idx = digit_signals(n_runs, rng, upsample, pad)
    d = signals[0].size
    n = 2 * d
    problems = []
    for img in signals:
        theta = img.ravel()
        X = rng.standard_normal((n, d)) / np.sqrt(n)
        problems.append((X, X @ theta, theta))
    k_of = lambda theta: min(d, 2 * int(np.count_nonzero(theta)))  # noqa: E731
    ks = [k_of(p[2]) for p in problems]
    snaps = tuple(sorted({min(t, n_steps) for t in snapshot_at} | {n_steps}))
    losses, errors, times, shots = run_experiment(problems, k_of, n_steps, snapshot_run=0, snapshots=snaps)
    levels = (1e-2, 1e-8)
    checkpoints = sorted({min(t, n_steps) for t in (5, 20, 100)} | {n_steps})
    summary = summarize(errors, levels, checkpoints)
    png = out / "paper004_fig1b.png"
    side = int(round(np.sqrt(d)))
    fig = plt.figure(figsize=(13, 4 + 2.2 * len(snaps)))
    grid = fig.add_gridspec(1 + len(snaps), len(METHODS) + 1, height_ratios=[3] + [1.4] * len(snaps))
    ax = fig.add_subplot(grid[0, :])
    for (name, E), color in zip(errors.items(), COLORS, strict=True):
        plot_bands(ax, np.maximum(E, 1e-17), name, color)
    ax.set(yscale="log", xlabel="iteration", ylabel="||theta_t - theta*|| / ||theta*||",
           title=f"Paper 004 Fig. 1b with digits prior: d={d}, n={n}, k=2k* (median k={int(np.median(ks))}), "
                 f"{n_runs} runs")
    ax.legend(fontsize=7)
    for row, t in enumerate(snaps, start=1):
        a = fig.add_subplot(grid[row, 0])
        a.imshow(problems[0][2].reshape(side, side), cmap="gray", vmin=0, vmax=255)
        a.set_title("signal theta*" if row == 1 else "", fontsize=8)
        a.set_ylabel(f"step {t}", fontsize=8)
        a.set_xticks([])
        a.set_yticks([])
        for col, name in enumerate(METHODS, start=1):
            a = fig.add_subplot(grid[row, col])
            a.imshow(np.clip(shots[name][t].reshape(side, side), 0, 255), cmap="gray", vmin=0, vmax=255)
            a.set_title(name.replace(", ", ",\n", 1) if row == 1 else "", fontsize=7)
            a.set_xticks([])
            a.set_yticks([])
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return {"summary": summary, "levels": levels, "checkpoints": checkpoints, "times": times,
            "errors": errors, "losses": losses, "png": png, "ks": ks,
            "setup": [f"signal: `sklearn.datasets.load_digits` images {[int(i) for i in idx[:5]]}... "
                      "(8x8, values 0..16), "
                      f"upsampled {upsample}x by nearest neighbour and padded by {pad} pixels to "
                      f"{side}x{side} = {d} pixels, rescaled to [0, 255] (the paper: MNIST, d = 784, which is "
                      "not available offline)",
                      f"n = 2d = {n}, X_ij ~ N(0, 1/n), noiseless, k = 2 k* (k* from {min(ks) // 2} to "
                      f"{max(ks) // 2}), {n_steps} steps (paper: 4000), {n_runs} runs (paper: 20), seed {seed}",
                      "images in the figure: the first run's iterates, clipped to [0, 255] as in the paper"]}


def claims_1a(res):
    s = res["summary"]
    iht_name = "k-IHT (step 1/L)"
    lvl = res["levels"][-1]
    iht_hits = s[iht_name]["hits"][lvl][0]
    rows = []
    for name in METHODS:
        if name == iht_name:
            continue
        hits = s[name]["hits"][lvl][0]
        rows.append(("Fig. 1a: top-k I-OBS converges faster than k-IHT (better rate thanks to the Newton step)",
                     f"{name}: median iterations to relative error {lvl:g} = {fmt_iters(s[name]['hits'][lvl])}, "
                     f"k-IHT: {fmt_iters(s[iht_name]['hits'][lvl])}",
                     verdict(hits < iht_hits)))
    return rows


def claims_1b(res):
    s = res["summary"]
    iht_name = "k-IHT (step 1/L)"
    rows = []
    t = res["checkpoints"][1]
    for name in METHODS:
        if name == iht_name:
            continue
        a, b = s[name]["at"][t], s[iht_name]["at"][t]
        rows.append(("Fig. 1b: top-k I-OBS recovers the image better than k-IHT for a fixed number of steps",
                     f"median relative error at step {t}: {name} {a:.2e}, k-IHT {b:.2e}", verdict(a < b)))
    lvl = res["levels"][-1]
    rows.append(("Fig. 1b: the learning curve is almost identical to the Gaussian case (Fig. 1a)",
                 "median iterations to relative error " + f"{lvl:g}: " + "; ".join(
                     f"{name}: {fmt_iters(s[name]['hits'][lvl])}" for name in METHODS),
                 "qualitative: compare with paper004_fig1a.md"))
    return rows


def detail_table(res):
    s = res["summary"]
    lines = ["| method | " + " | ".join(f"median iters to {lv:g}" for lv in res["levels"]) + " | "
             + " | ".join(f"median rel. error at step {t}" for t in res["checkpoints"]) + " | solver time (s) |",
             "|---|" + "---|" * (len(res["levels"]) + len(res["checkpoints"]) + 1)]
    for name in METHODS:
        lines.append(f"| {name} | " + " | ".join(fmt_iters(s[name]["hits"][lv]) for lv in res["levels"]) + " | "
                     + " | ".join(f"{s[name]['at'][t]:.2e}" for t in res["checkpoints"])
                     + f" | {res['times'][name]:.1f} |")
    return lines


def claims_table(rows):
    lines = ["| paper's claim | ours (measured) | holds? |", "|---|---|---|"]
    lines += [f"| {c} | {m} | {v} |" for c, m, v in rows]
    return lines


def write_report(path, title, args_line, elapsed, res, rows, notes=()):
    lines = header(title, args_line, elapsed, res["setup"])
    lines += ["## Claims", ""] + claims_table(rows) + ["", "## Details", ""] + detail_table(res)
    lines += ["", f"![{title}]({res['png'].name})", ""] + list(notes)
    path.write_text("\n".join(lines) + "\n")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run (3 runs, few steps)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps-1a", type=int, default=750)
    parser.add_argument("--steps-1b", type=int, default=4000)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.steps_1a, args.steps_1b = 3, 100, 100
    args.out.mkdir(parents=True, exist_ok=True)
    args_line = "python benchmarks/reproduce_paper004.py " + " ".join(sys.argv[1:] if argv is None else argv)
    start = time.perf_counter()
    with threadpool_limits(args.blas_threads):
        a = fig1a(args.out, n_runs=args.runs, n_steps=args.steps_1a)
        b = fig1b(args.out, n_runs=args.runs, n_steps=args.steps_1b)
    elapsed = time.perf_counter() - start
    notes_a = ["Notes:", "",
               "- With the exact Hessian and n > d, the Newton point is the least-squares solution, which is "
               "theta* on noiseless data: undamped top-k I-OBS (eq. 12) is exact after one step (notes §5).",
               "- Damping 1e-2 (SparseGPT's dampening, the package default) is what makes the iteration matter."]
    la = write_report(args.out / "paper004_fig1a.md", "Paper 004 (I-OBS), Fig. 1a: Gaussian prior",
                      args_line.strip(), elapsed, a, claims_1a(a), notes_a)
    lb = write_report(args.out / "paper004_fig1b.md", "Paper 004 (I-OBS), Fig. 1b: image prior (digits)",
                      args_line.strip(), elapsed, b, claims_1b(b),
                      [f"Steps: paper 4000, here {args.steps_1b}."])
    print("\n".join(la))
    print("\n".join(lb))
    print(f"total wall time {elapsed:.1f} s")
    return a, b


if __name__ == "__main__":
    main()
