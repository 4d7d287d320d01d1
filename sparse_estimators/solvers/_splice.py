"""Splicing: an exchange local search at fixed sparsity, run after a thresholding solver.

The support found by iterative thresholding is a fixed point of the solver,
not necessarily a good local minimum of the loss at sparsity ``k``. Splicing
(Zhu, Wen, Zhu, Zhang & Wang, 2020, *A polynomial algorithm for best-subset
selection problem*, the algorithm behind abess) improves it by exchanging
features: the ``c`` selected features whose removal costs least are swapped
for the ``c`` unselected features whose addition gains most, for
``c = 1, ..., max_exchange``; the best exchange is kept if the refitted loss
drops by more than noise alone would explain (and, where asked, if every added
feature is itself more significant than the best of ``p`` noise features would
be, or a lower level when the kept features do not explain the removed ones),
and the search repeats until no exchange is accepted.

A second search starts from the ``k`` features of largest marginal gain,
either with the same rules or with abess's own (its "important search", in
``solvers/_splice_abess.py``), and its result replaces the first one if its
loss is lower by more than a gate (``switch_gate``, by default ``gate``).

With feature groups (``structure=Groups``) the same search exchanges whole
groups (``_unit_splice``, in ``solvers/_splice_groups.py``).
"""

import math

import numpy as np
from scipy.linalg.lapack import dposv as _posv

from .. import _policy
from .._utils import concatenate as _concatenate
from .._utils import count_nonzero as _count_nonzero
from .._utils import lexsort as _lexsort
from .._utils import row_squares
from .._utils import where as _where
from ..structures import Rows
from ..thresholding._selection import kth_pair
from ._base import SolverResult, _all, nonzero_rows, same_indices
from ._splice_pairs import best_pair, pair_search_applies
from ._splice_redundant import _may_be_redundant, _redundant

#: float64's rounding unit (the switch's tie test)
_EPS = float(np.finfo(float).eps)


def _top(scores, c):
    """Indices of the ``c`` largest ``scores``, largest first (ties: lower index)."""
    idx = _top_set(scores, c)
    return idx[_lexsort((idx, -scores[idx]))]


def _top_set(scores, c):
    """:func:`_top`'s indices in no particular order (the same set: where only the set matters).

    The partition around the ``c``-th and ``(c + 1)``-th largest scores
    (numpy's introselect, faster here than its selection for a single
    ``kth``: doc/changelog.rst, "top sets") gives the set when those two
    differ: then the ``c`` largest are one set whatever the partition. A
    tie between them (or a NaN) takes the single-``kth`` partition, whose
    choice among the tied scores the searches have always made.
    """
    c = min(c, scores.size)
    if c >= scores.size:
        return np.arange(scores.size)
    negative = -scores
    if c > 0:
        order = negative.argpartition(kth_pair(c - 1))
        if negative[order[c - 1]] < negative[order[c]]:
            return order[:c]
    return negative.argpartition(c - 1)[:c]


