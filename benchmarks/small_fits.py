"""Per-fit overhead of small fits: our time over abess's, measured interleaved in one process.

Settings (one BLAS/OpenMP thread): plain least squares and logistic at
n = 100, p = 1000, k = 10; n = 500, p = 100, k = 5; n = 400, p = 400, k = 20
(AR(1) designs of ``compare_peers.py``, rho 0.35, SNR 3), group fits at
n = 200, p = 500, g = 5 (designs of ``compare_groups.py``, rho_w 0.3 / 0.7),
and ``loss='poisson'`` / ``loss='gamma'`` at n = 200, p = 100, k = 5 against
abess's ``PoissonRegression`` / ``GammaRegression`` (``compare_glm.py``'s
designs: data sets cycle through rho 0 and 0.7 with weak and strong signal;
Poisson, Gamma with the log link and with abess's inverse link), and at
``compare_glm.py``'s larger size n = 500, p = 1000, k = 10 (Poisson, Gamma
log link), where the per-fit overhead matters less.
For each data set the fits of ours and abess's alternate (``--rounds`` rounds,
so that a load change on a shared machine hits both); the figure per setting is
the median over data sets of (our median time / abess's median time), in CPU
(process) time, which a loaded machine disturbs less, and in wall time.

abess's time on these small problems depends on glibc malloc's state, ours
hardly: with the default thresholds, memory abess frees goes back to the
system and each fit pays page faults for it again; once a process has freed
large arrays (as ``compare_peers.py`` does before its small settings), glibc
has raised its dynamic mmap and trim thresholds and abess is much faster
(n = 100, p = 1000: 4.4 ms against 6.2 ms in one run). So that these figures compare
with ``compare_peers.py``'s, the script fixes that state itself: unless
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_TOP_PAD_``
are all set, it runs itself again with them set to the values below (the
"fast-malloc" state); ``--malloc-default`` keeps the environment as it is
(glibc's defaults in a fresh process). The first line says which state ran.

Run: ``python benchmarks/small_fits.py [--datasets 5 --rounds 15]``;
``--profile SETTING`` prints a cProfile of our fits on that setting instead
(``SETTING`` as printed in the first column, e.g. ``ls-400x400``).
"""

import argparse
import cProfile
import pstats
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _malloc import ensure_fast_malloc, malloc_state  # noqa: E402
from _peer_designs import simulate  # noqa: E402
from compare_glm import simulate as simulate_glm  # noqa: E402
from compare_groups import simulate_groups  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor  # noqa: E402

# name: (task, n, p, k, grouped)
SETTINGS = {
    "ls-100x1000": ("regression", 100, 1000, 10, False),
    "ls-500x100": ("regression", 500, 100, 5, False),
    "ls-400x400": ("regression", 400, 400, 20, False),
    "log-100x1000": ("classification", 100, 1000, 10, False),
    "log-500x100": ("classification", 500, 100, 5, False),
    "log-400x400": ("classification", 400, 400, 20, False),
    "grp-ls-200x500": ("regression", 200, 500, 5, True),
    "grp-log-200x500": ("classification", 200, 500, 5, True),
    "pois-200x100": ("poisson", 200, 100, 5, False),
    "gam-log-200x100": ("gamma-log", 200, 100, 5, False),
    "gam-inv-200x100": ("gamma-inverse", 200, 100, 5, False),
    "pois-500x1000": ("poisson", 500, 1000, 10, False),
    "gam-log-500x1000": ("gamma-log", 500, 1000, 10, False),
}
#: the GLM settings' designs, cycled through by the data sets' seeds: (rho, signal)
GLM_DESIGNS = ((0.0, "weak"), (0.0, "strong"), (0.7, "weak"), (0.7, "strong"))


def data(name, seed):
    task, n, p, k, grouped = SETTINGS[name]
    if task not in ("regression", "classification"):
        rho, signal = GLM_DESIGNS[seed % len(GLM_DESIGNS)]
        X, y, *_ = simulate_glm(task, n, p, k, rho, signal, 1, seed)
        return X, y, None
    if grouped:
        rho_w, rho_b = ((0.3, 0.0), (0.7, 0.5))[seed % 2]
        X, y, _, _, labels, _ = simulate_groups(task, n, p, k, rho_w, rho_b, 1.5, 10, seed)
        return X, y, labels
    X, y, _, _, _ = simulate(task, n, p, k, 0.35, 1 + seed % 2, 3.0, 10, seed)
    return X, y, None


