"""Where Coxnet's concordance advantage on veterans_lung_cancer at k = 5 comes from (support or shrinkage).

The splits of ``benchmarks/_cox_peers.py`` (stratified 70/30,
``random_state=0``, columns one-hot encoded and standardised on the training
part). Printed: each method's mean held-out concordance and its paired
difference to Coxnet's (lasso path, first penalty with 5 non-zeros) +- its
standard error.

* default (``--splits 200``): IHT; Coxnet's support refitted without
  penalty; IHT's support with the lasso at Coxnet's penalty; Coxnet at the
  smallest penalty with 5 non-zeros; the share of splits where IHT's support
  is Coxnet's.
* ``--more`` (the changelog used 30 splits): Efron's ties, all 8 columns,
  the best 5 columns by training likelihood (exhaustive), the l2 term
  ``alpha`` in 0.05, 0.1, 0.3, abess.
"""

import argparse
import warnings
from itertools import combinations

import numpy as np
from _cox_peers import _abess, _real_sets
from sklearn.model_selection import StratifiedShuffleSplit

from sparse_estimators.losses import CoxLoss
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, concordance_index

K = 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--more", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from sksurv.linear_model import CoxnetSurvivalAnalysis

    _, X, y = next(s for s in _real_sets() if s[0] == "veterans_lung_cancer")
    p = X.shape[1]
    splitter = StratifiedShuffleSplit(n_splits=args.splits, test_size=0.3, random_state=0)
    scores, same = {}, []
    for train, test in splitter.split(X, y["event"]):
        mean, sd = X[train].mean(axis=0), X[train].std(axis=0)
        sd[sd == 0] = 1.0
        Xtr, Xte, ytr, yte = (X[train] - mean) / sd, (X[test] - mean) / sd, y[train], y[test]

        def add(name, coef, Xte=Xte, yte=yte):
            scores.setdefault(name, []).append(concordance_index(yte["event"], yte["time"], Xte @ coef))

        model = CoxnetSurvivalAnalysis(l1_ratio=1.0, n_alphas=100, alpha_min_ratio=0.05).fit(Xtr, ytr)
        counts = np.count_nonzero(model.coef_, axis=0)
        exact = np.flatnonzero(counts == K)
        i = exact[0] if exact.size else int(np.argmin(np.abs(counts - K)))
        coxnet = model.coef_[:, i]
        add("Coxnet", coxnet)
        ours = IHTCoxPHSurvivalAnalysis(k=K).fit(Xtr, ytr)
        add("IHT", ours.coef_)
        add("Coxnet's support, no penalty", IHTCoxPHSurvivalAnalysis(k=K, always_select=np.flatnonzero(coxnet))
            .fit(Xtr, ytr).coef_)
        sub = CoxnetSurvivalAnalysis(l1_ratio=1.0, alphas=[model.alphas_[i]]).fit(Xtr[:, ours.support_], ytr)
        coef = np.zeros(p)
        coef[ours.support_] = sub.coef_[:, 0]
        add("IHT's support, lasso at Coxnet's penalty", coef)
        add("Coxnet, smallest penalty with k non-zeros", model.coef_[:, exact[-1] if exact.size else i])
        same.append(set(ours.support_) == set(np.flatnonzero(coxnet)))
        if args.more:
            add("IHT, Efron's ties", IHTCoxPHSurvivalAnalysis(k=K, ties="efron").fit(Xtr, ytr).coef_)
            add("all 8 columns", IHTCoxPHSurvivalAnalysis(k=p).fit(Xtr, ytr).coef_)
            loss = CoxLoss(Xtr, ytr["event"], ytr["time"], None, "breslow", 1e-4)
            zeros = np.zeros((p, 1)), np.zeros(1)
            best = min(combinations(range(p), K), key=lambda S: loss.value(*loss.refit(np.array(S), *zeros)))
            add("best 5 columns (exhaustive)", loss.refit(np.array(best), *zeros)[0][:, 0])
            for alpha in (0.05, 0.1, 0.3):
                add(f"IHT, alpha={alpha}", IHTCoxPHSurvivalAnalysis(k=K, alpha=alpha).fit(Xtr, ytr).coef_)
            add("abess", _abess(Xtr, ytr, K))
    ref = np.asarray(scores["Coxnet"])
    print(f"veterans_lung_cancer, k = {K}, {args.splits} splits: held-out concordance, minus Coxnet's")
    for name, values in scores.items():
        d = np.asarray(values) - ref
        se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan
        print(f"  {name:44s} {np.mean(values):.4f}  {d.mean():+.4f} +- {se:.4f}")
    print(f"  IHT's support is Coxnet's in {np.mean(same):.1%} of the splits")


if __name__ == "__main__":
    main()