def splice(loss, k, W, b, *, max_exchange=5, max_rounds=20, gate=0.25, add_gate=0.0, add_gate_uncorrelated=None,
           screening_start=True, switch_gate=None, refitted=False, forced=None, structure=None, swap_candidates=1,
           start_state=None, zero_gradient=None, redundant_first=False, pair_candidates=0, pair_add_gate=1.0):
    """Improve a support of ``k`` features (or groups) by exchanging them (abess's splicing).

    Parameters
    ----------
    loss : BaseLoss
        The loss (see :mod:`sparse_estimators.losses`).
    k : int
        Sparsity level; supports with fewer features than ``k`` (for
        instance from soft thresholding) are refitted and returned unchanged.
    W, b : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
        The solution of a sparse solver (its support is the start). A zero
        ``W`` (no solver ran; with ``screening_start`` and no ``forced``
        features) starts both searches from the second start (below): the
        first, with the rules below, from its refit, then the second.
    max_exchange : int, default=5
        Largest number of features exchanged at once (abess's ``exchange_num``).
    max_rounds : int, default=20
        Largest number of accepted exchanges from each start.
    gate : float, default=0.25
        An exchange of ``c`` features is accepted only if it lowers the loss
        by more than ``gate * c * m * log(p) * s / N``, with ``N`` the
        number of observations (``loss.n_observations``: the number of
        samples, or the sum of frequency weights), ``m`` a feature's free
        coefficients (:attr:`~sparse_estimators.losses.BaseLoss.coefficients_per_feature`:
        the number of outputs, one fewer for the multinomial loss, whose
        softmax is invariant to a shift shared by the classes) and ``s`` the loss's
        :meth:`~sparse_estimators.losses.BaseLoss.noise_scale` (noise
        variance for least squares, 1 for deviances). Twice ``N`` times the
        decrease bought by ``c`` spurious features is about ``c * m * s``, and
        about ``2 log(p)`` times that when they are the best of ``p``
        candidates: ``gate=1`` is the risk-inflation criterion and refuses
        nearly every exchange that only fits noise, ``gate=0`` accepts every
        decrease (plain abess splicing, which overfits noise when ``n`` is
        small). The default 0.25 was chosen on the peer benchmark
        (:source:`benchmarks/compare_peers.py`): it keeps the large gains that
        rescue the solver from a poor fixed point and refuses small ones.
    add_gate : float, default=0.0
        An exchange is accepted only if, in the refit on the new support,
        removing any one of the added features would raise the loss by more
        than ``add_gate * m * log(p) * s / N`` (estimated from the block of
        the Hessian there on the feature's coefficients,
        :meth:`~sparse_estimators.losses.BaseLoss.removal_costs`:
        ``w_j^T H_jj w_j / 2``, half the Wald statistic over ``N``; for a
        single exchange at least the exchange's decrease, a lower bound of the
        exact increase that the Wald estimate can miss far from a quadratic
        loss). At 1,
        each added feature must be as significant as the best of ``p`` noise
        features would typically be (the risk-inflation level). Unlike
        ``gate``, which tests the net decrease, this accepts the exchange of
        a weak selected feature for a strong unselected one even when the
        net gain is small, and refuses the exchange of a selected feature
        that its correlated neighbours make redundant for a noise feature
        that only fits noise. 0 (the default) does not test. The classifiers
        use ``gate=0, add_gate=1, add_gate_uncorrelated=0.5`` (chosen on
        :source:`benchmarks/compare_peers.py`'s logistic designs, where the net
        decrease alone could not separate the two cases).
    add_gate_uncorrelated : float or None, default=None
        The level of the ``add_gate`` test for an exchange whose removed
        features the kept ones do not explain: for each removed feature, the
        share of its curvature that the other selected features explain (one
        minus its Schur complement over its diagonal, in the Hessian of the
        current fit; its R^2 on them, for least squares) is at most
        ``0.05 + (k - c) / N``, about what chance gives with ``k - c``
        regressors. Such a feature's small removal cost is its own, not the
        work of correlated neighbours, so the net decrease compares the two
        features fairly and a lower level (the classifiers': 0.5) lets in
        true features whose significance sits just under the risk-inflation
        level (large ``p``, weak effects), while exchanges of a feature that
        its neighbours make redundant keep the full ``add_gate``. None: the
        same level ``add_gate`` for every exchange.
    screening_start : bool or 'abess', default=True
        Also search from abess's start, the ``k`` features of largest
        marginal gain at zero, and keep that result instead if its loss is
        lower by more than ``switch_gate`` (see below) for the number of
        features in which the two supports differ. True searches from it
        with the rules above; ``'abess'`` with abess's (version 0.4) rules (see
        :func:`~sparse_estimators.solvers._splice_abess._important_search`):
        exchanges restricted to the ``k + 128`` features of largest gain, the
        largest exchange that lowers the loss
        by more than abess's threshold ``0.01 k log(p) log(log N) / N``
        accepted first. The regressors use ``'abess'``: at ``n = 100,
        p = 1000`` it reaches lower losses than the first search where
        that search is stuck (:source:`benchmarks/compare_peers.py`). False: no
        second search.
    switch_gate : float or None, default=None
        The second search's result replaces the first one when its loss is
        lower by more than ``switch_gate * d * m * log(p) * s / N``, with
        ``d`` the number of features in which the two supports differ (the
        units of ``gate``). None: ``gate``. The regressors use 0.1 with
        abess's rules when ``N > 3 k log(p - k)`` (chosen on
        :source:`benchmarks/compare_peers.py`'s designs, see
        :source:`benchmarks/switch_gate.py`: there the first search can stop short
        of abess's lower loss with independent or spread-out features at low
        SNR, and the smaller gate takes abess's support), ``gate`` below.
    refitted : bool, default=False
        ``W, b`` already minimise the loss on their support (a solver's
        :attr:`SolverResult.refitted`): the first refit is skipped.
    forced : array-like of int or None, default=None
        Features never exchanged out (``always_select``; they must be in the
        support): the exchanges remove only the others, and the second
        search starts from them plus the features of largest marginal gain,
        with this search's rules (``screening_start='abess'`` acts as True).
        With groups: any feature of a group protects the whole group.
    structure : Structure or None, default=None
        What ``k`` counts (:mod:`sparse_estimators.structures`). None or
        :class:`~sparse_estimators.structures.Rows`: features, as above.
        Otherwise (:class:`~sparse_estimators.structures.Groups`) whole units
        are exchanged, see ``solvers/_splice_groups.py``: supports stay unions of
        ``k`` units and the rules above apply to units, with the gates in
        units of each unit's price instead of ``m log(p) s / N`` per feature:
        the decrease the best of ``G`` (the number of units) noise units of
        its size would buy, ``s / (2N)`` times the chi-squared quantile at
        ``1 - 1/G`` with the unit's number of coefficients as degrees of
        freedom (about ``m log(p) s / N`` for one feature). A zero ``W``
        (no solver ran) is searched from the second start alone.

    swap_candidates : int, default=1
        The exchanges of one feature tried in each round of the search above
        (not of abess's rules, ``screening_start='abess'``): the least
        useful selected feature for each of the ``swap_candidates`` most
        useful unselected ones, under the same gate; the accepted one of
        lowest loss competes with the larger exchanges. 1: only the most
        useful, as abess. Ignored with groups. The Cox models use 5 (see
        ``survival/_cox.py``): there the exchange that lowers the loss was
        often with the second to fourth candidate by marginal gain.
    redundant_first : bool, default=False
        When a round accepts no exchange, look for selected features that
        the others reproduce exactly (a duplicated, rescaled or summed column:
        a residual of at most ``_policy.DUPLICATE_RESIDUAL`` of its variance)
        and run the round again with them removed first, their exchanges
        accepted on any decrease of the loss and exempt from ``add_gate``:
        removing them loses nothing, while ranked by their own removal cost
        they came after weaker features and the gates kept both copies.
        Costs one Gram matrix of the support's columns per search. Ignored
        with groups. ``'collinear'``: only when a refit since the loss was
        built could not rule out collinear columns (a Cholesky pivot at most
        ``1e-4`` of its diagonal entry for least squares, ``1e-10`` for the
        Newton refits, so that the refit took a minimum-norm or orthogonal
        solve: :func:`~sparse_estimators.losses._numerics.note_collinear`;
        and always with ``positive=True``, whose refits test no pivot):
        every refit on a support with both copies of a column (to rounding)
        fails that test, the refits on supports without nearly collinear
        columns pass it, and those fits pay nothing. The classifiers and the
        Cox models use True (their l2 term keeps the refits on both copies
        regular), the other regressors ``'collinear'`` (their small fits
        are at their speed target, where a Gram matrix per search cost 2 to
        9 % of the time).
    pair_candidates : int, default=0
        When a round of the search above (not abess's rules) accepts nothing,
        one-output least squares (without ``positive``) also tries the single
        exchange of largest exact decrease between any selected feature and
        the ``pair_candidates`` unselected ones of largest marginal gain, under
        the same gate (see ``solvers/_splice_pairs.py``: the round's ranking
        of each feature alone misses the exchange of a false positive for the
        correlated true feature it stands in for). 0: no such exchange. The
        regressors use ``_policy.PAIR_SWAP_CANDIDATES``.
    pair_add_gate : float, default=1.0
        Such an exchange is accepted only if the added feature's removal cost
        in the new fit (as for ``add_gate``: ``w_j^2 h_j / 2``, at least the
        exchange's decrease) exceeds ``pair_add_gate * m * log(p) * s / N``.
        At 1 (the risk-inflation level) it refuses the exchange of a true
        feature of a block of correlated ones for a neighbour that shares its
        effect and fits noise, where the decrease alone lowered the support F1
        (doc/changelog.rst, "exact single exchanges").
    start_state : tuple or None, default=None
        ``(Z, f, gW)``: the linear predictor (on the support of ``W``), loss
        value and gradient at ``W, b``, when the caller has them (a solver that
        ended refitted, :attr:`SolverResult.linear_predictor`); with
        ``refitted`` they are not computed again. Ignored with groups.
    zero_gradient : ndarray of shape (n_features, n_outputs) or None, default=None
        The gradient in the coefficients at ``(0, loss.initial_intercept())``,
        when the caller has it (a solver's first iteration from a zero start,
        :attr:`SolverResult.start_gradient`): the second start's marginal gains
        come from it, not from a new product with ``X``. Ignored with groups.

    Returns
    -------
    SolverResult
        The refitted coefficients and intercept variable, their support,
        ``n_iter`` the number of accepted exchanges and ``objective`` the loss
        after each of them.
    """
    if screening_start not in (True, False, "abess"):
        raise ValueError(f"screening_start must be True, False or 'abess'; got {screening_start!r}.")
    if switch_gate is None:
        switch_gate = gate
    if structure is not None and (not isinstance(structure, Rows) or structure.excluded is not None):
        from ._splice_groups import _unit_splice  # (that module builds on this one's exchanges)

        return _unit_splice(loss, k, W, b, structure, max_exchange=max_exchange, max_rounds=max_rounds, gate=gate,
                            add_gate=add_gate, add_gate_uncorrelated=add_gate_uncorrelated,
                            screening_start=bool(screening_start), switch_gate=switch_gate, refitted=refitted,
                            forced=forced)
    support = nonzero_rows(W)
    if forced is not None and len(forced):  # (a forced feature stays selected at coefficient 0, e.g. a constant column)
        support = np.union1d(support, np.asarray(forced, dtype=np.intp))
    # a zero W (no solver ran): the first search starts where the second does (abess's start)
    from_zero = not support.size and bool(screening_start) and forced is None and 0 < k < loss.n_features
    gW = None
    if refitted and start_state is not None and not from_zero:
        Z, f, gW = start_state
    elif not from_zero:
        if not refitted:
            W, b = loss.refit(support, W, b)
        Z = loss.linear_predictor(W, b, support)
        f = loss.value_from_z(Z, W)
    if not from_zero and (support.size != k or k >= loss.n_features):
        return SolverResult(W, b, support, 0, [], converged=True)
    h = loss.coordinate_curvatures()
    usable = h > loss.alpha  # constant columns can never help
    # the price per feature counts its free coefficients (a multinomial feature: one fewer than classes)
    unit = loss.coefficients_per_feature * np.log(loss.n_features) / loss.n_observations
    protected = None
    if forced is not None and len(forced):
        protected = np.zeros(loss.n_features, dtype=bool)
        protected[np.asarray(forced, dtype=np.intp)] = True
        screening_start = bool(screening_start)  # (abess's rules know no forced features)
    options = (h, usable, unit, max_exchange, max_rounds, gate, add_gate, add_gate_uncorrelated, protected,
               max(int(swap_candidates), 1), redundant_first,
               int(pair_candidates) if pair_search_applies(loss, int(pair_candidates)) else 0, pair_add_gate)
    if screening_start:  # (the second search's start, abess's: the k largest marginal gains at zero)
        W0, _ = loss.zeros()
        b0 = loss.initial_intercept()
        Z0 = None if zero_gradient is not None else loss.linear_predictor(W0, b0)
        forward = _forward_gain(loss, Z0, W0, h, usable, zero_gradient)
        if protected is None:
            start = _top_set(forward, k)  # (a new array: sorted in place, np.sort's copy and wrapper saved)
            start.sort()
        else:  # the forced features and the best of the others
            free = np.where(protected, -np.inf, forward)
            start = np.union1d(np.flatnonzero(protected), _top(free, k - int(protected.sum())))
    if from_zero:  # (refitted exactly, as a solver's support: no final refit when the searches stay there)
        support = start
        W, b = loss.refit(start, W0, b0)
        Z = loss.linear_predictor(W, b, start)
        f = loss.value_from_z(Z, W)
    _abess_search_stays, _abess_threshold, _important_search = _abess_functions()

    need_floor = 0.0
    if screening_start == "abess" and (loss.n_features <= k + 128 or same_indices(start, support)):
        # a round that accepts nothing at abess's start (or anywhere, when abess's set U of k + 128 features
        # holds them all) lets abess's search be skipped or stop there (_abess_search_stays), provided its
        # screened candidates needed at least abess's threshold
        need_floor = _abess_threshold(loss, k)
    best, visited, last = _exchange(loss, k, support, W, b, f, Z, *options, need_floor=need_floor, gradient=gW)
    exact = best.n_iter == 0  # still a refit by loss.refit (above, or the solver's)
    if screening_start:
        other = None
        if screening_start == "abess":
            if not _abess_search_stays(loss, k, start, best.support, last, forward, usable, max_exchange):
                other = _important_search(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, gain=forward,
                                          settled=None if last is None else (best.support, last))
        elif start.tobytes() not in visited:
            other = _exchange(loss, k, start, *loss.refit_candidates([start], W0, b0)[0], *options,
                              known=visited)[0]
        if other is not None:
            differ = len(set(other.support.tolist()) - set(best.support.tolist()))
            f_best, f_other = best.objective[-1], other.objective[-1]
            # (the same support is the same refit: its two values differ by rounding only)
            # (and by more than the loss's rounding: a smaller difference is a tie, which the first search keeps)
            if differ and f_best - f_other > max(switch_gate * differ * unit * loss.noise_scale(f_best, k),
                                                 _policy.SWITCH_ROUNDING * _EPS * abs(f_best)):
                best, exact = other, False
    best.objective = best.objective[1:]
    best.n_iter = len(best.objective)
    if not exact:  # candidates are evaluated approximately (batched normal equations, Newton to 1e-12)
        best.coef, best.intercept = loss.refit(best.support, best.coef, best.intercept)
    return best


