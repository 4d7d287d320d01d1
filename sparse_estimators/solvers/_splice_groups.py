"""Splicing with feature groups: whole groups exchanged (``splice(..., structure=Groups)``).

The search of ``solvers/_splice.py`` over units instead of features: the
groups' removal costs and addition gains come from block Newton steps on
each group's curvature block, and groups are priced by the decrease the best
of ``G`` noise groups of their size would reach (:meth:`_UnitSearch.price`).
Dense least squares refits the candidates from the Gram block of the columns
they touch (``losses/_squared_units.py``).
"""

import numpy as np
import scipy.special

from .. import _policy
from ..losses._base import BaseLoss
from ..losses._squared_units import unit_gram_candidates
from ._base import SolverResult
from ._splice import _explained, _swaps, _top


def _unit_splice(loss, k, W, b, structure, *, max_exchange, max_rounds, gate, add_gate, add_gate_uncorrelated,
                 screening_start, switch_gate, refitted, forced):
    """:func:`splice` for a structure whose units are groups of features (``k`` counts units).

    The search of :func:`splice` on units: the ``c`` selected units of least
    removal cost (``w_u^T H_u w_u / 2``, ``H_u`` the unit's block of the
    curvature bound, rescaled to the curvature at the current fit) are
    swapped for the ``c`` others of largest gain (one block Newton step,
    ``g_u^T H_u^+ g_u / 2``), and each candidate, a union of whole units, is
    refitted. Units of different sizes are compared through their price
    (:meth:`_UnitSearch.price`, the decrease the best of ``G`` noise units of
    that size would buy): ranks use gains and costs net of it, and an
    exchange's decrease net of the added minus the removed units' prices
    must exceed ``gate`` times the added units' prices. With
    single features the price is about ``m log(p) s / N`` for every unit, so
    the gates are those of :func:`splice` (``gate``, ``switch_gate``; for
    ``add_gate``, each added unit's removal cost against that level times
    its price). The second search starts from the ``k`` units of largest
    gain at zero with these rules (abess's important search is not adapted
    to units: ``'abess'`` acts as True). From a zero ``W`` (no solver ran)
    that start is searched alone (:func:`_searched_from_zero`).
    """
    nonzero = np.flatnonzero(np.any(W != 0, axis=1))
    if not nonzero.size and k < structure.n_units(loss.n_features):
        return _searched_from_zero(loss, k, W, b, structure, forced, max_exchange, max_rounds, gate, add_gate,
                                   add_gate_uncorrelated)
    units = structure.units(nonzero)
    support = structure.features(units)
    if not refitted or not np.array_equal(support, nonzero):  # (the refit on the whole units)
        W, b = loss.refit(support, W, b)
    Z = loss.linear_predictor(W, b, support)
    f = loss.value_from_z(Z, W)
    if units.size != k or k >= structure.n_units(loss.n_features):
        return SolverResult(W, b, support, 0, [], converged=True)
    # (the units' blocks are formed only here, where the search runs)
    search = _UnitSearch(loss, k, structure, forced, max_exchange, max_rounds, gate, add_gate,
                         add_gate_uncorrelated)
    best, visited = search.exchange(units, W, b, f, Z)
    exact = best.n_iter == 0
    if screening_start:
        W0, _ = loss.zeros()
        b0 = loss.initial_intercept()
        Z0 = loss.linear_predictor(W0, b0)
        start = search.start(Z0, W0, f, support)
        if start.tobytes() not in visited:
            refit = search.refit_candidates([search.features(start)], W0, b0)[0]
            other = search.exchange(start, *refit, known=visited)[0]
            if other is not None:
                mine, theirs = structure.units(best.support), structure.units(other.support)
                differ = np.setdiff1d(theirs, mine)
                price = search.price(best.objective[-1], best.support.size)
                net = best.objective[-1] - other.objective[-1] - price[theirs].sum() + price[mine].sum()
                if differ.size and net > switch_gate * price[differ].sum():
                    best, exact = other, False
    best.objective = best.objective[1:]
    best.n_iter = len(best.objective)
    if not exact:  # (candidates are evaluated approximately, see splice)
        best.coef, best.intercept = loss.refit(best.support, best.coef, best.intercept)
    return best


