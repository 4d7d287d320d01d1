"""Classifiers and the Poisson and Gamma regressors on dask data: targets, weights and predictors on the workers.

The set-up reads ``X`` once (finite values, extremes, the weighted column
means of the implicit centring) together with the summaries of ``y`` and
the weights (sums, extremes, the weighted label sums); the classifiers
first compute their classes and class counts (``n_classes`` values). The
targets and weights are persisted on the workers in ``X``'s row chunks and
the loss is a :mod:`~sparse_estimators.losses._dask_glm` loss: no vector of
``n`` rows is ever computed into the client (issue 35).
"""

import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_n_features

from .._dask import check_dask_fit_input, set_feature_names


def _encode(block, classes):
    return np.searchsorted(classes, block)


def _one_hot(codes, n_classes):
    out = np.zeros((codes.shape[0], n_classes))
    out[np.arange(codes.shape[0]), codes] = 1.0
    return out


def _take(codes, values):
    return values[codes]


def _validated(est, X, y, sample_weight):
    """Row-aligned dask ``X``, ``y`` (as given: 1-D or 2-D) and weights (or None); ``n_features_in_`` set."""
    set_feature_names(est, X)
    X, Y, y_ndim, sample_weight = check_dask_fit_input(X, y, sample_weight, numeric_y=False)
    _check_n_features(est, X, reset=True)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"Found array with shape {X.shape}; a minimum of 1 sample and 1 feature is required.")
    return X, (Y[:, 0] if y_ndim == 1 else Y), sample_weight


def _one_pass(est, X, Y, weights, centred_scale, extra, target_extremes=False):
    """The set-up's pass: checks of ``X`` and the weights, the scale, the centring; ``(design, stats, extra)``.

    ``Y`` (n, m) and ``weights`` (n,) are dask arrays, persisted on the
    workers in the same computation; ``extra`` maps names to further lazy
    summaries, computed in the pass too. ``target_extremes``: also ``Y``'s
    extremes on the rows of positive weight (``values['t_high']``,
    ``values['t_low']``: a constant target, see :func:`_constant_target`).
    """
    import dask
    import dask.array as da

    from ..losses._dask_kernel import set_up_pass
    from ..losses._dask_linear import DaskLinearDesign
    from ._scaling import _check_moments_range, _scale_from_extremes

    given = weights is not None
    w = weights if given else da.ones(X.shape[0], chunks=(X.chunks[0],))
    # (X's summaries one task per block; those of the weights and targets alone from dask's reductions)
    lazy = {"x": set_up_pass(X, Y, w), "weight": w.sum(), "w_min": w.min(), "w_max": w.max(),
            "positive": da.count_nonzero(w > 0), "w_bad": da.count_nonzero(~da.isfinite(w)), "label_sums": w @ Y,
            **extra}
    if target_extremes:  # (two reductions in the same pass)
        weighted = (w > 0)[:, None]
        lazy.update(t_high=da.where(weighted, Y, -np.inf).max(axis=0), t_low=da.where(weighted, Y, np.inf).min(axis=0))
    names = list(lazy)
    persisted = dask.persist(Y, *([w] if given else []), *lazy.values())  # (one computation: X read once)
    Y, w = persisted[0], persisted[1] if given else w
    values = dict(zip(names, dask.compute(*persisted[1 + int(given):]), strict=True))
    summary = values.pop("x")[0]
    values.update(x_bad=summary["bad"], x_high=summary["high"], x_low=summary["low"])
    if values["x_bad"]:
        raise ValueError(f"Input X contains NaN or infinity ({int(values['x_bad'])} values).")
    if given:
        if values["w_bad"]:
            raise ValueError(f"Sample weights contain NaN or infinity ({int(values['w_bad'])} values).")
        if values["w_min"] < 0:
            raise ValueError("Negative values in data passed to `sample_weight`")
        if not values["weight"] > 0:
            raise ValueError("Sample weights must have a positive sum; got all zeros.")
    high, low = np.asarray(values["x_high"], dtype=float), np.asarray(values["x_low"], dtype=float)
    _check_moments_range(high, low, "X")  # (m2 and xyw below are in X's units)
    x_scale = _scale_from_extremes(high, low, centred=centred_scale)
    xw, m2, xyw = summary["xw"], summary["m2"], summary["xyw"]
    source = (X, x_scale, None)
    if x_scale != 1.0:  # (an exact power of two, applied lazily)
        X, high, low, xw = X * x_scale, high * x_scale, low * x_scale, xw * x_scale
        m2, xyw = m2 * (x_scale * x_scale), xyw * x_scale
    offset = constant = None
    if est.fit_intercept:  # (as _GLMLoss: the columns centred at their weighted means, constant columns exact)
        offset = xw / float(values["weight"])
        mask = high == low
        if mask.any():
            constant = mask
            offset[mask] = high[mask]
    design = DaskLinearDesign(X, offset, constant, counter=[1], resident=True, source=source)
    weight = float(values["weight"])
    # the weighted second moments of the centred columns (those about 0 without centring), for the weights
    # w / weight of the losses' coordinate curvatures: m2 is about the weighted means
    moments = m2 / weight if offset is not None else (m2 + xw * xw / weight) / weight
    stats = {"weight": weight, "positive": int(values["positive"]),
             "uniform": bool(values["w_min"] == values["w_max"]), "label_sums": np.atleast_1d(values["label_sums"]),
             "moments": moments, "products": (xw, xyw)}
    return design, x_scale, Y, w, stats, values


