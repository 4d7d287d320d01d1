"""The estimators on dask arrays: the least-squares set-up from one pass, lazy predictions.

``SparseRegressorBase._setup`` hands a dask ``X`` here; the loss it returns
(:class:`~sparse_estimators.losses._dask_squared.DaskGramSquaredLoss`) holds
``p x p`` statistics only, so the solvers, splicing, ``k=None`` and the
model-selection helpers run unchanged on it. The losses read at every
iteration are set up in :mod:`._dask_resident` (vectors of ``n`` rows on the
workers), Huber's by :func:`dask_glm_setup`.
"""

import warnings

import numpy as np
from sklearn.utils.validation import _check_n_features

from .. import _policy
from .._dask import check_dask_fit_input, check_dask_X, is_dask_collection, set_feature_names
from ..losses._dask_squared import DaskGramSquaredLoss


def uses_dask(X, y=None, sample_weight=None):
    """Whether the fit's input includes a dask collection (``X`` decides; ``y`` alone is gathered)."""
    return is_dask_collection(X)


def dask_regression_setup(est, X, y, sample_weight):
    """``(loss, info)`` of ``SparseRegressorBase._setup`` for a dask ``X``: one pass, no ``n x p`` in the client.

    Sets ``n_features_in_`` (and ``feature_names_in_`` from a dask
    DataFrame) as ``validate_data`` does.
    """
    from .._dask import as_dask_array

    name = est._loss_name()
    if name != "squared_error":
        return _glm_regression_setup(est, X, y, sample_weight, name)
    set_feature_names(est, X)
    X = as_dask_array(X, "X")
    X = check_dask_X(X)
    _check_n_features(est, X, reset=True)
    if est.precompute is False or (est.precompute == "auto" and X.shape[1] > _policy.DASK_GRAM_MAX_FEATURES):
        return _squared_passes_setup(est, X, y, sample_weight)
    X, Y, y_ndim, sample_weight = check_dask_fit_input(X, y, sample_weight)
    loss, stats = DaskGramSquaredLoss.from_dask(X, Y, sample_weight, est.fit_intercept)
    check_statistics(stats, sample_weight is not None, X.shape)
    return gram_loss(est, loss, stats, y_ndim, X.dtype)


def check_statistics(stats, weighted, shape):
    """ValueErrors for non-finite values, negative or all-zero weights and empty data seen by a pass."""
    if shape[0] == 0 or shape[1] == 0:  # (first: no rows also means no weight)
        raise ValueError(f"Found array with shape {shape}; a minimum of 1 sample and 1 feature is required.")
    for count, what in zip(stats["nonfinite"], ("Input X", "Input y", "Sample weights"), strict=True):
        if count:
            raise ValueError(f"{what} contains NaN or infinity ({count} values).")
    if weighted and stats["w_min"] < 0:
        raise ValueError("Negative values in data passed to `sample_weight`")
    if not stats["weight"] > 0:
        raise ValueError("Sample weights must have a positive sum; got all zeros.")


def gram_loss(est, loss, stats, y_ndim, dtype):
    """``(loss, info)`` of ``_setup`` from a :class:`DaskGramSquaredLoss` and its rows' statistics (no pass).

    The scale factors come from the rows' extremes, as the NumPy path's
    :func:`~sparse_estimators.linear_model._scaling._rescaled` on those rows.
    """
    from ._scaling import _check_moments_range, _scale_from_extremes

    _check_moments_range(stats["x_high"], stats["x_low"], "X")  # (the Gram statistics are in X's and y's units)
    _check_moments_range(stats["y_high"], stats["y_low"], "y")
    x_scale = _scale_from_extremes(stats["x_high"], stats["x_low"])
    y_scale = _scale_from_extremes(stats["y_high"], stats["y_low"])
    loss.set_statistics(stats, x_scale, y_scale)
    if est.positive:
        loss.positive = True
    return loss, {"y_ndim": y_ndim, "scale": (x_scale, y_scale), "dtype": dtype}


def _rows(X, n_features):
    """Dask ``X`` validated for prediction, one chunk across its columns (a lazy rechunk if needed)."""
    X = check_dask_X(X, n_features)
    return X if X.numblocks[1] == 1 else X.rechunk({1: -1})


def _apply(block, est, method, empty):
    if not block.shape[0]:  # (a block without rows: the estimator's check_array refuses it)
        return empty
    with warnings.catch_warnings():  # (the blocks are arrays; the estimator may have been fitted on a DataFrame)
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        return getattr(est, method)(block)


