"""Argument parsers of the command line's fit and predict modes."""

import argparse
import os
import sys

from .. import _policy
from ._pipeline import available_methods
from ._read import _DATASETS

_THRESHOLDINGS = ("hard", "soft", "reciprocal", "lq")


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


def _seed(text):
    """``--seed``: an integer NumPy accepts as a random state, 0 to 2**32 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value < 2 ** 32:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**32 - 1 = {2 ** 32 - 1}, got {text!r}")
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
        ``count``, ``max_iter``, ``scale``, ``cv``, ``seed``, ``output``, ``json``,
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
                            f"{_policy.MAX_AUTO_CLASSES} distinct integer values, else regression (default: auto)")
    model.add_argument("--method", choices=methods, default="iht",
                       help="algorithm: the estimator families of the installed package (default: iht)")
    model.add_argument("--k", type=_k_value, default=None, metavar="{N,auto}",
                       help="number of features to select; 'auto' (the default) lets the estimator choose k "
                            "and prints how")
    model.add_argument("--count", choices=("variables", "columns"), default="variables",
                       help="what k counts when a text column is one-hot encoded: 'variables' (the default) "
                            "selects or drops a text column's dummy columns together, 'columns' counts each "
                            "encoded column")
    model.add_argument("--thresholding", choices=_THRESHOLDINGS, default="hard",
                       help="thresholding operator (default: hard)")
    model.add_argument("--max-iter", type=_positive_int, default=None, metavar="N",
                       help="maximum number of iterations (default: the estimator's)")
    model.add_argument("--no-scale", dest="scale", action="store_false",
                       help="do not standardise the features before fitting")
    evaluation = parser.add_argument_group("evaluation")
    evaluation.add_argument("--cv", type=_cv_folds, default=5, metavar="FOLDS",
                            help="number of cross-validation folds, 0 to skip (default: 5)")
    evaluation.add_argument("--seed", type=_seed, default=0,
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
        epilog=f"The CSV file needs the columns the model uses (found by name; other columns are ignored). "
               "Predictions are written with 6 significant digits of the column's largest value. "
               f"'predict' selects this mode only as the first argument: to fit a CSV file named 'predict', "
               f"write '{prog} ./predict'.",
    )
    parser.add_argument("model", metavar="MODEL", help="a file written by --output")
    parser.add_argument("csv", metavar="CSV", help="CSV file with a header row and the columns the model uses")
    parser.add_argument("--id", metavar="COLUMN",
                        help="copy this column (e.g. an identifier) to the output, as its first column")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the predictions to FILE instead of standard output")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress messages on standard error")
    return parser
