"""Output of the command line: text, JSON, CSV rows, progress messages and the criterion plot."""

import csv
import math
import os
import sys

import numpy as np

from .. import _policy
from ._args import _prog_name
from ._errors import _InputError

# Rows of the criterion table on each side of the chosen k.


def _fmt(value):
    """Format a coefficient: fixed point, or exponent for very large or small values."""
    value = float(value)
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:.4f}"
    return f"{value:.4e}"


def _fmt_column(values, digits=6):
    """Format a column of predictions alike: fixed point, ``digits`` significant digits of its largest value.

    The same number of decimals on every row; more digits than this say
    nothing about a model fitted on noisy data.
    """
    values = np.asarray(values, dtype=float)
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    magnitude = math.floor(math.log10(largest)) if largest > 0 else 0
    decimals = max(0, digits - 1 - magnitude)
    return [f"{round(value, decimals) or 0.0:.{decimals}f}" for value in values]  # (no "-0.000")


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


def _criterion_window(k_info):
    """Indices ``lo, hi`` of the path's rows the text shows: up to ``_policy.PATH_CONTEXT`` each side of chosen k."""
    ks = [entry["k"] for entry in k_info["path"]]
    values = np.array([entry["criterion"] for entry in k_info["path"]], dtype=float)
    centre = ks.index(k_info["value"]) if k_info["value"] in ks else int(np.nanargmin(values))
    return max(0, centre - _policy.PATH_CONTEXT), min(len(ks), centre + _policy.PATH_CONTEXT + 1)


def _criterion_table(k_info):
    """Lines of the criterion table around the chosen k, the chosen row marked."""
    path = k_info["path"]
    ks = [entry["k"] for entry in path]
    values = np.array([entry["criterion"] for entry in path], dtype=float)
    lo, hi = _criterion_window(k_info)
    lines = _table(["k", k_info["criterion"]], [[str(ks[i]), _fmt(values[i])] for i in range(lo, hi)])
    return [line + ("  <- chosen" if i >= 2 and ks[lo + i - 2] == k_info["value"] else "")  # 2 header lines
            for i, line in enumerate(lines)]


def _coefficient_rows(entries, key, classes):
    """Table rows: the feature, then its coefficient (one per class for a multiclass model)."""
    rows = []
    for entry in entries:
        coef = entry[key]
        rows.append([entry["feature"]] + ([_fmt(coef)] if not isinstance(coef, dict)
                                          else [_fmt(coef[str(c)]) for c in classes]))
    return rows


def _fmt_intercept(intercept):
    if isinstance(intercept, dict):
        return ", ".join(f"{label}: {_fmt(b)}" for label, b in intercept.items())
    return _fmt(intercept)


def _render_text(result):
    """The human-readable results."""
    lines = []
    data, k_info = result["data"], result["k"]
    grouped = data.get("grouped", False)
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
        lo, hi = _criterion_window(k_info)
        shown = ":" if hi - lo == len(ks) else (f"; below, the {hi - lo} values around the chosen k "
                                                f"(--json or --plot give them all):")
        lines.append(f"k = {k_info['value']}: chosen automatically by {k_info['criterion']} (lower is "
                     f"better), evaluated at {len(ks)} values of k from {min(ks)} to {max(ks)}{shown}")
        lines.append("")
        lines += _criterion_table(k_info)
    else:
        lines.append(f"k = {k_info['value']} (the estimator's default for k=None: this version of "
                     "sparse_estimators records no automatic choice of k; choose one with --k)")
    if grouped:
        lines += [""] if k_info["how"] == "automatic" else []
        lines.append("k counts variables: a text column's one-hot columns are selected together and count once "
                     "(--count columns counts each column)")
    lines.append("")
    n_encoded = data["n_features"]
    encoded = (f" (the {data['n_columns']} columns give {n_encoded} after one-hot encoding)"
               if data["text_columns"] else "")
    variables = (f", from {len(result['selected_variables'])} of the {data['n_variables']} variables: "
                 + ", ".join(result["selected_variables"]) if grouped else "")
    lines.append(f"Selected features: {len(result['selected_features'])} of {n_encoded}{encoded}{variables}")
    reference = data.get("reference_categories") or {}
    if reference:
        lines.append("A dummy column's coefficient is relative to its column's reference category: "
                     + ", ".join(f"{name} = {value}" for name, value in reference.items()))
    original = result.get("intercept_original") is not None
    classes = result["classes"]
    binary = classes is not None and not isinstance(result["intercept"], dict)
    single = classes is None or binary
    if not result["scaled"]:
        lines.append("Coefficients in the units of the data")
    elif original:
        where = "'original'" if single else "the second table"
        lines.append(f"Coefficients on the standardized scale (per standard deviation of the feature); {where}: "
                     "per unit of the feature (the scaling undone)")
    else:
        lines.append("Coefficients on the standardized scale (per standard deviation of the feature)")
    if binary:
        lines.append(f"  positive class: {classes[1]} (a positive coefficient raises its log-odds)")
    lines.append("")
    headers = ["feature", "coef"] if single else ["feature"] + [str(c) for c in classes]
    rows = _coefficient_rows(result["selected_features"], "coef", classes)
    if original and single:  # the original scale as a third column
        headers.append("original")
        rows = [row + [_fmt(entry["coef_original"])] for row, entry in zip(rows, result["selected_features"],
                                                                            strict=True)]
    lines += _table(headers, rows)
    if original and not single:  # one coefficient per class: a second table
        lines += ["", "Coefficients on the original scale (per unit of the feature):", ""]
        lines += _table(headers, _coefficient_rows(result["selected_features"], "coef_original", classes))
    lines.append("")
    lines.append(f"Intercept:  {_fmt_intercept(result['intercept'])}")
    if original:
        lines.append(f"Intercept on the original scale:  {_fmt_intercept(result['intercept_original'])}")
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
        # (without an extension, PNG under the name given: matplotlib would append ".png" to the reported name)
        figure.savefig(path, dpi=100, format=None if os.path.splitext(path)[1] else "png")
    except (OSError, ValueError) as exc:
        raise _InputError(f"--plot {path}: cannot write the figure: {exc}") from None


def _write_rows(rows, path):
    if path is None:
        csv.writer(sys.stdout, lineterminator="\n").writerows(rows)
        return
    try:
        with open(path, "w", newline="") as handle:
            csv.writer(handle, lineterminator="\n").writerows(rows)
    except OSError as exc:
        raise _InputError(f"--output {path}: cannot write: {exc}") from None