def lazy_method(est, method, X, n_columns=None, dtype=np.float64):
    """``est.<method>(X)`` block by block, as a lazy dask array (``map_blocks``).

    Parameters
    ----------
    est : fitted estimator
    method : str
        A method taking a NumPy ``X`` (``predict``, ``predict_proba``, ...).
    X : dask array or DataFrame
    n_columns : int or None
        Columns of the result (None: one value per row).
    dtype : dtype
        The result's dtype.
    """
    X = _rows(X, est.n_features_in_)
    if n_columns is None:
        return X.map_blocks(_apply, est, method, np.empty((0,), dtype), drop_axis=1, dtype=dtype,
                            meta=np.empty((0,), dtype))
    return X.map_blocks(_apply, est, method, np.empty((0, n_columns), dtype), chunks=(X.chunks[0], (n_columns,)),
                        dtype=dtype, meta=np.empty((0, 0), dtype))


def lazy_score(est, X, y, sample_weight, kind):
    """R^2 (``kind='r2'``) or accuracy (``'accuracy'``) on dask data, in one ``dask.compute`` (a float).

    D^2 for the log-link losses is not computed lazily: their scorer is
    called on the computed predictions of the ``n`` rows (1-D vectors).
    """
    import dask
    import dask.array as da

    if kind == "accuracy":
        pred = lazy_method(est, "predict", X, dtype=est.classes_.dtype)
        right = (pred == _in_rows(y, pred.chunks[0], "y")).astype(float)
        w = da.ones_like(right) if sample_weight is None else _in_rows(sample_weight, pred.chunks[0], "sample_weight")
        hits, total = dask.compute((right * w).sum(), w.sum())
        return float(hits / total)
    pred = lazy_method(est, "predict", X, None if np.ndim(est.coef_) == 1 else len(est.coef_))
    y = _in_rows(y, pred.chunks[0], "y").astype(float)
    Y, P = (y[:, None], pred[:, None]) if y.ndim == 1 else (y, pred)
    w = da.ones(Y.shape[0], chunks=(Y.chunks[0],)) if sample_weight is None else _in_rows(sample_weight,
                                                                                          pred.chunks[0],
                                                                                          "sample_weight")
    w = w[:, None]
    sw, swy, swyy, swrr = dask.compute(w.sum(), (w * Y).sum(axis=0), (w * Y * Y).sum(axis=0),
                                       (w * (Y - P) ** 2).sum(axis=0))
    total = swyy - swy * swy / sw  # (centred sums of squares)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(total > 0, 1 - swrr / np.where(total > 0, total, 1), np.where(swrr == 0, 1.0, 0.0))
    return float(np.mean(r2))


def _in_rows(v, rows, name):
    """Targets or weights as a dask array: a dask Series through its values, else NumPy values in ``rows`` chunks.

    (A pandas Series compared with a dask array is not computed blockwise: it raises.) A ValueError naming
    ``name`` if its length is not the number of rows.
    """
    import dask.array as da

    if is_dask_collection(v):
        v = v.to_dask_array(lengths=True) if hasattr(v, "to_dask_array") else v
    else:
        v = np.asarray(v)
    if v.ndim == 0 or v.shape[0] != sum(rows):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: X has {sum(rows)} rows, "
                         f"{name} has shape {v.shape}.")
    return v if is_dask_collection(v) else da.from_array(v, chunks=(rows,) + v.shape[1:])


class _ConstructorView:
    """Stands for a dask ``X`` in a loss's constructor: the products it takes there, computed blockwise.

    The GLM losses' constructors read ``X`` for the weighted column means
    (``X.T @ w``: one counted pass of ``design``) and the columns' extremes
    (``X.max(axis=0)``, ``X.min(axis=0)``: from the validation pass); the
    :class:`~sparse_estimators.losses._design.LinearDesign` they build around
    it is then replaced by ``design`` with the same offset.
    """

    ndim = 2

    def __init__(self, design, high, low):
        self.design, self.high, self.low = design, high, low
        self.shape, self.dtype = design.shape, np.dtype(np.float64)

    @property
    def T(self):  # noqa: N802 - the array attribute
        return self

    def __matmul__(self, v):
        return self.design.rmatvec(np.asarray(v, dtype=float)[:, None])[:, 0]

    def max(self, axis=None):
        return self.high

    def min(self, axis=None):
        return self.low


