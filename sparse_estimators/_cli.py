"""Command-line interface: fit a sparse model on a CSV file or a built-in dataset, or predict with a saved one.

Two modes:

* **fit** (the default): fits one of the package's estimators, prints which
  ``k`` (number of features) was used and why, the selected features with
  their coefficients, the intercept, the number of iterations and
  cross-validated scores (R^2 and RMSE for a regression; accuracy, ROC AUC
  and log-loss for a classification), optionally saves the fitted pipeline.
* **predict**: ``predict MODEL CSV`` applies a model saved by ``--output`` to
  the rows of a new CSV file and writes the predictions as CSV.

Progress (one line per cross-validation fold and a final timing line) goes to
standard error, the results to standard output.

Usage::

    python -m sparse_estimators                       # diabetes dataset, k chosen automatically
    python -m sparse_estimators --dataset breast_cancer --k 5
    python -m sparse_estimators data.csv --target price --k 3 --method iht
    sparse-estimators data.csv --task classification --thresholding soft --cv 10
    sparse-estimators data.csv --target price --output model.joblib --json > fit.json
    sparse-estimators predict model.joblib new.csv --output predictions.csv

The word ``predict`` selects the predict mode only as the first argument; to
fit a CSV file that is named ``predict``, write it ``./predict``.

With no CSV file the command runs on a dataset that ships with scikit-learn
(``--dataset diabetes``, ``breast_cancer`` or ``wine``), so it works offline.
A CSV file needs a header row; the target is its last column unless
``--target`` names another, ``--drop`` ignores a column (e.g. an identifier).
Pandas is not needed.

**Choice of k.** Without ``--k`` (or with ``--k auto``) the estimator gets
``k=None`` and chooses ``k`` itself; when it records its search (``k_path_``,
``criterion_path_``, ``k_criterion_``) the output says which ``k`` was chosen
by which criterion and shows the criterion around it, and ``--plot FILE``
draws the criterion against ``k`` (needs matplotlib). ``--k N`` forces ``N``.
Cross-validation refits the whole procedure in each fold, so with the
automatic choice ``k`` is chosen again in each training fold.

**Task.** ``--task auto`` (the default) fits a classification when the
target is not numeric, or when it holds at most 5 distinct integer values
(and fewer than half the rows); any other numeric target, integer counts
included, is fitted as a regression. The output says which task was used and
why, and how to ask for the other one with ``--task``.

**Features.** Numeric columns are standardised (``StandardScaler``) unless
``--no-scale`` is given, since the estimators select features by coefficient
magnitude; the printed coefficients are then per standard deviation. A column
with text is one-hot encoded (``OneHotEncoder``, one 0/1 column per category,
one column for a two-category column), the dummy columns standardised like
the others, and printed by their encoded names (``city_Paris``). A text column
with a distinct value in more than half the rows is refused (an identifier or
a mistyped numeric column): ``--drop`` it. Missing cells (empty, ``NA``,
``NaN``, ``null``...) are refused unless ``--impute`` is given, which replaces
them by the column's median (numeric) or most frequent value (text), learnt
on the training data; a missing target is always refused. Numbers beyond what
the fit's sums of squares can hold (about 1e150 divided by the square root of
the data's size) are refused with the column's name.

**Saved model.** ``--output FILE`` saves (with joblib) the whole fitted
pipeline: the column layout (feature names, which are text, the target name),
imputation, scaling and encoding, and the estimator. ``joblib.load(FILE)``
gives a scikit-learn ``Pipeline`` whose ``predict`` takes a DataFrame (columns
found by name, others ignored) or an array with the feature columns in the
order of its ``feature_names_in_``. Load only files you trust: joblib files
can run code.

``--json`` prints the results as one JSON object (data, task, k with the
criterion path, selected features with coefficients, intercept, cross-
validated scores per fold) instead of the text.

The methods offered by ``--method`` are the estimator families that the
installed package provides (``iht`` -> ``IHTRegressor`` / ``IHTClassifier``,
``accelerated`` -> ``AcceleratedIHT...``, ``regularized`` ->
``RegularizedIHT...``, ``iobs`` -> ``IOBS...``).

Exit status: 0 on success, 2 for a usage or input error (unknown option,
missing file, unknown column, unusable values, too few rows for the
cross-validation), 1 when the fit, the cross-validation or the prediction
fails or produces nothing usable (no feature selected, an undefined score).
Nothing is written to standard output unless the run succeeds.
"""

import argparse
import csv
import json
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

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

#: Built-in datasets: name -> (loader in sklearn.datasets, task, target column name, target description).
_DATASETS = {
    "diabetes": ("load_diabetes", "regression", "progression", "disease progression one year after baseline"),
    "breast_cancer": ("load_breast_cancer", "classification", "diagnosis", "diagnosis"),
    "wine": ("load_wine", "classification", "cultivar", "cultivar"),
}

# Auto task detection: an integer-valued target with at most this many
# distinct values (and fewer than half the rows) is taken as class labels;
# more distinct integers are more likely counts or scores than classes.
_MAX_AUTO_CLASSES = 5
# Up to this many distinct integers (the rule of earlier versions) the output
# says how to ask for a classification instead.
_MAX_NOTED_CLASSES = 20
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})
_INFINITIES = frozenset({"inf", "infinity"})
# Largest n_rows * n_columns * max|value|^2 accepted: the fit sums squares and
# products of the values, which overflow float64 (1.8e308) not far above this.
_SQUARE_SUM_LIMIT = 1e300
# Rows of the criterion table on each side of the chosen k.
_PATH_CONTEXT = 3

#: Scores of the cross-validation: (key, printed name, scikit-learn scorer, sign).
#: A scorer named ``neg_...`` is negated back, so every score reads in its usual sign.
_SCORES = {
    "regression": [("r2", "R^2", "r2", 1), ("rmse", "RMSE", "neg_root_mean_squared_error", -1)],
    "binary": [("accuracy", "accuracy", "accuracy", 1), ("roc_auc", "ROC AUC", "roc_auc", 1),
               ("log_loss", "log-loss", "neg_log_loss", -1)],
    "multiclass": [("accuracy", "accuracy", "accuracy", 1),
                   ("roc_auc", "ROC AUC (macro one-vs-rest)", "roc_auc_ovr", 1),
                   ("log_loss", "log-loss", "neg_log_loss", -1)],
}


