"""Cost of one IHTRegressor iteration against the matrix-vector products it needs.

The issue's target: an iteration costs at most 1.5x the products with ``X`` it
needs. IHT needs one ``X @ w`` (predictor of the new iterate) and one
``X.T @ r`` (gradient) per iteration; with a sparse iterate the first could even
be ``X[:, S] @ w_S``.

What is measured, on a Gaussian ``n x p`` design (default 500 x 1000, k = 10,
SNR 3):

1. products counted by wrapping ``LinearDesign.matvec`` / ``rmatvec`` (monkeypatched,
   the package is not changed), split into validation / loss construction, the
   solver (its set-up, e.g. a Lipschitz constant, and its iterations; the per-
   iteration column divides by the number of iterations) and the debiasing refit
   with the splicing search (its refits and gradients);
2. wall times (best of repeats, and medians for the headline): one iteration as the
   slope of the solver's time (prepared loss) between ``max_iter=2`` and the number
   of iterations it takes to converge, and separately past convergence (``tol < 0``,
   10 -> 110 iterations: the regime of long runs such as regularized IHT's); its
   components at the converged iterate; the set-up pieces; whole fits. Each is
   compared with one bare ``X @ v`` plus ``X.T @ r`` pair on the same C-ordered array,
   and with the floor of an iteration written in numpy (fixed-step hard thresholding
   with nothing else: its Python and numpy call overhead is what bounds small problems).
   On a shared machine run it when the load is low (``uptime``): it prints the load;
3. cProfile of the iteration loop (own and cumulative time), and of whole fits.

Run: ``python benchmarks/profile_iteration.py [--n 500 --p 1000 --k 10 --threads 1]``.
"""

import argparse
import cProfile
import io
import os
import pstats
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

# measure the checkout this script lives in, whatever copy an editable install points to
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import revision  # noqa: E402

import sparse_estimators.solvers._iht as iht_module  # noqa: E402
from sparse_estimators import IHTRegressor  # noqa: E402
from sparse_estimators.losses import SquaredLoss  # noqa: E402
from sparse_estimators.losses._design import LinearDesign  # noqa: E402
from sparse_estimators.thresholding import get_operator  # noqa: E402

COUNTS = Counter()
PHASE = ["setup"]


def _wrap(name):
    original = getattr(LinearDesign, name)

    def counted(self, M, *args):
        COUNTS[(PHASE[0], name, M.shape[1] if M.ndim == 2 else 1, self.shape[1])] += 1
        return original(self, M, *args)

    counted.original = original
    return counted


def _portable(text):
    """cProfile text with file paths relative to the repository or the installed packages (no machine paths)."""
    text = text.replace(str(Path(__file__).resolve().parent.parent) + os.sep, "")
    return re.sub(r"\S*[/\\](?:site-packages|lib[/\\]python3\.\d+)[/\\]", "", text)


