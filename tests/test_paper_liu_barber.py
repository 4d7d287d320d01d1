"""Paper 002 (Liu & Barber, *Between hard and soft thresholding*): the adversarial instance."""

import numpy as np
import pytest
from _benchmarks import load_benchmark

from sparse_estimators.solvers import iht
from sparse_estimators.thresholding import Hard, Lq, Reciprocal

_paper002 = load_benchmark("reproduce_paper002")
QuadraticObjective = _paper002.QuadraticObjective
orthogonal_with_first_column = _paper002.orthogonal_with_first_column


def _theorem2_instance(kappa, d=40, s=10, s_prime=1, L=1.0):
    """Objective of the proof of Theorem 2 (notes §2), its start x and the s'-sparse y.

    f(w) = -L <z - x, w - x> + 1/2 (w - x)^T U D U^T (w - x), U orthogonal with
    first column (y - x)/||y - x||, D = diag(L / kappa, L, ..., L); z = 1_d,
    x = 1_S (S the first s coordinates), y = rho^(-1/2) 1_{S'}, S' disjoint.
    """
    rho = s_prime / s
    z = np.ones(d)
    x = np.zeros(d)
    x[:s] = 1.0
    y = np.zeros(d)
    y[s:s + s_prime] = rho ** -0.5
    U = orthogonal_with_first_column(y - x)
    D = np.full(d, L)
    D[0] = L / kappa
    loss = QuadraticObjective((U * D) @ U.T, -L * (z - x), x, L)
    return loss, x, y


@pytest.mark.parametrize("kappa", [4, 5, 6, 8])
def test_theorem2_hard_is_stuck_reciprocal_and_lq_escape(kappa):
    """Liu & Barber, Theorem 2 (proof, App. A.1) with d=40, s=10, s'=1, L=1.

    With step 1/L from x, hard IHT is at a fixed point with f = 0 > f(y), while
    reciprocal (c = 0) and lq(2/3) thresholding, whose relative concavity is
    below 1/(2 kappa), go below f(y) (notes §2).
    """
    loss, x, y = _theorem2_instance(kappa)
    f_y = loss.value(y[:, None])
    # Independent value: f(y) = -L <z - x, y - x> + (L / kappa) / 2 ||y - x||^2.
    assert f_y == pytest.approx(-(10 ** 0.5) + 0.5 / kappa * 20.0, rel=1e-10)
    assert f_y < 0.0

    def run(op):
        return iht(loss, op, 10, W0=x[:, None].copy(), b0=np.zeros(0), step_size=1.0, max_iter=3000, tol=1e-10)

    hard = run(Hard())
    np.testing.assert_array_equal(hard.coef[:, 0], x)  # never leaves its start
    assert loss.value(hard.coef) == 0.0 > f_y
    for op in (Reciprocal(c=0.0), Lq(q=2 / 3)):
        result = run(op)
        assert loss.value(result.coef) < f_y, op
        assert np.count_nonzero(result.coef) <= 10
