"""A point's pass over a dask ``X`` as one task per block of rows, the blocks' results summed in a tree.

The GLM losses on dask data (:mod:`sparse_estimators.losses._dask_glm`)
evaluate each point ``(W, b)`` in one pass: ``X W`` (kept on the workers),
the loss value, its gradient and, on a refit's support columns, its
Hessian. Built from dask array operations, that pass was about 20 (30 with
the Hessian) tasks per block, each charged the scheduler's overhead, and
each block of ``X`` was read from memory two or three times (``X W``, then
``X^T r``, then the support's columns). :func:`point_pass` builds it as
one task per block (:func:`_point_block`), which streams its block once,
in tiles of :data:`~sparse_estimators._policy.TILE_ROWS` rows that stay in the cache while the
product, the pointwise loss, the gradient's and the Hessian's terms of the
tile are computed; plus one task per block that picks its ``X W`` out and
a tree of sums of the small results (:data:`~sparse_estimators._policy.FAN_IN` at a time). Only the
sum (``p``-sized, ``k^2``-sized with the Hessian) reaches the client.

The other passes of a GLM fit are built the same way: the set-up's
summaries of ``X`` (:func:`set_up_pass`) and the Hessian-vector and
weighted-Gram products (:func:`product_pass`). Their sums are dask arrays,
computed with the arrays they share tasks with as one graph (see
:func:`_sum_tree`).
"""

import operator
from functools import partial

import numpy as np

from .. import _policy


def _point_block(x, y, w, *, spec):
    """One block's ``X W`` and its terms of the value, gradient and Hessian: ``(XW, list of small arrays)``.

    ``x`` is the block of the source array (all its columns), ``y`` the
    loss's targets ``(rows, m)`` and ``w`` the sample weights of the block.
    See :func:`point_pass` for ``spec`` and the order of the list.
    """
    cls, state, m, cols, b = spec["cls"], spec["state"], spec["m"], spec["cols"], spec["b"]
    gradient, hessian, inv_sw = spec["gradient"], spec["hessian"], spec["inv_sw"]
    whole = gradient and spec["whole"] and cols is not None
    n = x.shape[0]
    p = x.shape[1] if cols is None else cols.size
    y = np.asarray(y, dtype=np.float64).reshape(n, -1)
    w = np.asarray(w, dtype=np.float64)
    XW = np.empty((n, m))
    value = 0.0
    g = np.zeros((p, m)) if gradient else None
    sums = np.zeros(m)
    g_whole = np.zeros((x.shape[1], m)) if whole else None
    pairs = [(a, c) for a in range(m) for c in range(a, m)] if hessian else []
    grams = [np.zeros((p, p)) for _ in pairs]
    cross = [np.zeros(p) for _ in pairs]
    totals = np.zeros(len(pairs))
    loss = object.__new__(cls)
    loss.__dict__.update(state)
    for start in range(0, n, _policy.TILE_ROWS):
        stop = min(start + _policy.TILE_ROWS, n)
        tile = x[start:stop]
        xt, zt = _tile_product(tile, spec)
        XW[start:stop] = zt
        if b is not None:
            zt = zt + b
        loss.Y = y[start:stop]
        wt = w[start:stop]
        value += float(wt @ loss._pointwise(zt))
        share = wt * inv_sw
        if gradient:
            D = loss._dz(zt) * share[:, None]
            g += xt.T @ D
            sums += D.sum(axis=0)
            if whole:  # (the tile's other columns are in the cache: the whole loss's gradient, nearly free)
                g_whole += np.asarray(tile, dtype=np.float64).T @ D
        if hessian:
            Hw = loss._hess_weights(zt) * share[:, None, None]
            a = xt * spec["scale"]
            if spec["offset"] is not None:
                a -= spec["offset"]
            for i, (r, c) in enumerate(pairs):
                h = Hw[:, r, c]
                grams[i] += a.T @ (a * h[:, None])
                cross[i] += xt.T @ h
                totals[i] += h.sum()
    parts = [np.array(value)]
    if gradient:
        parts += [g, sums]
    for i in range(len(pairs)):
        parts += [grams[i], cross[i], totals[i]]
    if whole:
        parts.append(g_whole)
    return XW, parts


