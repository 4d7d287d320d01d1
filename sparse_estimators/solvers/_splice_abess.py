"""abess's search (its "important search"), the second search of :func:`~sparse_estimators.solvers.splice`.

From the ``k`` features of largest marginal gain, :func:`_important_search`
exchanges features within a set ``U`` of ``k + 128`` of them, accepting the
first exchange size whose refitted loss drops by more than abess's threshold
(:func:`_abess_threshold`), and rebuilds ``U`` around the support when a
round accepts nothing; its rounds run on the loss restricted to ``U``
(:func:`_rounds`) or, for least squares at small ``n``, on lazily formed
Gram columns (:func:`_gram_rounds`). :func:`_abess_search_stays` says when
the search is certain to stay where it starts, so that :func:`splice` skips
it. The ranking, exchange and screening of candidates it shares with the
first search are in ``solvers/_splice.py``.
"""

import functools

import numpy as np

from .._utils import count_nonzero as _count_nonzero
from .._utils import row_squares
from ._base import SolverResult, _all, same_indices
from ._splice import _forward_gain, _ranked, _screened, _sorted_union, _swaps, _top, _top_set


def _abess_threshold(loss, k):
    """The threshold of an exchange in abess's search: ``0.01 k m log(p) log(log N) / N``, in the loss's value unit.

    (:attr:`~sparse_estimators.losses.BaseLoss.value_unit`: 1; least squares' ``y``'s variance, Poisson's dispersion,
    Huber's ``scale ** 2``, so that their fits of ``c y`` accept the exchanges those of ``y`` do.)
    """
    return _threshold(k, loss.n_outputs, loss.n_features, loss.n_observations) * loss.value_unit


@functools.lru_cache(maxsize=64)  # (a small fit's search asks a few times per round: three NumPy logs each)
def _threshold(k, m, p, N):
    return 0.01 * k * m * np.log(p) * max(np.log(max(np.log(N), 1.0)), 0.0) / N