class _InputError(Exception):
    """A problem with the command line or the input data (exit status 2)."""


class _FitError(Exception):
    """The fit, the cross-validation or the prediction produced nothing usable (exit status 1)."""


@dataclass
class _Data:
    X: np.ndarray  # floats, or objects (floats and strings) when some column is text
    y: np.ndarray
    feature_names: list
    target_name: str
    description: str
    task: str | None = None  # known task of a built-in dataset
    name: str = ""  # short name, for the plot's title
    text_columns: list = field(default_factory=list)  # names of the text (one-hot encoded) columns
    missing: dict = field(default_factory=dict)  # column name -> number of missing cells


# -- the saved pipeline's first step ---------------------------------------------


def _is_missing(value):
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().lower() in _MISSING
    try:
        return bool(np.isnan(value))
    except TypeError:
        return False


class _TableColumns(TransformerMixin, BaseEstimator):
    """First step of the CLI's pipeline: the table's feature columns, by name, as numbers or text.

    Makes a saved model usable on a DataFrame (columns found by name, other
    columns ignored) or on an array (the columns in the order of
    ``feature_names``), and records the target's name for the predict mode.

    Parameters
    ----------
    feature_names : tuple of str
        The feature columns, in the order of the model.
    text_columns : tuple of str
        Those of ``feature_names`` that hold text (one-hot encoded next).
    target_name : str or None
        The target column's name (the header of the predictions).
    """

    def __init__(self, feature_names=(), text_columns=(), target_name=None):
        self.feature_names = feature_names
        self.text_columns = text_columns
        self.target_name = target_name

    def fit(self, X, y=None):
        """Record the feature names; the columns are checked by ``transform``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The training table (not used beyond its layout).
        y : ignored

        Returns
        -------
        self : _TableColumns
        """
        self.feature_names_in_ = np.asarray(self.feature_names, dtype=object)
        self.n_features_in_ = len(self.feature_names)
        return self

    def transform(self, X):
        """The feature columns: floats (missing cells NaN), text as str.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            A DataFrame (any column order, extra columns ignored) or an
            array whose columns are ``feature_names`` in that order.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            float64 if no column is text, else object.
        """
        check_is_fitted(self)
        names = list(self.feature_names)
        if hasattr(X, "columns"):  # a DataFrame, without importing pandas
            absent = [name for name in names if name not in X.columns]
            if absent:
                raise ValueError(f"X lacks the column(s) {absent} the model was fitted on; it needs {names}.")
            columns = [np.asarray(X[name], dtype=object) for name in names]
        else:
            array = np.asarray(X, dtype=object)
            if array.ndim != 2 or array.shape[1] != len(names):
                raise ValueError(f"X has shape {array.shape}; expected (n_samples, {len(names)}) with the "
                                 f"columns {names}.")
            columns = [array[:, j] for j in range(len(names))]
        text = set(self.text_columns)
        out = [self._text(column) if name in text else self._numbers(column, name)
               for name, column in zip(names, columns, strict=True)]
        if not text:
            return np.column_stack(out) if out else np.empty((0, 0))
        table = np.empty((len(out[0]), len(out)), dtype=object)
        for j, column in enumerate(out):
            table[:, j] = column
        return table

    @staticmethod
    def _numbers(column, name):
        values = np.empty(len(column))
        for i, value in enumerate(column):
            if _is_missing(value):
                values[i] = np.nan
                continue
            try:
                values[i] = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"column {name!r} holds {value!r}, not a number.") from None
        return values

    @staticmethod
    def _text(column):
        return np.array([np.nan if _is_missing(value) else str(value) for value in column], dtype=object)


