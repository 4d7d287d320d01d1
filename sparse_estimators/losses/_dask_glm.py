"""The GLM losses on a dask ``X`` with every vector of ``n`` rows on the workers.

A loss here is the NumPy loss class (logistic, multinomial, Poisson, Gamma)
with :class:`DaskRowsMixin` in front: its targets ``Y``, sample weights and
linear predictors ``Z`` are dask arrays in ``X``'s row chunks (``Z``
persisted on the workers by :class:`~sparse_estimators.losses._dask_linear.DaskLinearDesign`),
the pointwise functions of the NumPy class are applied to them block by
block (the same code, so the same values), and every product with ``X``
(gradient, Hessian-vector product, ``X_S^T W X_S``, column moments) is a
blockwise reduction computed in one pass: only vectors of ``p`` or
``n_classes`` entries reach the client (issue 35: the client had held the
targets, weights and linear predictors, 80 MB each at 10^7 rows).
"""

import numpy as np

from ._dask_linear import _is_lazy

#: attributes of a loss that its pointwise functions may read besides ``Y`` (scalars only: sent to every block)
_SCALARS = (bool, int, float, np.floating, np.integer)


def _same_point(point, other):
    return all(np.array_equal(a, np.asarray(c, dtype=float)) for a, c in zip(point, other, strict=True))


def _on_block(z, y, *more, cls, state, method):
    """``cls.<method>(z, *more)`` on one block, the loss's targets ``Y`` being the block's ``y``."""
    block = object.__new__(cls)
    block.__dict__.update(state)
    block.Y = y
    return getattr(block, method)(z, *more)