def _abess_search_stays(loss, k, start, support, last, gain, usable, max_exchange, important_search=128,
                        every_size=False, U=None):
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
    candidates' values are those of the same refits (to rounding). A
    candidate the round screened (not refitted, see :func:`_screened`) for
    a needed decrease of at least that threshold counts as refused: the
    important search screens it too, with the same quadratic model and a
    smaller need. ``every_size``: all sizes ``1, ..., C`` refused (a search
    that reaches ``support`` later, with a smaller current ``C``, stops
    there too: its round tries some of them, the round after resets ``C``).
    ``U``: the set itself, when the caller has it (``gain`` is then not read).
    """
    if last is None or not same_indices(start, support):
        return False
    kept, adds, decreases, screened = last
    p = loss.n_features
    U_size = min(p, k + important_search)
    if U is not None:  # (the set that the gains below would rank first)
        in_U = np.zeros(p, dtype=bool)
        in_U[U] = True
    elif U_size < p:
        g = gain.copy()
        g[support] = np.inf  # (as _important_search builds U)
        in_U = np.zeros(p, dtype=bool)
        in_U[_top_set(g, U_size)] = True
    else:  # (U holds every feature)
        in_U = np.empty(p, dtype=bool)
        in_U.fill(True)  # (np.ones's array, without its Python wrapper)
    in_U[support] = False
    C = int(min(max_exchange, k, U_size - k, _count_nonzero(usable & in_U)))
    if C < 1:
        return True
    sizes = range(1, C + 1) if every_size else [C >> i for i in range(C.bit_length())]
    tau = _abess_threshold(loss, k)
    if len(adds) < C or not _all(in_U[adds[:C]]) or any(c not in decreases and not screened.get(c, -1.0) >= tau
                                                          for c in sizes):
        return False
    return not any(decreases[c] > tau for c in sizes if c in decreases)


def _important_search(loss, k, start, W0, b0, h, usable, max_exchange, max_rounds, important_search=128,
                      gain=None, settled=None):
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
    (:func:`_forward_gain`; not modified). ``settled``: ``(support, last)``
    of the first search (:func:`_exchange`); when this search reaches
    ``support``, it stops there if ``last`` refused every exchange size
    (:func:`_abess_search_stays`) with added features in the current ``U``:
    its rounds would try the same exchanges again (a ``U`` rebuilt around
    ``support`` holds them too: the largest gains there), and end there.

    Returns
    -------
    SolverResult
        As :func:`_exchange`'s (``objective`` starts with the start's loss).
    """
    p = loss.n_features
    tau = _abess_threshold(loss, k)
    U_size = min(p, k + important_search)
    support, W, b = start.copy(), W0, b0
    support.sort()  # (np.sort's copy, without its wrapper)
    objective, f = [], None  # (f: the current value, once the start is refitted)
    if gain is None:
        gain = _forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, usable)
    gain = gain.copy()
    U, stuck, sub = None, False, None
    for _ in range(max_rounds):
        gain[support] = np.inf  # U keeps the support
        U_last, U = U, (_top_set(gain, U_size) if U_size < p else np.arange(p))
        U.sort()  # (a new array: sorted in place)
        if stuck and np.array_equal(U, U_last):  # (the round would repeat the last one's failed attempt)
            break
        # the search below works in U's own indices, on U's columns (a copy, unless U is everything;
        # the previous round's copy is released first, or reused, so that at most one is held)
        previous = sub if U_size < p and getattr(sub, "gram_search", False) else None
        sub = None
        sub = loss if U_size == p else loss.search_restriction(U, previous=previous)
        previous = None
        local, h_U, usable_U = U.searchsorted(support), h[U], usable[U]
        C = int(min(max_exchange, k, U_size - k))

        verdict = []  # (of _abess_search_stays below, a function of U and settled alone: computed once)

        def stays(local, U=U, verdict=verdict):
            """Whether the first search's last round settles the search at ``U[local]`` (see ``settled``)."""
            if settled is None or not same_indices(U[local], settled[0]):
                return False
            if not verdict:
                verdict.append(_abess_search_stays(loss, k, settled[0], settled[0], settled[1], None, usable,
                                                   max_exchange, important_search, every_size=True, U=U))
            return verdict[0]

        if getattr(sub, "gram_search", False):  # (least squares at small n: the same rounds on U's Gram matrix)
            local, coef, b, f, changed, stuck, done = _gram_rounds(
                sub, local, W[support] if objective else None, b, f, objective, h_U, usable_U, C, tau,
                max_rounds * k, stays)
        else:
            local, W_U, b, f, changed, stuck, done = _rounds(
                sub, local, W[U], b, f, objective, h_U, usable_U, C, tau, max_rounds * k, stays)
            coef = W_U[local]
        support = U[local]
        W = np.zeros(W0.shape, W0.dtype)
        W[support] = coef
        if done or not changed:
            break
        if U_size < p:  # (U = every feature otherwise: the gains would not be read)
            gain = _forward_gain(loss, loss.linear_predictor(W, b, support), W, h, usable)
    return SolverResult(W, b, support, len(objective) - 1, objective, converged=True)


def _exchange_rounds(local, state, f, objective, C, tau, max_iter, stays, rank, first_accepted):
    """The exchange rounds of :func:`_important_search` within one set ``U``, over a strategy.

    ``rank(local, state)`` gives ``(kept, forward)`` as :func:`_ranked`;
    ``first_accepted(kept, adds, sizes, state, f)`` refits the exchanges of
    the ``sizes`` in order and returns ``(size, candidate, state, value)`` of
    the first whose value ``f_c`` has ``f - f_c > tau``, or None. Returns
    ``(local, state, f, changed, stuck, done)``: ``changed`` whether an
    exchange was accepted, ``stuck`` whether the last round tried the
    largest size ``C`` and refused every size, ``done`` whether
    ``stays(local)`` ended the search.
    """
    C_full = C
    changed = stuck = done = False
    for _ in range(max_iter):  # each accepted exchange lowers the loss by more than tau
        if stays(local):
            done = True
            break
        kept, forward = rank(local, state)
        n_finite = int(_count_nonzero(np.isfinite(forward)))  # (a Python int: numpy 2's count is np.int64,
        C = min(C, n_finite)  # which has no bit_length below)
        if C < 1:
            break
        adds = _top(forward, C)
        accepted = first_accepted(kept, adds, [C >> i for i in range(C.bit_length())], state, f)  # C, C // 2, .., 1
        if accepted is None:  # a new round over the same U would try the same C first: stuck
            stuck = C == min(C_full, n_finite)
            break
        C, local, state, f = accepted
        objective.append(f)
        changed = True
    return local, state, f, changed, stuck, done