def _abess_functions():
    """``_splice_abess``'s functions that :func:`splice` calls, imported at the first call.

    That module builds on this one; once imported they are kept (the import statement's look-ups cost more
    than the call of this function). One tuple, assigned at once: threads that race at the first call only
    import twice.
    """
    global _ABESS
    if _ABESS is None:
        from ._splice_abess import _abess_search_stays, _abess_threshold, _important_search

        _ABESS = (_abess_search_stays, _abess_threshold, _important_search)
    return _ABESS


_ABESS = None


def _forward_gain(loss, Z, W, h, usable, gW=None):
    """Loss decrease from adding each feature alone (one coordinate Newton step) at ``Z`` (``gW``: the gradient)."""
    if gW is None:
        gW = loss.gradient_from_z(Z, W)[0]
    gain = 0.5 * row_squares(gW)
    if _all(usable):  # (no constant column, the usual case: the masks below change no value; two np.where
        return gain / h  # over p cost more than the rest of this function at p = 1000)
    return _where(usable, gain / _where(usable, h, 1.0), -np.inf)


def _ranked(loss, support, W, Z, h, usable, protected=None, gW=None):
    """The selected features, least useful first, and the gains of the others (``-inf``: not a candidate).

    Usefulness of a selected feature is the loss increase from removing it
    alone, ``h_j ||w_j||^2 / 2``; the gain of an unselected one is
    :func:`_forward_gain` (``gW``: the gradient at ``Z``, when known). ``protected`` features (a mask) come last.
    """
    rows = W[support]  # (gathered once)
    backward = 0.5 * h[support] * row_squares(rows)
    if protected is not None:
        backward[protected[support]] = np.inf
    forward = _forward_gain(loss, Z, W, h, usable, gW)
    forward[support] = -np.inf
    return support[backward.argsort(kind="stable")], forward  # ties: lower index