def _searched_from_zero(loss, k, W, b, structure, forced, max_exchange, max_rounds, gate, add_gate,
                        add_gate_uncorrelated):
    """:func:`_unit_splice` from ``W = 0`` (no solver ran): one search from the ``k`` units of largest gain at zero.

    abess's start, the second start of :func:`_unit_splice` (with the
    forced units), priced at the loss at zero; the result is refitted.
    """
    search = _UnitSearch(loss, k, structure, forced, max_exchange, max_rounds, gate, add_gate, add_gate_uncorrelated)
    Z = loss.linear_predictor(W, b)
    start = search.start(Z, W, loss.value_from_z(Z, W), np.empty(0, dtype=np.intp))
    best = search.exchange(start, *search.refit_candidates([search.features(start)], W, b)[0])[0]
    best.objective = best.objective[1:]
    best.n_iter = len(best.objective)
    best.coef, best.intercept = loss.refit(best.support, best.coef, best.intercept)
    return best


def _padded(A):
    """``A`` (p, m) with one more row of zeros, read at the padded positions of :func:`_unit_blocks`' units."""
    out = np.empty((A.shape[0] + 1, A.shape[1]))
    out[:-1] = A
    out[-1] = 0.0
    return out


class _UnitSearch:
    """The exchange search of :func:`_unit_splice`: units, their sizes, scores and gates."""

    def __init__(self, loss, k, structure, forced, max_exchange, max_rounds, gate, add_gate, add_gate_uncorrelated):
        p = loss.n_features
        self.loss, self.k, self.structure = loss, k, structure
        self.codes = np.asarray(structure.unit_of_features(p), dtype=np.intp)
        self.n_units = int(structure.n_units(p))
        self.h = loss.coordinate_curvatures()
        usable = self.h > loss.alpha  # constant columns can never help
        # a unit's degrees of freedom: its usable features' coefficients
        self.sizes = np.bincount(self.codes[usable], minlength=self.n_units)
        dof = self.sizes * loss.coefficients_per_feature
        # (scipy.stats.chi2.isf's value from the function it calls, without its 50 us of overhead per fit)
        level = _policy.UNIT_PRICE_LEVEL / self.n_units
        self.level = np.where(dof > 0, scipy.special.chdtri(np.maximum(dof, 1), level), 0.0)
        self.protected = None
        if forced is not None and len(forced):
            self.protected = np.zeros(self.n_units, dtype=bool)
            self.protected[self.codes[np.asarray(forced, dtype=np.intp)]] = True
        self.blocks = _unit_blocks(loss, self.codes, self.n_units)
        # the blocks' features one after the other (all features, and the padding): one gather of the
        # gradient per round instead of one per unit size
        self.order = np.concatenate([members.ravel() for _, members, _, _ in self.blocks])
        self.spans = np.cumsum([0] + [members.size for _, members, _, _ in self.blocks])
        # each feature's row in that order (for the steps of the added units only, see steps)
        self.position = np.empty(p + 1, dtype=np.intp)
        self.position[self.order] = np.arange(self.order.size)
        self.unit_block, self.unit_row = np.zeros(self.n_units, dtype=np.intp), np.zeros(self.n_units, dtype=np.intp)
        for j, (units, _, _, _) in enumerate(self.blocks):
            self.unit_block[units], self.unit_row[units] = j, np.arange(units.size)
        self.max_exchange, self.max_rounds = max_exchange, max_rounds
        self.gate, self.add_gate, self.add_gate_uncorrelated = gate, add_gate, add_gate_uncorrelated
        # (losses whose candidate refits stop at a Newton decrement: see _policy.UNIT_CANDIDATE_DECREMENT)
        newton = hasattr(loss, "candidate_decrement")
        self.refit_options = {"decrement": _policy.UNIT_CANDIDATE_DECREMENT} if newton else {}
        # a loss that stops the Newton refit of a candidate that cannot pass the gate (the binary logistic: see
        # _policy.REJECT_DECREMENTS); the others refit every candidate
        self.rejects = newton and getattr(loss, "rejects_candidates", False)
        # a loss whose curvature does not depend on Z (least squares): curvature_ratio is 1 without forming it
        self.constant_curvature = type(loss).feature_curvatures is BaseLoss.feature_curvatures
        # dense least squares: candidates refitted from the Gram block of the columns they touch
        self.gram = unit_gram_candidates(loss)

    def start(self, Z0, W0, f, support):
        """The second start: the ``k`` units of largest gain at zero (``Z0``, ``W0``), the forced ones first.

        Gains at the curvature of ``Z0`` on ``support`` (:meth:`curvature_ratio`),
        net of the prices at a fit of loss ``f`` on ``support``. Sorted.
        """
        gain = self.unit_gain(Z0, W0)[0] / self.curvature_ratio(Z0, support) - self.price(f, support.size)
        if self.protected is None:
            return np.sort(_top(gain, self.k))
        free = np.where(self.protected, -np.inf, gain)  # the forced units and the best of the others
        return np.union1d(np.flatnonzero(self.protected), _top(free, self.k - int(self.protected.sum())))

    def refit_candidates(self, candidates, W, b):
        """``loss.refit_candidates`` (through the Gram block when one applies), each ``Z_c`` formed."""
        refits = None if self.gram is None else self.gram.refit_candidates(candidates, W, b)
        if refits is None:
            return self.loss.refit_candidates(candidates, W, b, **self.refit_options)
        return [(W_c, b_c, f_c, self.gram.linear_predictor(W_c, support))
                for (W_c, b_c, f_c, _), support in zip(refits, candidates, strict=True)]

    def price(self, f, n_features):
        """Each unit's price at a fit of loss ``f`` on ``n_features``: ``q_u s / (2 N)``, shape (n_units,).

        Twice ``N / s`` times the decrease that a noise unit of ``d`` free
        coefficients buys is about chi-squared with ``d`` degrees of freedom
        (``s``: :meth:`~sparse_estimators.losses.BaseLoss.noise_scale`), so
        the best of ``G`` such units reaches about ``q_u``, its quantile at
        ``1 - _policy.UNIT_PRICE_LEVEL / G``. For one feature that is about
        ``2 log(G)``, the level of :func:`splice`'s gates; for groups it grows
        with the size, so that a large noise group does not replace a small
        true one for the decrease its size alone buys.
        """
        return self.level * self.loss.noise_scale(f, n_features) / (2 * self.loss.n_observations)

    def features(self, units):
        """Sorted features of ``units``."""
        return self.structure.features(units)

    def unit_gain(self, Z, W):
        """Loss decrease from adding each unit alone at ``Z`` (one block Newton step; ``-inf``: no usable feature).

        ``g_u^T H_u^+ g_u / 2`` per output, with ``g_u`` the gradient in the
        unit's coefficients and ``H_u`` its block of the curvature bound
        (:func:`_unit_blocks`): the group version of :func:`_forward_gain`.
        Also returns ``H_u^+ g_u`` of all units in the blocks' order, from
        which :meth:`steps` reads the steps of some features.
        """
        gW = self.loss.gradient_from_z(Z, W)[0]
        m = gW.shape[1]
        gain, g_all = np.empty(self.n_units), _padded(gW)[self.order]
        s_all = np.empty_like(g_all)
        for (units, members, _, H_inv), lo, hi in zip(self.blocks, self.spans[:-1], self.spans[1:], strict=True):
            g = g_all[lo:hi].reshape(members.shape + (m,))  # (units, size, m)
            s = H_inv @ g  # (minus the steps)
            s_all[lo:hi] = s.reshape(-1, m)
            gain[units] = 0.5 * (g * s).sum(axis=(1, 2))
        gain[self.sizes == 0] = -np.inf
        if self.structure.excluded is not None:  # (units the structure never selects)
            gain[self.structure.excluded] = -np.inf
        return gain, s_all

    def steps(self, solved, features, ratio=1.0):
        """The block Newton steps ``-H_u^+ g_u`` (over ``ratio``) of ``features`` from :meth:`unit_gain`'s output."""
        step = -solved[self.position[features]]
        return step if ratio == 1.0 else step / ratio

    def unit_cost(self, W, units):
        """Loss increase from removing each of ``units`` alone, ``w_u^T H_u w_u / 2`` per output."""
        W = _padded(W)
        if len(self.blocks) == 1:
            _, members, H, _ = self.blocks[0]
            rows = self.unit_row[units]
            w = W[members[rows]]
            return 0.5 * np.einsum("uam,uab,ubm->u", w, H[rows], w)
        cost = np.empty(units.size)
        block = self.unit_block[units]
        for j in np.unique(block):  # (only the blocks of the selected units)
            chosen = block == j
            _, members, H, _ = self.blocks[j]
            rows = self.unit_row[units[chosen]]
            w = W[members[rows]]
            cost[chosen] = 0.5 * np.einsum("uam,uab,ubm->u", w, H[rows], w)
        return cost

    def curvature_ratio(self, Z, support):
        """The loss's curvature at ``Z`` over its bound (the blocks'), on the features of ``support``.

        1 for least squares. The logistic loss's curvature bound 1/4 can be
        several times its curvature at a fit that separates the classes well:
        the blocks then underestimate gains and overestimate removal costs
        by that factor, which the comparison with the prices (exact levels)
        must not inherit.
        """
        if self.constant_curvature or not support.size:
            return 1.0
        at_z = self.loss.feature_curvatures(Z, support).sum() / self.loss.n_outputs
        bound = self.h[support].sum()
        return 1.0 if not bound > 0 or abs(at_z - bound) <= 1e-12 * bound else at_z / bound

    def ranked(self, units, support, W, Z, price):
        """The selected units, least useful first (protected ones last), and the others' gains.

        Both at the curvature of ``Z`` (:meth:`curvature_ratio`) and net of
        the units' ``price`` (see :meth:`price`): what a unit brings beyond
        what the best noise unit of its size would. ``support``: the
        features of ``units``. Also returns :meth:`unit_gain`'s ``solved``
        and the ratio, for :meth:`steps`.
        """
        ratio = 1.0 if self.constant_curvature else self.curvature_ratio(Z, support)
        cost = self.unit_cost(W, units) * ratio - price[units]
        if self.protected is not None:
            cost[self.protected[units]] = np.inf
        gain, solved = self.unit_gain(Z, W)
        if ratio != 1.0:
            gain = gain / ratio
        gain = gain - price
        gain[units] = -np.inf
        return units[np.argsort(cost, kind="stable")], gain, solved, ratio

    def significant(self, added, removed, support, W, b, W_c, Z_c, f_c, H):
        """Whether every ``added`` unit passes the ``add_gate`` test in the refit ``(W_c, Z_c)``.

        See :func:`splice`'s ``add_gate`` and ``add_gate_uncorrelated``: each
        added unit's removal cost (its features' :meth:`~sparse_estimators.losses.BaseLoss.removal_costs`
        at the refit) must exceed ``add_gate`` times its price; the lower level when
        the kept features explain none of the ``removed`` units' features.
        Returns ``(passed, H)``, ``H`` the current fit's Hessian once formed.
        """
        loss = self.loss
        features = self.features(added)
        cost = np.bincount(self.codes[features], minlength=self.n_units,
                           weights=loss.removal_costs(Z_c, features, W_c))[added]
        removed_features = self.features(removed)
        ratio = (cost / self.price(f_c, support.size - removed_features.size + features.size)[added]).min()
        if ratio > self.add_gate:
            return True, H
        if self.add_gate_uncorrelated is None or not ratio > self.add_gate_uncorrelated:
            return False, H
        if H is None:
            H = loss.restrict(support).hessian(W[support], b)
        out = np.searchsorted(support, removed_features)
        share = _explained(H, loss.n_outputs, out)
        return not share.max() > 0.05 + (support.size - out.size) / loss.n_observations, H

    def exchange(self, units, W, b, f, Z, known=frozenset()):
        """Splicing from one refitted start of sorted ``units``: as :func:`_exchange`, on units."""
        loss, k = self.loss, self.k
        objective = [f]
        visited = set()
        for _ in range(self.max_rounds):
            key = units.tobytes()
            if key in known:
                return None, visited
            visited.add(key)
            support = self.features(units)
            price = self.price(f, support.size)
            kept, gain, solved, ratio = self.ranked(units, support, W, Z, price)
            removable = k if self.protected is None else k - int(self.protected[units].sum())
            n_out = min(self.max_exchange, removable, int(np.isfinite(gain).sum()))
            if n_out < 1:
                break
            adds = _top(gain, n_out)
            unit_candidates = _swaps(kept, adds, range(1, n_out + 1))
            candidates = [self.features(u) for u in unit_candidates]
            start = W.copy()  # (the added units start at their Newton steps: fewer refit iterations)
            added_features = self.features(adds)
            start[added_features] = self.steps(solved, added_features, ratio)
            best, H = None, None
            # each candidate's decrease net of the added units' prices, plus the removed ones'
            added, removed = np.cumsum(price[adds]), np.cumsum(price[kept[:n_out]])
            refits = None if self.gram is None else self.gram.refit_candidates(candidates, start, b)
            lazy = refits is not None  # (Z_c None: formed for the accepted candidate only, below)
            if not lazy:
                options = self.refit_options
                if self.rejects:  # (the value each must get below to pass the gate: its refit stops above it)
                    options = options | {"limits": list(f - (1.0 + self.gate) * added + removed)}
                refits = loss.refit_candidates(candidates, start, b, **options)
            net = f - np.array([f_c for _, _, f_c, _ in refits]) - added + removed
            # the candidate of largest net decrease (the first of equal ones) that passes the gate and the
            # add_gate test: those tested in that order, until one passes (the test costs a pass over the
            # added columns)
            for c in np.argsort(-net, kind="stable"):
                if not net[c] > self.gate * added[c]:
                    continue
                W_c, b_c, f_c, Z_c = refits[c]
                if self.add_gate:
                    passed, H = self.significant(adds[:c + 1], kept[:c + 1], support, W, b, W_c, Z_c, f_c, H)
                    if not passed:
                        continue
                best = (unit_candidates[c], W_c, b_c, f_c, Z_c, net[c])
                break
            if best is None:
                break
            units, W, b, f, Z, _ = best
            if lazy:
                Z = self.gram.linear_predictor(W, self.features(units))
            objective.append(f)
        visited.add(units.tobytes())
        return SolverResult(W, b, self.features(units), len(objective) - 1, objective, converged=True), visited


