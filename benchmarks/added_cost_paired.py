"""The classifiers' significance test of an added feature: the quadratic estimate alone, or raised to the decrease.

The classifiers' splicing accepts an exchange only if removing any added
feature would raise the loss by more than ``add_gate`` units (splice's
``add_gate``), estimated by ``w_j^T H_jj w_j / 2`` at the candidate's fit. For a
single exchange the exact increase is at least the exchange's decrease (the
refit without the added feature lies on ``k - 1`` of the start's features);
``solvers/_splice.py::_added_cost`` raises the estimate to it. This script
fits ``IHTClassifier(k)`` both ways ("before": the estimate alone, by
replacing ``_added_cost``) on the same data and prints per design the mean
support F1, the held-out log-loss, their paired differences (after minus
before, mean +- standard error over the data sets), the data sets whose
support changed and the ratio of the CPU times (medians):

* ``logistic n x p``: ``compare_peers.py``'s classification designs
  (``_peer_designs.simulate``; rho 0, 0.35, 0.7, beta types 1 and 2, SNR 0.5,
  1, 3, 6; ``--repeats`` data sets per setting, seeds after the peer
  table's), 1000 test rows;
* ``multinomial m x n x p``: ``compare_multinomial.py``'s softmax designs
  (AR(1) 0.35, ``k`` true features, linear predictors of sd 1.5), 1000 test
  rows from the same model, ``8 --repeats`` data sets;
* ``--real``: ``compare_real.py``'s classification data sets and folds.

Usage: ``OMP_NUM_THREADS=1 python benchmarks/added_cost_paired.py [--repeats 5] [--real]``
"""

import argparse
import itertools
import os
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peer_designs import simulate  # noqa: E402
from compare_multinomial import simulate as simulate_multinomial  # noqa: E402

from sparse_estimators import IHTClassifier  # noqa: E402
from sparse_estimators.solvers import _splice  # noqa: E402

AFTER = _splice._added_cost


def before(loss, added, W, Z, decrease):
    """The quadratic estimate alone (the rule before ``_added_cost``)."""
    return _splice._least_cost(loss, added, W, Z)


def fit_both(X, y, Xt, yt, k, truth):
    """``{rule: (f1, held-out log-loss, support bytes, cpu)}``."""
    from sklearn.metrics import log_loss

    out = {}
    for rule, fn in (("before", before), ("after", AFTER)):
        _splice._added_cost = fn
        try:
            t = time.process_time()
            m = IHTClassifier(k=k).fit(X, y)
            t = time.process_time() - t
        finally:
            _splice._added_cost = AFTER
        S = np.sort(m.support_)
        f1 = np.nan if truth is None else 2 * len(set(S.tolist()) & set(truth.tolist())) / (S.size + truth.size)
        out[rule] = (f1, log_loss(yt, m.predict_proba(Xt), labels=m.classes_), S.tobytes(), t)
    return out


def report(name, rows):
    b = np.array([[r["before"][0], r["before"][1], r["before"][3]] for r in rows])
    a = np.array([[r["after"][0], r["after"][1], r["after"][3]] for r in rows])
    changed = sum(r["before"][2] != r["after"][2] for r in rows)
    d = a - b
    se = d.std(axis=0, ddof=1) / np.sqrt(len(rows))
    print(f"| {name} | {len(rows)} | {b[:, 0].mean():.4f} | {d[:, 0].mean():+.4f} +- {se[0]:.4f} | "
          f"{b[:, 1].mean():.4f} | {d[:, 1].mean():+.5f} +- {se[1]:.5f} | {changed} | "
          f"{np.median(a[:, 2]) / np.median(b[:, 2]):.2f} |",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--first", type=int, default=3000)
    ap.add_argument("--real", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("| design | data sets | F1 before | F1 after - before | test log-loss before | after - before | "
          "supports changed | time after / before |")
    print("|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        if args.real:
            from compare_real import KS, load_sets
            from sklearn.model_selection import StratifiedKFold

            sets = load_sets()
            for name in ("breast", "wine-poly", "digits"):
                _, X, y = sets[name]
                folds = [s for rep in range(1 if name == "digits" else 2)
                         for s in StratifiedKFold(5, shuffle=True, random_state=rep).split(X, y)]
                for k in KS[name]:
                    report(f"{name} k={k}", [fit_both(X[tr], y[tr], X[te], y[te], k, None) for tr, te in folds])
        for n, p, s in ((500, 100, 5), (500, 1000, 10)):
            rows = []
            for rho, beta_type, snr in itertools.product((0.0, 0.35, 0.7), (1, 2), (0.5, 1.0, 3.0, 6.0)):
                for rep in range(args.first, args.first + args.repeats):
                    seed = int(np.random.SeedSequence([n, p, s, int(rho * 100), beta_type, int(snr * 10), rep,
                                                       False]).generate_state(1)[0])
                    X, y, Xt, yt, beta = simulate("classification", n, p, s, rho, beta_type, snr, 1000, seed)
                    rows.append(fit_both(X, y, Xt, yt, s, np.flatnonzero(beta)))
            report(f"logistic {n} x {p}, s = {s}", rows)
        for m, n, p, k in ((3, 500, 100, 5), (10, 500, 100, 5), (3, 300, 300, 10)):
            rows = []
            for rep in range(8 * args.repeats):
                X, y, truth = simulate_multinomial(m, n + 1000, p, k, 1.5, args.first + rep)
                rows.append(fit_both(X[:n], y[:n], X[n:], y[n:], k, truth))
            report(f"multinomial {m} x {n} x {p}, k = {k}", rows)


if __name__ == "__main__":
    main()
