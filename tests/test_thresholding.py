"""Unit tests of the thresholding operators and of the top-k selection.

Expected values come from independent sources only: the checked reference
table of algorithms.md Sec. 2, closed-form formulas re-derived here, a
stable-argsort reference selection, scipy root finding and invariances.
"""

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import brentq
from sklearn.base import clone

from sparse_estimators.thresholding import (
    Hard,
    Lq,
    Reciprocal,
    Soft,
    ThresholdingOperator,
    get_operator,
    select_top_k,
)

# algorithms.md Sec. 2: z, s = 3, tie between z[2] and z[3] kept at the lower index.
Z_REF = np.array([3.0, -2.0, 1.0, 1.0, -0.5, 0.0])
K_REF = 3
REFERENCE_TABLE = [
    (Hard(), [3.0, -2.0, 1.0, 0.0, 0.0, 0.0]),
    (Reciprocal(c=0.0), [2.9142, -1.8660, 0.5, 0.0, 0.0, 0.0]),
    (Reciprocal(c=0.5), [2.9361, -1.9014, 0.75, 0.0, 0.0, 0.0]),
    (Lq(q=2 / 3), [2.7155, -1.6652, 0.5, 0.0, 0.0, 0.0]),
    (Lq(q=1 / 2), [2.8385, -1.7970, 0.6667, 0.0, 0.0, 0.0]),
    (Soft(), [2.0, -1.0, 0.0, 0.0, 0.0, 0.0]),
]
TABLE_IDS = ["hard", "reciprocal0", "reciprocal0.5", "lq2/3", "lq1/2", "soft"]

ALL_OPERATORS = [Hard(), Soft(), Reciprocal(c=0.0), Reciprocal(c=0.5), Reciprocal(c=0.9),
                 Lq(q=2 / 3), Lq(q=0.5), Lq(q=0.1), Lq(q=0.9)]
ALL_IDS = [repr(op) for op in ALL_OPERATORS]
# operators that always return exactly k non-zeros (soft may return fewer on ties)
EXACT_K_OPERATORS = [op for op in ALL_OPERATORS if not isinstance(op, Soft)]
EXACT_K_IDS = [repr(op) for op in EXACT_K_OPERATORS]


# --------------------------------------------------------------------------
# independent reference implementations
# --------------------------------------------------------------------------
def ref_support(mags, k):
    """k largest magnitudes, ties to the lower index, via a stable full sort."""
    order = np.argsort(-np.asarray(mags), kind="stable")
    return np.sort(order[: max(k, 0)])


def ref_tau(mags, k):
    """(k+1)-th largest magnitude (0 when every entry is kept)."""
    srt = np.sort(np.asarray(mags))[::-1]
    return float(srt[k]) if k < srt.size else 0.0


def lq_constant(q):
    return q * (2 - 2 * q) ** (1 - q) / (2 - q) ** (2 - q)


def ref_shrink(op, a, tau):
    """Shrunk magnitudes from the formulas of algorithms.md Sec. 2 (scalar, scipy root finding for lq)."""
    a = np.asarray(a, dtype=float)
    if tau == 0:
        return a.copy()
    if isinstance(op, Hard):
        return a.copy()
    if isinstance(op, Soft):
        return np.maximum(a - tau, 0.0)
    if isinstance(op, Reciprocal):
        return np.array([(x + np.sqrt(max(x * x - tau * tau * (1 - op.c**2), 0.0))) / 2 for x in a])
    if isinstance(op, Lq):
        q, K = op.q, lq_constant(op.q)
        w_min = 2 * (1 - q) / (2 - q)  # the double root at u = 1, where the larger root branch starts
        out = []
        for x in a:
            u = x / tau
            if u <= 1.0 + 1e-15:
                out.append(tau * w_min)
                continue

            def g(w, u=u):
                return w + K * w ** (q - 1) - u

            out.append(tau * brentq(g, w_min, u, xtol=1e-15, rtol=1e-15, maxiter=500))
        return np.array(out)
    raise TypeError(op)


def ref_threshold_vector(op, z, k):
    z = np.asarray(z, dtype=float)
    mags = np.abs(z)
    S = ref_support(mags, k)
    out = np.zeros_like(z)
    out[S] = np.sign(z[S]) * ref_shrink(op, mags[S], ref_tau(mags, k))
    return out, S