def _unit_blocks(loss, codes, n_units, max_bytes=2 ** 26):
    """The diagonal blocks of the loss's curvature bound, one per unit, in stacks of one shape.

    ``H_u = curvature * X_u^T S X_u / sum(S) + alpha I`` over the centered
    columns ``X_u`` of unit ``u`` (its diagonal is
    :meth:`~sparse_estimators.losses.BaseLoss.coordinate_curvatures`; the
    Hessian block itself for least squares). On a dense design whose
    columns take at most ``max_bytes`` (and whose stack padded to the
    largest unit's size holds at most :data:`~sparse_estimators._policy.UNIT_PADDING` times the
    unpadded blocks' entries), every unit is formed in one stack: a unit
    smaller than the largest is padded with the feature index ``p`` (a zero
    column, to be read from arrays with one extra zero row), and its block
    with the identity there (zero rows and columns in ``H``'s products, the
    same values in the others); the columns are copied once, ordered by
    unit size, and the blocks of each size formed by one stacked product.
    Otherwise units of one size are formed together, in batches whose
    column copies take at most ``max_bytes``.

    Returns
    -------
    list of tuples ``(units, members, H, H_inv)``
        Per stack: the units (n_s,), their features (n_s, s; ``p`` where
        padded), the blocks and their pseudo-inverses (n_s, s, s).
    """
    counts = np.bincount(codes, minlength=n_units)
    p = codes.size
    design, weights = loss.design, loss.sample_weight / loss.sw_sum
    gram = getattr(loss, "gram", None)  # (the precomputed Gram matrix of GramSquaredLoss)
    n = design.shape[0]
    root = np.sqrt(weights)[:, None]
    largest = int(counts.max())
    # the features by their unit's size, then unit, then index: each size's units are one run of columns
    order = np.lexsort((codes, counts[codes]))
    if (gram is None and not design.is_sparse and 8 * n * p <= max_bytes
            and n_units * largest ** 2 <= _policy.UNIT_PADDING * float(counts @ counts)):
        # one gather of the columns in that order (no padded copy of X), one product per size into the stack
        columns = np.asarray(design.X[:, order], dtype=float)
        if design.offset is not None:
            columns -= design.offset[order]
        columns *= root
        members = np.full((n_units, largest), p, dtype=np.intp)
        H = np.zeros((n_units, largest, largest))
        first = 0
        for size in np.unique(counts[counts > 0]):
            units = np.flatnonzero(counts == size)
            last = first + units.size * size
            members[units, :size] = order[first:last].reshape(units.size, size)
            block = columns[:, first:last].reshape(n, units.size, size)
            # (a stack of products X_u^T X_u: 5 to 25 times faster than einsum's own loop at n = 200)
            H[units, :size, :size] = np.matmul(block.transpose(1, 2, 0), block.transpose(1, 0, 2))
            first = last
        real = members < p
        if design.constant is not None:  # (constant columns carry nothing, as in LinearDesign)
            keep = real & ~np.append(design.constant, False)[members]
            H *= keep[:, :, None] & keep[:, None, :]
        return [_inverted(loss, np.arange(n_units), members, H, padded=~real)]
    out = []
    first = 0
    for size in np.unique(counts[counts > 0]):
        units = np.flatnonzero(counts == size)
        members = order[first:first + units.size * size].reshape(units.size, size)
        first += units.size * size
        if gram is not None:
            H = gram[members[:, :, None], members[:, None, :]]
        elif design.is_sparse:
            H = np.stack([design.columns(cols).weighted_gram(weights) for cols in members])
        else:
            H = np.empty((units.size, size, size))
            step = max(1, int(max_bytes // (8 * n * size)))
            for start in range(0, units.size, step):
                cols = members[start:start + step].ravel()
                block = np.asarray(design.X[:, cols], dtype=float)
                if design.offset is not None:
                    block -= design.offset[cols]
                block = (block * root).reshape(n, -1, size)
                H[start:start + step] = np.matmul(block.transpose(1, 2, 0), block.transpose(1, 0, 2))
            if design.constant is not None:
                keep = ~design.constant[members]
                H *= keep[:, :, None] & keep[:, None, :]
        out.append(_inverted(loss, units, members, H))
    return out


def _inverted(loss, units, members, H, padded=None):
    """``(units, members, H, H_inv)`` of :func:`_unit_blocks` from the products ``H`` (curvature, alpha added in place).

    ``padded``: the padded positions (a mask like ``members``), whose
    diagonal entries are set to 1 in ``H`` and its inverse.
    """
    # (in place on the diagonal, H being the caller's fresh array: the values of curvature * H + alpha I
    # without its temporaries)
    if loss.curvature != 1.0:
        H *= loss.curvature
    diagonal = np.einsum("uaa->ua", H)  # (a view)
    if loss.alpha:
        diagonal += loss.alpha
    # the inverse with a ridge of 1e-10 of the largest diagonal entry (a pseudo-inverse for gradients,
    # which vanish along the null directions: constant or duplicated columns); 10 times faster than pinv
    ridge = 1e-10 * diagonal.max(axis=1) + 1e-300
    if padded is not None:
        diagonal[padded] = 1.0
    ridged = H.copy()
    np.einsum("uaa->ua", ridged)[...] += ridge[:, None]
    H_inv = np.linalg.inv(ridged)
    if padded is not None:
        np.einsum("uaa->ua", H_inv)[padded] = 1.0  # (1 / (1 + ridge) there: exactly 1, as in H)
    return units, members, H, H_inv
