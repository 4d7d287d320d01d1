"""Why the splicing search ends above abess's loss on real designs: the exchanges missed, the rule that refused them.

For bundled real data sets (``compare_real.py``'s: diabetes with the polynomial
design of ``compare_glm.py``, breast cancer, wine with the polynomial design,
digits) and ``k`` in ``--ks``, on the full data and on the training folds of
one 5-fold split, the estimator (``IHTRegressor`` or ``IHTClassifier``, default
parameters) is fitted with its splicing searches instrumented, and abess 0.4
(``support_size=[k]``, ``thread=1``) beside it. Printed per fit, every loss
being the estimator's own loss (least squares: half the mean squared residual;
classifiers: the mean log-loss plus their ``alpha=1e-4`` l2 term) refitted
exactly on the support:

* ``f_ours``, ``f_abess``: the loss on our final support and on abess's;
  ``d``: the number of features abess's support has that ours has not;
* ``direct``: the decrease of the one exchange of size ``d`` from our support
  to abess's, in the gates' unit ``u = m log(p) s / N`` (``s`` the loss's
  noise scale at our fit, ``m`` the free coefficients per feature; the
  regressors' exchange gate is ``0.25 c u``, their switch gate ``0.1 d u``
  above 3 observations per ``k log(p - k)``);
* ``best1``: the largest decrease of a single exchange from our support (every
  one refitted), in ``u``, with the rank of its removed feature among our
  selected ones (least useful first: a round exchanges only rank 0 alone) and
  of its added feature among the others by marginal gain (a round adds only
  rank 0 alone; 0-based);
* ``descent``: exact best-improvement descent by single exchanges from our
  support (each refitted; any decrease taken): the steps and the loss reached,
  in ``u`` below ours;
* ``first``: the first search's (from the solver's support) result and the
  decreases its last round measured for its exchange sizes, in ``u``, against
  its gate (regressors ``0.25 c``; classifiers gate 0 and the added
  features' significance test, ``add_gate``);
* ``second``: the second search's (from abess's start: abess's rules for the
  regressors, threshold ``tau`` given in ``u``; the first search's rules for
  the classifiers) loss, in ``u`` below the first's, and whether the switch
  took it.

``--time`` also profiles the regressor on diabetes-poly (cProfile, top
functions by own time) and times its parts.

Usage: ``OMP_NUM_THREADS=1 python benchmarks/real_diagnosis.py [--ks 5 10 15] [--sets diabetes-poly breast]``
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sparse_estimators import IHTClassifier, IHTRegressor  # noqa: E402
from sparse_estimators.linear_model import _base as _lm_base  # noqa: E402
from sparse_estimators.solvers import _splice  # noqa: E402


def load_sets():
    """``{name: (kind, X, y)}``: the real designs of ``compare_real.py``."""
    from compare_glm import polynomial_design
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

    Xd, yd = load_diabetes(return_X_y=True)
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xg, yg = load_digits(return_X_y=True)
    Xg = Xg[:, Xg.std(axis=0) > 0]
    return {"diabetes-poly": ("ls", polynomial_design(Xd), yd),
            "breast": ("clf", (Xb - Xb.mean(0)) / Xb.std(0), yb),
            "wine-poly": ("clf", polynomial_design((Xw - Xw.mean(0)) / Xw.std(0)), yw),
            "digits": ("clf", (Xg - Xg.mean(0)) / Xg.std(0), yg)}


class Recorder:
    """Wraps ``splice`` and its two searches: the loss, the searches' results and their last rounds."""

    def __init__(self):
        self.calls = []
        self._splice = _lm_base.splice
        self._exchange = _splice._exchange
        _splice._abess_functions()
        self._abess = _splice._ABESS

    def __enter__(self):
        rec = self

        def splice(loss, k, W, b, **kw):
            rec.calls.append({"loss": loss, "k": k, "kw": kw, "exchange": [], "important": None})
            out = rec._splice(loss, k, W, b, **kw)
            rec.calls[-1]["result"] = out
            return out

        def exchange(*args, **kw):
            out = rec._exchange(*args, **kw)
            rec.calls[-1]["exchange"].append(out)
            if out[0] is not None:  # (splice drops the start's value from the kept result's objective)
                out[0].final_value, out[0].exchanges = out[0].objective[-1], out[0].n_iter
            return out

        stays, threshold, important = self._abess

        def important_search(*args, **kw):
            out = important(*args, **kw)
            rec.calls[-1]["important"] = out
            out.final_value, out.exchanges = out.objective[-1], out.n_iter
            return out

        _lm_base.splice = splice
        _splice._exchange = exchange
        _splice._ABESS = (stays, threshold, important_search)
        return self

    def __exit__(self, *exc):
        _lm_base.splice = self._splice
        _splice._exchange = self._exchange
        _splice._ABESS = self._abess