def _sum(*parts):
    """The sum of the blocks' small results (a block's task gives ``(XW, list)``, a tree node the list)."""
    out = None
    for part in parts:
        part = part[1] if isinstance(part, tuple) else part
        out = [a.copy() for a in part] if out is None else [a + c for a, c in zip(out, part, strict=True)]
    return out


def _boxed(combine, *parts):
    """``combine(*parts)`` in an object array of one entry: the one block of the dask array of the sums."""
    box = np.empty(1, dtype=object)
    box[0] = combine(*parts)
    return box


def _columns_spec(design, V, rows):
    """How a pass forms ``(X - 1 offset^T) V`` from the source's blocks, reading the columns ``rows`` only.

    ``cols``: the design's columns among the source's (None: all); ``rows``
    (None: every row of ``V``); ``Vr``: those rows of ``V`` times the
    design's scale; ``shift``: the offset's term (None: none).
    """
    p, offset = design.shape[1], design.offset
    return {"cols": design.source_columns, "rows": None if rows.size == p else rows,
            "Vr": np.ascontiguousarray(V if rows.size == p else V[rows], dtype=np.float64) * design.scale,
            "shift": None if offset is None or not rows.size else offset[rows] @ V[rows]}


def _tile_product(tile, spec):
    """A tile of the source's rows as float64 on the design's columns, and its ``(X - 1 offset^T) V``."""
    cols, rows = spec["cols"], spec["rows"]
    xt = np.asarray(tile if cols is None else tile[:, cols], dtype=np.float64)
    z = (xt if rows is None else xt[:, rows]) @ spec["Vr"]
    if spec["shift"] is not None:
        z -= spec["shift"]
    return xt, z


def point_pass(loss, W, rows, b, gradient, hessian, whole=False):
    """``X W`` (lazy, ``X``'s row chunks) and the lazy small sums of a point's pass: one task per block.

    ``X`` has one chunk across its columns and ``Y`` and the weights its row
    chunks (``_dask.check_dask_fit_input`` refuses or rechunks anything else).

    Parameters
    ----------
    loss : a :class:`~sparse_estimators.losses._dask_glm.DaskRowsMixin` loss
        Its design's ``source`` (the dask array whose blocks are read),
        ``source_columns`` (the design's columns among them, or None),
        ``scale``, ``offset``; its ``Y``, ``sample_weight`` and the scalars
        of its NumPy class (see ``_state``).
    W : ndarray (p, m)
    rows : ndarray
        The non-zero rows of ``W`` (the columns the product reads).
    b : ndarray (m,) or None
        The intercept added to ``X W`` for the loss (None without one).
    gradient, hessian : bool
    whole : bool
        With ``gradient``, on a design of some of the source's columns: the
        raw ``X^T D`` on all of them too (the whole loss's gradient at a
        refit's point, which its caller asks for next), last.

    Returns
    -------
    XW : dask array (n, m)
        ``(X - 1 offset^T) W``.
    sums : dask array (1,), dtype object
        Its one entry the list of the blocks' sums: ``sum_i s_i psi_i``, then with
        ``gradient`` the raw ``X^T D`` (``(p, m)``, before the scale and the
        centring) and ``D.sum(axis=0)`` (``m``), then with ``hessian`` for
        each pair of classes ``a <= c`` the centred weighted Gram matrix
        (``(p, p)``), the raw ``X^T h`` (``p``) and ``h.sum()``, then with
        ``whole`` the raw ``A^T D`` on all the source's columns
        (``(p_source, m)``).
    """
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    design = loss.design
    X, Y, sw = design.source, loss.Y, loss.sample_weight
    m = W.shape[1]
    spec = {
        "cls": loss._numpy_class, "state": loss._state(), "m": m, **_columns_spec(design, W, np.asarray(rows)),
        "b": b, "gradient": gradient, "hessian": hessian, "whole": whole, "inv_sw": 1.0 / loss.sw_sum,
        "scale": design.scale, "offset": design.offset,
    }
    token = tokenize(X.name, Y.name, sw.name, spec)
    kernel = partial(_point_block, spec=spec)
    name = f"point-pass-{token}"
    nb = X.numblocks[0]
    K = _block_tasks(kernel, name, X, Y, sw)
    z_name = f"point-xw-{token}"
    z_layer = {(z_name, i, 0): (operator.getitem, (name, i), 0) for i in range(nb)}
    XW = da.Array(HighLevelGraph.from_collections(z_name, z_layer, dependencies=[K]), z_name,
                  chunks=(X.chunks[0], (m,)), dtype=np.float64, meta=np.empty((0, 0)))
    sums = _sum_tree(K, f"point-sums-{token}", _sum)
    return XW, sums


