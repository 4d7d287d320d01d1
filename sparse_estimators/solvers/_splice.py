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
either with the same rules or with abess's own (its "important search", see
:func:`_important_search`), and its result replaces the first one if its
loss is lower by more than a gate (``switch_gate``, by default ``gate``).

With feature groups (``structure=Groups``) the same search exchanges whole
groups (:func:`_unit_splice`).
"""

import numpy as np
import scipy.special

from ..structures import Rows
from ._base import SolverResult


def _top(scores, c):
    """Indices of the ``c`` largest ``scores``, largest first (ties: lower index)."""
    c = min(c, scores.size)
    idx = np.argpartition(-scores, c - 1)[:c] if c < scores.size else np.arange(scores.size)
    return idx[np.lexsort((idx, -scores[idx]))]


def splice(loss, k, W, b, *, max_exchange=5, max_rounds=20, gate=0.25, add_gate=0.0, add_gate_uncorrelated=None,
           screening_start=True, switch_gate=None, refitted=False, forced=None, structure=None):
    """Improve a support of ``k`` features (or groups) by exchanging them (abess's splicing).

    Parameters
    ----------
    loss : BaseLoss
        The loss (see :mod:`sparse_estimators.losses`).
    k : int
        Sparsity level; supports with fewer features than ``k`` (for
        instance from soft thresholding) are refitted and returned unchanged.
    W, b : ndarrays of shape (n_features, n_outputs) and (n_outputs,)
        The solution of a sparse solver (its support is the start).
    max_exchange : int, default=5
        Largest number of features exchanged at once (abess's ``exchange_num``).
    max_rounds : int, default=20
        Largest number of accepted exchanges from each start.
    gate : float, default=0.25
        An exchange of ``c`` features is accepted only if it lowers the loss
        by more than ``gate * c * m * log(p) * s / N``, with ``N`` the
        number of observations (``loss.n_observations``: the number of
        samples, or the sum of frequency weights), ``m`` the number of
        outputs and ``s`` the loss's
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
        than ``add_gate * m * log(p) * s / N`` (estimated from the diagonal
        of the Hessian there, :meth:`~sparse_estimators.losses.BaseLoss.feature_curvatures`:
        ``sum_a h_ja w_ja^2 / 2``, half the Wald statistic over ``N``). At 1,
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
        :func:`_important_search`): exchanges restricted to the ``k + 128``
        features of largest gain, the largest exchange that lowers the loss
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
        are exchanged, see :func:`_unit_splice`: supports stay unions of
        ``k`` units and the rules above apply to units, with the gates in
        units of each unit's price instead of ``m log(p) s / N`` per feature:
        the decrease the best of ``G`` (the number of units) noise units of
        its size would buy, ``s / (2N)`` times the chi-squared quantile at
        ``1 - 1/G`` with the unit's number of coefficients as degrees of
        freedom (about ``m log(p) s / N`` for one feature).

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
        return _unit_splice(loss, k, W, b, structure, max_exchange=max_exchange, max_rounds=max_rounds, gate=gate,
                            add_gate=add_gate, add_gate_uncorrelated=add_gate_uncorrelated,
                            screening_start=bool(screening_start), switch_gate=switch_gate, refitted=refitted,
                            forced=forced)
    support = np.flatnonzero(np.any(W != 0, axis=1))
    if not refitted:
        W, b = loss.refit(support, W, b)
    Z = loss.linear_predictor(W, b, support)
    f = loss.value_from_z(Z, W)
    if support.size != k or k >= loss.n_features:
        return SolverResult(W, b, support, 0, [], converged=True)
    h = loss.coordinate_curvatures()
    usable = h > loss.alpha  # constant columns can never help
    unit = loss.n_outputs * np.log(loss.n_features) / loss.n_observations
    protected = None
    if forced is not None and len(forced):
        protected = np.zeros(loss.n_features, dtype=bool)
        protected[np.asarray(forced, dtype=np.intp)] = True
        screening_start = bool(screening_start)  # (abess's rules know no forced features)
    options = (h, usable, unit, max_exchange, max_rounds, gate, add_gate, add_gate_uncorrelated, protected)
    best, visited, last = _exchange(loss, k, support, W, b, f, Z, *options)
    exact = best.n_iter == 0  # still a refit by loss.refit (above, or the solver's)
    if screening_start:
        W0, _ = loss.zeros()
        b0 = loss.initial_intercept()
        forward = _forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, usable)
        if protected is None:
            start = np.sort(_top(forward, k))
        else:  # the forced features and the best of the others
            free = np.where(protected, -np.inf, forward)
            start = np.union1d(np.flatnonzero(protected), _top(free, k - int(protected.sum())))
        other = None
        if screening_start == "abess":
            if not _abess_search_stays(loss, k, start, best.support, last, forward, usable, max_exchange):
                other = _important_search(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, gain=forward)
        elif start.tobytes() not in visited:
            other = _exchange(loss, k, start, *loss.refit_candidates([start], W0, b0)[0], *options,
                              known=visited)[0]
        if other is not None:
            differ = len(set(other.support.tolist()) - set(best.support.tolist()))
            f_best, f_other = best.objective[-1], other.objective[-1]
            # (the same support is the same refit: its two values differ by rounding only)
            if differ and f_best - f_other > switch_gate * differ * unit * loss.noise_scale(f_best, k):
                best, exact = other, False
    best.objective = best.objective[1:]
    best.n_iter = len(best.objective)
    if not exact:  # candidates are evaluated approximately (batched normal equations, Newton to 1e-12)
        best.coef, best.intercept = loss.refit(best.support, best.coef, best.intercept)
    return best