def factories(name, labels):
    import abess.linear
    task, _, _, k, grouped = SETTINGS[name]
    if task not in ("regression", "classification"):
        loss = "poisson" if task == "poisson" else "gamma"
        peer = abess.linear.PoissonRegression if task == "poisson" else abess.linear.GammaRegression
        return (lambda: IHTRegressor(k=k, loss=loss)), (lambda: peer(support_size=[k], thread=1))
    ours = IHTRegressor if task == "regression" else IHTClassifier
    peer = abess.linear.LinearRegression if task == "regression" else abess.linear.LogisticRegression
    extra = {"groups": labels} if grouped else {}
    peer_extra = {"group": labels} if grouped else {}
    return (lambda: ours(k=k, **extra)), (lambda: peer(support_size=[k], thread=1, **peer_extra))


#: each one's statistic over the rounds of a data set (--stat)
STAT = np.median


def timed(factory, X, y):
    """``(wall, CPU)`` seconds of one fit."""
    model = factory()
    c0, t0 = time.process_time(), time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - t0, time.process_time() - c0


def measure(name, datasets, rounds):
    """Medians over data sets of our and abess's median times (wall, CPU), and of the ratios (CPU, wall)."""
    ours_t, peer_t = [], []
    for seed in range(datasets):
        X, y, labels = data(name, seed)
        ours, peer = factories(name, labels)
        timed(ours, X, y), timed(peer, X, y)  # warm-up
        a, b = [], []
        for _ in range(rounds):
            a.append(timed(ours, X, y))
            b.append(timed(peer, X, y))
        ours_t.append(STAT(a, axis=0))
        peer_t.append(STAT(b, axis=0))
    ours_t, peer_t = np.array(ours_t), np.array(peer_t)
    ratios = ours_t / peer_t
    return np.median(ours_t, axis=0), np.median(peer_t, axis=0), np.median(ratios, axis=0), ratios.max(axis=0)


def profile(name, datasets, rounds, sort):
    prof = cProfile.Profile()
    for seed in range(datasets):
        X, y, labels = data(name, seed)
        ours, _ = factories(name, labels)
        timed(ours, X, y)
        prof.enable()
        for _ in range(rounds):
            timed(ours, X, y)
        prof.disable()
    pstats.Stats(prof).sort_stats(sort).print_stats(45)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--profile", choices=list(SETTINGS))
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--stat", choices=("median", "min"), default="median",
                        help="each one's time per data set: the median or the minimum over the rounds")
    parser.add_argument("--malloc-default", action="store_true",
                        help="keep the environment's malloc settings (default: re-run in the fast-malloc state)")
    args = parser.parse_args(argv)
    if not args.malloc_default:
        ensure_fast_malloc(__file__, sys.argv[1:] if argv is None else list(argv))
    global STAT
    STAT = np.min if args.stat == "min" else np.median
    warnings.simplefilter("ignore")
    with open("/proc/loadavg") if Path("/proc/loadavg").exists() else open(__file__) as fh:
        load = fh.readline().split()[:3] if fh.name == "/proc/loadavg" else "?"
    with threadpool_limits(1):
        if args.profile:
            print(f"malloc state: {malloc_state()}")
            profile(args.profile, args.datasets, args.rounds, args.sort)
            return
        print(f"load average {' '.join(load)}; one thread; {args.datasets} data sets x {args.rounds} rounds; "
              f"malloc state: {malloc_state()}")
        print(f"times: medians over data sets of each one's {args.stat} over the rounds (ms); ratios: ours / abess per "
              "data set, median and worst over data sets; CPU time (process) and wall time")
        print(f"{'setting':18s} {'ours cpu':>9s} {'abess cpu':>9s} {'cpu ratio':>10s} {'worst':>6s} "
              f"{'ours wall':>10s} {'abess wall':>10s} {'wall ratio':>10s} {'worst':>6s}")
        for name in args.settings:
            t_ours, t_peer, ratio, worst = measure(name, args.datasets, args.rounds)
            print(f"{name:18s} {1e3 * t_ours[1]:9.2f} {1e3 * t_peer[1]:9.2f} {ratio[1]:10.2f} {worst[1]:6.2f} "
                  f"{1e3 * t_ours[0]:10.2f} {1e3 * t_peer[0]:10.2f} {ratio[0]:10.2f} {worst[0]:6.2f}", flush=True)


if __name__ == "__main__":
    main()