def _build_model(data, estimator, scale, impute):
    """The pipeline: table columns -> (impute, scale | impute, one-hot, scale) -> estimator; and its description."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    text = set(data.text_columns)
    numeric_idx = [j for j, name in enumerate(data.feature_names) if name not in text]
    text_idx = [j for j, name in enumerate(data.feature_names) if name in text]
    transformers = []
    if numeric_idx:
        steps = ([SimpleImputer(strategy="median")] if impute else []) + ([StandardScaler()] if scale else [])
        # an identity that converts to floats when there is nothing else to do
        steps = steps or [FunctionTransformer(validate=True, feature_names_out="one-to-one")]
        transformers.append(("numeric", make_pipeline(*steps), numeric_idx))
    if text_idx:
        steps = (([SimpleImputer(strategy="most_frequent")] if impute else [])
                 + [OneHotEncoder(drop="if_binary", handle_unknown="warn", sparse_output=False)]
                 + ([StandardScaler()] if scale else []))
        transformers.append(("text", make_pipeline(*steps), text_idx))
    columns = _TableColumns(tuple(data.feature_names), tuple(data.text_columns), data.target_name)
    model = Pipeline([("columns", columns),
                      ("preprocess", ColumnTransformer(transformers, sparse_threshold=0)),
                      ("estimator", estimator)])
    parts = (["SimpleImputer"] if impute else []) + ([f"OneHotEncoder ({len(text_idx)} text column"
                                                      f"{'s' if len(text_idx) > 1 else ''})"] if text_idx else [])
    parts += ["StandardScaler"] if scale else []
    return model, " -> ".join(parts + [repr(estimator)])


def _encoded_features(model):
    """Names of the columns the estimator sees, and the table column each comes from.

    A text column gives one dummy column per category (named by the encoder,
    ``city_Paris``), all mapped to the text column: the grouping that a
    ``groups=`` parameter of the estimators would take.
    """
    from sklearn.preprocessing import OneHotEncoder

    table = model.named_steps["columns"]
    names, sources = [], []
    for name, transformer, indices in model.named_steps["preprocess"].transformers_:
        if name == "remainder":
            continue
        inputs = [table.feature_names[j] for j in indices]
        encoders = [step for _, step in getattr(transformer, "steps", [])
                    if isinstance(step, OneHotEncoder)]
        if not encoders:
            names += inputs
            sources += inputs
            continue
        encoder = encoders[0]
        names += [str(out) for out in encoder.get_feature_names_out(inputs)]
        for j, categories in enumerate(encoder.categories_):
            dropped = encoder.drop_idx_ is not None and encoder.drop_idx_[j] is not None
            sources += [inputs[j]] * (len(categories) - dropped)
    if len(names) != len(sources):  # an encoder option this mapping does not know
        raise AssertionError(f"{len(names)} encoded names but {len(sources)} sources")
    return names, sources


def _imputes(model):
    from sklearn.impute import SimpleImputer

    return any(isinstance(step, SimpleImputer)
               for _, transformer, _ in model.named_steps["preprocess"].transformers_
               for _, step in getattr(transformer, "steps", []))


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


def _k_value(text):
    """``--k``: a positive integer, or 'auto' (None: the estimator chooses)."""
    if text.strip().lower() == "auto":
        return None
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}") from None


def _cv_folds(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 1 or value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 (no cross-validation) or at least 2 folds, got {text!r}")
    return value


def _prog_name():
    path = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(path) == "__main__.py" and os.path.basename(os.path.dirname(path)) == "sparse_estimators":
        return "python -m sparse_estimators"
    return "sparse-estimators"


def build_parser():
    """Build the argument parser of the fit mode of the command-line interface.

    The choices of ``--method`` are the estimator families present in
    :mod:`sparse_estimators` when the parser is built. The predict mode
    (first argument ``predict``) has its own parser.

    Returns
    -------
    argparse.ArgumentParser
        The parser; ``parse_args`` returns the options as attributes
        ``csv``, ``dataset``, ``target``, ``drop``, ``impute``, ``task``,
        ``method``, ``k`` (None for the automatic choice), ``thresholding``,
        ``max_iter``, ``scale``, ``cv``, ``seed``, ``output``, ``json``,
        ``plot`` and ``quiet``.
    """
    methods = available_methods()
    prog = _prog_name()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Fit a sparse linear model with exactly k features by iterative thresholding, print "
                    "the chosen k, the selected features, their coefficients and cross-validated scores.",
        epilog=f"Without a CSV file the model is fit on a dataset shipped with scikit-learn (--dataset). "
               f"Predict mode: '{prog} predict MODEL CSV [--output FILE]' applies a model saved with --output "
               f"to a new CSV file ('{prog} predict --help'); to fit a CSV file named 'predict', write "
               "'./predict'.",
    )
    data = parser.add_argument_group("data")
    data.add_argument("csv", nargs="?", metavar="CSV",
                      help="CSV file with a header row; text columns are one-hot encoded")
    data.add_argument("--dataset", choices=sorted(_DATASETS),
                      help="built-in scikit-learn dataset to use when no CSV file is given "
                           "(default: diabetes)")
    data.add_argument("--target", metavar="COLUMN",
                      help="name of the target column of the CSV file (default: the last column)")
    data.add_argument("--drop", metavar="COLUMN", action="append", default=[],
                      help="ignore this CSV column (repeatable), e.g. an identifier")
    data.add_argument("--impute", action="store_true",
                      help="replace missing feature cells by the column's median (numeric) or most frequent "
                           "value (text) instead of refusing them")
    model = parser.add_argument_group("model")
    model.add_argument("--task", choices=("auto", "regression", "classification"), default="auto",
                       help=f"auto: classification if the target is non-numeric or has at most "
                            f"{_MAX_AUTO_CLASSES} distinct integer values, else regression (default: auto)")
    model.add_argument("--method", choices=methods, default="iht",
                       help="algorithm: the estimator families of the installed package (default: iht)")
    model.add_argument("--k", type=_k_value, default=None, metavar="{N,auto}",
                       help="number of features to select; 'auto' (the default) lets the estimator choose k "
                            "and prints how")
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
    output = parser.add_argument_group("output")
    output.add_argument("-o", "--output", metavar="FILE",
                        help="save the fitted pipeline (preprocessing and estimator) with joblib, for "
                             f"'{prog} predict FILE new.csv' or joblib.load(FILE).predict(X)")
    output.add_argument("--json", action="store_true",
                        help="print the results as a JSON object instead of text")
    output.add_argument("--plot", metavar="FILE",
                        help="with the automatic choice of k, draw the criterion against k into FILE "
                             "(PNG, or the format of the extension); needs matplotlib")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress messages on standard error")
    return parser


def _build_predict_parser():
    prog = _prog_name()
    parser = argparse.ArgumentParser(
        prog=f"{prog} predict",
        description="Apply a model saved by '--output' to the rows of a CSV file and write the predictions "
                    "as CSV (for a classifier, also one probability column per class).",
        epilog=f"The CSV file needs the model's feature columns (found by name; other columns are ignored). "
               f"'predict' selects this mode only as the first argument: to fit a CSV file named 'predict', "
               f"write '{prog} ./predict'.",
    )
    parser.add_argument("model", metavar="MODEL", help="a file written by --output")
    parser.add_argument("csv", metavar="CSV", help="CSV file with a header row and the model's feature columns")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the predictions to FILE instead of standard output")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress messages on standard error")
    return parser


# -- data ------------------------------------------------------------------------


def _load_dataset(name):
    """Load a built-in scikit-learn dataset, with class names as labels."""
    import sklearn.datasets

    loader, task, target_name, description = _DATASETS[name]
    bunch = getattr(sklearn.datasets, loader)()
    y = bunch.target
    if task == "classification":
        y = np.asarray(bunch.target_names)[y]
    return _Data(X=np.asarray(bunch.data, dtype=float), y=np.asarray(y), feature_names=list(bunch.feature_names),
                 target_name=target_name, description=f"{name} (scikit-learn dataset, target: {description})",
                 task=task, name=name)


def _read_rows(path):
    """The header and the non-blank rows (with their line numbers) of a CSV file."""
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
    return header, body


def _parse_float(text):
    try:
        return float(text)
    except ValueError:
        return None


def _parse_column(path, name, cells, lines, numeric=None, what="column"):
    """Parse one column's cells.

    Returns
    -------
    values : ndarray
        Floats (missing cells NaN) if every present cell is a number (or if
        ``numeric`` is True), else objects (str, missing cells NaN).
    n_missing : int
    """
    missing = [cell.lower() in _MISSING for cell in cells]
    numbers = [None if gone else _parse_float(cell) for cell, gone in zip(cells, missing, strict=True)]
    if numeric is None:
        numeric = all(value is not None for value, gone in zip(numbers, missing, strict=True) if not gone)
    if not numeric:
        return np.array([np.nan if gone else cell for cell, gone in zip(cells, missing, strict=True)],
                        dtype=object), sum(missing)
    for cell, value, gone, line in zip(cells, numbers, missing, lines, strict=True):
        if gone:
            continue
        if value is None:
            raise _InputError(f"column {name!r} is not numeric ({path}, line {line}: {cell!r}), but the model "
                              "was fitted on numbers")
        if not math.isfinite(value):
            if cell.lower().lstrip("+-") in _INFINITIES:
                raise _InputError(f"{what} {name!r} has a non-finite value ({path}, line {line}: {cell!r})")
            raise _InputError(f"{what} {name!r} holds {cell} ({path}, line {line}), beyond the range of "
                              "floating-point numbers (about ±1.8e308); rescale the column")
    return np.array([np.nan if value is None else value for value in numbers]), sum(missing)


def _column_index(path, header, name, option):
    matches = [j for j, column in enumerate(header) if column == name]
    if not matches:
        raise _InputError(f"{option} {name!r} is not a column of {path}; columns: "
                          + ", ".join(repr(column) for column in header))
    if len(matches) > 1:
        raise _InputError(f"{option} {name!r}: {path} has {len(matches)} columns of that name")
    return matches[0]


def _read_csv(path, target, drop):
    """Read a CSV file with the csv module: numeric and text features, the target."""
    header, body = _read_rows(path)
    lines = [line for line, _ in body]
    target_index = len(header) - 1 if target is None else _column_index(path, header, target, "--target")
    dropped = {_column_index(path, header, name, "--drop") for name in drop}
    if target_index in dropped:
        raise _InputError(f"the target column {header[target_index]!r} cannot be dropped")
    feature_indices = [j for j in range(len(header)) if j != target_index and j not in dropped]
    if not feature_indices:
        raise _InputError(f"{path} has no feature columns besides the target {header[target_index]!r}")

    n_rows = len(body)
    columns, text_columns, missing = [], [], {}
    for j in feature_indices:
        name = header[j]
        cells = [row[j].strip() for _, row in body]
        values, n_missing = _parse_column(path, name, cells, lines)
        if n_missing == n_rows:
            raise _InputError(f"column {name!r} has no value (every cell is missing); --drop it")
        if n_missing:
            missing[name] = n_missing
        if values.dtype == object:
            present = [(cell, line) for cell, line in zip(cells, lines, strict=True) if cell.lower() not in _MISSING]
            distinct = len({cell for cell, _ in present})
            if distinct > n_rows / 2:
                first_text = next((cell, line) for cell, line in present if _parse_float(cell) is None)
                raise _InputError(
                    f"column {name!r} holds text ({path}, line {first_text[1]}: {first_text[0]!r}) with "
                    f"{distinct} distinct values in {n_rows} rows: too many categories to one-hot encode. "
                    f"If it is an identifier, use --drop {name!r}; if it should be numeric, fix that cell")
            text_columns.append(name)
        columns.append(values)
    if text_columns:
        X = np.empty((n_rows, len(columns)), dtype=object)
        for jj, values in enumerate(columns):
            X[:, jj] = values
    else:
        X = np.column_stack(columns)

    target_name = header[target_index]
    cells = [row[target_index].strip() for _, row in body]
    absent = [line for cell, line in zip(cells, lines, strict=True) if cell.lower() in _MISSING]
    if absent:
        raise _InputError(f"the target column {target_name!r} has {len(absent)} missing value(s) "
                          f"(first at line {absent[0]} of {path}); remove those rows")
    y, _ = _parse_column(path, target_name, cells, lines, what="the target column")
    return _Data(X=X, y=y, feature_names=[header[j] for j in feature_indices], target_name=target_name,
                 description=path, text_columns=text_columns, missing=missing, name=os.path.basename(path))


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
        Why, and how to ask for the other task, for the output.
    """
    values = _numeric(y)
    if values is None:
        return "classification", "the target is not numeric"
    distinct = np.unique(values)
    integers = bool(np.all(distinct == np.round(distinct)))
    if distinct.size == 1:  # refused as a constant target
        return "regression", "the target has a single value"
    if integers and distinct.size <= _MAX_AUTO_CLASSES and distinct.size < values.size / 2:
        return "classification", (f"the target has {distinct.size} distinct integer values, taken as class "
                                  "labels; use --task regression if they are counts or measurements")
    if integers and distinct.size <= _MAX_NOTED_CLASSES and distinct.size < values.size / 2:
        return "regression", (f"the target has {distinct.size} distinct integer values, more than "
                              f"{_MAX_AUTO_CLASSES}: taken as counts or measurements; use --task classification "
                              "if they are class labels")
    return "regression", f"the target is numeric with {distinct.size} distinct values"


