"""``complete_matrix(solver='als', alpha=0)`` reaches the exact completion of wide and tall low-rank tables.

softImpute-ALS's half-steps regress the filled-in matrix, which contracts
slowly on the columns of a wide table (rows of a tall one) with few observed
entries, and its stopping rule (one step's relative change) stopped it with
those entries far from the limit while reporting convergence; the fit now
ends with exact alternating least squares. The reference is the true table.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators.impute import complete_matrix


def _table(m, n, r, hidden, seed):
    """An exact rank-``r`` table plus column offsets, its hidden entries, and those the observations determine."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) + 2 * rng.standard_normal(n)
    mask = rng.uniform(size=M.shape) < hidden
    # (a column needs its r loadings and offset and one more entry, a row its r scores and one more)
    determined = mask & ((~mask).sum(0) >= r + 2)[None, :] & ((~mask).sum(1) >= r + 1)[:, None]
    return M, mask, determined


@pytest.mark.parametrize("m, n, r, seed", [(10, 500, 2, 1), (500, 10, 3, 1)])
def test_exact_table_completed_to_its_truth(m, n, r, seed):
    M, mask, determined = _table(m, n, r, 0.3, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = complete_matrix(np.ma.masked_array(M, mask), rank=r, solver="als", center=True)
    assert result.converged
    spread = M.std(axis=0).mean()
    error = np.sqrt(np.mean((result.to_dense() - M)[determined] ** 2)) / spread
    # (before: 2.7e-2 and 3.2e-3 of the column spread, reported converged; now about 1e-5)
    assert error < 5e-4
    # the exact sweeps count as iterations and record their objective
    assert result.n_iter <= 300
    assert result.loss_curve.size == result.n_iter
    assert np.all(np.diff(result.loss_curve[-3:]) <= 1e-12 * result.loss_curve[0])


def test_max_iter_bounds_the_exact_sweeps():
    M, mask, _ = _table(10, 500, 2, 0.3, 1)
    observed = np.ma.masked_array(M, mask)
    full = complete_matrix(observed, rank=2, solver="als", center=True)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        short = complete_matrix(observed, rank=2, solver="als", center=True, max_iter=full.n_iter - 1)
    assert short.n_iter == full.n_iter - 1 and not short.converged