def _sum_tree(K, name, combine):
    """The lazy reduction of the blocks of ``K`` by ``combine``, ``_policy.FAN_IN`` at a time.

    A dask array of one entry (an object array of one entry: see
    :func:`_boxed`), not a Delayed: optimised with the arrays computed
    with it as one graph, where a block's task read by both stays one task
    (an array and a Delayed are optimised apart, as a ``distributed``
    scheduler does: a persisted ``X W`` took the block's task into its own,
    and the kernel ran twice per block).
    """
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    level, keys, tree = 0, [(K.name, i) for i in range(K.numblocks[0])], {}
    while len(keys) > 1 or level == 0:
        groups = [keys[i:i + _policy.FAN_IN] for i in range(0, len(keys), _policy.FAN_IN)]
        keys = [(name, 0) if len(groups) == 1 else (f"{name}-{level}", j) for j in range(len(groups))]
        tree.update({key: (partial(_boxed, combine) if len(groups) == 1 else combine, *group)
                     for key, group in zip(keys, groups, strict=True)})
        level += 1
    return da.Array(HighLevelGraph.from_collections(name, tree, dependencies=[K]), name, chunks=((1,),),
                    dtype=object, meta=np.empty((0,), dtype=object))


def _block_tasks(function, name, X, *vectors):
    """One task per block of rows: ``function(x, *vectors' blocks)``, a dask array of objects in ``X``'s row chunks."""
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    layer = {(name, i): (function, (X.name, i, 0), *[(v.name, i) + (0,) * (v.ndim - 1) for v in vectors])
             for i in range(X.numblocks[0])}
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[X, *vectors])
    return da.Array(graph, name, chunks=(X.chunks[0],), dtype=object, meta=np.empty((0,), dtype=object))


def _set_up_block(x, y, w):
    """One block's summaries for the set-up of a GLM loss (see :func:`set_up_pass`), tile by tile."""
    n, p = x.shape
    y = np.asarray(y, dtype=np.float64).reshape(n, -1)
    w = np.asarray(w, dtype=np.float64)
    out = {"bad": 0, "high": np.full(p, -np.inf), "low": np.full(p, np.inf), "weight": 0.0, "xw": np.zeros(p),
           "m2": np.zeros(p), "xyw": np.zeros((p, y.shape[1]))}
    for start in range(0, n, _policy.TILE_ROWS):
        xt = np.asarray(x[start:start + _policy.TILE_ROWS], dtype=np.float64)
        wt = w[start:start + _policy.TILE_ROWS]
        bad = int(np.count_nonzero(~np.isfinite(xt)))
        if bad:  # (reported by the caller: zeros, so that the moments below raise no RuntimeWarning)
            out["bad"] += bad
            xt = np.where(np.isfinite(xt), xt, 0.0)
        out["high"] = np.maximum(out["high"], xt.max(axis=0, initial=-np.inf))
        out["low"] = np.minimum(out["low"], xt.min(axis=0, initial=np.inf))
        weight, xw = float(wt.sum()), xt.T @ wt
        d = xt - xw / weight if weight > 0 else xt
        tile = {"weight": weight, "xw": xw, "m2": (d * d).T @ wt if weight > 0 else np.zeros(p)}
        out.update(_merge_moments(out, tile))
        out["xyw"] += xt.T @ (y[start:start + _policy.TILE_ROWS] * wt[:, None])
    return out


def _merge_moments(a, b):
    """Weight, ``X^T w`` and the weighted squares about the weighted means of two sets of rows, from theirs."""
    total = a["weight"] + b["weight"]
    m2 = a["m2"] + b["m2"]
    if a["weight"] > 0 and b["weight"] > 0:  # (Chan et al.'s pairwise update: no cancellation with large means)
        d = a["xw"] / a["weight"] - b["xw"] / b["weight"]
        m2 = m2 + (a["weight"] * b["weight"] / total) * d * d
    return {"weight": total, "xw": a["xw"] + b["xw"], "m2": m2}