def _prepare_target(y, task, target_name):
    """Convert the target for ``task``: floats for regression, labels for classification."""
    values = _numeric(y)
    if task == "regression":
        if values is None:
            example = next(value for value in y if _numeric(np.array([value], dtype=object)) is None)
            raise _InputError(f"regression needs a numeric target, but {target_name!r} holds {str(example)!r}; "
                              "use --task classification")
        if np.ptp(values) == 0:
            raise _InputError(f"the target {target_name!r} is constant ({values[0]:g} in every row): "
                              "there is nothing to model")
        return values
    if values is None:
        labels = np.asarray(y, dtype=str)
    elif not np.all(values == np.round(values)):
        raise _InputError(f"classification needs discrete labels, but {target_name!r} holds non-integer "
                          "numbers; use --task regression")
    else:
        labels = values.astype(np.int64)
    classes = np.unique(labels)
    if classes.size < 2:
        raise _InputError(f"classification needs at least 2 classes, but {target_name!r} holds only "
                          f"{str(classes[0])!r}")
    if classes.size > labels.size / 3:  # fewer than 3 samples per class on average: not labels
        raise _InputError(f"classification needs repeated labels, but {target_name!r} has {classes.size} distinct "
                          f"values in {labels.size} rows; use --task regression")
    return labels


