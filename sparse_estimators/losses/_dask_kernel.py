"""A point's pass over a dask ``X`` as one task per block of rows, the blocks' results summed in a tree.

The GLM losses on dask data (:mod:`sparse_estimators.losses._dask_glm`)
evaluate each point ``(W, b)`` in one pass: ``X W`` (kept on the workers),
the loss value, its gradient and, on a refit's support columns, its
Hessian. Built from dask array operations, that pass was about 20 (30 with
the Hessian) tasks per block, each charged the scheduler's overhead, and
each block of ``X`` was read from memory two or three times (``X W``, then
``X^T r``, then the support's columns). :func:`point_pass` builds it as
one task per block (:func:`_point_block`), which streams its block once,
in tiles of :data:`TILE_ROWS` rows that stay in the cache while the
product, the pointwise loss, the gradient's and the Hessian's terms of the
tile are computed; plus one task per block that picks its ``X W`` out and
a tree of sums of the small results (:data:`FAN_IN` at a time). Only the
sum (``p``-sized, ``k^2``-sized with the Hessian) reaches the client.
"""

import operator
from functools import partial

import numpy as np

#: rows of a block processed at a time by :func:`_point_block`: 2048 rows of 100 float64 columns are 1.6 MB,
#: within the cache while the tile's product, loss, gradient and Hessian terms read it (doc/changelog.rst
#: gives the tile sizes measured)
TILE_ROWS = 2048
#: the small results of this many blocks summed by one task of the reduction tree
FAN_IN = 8


def _point_block(x, y, w, *, spec):
    """One block's ``X W`` and its terms of the value, gradient and Hessian: ``(XW, list of small arrays)``.

    ``x`` is the block of the source array (all its columns), ``y`` the
    loss's targets ``(rows, m)`` and ``w`` the sample weights of the block.
    See :func:`point_pass` for ``spec`` and the order of the list.
    """
    cls, state, m = spec["cls"], spec["state"], spec["m"]
    cols, rows, Wr, shift, b = spec["cols"], spec["rows"], spec["Wr"], spec["shift"], spec["b"]
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
    every = rows is None
    for start in range(0, n, TILE_ROWS):
        stop = min(start + TILE_ROWS, n)
        tile = x[start:stop]
        xt = np.asarray(tile if cols is None else tile[:, cols], dtype=np.float64)
        zt = (xt if every else xt[:, rows]) @ Wr
        if shift is not None:
            zt -= shift
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


def _boxed_sum(*parts):
    """:func:`_sum` in an object array of one entry: the one block of the dask array of the sums."""
    box = np.empty(1, dtype=object)
    box[0] = _sum(*parts)
    return box


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
    m, p = W.shape[1], design.shape[1]
    rows = np.asarray(rows)
    scale = design.scale
    Wr = np.ascontiguousarray(W if rows.size == p else W[rows], dtype=np.float64) * scale
    offset = design.offset
    spec = {
        "cls": loss._numpy_class, "state": loss._state(), "m": m, "cols": design.source_columns,
        "rows": None if rows.size == p else rows, "Wr": Wr,
        "shift": None if offset is None else offset[rows] @ W[rows], "b": b, "gradient": gradient,
        "hessian": hessian, "whole": whole, "inv_sw": 1.0 / loss.sw_sum, "scale": scale, "offset": offset,
    }
    token = tokenize(X.name, Y.name, sw.name, spec)
    kernel = partial(_point_block, spec=spec)
    name = f"point-pass-{token}"
    nb = X.numblocks[0]
    layer = {(name, i): (kernel, (X.name, i, 0), (Y.name, i, 0), (sw.name, i)) for i in range(nb)}
    blocks = HighLevelGraph.from_collections(name, layer, dependencies=[X, Y, sw])
    K = da.Array(blocks, name, chunks=(X.chunks[0],), dtype=object, meta=np.empty((0,), dtype=object))
    z_name = f"point-xw-{token}"
    z_layer = {(z_name, i, 0): (operator.getitem, (name, i), 0) for i in range(nb)}
    XW = da.Array(HighLevelGraph.from_collections(z_name, z_layer, dependencies=[K]), z_name,
                  chunks=(X.chunks[0], (m,)), dtype=np.float64, meta=np.empty((0, 0)))
    s_name = f"point-sums-{token}"
    level, keys, tree = 0, [(name, i) for i in range(nb)], {}
    while len(keys) > 1 or level == 0:
        groups = [keys[i:i + FAN_IN] for i in range(0, len(keys), FAN_IN)]
        keys = [(s_name, 0) if len(groups) == 1 else (f"{s_name}-{level}", j) for j in range(len(groups))]
        tree.update({key: (_boxed_sum if len(groups) == 1 else _sum, *group)
                     for key, group in zip(keys, groups, strict=True)})
        level += 1
    # (an array, not a Delayed: optimised with XW as one graph, where each block's task has two dependents and
    # stays one task; optimised apart, as a distributed scheduler does with an array and a Delayed, XW's graph
    # fused that task into its own and the kernel ran twice per block)
    sums = da.Array(HighLevelGraph.from_collections(s_name, tree, dependencies=[K]), s_name, chunks=((1,),),
                    dtype=object, meta=np.empty((0,), dtype=object))
    return XW, sums