def dask_classifier_setup(est, X, y, sample_weight):
    """``(loss, info)`` of a classifier's ``_setup`` on a dask ``X`` (see the module docstring)."""
    import dask
    import dask.array as da

    from ..losses._dask_glm import make_dask_loss
    from ..losses._logistic import LogisticLoss, MultinomialLoss
    from ._scaling import _rescaled_alpha

    X, y, sample_weight = _validated(est, X, y, sample_weight)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                      "to (n_samples, ), for example using ravel().", DataConversionWarning, stacklevel=4)
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    classes, counts = dask.compute(*da.unique(y, return_counts=True))  # (n_classes values)
    check_classification_targets(classes)
    codes = y.map_blocks(_encode, classes, dtype=np.intp)
    weights = sample_weight
    if est.class_weight is not None:
        if isinstance(est.class_weight, str) and est.class_weight == "balanced":  # (as compute_sample_weight)
            factors = y.shape[0] / (classes.size * counts.astype(np.float64))
        else:
            factors = compute_class_weight(est.class_weight, classes=classes, y=classes)
        if not np.all(np.isfinite(factors) & (factors >= 0)):
            raise ValueError(f"The 'class_weight' parameter must give finite, non-negative weights, "
                             f"got {est.class_weight!r}.")
        per_row = codes.map_blocks(_take, np.asarray(factors, dtype=float), dtype=np.float64)
        weights = per_row if weights is None else weights * per_row
    K = classes.size
    if K == 2:
        cls, Y = LogisticLoss, codes[:, None].astype(np.float64)
    else:
        cls = MultinomialLoss
        Y = codes.map_blocks(_one_hot, K, new_axis=1, chunks=(codes.chunks[0], (K,)), dtype=np.float64)
    present = da.bincount(codes, minlength=K) if weights is None else \
        da.bincount(codes, weights=(weights > 0).astype(np.float64), minlength=K)
    design, x_scale, Y, w, stats, values = _one_pass(est, X, Y, weights, est.fit_intercept, {"present": present})
    n_present = int(np.count_nonzero(values["present"]))
    if n_present < 2:
        raise ValueError(f"{type(est).__name__} needs samples of at least 2 classes with "
                         f"positive weight; got {n_present} class(es).")
    # (alpha on the user's coefficients: see _rescaled_alpha)
    loss = make_dask_loss(cls, design, Y, w, stats, est.fit_intercept, _rescaled_alpha(est.alpha, x_scale))
    return loss, {"attributes": {"classes_": classes}, "scale": (x_scale, 1.0), "dtype": X.dtype}


def _constant_target(values, scale=1.0):
    """The target's value per output if its extremes on the rows of positive weight are equal, else None."""
    high, low = np.atleast_1d(values["t_high"]).astype(float), np.atleast_1d(values["t_low"]).astype(float)
    return high * scale if np.all(high == low) else None