def ref_threshold_rows(op, Z, k):
    Z = np.asarray(Z, dtype=float)
    norms = np.sqrt((Z**2).sum(axis=1))
    S = ref_support(norms, k)
    out = np.zeros_like(Z)
    new = ref_shrink(op, norms[S], ref_tau(norms, k))
    for i, j in enumerate(S):
        if norms[j] > 0:
            out[j] = Z[j] * new[i] / norms[j]
    return out, S


def tied_vector(rng, p):
    """Float vector with magnitudes in {0, 1, 2, 3} and random signs: many exact ties."""
    return (rng.randint(0, 4, size=p) * rng.choice([-1.0, 1.0], size=p)).astype(float)


# rows whose l2 norms are exactly 0, 1, 2 or 3 in floating point (sqrt of a perfect square)
_TIED_ROWS = np.array([
    [0, 0, 0], [1, 0, 0], [0, -1, 0], [0, 0, 1],
    [2, 0, 0], [0, -2, 0], [0, 0, 2],
    [3, 0, 0], [0, 0, -3], [2, 1, 2], [-1, 2, -2], [2, -2, 1],
], dtype=float)


def tied_matrix(rng, p):
    return _TIED_ROWS[rng.randint(0, len(_TIED_ROWS), size=p)]


# --------------------------------------------------------------------------
# reference table (algorithms.md Sec. 2)
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("op", "expected"), REFERENCE_TABLE, ids=TABLE_IDS)
def test_reference_table_vector(op, expected):
    out, support = op(Z_REF, K_REF, return_support=True)
    assert_allclose(out, expected, rtol=0, atol=1e-4)
    assert_array_equal(support, [0, 1, 2])
    # entries outside the support are exactly zero
    assert np.all(out[3:] == 0.0)
    assert out.shape == Z_REF.shape


@pytest.mark.parametrize(("op", "expected"), REFERENCE_TABLE, ids=TABLE_IDS)
def test_reference_table_column_matrix(op, expected):
    out, support = op(Z_REF[:, None], K_REF, return_support=True)
    assert out.shape == (6, 1)
    assert_allclose(out[:, 0], expected, rtol=0, atol=1e-4)
    assert_array_equal(support, [0, 1, 2])


@pytest.mark.parametrize(("op", "expected"), REFERENCE_TABLE, ids=TABLE_IDS)
def test_reference_table_rows(op, expected):
    # row i = z_i * u_i with u_i a unit vector: row norms are |z_i|, so each
    # output row must be expected_i * u_i.
    rng = np.random.RandomState(0)
    U = rng.standard_normal((6, 4))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    # keep the tie between rows 2 and 3 exact: use the same direction
    U[3] = U[2]
    Z = Z_REF[:, None] * U
    out, support = op(Z, K_REF, return_support=True)
    assert_array_equal(support, [0, 1, 2])
    assert_allclose(out, np.asarray(expected)[:, None] * U, rtol=0, atol=1e-4)


@pytest.mark.parametrize(("op", "expected"), REFERENCE_TABLE, ids=TABLE_IDS)
def test_reference_table_against_independent_formulas(op, expected):
    # the test's own implementation of the formulas reproduces the table too,
    # which validates it for the randomized comparisons below
    out, support = ref_threshold_vector(op, Z_REF, K_REF)
    assert_allclose(out, expected, rtol=0, atol=1e-4)
    assert_array_equal(support, [0, 1, 2])


# --------------------------------------------------------------------------
# closed forms and invariances
# --------------------------------------------------------------------------
@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_matches_reference_on_random_vectors(op):
    rng = np.random.RandomState(1)
    for _ in range(20):
        p = rng.randint(2, 30)
        z = rng.standard_normal(p) * rng.choice([0.01, 1.0, 100.0])
        k = rng.randint(1, p)
        out, support = op(z, k, return_support=True)
        exp, S = ref_threshold_vector(op, z, k)
        assert_array_equal(support, S)
        assert_allclose(out, exp, rtol=1e-10, atol=0)