def _swaps(kept, adds, sizes):
    """The supports exchanging the ``c`` first of ``kept`` for the ``c`` first of ``adds``, for ``c`` in ``sizes``."""
    return [_sorted_union(kept[c:], adds[:c]) for c in sizes]


def _sorted_union(a, b):
    """The indices of ``a`` and ``b`` (disjoint) sorted: ``np.sort(np.concatenate(...))``, sorted in place."""
    out = _concatenate((a, b))
    out.sort()
    return out


def _least_cost(loss, added, W, Z):
    """The least loss increase from removing one of the ``added`` features from the fit ``(W, Z)``.

    The cost of feature ``j`` is estimated by ``w_j^T H_jj w_j / 2``, with ``H_jj`` the loss's Hessian on its
    coefficients at ``Z`` (:meth:`~sparse_estimators.losses.BaseLoss.removal_costs`).
    """
    return loss.removal_costs(Z, added, W).min()


def _added_cost(loss, added, W, Z, decrease):
    """The least loss increase from removing one of the ``added`` features of a candidate: :func:`_least_cost`, or more.

    For a single exchange (one feature added) the exact increase (the refit
    without it, on the start's other ``k - 1`` features, is at least the
    start's value) is at least the exchange's ``decrease``: the estimate is
    raised to it. The quadratic estimate alone can fall far below the exact
    increase where the loss is far from quadratic (the Hauck-Donner effect of
    Wald statistics: a multinomial fit of ``load_digits`` at ``k = 10``,
    estimate 0.79 units, exact 1.9, decrease 0.51; doc/changelog.rst, "the
    added feature's cost").
    """
    cost = _least_cost(loss, added, W, Z)
    return max(cost, decrease) if len(added) == 1 else cost