def _check_magnitudes(data, y, task):
    """Refuse values whose squares summed over the data overflow floating point."""
    columns = [(name, data.X[:, j]) for j, name in enumerate(data.feature_names) if name not in data.text_columns]
    if task == "regression":
        columns.append((data.target_name, y))
    if not columns:
        return
    n_rows = data.X.shape[0]
    limit = math.sqrt(_SQUARE_SUM_LIMIT / (n_rows * len(columns)))
    for name, values in columns:
        largest = np.nanmax(np.abs(np.asarray(values, dtype=float)))
        if largest > limit:
            what = "the target" if name == data.target_name and task == "regression" else "column"
            raise _InputError(f"{what} {name!r} has values up to {largest:.3g} in magnitude; with {n_rows} rows "
                              f"and {len(columns)} numeric columns the fit's sums of squares overflow floating "
                              f"point above about {limit:.3g}: rescale the column (e.g. express it in other "
                              "units)")


def _check_folds(folds, y, task, n_samples):
    """Refuse a cross-validation whose folds cannot give the scores."""
    if not folds:
        return
    if folds > n_samples:
        raise _InputError(f"--cv {folds} needs at least {folds} samples; the data have {n_samples}")
    if task == "regression":
        if n_samples // folds < 2:
            raise _InputError(f"--cv {folds} on {n_samples} rows leaves test folds of {n_samples // folds} row; "
                              f"R^2 needs at least 2 rows per test fold: use --cv {n_samples // 2} or fewer, "
                              "or --cv 0 to skip cross-validation")
        return
    classes, counts = np.unique(y, return_counts=True)
    small = counts < folds
    if np.any(small):
        listed = ", ".join(f"{str(label)!r} ({count} row{'s' if count > 1 else ''})"
                           for label, count in zip(classes[small], counts[small], strict=True))
        fewest = int(counts.min())
        advice = (f"use --cv {fewest} or fewer" if fewest >= 2 else "remove that class's rows") + \
            ", or --cv 0 to skip cross-validation"
        raise _InputError(f"{folds}-fold stratified cross-validation needs at least {folds} rows of every class, "
                          f"so that each fold is trained and tested on all classes; class {listed} has fewer: "
                          f"{advice}")


def _check_writable(path, option):
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise _InputError(f"{option} {path}: is a directory")
    if not os.path.isdir(directory):
        raise _InputError(f"{option} {path}: the directory {directory} does not exist")


# -- output ----------------------------------------------------------------------


def _fmt(value):
    """Format a coefficient: fixed point, or exponent for very large or small values."""
    value = float(value)
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:.4f}"
    return f"{value:.4e}"


def _fmt_score(value):
    """Format a score: 4 decimals, or exponent for very large values."""
    return f"{value:.4f}" if abs(value) < 1e6 else f"{value:.4e}"