def make_data(n, p, k, snr, seed):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[np.round(np.linspace(0, p - 1, k)).astype(int)] = 1.0
    signal = X @ beta
    y = signal + rng.standard_normal(n) * np.sqrt(signal.var() / snr)
    return X, y


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--p", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--snr", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    X, y = make_data(args.n, args.p, args.k, args.snr, 0)

    with threadpool_limits(limits=args.threads):
        # -- 1. count products per phase ------------------------------------------------
        LinearDesign.matvec, LinearDesign.rmatvec = _wrap("matvec"), _wrap("rmatvec")
        original_solver = IHTRegressor._solver
        original_refit = SquaredLoss.refit

        def solver(loss, *a, **kw):  # products of the solver's own set-up (e.g. Lipschitz) count as iterations
            PHASE[0] = "solver (set-up + iterations)"
            return original_solver(loss, *a, **kw)

        def refit(self, *a, **kw):
            PHASE[0] = "refit + splicing"
            return original_refit(self, *a, **kw)

        IHTRegressor._solver = staticmethod(solver)
        SquaredLoss.refit = refit
        try:
            PHASE[0] = "validation"
            model = IHTRegressor(k=args.k).fit(X, y)
        finally:
            IHTRegressor._solver = staticmethod(original_solver)
            SquaredLoss.refit = original_refit
            LinearDesign.matvec = LinearDesign.matvec.original
            LinearDesign.rmatvec = LinearDesign.rmatvec.original
        n_iter = model.n_iter_
        print(f"sparse_estimators at {revision()}")
        print(f"IHTRegressor(k={args.k}) on n={args.n}, p={args.p} (SNR {args.snr}), {args.threads} BLAS thread(s): "
              f"{n_iter} iterations, support recovered: "
              f"{set(model.support_) == set(np.round(np.linspace(0, args.p - 1, args.k)).astype(int))}")
        print("\n## Products with X (LinearDesign.matvec / rmatvec)\n")
        print("| phase | product | columns of W/R | design width | count | per iteration |")
        print("|---|---|---|---|---|---|")
        for (phase, name, m, width), c in sorted(COUNTS.items()):
            per = f"{c / n_iter:.2f}" if phase.startswith("solver") else ""
            print(f"| {phase} | {name} | {m} | {width} | {c} | {per} |")
        in_solver = {nm: c for (ph, nm, _, _), c in COUNTS.items() if ph.startswith("solver")}
        it_mv, it_rmv = in_solver.get("matvec", 0), in_solver.get("rmatvec", 0)

        # -- 2. timings ---------------------------------------------------------------------
        Xc = np.ascontiguousarray(X)
        v = np.random.RandomState(1).standard_normal((args.p, 1))
        r = np.random.RandomState(2).standard_normal((args.n, 1))
        pair, pair_med = best_time(lambda: (Xc @ v, Xc.T @ r), args.repeats * 10)
        mv, _ = best_time(lambda: Xc @ v, args.repeats * 10)
        rmv, _ = best_time(lambda: Xc.T @ r, args.repeats * 10)
        v1 = v[:, 0]
        pair1, _ = best_time(lambda: (Xc @ v1, Xc.T @ r[:, 0]), args.repeats * 10)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_nodebias, fit_med = best_time(lambda: IHTRegressor(k=args.k, debias=False).fit(X, y), args.repeats)
            fit_nosplice, _ = best_time(lambda: IHTRegressor(k=args.k, splicing=False).fit(X, y), args.repeats)
            fit_full, _ = best_time(lambda: IHTRegressor(k=args.k).fit(X, y), args.repeats)

        # loop only: the solver on a prepared loss (Lipschitz cached). Per-iteration cost in the
        # normal regime: slope of the solver's time between max_iter=2 and max_iter=n_iter (it converges
        # at n_iter with the default tol); past convergence: slope between 10 and 110 iterations with
        # tol < 0 (the regime of long runs, e.g. regularized IHT's ~700 iterations)
        loss = SquaredLoss(X, y)
        loss.lipschitz()
        loss.coordinate_lipschitz()
        op = get_operator("hard")
        W0, b0 = loss.zeros()

        def loop(max_iter=None, tol=1e-4):
            kw = {} if max_iter is None else {"max_iter": max_iter}
            return iht_module.iht(loss, op, args.k, W0=W0, b0=b0, tol=tol, **kw)

        res = loop()
        reps = args.repeats * 10
        t2, t2_med = best_time(lambda: loop(2), reps)
        tn, tn_med = best_time(lambda: loop(res.n_iter), reps)
        per_iter = (tn - t2) / (res.n_iter - 2)
        per_iter_med = (tn_med - t2_med) / (res.n_iter - 2)
        short, long_ = 10, 110
        t_short, _ = best_time(lambda: loop(short, -1.0), args.repeats)
        t_long, _ = best_time(lambda: loop(long_, -1.0), args.repeats)
        per_iter_past = (t_long - t_short) / (long_ - short)
        COUNTS.clear()
        LinearDesign.matvec, LinearDesign.rmatvec = _wrap("matvec"), _wrap("rmatvec")
        PHASE[0] = "past"
        try:
            loop(short, -1.0)
            short_counts = dict(COUNTS)
            COUNTS.clear()
            loop(long_, -1.0)
        finally:
            LinearDesign.matvec = LinearDesign.matvec.original
            LinearDesign.rmatvec = LinearDesign.rmatvec.original
        past_mv = (sum(c for key, c in COUNTS.items() if key[1] == "matvec")
                   - sum(c for key, c in short_counts.items() if key[1] == "matvec")) / (long_ - short)
        past_rmv = (sum(c for key, c in COUNTS.items() if key[1] == "rmatvec")
                    - sum(c for key, c in short_counts.items() if key[1] == "rmatvec")) / (long_ - short)

        def setup():
            lo = SquaredLoss(X, y)
            lo.lipschitz()
            lo.coordinate_lipschitz()

        setup_time, _ = best_time(setup, args.repeats)
        t_init, _ = best_time(lambda: SquaredLoss(X, y), reps)
        fresh = [SquaredLoss(X, y) for _ in range(reps)]
        it_fresh = iter(fresh)
        t_lip, _ = best_time(lambda: next(it_fresh).lipschitz(), reps)
        it_fresh = iter(fresh)
        t_clip, _ = best_time(lambda: next(it_fresh).coordinate_lipschitz(), reps)
        t_refit, _ = best_time(lambda: loss.refit(res.support, res.coef, res.intercept), reps)

        # components of one iteration at the converged iterate
        from sparse_estimators.solvers._base import IterationMonitor, backtracking_step, curvature_ratio

        W, b = res.coef, res.intercept
        Z = loss.linear_predictor(W, b)
        f = loss.value_from_z(Z, W)
        gW, gb = loss.gradient_from_z(Z, W)
        eta = 1.0 / loss.coordinate_lipschitz()
        L = loss.lipschitz()
        Wn, sup = op(W - eta * gW, args.k, return_support=True)
        Zn = loss.linear_predictor(Wn, b)
        fn = loss.value_from_z(Zn, Wn)
        mon = IterationMonitor(f, W, b, tol=1e-4, keep_best=False)
        parts = [
            ("gradient_from_z (1 rmatvec + residual)", lambda: loss.gradient_from_z(Z, W)),
            ("  of which design.rmatvec", lambda: loss.design.rmatvec(Z)),
            ("backtracking_step (1 trial accepted)", lambda: backtracking_step(loss, op, args.k, W, b, f, gW, gb,
                                                                               eta, L, Z)),
            ("  of which project (top-k selection)", lambda: op(W - eta * gW, args.k, return_support=True)),
            ("  of which linear_predictor (1 matvec)", lambda: loss.linear_predictor(Wn, b)),
            ("  of which value_from_z", lambda: loss.value_from_z(Zn, Wn)),
            ("  of which curvature_ratio", lambda: curvature_ratio(loss, f, fn, Zn, W, b, Wn, b, gW, gb, eta,
                                                                           Z_start=Z)),
            ("IterationMonitor.update", lambda: mon.update(2, W, b, Wn, b, fn, sup)),
        ]
        part_times = [(name, best_time(fn_, reps)[0]) for name, fn_ in parts]

        # the floor of an iteration written in numpy: fixed-step hard thresholding with nothing
        # else (no step-size test, no stopping rule, no centering): gradient, step, top-k,
        # product with the k selected columns, residual; per iteration over 100 iterations
        y1, eta1, k_ = np.ascontiguousarray(y - y.mean()), 1.0 / loss.lipschitz(), args.k

        def bare_iht(iters=100):
            w, r = np.zeros(args.p), -y1
            for _ in range(iters):
                u = w - eta1 * (Xc.T @ r)
                idx = np.argpartition(np.abs(u), args.p - k_)[args.p - k_:]
                w = np.zeros(args.p)
                w[idx] = u[idx]
                r = Xc[:, idx] @ w[idx] - y1
            return w

        bare_iter = best_time(bare_iht, args.repeats)[0] / 100

        # the bare product count the iteration performs, priced at the bare product times
        needed = (it_mv / n_iter) * mv + (it_rmv / n_iter) * rmv
        print("\n## Timings (best of repeats)\n")
        print("| quantity | time (ms) | vs one bare X@v + X.T@r pair |")
        print("|---|---|---|")
        rows = [
            ("bare X @ v (v of shape (p, 1))", mv),
            ("bare X.T @ r (r of shape (n, 1))", rmv),
            ("bare pair X @ v + X.T @ r, 2-D (p,1)/(n,1)", pair),
            ("bare pair, 1-D vectors", pair1),
            (f"**one IHT iteration** (slope between 2 and {res.n_iter} iterations, best)", per_iter),
            ("one IHT iteration (same slope, medians)", per_iter_med),
            (f"one iteration past convergence (tol<0, slope {short}->{long_}; {past_mv:.2f} matvec + "
             f"{past_rmv:.2f} rmatvec per iteration)", per_iter_past),
            (f"products the iteration performs ({it_mv / n_iter:.2f} matvec + {it_rmv / n_iter:.2f} rmatvec), "
             "priced bare", needed),
            ("floor: a bare numpy hard-thresholding iteration (fixed step; X.T @ r, step, argpartition, "
             "product with the k selected columns, residual; nothing else)", bare_iter),
            *[(f"component: {name}", t) for name, t in part_times],
            ("SquaredLoss(X, y) (weighted means)", t_init),
            ("loss.lipschitz() (Lanczos)", t_lip),
            ("loss.coordinate_lipschitz()", t_clip),
            ("loss.refit(support) (debias)", t_refit),
            ("init + Lipschitz + coordinate Lipschitz (the fit with step_size='auto' skips Lipschitz)", setup_time),
            (f"solver run to convergence ({res.n_iter} its, prepared loss)", best_time(loop, args.repeats)[0]),
            ("whole fit, debias=False", fit_nodebias),
            ("whole fit, debias=True, splicing=False", fit_nosplice),
            ("whole fit, debias=True, splicing=True (default)", fit_full),
        ]
        for name, t in rows:
            print(f"| {name} | {1e3 * t:.3f} | {t / pair:.2f}x |")
        print(f"\none iteration / bare pair = {per_iter / pair:.2f}x best, {per_iter_med / pair_med:.2f}x median "
              f"(target <= 1.5x); past convergence {per_iter_past / pair:.2f}x; "
              f"one iteration / the products it performs = {per_iter / needed:.2f}x; the bare numpy iteration "
              f"(floor) = {bare_iter / pair:.2f}x, ours / floor = {per_iter / bare_iter:.2f}x")
        print(f"whole fit = {fit_full / pair:.0f} bare pairs for {n_iter} iterations: iterations "
              f"{100 * n_iter * per_iter / fit_full:.0f} % of it")

        # -- 3. cProfile of the loop ----------------------------------------------------------
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            loop()
        prof.disable()
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(key).print_stats(14)
            text = _portable(s.getvalue())
            start = text.find("ncalls")
            print(f"\n## cProfile of 200 solver runs to convergence ({200 * res.n_iter} iterations), sorted by {key}\n")
            print(text[start:].rstrip())

        prof = cProfile.Profile()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prof.enable()
            for _ in range(10):
                IHTRegressor(k=args.k).fit(X, y)
            prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
        text = _portable(s.getvalue())
        print("\n## cProfile of 10 whole fits (IHTRegressor.fit), sorted by tottime\n")
        print(text[text.find("ncalls"):].rstrip())


if __name__ == "__main__":
    main()