def refit_value(loss, support):
    """The loss refitted exactly on ``support``: ``(value, W, b)``."""
    W0, b0 = loss.zeros()
    W, b = loss.refit(np.sort(np.asarray(support)), W0, loss.initial_intercept())
    return loss.value(W, b), W, b


def abess_support(kind, X, y, k):
    from abess import LinearRegression, LogisticRegression, MultinomialRegression

    if kind == "ls":
        m = LinearRegression(support_size=[k], thread=1).fit(X, y)
    elif np.unique(y).size == 2:
        m = LogisticRegression(support_size=[k], thread=1).fit(X, y)
    else:
        m = MultinomialRegression(support_size=[k], thread=1).fit(X, y)
        return np.flatnonzero(np.any(m.coef_ != 0, axis=1))
    return np.flatnonzero(np.ravel(m.coef_))


def single_exchanges(loss, S, f):
    """Every single exchange from ``S``: ``(decrease, out, in)`` sorted, largest decrease first."""
    p = loss.n_features
    rest = np.setdiff1d(np.arange(p), S)
    out = []
    for j in S:
        for i in rest:
            fc = refit_value(loss, np.union1d(np.setdiff1d(S, [j]), [i]))[0]
            out.append((f - fc, int(j), int(i)))
    out.sort(reverse=True)
    return out


def descent(loss, S, f, max_steps=10):
    """Best-improvement descent by exact single exchanges (any decrease): ``(steps, value)``."""
    steps = 0
    while steps < max_steps:
        dec, j, i = single_exchanges(loss, S, f)[0]
        if not dec > 1e-12 * abs(f):
            break
        S = np.union1d(np.setdiff1d(S, [j]), [i])
        f -= dec
        steps += 1
    return steps, f, S


def diagnose(name, kind, X, y, k, label, descend=True):
    Est = IHTRegressor if kind == "ls" else IHTClassifier
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Recorder() as rec:
            est = Est(k=k).fit(X, y)
        A = abess_support(kind, X, y, k)
    call = rec.calls[-1]
    loss = call["loss"]
    S = np.sort(est.support_) if hasattr(est, "support_") else np.flatnonzero(np.any(np.atleast_2d(est.coef_), 0))
    f_ours, W, b = refit_value(loss, S)
    f_ab = refit_value(loss, A)[0]
    unit = loss.coefficients_per_feature * np.log(loss.n_features) / loss.n_observations * loss.noise_scale(f_ours, k)
    d = len(set(A.tolist()) - set(S.tolist()))
    line = [f"{name:13s} k={k:2d} {label:5s} f_ours={f_ours:.6g} f_abess={f_ab:.6g} ({(f_ours - f_ab) / unit:+.3f} u)"
            f" d={d}"]
    if d:
        line.append(f"direct={(f_ours - f_ab) / unit:+.3f}u")
    # ranks of a round at S (as _ranked)
    h = loss.coordinate_curvatures()
    usable = h > loss.alpha
    Z = loss.linear_predictor(W, b)
    kept, forward = _splice._ranked(loss, S, W, Z, h, usable)
    order = np.argsort(-forward, kind="stable")
    singles = single_exchanges(loss, S, f_ours)
    dec, j, i = singles[0]
    n_pass = sum(1 for s in singles if s[0] > 0.25 * unit)
    line.append(f"best1={dec / unit:+.3f}u (out rank {int(np.flatnonzero(kept == j)[0])}, in rank "
                f"{int(np.flatnonzero(order == i)[0])}; {sum(1 for s in singles if s[0] > 0)} exchanges lower, "
                f"{n_pass} by > 0.25u)")
    if descend:
        steps, f_d, S_d = descent(loss, S, f_ours)
        line.append(f"descent: {steps} steps to {(f_ours - f_d) / unit:+.3f}u below ours "
                    f"({(f_ab - f_d) / unit:+.3f}u below abess's)")
    first = call["exchange"][0]
    res, _, last = first
    if last is not None:
        _, adds, decreases, screened = last
        dec_txt = " ".join(f"c={c}:{v / unit:+.3f}" for c, v in sorted(decreases.items()))
        scr_txt = " ".join(f"c={c}:screened" for c in sorted(screened))
        line.append(f"first: {res.exchanges} exch; last round {dec_txt} {scr_txt}".rstrip())
    else:
        line.append(f"first: {res.exchanges} exch (stopped by max_rounds or a known support)")
    other = call["important"] if call["important"] is not None else (
        call["exchange"][1][0] if len(call["exchange"]) > 1 else None)
    if other is not None:
        f1, f2 = res.final_value, other.final_value
        diff = len(set(other.support.tolist()) - set(res.support.tolist()))
        took = bool(np.array_equal(np.sort(call["result"].support), np.sort(other.support)))
        same = np.array_equal(np.sort(other.support), np.sort(A))
        txt = f"second: {other.exchanges} exch, {(f1 - f2) / unit:+.3f}u below first, d={diff}, taken={took}"
        if call["important"] is not None:
            from sparse_estimators.solvers._splice_abess import _abess_threshold
            txt += f", tau={_abess_threshold(loss, k) / unit:.3f}u"
        line.append(txt + f", = abess's: {same}")
    else:
        line.append("second: not run")
    print("\n    ".join(line), flush=True)
    return {"gap": (f_ours - f_ab) / unit, "best1": dec / unit, "d": d}