def _rounds(sub, local, W_U, b, f, objective, h_U, usable_U, C, tau, max_iter, stays):
    """:func:`_exchange_rounds` on ``sub`` (the loss restricted to ``U``), candidates refitted together.

    ``f`` None: ``(W_U, b)`` is the start, refitted on ``local`` first (its
    value appended to ``objective``). Returns ``(local, W_U, b, f, changed,
    stuck, done)``.
    """
    if f is None:  # the start's refit
        W_U, b, f, Z = sub.refit_candidates([local], W_U, b)[0]
        objective.append(f)
    else:
        Z = sub.linear_predictor(W_U, b)

    def rank(local, state):
        return _ranked(sub, local, state[0], state[2], h_U, usable_U)

    def first_accepted(kept, adds, sizes, state, f):
        candidates = _swaps(kept, adds, sizes)
        refits = _screened(sub, candidates, state[0], state[1], [f - tau] * len(candidates))
        for c, candidate, (W_c, b_c, f_c, Z_c) in zip(sizes, candidates, refits, strict=True):
            if f - f_c > tau:
                return c, candidate, (W_c, b_c, Z_c), f_c
        return None

    local, (W_U, b, _), f, changed, stuck, done = _exchange_rounds(
        local, (W_U, b, Z), f, objective, C, tau, max_iter, stays, rank, first_accepted)
    return local, W_U, b, f, changed, stuck, done


def _gram_rounds(sub, local, coef, b, f, objective, h_U, usable_U, C, tau, max_iter, stays):
    """:func:`_exchange_rounds` on a loss with ``gram_search`` (see ``losses/_squared_search.py``).

    Without linear predictors: the gains come from the Gram columns of the
    support, and the exchange sizes are refitted one at a time, in the
    order they are tried, until one is accepted (the same decisions as
    refitting them all: the first accepted wins). ``coef``: the
    coefficients on ``local`` (None with ``f`` None: the start, refitted
    first). Returns ``(local, coef, b, f, changed, stuck, done)``.
    """
    if f is None:  # the start's refit
        coef, f = sub.refit_support(local)
        objective.append(f)
    unusable = (~usable_U).nonzero()[0]  # (indices: usually none, cheaper to assign than a mask over U)
    scale = np.where(usable_U, h_U, 1.0) if unusable.size else h_U  # (h_U: U's own gather, never modified)

    def rank(local, coef):  # _ranked's orders, from the gradient G W - C on U
        backward = 0.5 * h_U[local] * row_squares(coef)
        g = sub.gradient_on(local, coef)
        forward = 0.5 * row_squares(g) / scale
        if unusable.size:
            forward[unusable] = -np.inf
        forward[local] = -np.inf
        return local[backward.argsort(kind="stable")], forward

    def first_accepted(kept, adds, sizes, coef, f):
        for c in sizes:
            candidate = _sorted_union(kept[c:], adds[:c])
            coef_c, f_c = sub.refit_support(candidate)
            if f - f_c > tau:
                return c, candidate, coef_c, f_c
        return None

    local, coef, f, changed, stuck, done = _exchange_rounds(
        local, coef, f, objective, C, tau, max_iter, stays, rank, first_accepted)
    return local, coef, b, f, changed, stuck, done
