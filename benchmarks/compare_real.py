"""Real data at exact k: our estimators against abess on the data sets bundled with scikit-learn, repeated CV.

The peer benchmarks (``compare_peers.py``, ``compare_glm.py``,
``compare_multinomial.py``) draw synthetic designs with a known support; this
one fits real designs, where no support is true and the question is which
``k`` features predict best and how fast they are found. Data sets (every one
bundled with scikit-learn, no download):

* ``diabetes``: ``load_diabetes`` (n = 442, p = 10, already standardized),
  least squares;
* ``diabetes-poly``: the same with the polynomial design of
  ``compare_glm.py::polynomial_design`` (columns, squares and pairwise
  products, standardized; p = 65, strongly correlated), least squares;
* ``breast``: ``load_breast_cancer`` (n = 569, p = 30, standardized), binary
  logistic;
* ``wine-poly``: ``load_wine`` standardized, then the polynomial design
  (n = 178, p = 104, 3 classes), multinomial;
* ``digits``: ``load_digits`` (n = 1797, the 61 non-constant pixels
  standardized, 10 classes), multinomial.

Methods, each asked for ``k`` features: ours ``IHTRegressor(k)`` and
``IOBSRegressor(k)`` (least squares) or ``IHTClassifier(k)`` and
``IOBSClassifier(k)`` (classification), default parameters; abess 0.4
``LinearRegression``, ``LogisticRegression`` or ``MultinomialRegression``
with ``support_size=[k]``, ``thread=1``, default parameters. Every fit sees
the training fold only; the folds are ``--repeats`` repetitions of a shuffled
5-fold split (stratified for classes; ``digits``: one repetition), the same
folds for every method.

Columns (per data set, ``k`` and method; means over the folds unless said):

* ``test``: the held-out score of the fitted model, from its own
  ``predict`` / ``predict_proba`` (abess's too): R^2 for least squares, minus
  the log-loss (higher is better) for classification;
* ``test - abess``: the paired difference with abess's ``test`` on the same
  fold, mean +- standard error over the folds (positive: ours predicts
  better);
* ``acc``: held-out accuracy (classification);
* ``train``: the training loss of the selected support, refitted by
  scikit-learn (an independent refit, the same for every method): the mean
  squared error of ``LinearRegression`` for least squares, the log-loss of
  ``LogisticRegression(C=1 / (n alpha))`` with ``alpha = 1e-4`` (the l2
  strength of our classifiers' loss) for classification; ``train - abess``
  its paired difference with abess's (negative: our support fits the
  training data better);
* ``better``: folds where our support's ``train`` is lower than abess's by
  more than 1e-9 of it / folds where it is higher;
* ``time``: CPU (process) time of the fit, one BLAS/OpenMP thread
  (threadpoolctl; abess ``thread=1``), median over the folds; each fit is
  the minimum of 3 runs, and the methods run in an order rotated with each
  fold (interleaved, so that load hits all alike); ``/ abess``: the median of
  the per-fold ratios to abess's time.

Like ``small_fits.py`` the script runs itself in glibc malloc's "fast" state
(``_malloc.py``), where abess's small fits are fastest.

Usage: ``python benchmarks/compare_real.py [--repeats 2] [--sets diabetes breast] [--out doc/peers/real.md]``
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench_common import revision  # noqa: E402
from _malloc import ensure_fast_malloc, malloc_state  # noqa: E402

from sparse_estimators import IHTClassifier, IHTRegressor, IOBSClassifier, IOBSRegressor  # noqa: E402

#: the classifiers' l2 strength (the training refit's ``C = 1 / (n ALPHA)``)
ALPHA = 1e-4
#: data set: the k grid
KS = {"diabetes": (3, 5, 7), "diabetes-poly": (5, 10, 15), "breast": (5, 10, 15), "wine-poly": (5, 10, 15),
      "digits": (5, 10)}


def load_sets():
    """``{name: (kind, X, y)}``, kind ``'ls'`` or ``'clf'``."""
    from compare_glm import polynomial_design
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

    def standardized(X):
        return (X - X.mean(axis=0)) / X.std(axis=0)

    Xd, yd = load_diabetes(return_X_y=True)
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xg, yg = load_digits(return_X_y=True)
    return {"diabetes": ("ls", Xd, yd),
            "diabetes-poly": ("ls", polynomial_design(Xd), yd),
            "breast": ("clf", standardized(Xb), yb),
            "wine-poly": ("clf", polynomial_design(standardized(Xw)), yw),
            "digits": ("clf", standardized(Xg[:, Xg.std(axis=0) > 0]), yg)}


def methods(kind, k, n_classes):
    """``{name: factory}``: ours and abess's, each asked for ``k`` features."""
    import abess

    if kind == "ls":
        return {"IHTRegressor": lambda: IHTRegressor(k=k), "IOBSRegressor": lambda: IOBSRegressor(k=k),
                "abess": lambda: abess.LinearRegression(support_size=[k], thread=1)}
    peer = abess.LogisticRegression if n_classes == 2 else abess.MultinomialRegression
    return {"IHTClassifier": lambda: IHTClassifier(k=k), "IOBSClassifier": lambda: IOBSClassifier(k=k),
            "abess": lambda: peer(support_size=[k], thread=1)}


