"""A row-chunked dask array as the design: its statistics from blockwise reductions, one ``dask.compute`` each.

The client never holds ``X``: each block of rows is reduced where it lives
(threads, processes or a ``distributed`` cluster, whichever scheduler is
active) to a few vectors and a ``p x p`` matrix, and the blocks' results are
merged pairwise in a tree. :class:`DaskDesign` counts its passes over ``X``.
"""

import numpy as np


def _block_statistics(x, y, w, centred):
    """Statistics of one block of rows: weight, means, centred cross-products, extremes, checks.

    The block's own weighted means centre it (merged exactly later by
    :func:`_merge`), so the cross-products never lose digits to large means.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, p = x.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    bad = int(np.count_nonzero(~np.isfinite(x))), int(np.count_nonzero(~np.isfinite(y))), \
        int(np.count_nonzero(~np.isfinite(w)))
    out = {
        "rows": n, "nonfinite": np.array(bad), "w_min": float(w.min(initial=np.inf)),
        "w_max": float(w.max(initial=-np.inf)), "positive": int(np.count_nonzero(w > 0)),
        "x_high": x.max(axis=0, initial=-np.inf), "x_low": x.min(axis=0, initial=np.inf),
        "y_high": y.max(axis=0, initial=-np.inf), "y_low": y.min(axis=0, initial=np.inf),
    }
    weighted = y[w > 0]  # (the target's extremes where it counts: a constant target, see set_statistics)
    out.update(t_high=weighted.max(axis=0, initial=-np.inf), t_low=weighted.min(axis=0, initial=np.inf))
    if any(bad):  # (reported by the caller; zeros, not nan_to_num's float maximum, whose products overflow)
        x, y, w = (np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0) for v in (x, y, w))
    w = np.maximum(w, 0.0)  # (negative weights are reported from w_min)
    total = float(w.sum())
    if centred and total > 0:
        mx, my = (w @ x) / total, (w @ y) / total
        x, y = x - mx, y - my
    else:
        mx, my = np.zeros(p), np.zeros(y.shape[1])
    root = np.sqrt(w)[:, None]
    xs, ys = x * root, y * root
    out.update(weight=total, x_mean=mx, y_mean=my, xx=xs.T @ xs, xy=xs.T @ ys, yy=np.einsum("ij,ij->j", ys, ys))
    return out


def _merge(a, b):
    """Statistics of two sets of rows from theirs (Chan et al.'s pairwise update of centred moments)."""
    total = a["weight"] + b["weight"]
    share = b["weight"] / total if total > 0 else 0.0
    dx, dy = b["x_mean"] - a["x_mean"], b["y_mean"] - a["y_mean"]
    cross = a["weight"] * share  # (W_a W_b / W)
    return {
        "rows": a["rows"] + b["rows"], "nonfinite": a["nonfinite"] + b["nonfinite"],
        "w_min": min(a["w_min"], b["w_min"]), "w_max": max(a["w_max"], b["w_max"]),
        "positive": a["positive"] + b["positive"],
        "x_high": np.maximum(a["x_high"], b["x_high"]), "x_low": np.minimum(a["x_low"], b["x_low"]),
        "y_high": np.maximum(a["y_high"], b["y_high"]), "y_low": np.minimum(a["y_low"], b["y_low"]),
        "t_high": np.maximum(a["t_high"], b["t_high"]), "t_low": np.minimum(a["t_low"], b["t_low"]),
        "weight": total, "x_mean": a["x_mean"] + share * dx, "y_mean": a["y_mean"] + share * dy,
        "xx": a["xx"] + b["xx"] + cross * np.outer(dx, dx),
        "xy": a["xy"] + b["xy"] + cross * np.outer(dx, dy),
        "yy": a["yy"] + b["yy"] + cross * dy * dy,
    }


def _block_fold_statistics(x, y, w, centred, labelling):
    """:func:`_block_statistics` of each fold's rows in one block: ``{label: statistics}``.

    ``labelling`` is ``(function, args)``; ``function(*args)`` gives the
    fold label of each of the block's rows (computed where the block lives).
    """
    function, args = labelling
    labels = np.asarray(function(*args))
    x, y = np.asarray(x), np.asarray(y)
    w = None if w is None else np.asarray(w)
    return {int(f): _block_statistics(x[labels == f], y[labels == f], None if w is None else w[labels == f], centred)
            for f in np.unique(labels)}


def _merge_folds(a, b):
    """:func:`_merge` label by label of two ``{label: statistics}``."""
    out = dict(a)
    for label, stats in b.items():
        out[label] = _merge(out[label], stats) if label in out else stats
    return out


def merged(parts):
    """The statistics of the union of the row sets of ``parts`` (a sequence of statistics, merged in order)."""
    out = parts[0]
    for part in parts[1:]:
        out = _merge(out, part)
    return out


def uncentred(stats):
    """Centred statistics as raw ones (products of ``X`` and ``Y`` themselves: a fit without intercept)."""
    w, mx, my = stats["weight"], stats["x_mean"], stats["y_mean"]
    return dict(stats, x_mean=np.zeros_like(mx), y_mean=np.zeros_like(my), xx=stats["xx"] + w * np.outer(mx, mx),
                xy=stats["xy"] + w * np.outer(mx, my), yy=stats["yy"] + w * my * my)


def _tree(parts, merge):
    """The pairwise merge of delayed ``parts`` (depth log2 of their number)."""
    import dask

    merge = dask.delayed(merge, pure=True)
    while len(parts) > 1:
        parts = [merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


class DaskDesign:
    """A row-chunked dask array ``X`` (one chunk across its columns) minus an optional column offset.

    The dask counterpart of :class:`~sparse_estimators.losses._design.LinearDesign`
    for what the Gram path needs: :meth:`gram_statistics` reads ``X`` once;
    afterwards the losses work on ``p x p`` statistics and ``X`` is not read
    again. ``n_passes`` counts the ``dask.compute`` calls that read ``X``.

    Parameters
    ----------
    X : dask array of shape (n_samples, n_features)
    """

    is_sparse = False

    def __init__(self, X):
        self.X = X
        self.shape = X.shape
        self.dtype = X.dtype
        self.offset = None
        self.constant = None
        self.n_passes = 0

    def gram_statistics(self, Y, sample_weight=None, centred=True, folds=None):
        """One pass: weights, means, centred (or raw) cross-products, extremes and finiteness of ``X`` and ``Y``.

        Parameters
        ----------
        Y : dask array (n_samples, n_outputs) with the row chunks of ``X``
        sample_weight : dask array (n_samples,) or None
        centred : bool
            Centre at the weighted means (an intercept), or use raw products.
        folds : list or None
            One ``(function, args)`` per block of rows: ``function(*args)``
            labels the block's rows (cross-validation folds); the result is
            then ``{label: statistics}``, the statistics of each label's rows
            (in the same single pass).

        Returns
        -------
        dict
            ``weight`` (sum of weights), ``positive`` (rows of positive
            weight), ``w_min``, ``w_max``, ``nonfinite`` (counts in X, y,
            weights), ``x_mean`` (p,), ``y_mean`` (m,), ``xx`` (p, p),
            ``xy`` (p, m), ``yy`` (m,), the extremes ``x_high``, ``x_low``
            (p,), ``y_high``, ``y_low`` (m,), and ``t_high``, ``t_low`` (m,)
            those of ``y`` on the rows of positive weight.
        """
        import dask

        # (unoptimised graphs: X's blocks keep their keys, so that a y computed from X shares them and each
        # block is read or generated once; optimising each array alone would fuse X's tasks into y's)
        blocks = self.X.to_delayed(optimize_graph=False).ravel()
        ys = Y.to_delayed(optimize_graph=False).ravel()
        ws = [None] * len(blocks) if sample_weight is None else \
            list(sample_weight.to_delayed(optimize_graph=False).ravel())
        if folds is None:
            stats = dask.delayed(_block_statistics, pure=True)
            parts = [stats(x, y, w, centred) for x, y, w in zip(blocks, ys, ws, strict=True)]
        else:
            stats = dask.delayed(_block_fold_statistics, pure=True)
            parts = [stats(x, y, w, centred, f) for x, y, w, f in zip(blocks, ys, ws, folds, strict=True)]
        (result,) = dask.compute(_tree(parts, _merge if folds is None else _merge_folds))
        self.n_passes += 1
        return result


from ._dask_linear import DaskLinearDesign  # noqa: E402,F401 - (its former home)