def _checked_extremes(X):
    """One pass: the columns' extremes; a ValueError naming X if it holds NaN or infinity."""
    import dask
    import dask.array as da

    bad, high, low = dask.compute(da.count_nonzero(~da.isfinite(X)), X.max(axis=0), X.min(axis=0))
    if bad:
        raise ValueError(f"Input X contains NaN or infinity ({int(bad)} values).")
    return np.asarray(high, dtype=float), np.asarray(low, dtype=float)


def _in_memory(v):
    """A vector of ``n`` rows (targets, weights) computed into the client (never ``X``)."""
    return None if v is None else np.asarray(v.compute() if is_dask_collection(v) else v)


def dask_glm_setup(est, X, y, sample_weight, make_loss, *, centred_scale):
    """The Huber loss on a dask ``X``: one pass per product (:class:`DaskLinearDesign`), vectors in the client.

    Its scale and initial intercept are weighted medians of ``n`` values, so
    ``y`` and ``sample_weight`` are brought into memory (``n`` rows); ``X``
    stays where it is. ``make_loss(view, y, sample_weight)`` builds the loss
    on a :class:`_ConstructorView`; its design is then the dask one.

    Returns
    -------
    loss, x_scale, y, sample_weight
    """
    from ..losses._dask_design import DaskLinearDesign
    from ._scaling import _scale_from_extremes
    from ._validation import _checked_weights

    set_feature_names(est, X)
    X, _, _, _ = check_dask_fit_input(X, y, sample_weight, numeric_y=False)  # (shapes and chunks)
    _check_n_features(est, X, reset=True)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"Found array with shape {X.shape}; a minimum of 1 sample and 1 feature is required.")
    y = _in_memory(y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y)
    sample_weight = _in_memory(sample_weight.to_dask_array(lengths=True)
                               if hasattr(sample_weight, "to_dask_array") else sample_weight)
    high, low = _checked_extremes(X)
    x_scale = _scale_from_extremes(high, low, centred=centred_scale)
    if x_scale != 1.0:  # (an exact power of two, applied lazily)
        X, high, low = X * x_scale, high * x_scale, low * x_scale
    design = DaskLinearDesign(X, counter=[1])
    view = _ConstructorView(design, high, low)
    sample_weight = _checked_weights(sample_weight, view)
    loss = make_loss(view, y, sample_weight)
    loss.design = DaskLinearDesign(X, loss.design.offset, loss.design.constant, design.counter)
    # X is read block by block, never indexed in memory: I-OBS takes its 'dense' route (its wide-data routes
    # index X's rows, and failed on a dask X with fewer rows than features)
    loss.blockwise = True
    return loss, x_scale, y, sample_weight


def _squared_passes_setup(est, X, y, sample_weight):
    """``(loss, info)`` for least squares read at every iteration (see :mod:`._dask_resident`)."""
    from ._dask_resident import dask_squared_passes_setup

    return dask_squared_passes_setup(est, X, y, sample_weight)


def _glm_regression_setup(est, X, y, sample_weight, name):
    """``(loss, info)`` for ``loss='poisson'``, ``'gamma'`` (:mod:`._dask_resident`) or ``'huber'`` on a dask ``X``.

    Huber's scale and initial intercept are weighted medians of ``n`` values:
    its targets and weights are computed into the client (:func:`dask_glm_setup`).
    """
    from ._regressor import REGRESSION_LOSSES
    from ._scaling import _rescaled

    if name in ("poisson", "gamma"):  # (targets, weights and predictors on the workers)
        from ._dask_resident import dask_log_link_setup

        return dask_log_link_setup(est, X, y, sample_weight, name)
    state = {}

    def make(view, y, sample_weight):
        y = np.asarray(y)
        if y.dtype.kind not in "biuf":
            raise ValueError(f"The target y must be numeric for a regressor; got {y.dtype} values.")
        y = y.astype(float)
        if y.ndim == 2 and y.shape[1] != 1:
            raise ValueError(f"loss={name!r} takes a single target; got y of shape {y.shape}.")
        y = y.reshape(-1)
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        y, state["y_scale"] = _rescaled(y) if name == "huber" else (y, 1.0)
        options = {"epsilon": est.epsilon} if name == "huber" else {}
        return REGRESSION_LOSSES[name](view, y, sample_weight, est.fit_intercept, **options)

    loss, x_scale, _, _ = dask_glm_setup(est, X, y, sample_weight, make, centred_scale=False)
    loss.positive = bool(est.positive)
    dtype = check_dask_X(X).dtype  # (lazy: float32 in, float32 out, as on NumPy data)
    return loss, {"y_ndim": 1, "scale": (x_scale, state["y_scale"]), "dtype": dtype}