@pytest.mark.parametrize("c", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_reciprocal_solves_its_defining_equation(c):
    # m = (a + sqrt(a^2 - b^2)) / 2 is the larger root of m^2 - a m + b^2 / 4 = 0,
    # i.e. a = m + b^2 / (4 m) with b = tau sqrt(1 - c^2), and m >= a / 2.
    rng = np.random.RandomState(2)
    z = rng.standard_normal(50)
    k = 10
    tau = ref_tau(np.abs(z), k)
    out, S = Reciprocal(c=c)(z, k, return_support=True)
    a, m = np.abs(z[S]), np.abs(out[S])
    assert_allclose(a, m + tau**2 * (1 - c**2) / (4 * m), rtol=1e-12)
    assert np.all(m >= a / 2 - 1e-15)
    assert np.all(np.sign(out[S]) == np.sign(z[S]))


@pytest.mark.parametrize("c", [0.0, 0.3, 0.5, 1.0])
def test_reciprocal_at_threshold(c):
    # an entry with |z| = tau is kept with magnitude tau (1 + c) / 2
    tau = 1.7
    z = np.array([5.0, -tau, tau, 0.2])
    out = Reciprocal(c=c)(z, 2)
    assert_allclose(out, [5.0 / 2 * (1 + np.sqrt(1 - (tau / 5.0) ** 2 * (1 - c**2))), -tau * (1 + c) / 2, 0, 0],
                    rtol=1e-14)


@pytest.mark.parametrize("q", [0.01, 0.1, 1 / 3, 0.5, 2 / 3, 0.9, 0.99])
def test_lq_solves_its_defining_equation(q):
    rng = np.random.RandomState(3)
    z = rng.standard_normal(60) * 3
    k = 15
    tau = ref_tau(np.abs(z), k)
    op = Lq(q=q)
    assert_allclose(op.K, lq_constant(q), rtol=1e-15)
    out, S = op(z, k, return_support=True)
    u, w = np.abs(z[S]) / tau, np.abs(out[S]) / tau
    assert_allclose(w + lq_constant(q) * w ** (q - 1), u, rtol=1e-10)
    # the larger root: never below the double root 2(1-q)/(2-q) reached at u = 1
    assert np.all(w >= 2 * (1 - q) / (2 - q) * (1 - 1e-12))
    assert np.all(np.sign(out[S]) == np.sign(z[S]))


@pytest.mark.parametrize("q", [0.001, 0.1, 1 / 3, 0.5, 2 / 3, 0.9, 0.99, 0.999])
@pytest.mark.parametrize("tau", [1.0, 0.37, 250.0])
def test_lq_at_threshold(q, tau):
    # u = 1: the output is tau * 2 (1 - q) / (2 - q)
    z = np.array([4.0 * tau, tau, -tau, 0.1 * tau])
    out = Lq(q=q)(z, 2)
    assert_allclose(out[1], tau * 2 * (1 - q) / (2 - q), rtol=1e-9)
    assert out[2] == 0.0 and out[3] == 0.0


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_positive_homogeneity(op):
    rng = np.random.RandomState(4)
    z = rng.standard_normal(40)
    Z = rng.standard_normal((40, 3))
    for a in [1e-3, 0.5, 3.7, 1e4]:
        assert_allclose(op(a * z, 7), a * op(z, 7), rtol=1e-11, atol=0)
        assert_allclose(op(a * Z, 7), a * op(Z, 7), rtol=1e-11, atol=0)


def test_reciprocal_c1_is_hard():
    rng = np.random.RandomState(5)
    for _ in range(10):
        z = rng.standard_normal(25)
        Z = rng.standard_normal((25, 2))
        assert_allclose(Reciprocal(c=1.0)(z, 6), Hard()(z, 6), rtol=1e-15, atol=0)
        assert_allclose(Reciprocal(c=1.0)(Z, 6), Hard()(Z, 6), rtol=1e-15, atol=0)


@pytest.mark.parametrize("op", [Reciprocal(c=0.0), Reciprocal(c=0.5), Lq(q=2 / 3), Lq(q=0.1), Lq(q=0.9)],
                         ids=["rec0", "rec0.5", "lq2/3", "lq0.1", "lq0.9"])
def test_between_soft_and_hard(op):
    # Liu & Barber's operators lie between soft and hard thresholding
    rng = np.random.RandomState(6)
    z = rng.standard_normal(80)
    k = 20
    out, soft, hard = np.abs(op(z, k)), np.abs(Soft()(z, k)), np.abs(Hard()(z, k))
    assert np.all(soft <= out + 1e-12)
    assert np.all(out <= hard + 1e-12)


def test_lq_tends_to_hard_and_soft():
    rng = np.random.RandomState(7)
    z = rng.standard_normal(100)
    k = 30
    tau = ref_tau(np.abs(z), k)
    hard, soft = Hard()(z, k), Soft()(z, k)
    d_hard = [np.max(np.abs(Lq(q=q)(z, k) - hard)) for q in [0.5, 0.1, 0.01, 0.001]]
    d_soft = [np.max(np.abs(Lq(q=q)(z, k) - soft)) for q in [0.5, 0.9, 0.99, 0.999]]
    assert np.all(np.diff(d_hard) < 0)
    assert np.all(np.diff(d_soft) < 0)
    assert d_hard[-1] < 1e-3 * tau
    assert d_soft[-1] < 2e-2 * tau
    # and it is strictly in between at the universal q = 2/3
    mid = Lq()(z, k)
    assert np.max(np.abs(mid - hard)) > 0.1 * tau and np.max(np.abs(mid - soft)) > 0.1 * tau


# --------------------------------------------------------------------------
# exact k, ties, determinism
# --------------------------------------------------------------------------
@pytest.mark.parametrize("op", EXACT_K_OPERATORS, ids=EXACT_K_IDS)
def test_exactly_k_nonzeros_with_ties(op):
    rng = np.random.RandomState(8)
    for _ in range(60):
        p = rng.randint(2, 25)
        z = tied_vector(rng, p)
        k = rng.randint(1, p)
        out, support = op(z, k, return_support=True)
        S = ref_support(np.abs(z), k)
        assert_array_equal(support, S)
        assert np.count_nonzero(out) == min(k, np.count_nonzero(z))
        off = np.ones(p, dtype=bool)
        off[S] = False
        assert np.all(out[off] == 0.0)
        assert np.all(np.sign(out[S]) == np.sign(z[S]))
        # deterministic: a repeated call is bit-for-bit equal
        assert_array_equal(op(z, k), out)
        exp, _ = ref_threshold_vector(op, z, k)
        assert_allclose(out, exp, rtol=1e-10, atol=0)


def test_hard_keeps_values_exactly():
    rng = np.random.RandomState(9)
    for _ in range(30):
        z = tied_vector(rng, 20) + rng.choice([0.0, 0.25], size=20)
        k = rng.randint(1, 20)
        out = Hard()(z, k)
        S = ref_support(np.abs(z), k)
        assert_array_equal(out[S], z[S])


def test_soft_with_ties_support_and_values():
    # soft keeps the stable support but zeroes the entries tied with tau
    rng = np.random.RandomState(10)
    for _ in range(40):
        z = tied_vector(rng, 15)
        k = rng.randint(1, 15)
        out, support = Soft()(z, k, return_support=True)
        mags = np.abs(z)
        S, tau = ref_support(mags, k), ref_tau(mags, k)
        assert_array_equal(support, S)
        assert np.count_nonzero(out) == np.count_nonzero(mags[S] > tau)
        assert_array_equal(out[S], np.sign(z[S]) * np.maximum(mags[S] - tau, 0))


@pytest.mark.parametrize("op", EXACT_K_OPERATORS, ids=EXACT_K_IDS)
def test_rows_exactly_k_with_ties(op):
    rng = np.random.RandomState(11)
    for _ in range(40):
        p = rng.randint(2, 20)
        Z = tied_matrix(rng, p)
        k = rng.randint(1, p)
        out, support = op(Z, k, return_support=True)
        norms = np.sqrt((Z**2).sum(axis=1))
        S = ref_support(norms, k)
        assert_array_equal(support, S)
        assert np.count_nonzero(np.any(out != 0, axis=1)) == min(k, np.count_nonzero(norms))
        assert_array_equal(op(Z, k), out)
        exp, _ = ref_threshold_rows(op, Z, k)
        assert_allclose(out, exp, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_rows_rescaled_by_shrunk_norm(op):
    rng = np.random.RandomState(12)
    Z = rng.standard_normal((30, 4)) * rng.uniform(0.1, 3, size=(30, 1))
    k = 8
    out, support = op(Z, k, return_support=True)
    norms = np.linalg.norm(Z, axis=1)
    S = ref_support(norms, k)
    tau = ref_tau(norms, k)
    assert_array_equal(support, S)
    assert_allclose(tau, np.sort(norms)[::-1][k])
    new = ref_shrink(op, norms[S], tau)
    assert_allclose(out[S], Z[S] * (new / norms[S])[:, None], rtol=1e-10)
    off = np.setdiff1d(np.arange(30), S)
    assert np.all(out[off] == 0.0)
    # kept rows keep their direction
    keep = new > 0
    cos = np.einsum("ij,ij->i", out[S][keep], Z[S][keep]) / (
        np.linalg.norm(out[S][keep], axis=1) * norms[S][keep])
    assert_allclose(cos, 1.0, rtol=1e-12)


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_column_matrix_equals_vector(op):
    rng = np.random.RandomState(13)
    for _ in range(20):
        z = tied_vector(rng, 12) + rng.choice([0.0, 0.5], size=12) * rng.standard_normal(12)
        k = rng.randint(1, 12)
        out_v, s_v = op(z, k, return_support=True)
        out_m, s_m = op(z[:, None], k, return_support=True)
        assert out_m.shape == (12, 1)
        assert_array_equal(s_m, s_v)
        assert_allclose(out_m[:, 0], out_v, rtol=1e-14, atol=0)


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_k_at_least_p_is_identity(op):
    rng = np.random.RandomState(14)
    z = rng.standard_normal(7)
    z[3] = 0.0
    Z = rng.standard_normal((7, 3))
    Z[2] = 0.0
    for k in [7, 8, 100]:
        out, support = op(z, k, return_support=True)
        assert_array_equal(out, z)
        assert_array_equal(support, np.arange(7))
        out, support = op(Z, k, return_support=True)
        assert_array_equal(out, Z)
        assert_array_equal(support, np.arange(7))
        assert_array_equal(op(Z[:, :1], k), Z[:, :1])


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_k_nonpositive_gives_zeros(op):
    rng = np.random.RandomState(15)
    z = rng.standard_normal(6)
    Z = rng.standard_normal((6, 2))
    for k in [0, -1, -10]:
        out, support = op(z, k, return_support=True)
        assert out.shape == z.shape and np.all(out == 0.0)
        assert support.size == 0
        out, support = op(Z, k, return_support=True)
        assert out.shape == Z.shape and np.all(out == 0.0)
        assert support.size == 0


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_fewer_nonzeros_than_k(op):
    # tau = 0 when z has at most k non-zeros: the non-zeros are kept unchanged
    z = np.array([0.0, -1.5, 0.0, 2.0, 0.0])
    out, support = op(z, 3, return_support=True)
    assert_array_equal(out, z)
    assert_array_equal(support, [0, 1, 3])


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_does_not_modify_input(op):
    z = Z_REF.copy()
    Z = np.outer(Z_REF, [1.0, -2.0])
    op(z, 3)
    op(Z, 3)
    assert_array_equal(z, Z_REF)
    assert_array_equal(Z, np.outer(Z_REF, [1.0, -2.0]))


def test_support_method_matches_call():
    rng = np.random.RandomState(16)
    z = tied_vector(rng, 20)
    Z = tied_matrix(rng, 20)
    for op in ALL_OPERATORS:
        assert_array_equal(op.support(z, 5), ref_support(np.abs(z), 5))
        assert_array_equal(op.support(Z, 5), ref_support(np.sqrt((Z**2).sum(axis=1)), 5))


def test_three_dimensional_input_raises():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        Hard()(np.zeros((2, 2, 2)), 1)


@pytest.mark.parametrize(("op", "expected"), REFERENCE_TABLE[1:5], ids=TABLE_IDS[1:5])
def test_integer_input_is_not_truncated(op, expected):
    # [3, -2, 1, 1, 0, 0] has the same top 3 and tau = 1 as the reference vector
    z_int = np.array([3, -2, 1, 1, 0, 0])
    out = op(z_int, 3)
    assert_allclose(out, expected, rtol=0, atol=1e-4)
    assert np.count_nonzero(out) == 3


# --------------------------------------------------------------------------
# select_top_k
# --------------------------------------------------------------------------
def test_select_top_k_reference_vector():
    support, tau = select_top_k(np.abs(Z_REF), 3)
    assert_array_equal(support, [0, 1, 2])
    assert tau == 1.0
    support, tau = select_top_k(np.abs(Z_REF), 4)
    assert_array_equal(support, [0, 1, 2, 3])
    assert tau == 0.5


def test_select_top_k_against_stable_sort():
    rng = np.random.RandomState(17)
    for _ in range(200):
        p = rng.randint(1, 30)
        mags = rng.randint(0, 4, size=p).astype(float)
        if rng.rand() < 0.5:
            mags = mags + rng.rand(p) * rng.choice([0.0, 1.0])
        k = rng.randint(1, p + 1)
        support, tau = select_top_k(mags, k)
        assert support.dtype.kind == "i"
        assert_array_equal(support, ref_support(mags, k))
        assert tau == ref_tau(mags, k)
        # repeat calls are equal
        s2, t2 = select_top_k(mags, k)
        assert_array_equal(s2, support) and t2 == tau


def test_select_top_k_tau_is_kplus1_largest():
    mags = np.array([0.5, 4.0, 2.0, 2.0, 3.0, 0.0, 1.0])
    for k, tau in [(1, 3.0), (2, 2.0), (3, 2.0), (4, 1.0), (5, 0.5), (6, 0.0)]:
        assert select_top_k(mags, k)[1] == tau
    assert_array_equal(select_top_k(mags, 3)[0], [1, 2, 4])


def test_select_top_k_edge_cases():
    mags = np.array([1.0, 3.0, 2.0])
    for k in [3, 4, 50]:
        support, tau = select_top_k(mags, k)
        assert_array_equal(support, [0, 1, 2])
        assert tau == 0.0
    for k in [0, -2]:
        support, tau = select_top_k(mags, k)
        assert support.size == 0
        assert tau == 3.0  # everything is outside the support
    support, tau = select_top_k(np.zeros(4), 2)
    assert_array_equal(support, [0, 1])
    assert tau == 0.0


# --------------------------------------------------------------------------
# get_operator and parameter validation
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "expected"), [("hard", Hard()), ("soft", Soft()), ("reciprocal", Reciprocal(c=0.0)),
                                                ("lq", Lq(q=2 / 3))])