def _forward_gain(loss, Z, W, h, usable):
    """Loss decrease from adding each feature alone (one coordinate Newton step) at ``Z``."""
    gW = loss.gradient_from_z(Z, W)[0]
    return np.where(usable, 0.5 * np.einsum("ij,ij->i", gW, gW) / np.where(usable, h, 1.0), -np.inf)


def _ranked(loss, support, W, Z, h, usable, protected=None):
    """The selected features, least useful first, and the gains of the others (``-inf``: not a candidate).

    Usefulness of a selected feature is the loss increase from removing it
    alone, ``h_j ||w_j||^2 / 2``; the gain of an unselected one is
    :func:`_forward_gain`. ``protected`` features (a mask) come last.
    """
    backward = 0.5 * h[support] * np.einsum("ij,ij->i", W[support], W[support])
    if protected is not None:
        backward[protected[support]] = np.inf
    forward = _forward_gain(loss, Z, W, h, usable)
    forward[support] = -np.inf
    return support[np.argsort(backward, kind="stable")], forward  # ties: lower index


def _swaps(kept, adds, sizes):
    """The supports exchanging the ``c`` first of ``kept`` for the ``c`` first of ``adds``, for ``c`` in ``sizes``."""
    return [np.sort(np.concatenate([kept[c:], adds[:c]])) for c in sizes]


def _least_cost(loss, added, W, Z):
    """The least loss increase from removing one of the ``added`` features from the fit ``(W, Z)``.

    The cost of feature ``j`` is estimated by ``sum_a h_ja w_ja^2 / 2`` with
    ``h`` the loss's curvature along its coefficients at ``Z``.
    """
    return 0.5 * np.einsum("ij,ij->i", loss.feature_curvatures(Z, added), W[added] ** 2).min()


def _explained(H, m, removed):
    """Share of each ``removed`` coefficient block's curvature that the other variables of ``H`` explain.

    ``H`` is the Hessian over the packed variables of a fit (feature ``j``'s
    ``m`` coefficients at rows ``j * m`` to ``j * m + m - 1``; see
    :meth:`~sparse_estimators.losses.BaseLoss.hessian`) and ``removed`` holds
    positions in the support. For each of them, one minus the trace of its
    Schur complement given every variable outside ``removed`` over the trace
    of its diagonal block: its R^2 on the other features for least squares.
    A pseudo-inverse handles the singular Hessians of the multinomial loss.
    """
    blocks = [np.arange(j * m, (j + 1) * m) for j in removed]
    cols = np.concatenate(blocks)
    outside = np.ones(H.shape[0], dtype=bool)
    outside[cols] = False
    rest = np.flatnonzero(outside)  # (np.setdiff1d's result, without its sorting)
    A = np.linalg.lstsq(H[np.ix_(rest, rest)], H[np.ix_(rest, cols)], rcond=None)[0] if rest.size else None
    share = []
    for i, block in enumerate(blocks):
        diag = np.trace(H[np.ix_(block, block)])
        explained = 0.0 if A is None else np.trace(H[np.ix_(block, rest)] @ A[:, i * m:(i + 1) * m])
        share.append(explained / diag if diag > 0 else 0.0)
    return np.array(share)