def _set_up_merge(*parts):
    out = None
    for part in parts:
        if out is None:
            out = dict(part)
            continue
        out.update(_merge_moments(out, part), bad=out["bad"] + part["bad"], xyw=out["xyw"] + part["xyw"],
                   high=np.maximum(out["high"], part["high"]), low=np.minimum(out["low"], part["low"]))
    return out


def set_up_pass(X, Y, w):
    """The summaries of ``X`` that a GLM loss's set-up needs, lazily, one task per block of ``X``.

    Returns a dask array of one entry, a dict: ``bad`` (non-finite values
    of ``X``), the columns' extremes ``high`` and ``low``, ``weight``
    (``sum w``), ``xw`` (``X^T w``), ``m2`` (``sum_i w_i (x_ij - xw_j /
    weight)^2``, merged block by block about each block's means) and
    ``xyw`` (``X^T (w Y)``, ``(p, m)``); the weights ``w`` as given
    (non-negative and finite, or the set-up refuses them).
    """
    from dask.base import tokenize

    token = tokenize(X.name, Y.name, w.name, "set-up")
    K = _block_tasks(_set_up_block, f"set-up-blocks-{token}", X, Y, w)
    return _sum_tree(K, f"set-up-{token}", _set_up_merge)


def _product_block(x, z, y, w, *, spec):
    """One block's terms of ``X^T (s h(z, X V + c))`` and of their sums (see :func:`product_pass`)."""
    n, cols, c = x.shape[0], spec["cols"], spec["c"]
    m = spec["Vr"].shape[1]
    w = np.asarray(w, dtype=np.float64)
    loss = None
    if z is not None:
        y = np.asarray(y, dtype=np.float64).reshape(n, -1)
        loss = object.__new__(spec["cls"])
        loss.__dict__.update(spec["state"])
    p = x.shape[1] if cols is None else cols.size
    g, sums = np.zeros((p, m)), np.zeros(m)
    for start in range(0, n, _policy.TILE_ROWS):
        stop = min(start + _policy.TILE_ROWS, n)
        xt, zv = _tile_product(x[start:stop], spec)
        if c is not None:
            zv += c
        if loss is not None:
            loss.Y = y[start:stop]
            zv = loss._hz(np.asarray(z[start:stop], dtype=np.float64), zv)
        D = zv * (w[start:stop] * spec["inv_sw"])[:, None]
        g += xt.T @ D
        sums += D.sum(axis=0)
    return [g, sums]


def product_pass(loss, V, c, Z=None):
    """The lazy raw ``X^T D`` and ``D.sum(axis=0)`` of ``D = S h(Z, X V + c)``: one task per block of ``X``.

    ``S`` the loss's sample shares (weights over their sum); ``h`` the
    loss's ``_hz`` at the linear predictor ``Z`` (a Hessian-vector
    product), or the identity when ``Z`` is None (the weighted Gram
    matrix's product, :meth:`~sparse_estimators.losses._base.BaseLoss._gram_apply`).
    ``X V`` is computed in the block's tiles (``X`` read once); ``c`` is
    added to it (None: nothing). Returns a dask array of one entry, the list
    ``[X^T D (raw: before the design's scale and centring), D.sum(axis=0)]``.
    """
    from dask.base import tokenize

    design = loss.design
    X, Y, sw = design.source, loss.Y, loss.sample_weight
    rows = np.flatnonzero(np.any(V != 0, axis=1))  # (the product reads the columns of V's non-zero rows)
    spec = {
        "cls": loss._numpy_class, "state": loss._state(), **_columns_spec(design, V, rows),
        "c": None if c is None else np.asarray(c, dtype=np.float64), "inv_sw": 1.0 / loss.sw_sum,
    }
    token = tokenize(X.name, None if Z is None else Z.name, Y.name, sw.name, spec)
    if Z is None:
        K = _block_tasks(partial(_product_block_identity, spec=spec), f"product-{token}", X, sw)
    else:
        K = _block_tasks(partial(_product_block, spec=spec), f"product-{token}", X, Z, Y, sw)
    return _sum_tree(K, f"product-sums-{token}", _sum)


def _product_block_identity(x, w, *, spec):
    return _product_block(x, None, None, w, spec=spec)
