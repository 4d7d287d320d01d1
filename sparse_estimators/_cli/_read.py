"""Reading the command line's data: CSV files and built-in datasets, the target and its task, checks."""

import csv
import math
import os
from dataclasses import dataclass, field

import numpy as np

from .. import _policy
from ._errors import _InputError

#: Built-in datasets: name -> (loader in sklearn.datasets, task, target column name, target description).
_DATASETS = {
    "diabetes": ("load_diabetes", "regression", "progression", "disease progression one year after baseline"),
    "breast_cancer": ("load_breast_cancer", "classification", "diagnosis", "diagnosis"),
    "wine": ("load_wine", "classification", "cultivar", "cultivar"),
}


# Auto task detection: an integer-valued target with at most this many
# distinct values (and fewer than half the rows) is taken as class labels;
# more distinct integers are more likely counts or scores than classes.


# Up to this many distinct integers (the rule of earlier versions) the output
# says how to ask for a classification instead.


_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})


_INFINITIES = frozenset({"inf", "infinity"})


# Largest n_rows * n_columns * max|value|^2 accepted: the fit sums squares and
# products of the values, which overflow float64 (1.8e308) not far above this.


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


def _is_missing(value):
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().lower() in _MISSING
    try:
        return bool(np.isnan(value))
    except TypeError:
        return False


def _load_dataset(name):
    """Load a built-in scikit-learn dataset, with class names as labels."""
    import sklearn.datasets

    loader, task, target_name, description = _DATASETS[name]
    bunch = getattr(sklearn.datasets, loader)()
    y = bunch.target
    if task == "classification":
        y = np.asarray(bunch.target_names)[y]
    # (str: scikit-learn's names are NumPy strings, which error messages would show as np.str_('...'))
    return _Data(X=np.asarray(bunch.data, dtype=float), y=np.asarray(y),
                 feature_names=[str(name) for name in bunch.feature_names], target_name=target_name,
                 description=f"{name} (scikit-learn dataset, target: {description})", task=task, name=name)


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
    used = [header[j] for j in feature_indices + [target_index]]
    repeated = sorted({name for name in used if used.count(name) > 1})
    if repeated:  # (the output, the saved model and the predict mode find columns by name)
        raise _InputError(f"{path} has several columns named " + ", ".join(repr(name) for name in repeated)
                          + "; rename them in the header")

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
    if integers and distinct.size <= _policy.MAX_AUTO_CLASSES and distinct.size < values.size / 2:
        return "classification", (f"the target has {distinct.size} distinct integer values, taken as class "
                                  "labels; use --task regression if they are counts or measurements")
    if integers and distinct.size <= _policy.MAX_NOTED_CLASSES and distinct.size < values.size / 2:
        return "regression", (f"the target has {distinct.size} distinct integer values, more than "
                              f"{_policy.MAX_AUTO_CLASSES}: taken as counts or measurements; use --task classification "
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
    elif np.all(np.abs(values) < 2.0 ** 63):
        labels = values.astype(np.int64)
    else:  # (beyond int64, a cast turned the labels into -2**63; scikit-learn takes such floats for continuous)
        labels = np.array([np.format_float_positional(value, trim="-") for value in values])
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
    limit = math.sqrt(_policy.SQUARE_SUM_LIMIT / (n_rows * len(columns)))
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
            # (--cv 1 is no cross-validation: below 4 rows, --cv 0 is the only advice)
            advice = f"use --cv {n_samples // 2} or fewer, or --cv 0" if n_samples >= 4 else "use --cv 0"
            raise _InputError(f"--cv {folds} on {n_samples} rows leaves test folds of {n_samples // folds} row; "
                              f"R^2 needs at least 2 rows per test fold: {advice} to skip cross-validation")
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