def _screened(loss, candidates, W, b, limits):
    """``loss.refit_candidates(candidates, W, b)``, told the values the candidates must get below where it screens.

    A loss with ``screens_candidates`` (Poisson, Gamma) skips the refit of a
    candidate its quadratic model puts well above its limit (value ``inf``;
    see :data:`~sparse_estimators.losses._pointwise_newton.SCREEN_MARGIN`);
    the others refit every candidate.
    """
    if getattr(loss, "screens_candidates", False):
        return loss.refit_candidates(candidates, W, b, limits=limits)
    return loss.refit_candidates(candidates, W, b)


def _exchange(loss, k, support, W, b, f, Z, h, usable, unit, max_exchange, max_rounds, gate, add_gate,
              add_gate_uncorrelated=None, protected=None, known=frozenset()):
    """Splicing from one refitted start (``Z`` its linear predictor).

    Returns ``(result, visited, last)``: ``result.objective`` starts with the
    start's loss, ``visited`` holds the supports passed through (as bytes),
    ``last`` the round that accepted nothing at ``result.support`` (see
    :func:`_abess_search_stays`): ``(kept, adds, decreases)``, the
    decrease of each exchange size ``c`` (a dict), or None when the search
    stopped otherwise.
    The search from a support depends on nothing else (the point is the
    refit on it), so one that reaches a support of ``known`` (visited by an
    earlier search) would end where that search did: it stops and
    ``result`` is None.
    """
    objective = [f]
    visited = set()
    last = None
    for _ in range(max_rounds):
        key = support.tobytes()
        if key in known:
            return None, visited, None
        visited.add(key)
        kept, forward = _ranked(loss, support, W, Z, h, usable, protected)
        removable = k if protected is None else k - int(protected[support].sum())
        n_out = min(max_exchange, removable, int(np.isfinite(forward).sum()))
        adds = _top(forward, n_out)
        threshold = gate * unit * loss.noise_scale(f, k)
        candidates = _swaps(kept, adds, range(1, n_out + 1))
        best, H = None, None  # H: the current fit's Hessian, formed when first needed in this round
        limits = [f - c * threshold for c in range(1, n_out + 1)]
        decreases = {}  # (a screened candidate, value inf, has no known decrease: _abess_search_stays then runs)
        for c, candidate, (W_c, b_c, f_c, Z_c) in zip(range(1, n_out + 1), candidates,
                                                      _screened(loss, candidates, W, b, limits), strict=True):
            if np.isfinite(f_c):
                decreases[c] = f - f_c
            if not (f - f_c > c * threshold and (best is None or f_c < best[3])):
                continue
            if add_gate:  # every added feature significant (see splice's add_gate and add_gate_uncorrelated)
                cost, scale = _least_cost(loss, adds[:c], W_c, Z_c), unit * loss.noise_scale(f_c, k)
                if not cost > add_gate * scale:
                    if add_gate_uncorrelated is None or not cost > add_gate_uncorrelated * scale:
                        continue
                    if H is None:
                        H = loss.restrict(support).hessian(W[support], b)
                    share = _explained(H, loss.n_outputs, np.searchsorted(support, kept[:c]))
                    if share.max() > 0.05 + (k - c) / loss.n_observations:
                        continue
            best = (candidate, W_c, b_c, f_c, Z_c)
        if best is None:
            last = (kept, adds, decreases)
            break
        support, W, b, f, Z = best
        objective.append(f)
    visited.add(support.tobytes())
    return SolverResult(W, b, support, len(objective) - 1, objective, converged=True), visited, last


def _abess_threshold(loss, k):
    """The threshold of an exchange in abess's search: ``0.01 k m log(p) log(log N) / N``."""
    N = loss.n_observations
    return 0.01 * k * loss.n_outputs * np.log(loss.n_features) * max(np.log(max(np.log(N), 1.0)), 0.0) / N


