"""Command-line interface: fit a sparse model on a CSV file or a built-in dataset.

Fits one of the package's estimators with exactly ``k`` features, prints the
selected features with their coefficients, the intercept, the number of
iterations and a cross-validated score (R^2 for regression, accuracy for
classification). Progress (one line per cross-validation fold and a final
timing line) goes to standard error, the results to standard output.

Usage::

    python -m sparse_estimators                       # diabetes dataset, IHT regression
    python -m sparse_estimators --dataset breast_cancer --k 5
    python -m sparse_estimators data.csv --target price --k 3 --method iht
    sparse-estimators data.csv --task classification --thresholding soft --cv 10

With no CSV file the command runs on a dataset that ships with scikit-learn
(``--dataset diabetes``, ``breast_cancer`` or ``wine``), so it works offline.
A CSV file needs a header row; the target is its last column unless
``--target`` names another, every other column must be numeric (drop the
others with ``--drop``). Pandas is not needed.

``--task auto`` (the default) treats the target as classification labels when
it is not numeric, or when it is integer-valued with at most 20 distinct values
and fewer distinct values than half the rows; otherwise it fits a regression.

The features are standardised (``StandardScaler`` in a ``Pipeline``) unless
``--no-scale`` is given, since the estimators select features by coefficient
magnitude; the printed coefficients are then per standard deviation of each
feature. The methods offered by ``--method`` are the estimator families that
the installed package provides (``iht`` -> ``IHTRegressor`` /
``IHTClassifier``, ``accelerated`` -> ``AcceleratedIHT...``, ``regularized`` ->
``RegularizedIHT...``, ``iobs`` -> ``IOBS...``).

Exit status: 0 on success, 2 for a usage or input error (unknown option,
missing file, unknown column, non-numeric feature), 1 when the fit itself
fails.
"""

import argparse
import csv
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["build_parser", "main"]

#: ``--method`` name -> class-name prefix in :mod:`sparse_estimators`.
_METHOD_PREFIXES = {
    "iht": "IHT",
    "accelerated": "AcceleratedIHT",
    "regularized": "RegularizedIHT",
    "iobs": "IOBS",
}
_TASK_SUFFIXES = {"regression": "Regressor", "classification": "Classifier"}
_THRESHOLDINGS = ("hard", "soft", "reciprocal", "lq")

#: Built-in datasets: name -> (loader in sklearn.datasets, task, target description).
_DATASETS = {
    "diabetes": ("load_diabetes", "regression", "disease progression one year after baseline"),
    "breast_cancer": ("load_breast_cancer", "classification", "diagnosis"),
    "wine": ("load_wine", "classification", "cultivar"),
}

# Auto task detection: an integer-valued target with at most this many
# distinct values (and fewer than half the rows) is taken as class labels.
_MAX_AUTO_CLASSES = 20
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})


class _InputError(Exception):
    """A problem with the command line or the input data (exit status 2)."""


@dataclass
class _Data:
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target_name: str
    description: str
    task: str | None = None  # known task of a built-in dataset


# -- estimator families ----------------------------------------------------------


def _estimator_class(method, task):
    """The estimator class for ``method`` and ``task``, or None if not installed."""
    import sparse_estimators

    return getattr(sparse_estimators, _METHOD_PREFIXES[method] + _TASK_SUFFIXES[task], None)


def available_methods():
    """The ``--method`` names whose estimators the installed package provides.

    Returns
    -------
    list of str
        Names of :data:`_METHOD_PREFIXES` for which ``sparse_estimators``
        has a ``<Prefix>Regressor`` or a ``<Prefix>Classifier``; looked up at
        call time, so new estimator families appear without changing the CLI.
    """
    return [name for name in _METHOD_PREFIXES
            if any(_estimator_class(name, task) is not None for task in _TASK_SUFFIXES)]