def dask_log_link_setup(est, X, y, sample_weight, name):
    """``(loss, info)`` for ``loss='poisson'`` or ``'gamma'`` on a dask ``X`` (see the module docstring)."""
    import dask.array as da

    from ..losses._dask_glm import make_dask_loss
    from ..losses._glm import GammaLoss, PoissonLoss, zero_sum_message

    X, y, sample_weight = _validated(est, X, y, sample_weight)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"The target y must be numeric for a regressor; got {y.dtype} values.")
    if y.ndim == 2 and y.shape[1] != 1:
        raise ValueError(f"loss={name!r} takes a single target; got y of shape {y.shape}.")
    Y = (y if y.ndim == 2 else y[:, None]).astype(np.float64)
    cls = PoissonLoss if name == "poisson" else GammaLoss
    extra = {"y_bad": da.count_nonzero(~da.isfinite(Y)), "y_min": Y.min()}
    design, x_scale, Y, w, stats, values = _one_pass(est, X, Y, sample_weight, False, extra, True)
    family = cls._family
    if values["y_bad"]:
        raise ValueError("Input y contains NaN or infinity.")
    if cls._positive_target and not values["y_min"] > 0:
        raise ValueError(f"Some value(s) of y are not strictly positive, which the {family} loss (log link) "
                         f"does not allow: its targets are positive amounts.")
    if not cls._positive_target and values["y_min"] < 0:
        raise ValueError(f"Some value(s) of y are negative, which the {family} loss does not allow: "
                         f"its targets are counts or rates (y >= 0).")
    if not stats["label_sums"][0] > 0:
        raise ValueError(zero_sum_message(family, sample_weight is not None))
    null_mean = float(stats["label_sums"][0]) / stats["weight"]
    attributes = {"null_mean": null_mean, "positive": bool(est.positive), "_constant_target": _constant_target(values)}
    if cls is PoissonLoss:
        attributes["curvature"] = null_mean
    loss = make_dask_loss(cls, design, Y, w, stats, est.fit_intercept, **attributes)
    return loss, {"y_ndim": 1, "scale": (x_scale, 1.0), "dtype": X.dtype}


def dask_squared_passes_setup(est, X, y, sample_weight):
    """``(loss, info)`` for least squares read at every iteration on a dask ``X`` (see the module docstring).

    Above :data:`~sparse_estimators._policy.DASK_GRAM_MAX_FEATURES`
    features (or with ``precompute=False``): each gradient is one pass over
    ``X``, and a refit one pass for its normal equations
    (:class:`~sparse_estimators.losses._dask_glm.DaskSquaredMixin`).
    """
    import dask.array as da

    from ..losses._dask_glm import make_dask_loss
    from ..losses._squared import SquaredLoss
    from ._scaling import _scale_from_extremes

    X, y, sample_weight = _validated(est, X, y, sample_weight)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"The target y must be numeric for a regressor; got {y.dtype} values.")
    y_ndim = y.ndim
    Y = (y if y.ndim == 2 else y[:, None]).astype(np.float64)
    extra = {"y_bad": da.count_nonzero(~da.isfinite(Y)), "y_high": Y.max(axis=0), "y_low": Y.min(axis=0)}
    design, x_scale, Y, w, stats, values = _one_pass(est, X, Y, sample_weight, False, extra, True)
    if values["y_bad"]:
        raise ValueError("Input y contains NaN or infinity.")
    y_scale = _scale_from_extremes(np.atleast_1d(values["y_high"]), np.atleast_1d(values["y_low"]))
    if y_scale != 1.0:  # (an exact power of two, applied lazily)
        Y = Y * y_scale
    constant = None
    if est.fit_intercept:
        constant = _constant_target(values, y_scale)  # (as SquaredLoss: a constant target centred exactly)
        y_mean = stats["label_sums"] * y_scale / stats["weight"] if constant is None else constant
        x_mean = design.offset
    else:
        y_mean, x_mean = np.zeros(Y.shape[1]), np.zeros(X.shape[1])
    stats["products"] = None  # (of the targets as given: this loss's are rescaled and centred)
    loss = make_dask_loss(SquaredLoss, design, Y - y_mean, w, stats, est.fit_intercept, x_mean=x_mean,
                          y_mean=y_mean, positive=bool(est.positive), _constant_target=constant)
    return loss, {"y_ndim": y_ndim, "scale": (x_scale, y_scale), "dtype": X.dtype}