def support(model, p):
    """The selected features (any non-zero coefficient of the feature)."""
    coef = np.atleast_2d(np.asarray(model.coef_))
    if coef.shape[-1] != p:  # (abess's multinomial coef_ is p x classes)
        coef = coef.T
    return np.flatnonzero(np.any(coef != 0, axis=0))


def evaluate(kind, model, S, Xt, yt, Xv, yv, classes):
    """``(test, acc, train)`` of a fitted model and its support (see the module docstring)."""
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.metrics import log_loss, r2_score

    if kind == "ls":
        refit = LinearRegression().fit(Xt[:, S], yt)
        train = float(np.mean((yt - refit.predict(Xt[:, S])) ** 2))
        return r2_score(yv, model.predict(Xv)), np.nan, train
    proba = np.asarray(model.predict_proba(Xv))
    test = -log_loss(yv, np.clip(proba, 1e-15, 1.0), labels=classes)
    acc = float(np.mean(classes[proba.argmax(axis=1)] == yv))
    refit = LogisticRegression(C=1.0 / (Xt.shape[0] * ALPHA), max_iter=10000).fit(Xt[:, S], yt)
    return test, acc, log_loss(yt, refit.predict_proba(Xt[:, S]), labels=classes)


def cpu_fit(factory, X, y, runs=3):
    """The fitted model of the last run and the least CPU time of ``runs`` fits."""
    best = np.inf
    for _ in range(runs):
        model = factory()
        t = time.process_time()
        model.fit(X, y)
        best = min(best, time.process_time() - t)
    return model, best


def run_set(name, kind, X, y, repeats):
    """Rows ``(k, method, test list, acc list, train list, time list)`` of one data set."""
    from sklearn.model_selection import KFold, StratifiedKFold

    classes = np.unique(y)
    splitter = KFold if kind == "ls" else StratifiedKFold
    reps = 1 if name == "digits" else repeats
    folds = [split for rep in range(reps)
             for split in splitter(5, shuffle=True, random_state=rep).split(X, y)]
    rows = []
    for k in KS[name]:
        fits = methods(kind, k, classes.size)
        names = list(fits)
        res = {m: {"test": [], "acc": [], "train": [], "time": []} for m in names}
        for i, (tr, te) in enumerate(folds):
            Xt, yt, Xv, yv = X[tr], y[tr], X[te], y[te]
            for m in names[i % len(names):] + names[:i % len(names)]:  # (order rotated per fold)
                model, t = cpu_fit(fits[m], Xt, yt)
                test, acc, train = evaluate(kind, model, support(model, X.shape[1]), Xt, yt, Xv, yv, classes)
                for key, v in (("test", test), ("acc", acc), ("train", train), ("time", t)):
                    res[m][key].append(v)
        for m in names:
            rows.append((k, m, res[m], res["abess"]))
        print(f"  {name} k={k} done", file=sys.stderr, flush=True)
    return rows, len(folds)


