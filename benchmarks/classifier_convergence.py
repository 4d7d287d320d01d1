"""Iterations, time and fit quality of the classifiers on standardized real data sets (digits, wine).

For ``IHTClassifier``, ``RegularizedIHTClassifier`` (k = 3, 10, 20) and
``ReducedRankClassifier`` (rank = 1, 2, 3, 5), at their defaults otherwise,
on ``load_digits`` and ``load_wine`` standardized (``StandardScaler`` fitted
on the training part of a fixed stratified 70/30 split): ``n_iter_``, the
fit's wall time (run it with ``OMP_NUM_THREADS=1``), the training log-loss,
the training objective (the log-loss plus ``alpha/2 ||coef_||^2``, what the
package's classifiers minimise), the held-out accuracy and whether a
``ConvergenceWarning`` was raised.
A full (unconstrained) scikit-learn ``LogisticRegression`` is the reference.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/classifier_convergence.py [--repeats 3] [--data digits wine]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sparse_estimators import IHTClassifier, ReducedRankClassifier, RegularizedIHTClassifier  # noqa: E402

DATA = {"digits": load_digits, "wine": load_wine, "breast_cancer": load_breast_cancer}


def dataset(name):
    """The standardized fixed split: ``X_train, X_test, y_train, y_test``."""
    X, y = DATA[name](return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def estimators(n_classes):
    """``(label, factory)`` pairs: the sparse classifiers at k = 3, 10, 20, the rank ones at 1, 2, 3, 5."""
    out = [("LogisticRegression (full)", lambda: LogisticRegression(max_iter=1000))]
    for k in (3, 10, 20):
        out.append((f"IHTClassifier k={k}", lambda k=k: IHTClassifier(k=k)))
    for k in (3, 10, 20):
        out.append((f"RegularizedIHTClassifier k={k}", lambda k=k: RegularizedIHTClassifier(k=k)))
    for rank in (1, 2, 3, 5):
        if rank < n_classes:
            out.append((f"ReducedRankClassifier rank={rank}", lambda r=rank: ReducedRankClassifier(rank=r)))
    for rank in (1, 2, 3, 5):  # (plain IHT, the default before the momentum)
        if rank < n_classes:
            out.append((f"ReducedRankClassifier iht rank={rank}",
                        lambda r=rank: ReducedRankClassifier(rank=r, solver="iht")))
    return out


def measure(factory, X, y, X_test, y_test, repeats):
    """Fit ``repeats`` times (the fastest time kept); returns the row's figures."""
    times = []
    for _ in range(repeats):
        model = factory()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            model.fit(X, y)
            times.append(time.perf_counter() - start)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    n_iter = int(np.max(np.atleast_1d(model.n_iter_)))
    train_loss = log_loss(y, model.predict_proba(X), labels=model.classes_)
    alpha = getattr(model, "alpha", None)  # (scikit-learn's LogisticRegression has C: no objective of ours)
    objective = train_loss + 0.5 * alpha * float(np.sum(model.coef_ ** 2)) if alpha is not None else float("nan")
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    return n_iter, min(times), train_loss, objective, accuracy, warned


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", default=["digits", "wine"], choices=sorted(DATA))
    parser.add_argument("--repeats", type=int, default=3, help="fits per row (the fastest time is kept)")
    args = parser.parse_args(argv)
    for name in args.data:
        X, X_test, y, y_test = dataset(name)
        print(f"\n{name}: {X.shape[0]} training rows, {X_test.shape[0]} held out, {X.shape[1]} features, "
              f"{np.unique(y).size} classes")
        print(f"{'estimator':34s} {'n_iter_':>7s} {'time (s)':>9s} {'train log-loss':>15s} {'objective':>10s} "
              f"{'test acc.':>9s} {'ConvergenceWarning':>18s}")
        for label, factory in estimators(np.unique(y).size):
            n_iter, seconds, loss, objective, accuracy, warned = measure(factory, X, y, X_test, y_test, args.repeats)
            print(f"{label:34s} {n_iter:7d} {seconds:9.3f} {loss:15.5f} {objective:10.5f} {accuracy:9.4f} "
                  f"{'yes' if warned else 'no':>18s}", flush=True)


if __name__ == "__main__":
    main()
