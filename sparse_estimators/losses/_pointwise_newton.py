"""Newton refits of the single-output pointwise losses (Poisson, Gamma, Huber) on a small dense support.

The splicing search refits a dozen small candidates per fit; with
``n x (k + 1)`` blocks of a few columns, the generic Newton loop
(:func:`~sparse_estimators.losses._numerics.newton_minimise` on closures) cost
more in Python overhead than in arithmetic. This loop computes the value and
both derivatives of the pointwise loss in one pass per accepted point, tries
line-search steps along the precomputed ``A d`` (no product with ``A`` per
trial), and factors the Hessian by LAPACK's Cholesky directly. Its products
are ``ndarray.dot``: the BLAS calls of ``@`` on the same strides, without the
matmul ufunc's dispatch (about a microsecond each, a dozen per Newton step).
"""

import math
from collections.abc import Sequence

import numpy as np
from scipy.linalg import lapack

from .. import _policy
from .._utils import concatenate as _concatenate
from ._numerics import min_norm_solve


def cholesky_solve(H, g):
    """``H^{-1} g`` by LAPACK's Cholesky; the minimum-norm solution when a pivot is below ``1e-10`` of its diagonal.

    :func:`~sparse_estimators.losses._numerics.cholesky_newton_solve` without
    the wrappers' checks (a few microseconds each, on 6 x 6 systems).
    """
    L, x, info = _posv(H, g, 1)  # (lower=1 by position: f2py's keyword parsing took as long as the solve)
    if info == 0:
        # every pivot**2 - 1e-10 H_jj > 0 (NaN fails), on Python floats: the same products and differences
        # as NumPy's elementwise ones, without five NumPy calls (this runs a dozen times per 200 x 100 fit)
        entries = H.diagonal().tolist()
        for j, pivot in enumerate(L.diagonal().tolist()):  # (a third faster than zip(..., strict=True))
            if not pivot * pivot - 1e-10 * entries[j] > 0.0:
                break
        else:
            return x
    return min_norm_solve(H, g)


_posv = lapack.dposv


def _fortran(A):
    """``A`` (n x q) in Fortran order, for the Hessian ``(A.T * w).dot(A)`` (a copy when ``A`` is in C order).

    The weighted rows ``A.T * w`` of a C-ordered ``A`` were formed in rows of
    ``q`` entries (one inner loop per sample, a third of a Newton step's time
    on 200 x 6 blocks); from the Fortran-ordered copy, in rows of ``n``. The
    Hessian product is the same BLAS ``gemm`` on the other layouts, which
    packs its operands alike: the same values (checked by the fingerprints),
    where the matrix-vector products of ``A`` change their sums with the
    layout and keep ``A``.
    """
    return A if A.flags.f_contiguous else A.copy(order="F")