def test_get_operator_names(name, expected):
    op = get_operator(name)
    assert type(op) is type(expected)
    assert op == expected
    assert isinstance(op, ThresholdingOperator)


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_get_operator_passes_objects_through(op):
    assert get_operator(op) is op


@pytest.mark.parametrize("bad", ["median", "", "hard ", None, 3, 0.5, Hard, ["hard"]])
def test_get_operator_unknown_raises(bad):
    with pytest.raises(ValueError, match="thresholding"):
        get_operator(bad)


@pytest.mark.parametrize("c", [1.5, -0.1, 1.0000001, float("nan")])
def test_reciprocal_invalid_c(c):
    with pytest.raises(ValueError, match="c"):
        Reciprocal(c=c)


@pytest.mark.parametrize("q", [0.0, 1.0, -0.5, 2.0, float("nan")])
def test_lq_invalid_q(q):
    with pytest.raises(ValueError, match="q"):
        Lq(q=q)


def test_valid_boundary_parameters():
    assert Reciprocal(c=0.0).c == 0.0
    assert Reciprocal(c=1.0).c == 1.0
    assert Lq(q=1e-6).q == 1e-6


# --------------------------------------------------------------------------
# value semantics: needed by clone, GridSearchCV, pickling of estimators
# --------------------------------------------------------------------------
def test_equality_by_parameters():
    assert Hard() == Hard()
    assert Soft() == Soft()
    assert Reciprocal(c=0.5) == Reciprocal(c=0.5)
    assert Reciprocal(c=0.5) != Reciprocal(c=0.25)
    assert Lq(q=0.5) == Lq(q=0.5)
    assert Lq(q=0.5) != Lq(q=0.6)
    assert Hard() != Soft()
    assert Reciprocal(c=1.0) != Hard()
    assert len({Hard(), Hard(), Soft(), Reciprocal(0.5), Reciprocal(0.5), Lq(0.5), Lq(q=0.5), Lq(0.7)}) == 5


@pytest.mark.parametrize("op", ALL_OPERATORS, ids=ALL_IDS)
def test_hashable_picklable_copyable(op):
    assert hash(op) == hash(type(op)(**dataclasses.asdict(op)))
    z = Z_REF * 1.3
    for other in [pickle.loads(pickle.dumps(op)), copy.deepcopy(op), copy.copy(op), clone(op, safe=False)]:
        assert type(other) is type(op)
        assert other == op
        assert hash(other) == hash(op)
        assert_array_equal(other(z, 3), op(z, 3))
    assert {op: 1}[copy.deepcopy(op)] == 1


@pytest.mark.parametrize("op", [Reciprocal(c=0.5), Lq(q=0.5)], ids=["rec", "lq"])
def test_frozen(op):
    with pytest.raises(dataclasses.FrozenInstanceError):
        op.new_attribute = 0.1
    field = dataclasses.fields(op)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(op, field, 0.3)