def _explained(H, m, removed):
    """Share of each ``removed`` coefficient block's curvature that the other variables of ``H`` explain.

    ``H`` is the Hessian over the packed variables of a fit (feature ``j``'s
    ``m`` coefficients at rows ``j * m`` to ``j * m + m - 1``; see
    :meth:`~sparse_estimators.losses.BaseLoss.hessian`) and ``removed`` holds
    positions in the support. For each of them, one minus the trace of its
    Schur complement given every variable outside ``removed`` over the trace
    of its diagonal block: its R^2 on the other features for least squares.
    The other variables' block is solved by Cholesky when every pivot keeps
    at least ``1e-8`` of its diagonal entry (a twentieth of the time of a
    least-squares solve on the 20 x 20 blocks of the classifiers' searches),
    else by least squares (a pseudo-inverse: the singular Hessians of the
    multinomial loss).
    """
    cols = (np.asarray(removed)[:, None] * m + np.arange(m)).ravel()
    outside = np.ones(H.shape[0], dtype=bool)
    outside[cols] = False
    rest = np.flatnonzero(outside)  # (np.setdiff1d's result, without its sorting)
    diag = H[cols, cols].reshape(-1, m).sum(axis=1)
    if rest.size:
        H_rc = H[rest[:, None], cols]
        H_rr = H[rest[:, None], rest]
        L, A, info = _posv(H_rr, H_rc, lower=1)
        pivots = L.diagonal()
        if info or not (pivots * pivots > 1e-8 * H_rr.diagonal()).all():
            A = np.linalg.lstsq(H_rr, H_rc, rcond=None)[0]
        # the trace of each block of H_cr A (H symmetric: H_cr = H_rc^T)
        explained = np.einsum("rj,rj->j", H_rc, A).reshape(-1, m).sum(axis=1)
    else:
        explained = np.zeros(diag.size)
    return np.where(diag > 0, explained / np.where(diag > 0, diag, 1.0), 0.0)