def _table(headers, rows):
    """Lines of a plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells):
        parts = [str(cells[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  " + "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(row) for row in rows]


def _json_value(value):
    """A JSON-ready Python value: numpy scalars converted, non-finite floats as None."""
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_value(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value if value is None or isinstance(value, str) else str(value)


class _Reporter:
    """Progress to standard error (unless quiet), warnings always; results are rendered at the end."""

    def __init__(self, quiet):
        self.quiet = quiet

    def progress(self, text):
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    @staticmethod
    def warn(text):
        print(f"warning: {text}", file=sys.stderr, flush=True)


def _distinct_warnings(caught):
    """Each distinct warning once, with how many times it occurred."""
    counts = {}
    for item in caught:
        key = f"{item.category.__name__}: {item.message}"
        counts[key] = counts.get(key, 0) + 1
    return [key + (f" [{count} times]" if count > 1 else "") for key, count in counts.items()]


def _k_summary(estimator, k_requested):
    """The ``k`` used and how it was chosen (criterion path when the estimator records one)."""
    support = np.asarray(estimator.support_)
    k = int(getattr(estimator, "k_", support.size))
    summary = {"value": k, "requested": k_requested, "criterion": None, "path": None}
    if k_requested is not None:
        summary["how"] = "--k"
    elif hasattr(estimator, "k_path_") and hasattr(estimator, "criterion_path_"):
        summary["how"] = "automatic"
        summary["criterion"] = str(getattr(estimator, "k_criterion_", "criterion"))
        summary["path"] = [{"k": int(kk), "criterion": float(c)}
                           for kk, c in zip(estimator.k_path_, estimator.criterion_path_, strict=True)]
    else:
        summary["how"] = "default"
    return summary


def _model_summary(estimator, names, sources):
    """Selected features (largest coefficient first) with coefficients, intercept, classes."""
    support = np.asarray(estimator.support_)
    coef = np.atleast_2d(np.asarray(estimator.coef_, dtype=float))  # (n_outputs, n_features)
    strength = np.linalg.norm(coef[:, support], axis=0)
    order = support[np.lexsort((support, -strength))]
    classes = getattr(estimator, "classes_", None)
    labels = None if classes is None else [_json_value(label) for label in classes]
    intercept = np.atleast_1d(np.asarray(estimator.intercept_, dtype=float))
    selected = []
    for j in order:
        if coef.shape[0] == 1:
            value = float(coef[0, j])
        else:
            value = {str(label): float(c) for label, c in zip(labels, coef[:, j], strict=True)}
        selected.append({"feature": names[j], "column": sources[j], "coef": value})
    return {
        "selected_features": selected,
        "intercept": float(intercept[0]) if intercept.size == 1
        else {str(label): float(b) for label, b in zip(labels, intercept, strict=True)},
        "classes": labels,
        "n_iter": int(estimator.n_iter_),
    }


def _check_fit(estimator):
    """Refuse a fit that is no usable model: non-finite numbers, or no feature selected.

    The target is not constant (checked before), so a model without any
    feature means the solver failed (e.g. diverged).
    """
    coef = np.asarray(estimator.coef_, dtype=float)
    intercept = np.asarray(estimator.intercept_, dtype=float)
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
        raise _FitError("the fit produced non-finite coefficients; see the warnings above")
    if np.asarray(estimator.support_).size == 0:
        raise _FitError("the fit selected no feature, so it is no model of the data; see the warnings above")


def _cross_validate(report, model, X, y, task, folds, seed, auto_k):
    """Cross-validated scores (scikit-learn scorers, one shared split) with a line per fold."""
    from sklearn.model_selection import KFold, StratifiedKFold, cross_validate

    if task == "regression":
        scores = _SCORES["regression"]
        splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    else:
        scores = _SCORES["binary" if np.unique(y).size == 2 else "multiclass"]
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    report.progress(f"Cross-validating ({folds} folds, seed {seed})...")
    result = cross_validate(model, X, y, cv=splitter, scoring={key: scorer for key, _, scorer, _ in scores},
                            error_score="raise", return_estimator=auto_k)
    summary = {}
    for key, label, _, sign in scores:
        values = sign * np.asarray(result[f"test_{key}"], dtype=float)
        undefined = np.flatnonzero(~np.isfinite(values)) + 1
        if undefined.size:
            raise _FitError(f"cross-validation gave no {label} in fold(s) {', '.join(map(str, undefined))} of "
                            f"{folds} (the score is undefined there); no score can be reported")
        summary[key] = {"name": label, "mean": float(values.mean()), "sd": float(values.std()),
                        "folds": values.tolist()}
    for fold in range(folds):
        parts = ", ".join(f"{label} {_fmt_score(summary[key]['folds'][fold])}" for key, label, _, _ in scores)
        report.progress(f"  fold {fold + 1}/{folds}: {parts} ({result['fit_time'][fold]:.2f} s)")
    k_per_fold = None
    if auto_k and all(hasattr(fitted[-1], "k_") for fitted in result["estimator"]):
        k_per_fold = [int(fitted[-1].k_) for fitted in result["estimator"]]
    return {"folds": folds, "seed": seed, "k_per_fold": k_per_fold, "scores": summary}


def _criterion_table(k_info):
    """Lines of the criterion table around the chosen k, the chosen row marked."""
    path = k_info["path"]
    ks = [entry["k"] for entry in path]
    values = np.array([entry["criterion"] for entry in path], dtype=float)
    centre = ks.index(k_info["value"]) if k_info["value"] in ks else int(np.nanargmin(values))
    lo, hi = max(0, centre - _PATH_CONTEXT), min(len(ks), centre + _PATH_CONTEXT + 1)
    lines = _table(["k", k_info["criterion"]], [[str(ks[i]), _fmt(values[i])] for i in range(lo, hi)])
    return [line + ("  <- chosen" if i >= 2 and ks[lo + i - 2] == k_info["value"] else "")  # 2 header lines
            for i, line in enumerate(lines)]


def _render_text(result):
    """The human-readable results."""
    lines = []
    data, k_info = result["data"], result["k"]
    lines.append(f"Data:   {data['source']}: {data['n_samples']} samples, {data['n_columns']} features, "
                 f"target {data['target']!r}")
    if data["text_columns"]:
        lines.append(f"        text columns one-hot encoded: {', '.join(data['text_columns'])}")
    if data["imputed"]:
        lines.append("        missing cells imputed: "
                     + ", ".join(f"{name} ({count})" for name, count in data["imputed"].items()))
    lines.append(f"Task:   {result['task']} ({result['task_reason']})")
    lines.append(f"Model:  {result['model']}")
    lines.append("")
    if k_info["how"] == "--k":
        lines.append(f"k = {k_info['value']} (--k {k_info['requested']})")
    elif k_info["how"] == "automatic":
        ks = [entry["k"] for entry in k_info["path"]]
        lines.append(f"k = {k_info['value']}: chosen automatically by {k_info['criterion']} (lower is better), "
                     f"evaluated at {len(ks)} values of k from {min(ks)} to {max(ks)}:")
        lines.append("")
        lines += _criterion_table(k_info)
    else:
        lines.append(f"k = {k_info['value']} (the estimator's default for k=None: this version of "
                     "sparse_estimators records no automatic choice of k; choose one with --k)")
    lines.append("")
    n_encoded = data["n_features"]
    encoded = (f" (the {data['n_columns']} columns give {n_encoded} after one-hot encoding)"
               if data["text_columns"] else "")
    lines.append(f"Selected features: {len(result['selected_features'])} of {n_encoded}{encoded}")
    scale_note = ("on the standardized scale (per standard deviation of the feature)" if result["scaled"]
                  else "in the units of the data")
    lines.append(f"Coefficients {scale_note}")
    classes = result["classes"]
    binary = classes is not None and not isinstance(result["intercept"], dict)
    if binary:
        lines.append(f"  positive class: {classes[1]} (a positive coefficient raises its log-odds)")
    lines.append("")
    headers = ["feature", "coef"] if classes is None or binary else ["feature"] + [str(c) for c in classes]
    rows = []
    for entry in result["selected_features"]:
        coef = entry["coef"]
        rows.append([entry["feature"]] + ([_fmt(coef)] if not isinstance(coef, dict)
                                          else [_fmt(coef[str(c)]) for c in classes]))
    lines += _table(headers, rows)
    lines.append("")
    intercept = result["intercept"]
    if isinstance(intercept, dict):
        lines.append("Intercept:  " + ", ".join(f"{label}: {_fmt(b)}" for label, b in intercept.items()))
    else:
        lines.append(f"Intercept:  {_fmt(intercept)}")
    lines.append(f"Iterations: {result['n_iter']}")
    cv = result["cv"]
    if cv is not None:
        lines.append("")
        k_note = ""
        if cv["k_per_fold"] is not None:
            k_note = f"; k chosen again in each fold: {', '.join(map(str, cv['k_per_fold']))}"
        lines.append(f"Cross-validated scores ({cv['folds']}-fold, shuffled with seed {cv['seed']}{k_note}):")
        lines.append("")
        lines += _table(["score", "mean", "sd"], [[score["name"], _fmt_score(score["mean"]), _fmt_score(score["sd"])]
                                                  for score in cv["scores"].values()])
    if result["saved_model"] or result["plot"]:
        lines.append("")
    if result["saved_model"]:
        lines.append(f"Model saved to {result['saved_model']} (joblib; predict with "
                     f"'{_prog_name()} predict {result['saved_model']} new.csv')")
    if result["plot"]:
        lines.append(f"Criterion plot saved to {result['plot']}")
    return "\n".join(lines)


def _save_plot(path, k_info, title):
    """Draw the criterion against k, the chosen k marked (matplotlib's object API: no global state)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    ks = [entry["k"] for entry in k_info["path"]]
    values = [entry["criterion"] for entry in k_info["path"]]
    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    axes.plot(ks, values, marker="o", markersize=3)
    axes.axvline(k_info["value"], color="tab:red", linestyle="--", label=f"chosen k = {k_info['value']}")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("k (number of features)")
    axes.set_ylabel(f"{k_info['criterion']} (lower is better)")
    axes.set_title(title)
    axes.legend()
    try:
        figure.savefig(path, dpi=100)
    except (OSError, ValueError) as exc:
        raise _InputError(f"--plot {path}: cannot write the figure: {exc}") from None


# -- fit mode --------------------------------------------------------------------


def _check_options(args):
    """Checks of the options that need no data (before the possibly long fit)."""
    if args.csv is not None and args.dataset is not None:
        raise _InputError("give either a CSV file or --dataset, not both")
    if args.csv is None and (args.target is not None or args.drop):
        raise _InputError("--target and --drop apply to a CSV file only")
    if args.output is not None:
        _check_writable(args.output, "--output")
    if args.plot is not None:
        if args.k is not None:
            raise _InputError(f"--plot draws the automatic choice of k; it cannot be combined with --k {args.k}")
        _check_writable(args.plot, "--plot")
        try:
            import matplotlib.figure  # noqa: F401
        except ImportError:
            raise _InputError("--plot needs matplotlib, which is not installed (pip install matplotlib)") from None


def _run_fit(args, report, caught):
    """Fit, check, cross-validate, save; return the results (a JSON-ready dict)."""
    _check_options(args)
    data = _read_csv(args.csv, args.target, args.drop) if args.csv is not None \
        else _load_dataset(args.dataset or "diabetes")
    if data.missing and not args.impute:
        name, count = next(iter(data.missing.items()))
        others = f" (and {len(data.missing) - 1} other column(s))" if len(data.missing) > 1 else ""
        raise _InputError(f"column {name!r} has {count} missing value(s){others}; fill or remove them, --drop "
                          "the column, or use --impute to replace them by the column's median (numeric) or most "
                          "frequent value (text)")

    if args.task != "auto":
        task, reason = args.task, "--task"
    elif data.task is not None:
        task, reason = data.task, "the dataset's task"
    else:
        task, reason = _infer_task(data.y)
    y = _prepare_target(data.y, task, data.target_name)
    n_samples = data.X.shape[0]
    _check_magnitudes(data, y, task)
    _check_folds(args.cv, y, task, n_samples)

    estimator_class = _estimator_class(args.method, task)
    if estimator_class is None:
        name = _METHOD_PREFIXES[args.method] + _TASK_SUFFIXES[task]
        raise _InputError(f"--method {args.method} has no {task} estimator ({name}) in this version of "
                          "sparse_estimators")
    params = {"k": args.k, "thresholding": args.thresholding}
    if args.max_iter is not None:
        params["max_iter"] = args.max_iter
    model, model_text = _build_model(data, estimator_class(**params), args.scale, args.impute)

    report.progress(f"Fitting {estimator_class.__name__} on {n_samples} samples...")
    model.fit(data.X, y)
    estimator = model[-1]
    names, sources = _encoded_features(model)
    k_info = _k_summary(estimator, args.k)
    _check_fit(estimator)
    if args.plot is not None and k_info["path"] is None:
        raise _FitError(f"--plot: {type(estimator).__name__} records no criterion path (k_path_, "
                        "criterion_path_): this version of sparse_estimators does not choose k automatically")
    result = {
        "data": {"source": data.description, "n_samples": n_samples, "n_columns": len(data.feature_names),
                 "n_features": len(names), "target": data.target_name, "text_columns": list(data.text_columns),
                 "imputed": dict(data.missing)},
        "task": task, "task_reason": reason, "model": model_text, "method": args.method,
        "scaled": bool(args.scale), "k": k_info,
        **_model_summary(estimator, names, sources),
        "cv": None, "saved_model": None, "plot": None, "warnings": [],
    }
    if args.cv:
        result["cv"] = _cross_validate(report, model, data.X, y, task, args.cv, args.seed, args.k is None)
    if args.plot is not None:
        _save_plot(args.plot, k_info, f"{type(estimator).__name__} on {data.name}")
        result["plot"] = args.plot
    if args.output is not None:
        import joblib

        try:
            joblib.dump(model, args.output)
        except OSError as exc:
            raise _InputError(f"--output {args.output}: cannot write: {exc}") from None
        result["saved_model"] = args.output
    result["warnings"] = _distinct_warnings(caught)
    return result


# -- predict mode ----------------------------------------------------------------


def _load_model(path):
    if not os.path.exists(path):
        raise _InputError(f"model file not found: {path}")
    import joblib

    try:
        model = joblib.load(path)
    except Exception as exc:  # a file of another kind fails in many ways (pickle, EOF, import...)
        raise _InputError(f"cannot load {path} as a saved model: {type(exc).__name__}: {exc}") from None
    steps = getattr(model, "named_steps", {})
    if not isinstance(steps.get("columns"), _TableColumns) or "preprocess" not in steps:
        raise _InputError(f"{path} is not a model saved by '{_prog_name()} --output'")
    return model


def _run_predict(args, report, caught):
    """Predict the rows of a CSV file; return the output rows (header first)."""
    from sklearn.base import is_classifier

    if args.output is not None:
        _check_writable(args.output, "--output")
    model = _load_model(args.model)
    table = model.named_steps["columns"]
    header, body = _read_rows(args.csv)
    lines = [line for line, _ in body]
    absent = [name for name in table.feature_names if name not in header]
    if absent:
        raise _InputError(f"{args.csv} lacks the model's feature column(s) "
                          + ", ".join(repr(name) for name in absent))
    ignored = [name for name in header if name not in table.feature_names]
    if ignored:
        report.progress("Ignoring the column(s) " + ", ".join(repr(name) for name in ignored))
    text = set(table.text_columns)
    X = np.empty((len(body), len(table.feature_names)), dtype=object)
    missing = {}
    for jj, name in enumerate(table.feature_names):
        j = _column_index(args.csv, header, name, "column")
        cells = [row[j].strip() for _, row in body]
        X[:, jj], n_missing = _parse_column(args.csv, name, cells, lines, numeric=name not in text)
        if n_missing:
            missing[name] = n_missing
    if missing and not _imputes(model):
        name, count = next(iter(missing.items()))
        raise _InputError(f"column {name!r} of {args.csv} has {count} missing value(s); the model was fitted "
                          "without --impute, so it cannot predict rows with missing cells")
    _report_unknown_categories(report, model, X, lines)

    n_rows = X.shape[0]
    report.progress(f"Predicting {n_rows} rows with {type(model[-1]).__name__} ({args.model})...")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Found unknown categories")  # reported above, by column name
        predictions = model.predict(X)
        probabilities = model.predict_proba(X) if is_classifier(model) else None
    target = table.target_name or "prediction"
    if probabilities is None:
        values = np.asarray(predictions, dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise _FitError(f"the prediction is not finite for {bad.size} row(s) (first at line {lines[bad[0]]} of "
                            f"{args.csv}): values far beyond the training data's range?")
        rows = [[target]] + [[repr(float(value))] for value in values]
    else:
        classes = list(model[-1].classes_)
        rows = [[target] + [f"proba_{label}" for label in classes]]
        rows += [[str(label)] + [repr(float(p)) for p in row]
                 for label, row in zip(predictions, probabilities, strict=True)]
    if args.output is not None:
        _write_rows(rows, args.output)
        report.progress(f"Predictions of {len(rows) - 1} rows written to {args.output}")
    return rows


def _report_unknown_categories(report, model, X, lines):
    """Say, by column and value, which text cells the model has never seen (their dummies are all 0)."""
    from sklearn.preprocessing import OneHotEncoder

    table = model.named_steps["columns"]
    for name, transformer, indices in model.named_steps["preprocess"].transformers_:
        encoders = [step for _, step in getattr(transformer, "steps", []) if isinstance(step, OneHotEncoder)]
        if name != "text" or not encoders:
            continue
        for j, categories in zip(indices, encoders[0].categories_, strict=True):
            known = set(categories.tolist())
            unknown = [(value, line) for value, line in zip(X[:, j], lines, strict=True)
                       if isinstance(value, str) and value not in known]
            if unknown:
                report.warn(f"column {table.feature_names[j]!r}: {len(unknown)} row(s) hold a category not seen "
                            f"in training (first {unknown[0][0]!r}, line {unknown[0][1]}); it is encoded as none "
                            "of the known categories")


def _write_rows(rows, path):
    if path is None:
        csv.writer(sys.stdout, lineterminator="\n").writerows(rows)
        return
    try:
        with open(path, "w", newline="") as handle:
            csv.writer(handle, lineterminator="\n").writerows(rows)
    except OSError as exc:
        raise _InputError(f"--output {path}: cannot write: {exc}") from None


# -- main ------------------------------------------------------------------------


def main(argv=None):
    """Run the command-line interface.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments, without the program name; None reads ``sys.argv``.
        A first argument ``predict`` selects the predict mode.

    Returns
    -------
    int
        Exit status: 0 on success, 2 for invalid options or input data
        (message on standard error), 1 when the fit, the cross-validation
        or the prediction fails or gives nothing usable.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    predict = bool(argv) and argv[0] == "predict"
    parser = _build_predict_parser() if predict else build_parser()
    try:
        args = parser.parse_args(argv[1:] if predict else argv)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        if predict and exc.code and os.path.isfile("predict"):
            print(f"(to fit the CSV file 'predict' of this directory, write '{_prog_name()} ./predict')",
                  file=sys.stderr)
        return exc.code if isinstance(exc.code, int) else 2
    report = _Reporter(args.quiet)
    start = time.perf_counter()
    status = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            output = (_run_predict if predict else _run_fit)(args, report, caught)
        except _InputError as exc:
            message, status = str(exc), 2
        except (_FitError, ValueError) as exc:  # ValueError: raised by the estimators or the scorers
            message, status = str(exc), 1
    for text in _distinct_warnings(caught):  # even with --quiet
        print(text, file=sys.stderr, flush=True)
    if status:
        print(f"{parser.prog}: error: {message}", file=sys.stderr, flush=True)
        return status
    if predict:
        if args.output is None:
            _write_rows(output, None)
    elif args.json:
        print(json.dumps(_json_value(output), indent=2, allow_nan=False), flush=True)
    else:
        print(_render_text(output), flush=True)
    report.progress(f"Done in {time.perf_counter() - start:.2f} s.")
    return 0