def _abess_search_stays(loss, k, start, support, last, gain, usable, max_exchange, important_search=128):
    """Whether :func:`_important_search` from ``start`` is certain to accept no exchange (and return ``start``).

    When ``start`` is the ``support`` where the first search stopped, that
    search's ``last`` round (:func:`_exchange`) has refitted every candidate
    the important search's first round would: the same least useful
    selected features, the same most useful others (provided they lie in
    the important search's set ``U`` of features, built from ``gain``, the
    marginal gains at zero), exchange sizes ``C, C // 2, ..., 1`` among the
    round's ``1, ..., n_out``. If none of them lowered the loss by more than
    abess's threshold, that search would stop at once: its result would be
    the first search's support (no switch), so it is not run. The
    candidates' values are those of the same refits (to rounding).
    """
    if last is None or not (start.shape == support.shape and (start == support).all()):
        return False
    kept, adds, decreases = last
    p = loss.n_features
    U_size = min(p, k + important_search)
    g = gain.copy()
    g[support] = np.inf  # (as _important_search builds U)
    in_U = np.zeros(p, dtype=bool)
    in_U[_top(g, U_size)] = True
    in_U[support] = False
    C = int(min(max_exchange, k, U_size - k, np.count_nonzero(usable & in_U)))
    if C < 1:
        return True
    sizes = [C >> i for i in range(C.bit_length())]
    if len(adds) < C or not in_U[adds[:C]].all() or any(c not in decreases for c in sizes):
        return False
    tau = _abess_threshold(loss, k)
    return not any(decreases[c] > tau for c in sizes)


def _important_search(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, important_search=128,
                      gain=None):
    """The splicing search of abess from ``start`` (abess 0.4, ``Algorithm::get_A`` and ``splicing``).

    The exchanges are restricted to a set ``U`` of ``k + important_search``
    features: first the largest marginal gains at zero (``start`` among
    them), later the current support and the largest gains at the current
    fit. The search within ``U`` runs on the loss restricted to ``U``'s
    columns (copied, in ``X``'s dtype), so that its gradients cost
    ``O(n |U|)`` instead of ``O(n p)``. Within ``U``, each round tries
    exchanging the ``C, C // 2, ..., 1`` least useful selected features
    for the most useful unselected ones and accepts the first exchange that
    lowers the loss by more than abess's threshold
    ``tau = 0.01 k m log(p) log(log N) / N``; ``C`` starts at
    ``max_exchange`` and becomes the size of the last accepted exchange.
    When no exchange is accepted, ``U`` is rebuilt around the new support
    (and ``C`` reset), until a rebuilt ``U`` brings no exchange, or after
    ``max_rounds`` rebuilds.

    ``gain``, when given, holds the marginal gains at ``(W0, b0)``
    (:func:`_forward_gain`; not modified).

    Returns
    -------
    SolverResult
        As :func:`_exchange`'s (``objective`` starts with the start's loss).
    """
    p = loss.n_features
    tau = _abess_threshold(loss, k)
    U_size = min(p, k + important_search)
    support, W, b = np.sort(start), W0, b0
    objective = []
    if gain is None:
        gain = _forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, usable)
    gain = gain.copy()
    U, stuck = None, False
    for _ in range(max_rounds):
        gain[support] = np.inf  # U keeps the support
        U_last, U = U, np.sort(_top(gain, U_size))
        if stuck and np.array_equal(U, U_last):  # (the round would repeat the last one's failed attempt)
            break
        # the search below works in U's own indices, on U's columns (a copy, unless U is everything;
        # the previous round's copy is released first, so that at most one is held)
        sub = None
        sub = loss if U_size == p else loss.restrict(U, dtype=None)
        local, h_U, usable_U = np.searchsorted(U, support), h[U], usable[U]
        if objective:
            W_U = W[U]
            Z = sub.linear_predictor(W_U, b)
        else:  # the start's refit
            W_U, b, f, Z = sub.refit_candidates([local], W0[U], b0)[0]
            objective.append(f)
        C = int(min(max_exchange, k, U_size - k))
        changed = stuck = False
        for _ in range(max_rounds * k):  # each accepted exchange lowers the loss by more than tau
            kept, forward = _ranked(sub, local, W_U, Z, h_U, usable_U)
            n_finite = int(np.isfinite(forward).sum())
            C = min(C, n_finite)
            if C < 1:
                break
            adds = _top(forward, C)
            sizes = [C >> i for i in range(C.bit_length())]  # C, C // 2, ..., 1
            candidates = _swaps(kept, adds, sizes)
            refits = _screened(sub, candidates, W_U, b, [f - tau] * len(candidates))
            for c, candidate, (W_c, b_c, f_c, Z_c) in zip(sizes, candidates, refits, strict=True):
                if f - f_c > tau:
                    local, W_U, b, f, Z, C = candidate, W_c, b_c, f_c, Z_c, c
                    objective.append(f)
                    changed = True
                    break
            else:  # none accepted; a new round over the same U would try the same C first: stuck
                stuck = C == min(max_exchange, k, U_size - k, n_finite)
                break
        support = U[local]
        W = np.zeros_like(W0)
        W[support] = W_U[local]
        if not changed:
            break
        gain = _forward_gain(loss, loss.linear_predictor(W, b, support), W, h, usable)
    return SolverResult(W, b, support, len(objective) - 1, objective, converged=True)


