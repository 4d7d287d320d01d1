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
    sparse-estimators predict model.joblib new.csv --id name --output predictions.csv

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
by which criterion and shows the criterion for up to 3 values of ``k`` each
side of the chosen one (``--json`` gives the whole path), and ``--plot FILE``
draws the criterion against ``k`` (needs matplotlib). ``--k N`` forces ``N``;
an ``N`` above the number of variables (or encoded columns) is an error.
Cross-validation refits the whole procedure in each fold, so with the
automatic choice ``k`` is chosen again in each training fold.

**Task.** ``--task auto`` (the default) fits a classification when the
target is not numeric, or when it holds at most 5 distinct integer values
(and fewer than half the rows); any other numeric target, integer counts
included, is fitted as a regression. The output says which task was used and
why, and how to ask for the other one with ``--task``.

**Features.** Numeric columns are standardised (``StandardScaler``) unless
``--no-scale`` is given, since the estimators select features by coefficient
magnitude; the coefficients are then printed per standard deviation and, in
a column ``original``, per unit of the feature (the scaling undone, with the
intercept on that scale). A column with text is one-hot encoded
(``OneHotEncoder``: a 0/1 column per category, one column for a
two-category column; the categories are those of the whole file, so every
cross-validation fold has the same columns), the dummy columns standardised
like the others, and printed by their encoded names (``city_Paris``).

**What k counts.** By default (``--count variables``) ``k`` counts the
table's variables: the dummy columns of a text column with more than two
categories form one group of the estimator's ``groups``, selected or
dropped together, and the first category is dropped (its dummies and the
intercept would be collinear): the other dummies' coefficients are relative
to that reference category, which the output names. ``--count columns``
counts the encoded columns instead, each dummy selected on its own. A text column
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

**Predict mode.** The new CSV file needs only the columns the model uses
(those with a non-zero coefficient); the others, present or not, are
ignored. ``--id COLUMN`` copies a column (e.g. an identifier) to the output
as its first column. Predictions and probabilities are written in fixed
point with 6 significant digits of the column's largest value (the same
number of decimals on every row).

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
fails or produces nothing usable (no feature selected, an undefined score),
141 (as for a tool stopped by a closed pipe) without a message when standard
output closes before the results are written (``| head``).
Nothing is written to standard output unless the run succeeds.
"""

import json
import os
import sys
import time
import warnings

# Re-exported: the saved models pickle _TableColumns under this module's name (and the tests use these names).
from ._args import _build_predict_parser, _prog_name, build_parser
from ._errors import _FitError, _InputError
from ._pipeline import _METHOD_PREFIXES, _TableColumns, available_methods  # noqa: F401
from ._read import _infer_task  # noqa: F401
from ._render import _criterion_table, _distinct_warnings, _json_value, _render_text, _Reporter, _write_rows  # noqa: F401
from ._run import _SCORES, _run_fit, _run_predict  # noqa: F401

__all__ = ["build_parser", "main"]

# Exit status when standard output is closed before the results are written (128 + SIGPIPE, as a shell reports
# for a tool that a closed pipe stopped).
_STATUS_CLOSED_PIPE = 141


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
    try:
        if predict:
            if args.output is None:
                _write_rows(output, None)
                sys.stdout.flush()
        elif args.json:
            print(json.dumps(_json_value(output), indent=2, allow_nan=False), flush=True)
        else:
            print(_render_text(output), flush=True)
    except BrokenPipeError:  # the reader stopped early (``| head``): stop quietly, as other command-line tools
        _discard_stdout()
        return _STATUS_CLOSED_PIPE
    report.progress(f"Done in {time.perf_counter() - start:.2f} s.")
    return 0


def _discard_stdout():
    """Point standard output at the null device, so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (e.g. a captured stream)
        pass
