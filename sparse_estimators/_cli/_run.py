"""The command line's two modes: fit (and cross-validate, save) and predict."""

import os
import warnings

import numpy as np

from ._args import _prog_name
from ._errors import _FitError, _InputError
from ._pipeline import (
    _METHOD_PREFIXES,
    _TASK_SUFFIXES,
    _build_model,
    _encoded_features,
    _estimator_class,
    _grouped,
    _imputes,
    _known_categories,
    _layout,
    _reference_categories,
    _scaling,
    _TableColumns,
    _used_columns,
)
from ._read import (
    _check_folds,
    _check_magnitudes,
    _check_writable,
    _column_index,
    _infer_task,
    _is_missing,
    _load_dataset,
    _parse_column,
    _prepare_target,
    _read_csv,
    _read_rows,
)
from ._render import _distinct_warnings, _fmt_column, _fmt_score, _json_value, _save_plot, _write_rows

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


def _model_summary(estimator, names, sources, scaling=None):
    """Selected features (largest coefficient first) with coefficients, intercept, classes.

    With ``scaling`` (the ``StandardScaler``'s mean and scale per encoded
    column), also the coefficients and intercept on the original scale: per
    unit of the feature, the scaling undone.
    """
    support = np.asarray(estimator.support_)
    coef = np.atleast_2d(np.asarray(estimator.coef_, dtype=float))  # (n_outputs, n_features)
    intercept = np.atleast_1d(np.asarray(estimator.intercept_, dtype=float))
    original = None
    if scaling is not None:
        mean, scale = scaling
        # coef . (x - mean) / scale + b  =  (coef / scale) . x + (b - (coef / scale) . mean)
        original = coef / scale
        intercept_original = intercept - original @ mean
    strength = np.linalg.norm(coef[:, support], axis=0)
    order = support[np.lexsort((support, -strength))]
    classes = getattr(estimator, "classes_", None)
    labels = None if classes is None else [_json_value(label) for label in classes]

    def per_output(values):
        if coef.shape[0] == 1:
            return float(values[0])
        return {str(label): float(c) for label, c in zip(labels, values, strict=True)}

    selected = []
    for j in order:
        entry = {"feature": names[j], "column": sources[j], "coef": per_output(coef[:, j])}
        if original is not None:
            entry["coef_original"] = per_output(original[:, j])
        selected.append(entry)
    variables = list(dict.fromkeys(entry["column"] for entry in selected))
    return {
        "selected_features": selected,
        "selected_variables": variables,
        "intercept": per_output(intercept),
        "intercept_original": None if original is None else per_output(intercept_original),
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


def _check_training_folds(X, y, splitter, names):
    """Refuse imputed text columns ``names`` (name -> index) that have no value in some training fold.

    The imputer would learn nothing there and drop the column, so that fold's encoding no longer
    matches the others (scikit-learn then failed with an unrelated message). (Numeric columns are
    kept as zeros there.)
    """
    observed = {name: np.array([not _is_missing(value) for value in X[:, j]]) for name, j in names.items()}
    for fold, (train, _) in enumerate(splitter.split(X, y), start=1):
        for name, present in observed.items():
            if not present[train].any():
                raise _InputError(f"column {name!r} has {int(present.sum())} value(s) in {present.size} rows, none "
                                  f"in the training rows of cross-validation fold {fold}, so --impute has nothing "
                                  f"to learn there: --drop the column, fill it, or use --cv 0")


def _cross_validate(report, model, X, y, task, folds, seed, auto_k, missing=None):
    """Cross-validated scores (scikit-learn scorers, one shared split) with a line per fold.

    ``missing``: the imputed columns (name -> index in ``X``), checked against the training folds.
    """
    from sklearn.model_selection import KFold, StratifiedKFold, cross_validate

    if task == "regression":
        scores = _SCORES["regression"]
        splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    else:
        scores = _SCORES["binary" if np.unique(y).size == 2 else "multiclass"]
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    if missing:
        _check_training_folds(X, y, splitter, missing)
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
    sources = _layout(data, args.count)
    grouped = _grouped(data, args.count)
    n_units = len(set(sources)) if grouped else len(sources)
    if args.k is not None and args.k > n_units:
        what = (f"{n_units} variables (a text column counts once; --count columns counts its {len(sources)} "
                "encoded columns)" if grouped else
                f"{n_units} features" + (" after one-hot encoding" if data.text_columns else ""))
        raise _InputError(f"--k {args.k} is more than the data have: {what}; use --k {n_units} or fewer, or "
                          "--k auto")
    model, model_text = _build_model(data, estimator_class(**params), args.scale, args.impute, args.count)

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
                 "imputed": dict(data.missing), "n_variables": len(set(sources)),
                 "count": args.count, "grouped": grouped,
                 "reference_categories": _reference_categories(model)},
        "task": task, "task_reason": reason, "model": model_text, "method": args.method,
        "scaled": bool(args.scale), "k": k_info,
        **_model_summary(estimator, names, sources, _scaling(model) if args.scale else None),
        "cv": None, "saved_model": None, "plot": None, "warnings": [],
    }
    if args.cv:
        imputed = {name: data.feature_names.index(name) for name in data.missing if name in data.text_columns}
        result["cv"] = _cross_validate(report, model, data.X, y, task, args.cv, args.seed, args.k is None, imputed)
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
    used = _used_columns(model)
    absent = [name for name in used if name not in header]
    if absent:
        raise _InputError(f"{args.csv} lacks the column(s) the model uses: "
                          + ", ".join(repr(name) for name in absent))
    ids = None
    if args.id is not None:
        j = _column_index(args.csv, header, args.id, "--id")
        ids = [row[j].strip() for _, row in body]
    ignored = [name for name in header if name not in used and name != args.id]
    if ignored:
        report.progress("Ignoring the column(s) " + ", ".join(repr(name) for name in ignored)
                        + " (not used by the model)")
    text = set(table.text_columns)
    known = _known_categories(model)
    X = np.empty((len(body), len(table.feature_names)), dtype=object)
    missing = {}
    for jj, name in enumerate(table.feature_names):
        if name not in used:  # any valid value: its coefficients are zero
            X[:, jj] = known[name][0] if name in text else 0.0
            continue
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
        rows = [[target]] + [[cell] for cell in _fmt_column(values)]
    else:
        classes = list(model[-1].classes_)
        rows = [[target] + [f"proba_{label}" for label in classes]]
        columns = [_fmt_column(probabilities[:, c]) for c in range(len(classes))]
        rows += [[str(label)] + [column[i] for column in columns] for i, label in enumerate(predictions)]
    if ids is not None:
        rows = [[args.id] + rows[0]] + [[identifier] + row for identifier, row in zip(ids, rows[1:], strict=True)]
    if args.output is not None:
        _write_rows(rows, args.output)
        report.progress(f"Predictions of {len(rows) - 1} rows written to {args.output}")
    return rows


def _report_unknown_categories(report, model, X, lines):
    """Say, by column and value, which text cells the model has never seen (their dummies are all 0)."""
    from sklearn.preprocessing import OneHotEncoder

    table = model.named_steps["columns"]
    reference = _reference_categories(model)
    for name, transformer, indices in model.named_steps["preprocess"].transformers_:
        encoders = [step for _, step in getattr(transformer, "steps", []) if isinstance(step, OneHotEncoder)]
        if name != "text" or not encoders:
            continue
        for j, categories in zip(indices, encoders[0].categories_, strict=True):
            known = set(categories.tolist())
            unknown = [(value, line) for value, line in zip(X[:, j], lines, strict=True)
                       if isinstance(value, str) and value not in known]
            column = table.feature_names[j]
            if unknown:
                encoded = (f"as the reference category {reference[column]!r}" if column in reference
                           else "as none of the known categories")
                report.warn(f"column {column!r}: {len(unknown)} row(s) hold a category not seen in training "
                            f"(first {unknown[0][0]!r}, line {unknown[0][1]}); it is encoded {encoded} (all its "
                            "dummy columns 0)")