# -- units: whole groups of features exchanged ----------------------------------------------------
#: the group search forms the units' blocks in one stack padded to the largest unit's size (see _unit_blocks)
#: while that stack holds at most this many times the entries of the unpadded blocks (sizes 2 to 10: 2.4)
UNIT_PADDING = 4.0
#: a unit's price is its noise gain's quantile at 1 - UNIT_PRICE_LEVEL / G, the level the best of G noise
#: units reaches about once (see _UnitSearch.price): 1, the risk-inflation level, not tuned; measured on
#: benchmarks/compare_groups.py (doc/peers/compare_groups.md)
UNIT_PRICE_LEVEL = 1.0


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
    to units: ``'abess'`` acts as True).
    """
    search = _UnitSearch(loss, k, structure, forced, max_exchange, max_rounds, gate, add_gate,
                         add_gate_uncorrelated)
    nonzero = np.flatnonzero(np.any(W != 0, axis=1))
    units = structure.units(nonzero)
    support = search.features(units)
    if not refitted or not np.array_equal(support, nonzero):  # (the refit on the whole units)
        W, b = loss.refit(support, W, b)
    Z = loss.linear_predictor(W, b, support)
    f = loss.value_from_z(Z, W)
    if units.size != k or k >= search.n_units:
        return SolverResult(W, b, support, 0, [], converged=True)
    best, visited = search.exchange(units, W, b, f, Z)
    exact = best.n_iter == 0
    if screening_start:
        W0, _ = loss.zeros()
        b0 = loss.initial_intercept()
        Z0 = loss.linear_predictor(W0, b0)
        gain = search.unit_gain(Z0, W0)[0] / search.curvature_ratio(Z0, support) - search.price(f, support.size)
        if search.protected is None:
            start = np.sort(_top(gain, k))
        else:  # the forced units and the best of the others
            free = np.where(search.protected, -np.inf, gain)
            start = np.union1d(np.flatnonzero(search.protected), _top(free, k - int(search.protected.sum())))
        if start.tobytes() not in visited:
            refit = loss.refit_candidates([search.features(start)], W0, b0)[0]
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
        self.level = np.where(dof > 0, scipy.special.chdtri(np.maximum(dof, 1), UNIT_PRICE_LEVEL / self.n_units),
                              0.0)
        self.protected = None
        if forced is not None and len(forced):
            self.protected = np.zeros(self.n_units, dtype=bool)
            self.protected[self.codes[np.asarray(forced, dtype=np.intp)]] = True
        self.blocks = _unit_blocks(loss, self.codes, self.n_units)
        # the blocks' features one after the other (all features, and the padding): one gather of the
        # gradient per round instead of one per unit size
        self.order = np.concatenate([members.ravel() for _, members, _, _ in self.blocks])
        self.spans = np.cumsum([0] + [members.size for _, members, _, _ in self.blocks])
        self.unit_block, self.unit_row = np.zeros(self.n_units, dtype=np.intp), np.zeros(self.n_units, dtype=np.intp)
        for j, (units, _, _, _) in enumerate(self.blocks):
            self.unit_block[units], self.unit_row[units] = j, np.arange(units.size)
        self.max_exchange, self.max_rounds = max_exchange, max_rounds
        self.gate, self.add_gate, self.add_gate_uncorrelated = gate, add_gate, add_gate_uncorrelated

    def price(self, f, n_features):
        """Each unit's price at a fit of loss ``f`` on ``n_features``: ``q_u s / (2 N)``, shape (n_units,).

        Twice ``N / s`` times the decrease that a noise unit of ``d`` free
        coefficients buys is about chi-squared with ``d`` degrees of freedom
        (``s``: :meth:`~sparse_estimators.losses.BaseLoss.noise_scale`), so
        the best of ``G`` such units reaches about ``q_u``, its quantile at
        ``1 - UNIT_PRICE_LEVEL / G``. For one feature that is about
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
        Also returns the steps ``-H_u^+ g_u`` of all units, shape (p, m).
        """
        gW = self.loss.gradient_from_z(Z, W)[0]
        p, m = gW.shape
        gain, g_all = np.empty(self.n_units), _padded(gW)[self.order]
        s_all = np.empty_like(g_all)
        for (units, members, _, H_inv), lo, hi in zip(self.blocks, self.spans[:-1], self.spans[1:], strict=True):
            g = g_all[lo:hi].reshape(members.shape + (m,))  # (units, size, m)
            s = H_inv @ g  # (minus the steps)
            s_all[lo:hi] = s.reshape(-1, m)
            gain[units] = 0.5 * (g * s).sum(axis=(1, 2))
        step = np.empty((p + 1, m))
        step[self.order] = -s_all
        step = step[:p]
        gain[self.sizes == 0] = -np.inf
        if self.structure.excluded is not None:  # (units the structure never selects)
            gain[self.structure.excluded] = -np.inf
        return gain, step

    def unit_cost(self, W, units):
        """Loss increase from removing each of ``units`` alone, ``w_u^T H_u w_u / 2`` per output."""
        cost = np.empty(units.size)
        W = _padded(W)
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
        if not support.size:
            return 1.0
        at_z = self.loss.feature_curvatures(Z, support).sum() / self.loss.n_outputs
        bound = self.h[support].sum()
        return 1.0 if not bound > 0 or abs(at_z - bound) <= 1e-12 * bound else at_z / bound

    def ranked(self, units, W, Z, price):
        """The selected units, least useful first (protected ones last), and the others' gains.

        Both at the curvature of ``Z`` (:meth:`curvature_ratio`) and net of
        the units' ``price`` (see :meth:`price`): what a unit brings beyond
        what the best noise unit of its size would.
        """
        ratio = self.curvature_ratio(Z, self.features(units))
        cost = self.unit_cost(W, units) * ratio - price[units]
        if self.protected is not None:
            cost[self.protected[units]] = np.inf
        gain, step = self.unit_gain(Z, W)
        gain = gain / ratio - price
        gain[units] = -np.inf
        return units[np.argsort(cost, kind="stable")], gain, step / ratio

    def significant(self, added, removed, support, W, b, W_c, Z_c, f_c, H):
        """Whether every ``added`` unit passes the ``add_gate`` test in the refit ``(W_c, Z_c)``.

        See :func:`splice`'s ``add_gate`` and ``add_gate_uncorrelated``: each
        added unit's removal cost (from the diagonal of the Hessian at the
        refit) must exceed ``add_gate`` times its price; the lower level when
        the kept features explain none of the ``removed`` units' features.
        Returns ``(passed, H)``, ``H`` the current fit's Hessian once formed.
        """
        loss = self.loss
        features = self.features(added)
        cost = np.bincount(self.codes[features], minlength=self.n_units, weights=0.5 * np.einsum(
            "ij,ij->i", loss.feature_curvatures(Z_c, features), W_c[features] ** 2))[added]
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
            kept, gain, step = self.ranked(units, W, Z, price)
            removable = k if self.protected is None else k - int(self.protected[units].sum())
            n_out = min(self.max_exchange, removable, int(np.isfinite(gain).sum()))
            if n_out < 1:
                break
            adds = _top(gain, n_out)
            unit_candidates = _swaps(kept, adds, range(1, n_out + 1))
            candidates = [self.features(u) for u in unit_candidates]
            start = W.copy()  # (the added units start at their Newton steps: fewer refit iterations)
            added_features = self.features(adds)
            start[added_features] = step[added_features]
            best, H = None, None
            for c, (W_c, b_c, f_c, Z_c) in enumerate(loss.refit_candidates(candidates, start, b), start=1):
                # the decrease net of the added units' prices, plus the removed ones'
                added = price[adds[:c]].sum()
                net = f - f_c - added + price[kept[:c]].sum()
                if not (net > self.gate * added and (best is None or net > best[5])):
                    continue
                if self.add_gate:
                    passed, H = self.significant(adds[:c], kept[:c], support, W, b, W_c, Z_c, f_c, H)
                    if not passed:
                        continue
                best = (unit_candidates[c - 1], W_c, b_c, f_c, Z_c, net)
            if best is None:
                break
            units, W, b, f, Z, _ = best
            objective.append(f)
        visited.add(units.tobytes())
        return SolverResult(W, b, self.features(units), len(objective) - 1, objective, converged=True), visited


def _unit_blocks(loss, codes, n_units, max_bytes=2 ** 26):
    """The diagonal blocks of the loss's curvature bound, one per unit, in stacks of one shape.

    ``H_u = curvature * X_u^T S X_u / sum(S) + alpha I`` over the centered
    columns ``X_u`` of unit ``u`` (its diagonal is
    :meth:`~sparse_estimators.losses.BaseLoss.coordinate_curvatures`; the
    Hessian block itself for least squares). On a dense design whose units'
    columns take at most ``max_bytes`` once padded to the largest unit's
    size (and at most :data:`UNIT_PADDING` times the unpadded blocks'
    entries), every unit is formed in one stack: a unit smaller than the
    largest is padded with the feature index ``p`` (a zero column, to be read
    from arrays with one extra zero row), and its block with the identity
    there (zero rows and columns in ``H``'s products, the same values in
    the others). Otherwise units of one size are formed together, in
    batches whose column copies take at most ``max_bytes``.

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
    if (gram is None and not design.is_sparse and 8 * n * n_units * largest <= max_bytes
            and n_units * largest ** 2 <= UNIT_PADDING * float(counts @ counts)):
        order = np.argsort(codes, kind="stable")
        within = np.arange(p) - (np.cumsum(counts) - counts)[codes[order]]
        members = np.full((n_units, largest), p, dtype=np.intp)
        members[codes[order], within] = order
        block = np.zeros((n, n_units, largest))
        real = members < p
        columns = np.asarray(design.X[:, members[real]], dtype=float)
        if design.offset is not None:
            columns -= design.offset[members[real]]
        block[:, real] = columns * root
        # (a stack of products X_u^T X_u: 5 to 25 times faster than einsum's own loop at n = 200)
        H = np.matmul(block.transpose(1, 2, 0), block.transpose(1, 0, 2))
        if design.constant is not None:  # (constant columns carry nothing, as in LinearDesign)
            keep = real & ~np.append(design.constant, False)[members]
            H *= keep[:, :, None] & keep[:, None, :]
        return [_inverted(loss, np.arange(n_units), members, H, padded=~real)]
    # the features by their unit's size, then unit, then index: each size's units are one run of columns
    order = np.lexsort((codes, counts[codes]))
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
    """``(units, members, H, H_inv)`` of :func:`_unit_blocks` from the products ``H`` (curvature and alpha added).

    ``padded``: the padded positions (a mask like ``members``), whose
    diagonal entries are set to 1 in ``H`` and its inverse.
    """
    size = H.shape[1]
    H = loss.curvature * H + loss.alpha * np.eye(size)
    # the inverse with a ridge of 1e-10 of the largest diagonal entry (a pseudo-inverse for gradients,
    # which vanish along the null directions: constant or duplicated columns); 10 times faster than pinv
    ridge = 1e-10 * np.einsum("uaa->ua", H).max(axis=1) + 1e-300
    if padded is not None:
        diagonal = np.einsum("uaa->ua", H)  # (a view)
        diagonal[padded] = 1.0
    H_inv = np.linalg.inv(H + ridge[:, None, None] * np.eye(size))
    if padded is not None:
        np.einsum("uaa->ua", H_inv)[padded] = 1.0  # (1 / (1 + ridge) there: exactly 1, as in H)
    return units, members, H, H_inv
