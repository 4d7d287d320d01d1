"""Imputation inside a cross-validated pipeline, on scikit-learn's bundled tables: LowRankImputer against its peers.

Writes ``doc/peers/imputers.md``.

For each data set, a share (20 %) of the feature entries is hidden uniformly
at random (seeded; the target is never hidden), and each imputer runs with
its default parameters in ``make_pipeline(imputer, StandardScaler(),
model)``, scored by 5-fold ``cross_val_score`` (``KFold(5, shuffle=True,
random_state=0)``; stratified for classification): ``RidgeCV`` and R² for a
regression target, ``LogisticRegression(max_iter=5000)`` and accuracy for a
class label. The imputer is fitted on the training folds only and
``transform`` fills the test fold, so its handling of new rows counts.
Imputers: ``SimpleImputer`` (column means), ``KNNImputer`` (5
neighbours), ``IterativeImputer`` (BayesianRidge, 10 rounds) and
``LowRankImputer()`` (its default ``solver='als', rank='auto'``: a ridge on
the factors, rank and ridge chosen on held-out entries; ``--params
'{"solver": "accelerated"}'`` runs the hard rank, the default before version
0.1.0). Each score is the mean over the 5 folds and over 3
missingness seeds; the last column is the difference between
``LowRankImputer``'s and ``SimpleImputer``'s mean scores (the target:
>= 0 on every data set) and, in brackets, the smallest difference over the
seeds. Next to each score, the root mean squared error of the imputed
hidden entries of the test folds (``transform`` of rows not seen in
``fit``), in units of each column's standard deviation (the column means
score about 1). Time: the 5 folds (fit, score, one extra ``transform``),
summed over the seeds, one BLAS thread; the machine may be loaded, compare
within a column.

Data: ``load_diabetes`` (442 x 10, regression), ``load_linnerud`` (20 x 3,
the first physiological variable as the target), ``load_iris`` (150 x 4),
``load_wine`` (178 x 13) and ``load_breast_cancer`` (569 x 30), the last
three classification.

Run: ``python benchmarks/compare_imputers.py`` (``--quick``: one seed, printed only). Studies, printed only:
``--seeds 0-29`` (other missingness seeds), ``--data linnerud,iris`` (some data sets), ``--params
'{"solver": "als"}'`` (``LowRankImputer``'s parameters; JSON), ``--only`` (``SimpleImputer`` and
``LowRankImputer`` alone).
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_linnerud, load_wine
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, KNNImputer, SimpleImputer
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sparse_estimators.impute import LowRankImputer

OUT = Path(__file__).resolve().parents[1] / "doc" / "peers" / "imputers.md"
SHARE = 0.2
SEEDS = (0, 1, 2)
IMPUTERS = {"SimpleImputer": SimpleImputer, "KNNImputer": KNNImputer,
            "IterativeImputer": lambda: IterativeImputer(random_state=0), "LowRankImputer": LowRankImputer}


def datasets():
    """(name, X, y, task) of each bundled table."""
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", X, y, "regression"
    X, Y = load_linnerud(return_X_y=True)
    yield "linnerud", X, Y[:, 0], "regression"
    for name, loader in (("iris", load_iris), ("wine", load_wine), ("breast_cancer", load_breast_cancer)):
        X, y = loader(return_X_y=True)
        yield name, X, y, "classification"


def hide(X, seed):
    X = np.array(X, dtype=float)
    X[np.random.default_rng(seed).uniform(size=X.shape) < SHARE] = np.nan
    return X


def score(make, X_true, X, y, task):
    """Mean 5-fold score, RMSE of the test folds' hidden entries (in column standard deviations), warnings, seconds.

    The same splits and scorers as ``cross_val_score`` (R² for RidgeCV, accuracy for LogisticRegression).
    """
    if task == "regression":
        model, cv = RidgeCV(), KFold(5, shuffle=True, random_state=0)
    else:
        model, cv = LogisticRegression(max_iter=5000), StratifiedKFold(5, shuffle=True, random_state=0)
    scores, errors, caught = [], [], []
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for train, test in cv.split(X, y):
            pipe = make_pipeline(make(), StandardScaler(), clone(model)).fit(X[train], y[train])
            scores.append(pipe.score(X[test], y[test]))
            hidden = np.isnan(X[test])
            errors.append(((pipe[0].transform(X[test]) - X_true[test]) / X_true.std(axis=0))[hidden])
        caught = [str(w.message).splitlines()[0][:90] for w in record]
    rmse = float(np.sqrt(np.mean(np.concatenate(errors) ** 2)))
    return float(np.mean(scores)), rmse, caught, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", help="missingness seeds, e.g. 0-29 or 0,1,2 (a study: printed only)")
    parser.add_argument("--data", help="comma-separated data sets (a study: printed only)")
    parser.add_argument("--params", help="LowRankImputer's parameters as JSON (a study: printed only)")
    parser.add_argument("--only", action="store_true", help="SimpleImputer and LowRankImputer alone")
    args = parser.parse_args()
    seeds = SEEDS[:1] if args.quick else SEEDS
    if args.seeds:
        seeds = [s for part in args.seeds.split(",") for s in
                 (range(int(part.split("-")[0]), int(part.split("-")[1]) + 1) if "-" in part else [int(part)])]
    imputers = dict(IMPUTERS)
    if args.params:
        params = json.loads(args.params)
        imputers["LowRankImputer"] = lambda: LowRankImputer(**params)
    if args.only:
        imputers = {label: imputers[label] for label in ("SimpleImputer", "LowRankImputer")}
    study = bool(args.quick or args.seeds or args.data or args.params or args.only)
    rows, notes, met, missed = [], [], True, []
    with threadpool_limits(1):
        for name, X, y, task in datasets():
            if args.data and name not in args.data.split(","):
                continue
            results = {}
            for label, make in imputers.items():
                values, errors, seconds = [], [], 0.0
                for seed in seeds:
                    value, error, caught, elapsed = score(make, X, hide(X, seed), y, task)
                    values.append(value)
                    errors.append(error)
                    seconds += elapsed
                    if label == "LowRankImputer" and caught:
                        notes.append(f"{name}, seed {seed}: LowRankImputer warned: {sorted(set(caught))}")
                results[label] = (values, errors, seconds)
            low, simple = results["LowRankImputer"][0], results["SimpleImputer"][0]
            met &= np.mean(low) >= np.mean(simple)
            if np.mean(low) < np.mean(simple):
                missed.append(f"{name} {np.mean(low) - np.mean(simple):+.4f}")
            line = [name, f"{X.shape[0]} x {X.shape[1]}", "R²" if task == "regression" else "accuracy"]
            line += [f"{np.mean(v):.3f} / {np.mean(e):.3f} ({t:.1f} s)" for v, e, t in results.values()]
            worst = min(a - b for a, b in zip(low, simple, strict=True))
            line.append(f"{np.mean(low) - np.mean(simple):+.4f} ({worst:+.4f})")
            rows.append(line)
            print(" | ".join(line), flush=True)
            if study:
                d = np.subtract(low, simple)
                se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan
                print(f"  {name}: LowRank - Simple per seed {np.round(d, 4).tolist()}; mean {d.mean():+.4f} "
                      f"(se {se:.4f}), above/equal/below {(d > 0).sum()}/{(d == 0).sum()}/{(d < 0).sum()}", flush=True)
    header = ["data", "shape", "score", *imputers, "LowRank - Simple: mean (worst seed)"]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(line) + " |" for line in rows]
    text = "\n".join([
        "# Imputation in a cross-validated pipeline",
        "",
        "Generated by `python benchmarks/compare_imputers.py` (see its docstring for the protocol): "
        f"{int(SHARE * 100)} % of the feature entries hidden, 5-fold CV of imputer + StandardScaler + "
        "RidgeCV (R²) or LogisticRegression (accuracy), default parameters (LowRankImputer's: solver='als', "
        "rank='auto'), mean over missingness seeds "
        f"{', '.join(map(str, seeds))}. Each cell: CV score / RMSE of the test folds' hidden entries in units "
        "of each column's standard deviation (time of the 5 folds, summed over the seeds, one BLAS thread, "
        "machine possibly loaded).",
        "",
        *table,
        "",
        "Target (LowRankImputer() >= SimpleImputer in mean score on every data set): "
        f"{'met' if met else 'NOT met (' + ', '.join(missed) + ')'}.",
        "",
        *([f"- {note}" for note in notes] or ["LowRankImputer raised no warning."]),
        "",
    ])
    print(text)
    if not study:
        OUT.write_text(text)
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
