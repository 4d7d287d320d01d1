"""The pipeline the command line fits: table columns, imputation, one-hot encoding, scaling, estimator."""


import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._read import _is_missing

#: ``--method`` name -> class-name prefix in :mod:`sparse_estimators`.
_METHOD_PREFIXES = {
    "iht": "IHT",
    "accelerated": "AcceleratedIHT",
    "regularized": "RegularizedIHT",
    "iobs": "IOBS",
}


_TASK_SUFFIXES = {"regression": "Regressor", "classification": "Classifier"}


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


def _categories(data):
    """The sorted categories of each text column, learnt from the whole table (missing cells left out).

    Fixing them gives every cross-validation fold the same encoded columns
    (a category absent from a training fold is a column of zeros there), so
    the groups of the dummy columns and the bound on ``k`` are known before
    the fit.
    """
    categories = {}
    for j, name in enumerate(data.feature_names):
        if name in data.text_columns:
            categories[name] = sorted({value for value in data.X[:, j] if isinstance(value, str)})
    return categories


def _grouped(data, count):
    """Whether the estimator gets ``groups``: k counts variables and some text column has over 2 categories."""
    return count == "variables" and any(len(c) > 2 for c in _categories(data).values())


def _layout(data, count="variables"):
    """The encoded columns' source variables, in the order the estimator sees them (numeric columns first).

    A text column of ``c`` categories gives ``c`` dummy columns, one for two
    categories (``drop="if_binary"``); ``c - 1`` when they are grouped (the
    first category dropped: with the intercept, all ``c`` are collinear).
    """
    categories = _categories(data)
    grouped = _grouped(data, count)
    numeric = [name for name in data.feature_names if name not in categories]
    text = [name for name in data.feature_names if name in categories]
    return numeric + [name for name in text for _ in range(_n_dummies(len(categories[name]), grouped))]


def _n_dummies(n_categories, grouped):
    if n_categories == 2 or grouped:  # (grouped, a single category is dropped too: a constant, no column)
        return n_categories - 1
    return n_categories


def _build_model(data, estimator, scale, impute, count="variables"):
    """The pipeline: table columns -> (impute, scale | impute, one-hot, scale) -> estimator; and its description.

    With ``count="variables"`` and a text column of more than two
    categories, the estimator's ``groups`` label each encoded column by its
    source variable, so that ``k`` counts variables and a text column's
    dummies are selected together.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    text = set(data.text_columns)
    numeric_idx = [j for j, name in enumerate(data.feature_names) if name not in text]
    text_idx = [j for j, name in enumerate(data.feature_names) if name in text]
    categories = _categories(data)
    transformers = []
    if numeric_idx:
        # (keep_empty_features: a column without a value in a training fold stays, as zeros, so that every fold
        # has the same columns and groups)
        steps = (([SimpleImputer(strategy="median", keep_empty_features=True)] if impute else [])
                 + ([StandardScaler()] if scale else []))
        # an identity that converts to floats when there is nothing else to do
        steps = steps or [FunctionTransformer(validate=True, feature_names_out="one-to-one")]
        transformers.append(("numeric", make_pipeline(*steps), numeric_idx))
    grouped = _grouped(data, count)
    if text_idx:
        listed = [categories[data.feature_names[j]] for j in text_idx]
        # Grouped, a column's dummies are selected together: drop the first (the reference category), else they
        # and the intercept are collinear and the coefficients not unique.
        # (a single category too: scikit-learn refuses None in a list of categories to drop)
        drop = [c[0] for c in listed] if grouped else "if_binary"
        encoder = OneHotEncoder(categories=listed, drop=drop, handle_unknown="warn", sparse_output=False)
        steps = (([SimpleImputer(strategy="most_frequent")] if impute else []) + [encoder]
                 + ([StandardScaler()] if scale else []))
        transformers.append(("text", make_pipeline(*steps), text_idx))
    description = repr(estimator)
    if grouped:
        estimator.set_params(groups=np.array(_layout(data, count), dtype=object))
        description += " with groups=<the encoded columns of each variable>"
    columns = _TableColumns(tuple(data.feature_names), tuple(data.text_columns), data.target_name)
    model = Pipeline([("columns", columns),
                      ("preprocess", ColumnTransformer(transformers, sparse_threshold=0)),
                      ("estimator", estimator)])
    parts = (["SimpleImputer"] if impute else []) + ([f"OneHotEncoder ({len(text_idx)} text column"
                                                      f"{'s' if len(text_idx) > 1 else ''})"] if text_idx else [])
    parts += ["StandardScaler"] if scale else []
    return model, " -> ".join(parts + [description])


def _scaling(model):
    """Mean and scale of the ``StandardScaler`` per encoded column (the estimator's input order), or None."""
    from sklearn.preprocessing import StandardScaler

    means, scales = [], []
    for name, transformer, _ in model.named_steps["preprocess"].transformers_:
        if name == "remainder":
            continue
        scalers = [step for _, step in getattr(transformer, "steps", []) if isinstance(step, StandardScaler)]
        if not scalers:
            return None
        means.append(scalers[0].mean_)
        scales.append(scalers[0].scale_)
    return np.concatenate(means), np.concatenate(scales)


def _used_columns(model):
    """The table columns whose encoded columns have a non-zero coefficient (the others do not change predictions)."""
    _, sources = _encoded_features(model)
    coef = np.atleast_2d(np.asarray(model[-1].coef_, dtype=float))
    used = {sources[j] for j in np.flatnonzero(np.any(coef != 0, axis=0))}
    return [name for name in model.named_steps["columns"].feature_names if name in used]


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


def _known_categories(model):
    """Text column name -> the categories its encoder learnt."""
    from sklearn.preprocessing import OneHotEncoder

    table = model.named_steps["columns"]
    known = {}
    for _, transformer, indices in model.named_steps["preprocess"].transformers_:
        for _, step in getattr(transformer, "steps", []):
            if isinstance(step, OneHotEncoder):
                for j, categories in zip(indices, step.categories_, strict=True):
                    known[table.feature_names[j]] = list(categories)
    return known


def _reference_categories(model):
    """Text column name -> its dropped category (a dummy's coefficient is relative to it), for those with one."""
    from sklearn.preprocessing import OneHotEncoder

    table = model.named_steps["columns"]
    reference = {}
    for _, transformer, indices in model.named_steps["preprocess"].transformers_:
        for _, step in getattr(transformer, "steps", []):
            if isinstance(step, OneHotEncoder) and step.drop_idx_ is not None:
                for j, categories, dropped in zip(indices, step.categories_, step.drop_idx_, strict=True):
                    if dropped is not None:
                        reference[table.feature_names[j]] = str(categories[dropped])
    return reference


def _imputes(model):
    from sklearn.impute import SimpleImputer

    return any(isinstance(step, SimpleImputer)
               for _, transformer, _ in model.named_steps["preprocess"].transformers_
               for _, step in getattr(transformer, "steps", []))


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