def _screened(loss, candidates, W, b, limits):
    """``loss.refit_candidates(candidates, W, b)``, told the values the candidates must get below where it screens.

    A loss with ``screens_candidates`` (Poisson, Gamma) skips the refit of a
    candidate its quadratic model puts well above its limit (value ``inf``;
    see :data:`~sparse_estimators._policy.SCREEN_MARGIN`);
    one with ``rejects_candidates`` (logistic, multinomial) stops a candidate's
    Newton iterations once its value lies well above its limit (value ``inf``;
    see :data:`~sparse_estimators._policy.REJECT_DECREMENTS`);
    the others refit every candidate.
    """
    if getattr(loss, "screens_candidates", False) or getattr(loss, "rejects_candidates", False):
        return loss.refit_candidates(candidates, W, b, limits=limits)
    return loss.refit_candidates(candidates, W, b)


def _exchange(loss, k, support, W, b, f, Z, h, usable, unit, max_exchange, max_rounds, gate, add_gate,
              add_gate_uncorrelated=None, protected=None, swap_candidates=1, redundant_first=False, pair_candidates=0,
              pair_add_gate=1.0, known=frozenset(), need_floor=0.0, gradient=None):
    """Splicing from one refitted start (``Z`` its linear predictor).

    Returns ``(result, visited, last)``: ``result.objective`` starts with the
    start's loss, ``visited`` holds the supports passed through (as bytes),
    ``last`` the round that accepted nothing at ``result.support`` (see
    :func:`~sparse_estimators.solvers._splice_abess._abess_search_stays`): ``(kept, adds, decreases, screened)``, the
    decrease of each exchange size ``c`` refitted and the decrease each
    screened size needed (dicts), or None when the search stopped otherwise.
    The search from a support depends on nothing else (the point is the
    refit on it), so one that reaches a support of ``known`` (visited by an
    earlier search) would end where that search did: it stops and
    ``result`` is None.
    ``need_floor``: the least decrease the candidates are screened for
    (see :func:`_screened`; they are accepted by the gate alone).
    ``gradient``: the gradient at the start, when known.
    ``pair_candidates``, ``pair_add_gate``: see :func:`splice` (0, or a loss :func:`pair_search_applies` to).
    """
    objective = [f]
    visited = set()
    last = None
    first = None  # (selected features the others reproduce, tried first: see the round that accepts nothing)
    for _ in range(max_rounds):
        key = support.tobytes()
        if key in known:
            return None, visited, None
        visited.add(key)
        if pair_candidates and gradient is None:  # (the exact exchanges need it; _ranked computes the same)
            gradient = loss.gradient_from_z(Z, W)[0]
        gW = gradient
        kept, forward = _ranked(loss, support, W, Z, h, usable, protected, gradient)
        if first is not None:
            kept = _concatenate((first, kept[~np.isin(kept, first)]))
        gradient = None  # (the start's only)
        removable = k if protected is None else k - int(protected[support].sum())
        n_finite = _count_nonzero(np.isfinite(forward))
        n_out = min(max_exchange, removable, n_finite)
        adds = _top(forward, max(n_out, min(swap_candidates, n_finite)) if n_out else 0)
        threshold = gate * unit * loss.noise_scale(f, k)
        candidates = _swaps(kept, adds, range(1, n_out + 1))
        # (c, the added features) of each candidate: c = 1 ... n_out, then the other single exchanges
        added = [(c, adds[:c]) for c in range(1, n_out + 1)]
        added += [(1, adds[i:i + 1]) for i in range(1, min(swap_candidates, adds.size))]
        candidates += [_sorted_union(kept[1:], a) for _, a in added[n_out:]]
        best, H = None, None  # H: the current fit's Hessian, formed when first needed in this round
        # the sizes 1 ... n_out are screened for at least need_floor; the other single exchanges for the gate
        needs = [max(c * threshold, need_floor) if i < n_out else c * threshold for i, (c, _) in enumerate(added)]
        limits = [f - need for need in needs]
        decreases, screened = {}, {}  # of the sizes 1 ... n_out (a screened candidate: the decrease it needed)
        for i, ((c, new), candidate, (W_c, b_c, f_c, Z_c)) in enumerate(zip(
                added, candidates, _screened(loss, candidates, W, b, limits), strict=True)):
            if i < n_out and math.isfinite(f_c):
                decreases[c] = f - f_c
            elif i < n_out:
                screened[c] = needs[i]
            # (an exchange of redundant features only, first retried: any decrease, see below)
            free = first is not None and c <= first.size
            if not (f - f_c > (0.0 if free else c * threshold) and (best is None or f_c < best[3])):
                continue
            if add_gate:  # every added feature significant (see splice's add_gate and add_gate_uncorrelated)
                cost, scale = _added_cost(loss, new, W_c, Z_c, f - f_c), unit * loss.noise_scale(f_c, k)
                if not cost > add_gate * scale and not free:
                    if add_gate_uncorrelated is None or not cost > add_gate_uncorrelated * scale:
                        continue
                    if H is None:
                        H = loss.restrict(support).hessian(W[support], b)
                    share = _explained(H, loss.n_outputs, np.searchsorted(support, kept[:c]))
                    if share.max() > 0.05 + (k - c) / loss.n_observations:
                        continue
            best = (candidate, W_c, b_c, f_c, Z_c)
        if best is None:
            if redundant_first and first is None and _may_be_redundant(loss, redundant_first):
                # a duplicated (or rescaled) column: its removal costs nothing, but the ranking by each feature's
                # own removal cost put it after weaker features; the round again with it first
                first = _redundant(loss, support, protected)
                if first.size:
                    continue
            if pair_candidates:  # the best single exchange of any selected feature, exactly (_splice_pairs)
                pair = best_pair(loss, support, W, gW, forward, pair_candidates, h, protected)
                if pair is not None and pair[1] > threshold:
                    W_c, b_c, f_c, Z_c = loss.refit_candidates([pair[0]], W, b)[0]
                    # (and the added feature significant: splice's pair_add_gate)
                    cost = _added_cost(loss, np.setdiff1d(pair[0], support), W_c, Z_c, f - f_c)
                    if f - f_c > threshold and cost > pair_add_gate * unit * loss.noise_scale(f_c, k):
                        best = (pair[0], W_c, b_c, f_c, Z_c)
        if best is None:
            last = (kept, adds, decreases, screened)
            break
        first = None
        support, W, b, f, Z = best
        objective.append(f)
    visited.add(support.tobytes())
    return SolverResult(W, b, support, len(objective) - 1, objective, converged=True), visited, last