# -- argument parsing ------------------------------------------------------------


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _cv_folds(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 1 or value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 (no cross-validation) or at least 2 folds, got {text!r}")
    return value


def _prog_name():
    if os.path.basename(sys.argv[0] if sys.argv else "") == "__main__.py":
        return "python -m sparse_estimators"
    return "sparse-estimators"


def build_parser():
    """Build the argument parser of the command-line interface.

    The choices of ``--method`` are the estimator families present in
    :mod:`sparse_estimators` when the parser is built.

    Returns
    -------
    argparse.ArgumentParser
        The parser; ``parse_args`` returns the options as attributes
        ``csv``, ``dataset``, ``target``, ``drop``, ``task``, ``method``,
        ``k``, ``thresholding``, ``max_iter``, ``cv``, ``seed``, ``scale``
        and ``quiet``.
    """
    methods = available_methods()
    parser = argparse.ArgumentParser(
        prog=_prog_name(),
        description="Fit a sparse linear model with exactly k features by iterative thresholding, print "
                    "the selected features, their coefficients and a cross-validated score.",
        epilog="Without a CSV file the model is fit on a dataset shipped with scikit-learn (--dataset).",
    )
    data = parser.add_argument_group("data")
    data.add_argument("csv", nargs="?", metavar="CSV",
                      help="CSV file with a header row; all columns but the target must be numeric")
    data.add_argument("--dataset", choices=sorted(_DATASETS),
                      help="built-in scikit-learn dataset to use when no CSV file is given "
                           "(default: diabetes)")
    data.add_argument("--target", metavar="COLUMN",
                      help="name of the target column of the CSV file (default: the last column)")
    data.add_argument("--drop", metavar="COLUMN", action="append", default=[],
                      help="ignore this CSV column (repeatable), e.g. an identifier or a text column")
    model = parser.add_argument_group("model")
    model.add_argument("--task", choices=("auto", "regression", "classification"), default="auto",
                       help="auto: classification if the target is non-numeric or has few distinct "
                            "integer values, else regression (default: auto)")
    model.add_argument("--method", choices=methods, default="iht",
                       help="algorithm: the estimator families of the installed package (default: iht)")
    model.add_argument("--k", type=_positive_int, default=None,
                       help="number of features to select (default: the estimator's, 10%% of the features)")
    model.add_argument("--thresholding", choices=_THRESHOLDINGS, default="hard",
                       help="thresholding operator (default: hard)")
    model.add_argument("--max-iter", type=_positive_int, default=None, metavar="N",
                       help="maximum number of iterations (default: the estimator's)")
    model.add_argument("--no-scale", dest="scale", action="store_false",
                       help="do not standardise the features before fitting")
    evaluation = parser.add_argument_group("evaluation")
    evaluation.add_argument("--cv", type=_cv_folds, default=5, metavar="FOLDS",
                            help="number of cross-validation folds, 0 to skip (default: 5)")
    evaluation.add_argument("--seed", type=int, default=0,
                            help="random seed of the cross-validation shuffle (default: 0)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress messages on standard error")
    return parser


# -- data ------------------------------------------------------------------------


def _load_dataset(name):
    """Load a built-in scikit-learn dataset, with class names as labels."""
    import sklearn.datasets

    loader, task, description = _DATASETS[name]
    bunch = getattr(sklearn.datasets, loader)()
    y = bunch.target
    if task == "classification":
        y = np.asarray(bunch.target_names)[y]
    return _Data(X=np.asarray(bunch.data, dtype=float), y=np.asarray(y), feature_names=list(bunch.feature_names),
                 target_name=description, description=f"{name} (scikit-learn dataset)", task=task)


def _read_csv(path, target, drop):
    """Read a CSV file with the csv module: numeric features, the target as strings."""
    if not os.path.exists(path):
        raise _InputError(f"file not found: {path}")
    if os.path.isdir(path):
        raise _InputError(f"{path} is a directory, not a CSV file")
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _InputError(f"cannot read {path}: {exc}") from None
    # Keep the line number of each row for the error messages; skip blank lines.
    numbered = [(line, row) for line, row in enumerate(rows, start=1) if any(cell.strip() for cell in row)]
    if not numbered:
        raise _InputError(f"{path} is empty")
    _, header = numbered[0]
    header = [name.strip() or f"column_{j + 1}" for j, name in enumerate(header)]
    body = numbered[1:]
    if not body:
        raise _InputError(f"{path} has a header row but no data rows")
    for line, row in body:
        if len(row) != len(header):
            raise _InputError(f"{path}, line {line}: {len(row)} fields, but the header has {len(header)}")

    def column_index(name, option):
        matches = [j for j, column in enumerate(header) if column == name]
        if not matches:
            raise _InputError(f"{option} {name!r} is not a column of {path}; columns: "
                              + ", ".join(repr(column) for column in header))
        if len(matches) > 1:
            raise _InputError(f"{option} {name!r}: {path} has {len(matches)} columns of that name")
        return matches[0]

    target_index = len(header) - 1 if target is None else column_index(target, "--target")
    dropped = {column_index(name, "--drop") for name in drop}
    if target_index in dropped:
        raise _InputError(f"the target column {header[target_index]!r} cannot be dropped")
    feature_indices = [j for j in range(len(header)) if j != target_index and j not in dropped]
    if not feature_indices:
        raise _InputError(f"{path} has no feature columns besides the target {header[target_index]!r}")

    X = np.empty((len(body), len(feature_indices)))
    for i, (line, row) in enumerate(body):
        for jj, j in enumerate(feature_indices):
            cell = row[j].strip()
            if cell.lower() in _MISSING:
                raise _InputError(f"column {header[j]!r} has a missing value ({path}, line {line}); "
                                  "fill or remove it, or --drop the column")
            try:
                value = float(cell)
            except ValueError:
                raise _InputError(f"column {header[j]!r} is not numeric ({path}, line {line}: {cell!r}); "
                                  f"only the target may hold text: use --drop {header[j]!r} to ignore "
                                  "the column") from None
            if not math.isfinite(value):
                raise _InputError(f"column {header[j]!r} has a non-finite value ({path}, line {line}: {cell!r})")
            X[i, jj] = value
    y = np.array([row[target_index].strip() for _, row in body], dtype=object)
    missing = [line for (line, _), value in zip(body, y, strict=True) if value.lower() in _MISSING]
    if missing:
        raise _InputError(f"the target column {header[target_index]!r} has {len(missing)} missing value(s) "
                          f"(first at line {missing[0]} of {path})")
    return _Data(X=X, y=y, feature_names=[header[j] for j in feature_indices],
                 target_name=header[target_index], description=path)


def _numeric(y):
    """``y`` as floats, or None if some value is not a finite number."""
    if y.dtype.kind in "biuf":
        return y.astype(float)
    try:
        values = np.array([float(value) for value in y])
    except (TypeError, ValueError):
        return None
    return values if np.all(np.isfinite(values)) else None


def _infer_task(y):
    """Guess the task from the target values.

    Returns
    -------
    task : {'regression', 'classification'}
    reason : str
        Why, for the output.
    """
    values = _numeric(y)
    if values is None:
        return "classification", "the target is not numeric"
    distinct = np.unique(values)
    if np.all(distinct == np.round(distinct)) and distinct.size <= _MAX_AUTO_CLASSES \
            and distinct.size < values.size / 2:
        return "classification", f"the target has {distinct.size} distinct integer values"
    return "regression", f"the target is numeric with {distinct.size} distinct values"


def _prepare_target(y, task, target_name):
    """Convert the target for ``task``: floats for regression, labels for classification."""
    values = _numeric(y)
    if task == "regression":
        if values is None:
            example = next(value for value in y if _numeric(np.array([value], dtype=object)) is None)
            raise _InputError(f"regression needs a numeric target, but {target_name!r} holds {str(example)!r}; "
                              "use --task classification")
        return values
    if values is None:
        labels = np.asarray(y, dtype=str)
    elif not np.all(values == np.round(values)):
        raise _InputError(f"classification needs discrete labels, but {target_name!r} holds non-integer "
                          "numbers; use --task regression")
    else:
        labels = values.astype(np.int64)
    n_classes = np.unique(labels).size
    if n_classes > labels.size / 3:  # fewer than 3 samples per class on average: not labels
        raise _InputError(f"classification needs repeated labels, but {target_name!r} has {n_classes} distinct "
                          f"values in {labels.size} rows; use --task regression")
    return labels


# -- output ----------------------------------------------------------------------


def _fmt(value):
    """Format a coefficient: fixed point, or exponent for very large or small values."""
    value = float(value)
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:.4f}"
    return f"{value:.4e}"