class DaskRowsMixin:
    """The methods of :class:`~sparse_estimators.losses._logistic._GLMLoss` that touch ``n`` rows, on dask arrays.

    Put in front of a NumPy GLM loss class (see :func:`dask_loss_class`);
    instances are built by :func:`make_dask_loss`, never by the NumPy
    constructor (which would read ``y`` into memory).
    """

    #: the NumPy loss class whose pointwise functions the blocks run
    _numpy_class = None
    #: ``X`` is read block by block, never indexed or multiplied in memory (I-OBS takes its 'dense' route)
    blockwise = True

    def _state(self):
        return {key: value for key, value in self.__dict__.items() if isinstance(value, _SCALARS)}

    def constant_target(self):
        """The set-up's, from its pass's extremes of the target (:func:`make_dask_loss`'s attributes); no pass here."""
        return self.__dict__.get("_constant_target")

    def _blocks(self, method, Z, *more, out_columns=None, drop=False, square=False):
        """The NumPy class's pointwise ``method`` applied to the blocks of ``Z`` (lazy)."""
        m = Z.shape[1]
        kwargs = {"cls": self._numpy_class, "state": self._state(), "method": method, "dtype": np.float64}
        if drop:
            return Z.map_blocks(_on_block, self.Y, *more, drop_axis=1, meta=np.empty((0,)), **kwargs)
        if square:
            return Z.map_blocks(_on_block, self.Y, *more, new_axis=2, chunks=(Z.chunks[0], (m,), (m,)),
                                meta=np.empty((0, 0, 0)), **kwargs)
        return Z.map_blocks(_on_block, self.Y, *more, meta=np.empty((0, 0)), **kwargs)

    def _pointwise(self, Z):
        return self._blocks("_pointwise", Z, drop=True)

    def _dz(self, Z):
        return self._blocks("_dz", Z)

    def _hz(self, Z, Zv):
        return self._blocks("_hz", Z, Zv)

    def _hess_diag(self, Z):
        return self._blocks("_hess_diag", Z)

    def _hess_weights(self, Z):
        return self._blocks("_hess_weights", Z, square=True)

    #: the last point evaluated by :meth:`_evaluate`: ``((W, b), name of Z, mean loss, Hessian or None,
    #: (gW, gb) or None, the restricted loss's raw gradient on all the source's columns and its sums, or None)``
    _at = None
    #: whether :meth:`value_and_gradient` computes the Hessian in its pass (the refits' losses on a support's
    #: columns, whose Newton steps ask for it at nearly every point evaluated; a few columns: cheap products)
    _fuse_hessian = False
    #: the loss of the last :meth:`restrict` (whose last point a refit's result is, see :meth:`_from_restricted`)
    _restricted = None
    #: whether a point's linear predictor comes with the loss there (least squares reads its own statistics)
    _evaluates = True
    #: the support of a :meth:`restrict` loss (its columns among its parent's), None for the whole loss
    _support = None

    def _evaluate(self, W, b, rows, gradient):
        """``Z`` at ``(W, b)`` persisted, with the loss there (and its gradient) from the same pass over ``X``.

        ``X W`` is kept as the design's last matvec, the value for
        :meth:`value_from_z`, the gradient for :meth:`gradient_from_z` and,
        with ``_fuse_hessian``, the Hessian for :meth:`hessian`: one
        computation per point evaluated, one task per block of ``X``
        (:mod:`~sparse_estimators.losses._dask_kernel`). The gradient comes
        with every point (a trial step's, which the solver asks for next
        once the step is accepted), the Hessian with ``gradient`` only.
        Returns ``Z`` and, with ``gradient``, ``(f, gW, gb)``.
        """
        from ._dask_kernel import point_pass

        design = self.design
        has_b = self.intercept_is_variable and self.fit_intercept
        fuse = gradient and self._fuse_hessian
        # (a refit's loss: the whole loss's gradient at its result, see _from_restricted)
        whole = self._support is not None and design.source_columns is not None
        XW, flat = point_pass(self, W, rows, np.asarray(b, dtype=float) if has_b else None, True, fuse, whole)
        (XW,), (values,) = design.persist_and_compute([XW], [flat])
        design.remember_matvec(W, rows, XW)
        Z = XW + b if has_b else XW
        m = self.n_outputs
        f = float(values[0]) / self.sw_sum
        sums = np.asarray(values[2], dtype=float)
        gW = design._rmatvec_finish(values[1] * design.scale, sums) + self.alpha * W
        gb = sums.copy() if self.fit_intercept else np.zeros(m)
        H = None
        if fuse:  # (G, raw X^T h, h.sum() per pair of classes: as weighted_grams_lazy's)
            H = self._hessian_finish([v[:, None] * design.scale if i % 3 == 1 else v
                                      for i, v in enumerate(values[3:3 + 3 * (m * (m + 1) // 2)])])
        whole = (values[-1] * design.scale, sums) if whole else None
        self._at = ((W.copy(), np.array(b, dtype=float)), Z.name, f, H, (gW, gb), whole)
        if not gradient:
            return Z
        return Z, (f + 0.5 * self.alpha * float(np.vdot(W, W)), gW.copy(), gb.copy())

    def linear_predictor(self, W, b, rows=None):  # noqa: D102 - see BaseLoss.linear_predictor
        rows = np.flatnonzero(np.any(W != 0, axis=1)) if rows is None else np.asarray(rows)
        if self._evaluates and rows.size and self.design.cached_matvec(W, rows) is None:
            Z = self._from_restricted(W, b, rows)
            return self._evaluate(W, b, rows, gradient=False) if Z is None else Z
        Z = super().linear_predictor(W, b, rows)
        if not rows.size and _is_lazy(Z):  # (a constant predictor: its gradient needs no pass, see below)
            self._constant_z = (Z.name, np.array(b, dtype=float))
        return Z

    #: ``(X^T s, X^T (s Y))`` from the set-up's pass (``s`` the sample weights, ``X`` the design's), or None
    _set_up_products = None
    #: the name of the last constant predictor (``W = 0``) of :meth:`linear_predictor` and its ``b``
    _constant_z = None

    def _gradient_at_constant(self, b, W):
        """The gradient at ``(0, b)`` from :attr:`_set_up_products`: no pass over ``X``.

        The predictor is the same ``z`` on every row there, and the
        derivative of each of these losses (logistic, multinomial, Poisson,
        Gamma) at a given ``z`` is affine in the targets: ``D_i = a + Y_i C``
        with ``a`` and ``C`` from the NumPy class's own ``_dz`` on the rows
        ``Y = 0`` and ``Y = e_k``. So ``X^T S D = X^T s a^T + X^T (s Y) C``.
        """
        m = self.n_outputs
        a, C = self._affine_in_targets("_dz", b)
        xw, xyw = self._set_up_products
        sums = a + (self.label_sums @ C) / self.sw_sum
        G = (np.outer(xw, a) + xyw @ C) / self.sw_sum
        gW = self.design._rmatvec_finish(G, sums.copy()) + self.alpha * W
        return gW, (sums if self.fit_intercept else np.zeros(m))

    def _from_restricted(self, W, b, rows):
        """``Z`` at ``(W, b)`` from the last :meth:`restrict` loss if it evaluated that point last, else None.

        A refit's result is the last point its Newton steps evaluated on the
        support's columns: its ``X W`` (the same product of the same numbers)
        and value are kept, instead of a pass over ``X`` for them.
        """
        sub = self._restricted
        at = None if sub is None else sub._at
        if at is None or not np.array_equal(rows, sub._support[np.flatnonzero(np.any(at[0][0] != 0, axis=1))]):
            return None
        (W_sub, b_sub), _, f, _, _, whole = at
        if not (np.array_equal(W[sub._support], W_sub) and np.array_equal(np.asarray(b, dtype=float), b_sub)):
            return None
        XW = sub.design.cached_matvec(W_sub, np.flatnonzero(np.any(W_sub != 0, axis=1)))
        if XW is None:
            return None
        self.design.remember_matvec(W, rows, XW)
        Z = XW + b if self.intercept_is_variable and self.fit_intercept else XW
        gradient = None
        if whole is not None:  # (this loss's gradient there, from the refit's last pass)
            G, sums = whole
            G = G.copy() if self.design.source_columns is None else G[self.design.source_columns]
            gW = self.design._rmatvec_finish(G, sums.copy()) + self.alpha * W
            gradient = (gW, sums.copy() if self.fit_intercept else np.zeros(self.n_outputs))
        self._at = ((W.copy(), np.array(b, dtype=float)), Z.name, f, None, gradient, None)
        return Z

    def value_from_z(self, Z, W):  # noqa: D102 - see BaseLoss.value_from_z (kept from Z's pass when it was ours)
        b = self._at_constant(Z)
        if b is not None:  # (the pointwise losses are affine in the targets too: from the weighted label sums)
            a, c = self._affine_in_targets("_pointwise", b)
            return float(a + self.label_sums @ c / self.sw_sum) + 0.5 * self.alpha * float(np.vdot(W, W))
        at = self._at
        if at is not None and _is_lazy(Z) and Z.name == at[1]:
            return at[2] + 0.5 * self.alpha * float(np.vdot(W, W))
        return super().value_from_z(Z, W)

    def _affine_in_targets(self, method, b):
        """``(a, C)`` with ``method(z)`` of a row of targets ``y`` equal to ``a + y C`` at the constant predictor.

        From the NumPy class's ``method`` on the rows ``y = 0`` and
        ``y = e_k`` (see :meth:`_gradient_at_constant`).
        """
        m = self.n_outputs
        z = np.asarray(b, dtype=float) if self.intercept_is_variable and self.fit_intercept else np.zeros(m)
        d = np.asarray(_on_block(np.tile(z, (m + 1, 1)), np.vstack([np.zeros(m), np.eye(m)]),
                                 cls=self._numpy_class, state=self._state(), method=method), dtype=float)
        return d[0], d[1:] - d[0]

    def _at_constant(self, Z):
        """The ``b`` of ``Z`` if it is the last constant predictor (``W = 0``) and the set-up's products are known."""
        constant = self._constant_z
        if self._set_up_products is not None and constant is not None and _is_lazy(Z) and Z.name == constant[0]:
            return constant[1]
        return None

    def gradient_from_z(self, Z, W):  # noqa: D102 - see BaseLoss.gradient_from_z (kept from Z's pass when ours)
        b = self._at_constant(Z)
        if b is not None and not np.any(W):
            return self._gradient_at_constant(b, W)
        at = self._at
        if at is not None and at[4] is not None and _is_lazy(Z) and Z.name == at[1] and np.array_equal(W, at[0][0]):
            return at[4][0].copy(), at[4][1].copy()
        return super().gradient_from_z(Z, W)

    def value_and_gradient(self, W, b):  # noqa: D102 - see BaseLoss.value_and_gradient: one pass
        rows = np.flatnonzero(np.any(W != 0, axis=1))
        if self._evaluates and rows.size and self.design.cached_matvec(W, rows) is None:
            return self._evaluate(W, b, rows, gradient=True)[1]
        return super().value_and_gradient(W, b)

    def _backprop(self, D, W):
        # X^T D and the intercept's D.sum(axis=0) from one pass
        gW, gb = self.design.rmatvec_and_sums(D * self._sample_share)
        gW = gW + self.alpha * W
        return gW, (gb if self.fit_intercept else np.zeros(self.n_outputs))

    def _product(self, V, c, Z=None):
        """``X^T S h(Z, X V + c)`` (centred) and its sums from one pass, one task per block (see ``product_pass``)."""
        from ._dask_kernel import product_pass

        G, sums = self.design._compute(product_pass(self, V, c, Z))
        return self.design._rmatvec_finish(G * self.design.scale, sums), sums

    def hessp(self, W, b, V, c):  # noqa: D102 - see BaseLoss.hessp
        # X V is not persisted: computed in the tiles of the pass of the product with X^T (X read once)
        gW, gb = self._product(V, c if self.fit_intercept else None, self.linear_predictor(W, b))
        return gW + self.alpha * V, (gb if self.fit_intercept else np.zeros(self.n_outputs))

    def hessian(self, W, b):  # noqa: D102 - see BaseLoss.hessian: every block of classes from one pass
        at = self._at
        if at is not None and at[3] is not None and _same_point(at[0], (W, b)):
            return at[3].copy()  # (computed in the pass of the value and gradient at this point)
        flat = self.design._compute(*self._hessian_lazy(self.linear_predictor(W, b)))
        return self._hessian_finish(flat if isinstance(flat, list) else [flat])

    def _hessian_lazy(self, Z):
        """The lazy weighted Gram matrices of the Hessian at ``Z`` (three arrays per pair of classes)."""
        m = self.n_outputs
        Hw = self._hess_weights(Z) * (self.sample_weight / self.sw_sum)[:, None, None]
        return self.design.weighted_grams_lazy([Hw[:, a, c] for a in range(m) for c in range(a, m)])

    def _hessian_finish(self, flat):
        """The Hessian from the computed values of :meth:`_hessian_lazy`."""
        m, p = self.n_outputs, self.n_features
        pairs = [(a, c) for a in range(m) for c in range(a, m)]
        parts = self.design.weighted_grams_finish(flat)
        has_b = self.fit_intercept
        q = p + int(has_b)
        H = np.zeros((q, m, q, m))
        for (a, c), (G, cross, total) in zip(pairs, parts, strict=True):
            block = np.zeros((q, q))
            block[:p, :p] = G
            if has_b:
                block[:p, p] = block[p, :p] = cross
                block[p, p] = total
            H[:, a, :, c] = block
            H[:, c, :, a] = block.T
        H = H.reshape(q * m, q * m)
        H[np.arange(p * m), np.arange(p * m)] += self.alpha
        return H

    def _gram_apply(self, v):  # noqa: D102 - see BaseLoss._gram_apply: one pass per product
        p = self.n_features
        aug = self.intercept_is_variable and self.fit_intercept
        out, total = self._product(v[:p, None], v[p:p + 1] if aug else None)
        return np.append(out[:, 0], total) if aug else out[:, 0]

    def initial_intercept(self):  # noqa: D102 - the NumPy class's, from the weighted label sums of the set-up
        stand_in = object.__new__(self._numpy_class)
        stand_in.__dict__.update(self.__dict__)
        stand_in.sample_weight, stand_in.Y = np.ones(1), self.label_sums[None, :]
        return self._numpy_class.initial_intercept(stand_in)

    def restrict(self, support, dtype=np.float64):  # noqa: D102 - the same vectors, the support's columns
        sub = object.__new__(type(self))
        sub.__dict__.update(self.__dict__)
        sub.design = self.design.columns(support, dtype)
        sub.n_features = sub.design.shape[1]
        for cache in ("_coordinate_curvatures", "_coordinate_lipschitz", "_candidate_cache"):
            sub.__dict__.pop(cache, None)
        sub._lipschitz = None
        sub._at, sub._fuse_hessian, sub._restricted, sub._support = None, True, None, np.asarray(support)
        if self._set_up_products is not None:
            xw, xyw = self._set_up_products
            sub._set_up_products = (xw[sub._support], xyw[sub._support])
        self._restricted = sub
        return sub


class DaskSquaredMixin(DaskRowsMixin):
    """:class:`DaskRowsMixin` for :class:`~sparse_estimators.losses._squared.SquaredLoss` read at every iteration.

    Least squares above the Gram path's size (see
    :data:`~sparse_estimators._policy.DASK_GRAM_MAX_FEATURES`):
    the refits solve the normal equations of the support (``X_S^T S X_S``
    and ``X_S^T S Y`` from one pass) instead of copying the support's
    columns into the client; the splicing candidates share the normal
    equations of their union (one pass), and their values are the quadratic
    form of those statistics.
    """

    _evaluates = False

    def hessp(self, W, b, V, c):  # noqa: D102 - one pass (X V computed in the pass of the product with X^T)
        return self._product(V, None)[0], None

    def hessian(self, W=None, b=None):  # noqa: D102 - see SquaredLoss.hessian
        return self._numpy_class.hessian(self, W, b)

    def divergence_from_z(self, Z, Z_new):  # noqa: D102 - see SquaredLoss.divergence_from_z
        D = Z_new - Z
        return 0.5 * float(self.sample_weight @ (D * D).sum(axis=1)) / self.sw_sum

    def _yy(self):
        """``Y^T S Y`` (m,), the targets' weighted sums of squares (computed once, without reading X)."""
        if getattr(self, "_target_squares", None) is None:
            self._target_squares = np.atleast_1d(np.asarray(
                (self.Y * self.Y * self.sample_weight[:, None]).sum(axis=0).compute(), dtype=float))
        return self._target_squares

    def _target_mean_square(self):  # (see SquaredLoss.value_unit; from the targets alone, without reading X)
        return float(self._yy().sum()) / self.sw_sum

    def _normal_equations(self, support):
        """``X_S^T S X_S`` and ``X_S^T S Y`` (raw weights ``S``) from one pass, for the columns ``support``."""
        design = self.design.columns(support)
        Xc = design._centred()
        S = self.sample_weight[:, None]
        G, rhs = design._compute(Xc.T @ (Xc * S), Xc.T @ (self.Y * S))
        return design._zero_constant(G), design._rmatvec_finish(rhs, 0.0)

    def _value(self, coef, G, rhs):
        """The loss of the coefficients ``coef`` on the columns of the normal equations ``G``, ``rhs``."""
        quadratic = self._yy().sum() - 2.0 * float(np.vdot(coef, rhs)) + float(np.vdot(coef, G @ coef))
        return max(0.5 * quadratic / self.sw_sum, 0.0)

    def refit(self, support, W, b, *, precise=True):  # noqa: D102 - see SquaredLoss.refit, from the statistics
        support = np.asarray(support)
        if self.positive:
            return self._nonnegative_refit(support, W, b)
        W_full = np.zeros_like(W)
        if support.size:
            from ._dask_squared import solve_normal_equations

            W_full[support] = solve_normal_equations(*self._normal_equations(support))
        return W_full, b

    def _nonnegative_refit(self, support, W, b):
        """Non-negative least squares on ``support`` from its normal equations (one pass)."""
        W_full = np.zeros_like(W)
        if support.size:
            from ._dask_squared import nonnegative_normal_equations

            W_full[support] = nonnegative_normal_equations(*self._normal_equations(support))
        return W_full, b

    def refit_candidates(self, supports, W, b):  # noqa: D102 - see SquaredLoss.refit_candidates (one pass)
        from ._squared import _cholesky_solve, _one_size

        supports, _ = _one_size(supports)
        if self.positive or not supports or not all(s.size for s in supports):
            return super().refit_candidates(supports, W, b)
        union = np.array(sorted(set().union(*(s.tolist() for s in supports))), dtype=np.intp)
        G, rhs = self._normal_equations(union)
        out = []
        for support in supports:
            pos = np.searchsorted(union, support)
            G_s, rhs_s = G[np.ix_(pos, pos)], rhs[pos]
            coef = _cholesky_solve(G_s, rhs_s, 1e-8, G_s.diagonal().max())
            if coef is None:  # (nearly collinear: the refit's own solve)
                W_c, b_c = self.refit(support, W, b)
                coef = W_c[support]
            W_c = np.zeros_like(W)
            W_c[support] = coef
            out.append((W_c, b, self._value(coef, G_s, rhs_s), self.linear_predictor(W_c, b, support)))
        return out

    def restrict(self, support, dtype=np.float64):  # noqa: D102
        sub = super().restrict(support, dtype)
        sub.x_mean = self.x_mean[np.asarray(support)]
        return sub


_CLASSES = {}


def dask_loss_class(cls):
    """``cls`` with :class:`DaskRowsMixin` (:class:`DaskSquaredMixin` for least squares) in front, one per class."""
    if cls not in _CLASSES:
        from ._squared import SquaredLoss

        mixin = DaskSquaredMixin if issubclass(cls, SquaredLoss) else DaskRowsMixin
        _CLASSES[cls] = type(f"Dask{cls.__name__}", (mixin, cls), {"_numpy_class": cls})
    return _CLASSES[cls]


def make_dask_loss(cls, design, Y, sample_weight, stats, fit_intercept, alpha=0.0, **attributes):
    """A :func:`dask_loss_class` loss on ``design`` from the set-up's summaries (nothing computed).

    Parameters
    ----------
    cls : a NumPy GLM loss class
    design : DaskLinearDesign (resident), its offset and constant columns set
    Y : dask array (n, m), float64
        The targets as the NumPy class holds them (labels, one column per class, ...).
    sample_weight : dask array (n,)
    stats : dict
        ``weight`` (sum of the weights), ``positive`` (rows of positive
        weight), ``uniform`` (all weights equal), ``label_sums``
        (``sample_weight @ Y``); optional: ``moments`` (the design's
        :meth:`column_moments` of ``sample_weight / weight``) and
        ``products`` (``(X^T s, X^T (s Y))`` for the design's ``X`` and the
        weights ``s``, see :meth:`DaskRowsMixin._gradient_at_constant`).
    fit_intercept, alpha
    **attributes
        Further attributes of the NumPy class (``null_mean``, ``curvature``, ...).
    """
    loss = object.__new__(dask_loss_class(cls))
    loss.design = design
    loss.n_samples, loss.n_features = design.shape
    loss.n_outputs = Y.shape[1]
    loss.fit_intercept = fit_intercept
    loss.alpha = float(alpha)
    loss.sample_weight = sample_weight
    loss.sw_sum = float(stats["weight"])
    loss._sample_share = (sample_weight / loss.sw_sum)[:, None]
    loss.n_positive = int(stats["positive"])
    loss.n_observations = max(loss.sw_sum, float(loss.n_positive))
    loss.uniform_weights = bool(stats["uniform"])
    loss._lipschitz = None
    loss.Y = Y
    loss._labels_sw = None
    loss.label_sums = np.asarray(stats["label_sums"], dtype=float)
    loss._set_up_products = stats.get("products")
    if stats.get("moments") is not None:  # (the coordinate curvatures' weights: no pass for their moments)
        design.remember_moments(sample_weight / loss.sw_sum, stats["moments"])
    loss.__dict__.update(attributes)
    return loss