def profile_diabetes(X, y, k=10, repeats=200):
    import cProfile
    import pstats

    est = IHTRegressor(k=k)
    est.fit(X, y)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(repeats):
        est.fit(X, y)
    pr.disable()
    st = pstats.Stats(pr)
    st.sort_stats("tottime").print_stats(18)
    st.sort_stats("cumulative").print_stats(30)


def time_parts(X, y, ks=(5, 10, 15), repeats=30):
    """CPU ms of our fit, its solver alone (``splicing=False``), and abess, medians; the searches' exchanges."""
    from abess import LinearRegression

    def cpu(f):
        ts = []
        for _ in range(repeats):
            t = time.process_time()
            f()
            ts.append(time.process_time() - t)
        return 1000 * np.median(ts)

    for k in ks:
        ours = cpu(lambda k=k: IHTRegressor(k=k).fit(X, y))
        solver = cpu(lambda k=k: IHTRegressor(k=k, splicing=False).fit(X, y))
        ab = cpu(lambda k=k: LinearRegression(support_size=[k], thread=1).fit(X, y))
        with Recorder() as rec:
            IHTRegressor(k=k).fit(X, y)
        c = rec.calls[-1]
        first = c["exchange"][0][0]
        imp = c["important"]
        print(f"k={k}: ours {ours:.2f} ms, solver alone {solver:.2f} ms, abess {ab:.2f} ms; first search "
              f"{first.n_iter} exchanges, second {'skipped' if imp is None else str(imp.n_iter) + ' exchanges'}",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", type=int, nargs="+", default=[5, 10, 15])
    ap.add_argument("--sets", nargs="+", default=["diabetes-poly", "breast", "wine-poly", "digits"])
    ap.add_argument("--folds", type=int, default=5, help="training folds diagnosed (and the full data)")
    ap.add_argument("--time", action="store_true")
    args = ap.parse_args()
    from sklearn.model_selection import KFold, StratifiedKFold

    sets = load_sets()
    if args.time:
        X, y = sets["diabetes-poly"][1:]
        time_parts(X, y)
        profile_diabetes(X, y)
        return
    for name in args.sets:
        kind, X, y = sets[name]
        for k in args.ks:
            diagnose(name, kind, X, y, k, "full", descend=name != "digits")
            cv = (KFold if kind == "ls" else StratifiedKFold)(5, shuffle=True, random_state=0)
            for f, (tr, _) in enumerate(cv.split(X, y)):
                if f >= args.folds:
                    break
                diagnose(name, kind, X[tr], y[tr], k, f"fold{f}", descend=name != "digits")


if __name__ == "__main__":
    main()