def _table(headers, rows):
    """Lines of a plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells):
        parts = [str(cells[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  " + "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(row) for row in rows]


class _Reporter:
    """Results to standard output, progress to standard error (unless quiet)."""

    def __init__(self, quiet):
        self.quiet = quiet

    @staticmethod
    def out(text=""):
        print(text, file=sys.stdout, flush=True)

    def progress(self, text):
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)


def _print_model(report, data, estimator, scaled, k_requested):
    """Print the selected features and coefficients, the intercept and the iteration count."""
    n_features = data.X.shape[1]
    support = np.asarray(estimator.support_)
    coef = np.atleast_2d(np.asarray(estimator.coef_, dtype=float))  # (n_outputs, n_features)
    strength = np.linalg.norm(coef[:, support], axis=0)
    order = support[np.lexsort((support, -strength))]  # largest coefficients first
    classes = getattr(estimator, "classes_", None)
    if coef.shape[0] == 1:
        headers = ["feature", "coef"]
    else:
        headers = ["feature"] + [str(label) for label in classes]
    rows = [[data.feature_names[j]] + [_fmt(c) for c in coef[:, j]] for j in order]
    k_note = "" if k_requested is not None else f" (the default, 10% of {n_features} features; choose with --k)"
    scale_note = ("on the standardized scale (per standard deviation of the feature)" if scaled
                  else "in the units of the data")
    report.out(f"Selected features: {support.size} of {n_features}{k_note}")
    report.out(f"Coefficients {scale_note}")
    if classes is not None and coef.shape[0] == 1:
        report.out(f"  positive class: {classes[1]} (a positive coefficient raises its log-odds)")
    report.out()
    for text in _table(headers, rows):
        report.out(text)
    report.out()
    intercept = np.atleast_1d(np.asarray(estimator.intercept_, dtype=float))
    if intercept.size == 1:
        report.out(f"Intercept:  {_fmt(intercept[0])}")
    else:
        report.out("Intercept:  " + ", ".join(f"{label}: {_fmt(b)}"
                                             for label, b in zip(classes, intercept, strict=True)))
    report.out(f"Iterations: {estimator.n_iter_}")


def _cross_validate(report, model, X, y, task, folds, seed):
    """Score ``model`` fold by fold (with a progress line per fold); return the scores."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold

    splitter_class = StratifiedKFold if task == "classification" else KFold
    splitter = splitter_class(n_splits=folds, shuffle=True, random_state=seed)
    metric = "accuracy" if task == "classification" else "R^2"
    scores = []
    for fold, (train, test) in enumerate(splitter.split(X, y), start=1):
        start = time.perf_counter()
        fitted = clone(model).fit(X[train], y[train])
        scores.append(fitted.score(X[test], y[test]))
        report.progress(f"  fold {fold}/{folds}: {metric} {scores[-1]:.4f} ({time.perf_counter() - start:.2f} s)")
    return np.array(scores)