def table(name, kind, X, y, rows, n_folds):
    """The Markdown lines of one data set."""
    score = "R^2" if kind == "ls" else "-log-loss"
    train = "MSE" if kind == "ls" else "log-loss"
    lines = [f"### {name} (n = {X.shape[0]}, p = {X.shape[1]}"
             + (f", {np.unique(y).size} classes" if kind == "clf" else "") + f"; {n_folds} folds)", "",
             f"| k | method | test ({score}) | test - abess | acc | train ({train}) | train - abess | better | "
             "time (ms) | / abess |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k, m, r, a in rows:
        test, at = np.array(r["test"]), np.array(a["test"])
        tr, atr = np.array(r["train"]), np.array(a["train"])
        t, ta = np.array(r["time"]), np.array(a["time"])
        se = lambda d: d.std(ddof=1) / np.sqrt(d.size)  # noqa: E731
        if m == "abess":
            dtest = dtrain = better = ratio = ""
        else:
            dtest = f"{np.mean(test - at):+.4f} +- {se(test - at):.4f}"
            dtrain = f"{np.mean(tr - atr):+.4g} +- {se(tr - atr):.2g}"
            tol = 1e-9 * np.abs(atr)
            better = f"{int(np.sum(tr < atr - tol))} / {int(np.sum(tr > atr + tol))}"
            ratio = f"{np.median(t / ta):.2f}"
        acc = "" if kind == "ls" else f"{np.mean(r['acc']):.4f}"
        lines.append(f"| {k} | {m} | {np.mean(test):.4f} | {dtest} | {acc} | {np.mean(tr):.5g} | {dtrain} | {better} | "
                     f"{1000 * np.median(t):.2f} | {ratio} |")
    return lines + [""]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="repetitions of the 5-fold split (digits: 1)")
    parser.add_argument("--sets", nargs="+", default=list(KS), choices=list(KS))
    parser.add_argument("--out", help="also write the page (with its header) to this Markdown file")
    args = parser.parse_args(argv)
    ensure_fast_malloc(__file__, sys.argv[1:] if argv is None else list(argv))
    warnings.simplefilter("ignore")
    load = os.getloadavg()
    started = time.time()
    sets = load_sets()
    body = []
    with threadpool_limits(1):
        for name in args.sets:
            kind, X, y = sets[name]
            rows, n_folds = run_set(name, kind, X, y, args.repeats)
            lines = table(name, kind, X, y, rows, n_folds)
            print("\n".join(lines), flush=True)
            body += lines
    if args.out:
        import abess
        import sklearn

        command = "python benchmarks/compare_real.py " + " ".join(sys.argv[1:] if argv is None else argv)
        header = [
            "# Real data at exact k against abess",
            "",
            f"Generated by `{command.strip()}` (git {revision()}; {time.time() - started:.0f} s), "
            f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, abess {abess.__version__}; "
            f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start (compare the ratios, measured on "
            f"the same folds one fit after the other, not the times); malloc state: {malloc_state()}. "
            "One BLAS/OpenMP thread (threadpoolctl), abess `thread=1`.",
            "",
            "Data sets, methods and columns are defined in the script's docstring. In short: `test` is the held-out "
            "score of each model's own predictions (R^2, or minus the log-loss), `test - abess` its paired "
            "difference with abess's (mean +- standard error over the folds), `train` the training loss of the "
            "selected support refitted by scikit-learn, `better` the folds where our support's training loss is "
            "lower / higher than abess's, `time` the median CPU time of a fit.",
            "",
        ]
        with open(args.out, "w") as fh:
            fh.write("\n".join(header + body))


if __name__ == "__main__":
    main()
