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