def _report_warnings(caught):
    """Print each distinct warning once, with how many times it occurred."""
    counts = {}
    for item in caught:
        key = (item.category.__name__, str(item.message))
        counts[key] = counts.get(key, 0) + 1
    for (category, message), count in counts.items():
        times = f" [{count} times]" if count > 1 else ""
        print(f"{category}: {message}{times}", file=sys.stderr, flush=True)


# -- main ------------------------------------------------------------------------


def _run(args, report):
    """Fit, print and cross-validate; raises _InputError or ValueError."""
    start = time.perf_counter()
    if args.csv is not None:
        if args.dataset is not None:
            raise _InputError("give either a CSV file or --dataset, not both")
        data = _read_csv(args.csv, args.target, args.drop)
    else:
        if args.target is not None or args.drop:
            raise _InputError("--target and --drop apply to a CSV file only")
        data = _load_dataset(args.dataset or "diabetes")

    if args.task != "auto":
        task, reason = args.task, "--task"
    elif data.task is not None:
        task, reason = data.task, "the dataset's task"
    else:
        task, reason = _infer_task(data.y)
    y = _prepare_target(data.y, task, data.target_name)

    n_samples, n_features = data.X.shape
    if args.cv > n_samples:
        raise _InputError(f"--cv {args.cv} needs at least {args.cv} samples; the data have {n_samples}")

    estimator_class = _estimator_class(args.method, task)
    if estimator_class is None:
        name = _METHOD_PREFIXES[args.method] + _TASK_SUFFIXES[task]
        raise _InputError(f"--method {args.method} has no {task} estimator ({name}) in this version of "
                          "sparse_estimators")
    params = {"k": args.k, "thresholding": args.thresholding}
    if args.max_iter is not None:
        params["max_iter"] = args.max_iter
    estimator = estimator_class(**params)
    if args.scale:
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        model = make_pipeline(StandardScaler(), estimator)
        model_text = f"StandardScaler -> {estimator!r}"
    else:
        model, model_text = estimator, repr(estimator)

    report.out(f"Data:   {data.description}: {n_samples} samples, {n_features} features, "
               f"target {data.target_name!r}")
    report.out(f"Task:   {task} ({reason})")
    report.out(f"Model:  {model_text}")
    report.out()

    report.progress(f"Fitting {estimator_class.__name__} on {n_samples} samples...")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(data.X, y)
        fitted = model[-1] if args.scale else model
        _print_model(report, data, fitted, args.scale, args.k)
        if args.cv:
            report.progress(f"Cross-validating ({args.cv} folds, seed {args.seed})...")
            scores = _cross_validate(report, model, data.X, y, task, args.cv, args.seed)
            metric = "accuracy" if task == "classification" else "R^2"
            report.out(f"Cross-validated {metric} ({args.cv}-fold, shuffled with seed {args.seed}): "
                       f"{scores.mean():.4f} ± {scores.std():.4f}")
    _report_warnings(caught)  # even with --quiet
    report.progress(f"Done in {time.perf_counter() - start:.2f} s.")


def main(argv=None):
    """Run the command-line interface.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments, without the program name; None reads ``sys.argv``.

    Returns
    -------
    int
        Exit status: 0 on success, 2 for invalid options or input data
        (message on standard error), 1 when fitting fails.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return exc.code if isinstance(exc.code, int) else 2
    report = _Reporter(args.quiet)
    try:
        _run(args, report)
    except _InputError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # raised by the estimators (e.g. too few samples per class for --cv)
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    return 0