class _PointwiseNewtonRefit:
    """Dense refits by a Newton loop specialised to one output (see the module docstring).

    A loss using it defines ``_parts(z) -> (values, first, second)``, the
    pointwise loss and its two derivatives in ``z`` (1-D arrays), and is a
    :class:`~sparse_estimators.losses._logistic._GLMLoss` with one output.
    """

    @property
    def candidate_decrement(self):
        """The decrement at which this loss's candidate refits stop (the logistic loss: 1e-6, see there).

        :data:`~sparse_estimators._policy.CANDIDATE_DECREMENT`, read when used.
        """
        return _policy.CANDIDATE_DECREMENT

    def _parts(self, z):
        raise NotImplementedError

    #: ``z -> c``, the curvatures of a quadratic majoriser of the pointwise loss at ``z``, used where the
    #: Hessian vanishes along the gradient (None: the loss's curvature never does)
    _flat_curvature = None

    def _dense_refit(self, support, W, b, max_iter, precise=True, A=None, factor=None):
        """:meth:`_GLMLoss._dense_refit` by :meth:`_newton` (``factor`` is unused: one output)."""
        support = np.asarray(support)
        k, has_b = support.size, self.fit_intercept
        if A is None:
            A = self._refit_columns(support)
        b = np.asarray(b, dtype=float)
        # (W[:, 0][support]: W[support, 0]'s values, gathered on the 1-D view in a third of the time; below too)
        theta = _concatenate([W[:, 0][support], b]) if has_b else W[:, 0][support].astype(float)
        theta, z, f = self._newton(A, theta, k, max_iter, precise)
        W_full = np.zeros(W.shape, W.dtype)  # (np.zeros_like without its Python wrapper)
        W_full[:, 0][support] = theta[:k]
        b_out = theta[k:].copy() if has_b else b
        return W_full, b_out, f, z[:, None]

    def _newton(self, A, theta, k, max_iter, precise, fallback=None, decrement=None, limit=None, state=None):
        """Minimise the loss over ``theta`` (``k`` coefficients, then the intercept) with columns ``A``.

        The stopping rules of :func:`~sparse_estimators.losses._numerics.newton_minimise`:
        with ``precise``, Newton steps (Armijo backtracking) until the step is
        at the level of rounding in ``theta``; without, the full step once the
        decrement is at most :data:`~sparse_estimators._policy.CANDIDATE_DECREMENT` times ``u + |f|``, ``u`` the
        loss's :attr:`value_unit` (1; Huber's ``scale ** 2``, Poisson's dispersion; the steps' ``1 + ||theta||``
        likewise :attr:`coef_unit`).
        ``fallback``: the start used instead where the loss is not finite at
        ``theta``; ``decrement``: the candidates' stopping level instead of
        :attr:`candidate_decrement`. Returns ``(theta, z, f)`` with ``z = A theta``
        (to rounding: accumulated along the steps).

        ``limit`` (or None): stop as soon as the value lies above ``limit`` by
        more than :data:`~sparse_estimators._policy.REJECT_DECREMENTS` Newton decrements; the return is then
        ``(None, state, f)``, and ``state`` passed back (with the same ``A``,
        ``k`` and ``precise``) resumes the iterations exactly where they stopped.
        """
        sw = self._sample_share[:, 0]
        alpha = self.alpha
        diag = np.arange(k) if alpha else None
        parts = self._parts
        # (bound once: the loop below makes a dozen such calls per step)
        A_dot, AT_dot = A.dot, A.T.dot
        AF = A if A.flags.f_contiguous else A.copy(order="F")  # (_fortran's: the Hessian's operand, see there)
        AFT, sw_dot = AF.T, sw.dot
        if decrement is None:
            decrement = self.candidate_decrement
        unit, size, origin = self.value_unit, self.coef_unit, self.value_origin()

        # the step is -x, x the solve's result: x is subtracted where the step was added (IEEE's a - b is
        # a + (-b), and products with -x are those with x negated: the same values, without -x's array)
        def value(z, th, t=None):
            """The value and derivatives at ``z``; ``th`` the point, or its base when ``t`` (``th - t x``)."""
            v, d, h = parts(z)
            f = float(sw_dot(v))
            if alpha:  # (the point is formed only for the l2 term)
                if t is not None:
                    th = th - t * x
                f += 0.5 * alpha * float(th[:k].dot(th[:k]))
            return f, d, h

        if state is None:
            z = A_dot(theta)
            f, d, h = value(z, theta)
            if not math.isfinite(f) and fallback is not None:  # (a start beyond exp's range: the plain one)
                theta = fallback
                z = A_dot(theta)
                f, d, h = value(z, theta)
            left = max_iter
        else:
            theta, z, f, d, h, left = state
        while left > 0:
            left -= 1
            g = AT_dot(sw * d)
            H = (AFT * (sw * h)).dot(AF)
            if alpha:
                g[:k] += alpha * theta[:k]
                H[diag, diag] += alpha
            x = cholesky_solve(H, g)
            slope = -float(g.dot(x))
            if slope == 0.0 and g.any() and self._flat_curvature is not None:
                # no curvature where the gradient points (Huber: no residual inside the threshold): the
                # Newton step was 0 and the refit stopped at its start; the majoriser's step instead
                H = (AFT * (sw * self._flat_curvature(z))).dot(AF)
                if alpha:
                    H[diag, diag] += alpha
                x = cholesky_solve(H, g)
                slope = -float(g.dot(x))
            if limit is not None and f - limit > -_policy.REJECT_DECREMENTS * slope:
                return None, (theta, z, f, d, h, left + 1), f
            Ax = A_dot(x)
            tol = unit + abs(f)  # (the rounding level of f: its size)
            if not precise and -slope <= decrement * (unit + abs(f - origin)):  # (the precision asked: units of y)
                z_new = z - Ax
                f_new = value(z_new, theta, 1.0)[0]
                if f_new <= f + 1e-12 * tol:
                    return theta - x, z_new, f_new
                return theta, z, f
            if -slope <= 1e-12 * tol:  # full steps until the step is at the level of rounding in theta
                z_new = z - Ax
                f_new, d_new, h_new = value(z_new, theta, 1.0)
                if not f_new <= f + 1e-12 * tol:
                    break
                theta, z, f, d, h = theta - x, z_new, f_new, d_new, h_new
                if math.sqrt(x.dot(x)) <= 1e-12 * (size + math.sqrt(theta.dot(theta))):
                    break
                continue
            t = 1.0
            while True:
                z_new = z - Ax if t == 1.0 else z - t * Ax  # (1.0 * x is x: the same sums)
                f_new, d_new, h_new = value(z_new, theta, t)
                if f_new <= f + 1e-4 * t * slope or t < 1e-10:
                    break
                t *= 0.5
            theta = theta - x if t == 1.0 else theta - t * x
            done = t * math.sqrt(x.dot(x)) <= 1e-12 * (size + math.sqrt(theta.dot(theta))) or f - f_new <= 0
            z, f, d, h = z_new, f_new, d_new, h_new
            if done:
                break
        return theta, z, f


    #: whether the splicing search passes ``limits`` to :meth:`refit_candidates` (see
    #: :data:`~sparse_estimators._policy.SCREEN_MARGIN`)
    screens_candidates = False
    #: whether it passes them to stop the refits of candidates that cannot get below them (see
    #: :data:`~sparse_estimators._policy.REJECT_DECREMENTS`; the refits of the others, and all results, are unchanged)
    rejects_candidates = False

    def refit_candidates(self, supports, W, b, limits=None, decrement=None):
        """Refit on each of several supports (see :meth:`BaseLoss.refit_candidates`), from a shared model.

        On a dense ``X`` the columns of the candidates and of the current
        support are copied once (their union ``U``), and the gradient and
        Hessian over ``U`` formed once at the current point ``(W, b)``, when
        the first candidate not in the cache (below) is read. Each
        candidate starts at the minimum of that quadratic model with its
        removed coefficients set to zero (the others of ``U`` stay zero),
        one shared Newton step that also moves the kept coefficients, and
        the added ones, by what their correlations with the removed ones ask;
        its Newton iterations (:meth:`_newton`) then run on its columns of the
        copy; a support refitted before (by this loss object) is not refitted
        again (:data:`~sparse_estimators._policy.CANDIDATE_CACHE`). The candidates are refitted when read (a
        sequence): the search
        that accepts the first exchange good enough (abess's) skips the rest.
        ``positive=True`` and sparse ``X`` refit one candidate at a time.

        ``limits`` (one float per candidate, or None): the value each
        candidate must get below to be of use to the search. A candidate
        whose quadratic model's minimum (its start, above) lies above the
        current value by more than :data:`~sparse_estimators._policy.SCREEN_MARGIN` times the decrease it
        needs is not refitted: its entry is ``(None, None, inf, None)``.
        With :attr:`rejects_candidates` (instead), a candidate's Newton
        iterations stop once its value lies above its limit by more than
        :data:`~sparse_estimators._policy.REJECT_DECREMENTS` decrements: the same entry, and the
        iterations are resumed where they stopped if it is read again.
        ``decrement`` (or None: :attr:`candidate_decrement`): the decrement
        at which the candidates' Newton iterations stop (see :meth:`_newton`);
        with it, a single support takes this path too (the group search's
        lone start), without it the loss's ``refit(precise=False)`` path.
        """
        supports = [np.asarray(s) for s in supports]
        if (self.design.is_sparse or self.positive or (len(supports) < 2 and decrement is None)
                or not all(s.size for s in supports)):
            return super().refit_candidates(supports, W, b)
        cache = self.__dict__.setdefault("_candidate_cache", {})
        if len(cache) > _policy.CANDIDATE_CACHE:
            cache.clear()
        has_b = self.fit_intercept
        b = np.asarray(b, dtype=float)
        shared = []  # the model over U, formed when a candidate not in the cache is first read

        def model():
            if shared:
                return shared[0]
            current = W[:, 0].nonzero()[0]  # (np.flatnonzero without its Python wrapper)
            mask = np.zeros(W.shape[0], dtype=bool)  # (np.unique's sorted union, without its sort)
            mask[_concatenate([current, *supports])] = True
            union = mask.nonzero()[0]
            u = union.size
            A_union = self._refit_columns(union)
            # (W[union, 0] by np.take: the same values, without a two-index gather)
            theta_u = _concatenate((W[:, 0].take(union), b)) if has_b else W[union, 0].astype(float)
            sw = self._sample_share[:, 0]
            v, d, h = self._parts(A_union.dot(theta_u))
            g = A_union.T.dot(sw * d)
            A_F = _fortran(A_union)
            H = (A_F.T * (sw * h)).dot(A_F)
            if self.alpha:
                g[:u] += self.alpha * theta_u[:u]
                H[np.arange(u), np.arange(u)] += self.alpha
            f_now = None
            if limits is not None:  # (the decreases the candidates need)
                f_now = float(sw.dot(v))
                if self.alpha:
                    f_now += 0.5 * self.alpha * float(theta_u[:u].dot(theta_u[:u]))
            # (the current support's positions in the union, as Python ints: see removed below)
            shared.append((union, A_union, theta_u, g, H, union.searchsorted(current).tolist(), f_now))
            return shared[0]

        stops = self.rejects_candidates and limits is not None

        def refit(item):
            support, limit = item
            key = support.tobytes()
            entry = cache.get(key)
            if entry is not None and entry[0] is not None:
                # (the same support from another round: its optimum does not depend on the start)
                coef, intercept, f, z = entry
                W_c = np.zeros(W.shape, W.dtype)
                W_c[:, 0][support] = coef
                return W_c, intercept.copy(), f, z.copy()
            union, A_union, theta_u, g, H, current, f_now = model()
            u = union.size
            k = support.size
            if has_b:  # (the intercept's column last: one array, no concatenation)
                cols = np.empty(k + 1, dtype=np.intp)
                cols[:k] = union.searchsorted(support)
                cols[k] = u
            else:
                cols = union.searchsorted(support)
            if entry is not None:  # refused before its refit ended: the same iterations, resumed
                theta, z, f = self._newton(A_union[:, cols], None, k, 100, False, decrement=decrement,
                                           limit=limit if stops else None, state=entry[1])
                return candidate(support, key, theta, z, f)
            need = None if limit is None or not self.screens_candidates else f_now - limit
            # the current support's positions outside the candidate, in order (Python sets: k is small)
            kept = set(cols[:k].tolist())
            removed = np.array([j for j in current if j not in kept], dtype=np.intp)
            plain = theta_u.take(cols)  # (the warm start of BaseLoss.refit_candidates)
            gone = theta_u.take(removed)
            H_c = H.take(cols, 0)
            rhs = g.take(cols) - H_c.take(removed, 1).dot(gone)
            shift = cholesky_solve(H_c.take(cols, 1), rhs)
            if need is not None and need > 0:  # the model's change at the start: removal, then - rhs^T shift / 2
                change = 0.5 * float(gone.dot(H.take(removed, 0).take(removed, 1)).dot(gone) - rhs.dot(shift))
                change -= float(g.take(removed).dot(gone))
                if change > _policy.SCREEN_MARGIN * need:
                    return None, None, np.inf, None
            start = plain - shift
            stop = {"limit": limit} if stops else {}  # (without limits: the call as before)
            theta, z, f = self._newton(A_union[:, cols], start, k, 100, False, fallback=plain, decrement=decrement,
                                       **stop)
            return candidate(support, key, theta, z, f)

        def candidate(support, key, theta, z, f):
            if theta is None:  # refused (see _policy.REJECT_DECREMENTS): z holds the iterations' state
                cache[key] = (None, z)
                return None, None, np.inf, None
            k = support.size
            W_c = np.zeros(W.shape, W.dtype)
            W_c[:, 0][support] = theta[:k]
            intercept = theta[k:].copy() if has_b else b
            cache[key] = (theta[:k], intercept.copy(), f, z[:, None].copy())
            return W_c, intercept, f, z[:, None]

        return _Lazy(refit, list(zip(supports, [None] * len(supports) if limits is None else limits,
                                     strict=True)))


class _Lazy(Sequence):
    """``[f(x) for x in items]``, each computed when first read (a search that stops early skips the rest)."""

    def __init__(self, f, items):
        self._f, self._items, self._done = f, items, {}

    def __len__(self):
        return len(self._items)

    def __iter__(self):  # (Sequence's, without its index checks: the searches read the candidates in order)
        done, f = self._done, self._f
        for i, item in enumerate(self._items):
            if i not in done:
                done[i] = f(item)
            yield done[i]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        i = range(len(self))[i]
        if i not in self._done:
            self._done[i] = self._f(self._items[i])
        return self._done[i]
